//! Pool against a `HashMap<Handle, value>` model, with live, stale and forged handles, checked
//! after every step; drop counting and panic safety.

use std::cell::Cell;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use dod::{Bits, Handle, Handle32, Key, Pool};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Insert(u32),
    Remove(usize),
    RemoveAt(u32),
    Get(usize),
    Forged(u32, u16, u16),
    Set(usize, u32),
    Swap(usize, usize),
    Retain(u32),
    /// Add 1 to the items whose slot index is in this mask (indices may lie past the pool).
    AddInMask(Vec<u32>),
    Drain(usize),
    Clear,
    Clone,
    #[cfg(feature = "serde")]
    RoundTrip,
}

fn op() -> impl Strategy<Value = Op> {
    let ops = prop_oneof![
        8 => any::<u32>().prop_map(Op::Insert),
        5 => any::<usize>().prop_map(Op::Remove),
        1 => (0u32..40).prop_map(Op::RemoveAt),
        4 => any::<usize>().prop_map(Op::Get),
        2 => (0u32..40, 0u16..4, 0u16..3).prop_map(|(i, g, t)| Op::Forged(i, g, t)),
        2 => (any::<usize>(), any::<u32>()).prop_map(|(k, v)| Op::Set(k, v)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Swap(a, b)),
        1 => (1u32..5).prop_map(Op::Retain),
        2 => prop::collection::vec(0u32..80, 0..20).prop_map(Op::AddInMask),
        1 => (0usize..5).prop_map(Op::Drain),
        1 => Just(Op::Clear),
        1 => Just(Op::Clone),
    ];
    #[cfg(feature = "serde")]
    let ops = prop_oneof![20 => ops, 1 => Just(Op::RoundTrip)];
    ops
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 1000 },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn check(pool: &Pool<u32>, model: &HashMap<Handle, u32>, seen: &[Handle]) {
    pool.assert_invariants();
    assert_eq!(pool.len(), model.len());
    assert_eq!(pool.is_empty(), model.is_empty());
    for h in seen {
        assert_eq!(pool.get(*h), model.get(h), "{h:?}");
        assert_eq!(pool.contains(*h), model.contains_key(h));
    }
    let mut items: Vec<(Handle, u32)> = pool.iter().map(|(k, v)| (k, *v)).collect();
    assert_eq!(pool.iter().len(), model.len());
    // Slot order, and every live item exactly once.
    assert!(items.windows(2).all(|w| w[0].0.index() < w[1].0.index()));
    let mut want: Vec<(Handle, u32)> = model.iter().map(|(k, v)| (*k, *v)).collect();
    items.sort();
    want.sort();
    assert_eq!(items, want);
    assert_eq!(pool.keys().count(), model.len());
    assert_eq!(
        pool.values().map(|v| u64::from(*v)).sum::<u64>(),
        model.values().map(|v| u64::from(*v)).sum::<u64>()
    );
    let alive: Vec<u32> = pool.alive().iter().collect();
    let mut idx: Vec<u32> = model.keys().map(|k| k.index()).collect();
    idx.sort();
    assert_eq!(alive, idx);
    for i in 0..pool.slot_count() as u32 + 1 {
        let k = pool.key_at(i);
        assert_eq!(k.is_some(), pool.alive().contains(i));
        if let Some(k) = k {
            assert_eq!(pool.get_at(i), model.get(&k));
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn pool_matches_hashmap(ops in prop::collection::vec(op(), 1..60), type_id in 0u16..3) {
        let mut pool: Pool<u32> = Pool::new().with_type_id(type_id);
        let mut model: HashMap<Handle, u32> = HashMap::new();
        let mut seen: Vec<Handle> = Vec::new();
        let pick = |seen: &[Handle], k: usize| (!seen.is_empty()).then(|| seen[k % seen.len()]);
        for op in ops {
            match op {
                Op::Insert(v) => {
                    let first_hole = pool.alive().first_zero();
                    let h = pool.insert(v);
                    prop_assert_eq!(h.type_id(), type_id);
                    if let Some(hole) = first_hole {
                        prop_assert_eq!(h.index(), hole, "holes are filled first");
                    }
                    prop_assert!(!model.contains_key(&h), "a handle is never handed out twice");
                    prop_assert!(!seen.contains(&h));
                    model.insert(h, v);
                    seen.push(h);
                }
                Op::Remove(k) => {
                    if let Some(h) = pick(&seen, k) {
                        prop_assert_eq!(pool.remove(h), model.remove(&h));
                    }
                }
                Op::RemoveAt(i) => {
                    let k = pool.key_at(i);
                    let got = pool.remove_at(i);
                    prop_assert_eq!(got, k.and_then(|k| model.remove(&k)));
                }
                Op::AddInMask(indices) => {
                    let mask: dod::BitSet = indices.iter().copied().collect();
                    let mut visited = Vec::new();
                    for (h, v) in pool.iter_mut_in(&mask) {
                        *v = v.wrapping_add(1);
                        visited.push(h);
                    }
                    let mut expect: Vec<Handle> = model
                        .keys()
                        .copied()
                        .filter(|h| mask.contains(h.index()))
                        .collect();
                    expect.sort_by_key(|h| h.index());
                    prop_assert_eq!(&visited, &expect, "live items in the mask, in slot order");
                    for h in expect {
                        let v = model.get_mut(&h).unwrap();
                        *v = v.wrapping_add(1);
                    }
                }
                Op::Get(k) => {
                    if let Some(h) = pick(&seen, k) {
                        prop_assert_eq!(pool.get(h), model.get(&h));
                        if let Some(v) = model.get(&h) {
                            prop_assert_eq!(&pool[h], v);
                        } else {
                            let r = catch_unwind(AssertUnwindSafe(|| pool[h]));
                            prop_assert!(r.is_err());
                        }
                    }
                }
                Op::Forged(i, g, t) => {
                    let Some(h) = Handle::new(i, g.max(1), t) else { continue };
                    prop_assert_eq!(pool.get(h), model.get(&h));
                    let h32 = Handle32::new(i as u16, g.max(1)).unwrap();
                    let p32: Pool<u32, Handle32> = Pool::with_key();
                    prop_assert_eq!(p32.get(h32), None);
                }
                Op::Set(k, v) => {
                    if let Some(h) = pick(&seen, k) {
                        match (pool.get_mut(h), model.get_mut(&h)) {
                            (Some(a), Some(b)) => {
                                *a = v;
                                *b = v;
                            }
                            (None, None) => {}
                            _ => prop_assert!(false, "get_mut disagrees for {:?}", h),
                        }
                    }
                }
                Op::Swap(a, b) => {
                    if let (Some(ha), Some(hb)) = (pick(&seen, a), pick(&seen, b)) {
                        let both = model.contains_key(&ha) && model.contains_key(&hb) && ha != hb;
                        match pool.get_disjoint_mut([ha, hb]) {
                            Some([x, y]) => {
                                prop_assert!(both);
                                std::mem::swap(x, y);
                                let va = model[&ha];
                                let vb = model[&hb];
                                model.insert(ha, vb);
                                model.insert(hb, va);
                            }
                            None => prop_assert!(!both),
                        }
                    }
                }
                Op::Retain(m) => {
                    pool.retain(|k, v| {
                        assert_eq!(model.get(&k), Some(&*v));
                        *v % m != 0
                    });
                    model.retain(|_, v| *v % m != 0);
                }
                Op::Drain(take) => {
                    let got: Vec<(Handle, u32)> = pool.drain().take(take).collect();
                    for (k, v) in got {
                        prop_assert_eq!(model.get(&k), Some(&v));
                    }
                    model.clear();
                }
                Op::Clear => {
                    pool.clear();
                    model.clear();
                }
                Op::Clone => {
                    let mut c = pool.clone();
                    check(&c, &model, &seen);
                    prop_assert!(c == pool);
                    if let Some(k) = c.keys().next() {
                        let v = c.remove(k).unwrap();
                        prop_assert!(c != pool, "one item fewer");
                        c.insert(v);
                        prop_assert!(c != pool, "the same item under a new key");
                        c = pool.clone();
                    }
                    pool = c;
                }
                #[cfg(feature = "serde")]
                Op::RoundTrip => {
                    let json = serde_json::to_string(&pool).unwrap();
                    let back: Pool<u32> = serde_json::from_str(&json).unwrap();
                    prop_assert!(back == pool);
                    pool = back;
                    prop_assert_eq!(pool.type_id(), type_id);
                }
            }
            check(&pool, &model, &seen);
        }
    }
}

/// Counts live instances: every clone and every construction adds one, every drop removes one.
#[derive(Debug)]
struct Counted {
    live: Rc<Cell<i64>>,
    value: u32,
}

impl Counted {
    fn new(live: &Rc<Cell<i64>>, value: u32) -> Self {
        live.set(live.get() + 1);
        Counted {
            live: live.clone(),
            value,
        }
    }
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        Counted::new(&self.live, self.value)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.live.set(self.live.get() - 1);
        assert!(self.live.get() >= 0, "double drop");
    }
}

#[test]
fn every_item_is_dropped_exactly_once() {
    let live = Rc::new(Cell::new(0));
    {
        let mut pool: Pool<Counted> = Pool::new();
        let hs: Vec<Handle> = (0..100)
            .map(|i| pool.insert(Counted::new(&live, i)))
            .collect();
        assert_eq!(live.get(), 100);
        for h in hs.iter().step_by(3) {
            drop(pool.remove(*h));
        }
        assert_eq!(live.get(), 66);
        pool.retain(|_, v| v.value % 2 == 0);
        assert_eq!(live.get() as usize, pool.len());
        let c = pool.clone();
        assert_eq!(live.get() as usize, 2 * pool.len());
        drop(c);
        let mut d = pool.drain();
        drop(d.next());
        drop(d);
        assert_eq!(live.get(), 0);
        for i in 0..10 {
            pool.insert(Counted::new(&live, i));
        }
        let mut it = pool.clone().into_iter();
        drop(it.next());
        drop(it);
        assert_eq!(live.get(), 10);
        pool.clear();
        assert_eq!(live.get(), 0);
        for i in 0..10 {
            pool.insert(Counted::new(&live, i));
        }
        // `pool` is dropped here with 10 items.
    }
    assert_eq!(live.get(), 0);
}

#[test]
fn leaked_drain_leaves_a_valid_pool() {
    let mut pool: Pool<String> = Pool::new();
    for i in 0..5 {
        pool.insert(i.to_string());
    }
    let mut d = pool.drain();
    d.next();
    std::mem::forget(d);
    pool.assert_invariants();
    assert_eq!(pool.len(), 4);
}

#[test]
fn panicking_retain_leaves_the_pool_valid() {
    let live = Rc::new(Cell::new(0));
    let mut pool: Pool<Counted> = Pool::new();
    let hs: Vec<Handle> = (0..20)
        .map(|i| pool.insert(Counted::new(&live, i)))
        .collect();
    let r = catch_unwind(AssertUnwindSafe(|| {
        pool.retain(|_, v| {
            if v.value == 10 {
                panic!("boom");
            }
            v.value % 2 == 0
        })
    }));
    assert!(r.is_err());
    pool.assert_invariants();
    // Odd items before 10 are gone, 10 and after stay.
    assert_eq!(pool.len(), 5 + 10);
    assert_eq!(live.get() as usize, pool.len());
    assert!(pool.get(hs[1]).is_none());
    assert!(pool.get(hs[11]).is_some());
    drop(pool);
    assert_eq!(live.get(), 0);
}

struct PanicOnDrop(bool);
impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        if self.0 {
            panic!("drop panics");
        }
    }
}

#[test]
fn panicking_drop_during_remove_leaves_the_pool_valid() {
    let mut pool: Pool<PanicOnDrop> = Pool::new();
    let a = pool.insert(PanicOnDrop(true));
    let b = pool.insert(PanicOnDrop(false));
    let r = catch_unwind(AssertUnwindSafe(|| pool.retain(|_, v| !v.0)));
    assert!(r.is_err());
    pool.assert_invariants();
    assert!(!pool.contains(a));
    assert!(pool.contains(b));
}

#[derive(Debug)]
struct PanicOnClone(bool, Rc<Cell<i64>>);
impl Clone for PanicOnClone {
    fn clone(&self) -> Self {
        if self.0 {
            panic!("clone panics");
        }
        self.1.set(self.1.get() + 1);
        PanicOnClone(false, self.1.clone())
    }
}
impl Drop for PanicOnClone {
    fn drop(&mut self) {
        self.1.set(self.1.get() - 1);
    }
}

#[test]
fn panicking_clone_drops_the_clones_made() {
    let live = Rc::new(Cell::new(3));
    let mut pool: Pool<PanicOnClone> = Pool::new();
    pool.insert(PanicOnClone(false, live.clone()));
    pool.insert(PanicOnClone(false, live.clone()));
    pool.insert(PanicOnClone(true, live.clone()));
    let r = catch_unwind(AssertUnwindSafe(|| pool.clone()));
    assert!(r.is_err());
    assert_eq!(live.get(), 3, "the two clones made were dropped");
    drop(pool);
    assert_eq!(live.get(), 0);
}

#[test]
fn handle32_pool_is_bounded() {
    let mut pool: Pool<u8, Handle32> = Pool::with_key();
    for _ in 0..Handle32::MAX_SLOTS {
        pool.insert(0);
    }
    let e = pool.try_insert(7).unwrap_err();
    assert_eq!(e.into_inner(), 7);
    let h = pool.key_at(100).unwrap();
    pool.remove(h);
    let again = pool.insert(1);
    assert_eq!(again.index(), 100);
    assert_eq!(again.generation(), 2);
    let r = catch_unwind(AssertUnwindSafe(|| pool.insert(2)));
    let msg = *r.unwrap_err().downcast::<String>().unwrap();
    assert!(msg.contains("Pool is full"), "{msg}");
}

#[test]
fn alive_flags_combine_with_masks() {
    let mut pool: Pool<&str> = Pool::new();
    let mut tanks = dod::BitSet::new();
    let hs: Vec<Handle> = ["orc", "tank", "orc", "tank", "orc"]
        .iter()
        .map(|s| pool.insert(*s))
        .collect();
    for h in &hs {
        if pool[*h] == "tank" {
            tanks.insert(h.index());
        }
    }
    pool.remove(hs[0]);
    let not_tanks: Vec<&str> = pool
        .alive()
        .and_not(&tanks)
        .iter()
        .map(|i| *pool.get_at(i).unwrap())
        .collect();
    assert_eq!(not_tanks, ["orc", "orc"]);
}

#[cfg(feature = "serde")]
#[test]
fn serde_keeps_stale_handles_stale() {
    let mut pool: Pool<String, Handle32> = Pool::with_key();
    let a = pool.insert("a".into());
    let b = pool.insert("b".into());
    pool.remove(a);
    let json = serde_json::to_string(&pool).unwrap();
    assert_eq!(
        json,
        r#"{"type_id":0,"generations":[2,1],"items":[[1,"b"]]}"#
    );
    let mut back: Pool<String, Handle32> = serde_json::from_str(&json).unwrap();
    back.assert_invariants();
    assert_eq!(back.get(a), None);
    assert_eq!(back[b], "b");
    let c = back.insert("c".into());
    assert_eq!((c.index(), c.generation()), (0, 2));
    for bad in [
        r#"{"type_id":1,"generations":[],"items":[]}"#,
        r#"{"type_id":0,"generations":[0],"items":[[0,"x"]]}"#,
        r#"{"type_id":0,"generations":[1],"items":[[1,"x"]]}"#,
        r#"{"type_id":0,"generations":[1,1],"items":[[1,"x"],[0,"y"]]}"#,
        r#"{"type_id":0,"generations":[1,1],"items":[[1,"x"],[1,"y"]]}"#,
        r#"{"type_id":0,"generations":[1]}"#,
        r#"{"type_id":0}"#,
    ] {
        assert!(
            serde_json::from_str::<Pool<String, Handle32>>(bad).is_err(),
            "{bad}"
        );
    }
    // A retired slot stays retired.
    let json = r#"{"type_id":0,"generations":[0,1],"items":[]}"#;
    let mut p: Pool<u8, Handle32> = serde_json::from_str(json).unwrap();
    p.assert_invariants();
    assert_eq!(p.insert(1).index(), 1);
    assert_eq!(p.insert(1).index(), 2);
}

#[cfg(feature = "serde")]
#[test]
fn serde_keeps_items_whose_form_is_null() {
    let mut pool: Pool<Option<&str>> = Pool::new();
    let a = pool.insert(None);
    let b = pool.insert(Some("b"));
    let u: Pool<()> = [(), ()].into_iter().collect();
    let json = serde_json::to_string(&pool).unwrap();
    let back: Pool<Option<&str>> = serde_json::from_str(&json).unwrap();
    back.assert_invariants();
    assert_eq!(
        (back.get(a), back.get(b), back.len()),
        (Some(&None), Some(&Some("b")), 2)
    );
    let back_u: Pool<()> = serde_json::from_str(&serde_json::to_string(&u).unwrap()).unwrap();
    assert_eq!(back_u.len(), 2);
}

#[cfg(feature = "serde")]
#[test]
fn reserve_does_not_count_retired_slots_as_room() {
    // Four retired slots and one hole.
    let json = r#"{"type_id":0,"generations":[0,0,0,0,3],"items":[]}"#;
    let mut p: Pool<u64> = serde_json::from_str(json).unwrap();
    p.reserve(5);
    assert!(p.capacity() >= 4 + 5, "capacity {}", p.capacity());
    let before = p.capacity();
    for i in 0..5 {
        p.insert(i);
    }
    assert_eq!(
        p.capacity(),
        before,
        "no reallocation within the reserved room"
    );
}
