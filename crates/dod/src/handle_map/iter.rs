//! Iterators over a [`HandleMap`]: all walk the dense slice in order, pairing each value with
//! its handle through the dense → slot back-link.

use alloc::vec::{self, Vec};
use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::slice;

use super::{HandleMap, Slot};
use crate::debug_list::DebugList;
use crate::key::Key;

/// The handle of the value whose slot is `slot`. Vacated slots keep their generation and type
/// bits, so this also names the values a [`Drain`] hands out.
#[inline]
pub(super) fn key_of<K: Key>(slots: &[Slot], slot: u32) -> K {
    slots[slot as usize].tag.key(slot)
}

macro_rules! pair_iterator {
    ($name:ident, $values:ty, $item:ty) => {
        impl<'a, T, K: Key> Iterator for $name<'a, T, K> {
            type Item = (K, $item);

            #[inline]
            fn next(&mut self) -> Option<Self::Item> {
                let v = self.values.next()?;
                let s = *self.links.next()?;
                Some((key_of(self.slots, s), v))
            }

            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.values.size_hint()
            }
        }

        impl<'a, T, K: Key> DoubleEndedIterator for $name<'a, T, K> {
            #[inline]
            fn next_back(&mut self) -> Option<Self::Item> {
                let v = self.values.next_back()?;
                let s = *self.links.next_back()?;
                Some((key_of(self.slots, s), v))
            }
        }

        impl<'a, T, K: Key> ExactSizeIterator for $name<'a, T, K> {}
        impl<'a, T, K: Key> FusedIterator for $name<'a, T, K> {}
    };
}

/// An iterator over `(handle, &value)` in dense order, from [`HandleMap::iter`].
pub struct Iter<'a, T, K: Key> {
    values: slice::Iter<'a, T>,
    links: slice::Iter<'a, u32>,
    slots: &'a [Slot],
    _key: PhantomData<fn() -> K>,
}

impl<T, K: Key> Clone for Iter<'_, T, K> {
    fn clone(&self) -> Self {
        Iter {
            values: self.values.clone(),
            links: self.links.clone(),
            slots: self.slots,
            _key: PhantomData,
        }
    }
}

impl<'a, T, K: Key> Iter<'a, T, K> {
    /// The `(handle, &value)` pairs of `values`, whose back-links into `slots` are `links`:
    /// [`HandleMap::iter`], and what the other iterators' `Debug` prints of the values they
    /// have left.
    #[inline]
    fn new(values: &'a [T], links: &'a [u32], slots: &'a [Slot]) -> Self {
        Iter {
            values: values.iter(),
            links: links.iter(),
            slots,
            _key: PhantomData,
        }
    }
}

pair_iterator!(Iter, slice::Iter<'a, T>, &'a T);

impl<T: fmt::Debug, K: Key> fmt::Debug for Iter<'_, T, K> {
    /// The `(handle, &value)` pairs still to come.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// map.insert(1);
    /// let b = map.insert(2);
    /// let mut it = map.iter();
    /// it.next();
    /// assert_eq!(format!("{it:?}"), format!("Iter([({b:?}, 2)])"));
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Iter")
            .field(&DebugList(self.clone()))
            .finish()
    }
}

/// An iterator over `(handle, &mut value)` in dense order, from [`HandleMap::iter_mut`].
pub struct IterMut<'a, T, K: Key> {
    values: slice::IterMut<'a, T>,
    links: slice::Iter<'a, u32>,
    slots: &'a [Slot],
    _key: PhantomData<fn() -> K>,
}

pair_iterator!(IterMut, slice::IterMut<'a, T>, &'a mut T);

impl<T: fmt::Debug, K: Key> fmt::Debug for IterMut<'_, T, K> {
    /// The `(handle, &value)` pairs still to come, read through a shared view as
    /// `slice::IterMut`'s `Debug` does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rest = Iter::<T, K>::new(self.values.as_slice(), self.links.as_slice(), self.slots);
        f.debug_tuple("IterMut").field(&DebugList(rest)).finish()
    }
}

/// A draining iterator over `(handle, value)` in dense order, from [`HandleMap::drain`]. Every
/// handle is already stale when it is handed out.
pub struct Drain<'a, T, K: Key> {
    values: vec::Drain<'a, T>,
    links: vec::Drain<'a, u32>,
    slots: &'a [Slot],
    _key: PhantomData<fn() -> K>,
}

impl<T, K: Key> Iterator for Drain<'_, T, K> {
    type Item = (K, T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let v = self.values.next()?;
        let s = self.links.next()?;
        Some((key_of(self.slots, s), v))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.values.size_hint()
    }
}

impl<T, K: Key> DoubleEndedIterator for Drain<'_, T, K> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let v = self.values.next_back()?;
        let s = self.links.next_back()?;
        Some((key_of(self.slots, s), v))
    }
}

impl<T, K: Key> ExactSizeIterator for Drain<'_, T, K> {}

impl<T: fmt::Debug, K: Key> fmt::Debug for Drain<'_, T, K> {
    /// The `(handle, &value)` pairs still to come (stale handles, as the drain hands them out).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rest = Iter::<T, K>::new(self.values.as_slice(), self.links.as_slice(), self.slots);
        f.debug_tuple("Drain").field(&DebugList(rest)).finish()
    }
}
impl<T, K: Key> FusedIterator for Drain<'_, T, K> {}

/// An owning iterator over `(handle, value)` in dense order, from `HandleMap::into_iter`.
pub struct IntoIter<T, K: Key> {
    values: vec::IntoIter<T>,
    links: vec::IntoIter<u32>,
    slots: Vec<Slot>,
    _key: PhantomData<fn() -> K>,
}

impl<T, K: Key> Iterator for IntoIter<T, K> {
    type Item = (K, T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let v = self.values.next()?;
        let s = self.links.next()?;
        Some((key_of(&self.slots, s), v))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.values.size_hint()
    }
}

impl<T, K: Key> DoubleEndedIterator for IntoIter<T, K> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let v = self.values.next_back()?;
        let s = self.links.next_back()?;
        Some((key_of(&self.slots, s), v))
    }
}

impl<T, K: Key> ExactSizeIterator for IntoIter<T, K> {}

impl<T: fmt::Debug, K: Key> fmt::Debug for IntoIter<T, K> {
    /// The `(handle, &value)` pairs still to come.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rest = Iter::<T, K>::new(self.values.as_slice(), self.links.as_slice(), &self.slots);
        f.debug_tuple("IntoIter").field(&DebugList(rest)).finish()
    }
}
impl<T, K: Key> FusedIterator for IntoIter<T, K> {}

impl<T, K: Key> HandleMap<T, K> {
    /// An iterator over `(handle, &value)` in dense order. Building each handle reads its slot;
    /// [`values`](HandleMap::values) is faster when the handles are not needed.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let a = map.insert(1);
    /// let b = map.insert(2);
    /// assert_eq!(map.iter().collect::<Vec<_>>(), [(a, &1), (b, &2)]);
    /// ```
    pub fn iter(&self) -> Iter<'_, T, K> {
        Iter::new(&self.values, &self.links, &self.slots)
    }

    /// An iterator over `(handle, &mut value)` in dense order.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let a = map.insert(1);
    /// for (h, v) in map.iter_mut() {
    ///     *v += h.index() as i32 + 10;
    /// }
    /// assert_eq!(map[a], 11);
    /// ```
    pub fn iter_mut(&mut self) -> IterMut<'_, T, K> {
        self.order.touched();
        IterMut {
            values: self.values.iter_mut(),
            links: self.links.iter(),
            slots: &self.slots,
            _key: PhantomData,
        }
    }

    /// Removes every value and returns them with their (now stale) handles, in dense order.
    /// The slots are vacated as by [`clear`](HandleMap::clear); the capacity is kept. O(len).
    ///
    /// Values the iterator does not reach are dropped with it.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let a = map.insert('a');
    /// let drained: Vec<_> = map.drain().collect();
    /// assert_eq!(drained, [(a, 'a')]);
    /// assert!(map.is_empty() && !map.contains(a));
    /// ```
    pub fn drain(&mut self) -> Drain<'_, T, K> {
        self.vacate_all();
        self.order.changed();
        Drain {
            values: self.values.drain(..),
            links: self.links.drain(..),
            slots: &self.slots,
            _key: PhantomData,
        }
    }
}

impl<'a, T, K: Key> IntoIterator for &'a HandleMap<T, K> {
    type Item = (K, &'a T);
    type IntoIter = Iter<'a, T, K>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T, K: Key> IntoIterator for &'a mut HandleMap<T, K> {
    type Item = (K, &'a mut T);
    type IntoIter = IterMut<'a, T, K>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl<T, K: Key> IntoIterator for HandleMap<T, K> {
    type Item = (K, T);
    type IntoIter = IntoIter<T, K>;

    /// Consumes the map into `(handle, value)` pairs in dense order.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let h = map.insert("x");
    /// assert_eq!(map.into_iter().collect::<Vec<_>>(), [(h, "x")]);
    /// ```
    fn into_iter(self) -> Self::IntoIter {
        IntoIter {
            values: self.values.into_iter(),
            links: self.links.into_iter(),
            slots: self.slots,
            _key: PhantomData,
        }
    }
}

impl<T, K: Key> Extend<T> for HandleMap<T, K> {
    /// Inserts every value; the handles are discarded (use
    /// [`insert_many`](HandleMap::insert_many) to keep them).
    ///
    /// # Panics
    ///
    /// If the key type runs out of slots.
    #[track_caller]
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.reserve(iter.size_hint().0);
        for v in iter {
            self.insert(v);
        }
    }
}

impl<T, K: Key> FromIterator<T> for HandleMap<T, K> {
    /// A map of the values, in order, at slots `0..n`.
    ///
    /// # Panics
    ///
    /// If the key type runs out of slots (more than 65 535 values for
    /// [`Handle32`](crate::Handle32)).
    ///
    /// ```
    /// let map: dod::HandleMap<u32> = (0..3).collect();
    /// assert_eq!(map.values(), [0, 1, 2]);
    /// ```
    #[track_caller]
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut map = HandleMap::default();
        map.extend(iter);
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Handle32;
    use alloc::format;
    use alloc::string::String;

    /// A map of `1, 2, 3` and its handles.
    fn map() -> (HandleMap<i32, Handle32>, [Handle32; 3]) {
        let mut m = HandleMap::with_key();
        let hs = [m.insert(1), m.insert(2), m.insert(3)];
        (m, hs)
    }

    /// What a `name` iterator with `pairs` still to come prints.
    fn expected(name: &str, pairs: &[(Handle32, i32)]) -> String {
        format!("{name}({pairs:?})")
    }

    #[test]
    fn debug_shows_the_pairs_still_to_come() {
        let (mut m, [a, b, c]) = map();

        let mut it = m.iter();
        assert_eq!(
            format!("{it:?}"),
            expected("Iter", &[(a, 1), (b, 2), (c, 3)])
        );
        it.next();
        it.next_back();
        assert_eq!(format!("{it:?}"), expected("Iter", &[(b, 2)]));
        // Formatting consumed nothing.
        assert_eq!(it.next(), Some((b, &2)));
        assert_eq!(format!("{it:?}"), "Iter([])");

        let mut it = m.iter_mut();
        it.next();
        assert_eq!(format!("{it:?}"), expected("IterMut", &[(b, 2), (c, 3)]));
        it.next_back();
        assert_eq!(format!("{it:?}"), expected("IterMut", &[(b, 2)]));
        assert_eq!(it.next(), Some((b, &mut 2)));

        let mut d = m.drain();
        d.next();
        assert_eq!(format!("{d:?}"), expected("Drain", &[(b, 2), (c, 3)]));
        assert_eq!(d.next_back(), Some((c, 3)));
        assert_eq!(format!("{d:?}"), expected("Drain", &[(b, 2)]));
        drop(d);

        let (m, [_, b, c]) = map();
        let mut it = m.into_iter();
        it.next();
        assert_eq!(format!("{it:?}"), expected("IntoIter", &[(b, 2), (c, 3)]));
        assert_eq!(it.next(), Some((b, 2)));
    }
}
