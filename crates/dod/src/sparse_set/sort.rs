//! Reordering the dense arrays: sorts, and `sort_as` to walk two sets in lockstep.

use super::pages::{decode, slot_tag};
use super::{SparseSet, TOMBSTONE};
use alloc::vec::Vec;
use core::cmp::Ordering;

impl<T, const PAGE: usize> SparseSet<T, PAGE> {
    /// Sorts the entries in place with a comparator of `(entity, value)` pairs; the sort is
    /// stable. Pending tombstones are removed first.
    ///
    /// O(n log n); allocates one index per entry. If `cmp` panics, the set is left as it was
    /// (compacted).
    ///
    /// ```
    /// let mut s: dod::SparseSet<i32> = [(1u32, 30), (2, 10), (3, 20)].into_iter().collect();
    /// s.sort_by(|_, a, _, b| a.cmp(b));
    /// assert_eq!(s.indices(), &[2, 3, 1]);
    /// assert_eq!(s[3u32], 20);
    /// ```
    pub fn sort_by<F>(&mut self, mut cmp: F)
    where
        F: FnMut(u32, &T, u32, &T) -> Ordering,
    {
        self.compact();
        let (entities, values) = (&self.entities, &self.values);
        let mut order: Vec<usize> = (0..entities.len()).collect();
        order.sort_by(|&a, &b| cmp(entities[a], &values[a], entities[b], &values[b]));
        self.apply_order(order);
    }

    /// Sorts the entries in place by a key of `(entity, value)`; the sort is stable. Pending
    /// tombstones are removed first.
    ///
    /// O(n log n).
    ///
    /// ```
    /// let mut s: dod::SparseSet<&str> = [(5u32, "b"), (2, "c"), (9, "a")].into_iter().collect();
    /// s.sort_by_key(|e, _| e);
    /// assert_eq!(s.indices(), &[2, 5, 9]);
    /// s.sort_by_key(|_, v| *v);
    /// assert_eq!(s.values(), &["a", "b", "c"]);
    /// ```
    pub fn sort_by_key<K: Ord, F: FnMut(u32, &T) -> K>(&mut self, mut key: F) {
        self.sort_by(|e1, v1, e2, v2| key(e1, v1).cmp(&key(e2, v2)));
    }

    /// Sorts the entries in place with a comparator, not necessarily keeping the order of
    /// equal entries. Pending tombstones are removed first.
    ///
    /// O(n log n).
    ///
    /// ```
    /// let mut s: dod::SparseSet<u8> = [(1u32, 3), (2, 1), (3, 2)].into_iter().collect();
    /// s.sort_unstable_by(|_, a, _, b| b.cmp(a));
    /// assert_eq!(s.values(), &[3, 2, 1]);
    /// ```
    pub fn sort_unstable_by<F>(&mut self, mut cmp: F)
    where
        F: FnMut(u32, &T, u32, &T) -> Ordering,
    {
        self.compact();
        let (entities, values) = (&self.entities, &self.values);
        let mut order: Vec<usize> = (0..entities.len()).collect();
        order.sort_unstable_by(|&a, &b| cmp(entities[a], &values[a], entities[b], &values[b]));
        self.apply_order(order);
    }

    /// Sorts the entries in place by a key of `(entity, value)`, not necessarily keeping the
    /// order of equal entries. Pending tombstones are removed first.
    ///
    /// O(n log n).
    ///
    /// ```
    /// let mut s: dod::SparseSet<&str> = [(5u32, "bb"), (2, "c"), (9, "aaa")].into_iter().collect();
    /// s.sort_unstable_by_key(|_, v| v.len());
    /// assert_eq!(s.indices(), &[2, 5, 9]);
    /// ```
    pub fn sort_unstable_by_key<K: Ord, F: FnMut(u32, &T) -> K>(&mut self, mut key: F) {
        self.sort_unstable_by(|e1, v1, e2, v2| key(e1, v1).cmp(&key(e2, v2)));
    }

    /// Moves the entries so that position `i` holds the entry that was at `order[i]`, then
    /// relinks every sparse slot. `order` must be a permutation of `0..len`.
    fn apply_order(&mut self, mut order: Vec<usize>) {
        const DONE: usize = usize::MAX;
        for start in 0..order.len() {
            if order[start] == DONE {
                continue;
            }
            // Follow the cycle through `start`: each swap puts one entry in its final place.
            let mut j = start;
            loop {
                let k = order[j];
                order[j] = DONE;
                if k == start {
                    break;
                }
                self.values.swap(j, k);
                self.entities.swap(j, k);
                j = k;
            }
        }
        for (i, &e) in self.entities.iter().enumerate() {
            self.pages.relink(e, i);
        }
    }

    /// Reorders this set so that the entities it shares with `other` come first, in `other`'s
    /// order; the others follow in an unspecified order (EnTT's `sort_as`: sort the bones in
    /// node order). Entities are matched as [`join`](SparseSet::join) pairs them: by index,
    /// and only if their tags agree or either was inserted by a plain `u32`, so a dead
    /// entity's leftover here is not lined up with a new entity of the same index there.
    /// Pending tombstones of this set are removed first.
    ///
    /// When every entity of `other` is shared with this set and `other` has no pending
    /// removals, position `i` of both sets then holds the same entity for every
    /// `i < other.len()`, so the two can be walked in lockstep. Otherwise only the order is
    /// shared: an entity of `other` that this set lacks (or holds under another tag), or a
    /// tombstone of `other`, takes a position in `other` and none here.
    ///
    /// O(other.len()): one probe and at most one swap per entity of `other`, after an
    /// O(len) compaction if removals are pending.
    ///
    /// ```
    /// use dod::SparseSet;
    /// let nodes: SparseSet<&str> = [(7u32, "n7"), (3, "n3"), (5, "n5")].into_iter().collect();
    /// let mut bones: SparseSet<&str> = [(1u32, "b1"), (5, "b5"), (7, "b7")].into_iter().collect();
    /// bones.sort_as(&nodes);
    /// assert_eq!(&bones.indices()[..2], &[7, 5]); // node 3 has no bone
    /// assert_eq!(bones.indices()[2], 1);
    ///
    /// // Every node has a bone: the sets line up position by position.
    /// let nodes: SparseSet<&str> = [(7u32, "n7"), (5, "n5")].into_iter().collect();
    /// bones.sort_as(&nodes);
    /// assert_eq!(&bones.indices()[..nodes.len()], nodes.indices());
    ///
    /// // Keys: the bone left by a dead entity 7 is not lined up with the new entity 7.
    /// use dod::Handle;
    /// let k = |i, g| Handle::new(i, g, 0).unwrap();
    /// let nodes: SparseSet<&str> = [(k(7, 2), "n7v2"), (k(5, 1), "n5")].into_iter().collect();
    /// let mut bones: SparseSet<&str> = [(k(5, 1), "b5"), (k(7, 1), "b7v1")].into_iter().collect();
    /// bones.sort_as(&nodes);
    /// assert_eq!(bones.values()[0], "b5");
    /// ```
    pub fn sort_as<U, const P2: usize>(&mut self, other: &SparseSet<U, P2>) {
        self.compact();
        let mut w = 0;
        for &e in other.indices() {
            if e == TOMBSTONE {
                continue;
            }
            let slot = self.slot(e);
            let (mine, theirs) = (slot_tag(slot), slot_tag(other.slot(e)));
            if mine != 0 && theirs != 0 && mine != theirs {
                // Another entity of the same index: not shared.
                continue;
            }
            let Some(pos) = decode(slot) else {
                continue;
            };
            if pos != w {
                let displaced = self.entities[w];
                self.entities.swap(pos, w);
                self.values.swap(pos, w);
                self.pages.relink(e, w);
                self.pages.relink(displaced, pos);
            }
            w += 1;
        }
    }
}
