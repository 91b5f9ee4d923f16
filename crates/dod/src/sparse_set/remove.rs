//! Removal, one strategy per method, each named for what it does to the dense order.

use super::{
    decode, is_malformed, position_in, slot_tag, Pages, Slot, SparseKey, SparseSet, TOMBSTONE,
};
use alloc::vec::Vec;

impl<T, const PAGE: usize> SparseSet<T, PAGE> {
    /// Removes `e` and returns its value; the **last** entry moves into the hole
    /// (swap-and-pop). The order of the other entries is kept except for that one move.
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s: dod::SparseSet<char> = [(1u32, 'a'), (2, 'b'), (3, 'c')].into_iter().collect();
    /// assert_eq!(s.swap_remove(1u32), Some('a'));
    /// assert_eq!(s.indices(), &[3, 2]);
    /// assert_eq!(s.swap_remove(1u32), None);
    /// ```
    #[inline(always)]
    pub fn swap_remove<E: SparseKey>(&mut self, e: E) -> Option<T> {
        let slot = self.pages.slot_mut(e.sparse_index())?;
        let pos = position_in(*slot, e)?;
        *slot = Slot::VACANT;
        let len = self.entities.len();
        if pos >= len || self.values.len() != len {
            broken();
        }
        // The entry that moves is the last one whatever `pos` is: reading it first lets its
        // sparse slot be fetched while `e`'s slot is still on its way from memory.
        let last = len - 1;
        let moved = self.entities[last];
        self.entities.swap_remove(pos);
        let value = self.values.swap_remove(pos);
        if pos != last {
            if moved == TOMBSTONE {
                self.first_tombstone = self.first_tombstone.min(pos);
            } else {
                self.pages.relink(moved, pos);
            }
        }
        Some(value)
    }

    /// Removes `e` and returns its value, shifting every later entry one place left: the order
    /// of the others is kept.
    ///
    /// O(n): every later entry moves and its sparse slot is rewritten. To remove many entries
    /// while keeping order, use [`retain`](Self::retain), [`remove_many`](Self::remove_many) or
    /// [`defer_remove`](Self::defer_remove) + [`compact`](Self::compact), which are O(n + k)
    /// for the whole batch.
    ///
    /// ```
    /// let mut s: dod::SparseSet<char> = [(1u32, 'a'), (2, 'b'), (3, 'c')].into_iter().collect();
    /// assert_eq!(s.shift_remove(1u32), Some('a'));
    /// assert_eq!(s.indices(), &[2, 3]);
    /// ```
    pub fn shift_remove<E: SparseKey>(&mut self, e: E) -> Option<T> {
        let slot = self.pages.slot_mut(e.sparse_index())?;
        let pos = position_in(*slot, e)?;
        *slot = Slot::VACANT;
        self.entities.remove(pos);
        let value = self.values.remove(pos);
        for (i, &moved) in self.entities.iter().enumerate().skip(pos) {
            if moved != TOMBSTONE {
                self.pages.relink(moved, i);
            }
        }
        if self.pending > 0 {
            self.first_tombstone = self.first_tombstone.min(pos);
        }
        Some(value)
    }

    /// Removes `e` now and leaves a tombstone in its place: `contains`, `get`, `len` and every
    /// iterator forget it at once, while the dense arrays keep its position (shown as
    /// [`TOMBSTONE`] in [`entities`](Self::indices)) and its value until
    /// [`compact`](Self::compact), which closes every hole in one order-preserving pass
    /// (deferred compaction). Returns `false` if the set did not hold `e`.
    ///
    /// The order of the other entries never changes. Operations that reorder
    /// (`sort_*`, `sort_as`, `retain`, `remove_many`) compact first; `insert` appends after the
    /// tombstones; `swap_remove` may move a tombstone into the hole it makes.
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s: dod::SparseSet<char> = [(1u32, 'a'), (2, 'b'), (3, 'c')].into_iter().collect();
    /// assert!(s.defer_remove(1u32));
    /// assert!(!s.contains(1u32));
    /// assert_eq!(s.iter().map(|(e, _)| e).collect::<Vec<_>>(), [2, 3]);
    /// assert_eq!(s.indices(), &[dod::sparse_set::TOMBSTONE, 2, 3]);
    /// s.compact();
    /// assert_eq!(s.indices(), &[2, 3]);
    /// ```
    #[inline]
    pub fn defer_remove<E: SparseKey>(&mut self, e: E) -> bool {
        let Some(slot) = self.pages.slot_mut(e.sparse_index()) else {
            return false;
        };
        let Some(pos) = position_in(*slot, e) else {
            return false;
        };
        *slot = Slot::VACANT;
        self.entities[pos] = TOMBSTONE;
        self.first_tombstone = if self.pending == 0 {
            pos
        } else {
            self.first_tombstone.min(pos)
        };
        self.pending += 1;
        true
    }

    /// How many tombstones [`defer_remove`](Self::defer_remove) has left that
    /// [`compact`](Self::compact) has not yet removed.
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s: dod::SparseSet<()> = [(1u32, ())].into_iter().collect();
    /// s.defer_remove(1u32);
    /// assert_eq!((s.len(), s.pending_removals()), (0, 1));
    /// ```
    #[inline]
    pub fn pending_removals(&self) -> usize {
        self.pending
    }

    /// Removes every tombstone, dropping its value and shifting the live entries left: the
    /// order of the live entries is kept.
    ///
    /// O(n) from the first tombstone on; O(1) when nothing is pending. If a value's `Drop`
    /// panics, the set is already compacted and stays valid.
    ///
    /// ```
    /// let mut s: dod::SparseSet<u8> = (0..5u32).map(|e| (e, e as u8)).collect();
    /// s.defer_remove(1u32);
    /// s.defer_remove(3u32);
    /// s.compact();
    /// assert_eq!(s.values(), &[0, 2, 4]);
    /// assert_eq!(s[4u32], 4);
    /// ```
    pub fn compact(&mut self) {
        if self.pending == 0 {
            return;
        }
        let start = self.first_tombstone;
        let mut w = start;
        for r in start..self.entities.len() {
            let e = self.entities[r];
            if e != TOMBSTONE {
                if w != r {
                    self.entities[w] = e;
                    self.values.swap(w, r);
                    self.pages.relink(e, w);
                }
                w += 1;
            }
        }
        // The removed values sit past `w` now. The bookkeeping is final before they are
        // dropped, so a panicking `Drop` leaves a consistent set (`truncate` shortens the
        // vector before it drops the tail).
        self.entities.truncate(w);
        self.pending = 0;
        self.first_tombstone = 0;
        self.values.truncate(w);
    }

    /// Keeps only the entries for which `keep(entity, &mut value)` is `true`, dropping the
    /// others; the order of the kept entries is preserved. Pending tombstones are removed in
    /// the same pass.
    ///
    /// O(n).
    ///
    /// If `keep` panics, the set stays valid: the entries already rejected are removed, the
    /// entry being visited and all later ones are kept. If a rejected value's `Drop` panics,
    /// that entry is removed, the later ones are kept, and the set stays valid.
    ///
    /// ```
    /// let mut s: dod::SparseSet<u32> = (0..6u32).map(|e| (e, e * 10)).collect();
    /// s.retain(|e, v| {
    ///     *v += 1;
    ///     e % 2 == 0
    /// });
    /// assert_eq!(s.indices(), &[0, 2, 4]);
    /// assert_eq!(s.values(), &[1, 21, 41]);
    /// ```
    pub fn retain<F: FnMut(u32, &mut T) -> bool>(&mut self, mut keep: F) {
        let mut g = RetainGuard {
            pages: &mut self.pages,
            entities: &mut self.entities,
            pending: &mut self.pending,
            first_tombstone: &mut self.first_tombstone,
            r: 0,
            w: 0,
        };
        self.values.retain_mut(|v| {
            let e = g.entities[g.r];
            // If `keep` panics, `r` is not advanced: `retain_mut` keeps this value and every
            // later one, and the guard keeps the same entities.
            let kept = e != TOMBSTONE && keep(e, v);
            if kept {
                if g.w != g.r {
                    g.entities[g.w] = e;
                    g.pages.relink(e, g.w);
                }
                g.w += 1;
            } else if e != TOMBSTONE {
                g.pages.unlink(e);
            }
            g.r += 1;
            kept
        });
    }

    /// Removes every listed entity that the set holds and returns how many it removed; the
    /// order of the remaining entries is preserved. Repeated and absent entities are ignored.
    ///
    /// O(n + k) for `k` listed entities: each is unlinked at once, then one pass closes the
    /// holes (as [`defer_remove`](Self::defer_remove) + [`compact`](Self::compact)).
    ///
    /// ```
    /// let mut s: dod::SparseSet<u8> = (0..6u32).map(|e| (e, e as u8)).collect();
    /// assert_eq!(s.remove_many(&[4u32, 1, 1, 99]), 2);
    /// assert_eq!(s.indices(), &[0, 2, 3, 5]);
    /// ```
    pub fn remove_many<E: SparseKey>(&mut self, entities: &[E]) -> usize {
        let removed = entities.iter().filter(|&&e| self.defer_remove(e)).count();
        self.compact();
        removed
    }

    /// Checks every invariant, panicking on the first that fails; for tests and fuzzing.
    /// O(allocated slots).
    #[doc(hidden)]
    pub fn assert_invariants(&self) {
        self.pages.check();
        assert_eq!(self.entities.len(), self.values.len());
        assert!(
            self.entities.len() <= super::MAX_DENSE,
            "dense arrays too long"
        );
        let mut tombstones = 0;
        for (i, &e) in self.entities.iter().enumerate() {
            if e == TOMBSTONE {
                assert!(i >= self.first_tombstone);
                tombstones += 1;
            } else {
                let slot = self.slot(e);
                assert_eq!(decode(slot), Some(i), "entity {e}");
                assert!(e < self.vacant_from, "entity {e} at or above vacant_from");
                assert!(!is_malformed(slot_tag(slot)), "entity {e}: tag with bit 31");
            }
        }
        assert_eq!(tombstones, self.pending);
        let live = self
            .pages
            .all_slots()
            .iter()
            .filter(|&&s| s != Slot::VACANT)
            .count();
        assert_eq!(live, self.len());
    }
}

/// The panic of a set whose invariants a bug broke: checked once where several bounds depend
/// on them, so that the indexing after it needs no check of its own.
#[cold]
#[inline(never)]
fn broken() -> ! {
    panic!("SparseSet: a sparse slot names a position past the dense arrays")
}

/// Finishes a `retain` that `keep` interrupted by a panic, or truncates after a normal one.
struct RetainGuard<'a, const PAGE: usize> {
    pages: &'a mut Pages<PAGE>,
    entities: &'a mut Vec<u32>,
    pending: &'a mut usize,
    first_tombstone: &'a mut usize,
    r: usize,
    w: usize,
}

impl<const PAGE: usize> Drop for RetainGuard<'_, PAGE> {
    fn drop(&mut self) {
        // Entries `r..` were not visited: they are kept, like the values `retain_mut` keeps.
        let mut pending = 0;
        let mut first = 0;
        for r in self.r..self.entities.len() {
            let e = self.entities[r];
            if e == TOMBSTONE {
                if pending == 0 {
                    first = self.w;
                }
                pending += 1;
            } else {
                self.pages.relink(e, self.w);
            }
            self.entities[self.w] = e;
            self.w += 1;
        }
        self.entities.truncate(self.w);
        *self.pending = pending;
        *self.first_tombstone = first;
    }
}
