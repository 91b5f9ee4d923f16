//! Random programs on a `DataComponent`, checked against a `HashMap` after every step. Reads
//! the shared `Op` enum: `Insert`/`Set` set a value whose type and size come from the number,
//! `Remove` removes, `Get`/`GetForged` look up, `Clear` clears, `Defragment`/`ShrinkToFit`
//! compact, `RoundTrip` goes through bytes, `InsertMany`/`RemoveMany` merge and diff/apply.
#![no_main]

use std::collections::HashMap;

use dod::data::{DataComponent, DataKey, DataView, OwnedValue};
use dod_fuzz::Op;
use libfuzzer_sys::fuzz_target;

fn path(p: u16) -> DataKey {
    // A few dozen paths, nested, so keys repeat, and the keys at both ends of the hash range.
    let p = p % 52;
    match p {
        48..=51 => DataKey::from_raw([0, 1, u32::MAX - 1, u32::MAX][usize::from(p - 48)]),
        _ => DataKey::ROOT
            .child(["stats", "status", "inv"][usize::from(p % 3)])
            .child(&(p / 3).to_string()),
    }
}

fn value(v: u16) -> OwnedValue {
    let size = usize::from(v >> 2) % 70;
    match v % 4 {
        0 => OwnedValue::Bool(v & 4 != 0),
        1 => OwnedValue::F32(f32::from(v) * 0.25),
        2 => OwnedValue::String("é".repeat(size / 2) + &"x".repeat(size % 2)),
        _ => OwnedValue::F32s((0..size).map(|i| i as f32).collect()),
    }
}

fn check(c: &DataComponent, m: &HashMap<DataKey, OwnedValue>) {
    assert_eq!(c.len(), m.len());
    for (k, v) in m {
        assert_eq!(c.get(*k).map(|x| x.to_owned()).as_ref(), Some(v));
    }
    for (k, v) in c.iter() {
        assert_eq!(m.get(&k), Some(&v.to_owned()));
    }
    assert!(DataView::new(c.as_bytes()).is_ok());
}

fuzz_target!(|ops: Vec<Op>| {
    let mut c = DataComponent::new();
    let mut m: HashMap<DataKey, OwnedValue> = HashMap::new();
    for op in ops {
        match op {
            Op::Insert(v) => {
                let (k, v) = (path(v.rotate_left(5)), value(v));
                c.set(k, &v);
                m.insert(k, v);
            }
            Op::Set(p, v) => {
                let (k, v) = (path(p), value(v));
                c.set(k, &v);
                m.insert(k, v);
            }
            Op::Remove(p) => assert_eq!(c.remove(path(p)), m.remove(&path(p)).is_some()),
            Op::Get(p) => {
                assert_eq!(
                    c.get(path(p)).map(|x| x.to_owned()).as_ref(),
                    m.get(&path(p))
                )
            }
            Op::GetForged(bits) => {
                let k = DataKey::from_raw(bits as u32);
                assert_eq!(c.get(k).map(|x| x.to_owned()).as_ref(), m.get(&k));
            }
            Op::Clear | Op::Reset => {
                c.clear();
                m.clear();
            }
            Op::Defragment(_) | Op::ShrinkToFit => {
                c.compact();
                assert_eq!(c.hole_bytes(), 0);
            }
            Op::RoundTrip => c = DataComponent::from_bytes(c.as_bytes()).unwrap(),
            Op::InsertMany(vs) => {
                let mut other = DataComponent::new();
                for v in vs {
                    let (k, v) = (path(v.rotate_left(3)), value(v));
                    other.set(k, &v);
                    m.insert(k, v);
                }
                c.merge_from(&other);
            }
            Op::RemoveMany(ps) => {
                let mut changed = c.clone();
                for p in ps {
                    changed.remove(path(p));
                    m.remove(&path(p));
                }
                let patch = changed.diff(&c);
                c.apply(&patch);
                assert_eq!(c, changed);
            }
            Op::Retain(_) | Op::Sort | Op::Reserve(_) => {}
        }
        check(&c, &m);
    }
});
