//! Model tests: `DataComponent` and `DataStore` against `HashMap<String, OwnedValue>`, checked
//! after every step.

use std::collections::HashMap;

use dod::data::{DataComponent, DataKey, DataView, OwnedValue, Patch, Value};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 1000 },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Program length: short under Miri, which runs the same code a thousand times slower.
fn max_ops() -> usize {
    if cfg!(miri) {
        12
    } else {
        60
    }
}

/// A small set of paths, so that sets hit existing keys often.
const PATHS: &[&str] = &[
    "name",
    "stats.health",
    "stats.mana",
    "status_effects.drunk",
    "status_effects.delirious",
    "a",
    "a.b",
    "a.b.c",
    "inventory.sword",
    "inventory.shield",
    "x0",
    "x1",
    "x2",
    "x3",
    "x4",
    "x5",
    // Hashes to 0xFFFF_FFFF, the largest key there is.
    "item828385.I8",
];

fn value() -> impl Strategy<Value = OwnedValue> {
    prop_oneof![
        any::<bool>().prop_map(OwnedValue::Bool),
        (-1e6f32..1e6).prop_map(OwnedValue::F32),
        "[a-zé😀]{0,40}".prop_map(OwnedValue::String),
        prop::collection::vec(-1e3f32..1e3, 0..20).prop_map(OwnedValue::F32s),
    ]
}

#[derive(Clone, Debug)]
enum Op {
    Set(usize, OwnedValue),
    Remove(usize),
    Clear,
    Compact,
    RoundTrip,
    Merge(Vec<(usize, OwnedValue)>),
    DiffApply(Vec<(usize, Option<OwnedValue>)>),
}

fn op() -> impl Strategy<Value = Op> {
    let path = 0..PATHS.len();
    prop_oneof![
        8 => (path.clone(), value()).prop_map(|(p, v)| Op::Set(p, v)),
        3 => path.clone().prop_map(Op::Remove),
        1 => Just(Op::Clear),
        1 => Just(Op::Compact),
        1 => Just(Op::RoundTrip),
        1 => prop::collection::vec((path.clone(), value()), 0..6).prop_map(Op::Merge),
        1 => prop::collection::vec((path, prop::option::of(value())), 0..6).prop_map(Op::DiffApply),
    ]
}

type Model = HashMap<String, OwnedValue>;

fn check(c: &DataComponent, m: &Model) {
    assert_eq!(c.len(), m.len());
    assert_eq!(c.is_empty(), m.is_empty());
    for p in PATHS {
        let got = c.get(*p).map(|v| v.to_owned());
        assert_eq!(got.as_ref(), m.get(*p), "path {p}");
        assert_eq!(c.contains(*p), m.contains_key(*p));
        let v = m.get(*p);
        assert_eq!(
            c.get_f32(*p),
            match v {
                Some(OwnedValue::F32(f)) => Some(*f),
                _ => None,
            }
        );
        assert_eq!(
            c.get_bool(*p),
            match v {
                Some(OwnedValue::Bool(b)) => Some(*b),
                _ => None,
            }
        );
        assert_eq!(
            c.get_str(*p),
            match v {
                Some(OwnedValue::String(s)) => Some(s.as_str()),
                _ => None,
            }
        );
        assert_eq!(
            c.get_f32s(*p).map(|a| a.to_vec()),
            match v {
                Some(OwnedValue::F32s(a)) => Some(a.clone()),
                _ => None,
            }
        );
    }
    // Iteration: sorted by hash, one per model entry.
    let keys: Vec<DataKey> = c.iter().map(|(k, _)| k).collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]));
    let mut expect: Vec<DataKey> = m.keys().map(|p| DataKey::from_path(p)).collect();
    expect.sort();
    assert_eq!(keys, expect);
    // The bytes are always valid and read back the same.
    let view = DataView::new(c.as_bytes()).expect("own bytes validate");
    assert_eq!(view, c.view());
    assert!(c.view().packed_size() + c.hole_bytes() <= c.capacity().max(16));
}

fn apply_model(m: &mut Model, p: usize, v: Option<OwnedValue>) {
    match v {
        Some(v) => {
            m.insert(PATHS[p].to_string(), v);
        }
        None => {
            m.remove(PATHS[p]);
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn component_matches_model(ops in prop::collection::vec(op(), 1..max_ops())) {
        let mut c = DataComponent::new();
        let mut m = Model::new();
        for op in ops {
            match op {
                Op::Set(p, v) => {
                    c.set(PATHS[p], &v);
                    m.insert(PATHS[p].to_string(), v);
                }
                Op::Remove(p) => {
                    assert_eq!(c.remove(PATHS[p]), m.remove(PATHS[p]).is_some());
                }
                Op::Clear => {
                    c.clear();
                    m.clear();
                }
                Op::Compact => {
                    c.compact();
                    assert_eq!(c.hole_bytes(), 0);
                    assert_eq!(c.capacity(), if c.capacity() == 0 { 0 } else { c.view().packed_size() });
                }
                Op::RoundTrip => {
                    let back = DataComponent::from_bytes(c.as_bytes()).unwrap();
                    assert_eq!(back.as_bytes(), c.as_bytes());
                    c = back;
                }
                Op::Merge(entries) => {
                    let mut other = DataComponent::new();
                    for (p, v) in entries {
                        other.set(PATHS[p], &v);
                        m.insert(PATHS[p].to_string(), v);
                    }
                    c.merge_from(&other);
                }
                Op::DiffApply(changes) => {
                    // Change a copy, diff it against the original, apply the diff.
                    let mut changed = c.clone();
                    let mut explicit = Patch::new();
                    for (p, v) in changes {
                        match &v {
                            Some(v) => { changed.set(PATHS[p], v); explicit.set(PATHS[p], v); }
                            None => { changed.remove(PATHS[p]); explicit.remove(PATHS[p]); }
                        }
                        apply_model(&mut m, p, v);
                    }
                    let patch = changed.diff(&c);
                    // The diff holds exactly the real changes.
                    for (k, v) in patch.iter() {
                        match v {
                            Some(v) => assert_ne!(c.get(k), Some(v)),
                            None => assert!(c.contains(k) && !changed.contains(k)),
                        }
                    }
                    let mut via_explicit = c.clone();
                    via_explicit.apply(&explicit);
                    c.apply(&patch);
                    assert_eq!(c, changed);
                    assert_eq!(via_explicit, changed);
                    assert!(c.diff(&changed).is_empty());
                }
            }
            check(&c, &m);
        }
    }
}

#[test]
fn path_of_the_largest_key_hashes_to_it() {
    assert_eq!(DataKey::from_path("item828385.I8").to_raw(), u32::MAX);
}

/// Keys at both ends of the hash range, in components on both sides of the 32-key boundary
/// where the lookup switches from counting to binary search, against a `BTreeMap`.
#[test]
fn extreme_keys_on_both_sides_of_the_search_switch() {
    use std::collections::BTreeMap;
    const EDGES: [u32; 4] = [0, 1, u32::MAX - 1, u32::MAX];
    let sizes: &[u32] = if cfg!(miri) {
        &[0, 31, 33]
    } else {
        &[0, 1, 31, 32, 33, 64, 100]
    };
    for &n in sizes {
        for &edge in &EDGES {
            let mut c = DataComponent::new();
            let mut m: BTreeMap<u32, f32> = BTreeMap::new();
            // Spread keys over the range, away from the edges.
            for i in 0..n {
                let raw = 0x0100_0000 + i.wrapping_mul(0x0123_4567) % 0xF000_0000;
                c.set(DataKey::from_raw(raw), i as f32);
                m.insert(raw, i as f32);
            }
            let probe = |c: &DataComponent, m: &BTreeMap<u32, f32>| {
                assert_eq!(c.len(), m.len());
                for e in EDGES.into_iter().chain(m.keys().copied()) {
                    let k = DataKey::from_raw(e);
                    assert_eq!(c.get_f32(k), m.get(&e).copied(), "n {n}, key {e:#x}");
                    assert_eq!(c.contains(k), m.contains_key(&e), "n {n}, key {e:#x}");
                }
                DataView::new(c.as_bytes()).expect("own bytes validate");
            };
            probe(&c, &m);
            // Removing an absent edge key changes nothing.
            assert_eq!(c.remove(DataKey::from_raw(edge)), m.remove(&edge).is_some());
            probe(&c, &m);
            c.set(DataKey::from_raw(edge), -1.0);
            m.insert(edge, -1.0);
            probe(&c, &m);
            // Merging a component that holds only the edge key into one that lacks it.
            let mut only = DataComponent::new();
            only.set(DataKey::from_raw(edge), -2.0);
            let mut other = DataComponent::new();
            for (&k, &v) in m.iter().filter(|(&k, _)| k != edge) {
                other.set(DataKey::from_raw(k), v);
            }
            let mut merged_model: BTreeMap<u32, f32> = m.clone();
            merged_model.insert(edge, -2.0);
            other.merge_from(only.view());
            probe(&other, &merged_model);
            assert_eq!(c.remove(DataKey::from_raw(edge)), m.remove(&edge).is_some());
            probe(&c, &m);
        }
    }
}

#[test]
fn growth_reclaims_holes() {
    let mut c = DataComponent::new();
    let mut s = String::new();
    let n = if cfg!(miri) { 40 } else { 200 };
    for i in 0..n {
        s.push('x');
        c.set("name", s.as_str());
        c.set(DataKey::ROOT.child("n").child(&i.to_string()), i as f32);
    }
    assert_eq!(c.get_str("name"), Some(s.as_str()));
    assert_eq!(c.len(), n + 1);
    // Growth re-packs, so holes never exceed the data size.
    assert!(c.hole_bytes() <= c.view().packed_size());
}

#[test]
fn corrupted_bytes_never_panic() {
    let mut c = DataComponent::new();
    c.set("name", "The One");
    c.set("stats.health", 100.0);
    c.set("color", &[0.0, 0.5, 0.5, 0.7]);
    c.set("drunk", true);
    let good = c.as_bytes().to_vec();
    let step = if cfg!(miri) { 5 } else { 1 };
    for i in (0..good.len()).step_by(step) {
        for bit in 0..8 {
            let mut b = good.clone();
            b[i] ^= 1 << bit;
            if let Ok(v) = DataView::new(&b) {
                for (k, v2) in v.iter() {
                    assert_eq!(v.get(k), Some(v2));
                }
                let mut owned = DataComponent::from_bytes(&b).unwrap();
                owned.set("name", "another name, longer");
                owned.remove("drunk");
                owned.compact();
            }
        }
        // Truncation.
        let _ = DataView::new(&good[..i]);
    }
}

#[test]
fn value_conversions() {
    let v = OwnedValue::String("x".into());
    assert_eq!(Value::from(&v), Value::Str("x"));
    assert_ne!(Value::F32(0.0), Value::F32(-0.0));
}

/// Restricted JSON round trip: names registered by `from_json` let `to_json` write the same
/// document back, and the component read back is the same. Paths of the same tree can not be
/// both a value and an object, so the generated documents use leaf paths only.
#[cfg(feature = "json")]
mod json {
    use super::*;
    use dod::data::KeyNames;

    const LEAVES: &[&str] = &[
        "name",
        "stats.health",
        "stats.mana",
        "status_effects.drunk",
        "status_effects.delirious",
        "inventory.sword",
        "deep.er.still",
    ];

    fn finite_value() -> impl Strategy<Value = OwnedValue> {
        prop_oneof![
            any::<bool>().prop_map(OwnedValue::Bool),
            (-1e6f32..1e6).prop_map(OwnedValue::F32),
            "[a-z\"\\\\é]{0,12}".prop_map(OwnedValue::String),
            prop::collection::vec(-1e3f32..1e3, 0..5).prop_map(OwnedValue::F32s),
        ]
    }

    proptest! {
        #![proptest_config(config())]

        #[test]
        fn json_round_trip(entries in prop::collection::vec((0..LEAVES.len(), finite_value()), 0..10)) {
            let mut names = KeyNames::new();
            let mut c = DataComponent::new();
            for (p, v) in &entries {
                names.register(LEAVES[*p]).unwrap();
                c.set(LEAVES[*p], v);
            }
            let text = c.to_json(&names).unwrap();
            let mut names2 = KeyNames::new();
            let back = DataComponent::from_json(&text, &mut names2).unwrap();
            prop_assert_eq!(&back, &c);
            prop_assert_eq!(back.to_json(&names2).unwrap(), text);
        }
    }
}
