//! Iterators over a [`Pool`]: every one walks the alive flags, so holes cost nothing but
//! their bits.

use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::mem;

use super::{Entry, Pool};
use crate::bits::{self, And, BitSet, Bits};
use crate::debug_list::DebugList;
use crate::key::Key;

/// Takes the first live item at or after `*from` out of `pool` and moves `*from` past it: the
/// step of [`Drain`] and [`IntoIter`].
#[inline]
fn take_next<T, K: Key>(pool: &mut Pool<T, K>, from: &mut u32) -> Option<(K, T)> {
    let i = pool.alive.next_one(*from)?;
    // The key type is user code: if it panics, `*from` still names slot `i`, so the drop of
    // a `Drain` takes that item out with the rest.
    let key = pool.slots[i as usize].tag().key(i);
    // Slot indices are below `K::MAX_SLOTS <= u32::MAX`, so this does not overflow.
    *from = i + 1;
    Some((key, pool.take(i as usize)?))
}

/// The `(key, &item)` pairs still to come of an iterator that will visit slot indices `bits`
/// of `slots`, whose first entry is slot `offset`: what the iterators' `Debug` prints, as
/// `std`'s iterators print their remaining items. It reads the items through the checked
/// [`Entry::get`], so it needs no `unsafe`.
#[inline]
fn remaining<T, K: Key>(
    bits: impl Iterator<Item = u32> + Clone,
    slots: &[Entry<T>],
    offset: usize,
) -> impl Iterator<Item = (K, &T)> + Clone {
    bits.filter_map(move |i| {
        let entry = slots.get((i as usize).checked_sub(offset)?)?;
        Some((entry.tag().key(i), entry.get()?))
    })
}

/// An iterator over `(key, &item)` in slot order; made by [`Pool::iter`].
///
/// ```
/// let mut pool = dod::Pool::new();
/// let h = pool.insert('a');
/// let mut it = pool.iter();
/// assert_eq!(it.len(), 1);
/// assert_eq!(it.next(), Some((h, &'a')));
/// assert_eq!(it.next(), None);
/// ```
pub struct Iter<'a, T, K: Key> {
    bits: bits::Iter<&'a BitSet>,
    slots: &'a [Entry<T>],
    left: usize,
    _key: PhantomData<fn() -> K>,
}

impl<'a, T, K: Key> Iter<'a, T, K> {
    pub(super) fn new(pool: &'a Pool<T, K>) -> Self {
        Iter {
            bits: pool.alive.iter(),
            slots: &pool.slots,
            left: pool.len(),
            _key: PhantomData,
        }
    }
}

impl<'a, T, K: Key> Iterator for Iter<'a, T, K> {
    type Item = (K, &'a T);

    #[inline]
    #[allow(unsafe_code)]
    fn next(&mut self) -> Option<(K, &'a T)> {
        let i = self.bits.next()? as usize;
        self.left -= 1;
        let entry = &self.slots[i];
        // SAFETY: `i` is in `alive`, so its slot is occupied (invariant 1).
        Some((entry.tag().key(i as u32), unsafe { entry.get_unchecked() }))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T, K: Key> ExactSizeIterator for Iter<'_, T, K> {}
impl<T, K: Key> FusedIterator for Iter<'_, T, K> {}

impl<T, K: Key> Clone for Iter<'_, T, K> {
    fn clone(&self) -> Self {
        Iter {
            bits: self.bits.clone(),
            slots: self.slots,
            left: self.left,
            _key: PhantomData,
        }
    }
}

impl<T: fmt::Debug, K: Key> fmt::Debug for Iter<'_, T, K> {
    /// The `(key, &item)` pairs still to come.
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// pool.insert('a');
    /// let b = pool.insert('b');
    /// let mut it = pool.iter();
    /// it.next();
    /// assert_eq!(format!("{it:?}"), format!("Iter([({b:?}, 'b')])"));
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Iter")
            .field(&DebugList(self.clone()))
            .finish()
    }
}

/// An iterator over the keys in slot order; made by [`Pool::keys`].
///
/// ```
/// let mut pool = dod::Pool::new();
/// let h = pool.insert(0u8);
/// assert_eq!(pool.keys().next(), Some(h));
/// ```
pub struct Keys<'a, T, K: Key> {
    inner: Iter<'a, T, K>,
}

impl<'a, T, K: Key> Keys<'a, T, K> {
    pub(super) fn new(pool: &'a Pool<T, K>) -> Self {
        Keys {
            inner: Iter::new(pool),
        }
    }
}

impl<T, K: Key> Iterator for Keys<'_, T, K> {
    type Item = K;

    #[inline]
    fn next(&mut self) -> Option<K> {
        let i = self.inner.bits.next()? as usize;
        self.inner.left -= 1;
        Some(self.inner.slots[i].tag().key(i as u32))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<T, K: Key> ExactSizeIterator for Keys<'_, T, K> {}
impl<T, K: Key> FusedIterator for Keys<'_, T, K> {}

impl<T, K: Key> fmt::Debug for Keys<'_, T, K> {
    /// The keys still to come.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rest = self.inner.clone().map(|(k, _)| k);
        f.debug_tuple("Keys").field(&DebugList(rest)).finish()
    }
}

/// An iterator over the items in slot order; made by [`Pool::values`].
///
/// ```
/// let mut pool = dod::Pool::new();
/// pool.insert(2);
/// pool.insert(3);
/// assert_eq!(pool.values().product::<i32>(), 6);
/// ```
pub struct Values<'a, T> {
    bits: bits::Iter<&'a BitSet>,
    slots: &'a [Entry<T>],
    left: usize,
}

impl<'a, T> Values<'a, T> {
    pub(super) fn new<K: Key>(pool: &'a Pool<T, K>) -> Self {
        Values {
            bits: pool.alive.iter(),
            slots: &pool.slots,
            left: pool.len(),
        }
    }
}

impl<'a, T> Iterator for Values<'a, T> {
    type Item = &'a T;

    #[inline]
    #[allow(unsafe_code)]
    fn next(&mut self) -> Option<&'a T> {
        let i = self.bits.next()? as usize;
        self.left -= 1;
        // SAFETY: `i` is in `alive`, so its slot is occupied (invariant 1).
        Some(unsafe { self.slots[i].get_unchecked() })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }

    #[inline]
    #[allow(unsafe_code)]
    fn fold<Acc, F: FnMut(Acc, &'a T) -> Acc>(self, init: Acc, mut f: F) -> Acc {
        let slots = self.slots;
        self.bits.fold(init, move |acc, i| {
            // SAFETY: `i` is in `alive`, so its slot is occupied (invariant 1).
            f(acc, unsafe { slots[i as usize].get_unchecked() })
        })
    }
}

impl<T> ExactSizeIterator for Values<'_, T> {}
impl<T> FusedIterator for Values<'_, T> {}

impl<T: fmt::Debug> fmt::Debug for Values<'_, T> {
    /// The items still to come.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rest = remaining::<T, crate::Handle>(self.bits.clone(), self.slots, 0).map(|(_, v)| v);
        f.debug_tuple("Values").field(&DebugList(rest)).finish()
    }
}

/// An iterator over `(key, &mut item)` in slot order; made by [`Pool::iter_mut`].
///
/// ```
/// let mut pool = dod::Pool::new();
/// let h = pool.insert(1);
/// for (k, v) in pool.iter_mut() {
///     assert_eq!(k, h);
///     *v = 2;
/// }
/// assert_eq!(pool[h], 2);
/// ```
pub struct IterMut<'a, T, K: Key> {
    bits: bits::Iter<&'a BitSet>,
    /// The slots from `offset` on; indices come in ascending order, so each step splits off
    /// the slot it yields and keeps the rest.
    rest: &'a mut [Entry<T>],
    offset: usize,
    left: usize,
    _key: PhantomData<fn() -> K>,
}

impl<'a, T, K: Key> IterMut<'a, T, K> {
    pub(super) fn new(pool: &'a mut Pool<T, K>) -> Self {
        let left = pool.len();
        IterMut {
            bits: pool.alive.iter(),
            rest: &mut pool.slots,
            offset: 0,
            left,
            _key: PhantomData,
        }
    }

    #[inline]
    fn next_slot(&mut self) -> Option<(usize, &'a mut Entry<T>)> {
        let i = self.bits.next()? as usize;
        self.left -= 1;
        let rest = mem::take(&mut self.rest);
        let (slot, tail) = rest[i - self.offset..].split_first_mut()?;
        self.rest = tail;
        self.offset = i + 1;
        Some((i, slot))
    }
}

impl<'a, T, K: Key> Iterator for IterMut<'a, T, K> {
    type Item = (K, &'a mut T);

    #[inline]
    #[allow(unsafe_code)]
    fn next(&mut self) -> Option<(K, &'a mut T)> {
        let (i, slot) = self.next_slot()?;
        let key = slot.tag().key(i as u32);
        // SAFETY: `i` is in `alive`, so its slot is occupied (invariant 1).
        Some((key, unsafe { slot.get_unchecked_mut() }))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T, K: Key> ExactSizeIterator for IterMut<'_, T, K> {}
impl<T, K: Key> FusedIterator for IterMut<'_, T, K> {}

impl<T: fmt::Debug, K: Key> fmt::Debug for IterMut<'_, T, K> {
    /// The `(key, &item)` pairs still to come, read through a shared view as
    /// `slice::IterMut`'s `Debug` does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rest = remaining::<T, K>(self.bits.clone(), self.rest, self.offset);
        f.debug_tuple("IterMut").field(&DebugList(rest)).finish()
    }
}

/// An iterator over `(key, &mut item)` for the items whose slot index is also in a mask, in
/// slot order; made by [`Pool::iter_mut_in`].
pub struct IterMutIn<'a, T, K: Key, M: Bits> {
    bits: bits::Iter<And<&'a BitSet, M>>,
    /// The slots from `offset` on, as in [`IterMut`].
    rest: &'a mut [Entry<T>],
    offset: usize,
    _key: PhantomData<fn() -> K>,
}

impl<'a, T, K: Key, M: Bits> IterMutIn<'a, T, K, M> {
    pub(super) fn new(pool: &'a mut Pool<T, K>, mask: M) -> Self {
        IterMutIn {
            bits: pool.alive.and(mask).iter(),
            rest: &mut pool.slots,
            offset: 0,
            _key: PhantomData,
        }
    }
}

impl<'a, T, K: Key, M: Bits> Iterator for IterMutIn<'a, T, K, M> {
    type Item = (K, &'a mut T);

    #[inline]
    #[allow(unsafe_code)]
    fn next(&mut self) -> Option<(K, &'a mut T)> {
        let i = self.bits.next()? as usize;
        let rest = mem::take(&mut self.rest);
        let (slot, tail) = rest[i - self.offset..].split_first_mut()?;
        self.rest = tail;
        self.offset = i + 1;
        let key = slot.tag().key(i as u32);
        // SAFETY: `i` is in `alive` (the expression is `alive AND mask`), so its slot is
        // occupied (invariant 1).
        Some((key, unsafe { slot.get_unchecked_mut() }))
    }
}

impl<T, K: Key, M: Bits> FusedIterator for IterMutIn<'_, T, K, M> {}

impl<T: fmt::Debug, K: Key, M: Bits + Clone> fmt::Debug for IterMutIn<'_, T, K, M> {
    /// The `(key, &item)` pairs still to come, read through a shared view as
    /// `slice::IterMut`'s `Debug` does. Listing them walks a copy of the mask, hence
    /// `M: Clone` (every mask of this crate is: `&BitSet` and the expressions over it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rest = remaining::<T, K>(self.bits.clone(), self.rest, self.offset);
        f.debug_tuple("IterMutIn").field(&DebugList(rest)).finish()
    }
}

/// An iterator over the items, mutably, in slot order; made by [`Pool::values_mut`].
///
/// ```
/// let mut pool = dod::Pool::new();
/// pool.insert(1);
/// for v in pool.values_mut() {
///     *v += 1;
/// }
/// assert_eq!(pool.values().next(), Some(&2));
/// ```
pub struct ValuesMut<'a, T> {
    inner: IterMut<'a, T, crate::Handle>,
}

impl<'a, T> ValuesMut<'a, T> {
    pub(super) fn new<K: Key>(pool: &'a mut Pool<T, K>) -> Self {
        let left = pool.len();
        ValuesMut {
            inner: IterMut {
                bits: pool.alive.iter(),
                rest: &mut pool.slots,
                offset: 0,
                left,
                _key: PhantomData,
            },
        }
    }
}

impl<'a, T> Iterator for ValuesMut<'a, T> {
    type Item = &'a mut T;

    #[inline]
    #[allow(unsafe_code)]
    fn next(&mut self) -> Option<&'a mut T> {
        let (_, slot) = self.inner.next_slot()?;
        // SAFETY: the slot's index is in `alive`, so it is occupied (invariant 1).
        Some(unsafe { slot.get_unchecked_mut() })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<T> ExactSizeIterator for ValuesMut<'_, T> {}
impl<T> FusedIterator for ValuesMut<'_, T> {}

impl<T: fmt::Debug> fmt::Debug for ValuesMut<'_, T> {
    /// The items still to come, read through a shared view as `slice::IterMut`'s `Debug`
    /// does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &self.inner;
        let rest = remaining::<T, crate::Handle>(inner.bits.clone(), inner.rest, inner.offset)
            .map(|(_, v)| v);
        f.debug_tuple("ValuesMut").field(&DebugList(rest)).finish()
    }
}

/// Removes and yields every `(key, item)` in slot order; made by [`Pool::drain`]. The items it
/// does not yield are dropped with it. If it is leaked instead, they stay in the pool.
///
/// ```
/// let mut pool = dod::Pool::new();
/// pool.insert(1);
/// pool.insert(2);
/// let mut d = pool.drain();
/// assert_eq!(d.next().map(|(_, v)| v), Some(1));
/// drop(d);
/// assert!(pool.is_empty());
/// ```
pub struct Drain<'a, T, K: Key> {
    pool: &'a mut Pool<T, K>,
    from: u32,
}

impl<'a, T, K: Key> Drain<'a, T, K> {
    pub(super) fn new(pool: &'a mut Pool<T, K>) -> Self {
        Drain { pool, from: 0 }
    }
}

impl<T, K: Key> Iterator for Drain<'_, T, K> {
    type Item = (K, T);

    #[inline]
    fn next(&mut self) -> Option<(K, T)> {
        take_next(&mut *self.pool, &mut self.from)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.pool.len(), Some(self.pool.len()))
    }
}

impl<T, K: Key> ExactSizeIterator for Drain<'_, T, K> {}
impl<T, K: Key> FusedIterator for Drain<'_, T, K> {}

impl<T: fmt::Debug, K: Key> fmt::Debug for Drain<'_, T, K> {
    /// The `(key, &item)` pairs still to come: every item yielded has left the pool, so these
    /// are the items it still holds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Drain")
            .field(&DebugList(self.pool.iter()))
            .finish()
    }
}

impl<T, K: Key> Drop for Drain<'_, T, K> {
    /// Drops the items not yet yielded; if one's `Drop` panics, the others are still dropped
    /// and the pool is left empty.
    fn drop(&mut self) {
        self.pool.drop_from(self.from);
    }
}

/// The owning iterator of a pool: `(key, item)` in slot order; made by `into_iter`.
///
/// ```
/// let mut pool = dod::Pool::new();
/// let h = pool.insert(String::from("x"));
/// let all: Vec<_> = pool.into_iter().collect();
/// assert_eq!(all, [(h, String::from("x"))]);
/// ```
pub struct IntoIter<T, K: Key> {
    pool: Pool<T, K>,
    from: u32,
}

impl<T, K: Key> Iterator for IntoIter<T, K> {
    type Item = (K, T);

    #[inline]
    fn next(&mut self) -> Option<(K, T)> {
        take_next(&mut self.pool, &mut self.from)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.pool.len(), Some(self.pool.len()))
    }
}

impl<T, K: Key> ExactSizeIterator for IntoIter<T, K> {}
impl<T, K: Key> FusedIterator for IntoIter<T, K> {}

impl<T: fmt::Debug, K: Key> fmt::Debug for IntoIter<T, K> {
    /// The `(key, &item)` pairs still to come: every item yielded has left the pool, so these
    /// are the items it still holds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("IntoIter")
            .field(&DebugList(self.pool.iter()))
            .finish()
    }
}

impl<T, K: Key> IntoIterator for Pool<T, K> {
    type Item = (K, T);
    type IntoIter = IntoIter<T, K>;

    fn into_iter(self) -> IntoIter<T, K> {
        IntoIter {
            pool: self,
            from: 0,
        }
    }
}

impl<'a, T, K: Key> IntoIterator for &'a Pool<T, K> {
    type Item = (K, &'a T);
    type IntoIter = Iter<'a, T, K>;

    fn into_iter(self) -> Iter<'a, T, K> {
        self.iter()
    }
}

impl<'a, T, K: Key> IntoIterator for &'a mut Pool<T, K> {
    type Item = (K, &'a mut T);
    type IntoIter = IterMut<'a, T, K>;

    fn into_iter(self) -> IterMut<'a, T, K> {
        self.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Handle32;
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;

    /// A pool of `0, 10, .., 50` with the items 10 and 40 removed, so the iterators skip
    /// holes, and the keys of the four left.
    fn pool() -> (Pool<i32, Handle32>, [Handle32; 4]) {
        let mut p = Pool::with_key();
        let hs: Vec<Handle32> = (0..6).map(|i| p.insert(i * 10)).collect();
        p.remove(hs[1]);
        p.remove(hs[4]);
        (p, [hs[0], hs[2], hs[3], hs[5]])
    }

    /// What a `name` iterator with `items` still to come prints.
    fn expected<I: fmt::Debug>(name: &str, items: &[I]) -> String {
        format!("{name}({items:?})")
    }

    #[test]
    fn debug_of_shared_iterators_shows_the_items_still_to_come() {
        let (p, [a, b, c, d]) = pool();

        let mut it = p.iter();
        assert_eq!(
            format!("{it:?}"),
            expected("Iter", &[(a, 0), (b, 20), (c, 30), (d, 50)])
        );
        it.next();
        assert_eq!(
            format!("{it:?}"),
            expected("Iter", &[(b, 20), (c, 30), (d, 50)])
        );
        // Formatting consumed nothing.
        assert_eq!(it.next(), Some((b, &20)));

        let mut it = p.keys();
        it.next();
        it.next();
        assert_eq!(format!("{it:?}"), expected("Keys", &[c, d]));
        assert_eq!(it.next(), Some(c));

        let mut it = p.values();
        it.next();
        assert_eq!(format!("{it:?}"), "Values([20, 30, 50])");
        it.nth(2);
        assert_eq!(format!("{it:?}"), "Values([])");
    }

    #[test]
    fn debug_of_mutable_iterators_shows_the_items_still_to_come() {
        let (mut p, [a, b, c, d]) = pool();

        let mut it = p.iter_mut();
        assert_eq!(
            format!("{it:?}"),
            expected("IterMut", &[(a, 0), (b, 20), (c, 30), (d, 50)])
        );
        it.next();
        // Slot 2 is now the second entry of the rest: the offset is applied.
        assert_eq!(
            format!("{it:?}"),
            expected("IterMut", &[(b, 20), (c, 30), (d, 50)])
        );
        it.next();
        it.next();
        assert_eq!(format!("{it:?}"), expected("IterMut", &[(d, 50)]));
        assert_eq!(it.next(), Some((d, &mut 50)));
        assert_eq!(format!("{it:?}"), "IterMut([])");

        let mut it = p.values_mut();
        it.next();
        assert_eq!(format!("{it:?}"), "ValuesMut([20, 30, 50])");
        *it.next().unwrap() += 1;
        assert_eq!(format!("{it:?}"), "ValuesMut([30, 50])");

        let mask: BitSet = [0, 1, 3, 5].into_iter().collect();
        let mut it = p.iter_mut_in(&mask);
        assert_eq!(
            format!("{it:?}"),
            expected("IterMutIn", &[(a, 0), (c, 30), (d, 50)])
        );
        it.next();
        assert_eq!(
            format!("{it:?}"),
            expected("IterMutIn", &[(c, 30), (d, 50)])
        );
        assert_eq!(it.next(), Some((c, &mut 30)));
    }

    #[test]
    fn debug_of_draining_iterators_shows_the_items_still_to_come() {
        let (mut p, [_, b, c, d]) = pool();
        let mut it = p.drain();
        it.next();
        assert_eq!(
            format!("{it:?}"),
            expected("Drain", &[(b, 20), (c, 30), (d, 50)])
        );
        it.next();
        assert_eq!(format!("{it:?}"), expected("Drain", &[(c, 30), (d, 50)]));
        assert_eq!(it.next(), Some((c, 30)));
        drop(it);
        assert!(p.is_empty());

        let (p, [_, b, c, d]) = pool();
        let mut it = p.into_iter();
        it.next();
        assert_eq!(
            format!("{it:?}"),
            expected("IntoIter", &[(b, 20), (c, 30), (d, 50)])
        );
        assert_eq!(it.next(), Some((b, 20)));
        assert_eq!(format!("{it:?}"), expected("IntoIter", &[(c, 30), (d, 50)]));
    }
}
