//! `rayon` support: parallel iteration over the dense slice.

use rayon::prelude::*;

use super::{iter::key_of, HandleMap};
use crate::key::Key;

impl<T: Sync, K: Key> HandleMap<T, K> {
    /// A parallel iterator over the values, in dense order.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let mut map = dod::HandleMap::new();
    /// map.insert_many(1..=100u64);
    /// assert_eq!(map.par_values().sum::<u64>(), 5050);
    /// ```
    pub fn par_values(&self) -> rayon::slice::Iter<'_, T> {
        self.values.par_iter()
    }

    /// A parallel iterator over `(handle, &value)`, in dense order.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let mut map = dod::HandleMap::new();
    /// let hs = map.insert_many(0..10);
    /// let found: Vec<_> = map.par_iter().map(|(h, _)| h).collect();
    /// assert_eq!(found, hs);
    /// ```
    pub fn par_iter(&self) -> impl IndexedParallelIterator<Item = (K, &T)> + '_ {
        let slots = &self.slots[..];
        self.links
            .par_iter()
            .zip(self.values.par_iter())
            .map(move |(&s, v)| (key_of::<K>(slots, s), v))
    }
}

impl<T: Send, K: Key> HandleMap<T, K> {
    /// A parallel iterator over the values, mutably, in dense order.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let mut map = dod::HandleMap::new();
    /// let h = map.insert(1);
    /// map.par_values_mut().for_each(|v| *v *= 7);
    /// assert_eq!(map[h], 7);
    /// ```
    pub fn par_values_mut(&mut self) -> rayon::slice::IterMut<'_, T> {
        self.values_mut().par_iter_mut()
    }
}
