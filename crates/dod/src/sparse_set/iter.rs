//! Iterators over a set's live entries, in dense order, skipping tombstones.

use super::{SparseSet, TOMBSTONE};
use alloc::vec;
use core::iter::FusedIterator;
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
