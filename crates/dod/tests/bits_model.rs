//! BitSet and its lazy expressions against a `BTreeSet<u32>` model, checked after every step.

use std::collections::BTreeSet;

use dod::{BitSet, Bits};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Insert(u32),
    Remove(u32),
    Toggle(u32),
    Claim,
    Grow(usize),
    Truncate(usize),
    Clear,
    ShrinkToFit,
    AndWith(Vec<u32>, usize),
    OrWith(Vec<u32>, usize),
    AndNotWith(Vec<u32>, usize),
    XorWith(Vec<u32>, usize),
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

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => index().prop_map(Op::Insert),
        3 => index().prop_map(Op::Remove),
        2 => index().prop_map(Op::Toggle),
        2 => Just(Op::Claim),
        1 => index().prop_map(|i| Op::Grow(i as usize)),
        1 => index().prop_map(|i| Op::Truncate(i as usize)),
        1 => Just(Op::Clear),
        1 => Just(Op::ShrinkToFit),
        1 => other().prop_map(|(v, u)| Op::AndWith(v, u)),
        1 => other().prop_map(|(v, u)| Op::OrWith(v, u)),
        1 => other().prop_map(|(v, u)| Op::AndNotWith(v, u)),
        1 => other().prop_map(|(v, u)| Op::XorWith(v, u)),
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
    let mut fe = Vec::new();
    s.for_each(|i| fe.push(i));
    assert_eq!(fe.len(), m.len());
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
    assert_eq!(s.first_one(), m.first().copied());
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
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn bitset_matches_btreeset(ops in prop::collection::vec(op(), 1..if cfg!(miri) { 12 } else { 40 }), b_items in prop::collection::vec(index(), 0..30), b_universe in 0usize..5000) {
        let mut s = BitSet::new();
        let mut m = BTreeSet::new();
        let mut u = 0usize;
        let (b, mb) = make(&b_items, b_universe);
        for op in ops {
            match op {
                Op::Insert(i) => {
                    prop_assert_eq!(s.insert(i), m.insert(i));
                    u = u.max(i as usize + 1);
                }
                Op::Remove(i) => prop_assert_eq!(s.remove(i), m.remove(&i)),
                Op::Toggle(i) => {
                    let now = s.toggle(i);
                    let want = if m.contains(&i) { m.remove(&i); false } else { m.insert(i); true };
                    prop_assert_eq!(now, want);
                    u = u.max(i as usize + 1);
                }
                Op::Claim => {
                    let want = (0..=u as u32).find(|i| !m.contains(i)).unwrap();
                    prop_assert_eq!(s.claim(), want);
                    m.insert(want);
                    u = u.max(want as usize + 1);
                }
                Op::Grow(n) => {
                    s.grow(n);
                    u = u.max(n);
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
                Op::AndWith(v, ou) => {
                    let (o, mo) = make(&v, ou);
                    s.and_with(&o);
                    m = &m & &mo;
                }
                Op::OrWith(v, ou) => {
                    let (o, mo) = make(&v, ou);
                    s.or_with(&o);
                    m = &m | &mo;
                    u = u.max(o.universe());
                }
                Op::AndNotWith(v, ou) => {
                    let (o, mo) = make(&v, ou);
                    s.and_not_with(&o);
                    m = &m - &mo;
                }
                Op::XorWith(v, ou) => {
                    let (o, mo) = make(&v, ou);
                    s.xor_with(&o);
                    m = &m ^ &mo;
                    u = u.max(o.universe());
                }
            }
            check(&s, &m, u);
            check_exprs(&s, &m, &b, &mb);
            check_exprs(&b, &mb, &s, &m);
        }
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
