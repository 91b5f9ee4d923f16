//! BitSet and its expressions against a `BTreeSet<u32>`, checked after every step, plus
//! arbitrary bytes fed to the serde reader.
#![no_main]

use std::collections::BTreeSet;

use dod::{BitSet, Bits};
use dod_fuzz::Op;
use libfuzzer_sys::fuzz_target;

/// Keeps indices small enough to check against the model quickly, while crossing word and
/// summary boundaries.
fn idx(v: u16) -> u32 {
    u32::from(v) % 9000
}

fn check(s: &BitSet, m: &BTreeSet<u32>, other: &BitSet, mo: &BTreeSet<u32>) {
    s.assert_invariants();
    assert_eq!(s.count(), m.len());
    assert!(s.iter().eq(m.iter().copied()));
    let u = s.universe();
    assert_eq!(s.first_zero(), (0..u as u32).find(|i| !m.contains(i)));
    assert_eq!(s.first_one(), m.first().copied());
    assert!(s.and(other).iter().eq(m.intersection(mo).copied()));
    assert!(s.or(other).iter().eq(m.union(mo).copied()));
    assert!(s.and_not(other).iter().eq(m.difference(mo).copied()));
    assert!(s.xor(other).iter().eq(m.symmetric_difference(mo).copied()));
    assert_eq!(s.not().count(), u - m.len());
    assert_eq!(s.and(other).is_empty(), m.is_disjoint(mo));
}

fuzz_target!(|input: (Vec<Op>, Vec<u8>)| {
    let (ops, bytes) = input;
    // Untrusted bytes never panic the reader and never give a broken set.
    if let Ok(s) = serde_json::from_slice::<BitSet>(&bytes) {
        s.assert_invariants();
    }

    let mut s = BitSet::new();
    let mut m = BTreeSet::new();
    let mut other = BitSet::new();
    let mut mo = BTreeSet::new();
    for op in ops.into_iter().take(64) {
        match op {
            Op::Insert(v) => assert_eq!(s.insert(idx(v)), m.insert(idx(v))),
            Op::InsertMany(vs) => {
                for v in vs {
                    other.insert(idx(v));
                    mo.insert(idx(v));
                }
            }
            Op::Remove(v) => assert_eq!(s.remove(idx(v)), m.remove(&idx(v))),
            Op::RemoveMany(vs) => {
                for v in vs {
                    assert_eq!(other.remove(idx(v)), mo.remove(&idx(v)));
                }
            }
            Op::Get(v) => assert_eq!(s.contains(idx(v)), m.contains(&idx(v))),
            Op::GetForged(bits) => {
                let i = bits as u32;
                assert_eq!(s.contains(i), m.contains(&i));
                let from = i % 10_000;
                assert_eq!(s.next_one(from), m.range(from..).next().copied());
                assert!(s.iter_from(from).eq(m.range(from..).copied()));
            }
            Op::Set(a, _) => {
                let i = idx(a);
                let want = if m.contains(&i) {
                    m.remove(&i);
                    false
                } else {
                    m.insert(i);
                    true
                };
                assert_eq!(s.toggle(i), want);
            }
            Op::Retain(k) => {
                let cut = u32::from(k) * 40;
                s.truncate(cut as usize);
                m = m.range(..cut).copied().collect();
            }
            Op::Clear => {
                s.clear();
                m.clear();
            }
            Op::Reset => {
                let i = s.claim();
                assert!(m.insert(i), "claimed a present index");
                assert_eq!((0..i).find(|j| !m.contains(j)), None);
            }
            Op::Sort => {
                s.and_with(&other);
                m = m.intersection(&mo).copied().collect();
            }
            Op::Defragment(_) => {
                s.or_with(&other);
                m = m.union(&mo).copied().collect();
            }
            Op::Reserve(k) => s.grow(usize::from(k) * 50),
            Op::ShrinkToFit => s.shrink_to_fit(),
            Op::RoundTrip => {
                let json = serde_json::to_vec(&s).unwrap();
                let back: BitSet = serde_json::from_slice(&json).unwrap();
                assert_eq!(back.universe(), s.universe());
                assert_eq!(back, s);
                s = back;
            }
        }
        check(&s, &m, &other, &mo);
    }
});
