//! Parallel iteration with `rayon` (feature `rayon`).

use super::{SparseSet, TOMBSTONE};
use rayon::prelude::*;

impl<T: Sync, const PAGE: usize> SparseSet<T, PAGE> {
    /// A parallel iterator over the live entries as `(entity, &value)` (tombstones skipped).
    ///
    /// O(n) work, split across rayon's threads.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let s: dod::SparseSet<u64> = (0..1000u32).map(|e| (e, u64::from(e))).collect();
    /// let total: u64 = s.par_iter().map(|(_, v)| *v).sum();
    /// assert_eq!(total, 999 * 1000 / 2);
    /// ```
    pub fn par_iter(&self) -> impl ParallelIterator<Item = (u32, &T)> + '_ {
        self.entities
            .par_iter()
            .zip(self.values.par_iter())
            .filter(|(&e, _)| e != TOMBSTONE)
            .map(|(&e, v)| (e, v))
    }
}

impl<T: Send, const PAGE: usize> SparseSet<T, PAGE> {
    /// A parallel iterator over the dense array of values, mutable: the parallel
    /// [`values_mut`](SparseSet::values_mut) (it includes the values of pending removals).
    ///
    /// O(n) work, split across rayon's threads.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let mut s: dod::SparseSet<u64> = (0..1000u32).map(|e| (e, 1)).collect();
    /// s.par_values_mut().for_each(|v| *v *= 3);
    /// assert!(s.values().iter().all(|&v| v == 3));
    /// ```
    pub fn par_values_mut(&mut self) -> rayon::slice::IterMut<'_, T> {
        self.values.par_iter_mut()
    }
}
