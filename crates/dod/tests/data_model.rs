//! Model tests: `DataComponent` against `HashMap<String, OwnedValue>`, checked after every
//! step: values of every type (integers at both ends of `i64`, a handle's bits), the names kept
//! for paths given as strings, byte round trips, and (feature `json`) JSON round trips with
//! named and unnamed keys and the depth bound.

use std::collections::{HashMap, HashSet};

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

/// Integers worth a special look: both ends of `i64`, around 2^24 (where `f32` stops being
/// exact) and the bits of handles.
fn special_integers() -> Vec<i64> {
    vec![
        i64::MIN,
        i64::MAX,
        i64::MIN + 1,
        i64::MAX - 1,
        0,
        -1,
        1 << 24,
        (1 << 24) + 1,
        dod::Handle::new(u32::MAX - 1, u16::MAX, 0x7FFF)
            .unwrap()
            .to_bits() as i64,
        dod::Handle::new(7, 1, 0).unwrap().to_bits() as i64,
    ]
}

fn value() -> impl Strategy<Value = OwnedValue> {
    prop_oneof![
        any::<bool>().prop_map(OwnedValue::Bool),
        (-1e6f32..1e6).prop_map(OwnedValue::F32),
        "[a-zé😀]{0,40}".prop_map(OwnedValue::String),
        prop::collection::vec(-1e3f32..1e3, 0..20).prop_map(OwnedValue::F32s),
        any::<i64>().prop_map(OwnedValue::I64),
        prop::sample::select(special_integers()).prop_map(OwnedValue::I64),
    ]
}

#[derive(Clone, Debug)]
enum Op {
    /// Set by the path string (the component keeps its name).
    Set(usize, OwnedValue),
    /// Set by `DataKey` (no name).
    SetKey(usize, OwnedValue),
    Remove(usize),
    Clear,
    Compact,
    RoundTrip,
    Merge(Vec<(usize, OwnedValue)>),
    DiffApply(Vec<(usize, Option<OwnedValue>)>),
    /// Write JSON with the component's own names and read it back (feature `json`).
    Json,
}

fn op() -> impl Strategy<Value = Op> {
    let path = 0..PATHS.len();
    prop_oneof![
        5 => (path.clone(), value()).prop_map(|(p, v)| Op::Set(p, v)),
        3 => (path.clone(), value()).prop_map(|(p, v)| Op::SetKey(p, v)),
        1 => Just(Op::Json),
        3 => path.clone().prop_map(Op::Remove),
        1 => Just(Op::Clear),
        1 => Just(Op::Compact),
        1 => Just(Op::RoundTrip),
        1 => prop::collection::vec((path.clone(), value()), 0..6).prop_map(Op::Merge),
        1 => prop::collection::vec((path, prop::option::of(value())), 0..6).prop_map(Op::DiffApply),
    ]
}

type Model = HashMap<String, OwnedValue>;

/// The bytes of a packed component holding `m`, by the formula of the docs: a 16-byte header,
/// 9 per key, 8 per `i64`, and 4 + the bytes of each string or float array.
fn documented_size(m: &Model) -> usize {
    16 + m
        .values()
        .map(|v| {
            9 + match v {
                OwnedValue::Bool(_) | OwnedValue::F32(_) => 0,
                OwnedValue::I64(_) => 8,
                OwnedValue::String(s) => 4 + s.len(),
                OwnedValue::F32s(f) => 4 + 4 * f.len(),
            }
        })
        .sum::<usize>()
}

fn check(c: &DataComponent, m: &Model, named: &HashSet<&str>) {
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
        assert_eq!(
            c.get_i64(*p),
            match v {
                Some(OwnedValue::I64(i)) => Some(*i),
                _ => None,
            }
        );
        assert_eq!(
            c.get_f64(*p).map(f64::to_bits),
            match v {
                Some(OwnedValue::F32(f)) => Some(f64::from(*f).to_bits()),
                Some(OwnedValue::I64(i)) => Some((*i as f64).to_bits()),
                _ => None,
            }
        );
        if let Some(a) = c.get_f32s(*p) {
            // Indices whose byte offset overflows read nothing, in debug builds too.
            for i in [a.len(), usize::MAX / 4, usize::MAX / 4 + 1, usize::MAX] {
                assert_eq!(a.get(i), None);
            }
        }
        let name = c.names().name(DataKey::from_path(p));
        assert_eq!(
            name.as_deref(),
            named.contains(p).then_some(*p),
            "name of {p}"
        );
    }
    assert_eq!(c.names().len(), named.len());
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
        // The paths set by string since the component was last read from bytes.
        let mut named: HashSet<&str> = HashSet::new();
        for op in ops {
            match op {
                Op::Set(p, v) => {
                    c.set(PATHS[p], &v);
                    m.insert(PATHS[p].to_string(), v);
                    named.insert(PATHS[p]);
                }
                Op::SetKey(p, v) => {
                    c.set(DataKey::from_path(PATHS[p]), &v);
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
                    if !m.is_empty() {
                        assert_eq!(c.as_bytes().len(), documented_size(&m));
                    }
                }
                Op::RoundTrip => {
                    let back = DataComponent::from_bytes(c.as_bytes()).unwrap();
                    assert_eq!(back.as_bytes(), c.as_bytes());
                    c = back;
                    // Names are not part of the bytes.
                    named.clear();
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
                Op::Json => {
                    #[cfg(feature = "json")]
                    json::round_trip(&c, &m, &named);
                }
            }
            check(&c, &m, &named);
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
#[test]
fn floats_get_past_the_end_is_none_even_where_the_offset_overflows() {
    let mut c = DataComponent::new();
    c.set("a", &[1.0, 2.0]);
    let a = c.get_f32s("a").unwrap();
    assert_eq!(a.get(1), Some(2.0));
    for i in [
        2,
        usize::MAX / 4 - 1,
        usize::MAX / 4,
        usize::MAX / 4 + 1,
        usize::MAX,
    ] {
        assert_eq!(a.get(i), None, "{i}");
    }
}

#[test]
fn integers_round_trip_through_bytes_exactly() {
    let mut c = DataComponent::new();
    for (n, &i) in special_integers().iter().enumerate() {
        c.set(DataKey::ROOT.child(&n.to_string()), i);
    }
    let back = DataComponent::from_bytes(c.as_bytes()).unwrap();
    for (n, &i) in special_integers().iter().enumerate() {
        assert_eq!(back.get_i64(DataKey::ROOT.child(&n.to_string())), Some(i));
    }
    // A handle's bits come back as the same handle.
    let h = dod::Handle::new(4_000_000_000, 9, 3).unwrap();
    c.set("target", h.to_bits() as i64);
    let bits = DataView::new(c.as_bytes())
        .unwrap()
        .get_i64("target")
        .unwrap();
    assert_eq!(dod::Handle::from_bits(bits as u64), Some(h));
    // Replacing an integer by a string and back reuses or frees its 8-byte record.
    c.set("target", "a string of some length");
    c.set("target", -5);
    assert_eq!(c.get_i64("target"), Some(-5));
    DataView::new(c.as_bytes()).unwrap();
}

#[test]
fn names_of_paths_given_as_strings_are_kept() {
    use dod::data::{KeyNames, NameError, MAX_PATH_DEPTH};
    let mut c = DataComponent::new();
    c.set("status.poisoned", true);
    c.set(dod::data_key!("status.cursed"), true);
    let poisoned = DataKey::from_path("status.poisoned");
    assert_eq!(c.names().name(poisoned).as_deref(), Some("status.poisoned"));
    assert_eq!(c.names().name(DataKey::from_path("status.cursed")), None);
    // Removing keeps the name; bytes carry none.
    assert!(c.remove("status.poisoned"));
    assert!(c.names().name(poisoned).is_some());
    assert!(DataComponent::from_bytes(c.as_bytes())
        .unwrap()
        .names()
        .is_empty());
    // The depth bound, exactly at and one past it.
    let path = |n: usize| vec!["s"; n].join(".");
    let mut names = KeyNames::new();
    assert!(names.register(&path(MAX_PATH_DEPTH)).is_ok());
    assert_eq!(
        names.register(&path(MAX_PATH_DEPTH + 1)),
        Err(NameError::TooDeep {
            depth: MAX_PATH_DEPTH + 1
        })
    );
    assert_eq!(
        names.register(&path(20_000)),
        Err(NameError::TooDeep { depth: 20_000 })
    );
    let mut d = DataComponent::new();
    d.set(path(MAX_PATH_DEPTH).as_str(), 1);
    d.set(path(MAX_PATH_DEPTH + 1).as_str(), 2);
    d.set(path(20_000).as_str(), 3);
    assert_eq!(d.len(), 3);
    assert_eq!(
        d.names().len(),
        1,
        "only the path within the bound is named"
    );
}

#[cfg(feature = "json")]
mod json {
    use super::*;
    use dod::data::{JsonError, KeyNames, MAX_PATH_DEPTH};

    /// Writes `c` with its own names, predicts a conflict (a named path that is a prefix of
    /// another), and otherwise reads the text back: same entries, the names registered are
    /// exactly the named paths present, and writing again gives the same text.
    pub(super) fn round_trip(c: &DataComponent, m: &Model, named: &HashSet<&str>) {
        let present: Vec<&str> = named
            .iter()
            .copied()
            .filter(|p| m.contains_key(*p))
            .collect();
        let conflict = present.iter().any(|p| {
            present
                .iter()
                .any(|q| q.len() > p.len() && q.starts_with(p) && q.as_bytes()[p.len()] == b'.')
        });
        let written = c.to_json(&KeyNames::new());
        if conflict {
            assert!(
                matches!(written, Err(JsonError::PathConflict { .. })),
                "{written:?}"
            );
            return;
        }
        let text = written.unwrap();
        let mut names = KeyNames::new();
        let back = DataComponent::from_json(&text, &mut names).unwrap();
        assert_eq!(&back, c, "{text}");
        let mut registered: Vec<String> =
            names.iter().map(|(k, _)| names.name(k).unwrap()).collect();
        registered.sort();
        let mut expect: Vec<String> = present.iter().map(|p| p.to_string()).collect();
        expect.sort();
        assert_eq!(registered, expect);
        assert_eq!(back.to_json(&names).unwrap(), text);
    }

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
            any::<f32>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(OwnedValue::F32),
            "[a-z\"\\\\é]{0,12}".prop_map(OwnedValue::String),
            prop::collection::vec(-1e3f32..1e3, 0..5).prop_map(OwnedValue::F32s),
            any::<i64>().prop_map(OwnedValue::I64),
            prop::sample::select(special_integers()).prop_map(OwnedValue::I64),
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
                c.set(DataKey::from_path(LEAVES[*p]), v);
            }
            let text = c.to_json(&names).unwrap();
            let mut names2 = KeyNames::new();
            let back = DataComponent::from_json(&text, &mut names2).unwrap();
            prop_assert_eq!(&back, &c);
            prop_assert_eq!(back.to_json(&names2).unwrap(), text);
        }

        /// Keys without names, anywhere in the hash range, mixed with named ones: written by
        /// hash, read back as the same keys, registering no name for them.
        #[test]
        fn unnamed_keys_round_trip(
            raw in prop::collection::vec((any::<u32>(), finite_value()), 0..8),
            named in prop::collection::vec((0..LEAVES.len(), finite_value()), 0..4),
        ) {
            let mut c = DataComponent::new();
            for (k, v) in &raw {
                c.set(DataKey::from_raw(*k), v);
            }
            for (p, v) in &named {
                c.set(LEAVES[*p], v);
            }
            let text = c.to_json(&KeyNames::new()).unwrap();
            let mut names = KeyNames::new();
            let back = DataComponent::from_json(&text, &mut names).unwrap();
            prop_assert_eq!(&back, &c);
            prop_assert_eq!(names.len(), c.names().len());
            prop_assert_eq!(back.to_json(&names).unwrap(), text);
        }
    }

    fn nested(depth: usize) -> String {
        let mut s = String::new();
        for i in 0..depth {
            s.push_str(&format!("{{\"s{i}\":"));
        }
        s.push('1');
        s.push_str(&"}".repeat(depth));
        s
    }

    #[test]
    fn one_depth_bound_for_register_to_json_and_from_json() {
        let path = |n: usize| {
            (0..n)
                .map(|i| format!("s{i}"))
                .collect::<Vec<_>>()
                .join(".")
        };
        // At the bound: set by path (named), written nested, read back.
        let mut c = DataComponent::new();
        c.set(path(MAX_PATH_DEPTH).as_str(), 1);
        let text = c.to_json(&KeyNames::new()).unwrap();
        assert_eq!(text, nested(MAX_PATH_DEPTH));
        let mut names = KeyNames::new();
        let back = DataComponent::from_json(&text, &mut names).unwrap();
        assert_eq!(back, c);
        assert_eq!(names.len(), 1);
        // One past: no name is kept, so the key is written by hash, and reads back.
        let mut deep = DataComponent::new();
        deep.set(path(MAX_PATH_DEPTH + 1).as_str(), 2);
        let text = deep.to_json(&KeyNames::new()).unwrap();
        let hash = DataKey::from_path(&path(MAX_PATH_DEPTH + 1)).to_raw();
        assert_eq!(text, format!("{{\"#{hash:08x}\":2}}"));
        assert_eq!(
            DataComponent::from_json(&text, &mut KeyNames::new()).unwrap(),
            deep
        );
        // Reading one past, or far past, the bound is refused with the depth.
        for depth in [MAX_PATH_DEPTH + 1, 1_000, 20_000] {
            assert_eq!(
                DataComponent::from_json(&nested(depth), &mut names),
                Err(JsonError::TooDeep { depth })
            );
        }
        assert_eq!(names.len(), 1, "a refused input registers nothing");
    }

    #[test]
    fn set_by_path_names_what_to_json_writes() {
        let mut c = DataComponent::new();
        c.set("status.poisoned", 3);
        c.set("stats.health", 10.5);
        assert_eq!(
            c.to_json(&KeyNames::new()).unwrap(),
            r#"{"stats":{"health":10.5},"status":{"poisoned":3}}"#
        );
    }
}
