//! Split borrows: the sparse side of a set, read-only, beside its dense values, so that code
//! holding many values at once (an entity world's queries) can look positions up while it
//! writes values.

use super::pages::{decode, Pages};
use super::{SparseSet, TOMBSTONE};

/// The sparse side of a [`SparseSet`], read-only: where each index's value sits in the dense
/// slice it was split from, and the dense slice of indices. Made by
/// [`SparseSet::split_mut`], [`SparseSet::split`] and [`SparseSet::sparse_view`].
///
/// ```
/// let mut s: dod::SparseSet<u32> = [(7u32, 70), (3, 30)].into_iter().collect();
/// let (sparse, values) = s.split_mut();
/// for &i in sparse.indices() {
///     let p = sparse.get_index_of(i).unwrap();
///     values[p] += i;
/// }
/// assert_eq!(s.values(), [77, 33]);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SparseView<'a, const PAGE: usize> {
    pages: &'a Pages<PAGE>,
    indices: &'a [u32],
}

impl<'a, const PAGE: usize> SparseView<'a, PAGE> {
    /// The dense position of `index`'s value, if the set holds `index` (any generation). O(1).
    ///
    /// ```
    /// let mut s: dod::SparseSet<char> = [(5u32, 'a')].into_iter().collect();
    /// let (sparse, _) = s.split();
    /// assert_eq!((sparse.get_index_of(5), sparse.get_index_of(6)), (Some(0), None));
    /// ```
    #[inline]
    pub fn get_index_of(&self, index: u32) -> Option<usize> {
        decode(self.pages.get(index))
    }

    /// Whether the set holds `index`. O(1).
    ///
    /// ```
    /// let mut s: dod::SparseSet<char> = [(5u32, 'a')].into_iter().collect();
    /// assert!(s.split().0.contains(5));
    /// ```
    #[inline]
    pub fn contains(&self, index: u32) -> bool {
        self.get_index_of(index).is_some()
    }

    /// The dense slice of indices, position for position with the values (see
    /// [`SparseSet::indices`]). O(1).
    ///
    /// ```
    /// let mut s: dod::SparseSet<char> = [(5u32, 'a'), (2, 'b')].into_iter().collect();
    /// assert_eq!(s.split().0.indices(), [5, 2]);
    /// ```
    #[inline]
    pub fn indices(&self) -> &'a [u32] {
        self.indices
    }
}

impl<T, const PAGE: usize> SparseSet<T, PAGE> {
    /// The sparse side, read-only, and the dense values, mutable, borrowed at once. O(1).
    ///
    /// While removals are pending ([`defer_remove`](SparseSet::defer_remove)), the indices
    /// show [`TOMBSTONE`] at their positions, as [`indices`](Self::indices)
    /// does.
    ///
    /// ```
    /// let mut s: dod::SparseSet<f32> = [(1u32, 1.0), (9, 2.0)].into_iter().collect();
    /// let (sparse, values) = s.split_mut();
    /// values[sparse.get_index_of(9).unwrap()] *= 10.0;
    /// assert_eq!(s[9u32], 20.0);
    /// ```
    #[inline]
    pub fn split_mut(&mut self) -> (SparseView<'_, PAGE>, &mut [T]) {
        (
            SparseView {
                pages: &self.pages,
                indices: &self.entities,
            },
            &mut self.values,
        )
    }

    /// The sparse side alone, read-only: it reads no value (no reference to the values is
    /// formed), so it may be used while the values are written through
    /// [`values_as_mut_ptr`](SparseSet::values_as_mut_ptr). O(1).
    ///
    /// ```
    /// let s: dod::SparseSet<f32> = [(4u32, 1.0)].into_iter().collect();
    /// assert_eq!(s.sparse_view().get_index_of(4), Some(0));
    /// ```
    #[inline]
    pub fn sparse_view(&self) -> SparseView<'_, PAGE> {
        SparseView {
            pages: &self.pages,
            indices: &self.entities,
        }
    }

    /// The sparse side and the dense values, both read-only. O(1).
    ///
    /// ```
    /// let s: dod::SparseSet<f32> = [(1u32, 1.0)].into_iter().collect();
    /// let (sparse, values) = s.split();
    /// assert_eq!(values[sparse.get_index_of(1).unwrap()], 1.0);
    /// ```
    #[inline]
    pub fn split(&self) -> (SparseView<'_, PAGE>, &[T]) {
        (self.sparse_view(), &self.values)
    }
}

impl<T, const PAGE: usize> SparseSet<T, PAGE> {
    /// Swaps the entries at dense positions `a` and `b` (entity and value together), keeping
    /// every lookup right: the way to keep several sets in one order, as an entity world's
    /// groups do. O(1).
    ///
    /// # Panics
    ///
    /// If `a` or `b` is not below the dense length ([`indices`](Self::indices)`.len()`).
    ///
    /// Pending removals ([`defer_remove`](Self::defer_remove)) move like any entry.
    ///
    /// ```
    /// let mut s: dod::SparseSet<char> = [(1u32, 'a'), (2, 'b'), (3, 'c')].into_iter().collect();
    /// s.swap_positions(0, 2);
    /// assert_eq!(s.indices(), [3, 2, 1]);
    /// assert_eq!(s[1u32], 'a');
    /// s.defer_remove(2u32);
    /// s.swap_positions(1, 0);
    /// s.compact();
    /// assert_eq!(s.indices(), [3, 1]);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn swap_positions(&mut self, a: usize, b: usize) {
        let n = self.entities.len();
        if a >= n || b >= n {
            swap_out_of_bounds(a, b, n);
        }
        if a == b {
            return;
        }
        self.entities.swap(a, b);
        self.values.swap(a, b);
        let (ea, eb) = (self.entities[a], self.entities[b]);
        if self.pending == 0 {
            // No tombstone: both are live entities, whose slots point at their new places.
            self.pages.relink(ea, a);
            self.pages.relink(eb, b);
        } else {
            self.relink_or_mark(ea, a);
            self.relink_or_mark(eb, b);
        }
    }

    /// Points the slot of the entry now at `p` there, or, for a tombstone, moves
    /// `first_tombstone` down to it: a deferred removal moved, and `compact` must start at or
    /// before it.
    #[cold]
    fn relink_or_mark(&mut self, e: u32, p: usize) {
        if e == TOMBSTONE {
            self.first_tombstone = self.first_tombstone.min(p);
        } else {
            self.pages.relink(e, p);
        }
    }
}

/// `swap_positions`' panic, out of line.
#[cold]
#[inline(never)]
#[track_caller]
fn swap_out_of_bounds(a: usize, b: usize, n: usize) -> ! {
    panic!("SparseSet::swap_positions: positions {a} and {b} must be below the dense length {n}")
}
