//! Random programs on a `DataComponent`, checked against a `HashMap` after every step. Reads
//! the shared `Op` enum: `Insert` sets a value by its path string (the component keeps the
//! name) and `Set` by its `DataKey` (no name), with a type and size from the number (integers
//! included); `Remove` removes, `Get`/`GetForged` look up, `Clear` clears,
//! `Defragment`/`ShrinkToFit` compact, `RoundTrip` goes through bytes (names stay behind),
//! `InsertMany`/`RemoveMany` merge and diff/apply, `Reserve` sets a value by a path around the
//! depth bound (named only within it) and `Retain` registers such a path in a `KeyNames`.
#![no_main]

use std::collections::{HashMap, HashSet};

use dod::data::{
    DataComponent, DataKey, DataView, KeyNames, NameError, OwnedValue, Value, MAX_PATH_DEPTH,
};
use dod_fuzz::Op;
use libfuzzer_sys::fuzz_target;

/// A few dozen paths, nested, so keys repeat, and the keys at both ends of the hash range
/// (which have no path string).
fn path(p: u16) -> (DataKey, Option<String>) {
    let p = p % 52;
    match p {
        48..=51 => (
            DataKey::from_raw([0, 1, u32::MAX - 1, u32::MAX][usize::from(p - 48)]),
            None,
        ),
        _ => {
            let text = format!(
                "{}.{}",
                ["stats", "status", "inv"][usize::from(p % 3)],
                p / 3
            );
            (DataKey::from_path(&text), Some(text))
        }
    }
}

/// A path of `depth` segments whose last is "leaf": no two such paths are prefixes of each
/// other.
fn deep_path(depth: usize) -> String {
    let mut segments = vec!["d"; depth - 1];
    segments.push("leaf");
    segments.join(".")
}

fn value(v: u16) -> OwnedValue {
    let size = usize::from(v >> 3) % 70;
    match v % 5 {
        0 => OwnedValue::Bool(v & 8 != 0),
        1 => OwnedValue::F32(f32::from(v) * 0.25),
        2 => OwnedValue::String("é".repeat(size / 2) + &"x".repeat(size % 2)),
        3 => OwnedValue::F32s((0..size).map(|i| i as f32).collect()),
        _ => OwnedValue::I64(match v >> 3 & 7 {
            0 => i64::MIN,
            1 => i64::MAX,
            2 => (1 << 24) + 1,
            3 => dod::Handle::new(u32::from(v) << 16, v | 1, v & 0x7FFF)
                .map_or(-1, |h| h.to_bits() as i64),
            _ => i64::from(v).wrapping_mul(0x0123_4567_89AB_CDEF),
        }),
    }
}

fn check(c: &DataComponent, m: &HashMap<DataKey, OwnedValue>, named: &HashMap<DataKey, String>) {
    assert_eq!(c.len(), m.len());
    for (k, v) in m {
        assert_eq!(c.get(*k).map(|x| x.to_owned()).as_ref(), Some(v));
        if let OwnedValue::I64(i) = v {
            assert_eq!(c.get_i64(*k), Some(*i));
            assert_eq!(c.get_f32(*k), None);
        }
    }
    for (k, v) in c.iter() {
        assert_eq!(m.get(&k), Some(&v.to_owned()));
    }
    assert_eq!(c.names().len(), named.len());
    for (k, p) in named {
        assert_eq!(c.names().name(*k).as_ref(), Some(p));
    }
    assert!(DataView::new(c.as_bytes()).is_ok());
}

fuzz_target!(|ops: Vec<Op>| {
    let mut c = DataComponent::new();
    let mut m: HashMap<DataKey, OwnedValue> = HashMap::new();
    // Names the component keeps: paths set by string since it was last read from bytes.
    let mut named: HashMap<DataKey, String> = HashMap::new();
    let mut registry = KeyNames::new();
    let mut registered: HashSet<usize> = HashSet::new();
    for op in ops {
        match op {
            Op::Insert(v) => {
                let ((k, text), v) = (path(v.rotate_left(5)), value(v));
                match &text {
                    Some(text) => {
                        c.set(text.as_str(), &v);
                        named.insert(k, text.clone());
                    }
                    None => c.set(k, &v),
                }
                m.insert(k, v);
            }
            Op::Set(p, v) => {
                let ((k, _), v) = (path(p), value(v));
                c.set(k, Value::from(&v));
                m.insert(k, v);
            }
            Op::Remove(p) => assert_eq!(c.remove(path(p).0), m.remove(&path(p).0).is_some()),
            Op::Get(p) => {
                let k = path(p).0;
                assert_eq!(c.get(k).map(|x| x.to_owned()).as_ref(), m.get(&k));
            }
            Op::GetForged(bits) => {
                let k = DataKey::from_raw(bits as u32);
                assert_eq!(c.get(k).map(|x| x.to_owned()).as_ref(), m.get(&k));
                assert_eq!(
                    c.get_i64(k),
                    match m.get(&k) {
                        Some(OwnedValue::I64(i)) => Some(*i),
                        _ => None,
                    }
                );
            }
            Op::Clear | Op::Reset => {
                c.clear();
                m.clear();
            }
            Op::Defragment(_) | Op::ShrinkToFit => {
                c.compact();
                assert_eq!(c.hole_bytes(), 0);
            }
            Op::RoundTrip => {
                c = DataComponent::from_bytes(c.as_bytes()).unwrap();
                named.clear();
            }
            Op::InsertMany(vs) => {
                let mut other = DataComponent::new();
                for v in vs {
                    let ((k, _), v) = (path(v.rotate_left(3)), value(v));
                    other.set(k, &v);
                    m.insert(k, v);
                }
                c.merge_from(&other);
            }
            Op::RemoveMany(ps) => {
                let mut changed = c.clone();
                for p in ps {
                    changed.remove(path(p).0);
                    m.remove(&path(p).0);
                }
                let patch = changed.diff(&c);
                c.apply(&patch);
                assert_eq!(c, changed);
            }
            Op::Reserve(n) => {
                // Around the depth bound: the value is set either way, the name kept only
                // within the bound.
                let depth = MAX_PATH_DEPTH - 3 + usize::from(n % 8);
                let text = deep_path(depth);
                let k = DataKey::from_path(&text);
                let v = value(u16::from(n) << 3 | 4);
                c.set(text.as_str(), &v);
                m.insert(k, v);
                if depth <= MAX_PATH_DEPTH {
                    named.insert(k, text);
                }
            }
            Op::Retain(n) => {
                let depth = MAX_PATH_DEPTH - 3 + usize::from(n % 8);
                let got = registry.register(&deep_path(depth));
                if depth <= MAX_PATH_DEPTH {
                    assert_eq!(got, Ok(DataKey::from_path(&deep_path(depth))));
                    registered.insert(depth);
                } else {
                    assert_eq!(got, Err(NameError::TooDeep { depth }));
                }
                assert_eq!(registry.len(), registered.len());
            }
            Op::Sort => {
                // A reserved name (the form JSON gives unnamed keys) is never registered.
                let reserved = format!("{}", DataKey::from_raw(u32::from(c.len() as u16)));
                assert!(matches!(
                    registry.register(&reserved),
                    Err(NameError::Reserved { .. })
                ));
            }
        }
        check(&c, &m, &named);
    }
});
