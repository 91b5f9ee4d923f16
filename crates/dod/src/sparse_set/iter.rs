//! Iterators over a set's live entries, in dense order, skipping tombstones.

use super::{slot_tag, Pages, SparseSet, TOMBSTONE};
use crate::key::Key;
use alloc::vec;
use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::slice;

impl<T, const PAGE: usize> SparseSet<T, PAGE> {
    /// The live entries as `(entity, &value)`, in dense order (tombstones skipped).
    ///
    /// O(1) to create; O(n) to walk.
    ///
    /// ```
    /// let s: dod::SparseSet<char> = [(9u32, 'a'), (4, 'b')].into_iter().collect();
    /// assert_eq!(s.iter().collect::<Vec<_>>(), [(9, &'a'), (4, &'b')]);
    /// ```
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            entities: self.entities.iter(),
            values: self.values.iter(),
            remaining: self.len(),
        }
    }

    /// The live entries as `(entity, &mut value)`, in dense order (tombstones skipped).
    ///
    /// O(1) to create; O(n) to walk.
    ///
    /// ```
    /// let mut s: dod::SparseSet<u32> = [(9u32, 1), (4, 2)].into_iter().collect();
    /// for (e, v) in s.iter_mut() {
    ///     *v += e;
    /// }
    /// assert_eq!(s.values(), &[10, 6]);
    /// ```
    pub fn iter_mut(&mut self) -> IterMut<'_, T> {
        let remaining = self.len();
        IterMut {
            entities: self.entities.iter(),
            values: self.values.iter_mut(),
            remaining,
        }
    }

    /// The keys of the entries inserted with a key, rebuilt from their tags, in dense order;
    /// entries inserted by a plain `u32` (no tag) are skipped. `K` should be the key type the
    /// set is filled with (a turbofish, or the type of what collects the keys).
    ///
    /// O(1) to create; O(n) to walk, with one read of the sparse array per entry (the tags
    /// live there).
    ///
    /// ```
    /// use dod::{Handle, SparseSet};
    /// let a = Handle::new(9, 2, 0).unwrap();
    /// let b = Handle::new(4, 1, 0).unwrap();
    /// let mut s: SparseSet<char> = [(a, 'a'), (b, 'b')].into_iter().collect();
    /// s.insert(7u32, 'c');
    /// let keys: Vec<Handle> = s.keys().collect();
    /// assert_eq!(keys, [a, b]);
    /// ```
    pub fn keys<K: Key>(&self) -> Keys<'_, K, PAGE> {
        Keys {
            entities: self.entities.iter(),
            pages: &self.pages,
            _key: PhantomData,
        }
    }

    /// The entries inserted with a key, as `(key, &value)` in dense order; entries inserted by
    /// a plain `u32` are skipped (see [`keys`](Self::keys)).
    ///
    /// O(1) to create; O(n) to walk, with one read of the sparse array per entry.
    ///
    /// ```
    /// use dod::{Handle, SparseSet};
    /// let a = Handle::new(9, 2, 0).unwrap();
    /// let mut s: SparseSet<char> = [(a, 'a')].into_iter().collect();
    /// s.insert(7u32, 'c');
    /// assert_eq!(s.iter_keys::<Handle>().collect::<Vec<_>>(), [(a, &'a')]);
    /// ```
    pub fn iter_keys<K: Key>(&self) -> IterKeys<'_, K, T, PAGE> {
        IterKeys {
            entities: self.entities.iter(),
            values: self.values.iter(),
            pages: &self.pages,
            _key: PhantomData,
        }
    }

    /// Removes every entry and yields them as `(entity, value)`, in dense order (tombstones
    /// skipped). The set is empty as soon as this returns, and keeps its allocation; the
    /// values not taken are dropped with the iterator (if the iterator is leaked, they are
    /// leaked, and the set is still empty and valid).
    ///
    /// O(n) to unlink the entries, then O(1) per item.
    ///
    /// ```
    /// let mut s: dod::SparseSet<char> = [(4u32, 'a'), (2, 'b'), (7, 'c')].into_iter().collect();
    /// let mut d = s.drain();
    /// assert_eq!(d.next(), Some((4, 'a')));
    /// drop(d); // drops 'b' and 'c'
    /// assert!(s.is_empty() && !s.contains(2u32));
    /// ```
    pub fn drain(&mut self) -> Drain<'_, T> {
        // Unlink first: whatever happens to the iterator, the set is empty and valid.
        for &e in &self.entities {
            if e != TOMBSTONE {
                self.pages.unlink(e);
            }
        }
        let remaining = self.len();
        self.pending = 0;
        self.first_tombstone = 0;
        Drain {
            entities: self.entities.drain(..),
            values: self.values.drain(..),
            remaining,
        }
    }
}

macro_rules! live_iter {
    ($name:ident, $item:ty, $next:ident, $next_back:ident) => {
        impl<'a, T> Iterator for $name<'a, T> {
            type Item = (u32, $item);

            #[inline]
            fn next(&mut self) -> Option<Self::Item> {
                loop {
                    let e = *self.entities.next()?;
                    let v = self.values.$next()?;
                    if e != TOMBSTONE {
                        self.remaining -= 1;
                        return Some((e, v));
                    }
                }
            }

            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                (self.remaining, Some(self.remaining))
            }
        }

        impl<T> DoubleEndedIterator for $name<'_, T> {
            #[inline]
            fn next_back(&mut self) -> Option<Self::Item> {
                loop {
                    let e = *self.entities.next_back()?;
                    let v = self.values.$next_back()?;
                    if e != TOMBSTONE {
                        self.remaining -= 1;
                        return Some((e, v));
                    }
                }
            }
        }

        impl<T> ExactSizeIterator for $name<'_, T> {}
        impl<T> FusedIterator for $name<'_, T> {}
    };
}

/// Iterator over `(entity, &value)`, from [`SparseSet::iter`].
#[derive(Clone, Debug)]
pub struct Iter<'a, T> {
    entities: slice::Iter<'a, u32>,
    values: slice::Iter<'a, T>,
    remaining: usize,
}

live_iter!(Iter, &'a T, next, next_back);

/// Iterator over `(entity, &mut value)`, from [`SparseSet::iter_mut`].
#[derive(Debug)]
pub struct IterMut<'a, T> {
    entities: slice::Iter<'a, u32>,
    values: slice::IterMut<'a, T>,
    remaining: usize,
}

live_iter!(IterMut, &'a mut T, next, next_back);

/// Owning iterator over `(entity, value)`, in dense order, from `SparseSet::into_iter`.
#[derive(Debug)]
pub struct IntoIter<T> {
    entities: vec::IntoIter<u32>,
    values: vec::IntoIter<T>,
    remaining: usize,
}

impl<T> Iterator for IntoIter<T> {
    type Item = (u32, T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let e = self.entities.next()?;
            let v = self.values.next()?;
            if e != TOMBSTONE {
                self.remaining -= 1;
                return Some((e, v));
            }
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<T> DoubleEndedIterator for IntoIter<T> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        loop {
            let e = self.entities.next_back()?;
            let v = self.values.next_back()?;
            if e != TOMBSTONE {
                self.remaining -= 1;
                return Some((e, v));
            }
        }
    }
}

impl<T> ExactSizeIterator for IntoIter<T> {}
impl<T> FusedIterator for IntoIter<T> {}

impl<T, const PAGE: usize> IntoIterator for SparseSet<T, PAGE> {
    type Item = (u32, T);
    type IntoIter = IntoIter<T>;

    /// The live entries by value, in dense order.
    ///
    /// ```
    /// let s: dod::SparseSet<char> = [(9u32, 'a'), (4, 'b')].into_iter().collect();
    /// assert_eq!(s.into_iter().collect::<Vec<_>>(), [(9, 'a'), (4, 'b')]);
    /// ```
    fn into_iter(self) -> IntoIter<T> {
        let remaining = self.len();
        IntoIter {
            entities: self.entities.into_iter(),
            values: self.values.into_iter(),
            remaining,
        }
    }
}

impl<'a, T, const PAGE: usize> IntoIterator for &'a SparseSet<T, PAGE> {
    type Item = (u32, &'a T);
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<'a, T, const PAGE: usize> IntoIterator for &'a mut SparseSet<T, PAGE> {
    type Item = (u32, &'a mut T);
    type IntoIter = IterMut<'a, T>;

    fn into_iter(self) -> IterMut<'a, T> {
        self.iter_mut()
    }
}

/// Iterator over the keys of a set's entries, from [`SparseSet::keys`].
pub struct Keys<'a, K, const PAGE: usize> {
    entities: slice::Iter<'a, u32>,
    pages: &'a Pages<PAGE>,
    _key: PhantomData<fn() -> K>,
}

impl<K: Key, const PAGE: usize> Keys<'_, K, PAGE> {
    /// The key of entity `e`, if it is live and has a tag.
    #[inline]
    fn key(&self, e: u32) -> Option<K> {
        if e == TOMBSTONE {
            return None;
        }
        match slot_tag(self.pages.get(e)) {
            0 => None,
            t => Some(K::from_index_tag(e, t)),
        }
    }
}

impl<K: Key, const PAGE: usize> Iterator for Keys<'_, K, PAGE> {
    type Item = K;

    #[inline]
    fn next(&mut self) -> Option<K> {
        loop {
            let e = *self.entities.next()?;
            if let Some(k) = self.key(e) {
                return Some(k);
            }
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.entities.len()))
    }
}

impl<K: Key, const PAGE: usize> DoubleEndedIterator for Keys<'_, K, PAGE> {
    #[inline]
    fn next_back(&mut self) -> Option<K> {
        loop {
            let e = *self.entities.next_back()?;
            if let Some(k) = self.key(e) {
                return Some(k);
            }
        }
    }
}

impl<K: Key, const PAGE: usize> FusedIterator for Keys<'_, K, PAGE> {}

impl<K, const PAGE: usize> Clone for Keys<'_, K, PAGE> {
    fn clone(&self) -> Self {
        Keys {
            entities: self.entities.clone(),
            pages: self.pages,
            _key: PhantomData,
        }
    }
}

impl<K, const PAGE: usize> fmt::Debug for Keys<'_, K, PAGE> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keys")
            .field("entities", &self.entities.as_slice())
            .finish_non_exhaustive()
    }
}

/// Iterator over `(key, &value)` for a set's entries inserted with a key, from
/// [`SparseSet::iter_keys`].
pub struct IterKeys<'a, K, T, const PAGE: usize> {
    entities: slice::Iter<'a, u32>,
    values: slice::Iter<'a, T>,
    pages: &'a Pages<PAGE>,
    _key: PhantomData<fn() -> K>,
}

impl<'a, K: Key, T, const PAGE: usize> IterKeys<'a, K, T, PAGE> {
    /// The item of entity `e` with value `v`, if `e` is live and has a tag.
    #[inline]
    fn item(&self, e: u32, v: &'a T) -> Option<(K, &'a T)> {
        if e == TOMBSTONE {
            return None;
        }
        match slot_tag(self.pages.get(e)) {
            0 => None,
            t => Some((K::from_index_tag(e, t), v)),
        }
    }
}

impl<'a, K: Key, T, const PAGE: usize> Iterator for IterKeys<'a, K, T, PAGE> {
    type Item = (K, &'a T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let e = *self.entities.next()?;
            let v = self.values.next()?;
            if let Some(item) = self.item(e, v) {
                return Some(item);
            }
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.entities.len()))
    }
}

impl<K: Key, T, const PAGE: usize> DoubleEndedIterator for IterKeys<'_, K, T, PAGE> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        loop {
            let e = *self.entities.next_back()?;
            let v = self.values.next_back()?;
            if let Some(item) = self.item(e, v) {
                return Some(item);
            }
        }
    }
}

impl<K: Key, T, const PAGE: usize> FusedIterator for IterKeys<'_, K, T, PAGE> {}

impl<K, T, const PAGE: usize> Clone for IterKeys<'_, K, T, PAGE> {
    fn clone(&self) -> Self {
        IterKeys {
            entities: self.entities.clone(),
            values: self.values.clone(),
            pages: self.pages,
            _key: PhantomData,
        }
    }
}

impl<K, T: fmt::Debug, const PAGE: usize> fmt::Debug for IterKeys<'_, K, T, PAGE> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IterKeys")
            .field("entities", &self.entities.as_slice())
            .field("values", &self.values.as_slice())
            .finish_non_exhaustive()
    }
}

/// Draining iterator over `(entity, value)`, in dense order, from [`SparseSet::drain`].
#[derive(Debug)]
pub struct Drain<'a, T> {
    entities: vec::Drain<'a, u32>,
    values: vec::Drain<'a, T>,
    remaining: usize,
}

impl<T> Iterator for Drain<'_, T> {
    type Item = (u32, T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let e = self.entities.next()?;
            let v = self.values.next()?;
            if e != TOMBSTONE {
                self.remaining -= 1;
                return Some((e, v));
            }
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<T> DoubleEndedIterator for Drain<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        loop {
            let e = self.entities.next_back()?;
            let v = self.values.next_back()?;
            if e != TOMBSTONE {
                self.remaining -= 1;
                return Some((e, v));
            }
        }
    }
}

impl<T> ExactSizeIterator for Drain<'_, T> {}
impl<T> FusedIterator for Drain<'_, T> {}
