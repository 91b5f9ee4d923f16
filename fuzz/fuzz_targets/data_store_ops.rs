//! Random programs on a `DataStore`, checked against a model of its slots after every step.
//! Keys are a local key type with `Handle`'s layout whose bits are not checked, so forged keys
//! (bit 31 of the tag set, generation 0, index `u32::MAX`) reach the store as a bytemuck cast
//! would make them. Reads the shared `Op` enum: `Insert` inserts an entity (index, generation
//! and type id from the number; small indices, far ones and one above the bound), `GetForged`
//! inserts a key from raw bits, `InsertMany` gives an entity a whole component, `Remove`
//! removes one, `Set(e, v)` sets a value whose path, type (integers included) and size come
//! from `v`, by path string or by key, `Retain` removes a key, `Get` looks up, `Reserve` moves
//! the index bound, `Clear`, `Defragment`/`ShrinkToFit` compact, `RoundTrip` goes through
//! bytes. Every refusal must leave the memory as it was.
#![no_main]

use std::collections::HashMap;
use std::num::NonZeroU16;

use dod::data::{DataComponent, DataKey, DataStore, OwnedValue};
use dod::{InsertErrorKind, Key};
use dod_fuzz::Op;
use libfuzzer_sys::fuzz_target;

/// `Handle`'s layout (index 32 bits, generation 16, type id 15, one reserved bit) with no
/// checks: any `u64` but 0 is a key, as `Option<Handle>` from bytemuck would give.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
struct Raw(u64);

impl Raw {
    fn new(index: u32, generation: u16, type_id: u16) -> Raw {
        Raw(u64::from(index) | u64::from(generation) << 32 | u64::from(type_id & 0x7FFF) << 48)
    }
    fn generation(self) -> u16 {
        (self.0 >> 32) as u16
    }
    fn type_id(self) -> u16 {
        (self.0 >> 48) as u16 & 0x7FFF
    }
    /// What `Handle::from_bits` accepts.
    fn well_formed(self) -> bool {
        self.0 >> 63 == 0 && self.generation() != 0 && self.0 as u32 != u32::MAX
    }
}

impl Key for Raw {
    const MAX_SLOTS: u32 = u32::MAX;
    const MAX_TYPE_ID: u16 = 0x7FFF;
    fn from_parts(index: u32, generation: NonZeroU16, type_id: u16) -> Self {
        Raw::new(index, generation.get(), type_id)
    }
    fn index(self) -> u32 {
        self.0 as u32
    }
    fn generation(self) -> u16 {
        Raw::generation(self)
    }
    fn type_id(self) -> u16 {
        Raw::type_id(self)
    }
    fn tag(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

const FAR: [u32; 4] = [3_000_000_000, 3_000_000_001, u32::MAX - 2, u32::MAX - 1];

fn entity(x: u16) -> Raw {
    let i = x % 24;
    let index = if i >= 20 {
        FAR[usize::from(i - 20)]
    } else {
        u32::from(i)
    };
    Raw::new(index, 1 + (x >> 8) % 3, (x >> 11) & 1)
}

fn path(p: u16) -> (DataKey, Option<&'static str>) {
    // A few keys, so they repeat, and the keys at both ends of the hash range.
    match p % 8 {
        6 => (DataKey::from_raw(0), None),
        7 => (DataKey::from_raw(u32::MAX), None),
        p => {
            let text = ["a", "b.c", "d", "e.f.g", "h", "i"][usize::from(p)];
            (DataKey::from_path(text), Some(text))
        }
    }
}

fn value(v: u16) -> OwnedValue {
    let size = usize::from(v >> 5) % 300;
    match (v >> 3) % 5 {
        0 => OwnedValue::Bool(v & 1 != 0),
        1 => OwnedValue::F32(f32::from(v)),
        2 => OwnedValue::String("z".repeat(size)),
        3 => OwnedValue::F32s((0..size / 4).map(|i| i as f32).collect()),
        _ => OwnedValue::I64(match v & 3 {
            0 => i64::MIN,
            1 => i64::MAX,
            2 => entity(v).0 as i64,
            _ => i64::from(v) << 40 | i64::from(v),
        }),
    }
}

/// What a slot holds: its last key's generation and type id, and the live entity's entries.
type Slot = (u16, u16, Option<HashMap<DataKey, OwnedValue>>);
type Model = HashMap<u32, Slot>;

fn live(m: &Model, e: Raw) -> bool {
    e.well_formed()
        && m.get(&e.index())
            .is_some_and(|(g, t, d)| *g == e.generation() && *t == e.type_id() && d.is_some())
}

/// The model's answer to inserting `e`: fresh, already there, or refused.
fn rule(m: &Model, e: Raw, max: u32) -> Result<bool, InsertErrorKind> {
    if !e.well_formed() {
        return Err(InsertErrorKind::MalformedKey);
    }
    // Only a new entry is bounded: an entry the store holds above a lowered bound stays and
    // can be replaced, and an old key there is refused for its age first.
    let new_entry = || {
        if e.index() > max {
            Err(InsertErrorKind::IndexAboveMax {
                index: e.index(),
                max,
            })
        } else {
            Ok(true)
        }
    };
    match m.get(&e.index()) {
        None => new_entry(),
        Some((g, t, d)) => {
            if e.generation() > *g {
                if d.is_some() {
                    Ok(true)
                } else {
                    new_entry()
                }
            } else if e.generation() < *g {
                Err(InsertErrorKind::StaleKey)
            } else if e.type_id() != *t {
                Err(InsertErrorKind::ForeignKey)
            } else if d.is_none() {
                new_entry()
            } else {
                Ok(false)
            }
        }
    }
}

fn check(s: &DataStore<Raw>, m: &Model, named: &HashMap<DataKey, &str>) {
    let n = m.values().filter(|(_, _, d)| d.is_some()).count();
    assert_eq!(s.len(), n);
    for (&index, (g, t, data)) in m {
        let e = Raw::new(index, *g, *t);
        match data {
            Some(data) => {
                let v = s.get(e).expect("live entity has data");
                assert_eq!(v.len(), data.len());
                for (k, val) in data {
                    assert_eq!(v.get(*k).map(|x| x.to_owned()).as_ref(), Some(val));
                }
            }
            None => assert!(s.get(e).is_none()),
        }
    }
    let keys: Vec<Raw> = s.keys().collect();
    assert_eq!(keys.len(), n);
    assert!(keys.iter().all(|k| live(m, *k)));
    assert!(keys.windows(2).all(|w| w[0].index() < w[1].index()));
    assert_eq!(s.names().len(), named.len());
    assert!(s.fragmentation() <= s.free_bytes());
}

/// Inserts `e` into the store and, if the rules say so, the model; a refusal must allocate
/// nothing.
fn insert(s: &mut DataStore<Raw>, m: &mut Model, max: u32, e: Raw) {
    let want = rule(m, e, max);
    let before = s.memory_usage();
    assert_eq!(s.try_insert(e).map_err(|x| x.kind()), want, "{e:?}");
    match want {
        Ok(true) => {
            m.insert(
                e.index(),
                (e.generation(), e.type_id(), Some(HashMap::new())),
            );
        }
        Ok(false) => {}
        Err(_) => {
            assert_eq!(s.memory_usage(), before, "a refusal allocates nothing");
            assert!(!s.contains(e) || live(m, e));
        }
    }
}

fuzz_target!(|ops: Vec<Op>| {
    let mut s: DataStore<Raw> = DataStore::new();
    let mut max = s.max_index();
    let mut m: Model = HashMap::new();
    let mut named: HashMap<DataKey, &str> = HashMap::new();
    for op in ops {
        match op {
            Op::Insert(x) => insert(&mut s, &mut m, max, entity(x)),
            Op::GetForged(bits) => {
                if bits != 0 {
                    let e = Raw(bits);
                    insert(&mut s, &mut m, max, e);
                    assert_eq!(s.contains(e), live(&m, e));
                }
            }
            Op::InsertMany(xs) => {
                let Some((&first, rest)) = xs.split_first() else {
                    continue;
                };
                let e = entity(first);
                let mut c = DataComponent::new();
                let mut data = HashMap::new();
                for &v in rest {
                    let ((k, _), val) = (path(v), value(v));
                    c.set(k, &val);
                    data.insert(k, val);
                }
                let want = rule(&m, e, max);
                let got = s.try_insert_data(e, &c).map_err(|x| x.kind());
                assert_eq!(got, want);
                if got.is_ok() {
                    m.insert(e.index(), (e.generation(), e.type_id(), Some(data)));
                }
            }
            Op::Remove(x) => {
                let e = entity(x);
                let was = live(&m, e);
                assert_eq!(s.remove(e), was);
                if was {
                    m.get_mut(&e.index()).unwrap().2 = None;
                }
            }
            Op::RemoveMany(xs) => {
                for x in xs {
                    let e = entity(x);
                    if s.remove(e) {
                        m.get_mut(&e.index()).unwrap().2 = None;
                    }
                }
            }
            Op::Set(x, v) => {
                let e = entity(x);
                let ((k, text), val) = (path(v), value(v));
                let by_path = v & 0x8000 != 0;
                let done = match (by_path, text) {
                    (true, Some(text)) => s.set(e, text, &val),
                    _ => s.set(e, k, &val),
                };
                assert_eq!(done, live(&m, e));
                if done {
                    m.get_mut(&e.index())
                        .unwrap()
                        .2
                        .as_mut()
                        .unwrap()
                        .insert(k, val);
                    if let (true, Some(text)) = (by_path, text) {
                        named.insert(k, text);
                    }
                }
            }
            Op::Retain(p) => {
                let k = path(u16::from(p)).0;
                for (&index, (g, t, data)) in m.iter_mut() {
                    if let Some(data) = data {
                        let e = Raw::new(index, *g, *t);
                        assert_eq!(s.remove_key(e, k), data.remove(&k).is_some());
                    }
                }
            }
            Op::Get(x) => {
                let e = entity(x);
                assert_eq!(s.get(e).is_some(), live(&m, e));
                assert_eq!(s.contains(e), live(&m, e));
            }
            Op::Reserve(n) => {
                // The bound moves; components above it stay.
                max = match n % 4 {
                    0 => 19,
                    1 => 3_000_000_000,
                    2 => u32::MAX - 2,
                    _ => u32::MAX - 1,
                };
                s.set_max_index(max);
            }
            Op::Clear | Op::Reset => {
                s.clear();
                for slot in m.values_mut() {
                    slot.2 = None;
                }
            }
            Op::Defragment(_) | Op::ShrinkToFit => {
                s.compact();
                if s.free_bytes() > 0 {
                    assert!(s.fragmentation() < s.free_bytes() - s.fragmentation());
                }
            }
            Op::RoundTrip => {
                let b = s.to_bytes();
                let back = DataStore::<Raw>::from_bytes(&b).expect("saved bytes load");
                assert_eq!(back, s);
                s = back.with_max_index(max);
                named.clear();
            }
            Op::Sort => s.assert_invariants(),
        }
        check(&s, &m, &named);
    }
    s.assert_invariants();
});
