//! Model test: `DataStore` against a `HashMap` of entities to `HashMap<String, OwnedValue>`,
//! checked after every step: growth and shrink of components, removal, stale handles, byte
//! round trips and compaction.

use std::collections::HashMap;

use dod::data::{DataComponent, DataStore, DataView, OwnedValue};
use dod::Handle;
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 1000 },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

const PATHS: &[&str] = &[
    "name",
    "stats.health",
    "stats.mana",
    "status_effects.drunk",
    "a.b",
    "x0",
    "x1",
    "x2",
    // Hashes to 0xFFFF_FFFF, the largest key there is.
    "item828385.I8",
];

fn value() -> impl Strategy<Value = OwnedValue> {
    prop_oneof![
        any::<bool>().prop_map(OwnedValue::Bool),
        (-1e6f32..1e6).prop_map(OwnedValue::F32),
        "[a-z]{0,80}".prop_map(OwnedValue::String),
        prop::collection::vec(-1e3f32..1e3, 0..40).prop_map(OwnedValue::F32s),
    ]
}

#[derive(Clone, Debug)]
enum Op {
    /// Insert entity index with a generation.
    Insert(u32, u16),
    Remove(u32, u16),
    Set(u32, u16, usize, OwnedValue),
    RemoveKey(u32, u16, usize),
    /// Give an entity a whole component holding these entries.
    InsertData(u32, u16, Vec<(usize, OwnedValue)>),
    RoundTrip,
    Compact,
    Clear,
}

fn op() -> impl Strategy<Value = Op> {
    let e = 0u32..12;
    let g = 1u16..3;
    prop_oneof![
        3 => (e.clone(), g.clone()).prop_map(|(e, g)| Op::Insert(e, g)),
        1 => (e.clone(), g.clone()).prop_map(|(e, g)| Op::Remove(e, g)),
        8 => (e.clone(), g.clone(), 0..PATHS.len(), value()).prop_map(|(e, g, p, v)| Op::Set(e, g, p, v)),
        3 => (e.clone(), g.clone(), 0..PATHS.len()).prop_map(|(e, g, p)| Op::RemoveKey(e, g, p)),
        1 => (e, g, prop::collection::vec((0..PATHS.len(), value()), 0..6))
            .prop_map(|(e, g, kv)| Op::InsertData(e, g, kv)),
        1 => Just(Op::RoundTrip),
        1 => Just(Op::Compact),
        1 => Just(Op::Clear),
    ]
}

type Model = HashMap<u32, (u16, HashMap<&'static str, OwnedValue>)>;

fn h(e: u32, g: u16) -> Handle {
    Handle::new(e, g, 0).unwrap()
}

fn check(s: &DataStore, m: &Model) {
    assert_eq!(s.len(), m.len());
    for e in 0..12 {
        for g in 1..3 {
            let live = m.get(&e).filter(|(mg, _)| *mg == g);
            assert_eq!(s.contains(h(e, g)), live.is_some());
            match (s.get(h(e, g)), live) {
                (None, None) => {}
                (Some(view), Some((_, data))) => {
                    assert_eq!(view.len(), data.len());
                    for p in PATHS {
                        assert_eq!(view.get(*p).map(|v| v.to_owned()).as_ref(), data.get(p));
                    }
                    assert!(DataView::new(view.as_bytes()).is_ok());
                }
                (a, b) => panic!("entity {e} gen {g}: store {a:?}, model {b:?}"),
            }
        }
    }
    let mut ents: Vec<(u32, u16)> = s.keys().map(|k| (k.index(), k.generation())).collect();
    let mut expect: Vec<(u32, u16)> = m.iter().map(|(e, (g, _))| (*e, *g)).collect();
    expect.sort();
    ents.sort();
    assert_eq!(ents, expect);
    assert!(s.fragmentation() <= s.free_bytes());
    assert!(s.free_bytes() <= s.capacity());
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn store_matches_model(ops in prop::collection::vec(op(), 1..if cfg!(miri) { 12 } else { 80 })) {
        let mut s: DataStore = DataStore::new();
        let mut m = Model::new();
        for op in ops {
            match op {
                Op::Insert(e, g) => {
                    let fresh = m.get(&e).is_none_or(|(mg, _)| *mg != g);
                    assert_eq!(s.insert(h(e, g)), fresh);
                    if fresh {
                        m.insert(e, (g, HashMap::new()));
                    }
                }
                Op::Remove(e, g) => {
                    let live = m.get(&e).is_some_and(|(mg, _)| *mg == g);
                    assert_eq!(s.remove(h(e, g)), live);
                    if live {
                        m.remove(&e);
                    }
                }
                Op::Set(e, g, p, v) => {
                    let live = m.get_mut(&e).filter(|(mg, _)| *mg == g);
                    assert_eq!(s.set(h(e, g), PATHS[p], &v), live.is_some());
                    if let Some((_, data)) = live {
                        data.insert(PATHS[p], v);
                    }
                }
                Op::RemoveKey(e, g, p) => {
                    let live = m.get_mut(&e).filter(|(mg, _)| *mg == g);
                    let had = live.map(|(_, d)| d.remove(PATHS[p]).is_some()).unwrap_or(false);
                    assert_eq!(s.remove_key(h(e, g), PATHS[p]), had);
                }
                Op::InsertData(e, g, kv) => {
                    let mut c = DataComponent::new();
                    let mut data = HashMap::new();
                    for (p, v) in kv {
                        c.set(PATHS[p], &v);
                        data.insert(PATHS[p], v);
                    }
                    let had = m.get(&e).is_some_and(|(mg, _)| *mg == g);
                    assert_eq!(s.insert_data(h(e, g), &c), had);
                    m.insert(e, (g, data));
                }
                Op::RoundTrip => {
                    let bytes = s.to_bytes();
                    let back = DataStore::from_bytes(&bytes).unwrap();
                    assert_eq!(back, s);
                    s = back;
                }
                Op::Compact => {
                    s.compact();
                }
                Op::Clear => {
                    s.clear();
                    m.clear();
                }
            }
            check(&s, &m);
        }
    }
}

#[test]
fn corrupted_store_bytes_never_panic() {
    let mut s: DataStore = DataStore::new();
    for i in 0..4 {
        s.insert(h(i, 1));
        assert!(s.set(h(i, 1), "name", "someone"));
        assert!(s.set(h(i, 1), "hp", i as f32));
    }
    s.remove(h(2, 1));
    let good = s.to_bytes();
    let step = if cfg!(miri) { 23 } else { 1 };
    for i in (0..good.len()).step_by(step) {
        for bit in [0, 3, 5, 7] {
            let mut b = good.clone();
            b[i] ^= 1 << bit;
            if let Ok(mut t) = DataStore::<Handle>::from_bytes(&b) {
                for (e, v) in t.iter() {
                    let _ = v.get("name");
                    let _ = format!("{e:?}{v:?}");
                }
                let ents: Vec<Handle> = t.keys().collect();
                for e in ents {
                    assert!(t.set(e, "name", "a much longer name than before, to move blocks"));
                    let _ = t.remove_key(e, "hp");
                }
                t.insert(h(9, 1));
                t.compact();
            }
        }
        let _ = DataStore::<Handle>::from_bytes(&good[..i]);
    }
}
