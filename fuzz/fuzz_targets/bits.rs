//! BitSet and its expressions against a `BTreeSet<u32>`, checked after every step, plus
//! arbitrary bytes fed to the serde reader.
//!
//! The steps are this target's own: a bit set has range operations, a bound on its indices
//! and operators that the containers' shared `Op` has no words for.
#![no_main]

use std::collections::BTreeSet;
use std::ops::{Bound, RangeBounds};

use arbitrary::Arbitrary;
use dod::bits::GrowError;
use dod::{BitSet, Bits, InsertErrorKind};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Step {
    Insert(u16),
    /// A raw index, far past the bound as often as not.
    TryInsert(u32),
    Remove(u16),
    Toggle(u16),
    Claim,
    Grow(u16),
    /// A raw universe: errors past the bound, without allocating.
    TryGrow(u64),
    Truncate(u16),
    Clear,
    ShrinkToFit,
    /// A fresh set, bounded or not: allocates nothing.
    New(Option<u16>),
    SetMaxIndex(Option<u16>),
    InsertRange(u16, u16, u8),
    RemoveRange(u16, u16, u8),
    OtherInsert(Vec<u16>),
    OtherRemove(Vec<u16>),
    /// `extend` with these indices (those below the bound), cycled to one per word of the
    /// capacity (the deferred-summary path) or not.
    Extend(Vec<u16>, bool),
    /// The in-place combinations, through the assign operator or the method.
    And(bool),
    Or(bool),
    AndNot(bool),
    Xor(bool),
    /// Queries at a raw index.
    Probe(u32, u16, u8),
    RoundTrip,
}

/// Keeps indices small enough to check against the model quickly, while crossing word and
/// summary boundaries.
fn idx(v: u16) -> u32 {
    u32::from(v) % 9000
}

/// A range in one of the forms `RangeBounds<u32>` takes.
fn span(a: u32, b: u32, kind: u8) -> (Bound<u32>, Bound<u32>) {
    match kind % 7 {
        0 => (Bound::Included(a), Bound::Excluded(b)),
        1 => (Bound::Included(a), Bound::Included(b)),
        2 => (Bound::Excluded(a), Bound::Included(b)),
        3 => (Bound::Included(a), Bound::Unbounded),
        4 => (Bound::Unbounded, Bound::Excluded(b)),
        5 => (Bound::Unbounded, Bound::Unbounded),
        _ => (Bound::Excluded(a), Bound::Excluded(b)),
    }
}

/// `[start, end)` of `r`, with an unbounded end at `universe`.
fn resolve(r: &impl RangeBounds<u32>, universe: usize) -> (usize, usize) {
    let start = match r.start_bound() {
        Bound::Included(&s) => s as usize,
        Bound::Excluded(&s) => s as usize + 1,
        Bound::Unbounded => 0,
    };
    let end = match r.end_bound() {
        Bound::Included(&e) => e as usize + 1,
        Bound::Excluded(&e) => e as usize,
        Bound::Unbounded => universe,
    };
    (start, end)
}

/// The model's indices in `[start, end)`.
fn model_range(m: &BTreeSet<u32>, (start, end): (usize, usize)) -> Vec<u32> {
    if start >= end || start > u32::MAX as usize {
        return Vec::new();
    }
    m.range(start as u32..)
        .copied()
        .take_while(|&i| (i as usize) < end)
        .collect()
}

struct Model {
    m: BTreeSet<u32>,
    universe: usize,
    max: u32,
}

impl Model {
    fn bound(&self) -> usize {
        self.max as usize + 1
    }
}

fn check(s: &BitSet, model: &Model, other: &BitSet, mo: &BTreeSet<u32>) {
    let m = &model.m;
    s.assert_invariants();
    assert_eq!(s.universe(), model.universe);
    assert_eq!(s.max_index(), model.max);
    assert_eq!(s.count(), m.len());
    assert!(s.iter().eq(m.iter().copied()));
    let u = s.universe();
    assert_eq!(s.first_zero(), (0..u as u32).find(|i| !m.contains(i)));
    assert_eq!(s.first(), m.first().copied());
    assert_eq!(s.last(), m.last().copied());
    assert!(s.and(other).iter().eq(m.intersection(mo).copied()));
    assert!(s.or(other).iter().eq(m.union(mo).copied()));
    assert!(s.and_not(other).iter().eq(m.difference(mo).copied()));
    assert!(s.xor(other).iter().eq(m.symmetric_difference(mo).copied()));
    // The internal forms gather indices apart from `next`.
    let folded = |it: &mut dyn FnMut(&mut Vec<u32>)| {
        let mut v = Vec::new();
        it(&mut v);
        v
    };
    let want: Vec<u32> = m.iter().copied().collect();
    assert_eq!(
        s.iter().fold(Vec::new(), |mut v, i| {
            v.push(i);
            v
        }),
        want
    );
    assert_eq!(folded(&mut |v| s.for_each(|i| v.push(i))), want);
    let want: Vec<u32> = m.intersection(mo).copied().collect();
    assert_eq!(folded(&mut |v| s.and(other).for_each(|i| v.push(i))), want);
    let want: Vec<u32> = m.symmetric_difference(mo).copied().collect();
    assert_eq!(
        s.xor(other).iter().fold(Vec::new(), |mut v, i| {
            v.push(i);
            v
        }),
        want
    );
    let want: Vec<u32> = (0..u as u32).filter(|i| !m.contains(i)).collect();
    assert_eq!(
        s.not().iter().fold(Vec::new(), |mut v, i| {
            v.push(i);
            v
        }),
        want
    );
    assert_eq!(s.not().count(), u - m.len());
    assert_eq!(s.and(other).is_empty(), m.is_disjoint(mo));
    // The operators are the methods.
    assert!((s & other).blocks().eq(s.and(other).blocks()));
    assert!((s | other).blocks().eq(s.or(other).blocks()));
    assert!((s - other).blocks().eq(s.and_not(other).blocks()));
    assert!((s ^ other).blocks().eq(s.xor(other).blocks()));
    assert!((!s).blocks().eq(s.not().blocks()));
    assert!((!(s | other)).blocks().eq(s.or(other).not().blocks()));
    // A complement inside an expression holds every index its set does not, whatever the
    // universes; read whole, the expression stops at the larger universe.
    assert!((s & !other).iter().eq(m.difference(mo).copied()));
    assert!((!s & other).iter().eq(mo.difference(m).copied()));
    let big = u.max(other.universe());
    assert_eq!((s | !other).count(), big - mo.difference(m).count());
    assert_eq!((!s & !other).count(), big - m.union(mo).count());
    assert!((!s ^ !other).iter().eq(m.symmetric_difference(mo).copied()));
    // Subset, superset, disjoint, on sets and on expressions.
    assert_eq!(s.is_subset(other), m.is_subset(mo));
    assert_eq!(s.is_superset(other), m.is_superset(mo));
    assert_eq!(s.is_disjoint(other), m.is_disjoint(mo));
    assert_eq!(other.is_subset(s), mo.is_subset(m));
    assert!((s & other).is_subset(s) && (s | other).is_superset(other));
    assert!((s - other).is_disjoint(other));
    assert_eq!((s ^ other).is_subset(s - other), mo.is_subset(m));
    assert_eq!(s.count_range(..), m.len());
}

fuzz_target!(|input: (Vec<Step>, Vec<u8>)| {
    let (steps, bytes) = input;
    // Untrusted bytes never panic the reader and never give a broken set.
    if let Ok(s) = serde_json::from_slice::<BitSet>(&bytes) {
        s.assert_invariants();
    }

    let mut s = BitSet::new();
    let mut model = Model {
        m: BTreeSet::new(),
        universe: 0,
        max: u32::MAX,
    };
    let mut other = BitSet::new();
    let mut mo = BTreeSet::new();
    for step in steps.into_iter().take(64) {
        let memory = s.memory_usage();
        let bound = model.bound();
        match step {
            Step::Insert(v) => {
                let i = idx(v);
                if (i as usize) < bound {
                    assert_eq!(s.insert(i), model.m.insert(i));
                    model.universe = model.universe.max(i as usize + 1);
                } else {
                    assert!(s.try_insert(i).is_err());
                }
            }
            Step::TryInsert(i) => {
                if i > model.max {
                    let err = s.try_insert(i).unwrap_err();
                    assert_eq!(
                        err.kind(),
                        InsertErrorKind::IndexAboveMax {
                            index: i,
                            max: model.max
                        }
                    );
                    assert_eq!(err.into_inner(), i);
                    assert_eq!(s.memory_usage(), memory);
                } else if (i as usize) < model.universe.max(20_000) {
                    assert_eq!(s.try_insert(i), Ok(model.m.insert(i)));
                    model.universe = model.universe.max(i as usize + 1);
                }
            }
            Step::Remove(v) => assert_eq!(s.remove(idx(v)), model.m.remove(&idx(v))),
            Step::Toggle(v) => {
                let i = idx(v);
                if (i as usize) < bound {
                    let want = if model.m.contains(&i) {
                        model.m.remove(&i);
                        false
                    } else {
                        model.m.insert(i);
                        true
                    };
                    assert_eq!(s.toggle(i), want);
                    model.universe = model.universe.max(i as usize + 1);
                }
            }
            Step::Claim => {
                let want = (0..=model.universe as u32)
                    .find(|i| !model.m.contains(i))
                    .unwrap();
                if (want as usize) < bound {
                    assert_eq!(s.claim(), want);
                    model.m.insert(want);
                    model.universe = model.universe.max(want as usize + 1);
                } else {
                    assert_eq!(s.first_zero(), None);
                }
            }
            Step::Grow(k) => {
                let n = usize::from(k) % 10_000;
                if n <= bound {
                    s.grow(n);
                    model.universe = model.universe.max(n);
                }
            }
            Step::TryGrow(n) => {
                let n = n as usize;
                if n > bound {
                    assert_eq!(
                        s.try_grow(n),
                        Err(GrowError::AboveMax {
                            universe: n,
                            max_index: model.max
                        })
                    );
                    assert_eq!(s.memory_usage(), memory);
                } else if n <= model.universe.max(20_000) {
                    assert_eq!(s.try_grow(n), Ok(()));
                    model.universe = model.universe.max(n);
                }
            }
            Step::Truncate(k) => {
                let cut = u32::from(k) % 10_000;
                s.truncate(cut as usize);
                if (cut as usize) < model.universe {
                    model.universe = cut as usize;
                    model.m = model.m.range(..cut).copied().collect();
                }
            }
            Step::Clear => {
                s.clear();
                model.m.clear();
            }
            Step::ShrinkToFit => s.shrink_to_fit(),
            Step::New(max) => {
                s = BitSet::new();
                assert_eq!(s.memory_usage(), 0);
                model = Model {
                    m: BTreeSet::new(),
                    universe: 0,
                    max: u32::MAX,
                };
                if let Some(v) = max {
                    s = s.with_max_index(idx(v));
                    model.max = idx(v);
                    assert_eq!(s.memory_usage(), 0);
                }
            }
            Step::SetMaxIndex(max) => {
                let max = max.map_or(u32::MAX, idx);
                s.set_max_index(max);
                model.max = max;
                if model.universe > model.bound() {
                    model.universe = model.bound();
                    model.m = model.m.range(..=max).copied().collect();
                }
            }
            Step::InsertRange(a, b, kind) => {
                let r = span(idx(a), idx(b), kind);
                let (start, end) = resolve(&r, model.universe);
                if start < end && end > bound {
                    assert!(s.try_grow(end).is_err());
                    assert_eq!(s.memory_usage(), memory);
                } else {
                    s.insert_range(r);
                    if start < end {
                        model.m.extend(start as u32..end as u32);
                        model.universe = model.universe.max(end);
                    }
                }
            }
            Step::RemoveRange(a, b, kind) => {
                let r = span(idx(a), idx(b), kind);
                s.remove_range(r);
                for i in model_range(&model.m, resolve(&r, usize::MAX)) {
                    model.m.remove(&i);
                }
            }
            Step::Extend(vs, long) => {
                let v: Vec<u32> = vs
                    .into_iter()
                    .map(idx)
                    .filter(|&i| (i as usize) < bound)
                    .collect();
                let n = if long && !v.is_empty() {
                    v.len().max(s.capacity() / 64)
                } else {
                    v.len()
                };
                s.extend(v.iter().copied().cycle().take(n));
                for &i in &v {
                    model.m.insert(i);
                    model.universe = model.universe.max(i as usize + 1);
                }
            }
            Step::OtherInsert(vs) => {
                for v in vs {
                    other.insert(idx(v));
                    mo.insert(idx(v));
                }
            }
            Step::OtherRemove(vs) => {
                for v in vs {
                    assert_eq!(other.remove(idx(v)), mo.remove(&idx(v)));
                }
            }
            Step::And(op) => {
                if op {
                    s &= &other;
                } else {
                    s.and_with(&other);
                }
                model.m = model.m.intersection(&mo).copied().collect();
            }
            Step::AndNot(op) => {
                if op {
                    s -= &other;
                } else {
                    s.and_not_with(&other);
                }
                model.m = model.m.difference(&mo).copied().collect();
            }
            Step::Or(_) | Step::Xor(_) if other.universe() > bound => {
                assert!(s.try_grow(other.universe()).is_err());
            }
            Step::Or(op) => {
                if op {
                    s |= &other;
                } else {
                    s.or_with(&other);
                }
                model.m = model.m.union(&mo).copied().collect();
                model.universe = model.universe.max(other.universe());
            }
            Step::Xor(op) => {
                if op {
                    s ^= &other;
                } else {
                    s.xor_with(&other);
                }
                model.m = model.m.symmetric_difference(&mo).copied().collect();
                model.universe = model.universe.max(other.universe());
            }
            Step::Probe(i, len, kind) => {
                assert_eq!(s.contains(i), model.m.contains(&i));
                let from = i % 10_000;
                assert_eq!(s.next_one(from), model.m.range(from..).next().copied());
                assert!(s.iter_from(from).eq(model.m.range(from..).copied()));
                let r = span(from, from.saturating_add(u32::from(len)), kind);
                let want = model_range(&model.m, resolve(&r, usize::MAX));
                assert_eq!(s.count_range(r), want.len());
                assert!(s.range(r).eq(want.iter().copied()));
                let r = span(i, i.saturating_add(u32::from(len)), kind);
                let want = model_range(&model.m, resolve(&r, usize::MAX));
                assert_eq!(s.count_range(r), want.len());
                assert!(s.range(r).eq(want.iter().copied()));
            }
            Step::RoundTrip => {
                let json = serde_json::to_vec(&s).unwrap();
                let mut back: BitSet = serde_json::from_slice(&json).unwrap();
                assert_eq!(back.universe(), s.universe());
                assert_eq!(back, s);
                back.set_max_index(s.max_index());
                s = back;
            }
        }
        check(&s, &model, &other, &mo);
    }
});
