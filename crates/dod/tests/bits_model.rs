//! BitSet and its lazy expressions against a `BTreeSet<u32>` model, checked after every step.

use std::collections::BTreeSet;
use std::ops::{Bound, RangeBounds};

use dod::bits::GrowError;
use dod::{BitSet, Bits, InsertErrorKind};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Insert(u32),
    TryInsert(u32),
    Remove(u32),
    Toggle(u32),
    Claim,
    /// The universe, and whether through `try_grow`.
    Grow(usize, bool),
    Truncate(usize),
    Clear,
    ShrinkToFit,
    /// A fresh set, bounded or not.
    New(Option<u32>),
    SetMaxIndex(u32),
    InsertRange(Span),
    RemoveRange(Span),
    /// `extend` with these indices, cycled to a batch at least as long as the set's words
    /// (the deferred-summary path) or not.
    Extend(Vec<u32>, bool),
    /// The other set, its universe, and whether through the assign operator.
    AndWith(Vec<u32>, usize, bool),
    OrWith(Vec<u32>, usize, bool),
    AndNotWith(Vec<u32>, usize, bool),
    XorWith(Vec<u32>, usize, bool),
}

/// A range of indices in one of the forms `RangeBounds<u32>` takes.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: u32,
    len: u32,
    kind: u8,
}

impl Span {
    fn bounds(self) -> (Bound<u32>, Bound<u32>) {
        let end = self.start.saturating_add(self.len);
        match self.kind % 7 {
            0 => (Bound::Included(self.start), Bound::Excluded(end)),
            1 => (Bound::Included(self.start), Bound::Included(end)),
            2 => (Bound::Excluded(self.start), Bound::Included(end)),
            3 => (Bound::Included(self.start), Bound::Unbounded),
            4 => (Bound::Unbounded, Bound::Excluded(end)),
            5 => (Bound::Unbounded, Bound::Unbounded),
            _ => (Bound::Excluded(self.start), Bound::Excluded(end)),
        }
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

/// The model's indices in `r`.
fn model_range(m: &BTreeSet<u32>, r: &impl RangeBounds<u32>) -> Vec<u32> {
    let (start, end) = resolve(r, usize::MAX);
    if start >= end || start > u32::MAX as usize {
        return Vec::new();
    }
    m.range(start as u32..)
        .copied()
        .take_while(|&i| (i as usize) < end)
        .collect()
}

/// Indices cluster near word and summary boundaries, with a few far ones.
fn index() -> BoxedStrategy<u32> {
    if cfg!(miri) {
        // Small universes under Miri, where every word read is slow; still two summary layers.
        return prop_oneof![0u32..200, 4090u32..4100].boxed();
    }
    prop_oneof![
        0u32..200,
        (0u32..8, 0u32..3).prop_map(|(k, d)| (k * 64 + 63 + d).min(10_000)),
        4090u32..4100,
        (0u32..3).prop_map(|d| 262_143 + d),
    ]
    .boxed()
}

fn other() -> impl Strategy<Value = (Vec<u32>, usize)> {
    (prop::collection::vec(index(), 0..20), 0usize..300)
}

fn span() -> impl Strategy<Value = Span> {
    (
        index(),
        // Long enough to fill whole words and cross summary words (from 4090), short enough
        // to keep the model small: the unit tests fill larger ranges.
        prop_oneof![0u32..3, 0u32..300],
        any::<u8>(),
    )
        .prop_map(|(start, len, kind)| Span { start, len, kind })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => index().prop_map(Op::Insert),
        2 => index().prop_map(Op::TryInsert),
        3 => index().prop_map(Op::Remove),
        2 => index().prop_map(Op::Toggle),
        2 => Just(Op::Claim),
        1 => (index(), any::<bool>()).prop_map(|(i, t)| Op::Grow(i as usize, t)),
        1 => index().prop_map(|i| Op::Truncate(i as usize)),
        1 => Just(Op::Clear),
        1 => Just(Op::ShrinkToFit),
        1 => prop::option::of(index()).prop_map(Op::New),
        1 => prop_oneof![index(), Just(u32::MAX)].prop_map(Op::SetMaxIndex),
        1 => span().prop_map(Op::InsertRange),
        2 => (prop::collection::vec(index(), 0..12), any::<bool>()).prop_map(|(v, long)| Op::Extend(v, long)),
        2 => span().prop_map(Op::RemoveRange),
        1 => (other(), any::<bool>()).prop_map(|((v, u), o)| Op::AndWith(v, u, o)),
        1 => (other(), any::<bool>()).prop_map(|((v, u), o)| Op::OrWith(v, u, o)),
        1 => (other(), any::<bool>()).prop_map(|((v, u), o)| Op::AndNotWith(v, u, o)),
        1 => (other(), any::<bool>()).prop_map(|((v, u), o)| Op::XorWith(v, u, o)),
    ]
}

fn make(v: &[u32], universe: usize) -> (BitSet, BTreeSet<u32>) {
    let mut s = BitSet::with_universe(universe);
    s.extend(v.iter().copied());
    let m: BTreeSet<u32> = v.iter().copied().collect();
    (s, m)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 1000 },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Every query of the set against the model.
fn check(s: &BitSet, m: &BTreeSet<u32>, universe: usize) {
    s.assert_invariants();
    assert_eq!(s.universe(), universe);
    let u = universe as u32;
    assert_eq!(s.count(), m.len());
    assert_eq!(s.is_empty(), m.is_empty());
    assert_eq!(
        s.iter().collect::<Vec<_>>(),
        m.iter().copied().collect::<Vec<_>>()
    );
    // The owned iterator, stepped and folded (after a first step, so that the fold starts
    // mid-set), yields the same.
    let mut owned = s.clone().into_iter();
    let first = owned.next();
    assert_eq!(first, m.iter().next().copied());
    let rest = owned.fold(Vec::new(), |mut v, i| {
        v.push(i);
        v
    });
    assert_eq!(rest, m.iter().skip(1).copied().collect::<Vec<_>>());
    let mut stepped = Vec::new();
    let mut owned = s.clone().into_iter();
    for i in owned.by_ref() {
        stepped.push(i);
    }
    assert_eq!(owned.next(), None);
    assert_eq!(stepped, m.iter().copied().collect::<Vec<_>>());
    let mut fe = Vec::new();
    s.for_each(|i| fe.push(i));
    assert_eq!(fe, m.iter().copied().collect::<Vec<_>>());
    assert_eq!(
        s.iter().fold(0u32, |a, i| a ^ i.wrapping_mul(31)),
        m.iter().fold(0, |a, i| a ^ i.wrapping_mul(31))
    );
    let blocks: usize = s
        .blocks()
        .map(|(b, w)| {
            assert_eq!(b % 64, 0);
            assert_ne!(w, 0);
            w.count_ones() as usize
        })
        .sum();
    assert_eq!(blocks, m.len());
    assert_eq!(s.first(), m.first().copied());
    assert_eq!(s.last(), m.last().copied());
    let first_zero = (0..u).find(|i| !m.contains(i));
    assert_eq!(s.first_zero(), first_zero);
    for probe in [
        0,
        1,
        63,
        64,
        65,
        127,
        128,
        4095,
        4096,
        4097,
        u.saturating_sub(1),
        u,
        u + 1,
    ] {
        assert_eq!(s.contains(probe), m.contains(&probe), "contains {probe}");
        assert_eq!(
            s.next_one(probe),
            m.range(probe..).next().copied(),
            "next_one {probe}"
        );
        assert_eq!(
            s.next_zero(probe),
            (probe..u).find(|i| !m.contains(i)),
            "next_zero {probe}"
        );
        assert_eq!(
            s.iter_from(probe).collect::<Vec<_>>(),
            m.range(probe..).copied().collect::<Vec<_>>(),
            "iter_from {probe}"
        );
    }
    // not() at the edge of the universe: all of it when small, windows when large.
    for from in [0, u.saturating_sub(70), u.saturating_sub(1)] {
        let not: Vec<u32> = s.not().iter_from(from).take(200).collect();
        let want: Vec<u32> = (from..u).filter(|i| !m.contains(i)).take(200).collect();
        assert_eq!(not, want, "not from {from}");
    }
    assert_eq!(s.not().count(), universe - m.len());
    assert_eq!(s.not().is_empty(), m.len() == universe);
    // Ranges between the edges of words, summary words and the universe, in turn in each
    // form.
    let edges = [0, 1, 63, 64, 4095, 4096, u.saturating_sub(1), u, u + 1];
    for (x, &a) in edges.iter().enumerate() {
        for (y, &b) in edges.iter().enumerate().skip(x) {
            let r = match (x + y) % 3 {
                0 => (Bound::Included(a), Bound::Excluded(b)),
                1 => (Bound::Included(a), Bound::Included(b)),
                _ => (Bound::Excluded(a), Bound::Excluded(b)),
            };
            let want = model_range(m, &r);
            assert_eq!(s.count_range(r), want.len(), "count_range {r:?}");
            assert_eq!(s.range(r).collect::<Vec<_>>(), want, "range {r:?}");
        }
        let from = model_range(m, &(a..));
        assert_eq!(s.count_range(a..), from.len());
        assert_eq!(s.range(a..).collect::<Vec<_>>(), from);
        let to = model_range(m, &(..a));
        assert_eq!(s.count_range(..a), to.len());
        assert_eq!(s.range(..a).collect::<Vec<_>>(), to);
    }
    assert_eq!(s.count_range(..), m.len());
    assert_eq!(s.count_range(u32::MAX..), 0);
    assert_eq!(
        s.range((Bound::Excluded(u32::MAX), Bound::Unbounded))
            .next(),
        None
    );
    assert_eq!(s.range(..).count(), m.len());
}

/// Every expression of `a` and `b` against the model's set operations.
fn check_exprs(a: &BitSet, ma: &BTreeSet<u32>, b: &BitSet, mb: &BTreeSet<u32>) {
    let universe = a.universe().max(b.universe());
    let u = universe as u32;
    let exprs: [(&str, Vec<u32>, BTreeSet<u32>); 4] = [
        ("and", a.and(b).iter().collect(), ma & mb),
        ("or", a.or(b).iter().collect(), ma | mb),
        ("and_not", a.and_not(b).iter().collect(), ma - mb),
        ("xor", a.xor(b).iter().collect(), ma ^ mb),
    ];
    for (name, got, want) in &exprs {
        assert_eq!(got, &want.iter().copied().collect::<Vec<_>>(), "{name}");
    }
    // The internal forms (`fold`, `for_each`) walk the expressions apart from `next`.
    let push = |mut v: Vec<u32>, i| {
        v.push(i);
        v
    };
    let folded: [(&str, Vec<u32>, &BTreeSet<u32>); 4] = [
        ("and", a.and(b).iter().fold(Vec::new(), push), &exprs[0].2),
        ("or", a.or(b).iter().fold(Vec::new(), push), &exprs[1].2),
        (
            "and_not",
            a.and_not(b).iter().fold(Vec::new(), push),
            &exprs[2].2,
        ),
        ("xor", a.xor(b).iter().fold(Vec::new(), push), &exprs[3].2),
    ];
    for (name, got, want) in &folded {
        assert_eq!(
            got,
            &want.iter().copied().collect::<Vec<_>>(),
            "fold {name}"
        );
    }
    let mut each = Vec::new();
    a.and_not(b).for_each(|i| each.push(i));
    assert_eq!(
        each,
        (ma - mb).into_iter().collect::<Vec<_>>(),
        "for_each and_not"
    );
    let and = a.and(b);
    assert_eq!(and.count(), (ma & mb).len());
    assert_eq!(and.is_empty(), (ma & mb).is_empty());
    assert_eq!(and.universe(), universe);
    let or = a.or(b);
    assert_eq!(or.count(), (ma | mb).len());
    assert_eq!(a.xor(b).is_empty(), ma == mb);
    assert_eq!(a.and_not(b).is_empty(), ma.is_subset(mb));
    // Composition and not() of an expression.
    for from in [0, u.saturating_sub(70)] {
        let not_or: Vec<u32> = a.or(b).not().iter_from(from).take(200).collect();
        let want: Vec<u32> = (from..u)
            .filter(|i| !ma.contains(i) && !mb.contains(i))
            .take(200)
            .collect();
        assert_eq!(not_or, want);
    }
    assert_eq!(a.or(b).not().count(), universe - (ma | mb).len());
    let comp: Vec<u32> = a.or(b).and_not(a.and(b)).iter().collect();
    assert_eq!(comp, (ma ^ mb).into_iter().collect::<Vec<_>>());
    let nn: Vec<u32> = a.not().not().iter().collect();
    assert_eq!(a.not().not().count(), ma.len());
    assert_eq!(nn, ma.iter().copied().collect::<Vec<_>>());
    for probe in [0, 5, 64, 4096, u.saturating_sub(1), u] {
        assert_eq!(
            a.and(b).iter_from(probe).collect::<Vec<_>>(),
            (ma & mb).range(probe..).copied().collect::<Vec<_>>()
        );
        assert_eq!(
            a.or(b).contains(probe),
            ma.contains(&probe) || mb.contains(&probe)
        );
        assert_eq!(
            a.not().iter_from(probe).take(100).collect::<Vec<_>>(),
            (probe..a.universe() as u32)
                .filter(|i| !ma.contains(i))
                .take(100)
                .collect::<Vec<_>>()
        );
    }
    assert_eq!(a.xor(b).to_bitset(), a.xor(b).iter().collect::<BitSet>());
    // The operators build the same expressions as the methods (compared a word at a time:
    // a complement can hold a quarter of a million indices).
    assert!((a & b).blocks().eq(a.and(b).blocks()));
    assert!((a | b).blocks().eq(a.or(b).blocks()));
    assert!((a ^ b).blocks().eq(a.xor(b).blocks()));
    assert!((a - b).blocks().eq(a.and_not(b).blocks()));
    assert!((!a).blocks().eq(a.not().blocks()));
    assert_eq!((a & b).universe(), universe);
    assert!((a & b | (a - b)).iter().eq(ma.iter().copied()));
    assert!(((a | b) - (a & b))
        .iter()
        .eq(ma.symmetric_difference(mb).copied()));
    assert!((!(a | b)).blocks().eq(a.or(b).not().blocks()));
    assert!((!!a).iter().eq(ma.iter().copied()));
    assert!((a ^ b ^ b).iter().eq(ma.iter().copied()));
    // Subset, superset, disjoint, on sets and on expressions.
    assert_eq!(a.is_subset(b), ma.is_subset(mb), "is_subset");
    assert_eq!(a.is_superset(b), ma.is_superset(mb), "is_superset");
    assert_eq!(a.is_disjoint(b), ma.is_disjoint(mb), "is_disjoint");
    assert_eq!(b.is_subset(a), mb.is_subset(ma));
    assert!(a.is_subset(a) && a.is_superset(a));
    assert_eq!(a.is_disjoint(a), ma.is_empty());
    assert!((a & b).is_subset(a) && (a & b).is_subset(b));
    assert!((a | b).is_superset(a) && a.or(b).is_superset(b));
    assert!((a - b).is_disjoint(b));
    assert!(a.xor(b).is_disjoint(a & b));
    assert_eq!(
        (a | b).is_subset(a),
        mb.is_subset(ma),
        "a | b is a subset of a iff b is"
    );
    assert_eq!((a ^ b).is_subset(a - b), mb.is_subset(ma));
    assert!(a.not().is_disjoint(a));
    // Read whole: the complement of `a` within its universe is in `b` iff `b` holds every
    // index of it.
    let ua = a.universe() as u32;
    let covered = mb.range(..ua).filter(|i| !ma.contains(i)).count();
    assert_eq!((!a).is_subset(b), covered == ua as usize - ma.len());
}

/// What an expression of `a`, `b` and complements is, in the model: a finite set, or every
/// index but a finite set (read up to the expression's universe).
enum Expect {
    Finite(BTreeSet<u32>),
    AllBut(BTreeSet<u32>),
}

/// Checks an expression read whole against the model, up to `universe`: its indices
/// (windows of them for a complement, which can hold a quarter of a million), count,
/// membership and conversion to a set.
fn check_expect<E: Bits + Copy>(name: &str, e: E, want: &Expect, universe: usize) {
    let u = universe as u32;
    assert_eq!(e.universe(), universe, "{name}: universe");
    match want {
        Expect::Finite(set) => {
            assert!(e.iter().eq(set.iter().copied()), "{name}");
            assert_eq!(e.count(), set.len(), "{name}: count");
            assert_eq!(e.is_empty(), set.is_empty(), "{name}: is_empty");
        }
        Expect::AllBut(out) => {
            let outside = out.range(..u).count();
            assert_eq!(e.count(), universe - outside, "{name}: count");
            assert_eq!(e.is_empty(), universe == outside, "{name}: is_empty");
            for from in [
                0,
                63,
                64,
                4090,
                u.saturating_sub(70),
                u.saturating_sub(1),
                u,
            ] {
                let got: Vec<u32> = e.iter_from(from).take(80).collect();
                let want: Vec<u32> = (from..u).filter(|i| !out.contains(i)).take(80).collect();
                assert_eq!(got, want, "{name}: from {from}");
            }
            for &i in out {
                assert!(!e.contains(i), "{name}: holds {i}");
            }
        }
    }
    let set = e.to_bitset();
    assert_eq!(set.universe(), universe, "{name}: to_bitset universe");
    set.assert_invariants();
    assert!(set.blocks().eq(e.blocks()), "{name}: to_bitset");
}

/// A complement inside an expression holds every index its set does not, past the set's
/// universe too (`a & !b` is `a - b`); an expression read whole stops at its universe, the
/// larger of its sets'.
fn check_complements(a: &BitSet, ma: &BTreeSet<u32>, b: &BitSet, mb: &BTreeSet<u32>) {
    use Expect::{AllBut, Finite};
    let universe = a.universe().max(b.universe());
    check_expect("a & !b", a & !b, &Finite(ma - mb), universe);
    check_expect("!a & b", !a & b, &Finite(mb - ma), universe);
    check_expect("!a & !b", !a & !b, &AllBut(ma | mb), universe);
    check_expect("a | !b", a | !b, &AllBut(mb - ma), universe);
    check_expect("!a | !b", !a | !b, &AllBut(ma & mb), universe);
    check_expect("a ^ !b", a ^ !b, &AllBut(ma ^ mb), universe);
    check_expect("!a ^ !b", !a ^ !b, &Finite(ma ^ mb), universe);
    check_expect("!a - b", !a - b, &AllBut(ma | mb), universe);
    check_expect("a - !b", a - !b, &Finite(ma & mb), universe);
    check_expect("!a - !b", !a - !b, &Finite(mb - ma), universe);
    check_expect("!(a & !b)", !(a & !b), &AllBut(ma - mb), universe);
    check_expect("!(a | !b)", !(a | !b), &Finite(mb - ma), universe);
    assert!((a - b).blocks().eq((a & !b).blocks()));
    // Comparisons read both sides whole: `!b` is the complement within `b`'s universe.
    let ub = b.universe() as u32;
    let in_not_b = |x: &u32| *x < ub && !mb.contains(x);
    assert_eq!(a.is_subset(!b), ma.iter().all(in_not_b), "a <= !b");
    assert_eq!(a.is_disjoint(!b), !ma.iter().any(in_not_b), "a disjoint !b");
    assert_eq!((!b).is_superset(a), a.is_subset(!b));
    assert!((a & !b).is_disjoint(b));
    // `!a & !b` read whole runs to the larger universe: within `!a` (read whole) iff `b`
    // holds every index from `a`'s universe up to it.
    let (ua, big) = (a.universe() as u32, universe as u32);
    let tail_in_b = big <= ua || mb.range(ua..big).count() == (big - ua) as usize;
    assert_eq!((!a & !b).is_subset(!a), tail_in_b, "!a & !b <= !a");
    // In place: the same sets, in the universe each form gives.
    let mut c = a.clone();
    c &= !b;
    c.assert_invariants();
    assert!(c.iter().eq((ma - mb).iter().copied()), "&= !b");
    assert_eq!(c.universe(), a.universe());
    let mut c = a.clone();
    c -= !b;
    c.assert_invariants();
    assert!(c.iter().eq((ma & mb).iter().copied()), "-= !b");
    if universe <= a.max_index() as usize + 1 {
        let mut c = a.clone();
        c |= !b;
        c.assert_invariants();
        check_expect("|= !b", &c, &AllBut(mb - ma), universe);
        let mut c = a.clone();
        c ^= !b;
        c.assert_invariants();
        check_expect("^= !b", &c, &AllBut(ma ^ mb), universe);
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn bitset_matches_btreeset(ops in prop::collection::vec(op(), 1..if cfg!(miri) { 12 } else { 40 }), b_items in prop::collection::vec(index(), 0..30), b_universe in 0usize..5000) {
        let mut s = BitSet::new();
        let mut m = BTreeSet::new();
        let mut u = 0usize;
        let mut max = u32::MAX;
        let (b, mb) = make(&b_items, b_universe);
        for op in ops {
            // The universe may grow to `bound` and no further.
            let bound = max as usize + 1;
            let memory = s.memory_usage();
            match op {
                Op::Insert(i) => {
                    if (i as usize) < bound {
                        prop_assert_eq!(s.insert(i), m.insert(i));
                        u = u.max(i as usize + 1);
                    } else {
                        // `insert` would panic: the fallible form errors without allocating.
                        let err = s.try_insert(i).unwrap_err();
                        prop_assert_eq!(err.kind(), InsertErrorKind::IndexAboveMax { index: i, max });
                        prop_assert_eq!(err.into_inner(), i);
                        prop_assert_eq!(s.memory_usage(), memory);
                    }
                }
                Op::TryInsert(i) => match s.try_insert(i) {
                    Ok(added) => {
                        prop_assert!((i as usize) < bound);
                        prop_assert_eq!(added, m.insert(i));
                        u = u.max(i as usize + 1);
                    }
                    Err(err) => {
                        prop_assert!(i > max);
                        prop_assert_eq!(err.kind(), InsertErrorKind::IndexAboveMax { index: i, max });
                        prop_assert_eq!(s.memory_usage(), memory);
                    }
                },
                Op::Remove(i) => prop_assert_eq!(s.remove(i), m.remove(&i)),
                Op::Toggle(i) => {
                    if (i as usize) < bound {
                        let now = s.toggle(i);
                        let want = if m.contains(&i) { m.remove(&i); false } else { m.insert(i); true };
                        prop_assert_eq!(now, want);
                        u = u.max(i as usize + 1);
                    } else {
                        prop_assert!(s.try_insert(i).is_err());
                    }
                }
                Op::Claim => {
                    let want = (0..=u as u32).find(|i| !m.contains(i)).unwrap();
                    if (want as usize) < bound {
                        prop_assert_eq!(s.claim(), want);
                        m.insert(want);
                        u = u.max(want as usize + 1);
                    } else {
                        // Full up to the bound: `claim` would panic.
                        prop_assert_eq!(s.first_zero(), None);
                        prop_assert_eq!(u, bound);
                    }
                }
                Op::Grow(n, fallible) => {
                    if n <= bound {
                        if fallible {
                            prop_assert_eq!(s.try_grow(n), Ok(()));
                        } else {
                            s.grow(n);
                        }
                        u = u.max(n);
                    } else {
                        prop_assert_eq!(s.try_grow(n), Err(GrowError::AboveMax { universe: n, max_index: max }));
                        prop_assert_eq!(s.memory_usage(), memory);
                    }
                }
                Op::Truncate(n) => {
                    s.truncate(n);
                    if n < u {
                        u = n;
                        m = m.range(..n as u32).copied().collect();
                    }
                }
                Op::Clear => {
                    s.clear();
                    m.clear();
                }
                Op::ShrinkToFit => s.shrink_to_fit(),
                Op::New(bounded) => {
                    s = BitSet::new();
                    prop_assert_eq!(s.memory_usage(), 0);
                    max = u32::MAX;
                    if let Some(mx) = bounded {
                        s = s.with_max_index(mx);
                        prop_assert_eq!(s.memory_usage(), 0);
                        max = mx;
                    }
                    m.clear();
                    u = 0;
                }
                Op::SetMaxIndex(mx) => {
                    s.set_max_index(mx);
                    max = mx;
                    if u > mx as usize + 1 {
                        u = mx as usize + 1;
                        m = m.range(..=mx).copied().collect();
                    }
                }
                Op::InsertRange(span) => {
                    let r = span.bounds();
                    let (start, mut end) = resolve(&r, u);
                    if end.saturating_sub(start) > 300 {
                        // Keep the model small: the same start, a shorter bounded end.
                        end = start + 300;
                    }
                    let r = (Bound::Included(start as u32), Bound::Excluded(end as u32));
                    let r = if (start, end) == resolve(&span.bounds(), u) { span.bounds() } else { r };
                    if start < end && end > bound {
                        prop_assert!(s.try_grow(end).is_err());
                        prop_assert_eq!(s.memory_usage(), memory);
                    } else {
                        s.insert_range(r);
                        if start < end {
                            m.extend(start as u32..end as u32);
                            u = u.max(end);
                        }
                    }
                }
                Op::Extend(v, long) => {
                    // The batch: `v` once, or cycled to at least one index per word of the
                    // capacity, so that `extend` takes the deferred path. Cycling adds nothing
                    // the first pass did not.
                    let n = if long && !v.is_empty() { v.len().max(s.capacity() / 64) } else { v.len() };
                    let batch = v.iter().copied().cycle().take(n);
                    // Every index up to the first one above the bound goes in; that one panics.
                    let stop = v.iter().position(|&i| i as usize >= bound);
                    for &i in &v[..stop.unwrap_or(v.len())] {
                        m.insert(i);
                        u = u.max(i as usize + 1);
                    }
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.extend(batch)));
                    prop_assert_eq!(r.is_err(), stop.is_some());
                }
                Op::RemoveRange(span) => {
                    let r = span.bounds();
                    s.remove_range(r);
                    let gone = model_range(&m, &r);
                    for i in gone {
                        m.remove(&i);
                    }
                }
                Op::AndWith(v, ou, op) => {
                    let (o, mo) = make(&v, ou);
                    if op { s &= &o } else { s.and_with(&o) }
                    m = &m & &mo;
                }
                Op::OrWith(v, ou, op) => {
                    let (o, mo) = make(&v, ou);
                    if o.universe() > bound {
                        prop_assert!(s.try_grow(o.universe()).is_err());
                    } else {
                        if op { s |= &o } else { s.or_with(&o) }
                        m = &m | &mo;
                        u = u.max(o.universe());
                    }
                }
                Op::AndNotWith(v, ou, op) => {
                    let (o, mo) = make(&v, ou);
                    if op { s -= &o } else { s.and_not_with(&o) }
                    m = &m - &mo;
                }
                Op::XorWith(v, ou, op) => {
                    let (o, mo) = make(&v, ou);
                    if o.universe() > bound {
                        prop_assert!(s.try_grow(o.universe()).is_err());
                    } else {
                        if op { s ^= &o } else { s.xor_with(&o) }
                        m = &m ^ &mo;
                        u = u.max(o.universe());
                    }
                }
            }
            prop_assert_eq!(s.max_index(), max);
            check(&s, &m, u);
            check_exprs(&s, &m, &b, &mb);
            check_exprs(&b, &mb, &s, &m);
        }
        // Once per case: a complement of a quarter of a million indices is slow to read whole.
        check_complements(&s, &m, &b, &mb);
        check_complements(&b, &mb, &s, &m);
        let t: BitSet = m.iter().copied().collect();
        prop_assert_eq!(&t, &s);
    }

    #[test]
    fn from_words_matches_model(words in prop::collection::vec(any::<u64>(), 0..6), cut in 0usize..64) {
        let universe = (words.len() * 64).saturating_sub(cut);
        let mut words = words;
        if let Some(last) = words.last_mut() {
            if universe % 64 != 0 {
                *last &= (1u64 << (universe % 64)) - 1;
            }
        }
        if universe.div_ceil(64) != words.len() {
            prop_assert!(BitSet::from_words(words, universe).is_none());
            return Ok(());
        }
        let s = BitSet::from_words(words.clone(), universe).unwrap();
        let m: BTreeSet<u32> = (0..universe as u32).filter(|&i| words[i as usize / 64] >> (i % 64) & 1 == 1).collect();
        check(&s, &m, universe);
        prop_assert_eq!(s.as_words(), &words[..]);
    }
}

#[test]
fn comparisons_read_complements_whole() {
    let empty = BitSet::new();
    assert!((!&empty).is_empty());
    // An empty set is a subset of anything, whatever the universe of the set it complements.
    assert!((!&empty).is_subset(&BitSet::with_universe(10)));
    assert!((!&empty).is_subset(&BitSet::new()));
    let a: BitSet = [5].into_iter().collect();
    let b: BitSet = [0].into_iter().collect(); // `!b` read whole is empty
    assert!((!&b).iter().next().is_none() && !(!&b).contains(5));
    assert!(!a.is_subset(!&b));
    assert!(!(!&b).is_superset(&a));
    assert!(a.is_disjoint(!&b));
    // Inside an expression the complement holds 5: `a & !b` is `a`.
    assert!((&a & !&b).iter().eq([5]));
}

#[test]
fn a_finite_expression_of_complements_skips_past_its_universe() {
    // `!a - !b` is `b - a`: finite, with complements inside, read whole over 15 626 words.
    let a: BitSet = [1_000_000].into_iter().collect();
    let b: BitSet = [999_999].into_iter().collect();
    let e = !&a - !&b;
    assert!(e.iter().eq([999_999]));
    // Its summary is cut at the universe: no bit for a word past it, in any layer.
    assert_eq!(e.summary(0, 245), 0, "layer 0 covers words 15 680 and up");
    assert_eq!(
        e.summary(1, 4),
        0,
        "layer 1 covers layer-0 words 256 and up"
    );
    assert_eq!((!&a & !&b & &b).summary(0, 300), 0);
}

#[test]
// Ten million indices: too slow under Miri, which runs the same code on small sets above.
#[cfg_attr(miri, ignore)]
fn sparse_sets_far_apart() {
    let a: BitSet = [3, 1 << 20, 10_000_000].into_iter().collect();
    let b: BitSet = [1 << 20, 10_000_000, 10_000_001].into_iter().collect();
    assert_eq!(a.and(&b).iter().collect::<Vec<_>>(), [1 << 20, 10_000_000]);
    assert_eq!(a.xor(&b).iter().collect::<Vec<_>>(), [3, 10_000_001]);
    assert_eq!(a.not().count(), 10_000_001 - 3);
    assert_eq!(
        a.not().iter_from(9_999_999).collect::<Vec<_>>(),
        [9_999_999]
    );
}

#[cfg(feature = "rayon")]
#[test]
fn par_iter_matches_iter() {
    use rayon::prelude::*;
    let s: BitSet = (0..100_000)
        .filter(|i| i % 7 == 0 || (50_000..50_100).contains(i))
        .collect();
    let mut v: Vec<u32> = s.par_iter().collect();
    v.sort_unstable();
    assert_eq!(v, s.iter().collect::<Vec<_>>());
}

/// `par_iter` on every expression, against `iter`: the same indices, whatever the order.
#[cfg(feature = "rayon")]
#[test]
#[cfg_attr(miri, ignore)]
fn par_iter_on_expressions_matches_iter() {
    use rayon::prelude::*;
    fn same<S: Bits + Copy + Send + Sync>(name: &str, e: S) {
        let mut v: Vec<u32> = Bits::par_iter(e).collect();
        v.sort_unstable();
        assert_eq!(v, e.iter().collect::<Vec<_>>(), "{name}");
    }
    let a: BitSet = (0..100_000)
        .filter(|i| i % 7 == 0 || (50_000..50_100).contains(i))
        .collect();
    let b: BitSet = (0..200_000)
        .filter(|i| i % 3 == 0 || (90_000..91_000).contains(i))
        .collect();
    let empty = BitSet::new();
    same("and", &a & &b);
    same("or", &a | &b);
    same("and_not", &a - &b);
    same("xor", &a ^ &b);
    same("not", !&a);
    same("not of or", !(&a | &b));
    same("nested", (&a ^ &b) - (&a & &b));
    same("empty", &empty & &a);
    same("not empty", !&empty);
    same("set", &b);
    assert_eq!(Bits::par_iter(&a & &b).count(), (&a & &b).count(), "count");
}

/// A set of the user's whose first two words are `first` and whose others are all ones over
/// `universe`, and whose `word` panics at word `fail`, or, with `fail` past the words, sets
/// bits past the universe in its last word (both against the `Bits` contract, which only the
/// user's code can break).
#[derive(Clone, Copy)]
struct Unruly {
    universe: usize,
    fail: usize,
    first: [u64; 2],
}

impl Bits for Unruly {
    fn universe(&self) -> usize {
        self.universe
    }
    fn word(&self, i: usize) -> u64 {
        assert!(i != self.fail, "word {i} of a set of the user's");
        match i {
            0 | 1 => self.first[i],
            _ if i < self.universe.div_ceil(64) => u64::MAX,
            _ => 0,
        }
    }
    fn summary(&self, _level: usize, _i: usize) -> u64 {
        u64::MAX
    }
}

#[test]
fn a_panicking_operand_leaves_an_in_place_operation_valid() {
    type InPlace = fn(&mut BitSet, Unruly);
    let start: BitSet = (0..256).filter(|i| i % 3 == 0).collect();
    let (w0, w1) = (start.as_words()[0], start.as_words()[1]);
    // Each operand empties or fills the two words combined before the panic, so that a
    // summary left as it was would be wrong.
    let ops: [(&str, InPlace, [u64; 2]); 4] = [
        ("and_with", |s, o| s.and_with(o), [0, 0]),
        ("or_with", |s, o| s.or_with(o), [u64::MAX, u64::MAX]),
        ("xor_with", |s, o| s.xor_with(o), [w0, w1]),
        (
            "and_not_with",
            |s, o| s.and_not_with(o),
            [u64::MAX, u64::MAX],
        ),
    ];
    for (name, op, first) in ops {
        let mut s = start.clone();
        let other = Unruly {
            universe: 256,
            fail: 2,
            first,
        };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(&mut s, other)));
        assert!(r.is_err(), "{name}: the operand's panic reaches the caller");
        s.assert_invariants();
        // The words before the panic are combined, the others as they were; every answer
        // agrees with the words.
        let words = s.as_words().to_vec();
        let m: BTreeSet<u32> = (0..256u32)
            .filter(|&i| words[i as usize / 64] >> (i % 64) & 1 == 1)
            .collect();
        check(&s, &m, 256);
        let untouched: BTreeSet<u32> = (128..256).filter(|i| i % 3 == 0).collect();
        assert_eq!(
            m.range(128..).copied().collect::<BTreeSet<_>>(),
            untouched,
            "{name}"
        );
    }
}

#[test]
fn to_bitset_cuts_what_a_set_of_the_users_has_past_its_universe() {
    let sloppy = Unruly {
        universe: 70,
        fail: usize::MAX,
        first: [u64::MAX, u64::MAX],
    };
    let s = sloppy.to_bitset();
    s.assert_invariants();
    assert_eq!(s.universe(), 70);
    assert!(s.iter().eq(0..70));
    assert_eq!(s.count(), 70);
}
