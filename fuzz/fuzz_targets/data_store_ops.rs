//! Random programs on a `DataStore`, checked against a `HashMap` model after every step. Reads
//! the shared `Op` enum: `Insert` inserts an entity (index and generation from the number),
//! `Remove` removes one, `Set(e, v)` sets a value whose path, type and size come from `v`,
//! `Retain` removes a key, `Get`/`GetForged` look up, `Clear`, `Defragment`/`ShrinkToFit`
//! compact, `RoundTrip` goes through bytes.
#![no_main]

use std::collections::HashMap;

use dod::data::{DataKey, DataStore, OwnedValue};
use dod::Handle;
use dod_fuzz::Op;
use libfuzzer_sys::fuzz_target;

fn entity(x: u16) -> Handle {
    Handle::new(u32::from(x % 24), 1 + (x >> 8) % 3, 0).unwrap()
}

fn path(p: u16) -> DataKey {
    // A few keys, so they repeat, and the keys at both ends of the hash range.
    match p % 8 {
        6 => DataKey::from_raw(0),
        7 => DataKey::from_raw(u32::MAX),
        p => DataKey::ROOT.child(["a", "b", "c", "d", "e", "f"][usize::from(p)]),
    }
}

fn value(v: u16) -> OwnedValue {
    let size = usize::from(v >> 5) % 300;
    match (v >> 3) % 4 {
        0 => OwnedValue::Bool(v & 1 != 0),
        1 => OwnedValue::F32(f32::from(v)),
        2 => OwnedValue::String("z".repeat(size)),
        _ => OwnedValue::F32s((0..size / 4).map(|i| i as f32).collect()),
    }
}

type Model = HashMap<u32, (Handle, HashMap<DataKey, OwnedValue>)>;

fn live(m: &Model, e: Handle) -> bool {
    m.get(&e.index()).is_some_and(|(h, _)| *h == e)
}

fn check(s: &DataStore, m: &Model) {
    assert_eq!(s.len(), m.len());
    for (h, data) in m.values() {
        let v = s.get(*h).expect("live entity has data");
        assert_eq!(v.len(), data.len());
        for (k, val) in data {
            assert_eq!(v.get(*k).map(|x| x.to_owned()).as_ref(), Some(val));
        }
    }
    assert!(s.fragmentation() <= s.free_bytes());
}

fuzz_target!(|ops: Vec<Op>| {
    let mut s: DataStore = DataStore::new();
    let mut m: Model = HashMap::new();
    for op in ops {
        match op {
            Op::Insert(x) => {
                let e = entity(x);
                let fresh = !live(&m, e);
                assert_eq!(s.insert(e), fresh);
                if fresh {
                    m.insert(e.index(), (e, HashMap::new()));
                }
            }
            Op::InsertMany(xs) => {
                for x in xs {
                    let e = entity(x);
                    if s.insert(e) {
                        m.insert(e.index(), (e, HashMap::new()));
                    }
                }
            }
            Op::Remove(x) => {
                let e = entity(x);
                assert_eq!(s.remove(e), live(&m, e));
                if live(&m, e) {
                    m.remove(&e.index());
                }
            }
            Op::RemoveMany(xs) => {
                for x in xs {
                    let e = entity(x);
                    if s.remove(e) {
                        m.remove(&e.index());
                    }
                }
            }
            Op::Set(x, v) => {
                let e = entity(x);
                let (k, val) = (path(v), value(v));
                assert_eq!(s.set(e, k, &val), live(&m, e));
                if live(&m, e) {
                    m.get_mut(&e.index()).unwrap().1.insert(k, val);
                }
            }
            Op::Retain(p) => {
                for (h, data) in m.values_mut() {
                    let k = path(u16::from(p));
                    assert_eq!(s.remove_key(*h, k), data.remove(&k).is_some());
                }
            }
            Op::Get(x) => assert_eq!(s.get(entity(x)).is_some(), live(&m, entity(x))),
            Op::GetForged(bits) => {
                if let Some(h) = Handle::from_bits(bits) {
                    assert_eq!(s.contains(h), live(&m, h));
                }
            }
            Op::Clear | Op::Reset => {
                s.clear();
                m.clear();
            }
            Op::Defragment(_) | Op::ShrinkToFit => s.compact(),
            Op::RoundTrip => {
                let b = s.to_bytes();
                let back = DataStore::from_bytes(&b).unwrap();
                assert_eq!(back, s);
                s = back;
            }
            Op::Sort | Op::Reserve(_) => {}
        }
        check(&s, &m);
    }
});
