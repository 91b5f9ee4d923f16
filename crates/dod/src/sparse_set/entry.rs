//! The entry API: look an entity up once, then read, insert or remove through the answer.

use super::{
    decode, encode, is_malformed, refusal, slot_tag, SparseKey, SparseSet, DEFAULT_PAGE_SIZE,
};
use core::fmt;

impl<T, const PAGE: usize> SparseSet<T, PAGE> {
    /// The entry of `e`, for in-place manipulation, or `None` if an insertion for `e` would be
    /// refused: a stale, foreign or malformed key (see the
    /// [rules](crate::sparse_set#keys-plain-indices-and-generational-handles)), or an index above
    /// [`max_index`](Self::max_index) that the set does not hold. As slotmap's
    /// `SecondaryMap::entry`.
    ///
    /// The entry is [`Occupied`](Entry::Occupied) when the set holds `e` (for a `u32`: holds
    /// the index, whatever its tag). For a key newer than the entry its index holds, the entry
    /// is [`Vacant`](Entry::Vacant): that entry belongs to a dead entity, and inserting through
    /// the vacant entry replaces (drops) its value and records the key's tag, in place.
    ///
    /// O(1).
    ///
    /// ```
    /// use dod::{Handle, SparseSet};
    /// let mut hits: SparseSet<u32> = SparseSet::new();
    /// for e in [3u32, 5, 3, 3] {
    ///     *hits.entry(e).unwrap().or_insert(0) += 1;
    /// }
    /// assert_eq!((hits[3u32], hits[5u32]), (3, 1));
    ///
    /// let mut names: SparseSet<String> = SparseSet::new();
    /// let old = Handle::new(1, 1, 0).unwrap();
    /// let new = Handle::new(1, 2, 0).unwrap();
    /// names.entry(old).unwrap().or_insert_with(|| "old".into());
    /// assert_eq!(names.entry(new).unwrap().or_insert_with(|| "new".into()), "new");
    /// assert!(names.entry(old).is_none()); // stale now
    /// ```
    pub fn entry<E: SparseKey>(&mut self, e: E) -> Option<Entry<'_, T, PAGE>> {
        let index = e.sparse_index();
        let tag = e.sparse_insert_tag();
        let stored = self.slot(index);
        if self.bounds_out(index, stored) {
            return None;
        }
        match decode(stored) {
            Some(pos) => match tag {
                Some(t) if t != slot_tag(stored) => {
                    if refusal(slot_tag(stored), t).is_some() {
                        return None;
                    }
                    Some(Entry::Vacant(VacantEntry {
                        set: self,
                        index,
                        tag,
                        leftover: Some(pos),
                    }))
                }
                _ => Some(Entry::Occupied(OccupiedEntry {
                    set: self,
                    index,
                    pos,
                })),
            },
            None if tag.is_some_and(is_malformed) => None,
            None => Some(Entry::Vacant(VacantEntry {
                set: self,
                index,
                tag,
                leftover: None,
            })),
        }
    }
}

/// The entry of one entity in a [`SparseSet`], from [`SparseSet::entry`].
pub enum Entry<'a, T, const PAGE: usize = DEFAULT_PAGE_SIZE> {
    /// The set holds the entity.
    Occupied(OccupiedEntry<'a, T, PAGE>),
    /// The set does not hold the entity; an insertion would succeed.
    Vacant(VacantEntry<'a, T, PAGE>),
}

/// An entry the set holds; part of [`Entry`].
pub struct OccupiedEntry<'a, T, const PAGE: usize = DEFAULT_PAGE_SIZE> {
    set: &'a mut SparseSet<T, PAGE>,
    index: u32,
    pos: usize,
}

/// An entry the set does not hold; part of [`Entry`].
pub struct VacantEntry<'a, T, const PAGE: usize = DEFAULT_PAGE_SIZE> {
    set: &'a mut SparseSet<T, PAGE>,
    index: u32,
    /// The key's tag, `None` for a plain index.
    tag: Option<u32>,
    /// The dense position of a dead entity's entry that a newer key replaces.
    leftover: Option<usize>,
}

impl<'a, T, const PAGE: usize> Entry<'a, T, PAGE> {
    /// The entity's index.
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s: dod::SparseSet<u8> = dod::SparseSet::new();
    /// assert_eq!(s.entry(4u32).unwrap().index(), 4);
    /// ```
    pub fn index(&self) -> u32 {
        match self {
            Entry::Occupied(o) => o.index,
            Entry::Vacant(v) => v.index,
        }
    }

    /// The value, inserting `default` first if the entry is vacant.
    ///
    /// O(1) (amortised).
    ///
    /// # Panics
    ///
    /// As [`VacantEntry::insert`].
    ///
    /// ```
    /// let mut s: dod::SparseSet<u8> = dod::SparseSet::new();
    /// *s.entry(4u32).unwrap().or_insert(1) += 1;
    /// assert_eq!(s[4u32], 2);
    /// ```
    #[track_caller]
    pub fn or_insert(self, default: T) -> &'a mut T {
        match self {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(default),
        }
    }

    /// The value, inserting the result of `default` first if the entry is vacant.
    ///
    /// O(1) (amortised).
    ///
    /// # Panics
    ///
    /// As [`VacantEntry::insert`].
    ///
    /// ```
    /// let mut s: dod::SparseSet<Vec<u8>> = dod::SparseSet::new();
    /// s.entry(4u32).unwrap().or_insert_with(Vec::new).push(7);
    /// assert_eq!(s[4u32], [7]);
    /// ```
    #[track_caller]
    pub fn or_insert_with<F: FnOnce() -> T>(self, default: F) -> &'a mut T {
        match self {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(default()),
        }
    }

    /// The value, inserting the result of `default(index)` first if the entry is vacant.
    ///
    /// O(1) (amortised).
    ///
    /// # Panics
    ///
    /// As [`VacantEntry::insert`].
    ///
    /// ```
    /// let mut s: dod::SparseSet<u32> = dod::SparseSet::new();
    /// assert_eq!(*s.entry(4u32).unwrap().or_insert_with_key(|i| i * 10), 40);
    /// ```
    #[track_caller]
    pub fn or_insert_with_key<F: FnOnce(u32) -> T>(self, default: F) -> &'a mut T {
        match self {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => {
                let value = default(v.index);
                v.insert(value)
            }
        }
    }

    /// The value, inserting `T::default()` first if the entry is vacant.
    ///
    /// O(1) (amortised).
    ///
    /// # Panics
    ///
    /// As [`VacantEntry::insert`].
    ///
    /// ```
    /// let mut s: dod::SparseSet<u32> = dod::SparseSet::new();
    /// *s.entry(4u32).unwrap().or_default() += 3;
    /// assert_eq!(s[4u32], 3);
    /// ```
    #[track_caller]
    pub fn or_default(self) -> &'a mut T
    where
        T: Default,
    {
        self.or_insert_with(T::default)
    }

    /// Calls `f` on the value if the entry is occupied, and returns the entry.
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s: dod::SparseSet<u32> = dod::SparseSet::new();
    /// for _ in 0..3 {
    ///     s.entry(4u32).unwrap().and_modify(|v| *v += 1).or_insert(0);
    /// }
    /// assert_eq!(s[4u32], 2);
    /// ```
    pub fn and_modify<F: FnOnce(&mut T)>(self, f: F) -> Self {
        match self {
            Entry::Occupied(mut o) => {
                f(o.get_mut());
                Entry::Occupied(o)
            }
            vacant => vacant,
        }
    }
}

impl<'a, T, const PAGE: usize> OccupiedEntry<'a, T, PAGE> {
    /// The entity's index.
    ///
    /// O(1).
    ///
    /// ```
    /// use dod::sparse_set::Entry;
    /// let mut s: dod::SparseSet<u8> = [(4u32, 1)].into_iter().collect();
    /// let Some(Entry::Occupied(o)) = s.entry(4u32) else { unreachable!() };
    /// assert_eq!(o.index(), 4);
    /// ```
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The value.
    ///
    /// O(1).
    ///
    /// ```
    /// use dod::sparse_set::Entry;
    /// let mut s: dod::SparseSet<u8> = [(4u32, 1)].into_iter().collect();
    /// let Some(Entry::Occupied(o)) = s.entry(4u32) else { unreachable!() };
    /// assert_eq!(o.get(), &1);
    /// ```
    pub fn get(&self) -> &T {
        &self.set.values[self.pos]
    }

    /// The value, mutable, for as long as the entry lives.
    ///
    /// O(1).
    ///
    /// ```
    /// use dod::sparse_set::Entry;
    /// let mut s: dod::SparseSet<u8> = [(4u32, 1)].into_iter().collect();
    /// let Some(Entry::Occupied(mut o)) = s.entry(4u32) else { unreachable!() };
    /// *o.get_mut() += 1;
    /// assert_eq!(s[4u32], 2);
    /// ```
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.set.values[self.pos]
    }

    /// The value, mutable, for as long as the set's borrow.
    ///
    /// O(1).
    ///
    /// ```
    /// use dod::sparse_set::Entry;
    /// let mut s: dod::SparseSet<u8> = [(4u32, 1)].into_iter().collect();
    /// let Some(Entry::Occupied(o)) = s.entry(4u32) else { unreachable!() };
    /// *o.into_mut() = 9;
    /// assert_eq!(s[4u32], 9);
    /// ```
    pub fn into_mut(self) -> &'a mut T {
        &mut self.set.values[self.pos]
    }

    /// Replaces the value, keeping the entry's position and tag, and returns the old one.
    ///
    /// O(1).
    ///
    /// ```
    /// use dod::sparse_set::Entry;
    /// let mut s: dod::SparseSet<u8> = [(4u32, 1)].into_iter().collect();
    /// let Some(Entry::Occupied(mut o)) = s.entry(4u32) else { unreachable!() };
    /// assert_eq!(o.insert(5), 1);
    /// assert_eq!(s[4u32], 5);
    /// ```
    pub fn insert(&mut self, value: T) -> T {
        core::mem::replace(self.get_mut(), value)
    }

    /// Removes the entry and returns its value; the last entry moves into the hole, as
    /// [`SparseSet::swap_remove`].
    ///
    /// O(1).
    ///
    /// ```
    /// use dod::sparse_set::Entry;
    /// let mut s: dod::SparseSet<u8> = [(4u32, 1), (5, 2)].into_iter().collect();
    /// let Some(Entry::Occupied(o)) = s.entry(4u32) else { unreachable!() };
    /// assert_eq!(o.swap_remove(), 1);
    /// assert_eq!(s.indices(), &[5]);
    /// ```
    pub fn swap_remove(self) -> T {
        match self.set.swap_remove(self.index) {
            Some(v) => v,
            None => unreachable!("an occupied entry's index is in the set"),
        }
    }
}

impl<'a, T, const PAGE: usize> VacantEntry<'a, T, PAGE> {
    /// The entity's index.
    ///
    /// O(1).
    ///
    /// ```
    /// use dod::sparse_set::Entry;
    /// let mut s: dod::SparseSet<u8> = dod::SparseSet::new();
    /// let Some(Entry::Vacant(v)) = s.entry(4u32) else { unreachable!() };
    /// assert_eq!(v.index(), 4);
    /// ```
    pub fn index(&self) -> u32 {
        self.index
    }

    /// Inserts `value` and returns it, mutable. A new entity goes to the end of the dense
    /// arrays; for a key newer than its index's entry, the dead entity's value is dropped and
    /// `value` takes its place (the position does not change), with the key's tag.
    ///
    /// O(1) (amortised; the first entity of a page allocates the page).
    ///
    /// # Panics
    ///
    /// If the dense arrays are full (`u32::MAX - 1` entries). Allocation failure aborts, as
    /// for `Vec`; [`SparseSet::try_insert`] reports it instead.
    ///
    /// ```
    /// use dod::sparse_set::Entry;
    /// use dod::{Handle, SparseSet};
    /// let mut s: SparseSet<&str> = SparseSet::new();
    /// s.insert(Handle::new(4, 1, 0).unwrap(), "dead");
    /// let new = Handle::new(4, 2, 0).unwrap();
    /// let Some(Entry::Vacant(v)) = s.entry(new) else { unreachable!() };
    /// assert_eq!(*v.insert("alive"), "alive");
    /// assert_eq!(s.get(new), Some(&"alive"));
    /// assert_eq!(s.len(), 1);
    /// ```
    #[track_caller]
    pub fn insert(self, value: T) -> &'a mut T {
        let set = self.set;
        let pos = match self.leftover {
            Some(pos) => {
                if let (Some(slot), Some(t)) = (set.pages.slot_mut(self.index), self.tag) {
                    *slot = encode(pos, t);
                }
                drop(core::mem::replace(&mut set.values[pos], value));
                pos
            }
            None => {
                set.insert_tagged(self.index, self.tag, value);
                set.entities.len() - 1
            }
        };
        &mut set.values[pos]
    }
}

impl<T: fmt::Debug, const PAGE: usize> fmt::Debug for Entry<'_, T, PAGE> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entry::Occupied(o) => f.debug_tuple("Occupied").field(o).finish(),
            Entry::Vacant(v) => f.debug_tuple("Vacant").field(v).finish(),
        }
    }
}

impl<T: fmt::Debug, const PAGE: usize> fmt::Debug for OccupiedEntry<'_, T, PAGE> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OccupiedEntry")
            .field("index", &self.index)
            .field("value", self.get())
            .finish()
    }
}

impl<T, const PAGE: usize> fmt::Debug for VacantEntry<'_, T, PAGE> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VacantEntry")
            .field("index", &self.index)
            .finish()
    }
}
