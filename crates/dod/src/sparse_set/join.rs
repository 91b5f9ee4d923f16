//! Joins: the entities present in two or three sets, driven from the smallest and probing the
//! others, so the cost is that of the smallest set.
//!
//! Two entries of one index pair only if their tags agree, or if either has none (inserted by
//! a plain `u32`): the driving set's tag is read (one more sparse read) only when the probed
//! entry has a tag.

use super::{decode, slot_tag, Pages, Slot, SparseSet, TOMBSTONE};
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ptr::NonNull;
use core::slice;

impl<A, const PA: usize> SparseSet<A, PA> {
    /// The entities present in both `self` and `other`, as `(entity, &a, &b)`.
    ///
    /// The join walks the dense arrays of the smaller set in its order and probes the other
    /// one; the items come in the smaller set's dense order (`self`'s when the lengths are
    /// equal). Entries are matched by index, and pair only if their tags agree or either was
    /// inserted by a plain `u32`: a dead entity's leftover in one set never meets a new
    /// entity's entry in the other.
    ///
    /// O(min(len, other.len())), plus the tombstones of [`defer_remove`](Self::defer_remove)
    /// not yet compacted in the smaller set's dense arrays, which the walk skips.
    ///
    /// ```
    /// use dod::{Handle, SparseSet};
    /// let pos: SparseSet<f32> = [(1u32, 0.5), (2, 1.5), (3, 2.5)].into_iter().collect();
    /// let vel: SparseSet<f32> = [(3u32, -1.0), (1, 1.0)].into_iter().collect();
    /// let v: Vec<_> = pos.join(&vel).collect();
    /// assert_eq!(v, [(3, &2.5, &-1.0), (1, &0.5, &1.0)]);
    ///
    /// let key = |i, g| Handle::new(i, g, 0).unwrap();
    /// let hp: SparseSet<u8> = [(key(1, 1), 10), (key(2, 1), 20)].into_iter().collect();
    /// let names: SparseSet<&str> = [(key(1, 1), "a"), (key(2, 2), "b")].into_iter().collect();
    /// // entity 2 of generation 1 died; its hit points do not meet generation 2's name
    /// assert_eq!(hp.join(&names).collect::<Vec<_>>(), [(1, &10, &"a")]);
    /// ```
    pub fn join<'a, B, const PB: usize>(
        &'a self,
        other: &'a SparseSet<B, PB>,
    ) -> Join<'a, A, B, PA, PB> {
        Join {
            a: self,
            b: other,
            drive_a: self.len() <= other.len(),
            i: 0,
        }
    }

    /// The entities present in all three sets, as `(entity, &a, &b, &c)`, driven from the
    /// smallest set (in its dense order; the first of the smallest when lengths tie). The
    /// three entries of an index meet only if all their tags agree, those inserted by a plain
    /// `u32` aside (see [`join`](Self::join)).
    ///
    /// O(min of the three lengths), plus the smallest set's tombstones not yet compacted.
    ///
    /// ```
    /// use dod::SparseSet;
    /// let a: SparseSet<u8> = (0..10u32).map(|e| (e, e as u8)).collect();
    /// let b: SparseSet<u8> = (0..10u32).filter(|e| e % 2 == 0).map(|e| (e, 0)).collect();
    /// let c: SparseSet<u8> = [(4u32, 1), (5, 1), (8, 1)].into_iter().collect();
    /// let es: Vec<u32> = a.join3(&b, &c).map(|(e, ..)| e).collect();
    /// assert_eq!(es, [4, 8]);
    /// ```
    pub fn join3<'a, B, C, const PB: usize, const PC: usize>(
        &'a self,
        b: &'a SparseSet<B, PB>,
        c: &'a SparseSet<C, PC>,
    ) -> Join3<'a, A, B, C, PA, PB, PC> {
        let (la, lb, lc) = (self.len(), b.len(), c.len());
        let driver = if la <= lb && la <= lc {
            0
        } else if lb <= lc {
            1
        } else {
            2
        };
        Join3 {
            a: self,
            b,
            c,
            driver,
            i: 0,
        }
    }

    /// The entities present in both sets, as `(entity, &mut a, &b)`: the join that lets one
    /// system write its own data while reading another's (copying animated bones to their
    /// scene-graph nodes, say).
    ///
    /// Driven from the smaller set like [`join`](Self::join), in that set's dense order, and
    /// pairing entries by the same rule of tags.
    ///
    /// O(min(len, other.len())), plus the tombstones of [`defer_remove`](Self::defer_remove)
    /// not yet compacted in the smaller set's dense arrays, which the walk skips.
    ///
    /// ```
    /// use dod::SparseSet;
    /// let mut nodes: SparseSet<[f32; 3]> = (0..100u32).map(|e| (e, [0.0; 3])).collect();
    /// let bones: SparseSet<[f32; 3]> = [(7u32, [1.0, 2.0, 3.0])].into_iter().collect();
    /// for (_, node, bone) in nodes.join_mut(&bones) {
    ///     *node = *bone;
    /// }
    /// assert_eq!(nodes[7u32], [1.0, 2.0, 3.0]);
    /// ```
    pub fn join_mut<'a, B, const PB: usize>(
        &'a mut self,
        other: &'a SparseSet<B, PB>,
    ) -> JoinMut<'a, A, B, PA, PB> {
        let inner = if self.len() <= other.len() {
            JoinMutInner::DriveA {
                entities: self.entities.iter(),
                values: self.values.iter_mut(),
                a_pages: &self.pages,
                b: other,
            }
        } else {
            let values: &'a mut [A] = &mut self.values;
            JoinMutInner::DriveB {
                entities: other.entities.iter(),
                b_values: other.values.iter(),
                b_pages: &other.pages,
                a_pages: &self.pages,
                a_len: values.len(),
                a_values: NonNull::from(values).cast::<A>(),
                _marker: PhantomData,
            }
        };
        JoinMut { inner }
    }
}

/// Iterator over the entities of two sets, from [`SparseSet::join`].
#[derive(Debug)]
pub struct Join<'a, A, B, const PA: usize, const PB: usize> {
    a: &'a SparseSet<A, PA>,
    b: &'a SparseSet<B, PB>,
    drive_a: bool,
    i: usize,
}

impl<A, B, const PA: usize, const PB: usize> Clone for Join<'_, A, B, PA, PB> {
    fn clone(&self) -> Self {
        Join { ..*self }
    }
}

impl<'a, A, B, const PA: usize, const PB: usize> Iterator for Join<'a, A, B, PA, PB> {
    type Item = (u32, &'a A, &'a B);

    fn next(&mut self) -> Option<Self::Item> {
        let (a, b) = (self.a, self.b);
        if self.drive_a {
            while let Some(&e) = a.entities.get(self.i) {
                let pa = self.i;
                self.i += 1;
                if e == TOMBSTONE {
                    continue;
                }
                let sb = b.pages.get(e);
                if let Some(pb) = decode(sb) {
                    if pairs(slot_tag(sb), || a.pages.get(e)) {
                        return Some((e, &a.values[pa], &b.values[pb]));
                    }
                }
            }
        } else {
            while let Some(&e) = b.entities.get(self.i) {
                let pb = self.i;
                self.i += 1;
                if e == TOMBSTONE {
                    continue;
                }
                let sa = a.pages.get(e);
                if let Some(pa) = decode(sa) {
                    if pairs(slot_tag(sa), || b.pages.get(e)) {
                        return Some((e, &a.values[pa], &b.values[pb]));
                    }
                }
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let driver = if self.drive_a {
            self.a.entities.len()
        } else {
            self.b.entities.len()
        };
        (0, Some(driver.saturating_sub(self.i)))
    }
}

impl<A, B, const PA: usize, const PB: usize> FusedIterator for Join<'_, A, B, PA, PB> {}

/// Iterator over the entities of three sets, from [`SparseSet::join3`].
#[derive(Debug)]
pub struct Join3<'a, A, B, C, const PA: usize, const PB: usize, const PC: usize> {
    a: &'a SparseSet<A, PA>,
    b: &'a SparseSet<B, PB>,
    c: &'a SparseSet<C, PC>,
    driver: u8,
    i: usize,
}

impl<A, B, C, const PA: usize, const PB: usize, const PC: usize> Clone
    for Join3<'_, A, B, C, PA, PB, PC>
{
    fn clone(&self) -> Self {
        Join3 { ..*self }
    }
}

impl<'a, A, B, C, const PA: usize, const PB: usize, const PC: usize> Iterator
    for Join3<'a, A, B, C, PA, PB, PC>
{
    type Item = (u32, &'a A, &'a B, &'a C);

    fn next(&mut self) -> Option<Self::Item> {
        let (a, b, c) = (self.a, self.b, self.c);
        let driver = match self.driver {
            0 => &a.entities,
            1 => &b.entities,
            _ => &c.entities,
        };
        while let Some(&e) = driver.get(self.i) {
            let i = self.i;
            self.i += 1;
            if e == TOMBSTONE {
                continue;
            }
            // The probed entries' positions, and the one tag every entry with a tag must have.
            let mut meet = Meet { tag: 0 };
            let (pa, pb, pc) = match self.driver {
                0 => (
                    Some(i),
                    meet.probe(b.pages.get(e)),
                    meet.probe(c.pages.get(e)),
                ),
                1 => (
                    meet.probe(a.pages.get(e)),
                    Some(i),
                    meet.probe(c.pages.get(e)),
                ),
                _ => (
                    meet.probe(a.pages.get(e)),
                    meet.probe(b.pages.get(e)),
                    Some(i),
                ),
            };
            let (Some(pa), Some(pb), Some(pc)) = (pa, pb, pc) else {
                continue;
            };
            if meet.tag != 0 {
                let driver_slot = match self.driver {
                    0 => a.pages.get(e),
                    1 => b.pages.get(e),
                    _ => c.pages.get(e),
                };
                if meet.probe(driver_slot).is_none() {
                    continue;
                }
            }
            return Some((e, &a.values[pa], &b.values[pb], &c.values[pc]));
        }
        None
    }
}

impl<A, B, C, const PA: usize, const PB: usize, const PC: usize> FusedIterator
    for Join3<'_, A, B, C, PA, PB, PC>
{
}

/// Whether an entry with tag `probed` pairs with the driving set's entry of the same index,
/// whose slot `driver` reads only when needed: tags agree, or either is 0 (no tag).
#[inline]
fn pairs(probed: u32, driver: impl FnOnce() -> Slot) -> bool {
    probed == 0 || {
        let t = slot_tag(driver());
        t == 0 || t == probed
    }
}

/// The entries of one index in a three-way join: every tag but 0 must be the same.
struct Meet {
    /// The tag seen so far (0: none yet).
    tag: u32,
}

impl Meet {
    /// The position in `slot`, if it is occupied and its tag agrees with those seen so far.
    #[inline]
    fn probe(&mut self, slot: Slot) -> Option<usize> {
        let pos = decode(slot)?;
        match slot_tag(slot) {
            0 => {}
            t if self.tag == 0 => self.tag = t,
            t if t != self.tag => return None,
            _ => {}
        }
        Some(pos)
    }
}

/// Iterator over the entities of two sets with the first one's values mutable, from
/// [`SparseSet::join_mut`].
pub struct JoinMut<'a, A, B, const PA: usize, const PB: usize> {
    inner: JoinMutInner<'a, A, B, PA, PB>,
}

enum JoinMutInner<'a, A, B, const PA: usize, const PB: usize> {
    /// `a` is the smaller set: walk its dense arrays, probe `b`.
    DriveA {
        entities: slice::Iter<'a, u32>,
        values: slice::IterMut<'a, A>,
        a_pages: &'a Pages<PA>,
        b: &'a SparseSet<B, PB>,
    },
    /// `b` is the smaller set: walk its dense arrays, probe `a` and hand out its values by
    /// position.
    DriveB {
        entities: slice::Iter<'a, u32>,
        b_values: slice::Iter<'a, B>,
        b_pages: &'a Pages<PB>,
        a_pages: &'a Pages<PA>,
        /// `a`'s values, borrowed mutably for `'a` (held as a pointer so that items of
        /// different positions can be handed out while the iterator lives).
        a_values: NonNull<A>,
        a_len: usize,
        _marker: PhantomData<&'a mut [A]>,
    },
}

impl<A, B, const PA: usize, const PB: usize> core::fmt::Debug for JoinMut<'_, A, B, PA, PB> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("JoinMut { .. }")
    }
}

impl<'a, A, B, const PA: usize, const PB: usize> Iterator for JoinMut<'a, A, B, PA, PB> {
    type Item = (u32, &'a mut A, &'a B);

    #[allow(unsafe_code)]
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            JoinMutInner::DriveA {
                entities,
                values,
                a_pages,
                b,
            } => loop {
                let e = *entities.next()?;
                let va = values.next()?;
                if e == TOMBSTONE {
                    continue;
                }
                let sb = b.pages.get(e);
                if let Some(pb) = decode(sb) {
                    if pairs(slot_tag(sb), || a_pages.get(e)) {
                        return Some((e, va, &b.values[pb]));
                    }
                }
            },
            JoinMutInner::DriveB {
                entities,
                b_values,
                b_pages,
                a_pages,
                a_values,
                a_len,
                ..
            } => loop {
                let e = *entities.next()?;
                let vb = b_values.next()?;
                if e == TOMBSTONE {
                    continue;
                }
                let sa = a_pages.get(e);
                let Some(pa) = decode(sa) else {
                    continue;
                };
                if !pairs(slot_tag(sa), || b_pages.get(e)) {
                    continue;
                }
                assert!(pa < *a_len, "SparseSet invariant: position in bounds");
                // SAFETY: `a_values` points to `a_len` values of `a`, which this iterator
                // borrows mutably for `'a` (nothing else can reach them), and `pa < a_len`.
                // Each position is handed out at most once: `b`'s live entities are distinct
                // indices (one dense position per sparse slot) and `a`'s sparse array maps
                // distinct indices to distinct positions, so no two items alias.
                let va = unsafe { &mut *a_values.as_ptr().add(pa) };
                return Some((e, va, vb));
            },
        }
    }
}

impl<A, B, const PA: usize, const PB: usize> FusedIterator for JoinMut<'_, A, B, PA, PB> {}
