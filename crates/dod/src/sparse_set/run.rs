//! Appending the values of a run of new, consecutive indices: the batch form of `insert`
//! for an allocator's fresh ids.

use super::pages::encode;
use super::{is_malformed, SparseKey, SparseSet, DEFAULT_PAGE_SIZE, MAX_DENSE};

/// The pieces of `first..end` that fall in one page each, in order: `(index, n)`, the first
/// index of the piece and its length (`n <= end - index`, so the pieces end at `end`).
fn page_pieces<const PAGE: usize>(first: u32, end: u32) -> impl Iterator<Item = (u32, usize)> {
    let mut index = first;
    core::iter::from_fn(move || {
        if index >= end {
            return None;
        }
        let n = (PAGE - index as usize % PAGE).min((end - index) as usize);
        let piece = (index, n);
        index += n as u32;
        Some(piece)
    })
}

impl<T, const PAGE: usize> SparseSet<T, PAGE> {
    /// Starts appending values for the new indices `first`, `first + 1`, … in that order:
    /// the batch form of [`insert`](Self::insert) for ids an allocator hands out in a run.
    /// Each [`AppendRun::push`] appends one entry at the end of the dense arrays, as an
    /// insertion by plain index does, but skips what a lone insertion must check (whether the
    /// set holds the index, which page it is on) and writes the dense indices and the sparse
    /// slots in one pass per array when the run ends, so a run of new entities costs little
    /// more than pushing its values to a `Vec`. The entries appear when the run is dropped.
    ///
    /// `None` if the set may hold an index from `first` on (one at or past `first` has had an
    /// entry since the set was last [cleared](Self::clear): insert those one by one) or
    /// `first` is above [`max_index`](Self::max_index).
    ///
    /// O(1); each push is O(1) amortised.
    ///
    /// ```
    /// let mut s: dod::SparseSet<f32> = dod::SparseSet::new();
    /// s.insert(3u32, 0.5);
    /// let mut run = s.append_run(4).unwrap();
    /// assert_eq!(run.push(1.0), 4);
    /// assert_eq!(run.push(2.0), 5);
    /// drop(run);
    /// assert_eq!(s.indices(), [3, 4, 5]);
    /// assert_eq!(s.get(5u32), Some(&2.0));
    /// assert!(s.append_run(5).is_none()); // index 5 is held
    /// ```
    pub fn append_run(&mut self, first: u32) -> Option<AppendRun<'_, T, PAGE>> {
        self.append_run_tagged(first, 0, <u32 as SparseKey>::SPARSE_SLOTS)
    }

    /// [`append_run`](Self::append_run) for keys: the run's entries are those of the keys
    /// with `first`'s tag at `first`'s index and the indices after it (the keys a handle
    /// allocator gives its new slots, all at the same first generation), so that lookups by
    /// those keys find them and lookups by older or newer keys do not. The run ends before the
    /// first index the key type cannot address. `None` as `append_run`, and for a key that no
    /// insertion takes (a malformed key).
    ///
    /// ```
    /// use dod::{Handle, SparseSet};
    /// let mut s: SparseSet<char> = SparseSet::new();
    /// let first = Handle::new(4, 1, 0).unwrap();
    /// let mut run = s.append_run_as(first).unwrap();
    /// run.push('a');
    /// run.push('b');
    /// drop(run);
    /// assert_eq!(s.get(first), Some(&'a'));
    /// assert_eq!(s.get(Handle::new(5, 1, 0).unwrap()), Some(&'b'));
    /// assert_eq!(s.get(Handle::new(5, 2, 0).unwrap()), None); // another generation
    /// assert_eq!(s.get(5u32), Some(&'b')); // a plain index checks no tag
    /// ```
    pub fn append_run_as<E: SparseKey>(&mut self, first: E) -> Option<AppendRun<'_, T, PAGE>> {
        let tag = first.sparse_insert_tag().unwrap_or(0);
        if is_malformed(tag) {
            return None;
        }
        self.append_run_tagged(first.sparse_index(), tag, E::SPARSE_SLOTS)
    }

    /// A run from `first`, whose entries get `tag`, over indices below `slots`.
    fn append_run_tagged(
        &mut self,
        first: u32,
        tag: u32,
        slots: u64,
    ) -> Option<AppendRun<'_, T, PAGE>> {
        if first < self.vacant_from || first > self.max_index || u64::from(first) >= slots {
            return None;
        }
        // `first <= max_index < u32::MAX`, so the count fits; the dense arrays hold at most
        // `MAX_DENSE` entries; a key type addresses the indices below `slots`.
        let by_index = (self.max_index - first) as usize + 1;
        let by_key = usize::try_from(slots - u64::from(first)).unwrap_or(usize::MAX);
        let room = by_index
            .min(by_key)
            .min(MAX_DENSE.saturating_sub(self.values.len()));
        Some(AppendRun {
            set: self,
            first,
            tag,
            pending: 0,
            room,
        })
    }
}

/// Appends values for a run of new consecutive indices; made by
/// [`SparseSet::append_run`].
///
/// The values are written at the end of the dense values as they come, and the run is
/// *committed* (the dense indices and the sparse slots of the values pushed so far written,
/// in one pass per array) when it is dropped, whenever the values need more room, and before
/// [`extend`](Extend::extend) reserves. Until
/// then the set does not count them; a run that is leaked (`mem::forget`) leaks the values
/// it holds uncommitted and leaves the set as it was before them.
#[derive(Debug)]
pub struct AppendRun<'a, T, const PAGE: usize = DEFAULT_PAGE_SIZE> {
    set: &'a mut SparseSet<T, PAGE>,
    /// The index of the first value not committed.
    first: u32,
    /// The key tag every slot of the run gets (0 for plain indices).
    tag: u32,
    /// Values written past the end of the dense values, not committed: the first `pending`
    /// slots of their spare capacity are initialised.
    pending: usize,
    /// How many values from `first` on the set can take (`max_index`, the dense limit).
    room: usize,
}

impl<T, const PAGE: usize> AppendRun<'_, T, PAGE> {
    /// The index the next [`push`](Self::push) fills.
    ///
    /// ```
    /// let mut s: dod::SparseSet<u8> = dod::SparseSet::new();
    /// assert_eq!(s.append_run(10).unwrap().next_index(), 10);
    /// ```
    #[inline]
    pub fn next_index(&self) -> u32 {
        // `pending <= room`, and `first + room - 1 <= max_index`.
        self.first + self.pending as u32
    }

    /// How many more values the run can take before its index passes the set's
    /// [`max_index`](SparseSet::max_index) or the range of the run's key type, or the dense
    /// arrays are full.
    ///
    /// ```
    /// let mut s = dod::SparseSet::<u8>::new().with_max_index(9);
    /// let mut run = s.append_run(8).unwrap();
    /// assert_eq!(run.remaining(), 2);
    /// run.push(0);
    /// assert_eq!(run.remaining(), 1);
    /// ```
    #[inline]
    pub fn remaining(&self) -> usize {
        self.room - self.pending
    }

    /// How many more values the run takes without growing the dense values: pushes within it
    /// allocate nothing (and so cannot fail on memory), the next one reallocates. At most
    /// [`remaining`](Self::remaining).
    ///
    /// ```
    /// let mut s: dod::SparseSet<u8> = dod::SparseSet::new();
    /// s.reserve(10);
    /// let mut run = s.append_run(0).unwrap();
    /// assert!(run.capacity_left() >= 10);
    /// let before = run.capacity_left();
    /// run.push(1);
    /// assert_eq!(run.capacity_left(), before - 1);
    /// ```
    #[inline]
    pub fn capacity_left(&self) -> usize {
        let spare = self.set.values.capacity() - self.set.values.len() - self.pending;
        spare.min(self.remaining())
    }

    /// Reserves room for at least `additional` more values (at most
    /// [`remaining`](Self::remaining)) and their dense indices, so that pushing them
    /// allocates nothing and committing them allocates at most the sparse pages their
    /// indices need (code that must not fail part way, writing one entity to several sets,
    /// reserves first). Values pushed so far may be committed first. The pages are left to
    /// the commit, which writes their slots right after making them: made here, ahead of
    /// the values, a page would be out of the cache by the time its slots are written.
    ///
    /// ```
    /// let mut s: dod::SparseSet<u32> = dod::SparseSet::new();
    /// let mut run = s.append_run(0).unwrap();
    /// run.reserve(300);
    /// assert!(run.capacity_left() >= 300);
    /// run.extend(0..300);
    /// drop(run);
    /// assert_eq!(s.len(), 300);
    /// ```
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        let additional = additional.min(self.remaining());
        if additional > self.capacity_left() {
            // Pending values live past the values' length, where a reallocation need not
            // keep them.
            self.commit();
            self.set.values.reserve(additional);
        }
        self.set.entities.reserve(self.pending + additional);
    }

    /// Appends `value` for the run's next index and returns that index. O(1) amortised.
    ///
    /// # Panics
    ///
    /// If the index is above the set's [`max_index`](SparseSet::max_index) or past the
    /// indices the run's key type addresses, or the dense arrays are full (`u32::MAX - 1`
    /// entries).
    ///
    /// ```
    /// let mut s: dod::SparseSet<char> = dod::SparseSet::new();
    /// let mut run = s.append_run(0).unwrap();
    /// for c in ['a', 'b', 'c'] {
    ///     run.push(c);
    /// }
    /// drop(run);
    /// assert_eq!(s.iter().collect::<Vec<_>>(), [(0, &'a'), (1, &'b'), (2, &'c')]);
    /// ```
    #[inline]
    #[track_caller]
    pub fn push(&mut self, value: T) -> u32 {
        if self.pending >= self.room {
            run_refused(self.next_index(), self.set.max_index);
        }
        if self.pending == self.set.values.capacity() - self.set.values.len() {
            self.grow();
        }
        let index = self.next_index();
        self.set.values.spare_capacity_mut()[self.pending].write(value);
        self.pending += 1;
        index
    }

    /// Commits, then makes room for as many values again as the set holds.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        self.commit();
        let len = self.set.values.len();
        self.set.values.reserve(len.max(4));
    }

    /// Makes the pending values entries of the set: their dense indices, their sparse slots.
    ///
    /// Everything that allocates (the dense indices' room, the pages of the run) comes first,
    /// after the pending values are given up: if an allocation panics instead of aborting,
    /// those values are leaked, never counted, and the set is as it was before them (a run's
    /// indices at or past `vacant_from` with vacant slots, as insertions without a read of the
    /// slot need). Past the allocations nothing can panic.
    #[allow(unsafe_code)]
    fn commit(&mut self) {
        let k = self.pending;
        if k == 0 {
            return;
        }
        self.pending = 0;
        let first = self.first;
        let set = &mut *self.set;
        // `k <= room`, so every index below fits a u32 and is at most `max_index`.
        let end = first + k as u32;
        set.entities.reserve(k);
        for (index, _) in page_pieces::<PAGE>(first, end) {
            set.pages.alloc_page(index);
        }
        let pos = set.values.len();
        // SAFETY: `push` initialised the first `k` slots of the values' spare capacity, in
        // order, and nothing touched the values since (the run borrows the set mutably, and
        // the last commit or `grow` ran before those writes).
        unsafe { set.values.set_len(pos + k) };
        // Within the capacity just reserved: no allocation.
        set.entities.extend(first..end);
        // Page by page: one lookup per page (each exists by now), then a plain loop over its
        // slots.
        let mut p = pos;
        for (index, n) in page_pieces::<PAGE>(first, end) {
            let start = set.pages.page_start(index);
            let off = index as usize % PAGE;
            // No entry has held these indices (they are at or past `vacant_from`, which only
            // this run moves while it lives), so their slots are vacant and are written
            // without being read.
            let slots = &mut set.pages.all_slots_mut()[start + off..start + off + n];
            for (k, slot) in slots.iter_mut().enumerate() {
                *slot = encode(p + k, self.tag);
            }
            // The pieces add up to `k`, so `p` stays within the dense length.
            p += n;
        }
        set.vacant_from = end;
        self.first = end;
        self.room -= k;
    }
}

impl<T, const PAGE: usize> Drop for AppendRun<'_, T, PAGE> {
    fn drop(&mut self) {
        self.commit();
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn run_refused(index: u32, max: u32) -> ! {
    panic!(
        "AppendRun::push: index {index} is above the set's max_index {max} or past the indices \
         the run's key type addresses, or the dense arrays are full"
    )
}

impl<T, const PAGE: usize> Extend<T> for AppendRun<'_, T, PAGE> {
    /// Pushes every value, in order.
    ///
    /// ```
    /// let mut s: dod::SparseSet<u8> = dod::SparseSet::new();
    /// s.append_run(2).unwrap().extend([7, 8]);
    /// assert_eq!(s.indices(), [2, 3]);
    /// ```
    #[track_caller]
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        // Pending values live past the values' length, where a reallocation need not keep
        // them: commit them before making room.
        self.commit();
        self.set.reserve(iter.size_hint().0);
        for v in iter {
            self.push(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::SparseSet;

    #[test]
    #[should_panic(expected = "index 2 is above the set's max_index 1")]
    fn a_push_past_max_index_panics() {
        let mut s = SparseSet::<u8>::new().with_max_index(1);
        let mut run = s.append_run(1).unwrap();
        run.push(0);
        run.push(1);
    }

    /// A run by `Handle32` keys ends before index 65 535, which no `Handle32` names: every
    /// entry it makes is one a key lists and finds.
    #[test]
    #[cfg(feature = "std")]
    fn a_keyed_run_stays_within_its_key_type() {
        use crate::{Handle32, Key};
        use alloc::vec::Vec;
        let mut s = SparseSet::<u8>::new();
        let first = Handle32::new(65_533, 1).unwrap();
        let mut run = s.append_run_as(first).unwrap();
        assert_eq!(run.remaining(), 2);
        assert_eq!((run.push(1), run.push(2)), (65_533, 65_534));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run.push(3)));
        assert!(r.is_err(), "a third value has no index a Handle32 names");
        drop(run);
        s.assert_invariants();
        let keys: Vec<Handle32> = s.keys().collect();
        assert_eq!(
            keys.iter().map(|k| k.index()).collect::<Vec<_>>(),
            [65_533, 65_534]
        );
        assert!(keys.iter().all(|&k| s.contains(k)));
        // A run cannot start where a key cannot point.
        assert!(s
            .append_run_as(Handle32::from_index_tag(65_535, 1))
            .is_none());
    }

    #[test]
    fn a_run_crosses_pages_and_leaves_a_valid_set() {
        let mut s = SparseSet::<u32, 4>::new_paged();
        s.insert(0u32, 0);
        s.append_run(3).unwrap().extend(3..20);
        s.assert_invariants();
        assert_eq!(s.len(), 18);
        assert!((3..20).all(|i| s.get(i) == Some(&i)));
        assert_eq!(s.get(2u32), None);
        assert!(s.append_run(19).is_none());
        assert!(s.append_run(20).is_some());
    }

    #[test]
    fn pushes_within_a_reservation_allocate_nothing() {
        let mut s = SparseSet::<u32, 8>::new_paged();
        s.insert(0u32, 0);
        let mut run = s.append_run(5).unwrap();
        run.push(5);
        run.reserve(100);
        assert!(run.capacity_left() >= 100);
        let caps = (run.set.values.capacity(), run.set.entities.capacity());
        for i in 6..106 {
            run.push(i);
        }
        drop(run);
        // The dense arrays did not grow: only the commit's pages were made.
        assert_eq!((s.values.capacity(), s.entities.capacity()), caps);
        s.assert_invariants();
        assert_eq!(s.len(), 102);
        assert!((5..106).all(|i| s.get(i) == Some(&i)));
    }

    #[test]
    fn a_leaked_run_leaves_the_set_as_it_was() {
        // Values without heap memory, so that the leak is the run's alone (Miri reports leaks).
        let mut s = SparseSet::<u32>::new();
        s.insert(0u32, 10);
        let mut run = s.append_run(1).unwrap();
        run.push(11);
        core::mem::forget(run);
        s.assert_invariants();
        assert_eq!(s.len(), 1);
        assert_eq!(s.get(1u32), None);
        assert!(s.append_run(1).is_some());
    }

    #[test]
    fn every_value_pushed_is_dropped_once() {
        use alloc::rc::Rc;
        let token = Rc::new(());
        {
            let mut s = SparseSet::<Rc<()>, 8>::new_paged();
            let mut run = s.append_run(5).unwrap();
            // No reservation: the run commits and grows several times.
            for _ in 0..100 {
                run.push(Rc::clone(&token));
            }
            drop(run);
            s.assert_invariants();
            assert_eq!(s.len(), 100);
            assert_eq!(Rc::strong_count(&token), 101);
            assert_eq!(
                s.swap_remove(50u32).map(|v| Rc::strong_count(&v)),
                Some(101)
            );
        }
        assert_eq!(Rc::strong_count(&token), 1);
    }

    #[test]
    fn a_push_then_extend_keeps_every_value() {
        let mut s = SparseSet::<alloc::string::String>::new();
        let mut run = s.append_run(0).unwrap();
        run.push("a".into());
        run.push("b".into());
        // `extend` reserves (and may move the values): what was pushed is committed first.
        run.extend((0..100).map(|i| alloc::format!("{i}")));
        drop(run);
        s.assert_invariants();
        assert_eq!(s.len(), 102);
        assert_eq!(s.get(1u32).map(|v| v.as_str()), Some("b"));
        assert_eq!(s.get(101u32).map(|v| v.as_str()), Some("99"));
    }

    #[test]
    fn a_refused_push_leaves_the_values_before_it_in() {
        let mut s = SparseSet::<u8>::new().with_max_index(1);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut run = s.append_run(0).unwrap();
            run.push(10);
            run.push(11);
            run.push(12);
        }));
        assert!(r.is_err());
        s.assert_invariants();
        assert_eq!(
            s.iter().collect::<alloc::vec::Vec<_>>(),
            [(0, &10), (1, &11)]
        );
    }

    #[test]
    fn a_run_reaches_the_last_index() {
        let mut s = SparseSet::<u8>::new();
        let last = crate::sparse_set::DEFAULT_MAX_INDEX;
        let mut run = s.append_run(last - 1).unwrap();
        assert_eq!(run.remaining(), 2);
        run.push(1);
        run.push(2);
        assert_eq!(run.remaining(), 0);
        drop(run);
        s.assert_invariants();
        assert_eq!((s.get(last - 1), s.get(last)), (Some(&1), Some(&2)));
        assert!(s.append_run(last).is_none());
    }

    #[test]
    fn a_run_of_zero_sized_values() {
        let mut s = SparseSet::<()>::new();
        s.append_run(3).unwrap().extend([(), (), ()]);
        let mut run = s.append_run(6).unwrap();
        for _ in 0..300 {
            run.push(());
        }
        drop(run);
        s.assert_invariants();
        assert_eq!(s.len(), 303);
        assert!(s.contains(305u32) && !s.contains(2u32));
    }
}
