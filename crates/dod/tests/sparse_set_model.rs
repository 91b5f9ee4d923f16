//! Model tests for `SparseSet`: random programs run against the set and against std models (a
//! `BTreeMap` for the contents, a `Vec` for the dense order the API promises), checked after
//! every step; plus joins, `sort_as`, drop counting and panic safety.

use dod::sparse_set::{SparseSet, TOMBSTONE};
use dod::Handle;
use proptest::prelude::*;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

/// Small pages, so that programs span many of them.
type Set = SparseSet<i32, 16>;

/// An entity as a test names it: an index, and a generation when it is used as a key.
#[derive(Clone, Copy, Debug)]
struct Ent {
    index: u32,
    generation: Option<u16>,
}

fn handle(index: u32, generation: u16) -> Handle {
    Handle::new(index, generation, 0).expect("valid handle")
}

fn ent() -> impl Strategy<Value = Ent> {
    let index = prop_oneof![8 => 0..200u32, 1 => 1_000_000..1_000_008u32];
    (index, prop::option::of(1..4u16)).prop_map(|(index, generation)| Ent { index, generation })
}

#[derive(Clone, Debug)]
enum Op {
    Insert(Ent, i32),
    SwapRemove(Ent),
    ShiftRemove(Ent),
    DeferRemove(Ent),
    Compact,
    Retain(i32),
    RemoveMany(Vec<Ent>),
    GetMut(Ent, i32),
    Clear,
    SortByValue,
    SortUnstableDesc,
    SortAs(Vec<u32>),
    ShrinkToFit,
    Reserve(u8),
    CloneSet,
    RoundTrip,
    DrainAndRefill,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (ent(), any::<i32>()).prop_map(|(e, v)| Op::Insert(e, v)),
        3 => ent().prop_map(Op::SwapRemove),
        2 => ent().prop_map(Op::ShiftRemove),
        3 => ent().prop_map(Op::DeferRemove),
        1 => Just(Op::Compact),
        1 => (2..5i32).prop_map(Op::Retain),
        1 => prop::collection::vec(ent(), 0..8).prop_map(Op::RemoveMany),
        2 => (ent(), any::<i32>()).prop_map(|(e, v)| Op::GetMut(e, v)),
        1 => Just(Op::Clear),
        1 => Just(Op::SortByValue),
        1 => Just(Op::SortUnstableDesc),
        1 => prop::collection::vec(0..200u32, 0..30).prop_map(Op::SortAs),
        1 => Just(Op::ShrinkToFit),
        1 => any::<u8>().prop_map(Op::Reserve),
        1 => Just(Op::CloneSet),
        1 => Just(Op::RoundTrip),
        1 => Just(Op::DrainAndRefill),
    ]
}

/// The order model: the dense arrays as the API promises them.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Slot {
    Live {
        index: u32,
        generation: u16,
        value: i32,
    },
    Tomb,
}

#[derive(Default)]
struct Model {
    dense: Vec<Slot>,
}

impl Model {
    /// Position of a live entity matching `e` (generation checked for keys).
    fn position(&self, e: Ent) -> Option<usize> {
        self.dense.iter().position(|s| match *s {
            Slot::Live {
                index, generation, ..
            } => index == e.index && e.generation.is_none_or(|g| g == generation),
            Slot::Tomb => false,
        })
    }

    fn compact(&mut self) {
        self.dense.retain(|s| *s != Slot::Tomb);
    }

    /// The contents model.
    fn map(&self) -> BTreeMap<u32, (u16, i32)> {
        self.dense
            .iter()
            .filter_map(|s| match *s {
                Slot::Live {
                    index,
                    generation,
                    value,
                } => Some((index, (generation, value))),
                Slot::Tomb => None,
            })
            .collect()
    }

    fn live(&self) -> Vec<(u32, i32)> {
        self.dense
            .iter()
            .filter_map(|s| match *s {
                Slot::Live { index, value, .. } => Some((index, value)),
                Slot::Tomb => None,
            })
            .collect()
    }
}

fn value_of(s: &Slot) -> i32 {
    match s {
        Slot::Live { value, .. } => *value,
        Slot::Tomb => unreachable!("compacted"),
    }
}

fn apply(set: &mut Set, model: &mut Model, op: &Op) {
    match op {
        Op::Insert(e, v) => {
            let old = match e.generation {
                Some(g) => set.insert(handle(e.index, g), *v),
                None => set.insert(e.index, *v),
            };
            let found = model
                .dense
                .iter_mut()
                .find(|s| matches!(s, Slot::Live { index, .. } if *index == e.index));
            match found {
                Some(Slot::Live {
                    generation, value, ..
                }) => {
                    assert_eq!(old, Some(*value));
                    *value = *v;
                    if let Some(g) = e.generation {
                        *generation = g;
                    }
                }
                _ => {
                    assert_eq!(old, None);
                    model.dense.push(Slot::Live {
                        index: e.index,
                        generation: e.generation.unwrap_or(0),
                        value: *v,
                    });
                }
            }
        }
        Op::SwapRemove(e) | Op::ShiftRemove(e) => {
            let shift = matches!(op, Op::ShiftRemove(_));
            let got = match (e.generation, shift) {
                (Some(g), false) => set.swap_remove(handle(e.index, g)),
                (None, false) => set.swap_remove(e.index),
                (Some(g), true) => set.shift_remove(handle(e.index, g)),
                (None, true) => set.shift_remove(e.index),
            };
            let want = model.position(*e).map(|p| {
                let s = if shift {
                    model.dense.remove(p)
                } else {
                    model.dense.swap_remove(p)
                };
                value_of(&s)
            });
            assert_eq!(got, want);
        }
        Op::DeferRemove(e) => {
            let got = match e.generation {
                Some(g) => set.defer_remove(handle(e.index, g)),
                None => set.defer_remove(e.index),
            };
            let want = model
                .position(*e)
                .map(|p| model.dense[p] = Slot::Tomb)
                .is_some();
            assert_eq!(got, want);
        }
        Op::Compact => {
            set.compact();
            model.compact();
        }
        Op::Retain(m) => {
            let mut seen = Vec::new();
            set.retain(|e, v| {
                seen.push(e);
                *v = v.wrapping_add(1);
                *v % m != 0
            });
            model.compact();
            let visited: Vec<u32> = model.live().iter().map(|&(e, _)| e).collect();
            assert_eq!(
                seen, visited,
                "retain visits the live entries in dense order"
            );
            model.dense.retain_mut(|s| match s {
                Slot::Live { value, .. } => {
                    *value = value.wrapping_add(1);
                    *value % m != 0
                }
                Slot::Tomb => false,
            });
        }
        Op::RemoveMany(es) => {
            // Half the time by plain index, half by key (a stale key removes nothing).
            let removed = if es.len() % 2 == 0 {
                let idx: Vec<u32> = es.iter().map(|e| e.index).collect();
                set.remove_many(&idx)
            } else {
                let keys: Vec<Handle> = es
                    .iter()
                    .map(|e| handle(e.index, e.generation.unwrap_or(1)))
                    .collect();
                set.remove_many(&keys)
            };
            let mut want = 0;
            for e in es {
                let e = if es.len() % 2 == 0 {
                    Ent {
                        index: e.index,
                        generation: None,
                    }
                } else {
                    Ent {
                        index: e.index,
                        generation: Some(e.generation.unwrap_or(1)),
                    }
                };
                if let Some(p) = model.position(e) {
                    model.dense[p] = Slot::Tomb;
                    want += 1;
                }
            }
            model.compact();
            assert_eq!(removed, want);
        }
        Op::GetMut(e, v) => {
            let got = match e.generation {
                Some(g) => set.get_mut(handle(e.index, g)),
                None => set.get_mut(e.index),
            };
            match (got, model.position(*e)) {
                (Some(x), Some(p)) => {
                    *x = *v;
                    if let Slot::Live { value, .. } = &mut model.dense[p] {
                        *value = *v;
                    }
                }
                (None, None) => {}
                (g, p) => panic!("get_mut {e:?}: set {g:?}, model {p:?}"),
            }
        }
        Op::Clear => {
            set.clear();
            model.dense.clear();
        }
        Op::SortByValue => {
            set.sort_by(|_, a, _, b| a.cmp(b));
            model.compact();
            model.dense.sort_by_key(value_of);
        }
        Op::SortUnstableDesc => {
            set.sort_unstable_by(|e1, a, e2, b| (b, e2).cmp(&(a, e1)));
            model.compact();
            model.dense.sort_by_key(|s| match s {
                Slot::Live { value, index, .. } => std::cmp::Reverse((*value, *index)),
                Slot::Tomb => unreachable!(),
            });
        }
        Op::SortAs(order) => {
            let other: SparseSet<()> = order.iter().map(|&e| (e, ())).collect();
            set.sort_as(&other);
            model.compact();
            let ours = model.map();
            let mut seen = BTreeSet::new();
            let shared: Vec<u32> = other
                .indices()
                .iter()
                .copied()
                .filter(|e| ours.contains_key(e) && seen.insert(*e))
                .collect();
            assert_eq!(
                &set.indices()[..shared.len()],
                &shared[..],
                "shared prefix in other's order"
            );
            // The rest comes in an unspecified order: adopt the set's, once it is checked to
            // be a permutation of the model's.
            let by_index: BTreeMap<u32, Slot> = model
                .dense
                .iter()
                .map(|s| match s {
                    Slot::Live { index, .. } => (*index, *s),
                    Slot::Tomb => unreachable!(),
                })
                .collect();
            let mut sorted = set.indices().to_vec();
            sorted.sort();
            assert_eq!(sorted, by_index.keys().copied().collect::<Vec<_>>());
            model.dense = set.indices().iter().map(|e| by_index[e]).collect();
        }
        Op::ShrinkToFit => set.shrink_to_fit(),
        Op::Reserve(n) => {
            set.reserve(usize::from(*n));
            assert!(set.capacity() >= set.values().len() + usize::from(*n));
        }
        Op::CloneSet => {
            let c = set.clone();
            *set = c;
        }
        Op::RoundTrip => {
            #[cfg(feature = "serde")]
            {
                let json = serde_json::to_string(&*set).expect("serialises");
                let back: Set = serde_json::from_str(&json).expect("deserialises");
                assert!(back == *set);
                *set = back;
                model.compact();
            }
        }
        Op::DrainAndRefill => {
            let drained = set.drain();
            model.compact();
            assert_eq!(drained, model.live());
            assert!(set.is_empty());
            // Put them back with their generations.
            for s in &model.dense {
                if let Slot::Live {
                    index,
                    generation,
                    value,
                } = *s
                {
                    match generation {
                        0 => set.insert(index, value),
                        g => set.insert(handle(index, g), value),
                    };
                }
            }
        }
    }
}

fn check(set: &Set, model: &Model, probes: &BTreeSet<u32>) {
    let want_entities: Vec<u32> = model
        .dense
        .iter()
        .map(|s| match s {
            Slot::Live { index, .. } => *index,
            Slot::Tomb => TOMBSTONE,
        })
        .collect();
    assert_eq!(set.indices(), &want_entities[..], "dense order");
    let live = model.live();
    let got: Vec<(u32, i32)> = set.iter().map(|(e, v)| (e, *v)).collect();
    assert_eq!(got, live, "iter");
    let got_back: Vec<(u32, i32)> = set.iter().rev().map(|(e, v)| (e, *v)).collect();
    let live_back: Vec<(u32, i32)> = live.iter().rev().copied().collect();
    assert_eq!(got_back, live_back, "iter().rev()");
    assert_eq!(set.iter().len(), live.len());
    assert_eq!(set.len(), live.len());
    assert_eq!(set.is_empty(), live.is_empty());
    assert_eq!(set.values().len(), model.dense.len());
    assert_eq!(set.pending_removals(), model.dense.len() - live.len());
    let map = model.map();
    for &i in probes {
        let want = map.get(&i);
        assert_eq!(set.get(i), want.map(|(_, v)| v), "get({i})");
        assert_eq!(set.contains(i), want.is_some());
        for g in 1..4u16 {
            let h = handle(i, g);
            let hit = want.filter(|(mg, _)| *mg == g).map(|(_, v)| v);
            assert_eq!(set.get(h), hit, "get({i}, gen {g})");
            assert_eq!(set.contains(h), hit.is_some());
        }
        assert_eq!(
            set.generation_of(i).map(|g| g.map_or(0, |g| g.get())),
            want.map(|(g, _)| *g),
            "generation_of({i})"
        );
        if let Some(p) = set.get_index_of(i) {
            assert_eq!(set.indices()[p], i);
            assert_eq!(Some(&set.values()[p]), want.map(|(_, v)| v));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 1000 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn matches_the_models(ops in prop::collection::vec(op(), 1..60)) {
        let mut set = Set::new_paged();
        let mut model = Model::default();
        let mut probes: BTreeSet<u32> = [0, 17, 199, 1_000_003].into_iter().collect();
        for op in &ops {
            if let Op::Insert(e, _) = op {
                probes.insert(e.index);
            }
            apply(&mut set, &mut model, op);
            check(&set, &model, &probes);
        }
        let other: SparseSet<u32, 64> = (0..200u32).step_by(3).map(|e| (e, e * 2)).collect();
        check_joins(&mut set, &other);
    }

    #[test]
    fn sort_as_puts_shared_entities_first(
        a in prop::collection::btree_set(0..300u32, 0..80),
        b in prop::collection::vec(0..300u32, 0..80),
    ) {
        let mut x: SparseSet<u32> = a.iter().map(|&e| (e, e + 1)).collect();
        let y: SparseSet<()> = b.iter().map(|&e| (e, ())).collect();
        x.sort_as(&y);
        let shared: Vec<u32> = y.indices().iter().copied().filter(|e| a.contains(e)).collect();
        prop_assert_eq!(&x.indices()[..shared.len()], &shared[..]);
        // Lockstep: the shared prefix lines up position by position.
        for (i, &e) in shared.iter().enumerate() {
            prop_assert_eq!(x.values()[i], e + 1);
            prop_assert_eq!(x.get_index_of(e), Some(i));
        }
        for e in &a {
            prop_assert_eq!(x.get(*e), Some(&(e + 1)));
        }
    }
}

/// `join`, `join3` and `join_mut` (both driving directions) against a naive intersection.
fn check_joins(set: &mut Set, other: &SparseSet<u32, 64>) {
    let want: BTreeMap<u32, (i32, u32)> = set
        .iter()
        .filter_map(|(e, v)| other.get(e).map(|o| (e, (*v, *o))))
        .collect();
    let got: BTreeMap<u32, (i32, u32)> = set.join(other).map(|(e, a, b)| (e, (*a, *b))).collect();
    assert_eq!(got, want);
    let got: BTreeMap<u32, (i32, u32)> = other.join(&*set).map(|(e, b, a)| (e, (*a, *b))).collect();
    assert_eq!(got, want);
    let third: SparseSet<u8> = (0..200u32).filter(|e| e % 2 == 0).map(|e| (e, 1)).collect();
    let mut got3: Vec<u32> = set.join3(other, &third).map(|(e, ..)| e).collect();
    got3.sort();
    let want3: Vec<u32> = want.keys().copied().filter(|e| e % 2 == 0).collect();
    assert_eq!(got3, want3);
    for (e, a, b) in set.join_mut(other) {
        *a = (*b as i32) + (e as i32);
    }
    for (e, (_, b)) in &want {
        assert_eq!(set.get(*e), Some(&((*b as i32) + (*e as i32))));
    }
}

#[test]
fn join_mut_drives_from_the_smaller_set_both_ways() {
    let mut big: SparseSet<u64> = (0..1000u32).map(|e| (e, 0)).collect();
    let small: SparseSet<u64> = [(5u32, 50), (999, 9990), (2000, 1)].into_iter().collect();
    // `small` drives: items come in its order.
    let order: Vec<u32> = big
        .join_mut(&small)
        .map(|(e, a, b)| {
            *a = *b;
            e
        })
        .collect();
    assert_eq!(order, [5, 999]);
    assert_eq!((big[5u32], big[999u32], big[6u32]), (50, 9990, 0));
    // `self` drives when it is the smaller one.
    let mut small2 = small.clone();
    small2.defer_remove(5u32);
    let got: Vec<(u32, u64)> = small2
        .join_mut(&big)
        .map(|(e, a, b)| {
            *a += *b;
            (e, *a)
        })
        .collect();
    assert_eq!(got, [(999, 19980)]);
    // Tombstones on either side are skipped.
    let mut big2 = big.clone();
    big2.defer_remove(999u32);
    let es: Vec<u32> = small.join(&big2).map(|(e, ..)| e).collect();
    assert_eq!(es, [5]);
    let es: Vec<u32> = big2.join_mut(&small2).map(|(e, ..)| e).collect();
    assert!(es.is_empty());
}

#[test]
fn bones_copy_to_nodes_in_lockstep() {
    // The seed's AnimationToSceneGraph: the bones sorted in node order, then copied position by
    // position without a lookup per bone.
    let mut nodes: SparseSet<[f32; 2]> = (0..50u32).rev().map(|e| (e, [0.0; 2])).collect();
    let mut bones: SparseSet<[f32; 2]> = (0..50u32)
        .filter(|e| e % 5 == 0)
        .map(|e| (e, [e as f32, 1.0]))
        .collect();
    bones.sort_as(&nodes);
    nodes.sort_as(&bones);
    let n = bones.len();
    assert_eq!(&nodes.indices()[..n], &bones.indices()[..n]);
    nodes.values_mut()[..n].copy_from_slice(bones.values());
    for e in (0..50u32).step_by(5) {
        assert_eq!(nodes[e], [e as f32, 1.0]);
    }
    assert_eq!(nodes[1u32], [0.0; 2]);
}

/// A value that counts its drops.
#[derive(Debug)]
struct Counted(Rc<Cell<usize>>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        Counted(self.0.clone())
    }
}

#[test]
fn every_value_is_dropped_once() {
    let drops = Rc::new(Cell::new(0));
    let made = 200;
    {
        let mut s: SparseSet<Counted, 8> = SparseSet::new_paged();
        for e in 0..made as u32 {
            s.insert(e, Counted(drops.clone()));
        }
        assert_eq!(drops.get(), 0);
        drop(s.insert(3u32, Counted(drops.clone()))); // the replaced value comes back
        assert_eq!(drops.get(), 1);
        drop(s.swap_remove(0u32));
        drop(s.shift_remove(10u32));
        assert_eq!(drops.get(), 3);
        assert!(s.defer_remove(20u32));
        assert_eq!(drops.get(), 3, "a tombstone keeps its value until compact");
        s.compact();
        assert_eq!(drops.get(), 4);
        s.retain(|e, _| e % 2 == 0);
        assert_eq!(drops.get(), 4 + 100, "the 100 odd entities");
        assert_eq!(s.remove_many(&[30u32, 32, 32, 1]), 2);
        assert_eq!(drops.get(), 106);
        s.defer_remove(40u32);
        let drained = s.drain();
        assert_eq!(drops.get(), 107, "drain drops the tombstoned value");
        assert_eq!(drained.len(), 200 - 3 - 100 - 2 - 1);
        drop(drained);
        assert_eq!(
            drops.get(),
            201,
            "every value made so far, the replacement included"
        );
        for e in 0..10u32 {
            s.insert(e, Counted(drops.clone()));
        }
        s.defer_remove(4u32);
        drop(s.clone());
        assert_eq!(
            drops.get(),
            211,
            "a clone holds 9 live values and 1 tombstoned one"
        );
        let mut it = s.into_iter();
        drop(it.next());
        assert_eq!(drops.get(), 212);
    }
    assert_eq!(drops.get(), 221);
}

#[test]
fn clear_and_sort_drop_nothing_twice() {
    let drops = Rc::new(Cell::new(0));
    {
        let mut s: SparseSet<Counted> = SparseSet::new();
        for e in (0..100u32).rev() {
            s.insert(e, Counted(drops.clone()));
        }
        s.defer_remove(50u32);
        s.sort_by_key(|e, _| e);
        assert_eq!(drops.get(), 1);
        let other: SparseSet<()> = (0..100u32).step_by(7).map(|e| (e, ())).collect();
        s.sort_as(&other);
        assert_eq!(drops.get(), 1);
        s.clear();
        assert_eq!(drops.get(), 100);
        s.insert(1u32, Counted(drops.clone()));
    }
    assert_eq!(drops.get(), 101);
}

/// The set's public view is self-consistent: each live entity is found where it sits.
fn assert_consistent<T, const P: usize>(s: &SparseSet<T, P>) {
    let mut live = 0;
    for (i, &e) in s.indices().iter().enumerate() {
        if e != TOMBSTONE {
            live += 1;
            assert_eq!(s.get_index_of(e), Some(i));
        }
    }
    assert_eq!(live, s.len());
    assert_eq!(s.indices().len(), s.values().len());
}

#[test]
fn panicking_retain_leaves_a_valid_set() {
    let drops = Rc::new(Cell::new(0));
    let mut s: SparseSet<Counted, 16> = SparseSet::new_paged();
    for e in 0..50u32 {
        s.insert(e, Counted(drops.clone()));
    }
    s.defer_remove(45u32);
    let r = catch_unwind(AssertUnwindSafe(|| {
        s.retain(|e, _| {
            if e == 30 {
                panic!("boom");
            }
            e % 3 != 0
        })
    }));
    assert!(r.is_err());
    assert_consistent(&s);
    // 0..30: the 10 multiples of 3 removed; 30.. kept, the tombstone of 45 included.
    assert_eq!(drops.get(), 10);
    assert_eq!(s.len(), 20 + 19);
    assert_eq!(s.pending_removals(), 1);
    assert!(s.contains(30u32) && s.contains(31u32) && !s.contains(3u32) && !s.contains(45u32));
    s.compact();
    assert_consistent(&s);
    assert_eq!(drops.get(), 11);
    drop(s);
    assert_eq!(drops.get(), 50);
}

#[test]
fn panicking_comparator_leaves_the_set_unchanged() {
    let mut s: SparseSet<u32> = (0..40u32).rev().map(|e| (e, e)).collect();
    s.defer_remove(7u32);
    let before: Vec<(u32, u32)> = s.iter().map(|(e, v)| (e, *v)).collect();
    let mut calls = 0;
    let r = catch_unwind(AssertUnwindSafe(|| {
        s.sort_by(|_, a, _, b| {
            calls += 1;
            if calls == 20 {
                panic!("boom");
            }
            a.cmp(b)
        })
    }));
    assert!(r.is_err());
    assert_consistent(&s);
    let after: Vec<(u32, u32)> = s.iter().map(|(e, v)| (e, *v)).collect();
    assert_eq!(after, before);
}

#[test]
fn extend_index_and_debug() {
    let mut s: SparseSet<&str> = SparseSet::default();
    s.extend([(2u32, "b"), (1, "a")]);
    s.extend([(handle(9, 1), "z")]);
    assert_eq!(format!("{s:?}"), r#"{2: "b", 1: "a", 9: "z"}"#);
    s[2u32] = "B";
    assert_eq!(s[2u32], "B");
    let r = catch_unwind(|| {
        let s: SparseSet<u8> = SparseSet::new();
        s[5u32]
    });
    let msg = *r.unwrap_err().downcast::<String>().unwrap();
    assert_eq!(msg, "SparseSet: no value for entity 5");
}

/// A value whose drop panics when asked to.
struct Bomb(bool);

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.0 && !std::thread::panicking() {
            panic!("bomb");
        }
    }
}

#[test]
fn panicking_drop_leaves_a_valid_set() {
    let mut s: SparseSet<Bomb, 16> = SparseSet::new_paged();
    for e in 0..40u32 {
        s.insert(e, Bomb(e == 7));
    }
    s.defer_remove(3u32);
    s.defer_remove(7u32);
    s.defer_remove(20u32);
    assert!(catch_unwind(AssertUnwindSafe(|| s.compact())).is_err());
    assert_consistent(&s);
    assert_eq!(s.len(), 37);
    assert_eq!(s.pending_removals(), 0);
    s.insert(7u32, Bomb(true));
    assert!(catch_unwind(AssertUnwindSafe(|| s.retain(|e, _| e != 7))).is_err());
    assert_consistent(&s);
    assert!(!s.contains(7u32) && s.contains(8u32));
    s.insert(9u32, Bomb(true)); // replaces: the old value comes back and is dropped quietly
    assert!(catch_unwind(AssertUnwindSafe(|| s.clear())).is_err());
    assert_consistent(&s);
    assert!(s.is_empty());
}
