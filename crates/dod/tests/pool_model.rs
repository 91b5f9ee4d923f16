//! Pool against a model (a `HashMap` of live handles, every slot's generation, and a
//! `VecDeque` of the holes in FIFO order with the `min_free` rule), with live, stale and forged
//! handles, checked after every step: the model predicts the key the next insertion returns,
//! for both reuse policies. Drop counting and panic safety.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use dod::pool::Reuse;
use dod::{Bits, Handle, Handle32, Key, Pool};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Insert(u32),
    /// Inserts 64 items and this many more, so that whole words of the alive flags fill.
    InsertRun(u8),
    InsertWithKey,
    InsertMany(Vec<u32>),
    Remove(usize),
    /// `remove_many` of the seen keys these pick (stale and repeated ones among them).
    RemoveMany(Vec<usize>),
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
    SetReuse(Reuse),
    SetMinFree(u32),
    Reserve(u8),
    /// `try_reserve` of this many, then `shrink_to_fit`.
    TryReserveThenShrink(u8),
    #[cfg(feature = "serde")]
    RoundTrip,
}

fn reuse() -> impl Strategy<Value = Reuse> {
    prop_oneof![Just(Reuse::Fifo), Just(Reuse::LowestFirst)]
}

fn op() -> impl Strategy<Value = Op> {
    let ops = prop_oneof![
        10 => any::<u32>().prop_map(Op::Insert),
        1 => any::<u8>().prop_map(Op::InsertRun),
        1 => Just(Op::InsertWithKey),
        1 => prop::collection::vec(any::<u32>(), 0..70).prop_map(Op::InsertMany),
        7 => any::<usize>().prop_map(Op::Remove),
        1 => prop::collection::vec(any::<usize>(), 0..8).prop_map(Op::RemoveMany),
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
        1 => reuse().prop_map(Op::SetReuse),
        1 => (0u32..5).prop_map(Op::SetMinFree),
        1 => any::<u8>().prop_map(Op::Reserve),
        1 => any::<u8>().prop_map(Op::TryReserveThenShrink),
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

/// The pool as the model sees it.
#[derive(Clone, Debug)]
struct Model {
    reuse: Reuse,
    min_free: u32,
    type_id: u16,
    /// Per slot: the generation of its current or last item, and whether it holds one.
    slots: Vec<(u16, bool)>,
    /// Under `Fifo`, the holes that are not retired, oldest first.
    fifo: VecDeque<u32>,
    live: HashMap<Handle, u32>,
}

impl Model {
    fn new(reuse: Reuse, min_free: u32, type_id: u16) -> Self {
        Model {
            reuse,
            min_free,
            type_id,
            slots: Vec::new(),
            fifo: VecDeque::new(),
            live: HashMap::new(),
        }
    }

    fn reusable(&self, i: usize) -> bool {
        let (g, live) = self.slots[i];
        !live && g < u16::MAX
    }

    /// The key the next insertion returns: by FIFO with `min_free`, or the lowest hole.
    fn next_key(&self) -> Handle {
        let i = match self.reuse {
            Reuse::Fifo if self.fifo.len() > self.min_free as usize => Some(self.fifo[0]),
            Reuse::Fifo => None,
            Reuse::LowestFirst => (0..self.slots.len())
                .find(|&i| self.reusable(i))
                .map(|i| i as u32),
        };
        match i {
            Some(i) => Handle::new(i, self.slots[i as usize].0 + 1, self.type_id).unwrap(),
            None => Handle::new(self.slots.len() as u32, 1, self.type_id).unwrap(),
        }
    }

    /// Applies an insertion that returned `h`, which must be the predicted key.
    fn insert(&mut self, h: Handle, v: u32) {
        assert_eq!(h, self.next_key(), "the key the model predicts");
        let i = h.index() as usize;
        if i == self.slots.len() {
            self.slots.push((1, true));
        } else {
            if self.reuse == Reuse::Fifo {
                assert_eq!(self.fifo.pop_front(), Some(h.index()));
            }
            self.slots[i] = (h.generation(), true);
        }
        self.live.insert(h, v);
    }

    /// An insertion whose item was never made: the slot spends a generation and is a hole
    /// again, at the back of the queue.
    fn insert_aborted(&mut self, h: Handle) {
        self.insert(h, 0);
        self.remove(h);
    }

    fn remove(&mut self, h: Handle) -> Option<u32> {
        let v = self.live.remove(&h)?;
        let i = h.index() as usize;
        self.slots[i].1 = false;
        if self.reuse == Reuse::Fifo && self.reusable(i) {
            self.fifo.push_back(h.index());
        }
        Some(v)
    }

    fn key_at(&self, i: u32) -> Option<Handle> {
        let &(g, live) = self.slots.get(i as usize)?;
        live.then(|| Handle::new(i, g, self.type_id).unwrap())
    }

    /// The live keys in slot order: the order `clear`, `drain` and `retain` vacate them in.
    fn keys_in_slot_order(&self) -> Vec<Handle> {
        (0..self.slots.len() as u32)
            .filter_map(|i| self.key_at(i))
            .collect()
    }

    fn set_reuse(&mut self, reuse: Reuse) {
        if reuse == self.reuse {
            return;
        }
        self.reuse = reuse;
        self.fifo.clear();
        if reuse == Reuse::Fifo {
            self.fifo = (0..self.slots.len())
                .filter(|&i| self.reusable(i))
                .map(|i| i as u32)
                .collect();
        }
    }
}

fn check(pool: &Pool<u32>, model: &Model, seen: &[Handle]) {
    pool.assert_invariants();
    assert_eq!(pool.len(), model.live.len());
    assert_eq!(pool.is_empty(), model.live.is_empty());
    assert_eq!(pool.slot_count(), model.slots.len());
    assert_eq!(
        (pool.reuse(), pool.min_free()),
        (model.reuse, model.min_free)
    );
    for h in seen {
        assert_eq!(pool.get(*h), model.live.get(h), "{h:?}");
        assert_eq!(pool.contains(*h), model.live.contains_key(h));
    }
    let mut items: Vec<(Handle, u32)> = pool.iter().map(|(k, v)| (k, *v)).collect();
    assert_eq!(pool.iter().len(), model.live.len());
    // Slot order, and every live item exactly once.
    assert!(items.windows(2).all(|w| w[0].0.index() < w[1].0.index()));
    let mut want: Vec<(Handle, u32)> = model.live.iter().map(|(k, v)| (*k, *v)).collect();
    items.sort();
    want.sort();
    assert_eq!(items, want);
    assert_eq!(pool.keys().collect::<Vec<_>>(), model.keys_in_slot_order());
    assert_eq!(
        pool.values().map(|v| u64::from(*v)).sum::<u64>(),
        model.live.values().map(|v| u64::from(*v)).sum::<u64>()
    );
    let alive: Vec<u32> = pool.alive().iter().collect();
    let idx: Vec<u32> = model
        .keys_in_slot_order()
        .iter()
        .map(|k| k.index())
        .collect();
    assert_eq!(alive, idx);
    for i in 0..pool.slot_count() as u32 + 1 {
        let k = pool.key_at(i);
        assert_eq!(k, model.key_at(i));
        if let Some(k) = k {
            assert_eq!(pool.get_at(i), model.live.get(&k));
        }
    }
    // The next insertion returns the key the model predicts, and a second one too.
    let mut next = pool.clone();
    let mut m = model.clone();
    for v in [7, 8] {
        let h = next.insert(v);
        assert_eq!(h, m.next_key(), "next key under {:?}", model.reuse);
        m.insert(h, v);
    }
}

/// A pool whose slots already went through many generations: some near the end of their
/// generations, some retired, the holes queued in any order. Built through `serde`, the only
/// way to get there without 65 535 insertions per slot.
#[cfg(feature = "serde")]
fn aged(
    generations: &[u16],
    queue: &[usize],
    reuse: Reuse,
    min_free: u32,
    type_id: u16,
) -> (Pool<u32>, Model) {
    let mut model = Model::new(reuse, min_free, type_id);
    model.slots = generations.iter().map(|&g| (g, false)).collect();
    let holes: Vec<u32> = (0..generations.len())
        .filter(|&i| model.reusable(i))
        .map(|i| i as u32)
        .collect();
    if reuse == Reuse::Fifo {
        // `queue` picks the FIFO order of the holes.
        let mut holes = holes.clone();
        for &q in queue {
            if !holes.is_empty() {
                let i = holes.remove(q % holes.len());
                model.fifo.push_back(i);
            }
        }
        model.fifo.extend(holes);
    }
    let tags: Vec<u32> = generations
        .iter()
        .map(|&g| u32::from(g) | u32::from(type_id) << 16 | 1 << 31)
        .collect();
    let json = serde_json::json!({
        "type_id": type_id,
        "reuse": reuse,
        "min_free": min_free,
        "slots": tags,
        "free": model.fifo,
        "items": [],
    });
    let pool: Pool<u32> = serde_json::from_value(json).unwrap();
    (pool, model)
}

#[cfg(feature = "serde")]
fn start() -> impl Strategy<Value = (Vec<u16>, Vec<usize>)> {
    (
        prop::collection::vec(
            prop_oneof![Just(1u16), Just(65_533), Just(65_534), Just(65_535)],
            0..6,
        ),
        prop::collection::vec(any::<usize>(), 0..6),
    )
}

#[cfg(not(feature = "serde"))]
fn start() -> impl Strategy<Value = (Vec<u16>, Vec<usize>)> {
    Just((Vec::new(), Vec::new()))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn pool_matches_the_model(
        ops in prop::collection::vec(op(), 1..60),
        type_id in 0u16..3,
        reuse in reuse(),
        min_free in 0u32..4,
        (generations, queue) in start(),
    ) {
        #[cfg(feature = "serde")]
        let (mut pool, mut model) = aged(&generations, &queue, reuse, min_free, type_id);
        #[cfg(not(feature = "serde"))]
        let (mut pool, mut model) = {
            let _ = (&generations, &queue);
            (
                Pool::new().with_type_id(type_id).with_reuse(reuse).with_min_free(min_free),
                Model::new(reuse, min_free, type_id),
            )
        };
        let mut seen: Vec<Handle> = Vec::new();
        let pick = |seen: &[Handle], k: usize| (!seen.is_empty()).then(|| seen[k % seen.len()]);
        check(&pool, &model, &seen);
        for op in ops {
            match op {
                Op::Insert(v) => {
                    let h = pool.insert(v);
                    prop_assert_eq!(h.type_id(), type_id);
                    prop_assert!(!seen.contains(&h), "a handle is never handed out twice");
                    model.insert(h, v);
                    seen.push(h);
                }
                Op::InsertRun(more) => {
                    for v in 0..64 + u32::from(more) {
                        let h = pool.insert(v);
                        prop_assert!(!seen.contains(&h), "a handle is never handed out twice");
                        model.insert(h, v);
                        seen.push(h);
                    }
                }
                Op::InsertWithKey => {
                    let h = pool.insert_with_key(|k| k.index());
                    prop_assert_eq!(pool[h], h.index());
                    prop_assert!(!seen.contains(&h));
                    model.insert(h, h.index());
                    seen.push(h);
                    // And one whose maker panics: the slot spends a generation.
                    let predicted = model.next_key();
                    let given = Cell::new(None);
                    let r = catch_unwind(AssertUnwindSafe(|| {
                        pool.insert_with_key(|k| {
                            given.set(Some(k));
                            panic!("no item")
                        })
                    }));
                    prop_assert!(r.is_err());
                    prop_assert_eq!(given.get(), Some(predicted));
                    model.insert_aborted(predicted);
                    seen.push(predicted);
                }
                Op::Remove(k) => {
                    if let Some(h) = pick(&seen, k) {
                        prop_assert_eq!(pool.remove(h), model.remove(h));
                    }
                }
                Op::InsertMany(values) => {
                    let keys = pool.insert_many(values.iter().copied());
                    prop_assert_eq!(keys.len(), values.len());
                    for (&h, &v) in keys.iter().zip(&values) {
                        prop_assert!(!seen.contains(&h), "a handle is never handed out twice");
                        model.insert(h, v);
                        seen.push(h);
                    }
                }
                Op::RemoveMany(picks) => {
                    let keys: Vec<Handle> =
                        picks.iter().filter_map(|&k| pick(&seen, k)).collect();
                    let removed = keys.iter().filter(|&&h| model.remove(h).is_some()).count();
                    prop_assert_eq!(pool.remove_many(&keys), removed);
                }
                Op::RemoveAt(i) => {
                    let got = pool.remove_at(i);
                    let want = model.key_at(i).and_then(|k| model.remove(k));
                    prop_assert_eq!(got, want);
                }
                Op::AddInMask(indices) => {
                    let mask: dod::BitSet = indices.iter().copied().collect();
                    let mut visited = Vec::new();
                    for (h, v) in pool.iter_mut_in(&mask) {
                        *v = v.wrapping_add(1);
                        visited.push(h);
                    }
                    let expect: Vec<Handle> = model
                        .keys_in_slot_order()
                        .into_iter()
                        .filter(|h| mask.contains(h.index()))
                        .collect();
                    prop_assert_eq!(&visited, &expect, "live items in the mask, in slot order");
                    for h in expect {
                        let v = model.live.get_mut(&h).unwrap();
                        *v = v.wrapping_add(1);
                    }
                }
                Op::Get(k) => {
                    if let Some(h) = pick(&seen, k) {
                        prop_assert_eq!(pool.get(h), model.live.get(&h));
                        if let Some(v) = model.live.get(&h) {
                            prop_assert_eq!(&pool[h], v);
                        } else {
                            let r = catch_unwind(AssertUnwindSafe(|| pool[h]));
                            prop_assert!(r.is_err());
                        }
                    }
                }
                Op::Forged(i, g, t) => {
                    let Some(h) = Handle::new(i, g.max(1), t) else { continue };
                    prop_assert_eq!(pool.get(h), model.live.get(&h));
                    let h32 = Handle32::new(i % 0xFFFF, g.max(1)).unwrap();
                    let p32: Pool<u32, Handle32> = Pool::with_key();
                    prop_assert_eq!(p32.get(h32), None);
                }
                Op::Set(k, v) => {
                    if let Some(h) = pick(&seen, k) {
                        match (pool.get_mut(h), model.live.get_mut(&h)) {
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
                        let both = model.live.contains_key(&ha)
                            && model.live.contains_key(&hb)
                            && ha != hb;
                        match pool.get_disjoint_mut([ha, hb]) {
                            Some([x, y]) => {
                                prop_assert!(both);
                                std::mem::swap(x, y);
                                let va = model.live[&ha];
                                let vb = model.live[&hb];
                                model.live.insert(ha, vb);
                                model.live.insert(hb, va);
                            }
                            None => prop_assert!(!both),
                        }
                    }
                }
                Op::Retain(m) => {
                    let mut visited = Vec::new();
                    pool.retain(|k, v| {
                        assert_eq!(model.live.get(&k), Some(&*v));
                        visited.push(k);
                        *v % m != 0
                    });
                    prop_assert_eq!(&visited, &model.keys_in_slot_order());
                    for k in visited {
                        if model.live[&k] % m == 0 {
                            model.remove(k);
                        }
                    }
                }
                Op::Drain(take) => {
                    let got: Vec<(Handle, u32)> = pool.drain().take(take).collect();
                    let order = model.keys_in_slot_order();
                    for (k, v) in &got {
                        prop_assert_eq!(model.live.get(k), Some(v));
                    }
                    prop_assert_eq!(
                        got.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
                        order.iter().copied().take(take).collect::<Vec<_>>()
                    );
                    for k in order {
                        model.remove(k);
                    }
                }
                Op::Clear => {
                    pool.clear();
                    for k in model.keys_in_slot_order() {
                        model.remove(k);
                    }
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
                Op::SetReuse(r) => {
                    pool.set_reuse(r);
                    model.set_reuse(r);
                }
                Op::SetMinFree(n) => {
                    pool.set_min_free(n);
                    model.min_free = n;
                }
                Op::Reserve(n) => {
                    pool.reserve(usize::from(n));
                    let cap = pool.capacity();
                    // The room is there: the next `n` insertions do not reallocate.
                    let mut c = pool.clone();
                    c.reserve(usize::from(n));
                    let before = c.capacity();
                    for _ in 0..n {
                        c.insert(0);
                    }
                    prop_assert_eq!(c.capacity(), before);
                    prop_assert!(cap >= pool.slot_count());
                }
                Op::TryReserveThenShrink(n) => {
                    // A refused reservation changes nothing (`check` below compares).
                    prop_assert!(pool.try_reserve(usize::MAX).is_err());
                    // A granted one holds the next `n` insertions, as `reserve` does.
                    let mut d = pool.clone();
                    prop_assert!(d.try_reserve(usize::from(n)).is_ok());
                    let room = d.capacity();
                    for _ in 0..n {
                        d.insert(0);
                    }
                    prop_assert_eq!(d.capacity(), room);
                    // Shrinking releases room, never a slot: `check` below compares every
                    // item, hole and stale key with the model.
                    pool.shrink_to_fit();
                    prop_assert_eq!(pool.capacity(), pool.slot_count());
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
    for reuse in [Reuse::Fifo, Reuse::LowestFirst] {
        let live = Rc::new(Cell::new(0));
        {
            let mut pool: Pool<Counted> = Pool::new().with_reuse(reuse);
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

/// An item counted like [`Counted`] whose `Drop` panics once, for the item whose value is
/// armed (after counting itself dropped: its fields are dropped anyway).
struct Bomb {
    live: Rc<Cell<i64>>,
    armed: Rc<Cell<Option<u32>>>,
    value: u32,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        self.live.set(self.live.get() - 1);
        assert!(self.live.get() >= 0, "double drop");
        if self.armed.get() == Some(self.value) {
            self.armed.set(None);
            panic!("drop of {} panics", self.value);
        }
    }
}

/// The live count and the armed value, shared by every [`Bomb`] of a test.
type Fuse = (Rc<Cell<i64>>, Rc<Cell<Option<u32>>>);

/// A pool of `count` bombs, the one of value `armed` armed.
fn bombs(reuse: Reuse, count: u32, armed: u32) -> (Pool<Bomb>, Fuse) {
    let live = Rc::new(Cell::new(0));
    let armed = Rc::new(Cell::new(Some(armed)));
    let mut pool = Pool::new().with_reuse(reuse);
    for value in 0..count {
        live.set(live.get() + 1);
        pool.insert(Bomb {
            live: live.clone(),
            armed: armed.clone(),
            value,
        });
    }
    (pool, (live, armed))
}

#[test]
fn a_panicking_drop_drops_the_others_and_leaves_a_valid_pool() {
    type Action = fn(&mut Option<Pool<Bomb>>);
    let actions: [(&str, Action); 6] = [
        ("clear", |p| p.as_mut().unwrap().clear()),
        ("drain", |p| drop(p.as_mut().unwrap().drain())),
        ("drain after one", |p| {
            let mut d = p.as_mut().unwrap().drain();
            drop(d.next());
            drop(d);
        }),
        ("into_iter", |p| {
            let mut it = p.take().unwrap().into_iter();
            drop(it.next());
            drop(it);
        }),
        ("drop", |p| drop(p.take())),
        ("retain", |p| {
            p.as_mut().unwrap().retain(|_, b| b.value % 2 == 0)
        }),
    ];
    // Ten items fill no word of the alive flags; of 200, the armed one (101) is in a full
    // word, which `clear` takes without a bit walk.
    for (count, armed_value) in [(10, 3), (200, 101)] {
        for reuse in [Reuse::Fifo, Reuse::LowestFirst] {
            for (name, action) in actions {
                let (pool, (live, armed)) = bombs(reuse, count, armed_value);
                let mut pool = Some(pool);
                let r = catch_unwind(AssertUnwindSafe(|| action(&mut pool)));
                assert!(r.is_err(), "{name}: the panic goes on");
                assert_eq!(armed.get(), None, "{name}: the armed item was dropped");
                if let Some(pool) = &mut pool {
                    pool.assert_invariants();
                    if name == "retain" {
                        // As `Vec::retain`: the items not yet visited (after the armed one)
                        // stay.
                        let want: Vec<u32> = (0..count)
                            .filter(|&v| v % 2 == 0 || v > armed_value)
                            .collect();
                        assert_eq!(
                            pool.values().map(|b| b.value).collect::<Vec<_>>(),
                            want,
                            "{name}"
                        );
                    } else {
                        assert!(pool.is_empty(), "{name}: every item is gone");
                    }
                    assert_eq!(live.get() as usize, pool.len(), "{name}: no leak");
                    // The pool goes on working.
                    live.set(live.get() + 1);
                    let h = pool.insert(Bomb {
                        live: live.clone(),
                        armed: armed.clone(),
                        value: 42,
                    });
                    assert_eq!(pool[h].value, 42);
                    pool.assert_invariants();
                }
                drop(pool);
                assert_eq!(
                    live.get(),
                    0,
                    "{name} under {reuse:?}: no leak, no double drop"
                );
            }
        }
    }
}

#[test]
fn panicking_drop_during_remove_leaves_the_pool_valid() {
    struct PanicOnDrop(bool);
    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            if self.0 {
                panic!("drop panics");
            }
        }
    }
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
#[cfg_attr(miri, ignore = "65 535 insertions; exercised natively")]
fn handle32_pool_is_bounded() {
    for reuse in [Reuse::Fifo, Reuse::LowestFirst] {
        // Holes kept back by `min_free` are filled anyway once no new slot can be made.
        let mut pool: Pool<u8, Handle32> = Pool::with_key().with_reuse(reuse).with_min_free(5);
        for _ in 0..Handle32::MAX_SLOTS {
            pool.insert(0);
        }
        let e = pool.try_insert(7).unwrap_err();
        assert_eq!(e.kind(), dod::InsertErrorKind::Full);
        assert_eq!(e.into_inner(), 7);
        for i in [100, 7] {
            let h = pool.key_at(i).unwrap();
            pool.remove(h);
        }
        let again = pool.insert(1);
        assert_eq!(
            again.index(),
            if reuse == Reuse::Fifo { 100 } else { 7 },
            "{reuse:?}"
        );
        assert_eq!(again.generation(), 2);
        pool.insert(1);
        let r = catch_unwind(AssertUnwindSafe(|| pool.insert(2)));
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert!(msg.contains("Pool is full"), "{msg}");
        pool.assert_invariants();
    }
}

/// A churn with `Handle32` keys: long-lived items stay, and one short-lived item is inserted
/// and removed at every cycle (a bullet spawned and destroyed each frame). Returns the highest
/// generation handed out and the slot count at the end.
fn churn(mut pool: Pool<u32, Handle32>, holes: u32, cycles: u32) -> (u16, usize) {
    // The long-lived items, with `holes` of them removed again to leave holes.
    let keys: Vec<Handle32> = (0..8 + holes).map(|i| pool.insert(i)).collect();
    for &k in keys.iter().skip(1).step_by(2).take(holes as usize) {
        pool.remove(k);
    }
    let mut highest = 0;
    for c in 0..cycles {
        let h = pool.insert(c);
        highest = highest.max(h.generation());
        assert_eq!(pool.remove(h), Some(c));
    }
    pool.assert_invariants();
    (highest, pool.slot_count())
}

#[test]
#[cfg_attr(miri, ignore = "100 000 cycles; exercised natively")]
fn fifo_spreads_generations_where_lowest_first_retires_a_slot() {
    const CYCLES: u32 = 100_000;
    // A few holes left by removals.
    let lowest = churn(Pool::with_key().with_reuse(Reuse::LowestFirst), 4, CYCLES);
    let fifo = churn(Pool::with_key(), 4, CYCLES);
    assert_eq!(
        lowest,
        (u16::MAX, 12),
        "lowest-first burns the lowest hole until it retires, then the next one"
    );
    assert_eq!(
        fifo,
        ((CYCLES / 4 + 1) as u16, 12),
        "FIFO takes the four holes in turn: no slot retires"
    );
    // Holes kept back by `min_free`, with no hole to start from.
    let lowest = churn(
        Pool::with_key()
            .with_reuse(Reuse::LowestFirst)
            .with_min_free(7),
        0,
        CYCLES,
    );
    let fifo = churn(Pool::with_key().with_min_free(7), 0, CYCLES);
    assert_eq!(lowest, (u16::MAX, 8 + 2), "min_free does not apply");
    assert_eq!(
        fifo,
        ((CYCLES / 8) as u16, 8 + 8),
        "eight slots take turns: each lives eight times longer"
    );
}

/// A key type whose tag has bit 31 set: a forged bit pattern no container hands out.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
struct Malformed(u32, u16);

impl Key for Malformed {
    const MAX_SLOTS: u32 = u32::MAX;
    const MAX_TYPE_ID: u16 = 0x7FFF;
    fn from_parts(index: u32, generation: std::num::NonZeroU16, _: u16) -> Self {
        Malformed(index, generation.get())
    }
    fn index(self) -> u32 {
        self.0
    }
    fn generation(self) -> u16 {
        self.1
    }
    fn type_id(self) -> u16 {
        0
    }
    fn tag(self) -> u32 {
        u32::from(self.1) | 1 << 31
    }
}

#[test]
fn a_malformed_key_never_resolves() {
    for reuse in [Reuse::Fifo, Reuse::LowestFirst] {
        let mut pool: Pool<u8, Malformed> = Pool::with_key().with_reuse(reuse);
        pool.insert(1);
        pool.insert(2);
        assert_eq!(pool.remove_at(0), Some(1));
        // Slot 0 is vacant at generation 1 (tag `1 | 1 << 31`), slot 1 occupied at 1: the
        // first key's tag equals the vacant slot's tag, the second is the occupied slot's
        // with bit 31 set.
        for forged in [
            Malformed(0, 1),
            Malformed(1, 1),
            Malformed(0, 2),
            Malformed(1, 2),
        ] {
            assert_eq!(pool.get(forged), None, "{forged:?}");
            assert_eq!(pool.get_mut(forged), None);
            assert!(!pool.contains(forged));
            assert_eq!(pool.remove(forged), None);
            let r = catch_unwind(AssertUnwindSafe(|| pool[forged]));
            let msg = *r.unwrap_err().downcast::<String>().unwrap();
            assert!(msg.contains("malformed key"), "{msg}");
        }
        assert_eq!(pool.len(), 1);
        assert_eq!(pool.get_at(1), Some(&2));
        pool.assert_invariants();
    }
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
        r#"{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[2147483649,1],"free":[0],"items":[[1,"b"]]}"#
    );
    let mut back: Pool<String, Handle32> = serde_json::from_str(&json).unwrap();
    back.assert_invariants();
    assert_eq!(back.get(a), None);
    assert_eq!(back[b], "b");
    let c = back.insert("c".into());
    assert_eq!((c.index(), c.generation()), (0, 2));
    let v = 1u32 << 31;
    for bad in [
        // A type id the key type cannot carry.
        r#"{"type_id":1,"reuse":"Fifo","min_free":0,"slots":[],"free":[],"items":[]}"#.into(),
        // An occupied slot at generation 0.
        r#"{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[0],"free":[],"items":[[0,"x"]]}"#
            .into(),
        // An item past the slots, out of order, twice, in a hole; an occupied slot without one.
        r#"{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[1],"free":[],"items":[[1,"x"]]}"#
            .into(),
        r#"{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[1,1],"free":[],"items":[[1,"x"],[0,"y"]]}"#.into(),
        r#"{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[1,1],"free":[],"items":[[1,"x"],[1,"y"]]}"#.into(),
        format!(r#"{{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[{}],"free":[],"items":[[0,"x"]]}}"#, v | 1),
        r#"{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[1],"free":[],"items":[]}"#.into(),
        // A tag of another type id.
        r#"{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[65537],"free":[],"items":[[0,"x"]]}"#
            .into(),
        // Freelists: a hole missing, an occupied slot, a retired slot, a slot twice, out of
        // range, and any freelist under LowestFirst.
        format!(r#"{{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[{}],"free":[],"items":[]}}"#, v | 1),
        r#"{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[1],"free":[0],"items":[[0,"x"]]}"#
            .into(),
        format!(r#"{{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[{}],"free":[0],"items":[]}}"#, v | 0xFFFF),
        format!(r#"{{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[{},{}],"free":[0,1,0],"items":[]}}"#, v | 1, v | 1),
        format!(r#"{{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[{}],"free":[0,0],"items":[]}}"#, v | 1),
        format!(r#"{{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[{}],"free":[1],"items":[]}}"#, v | 1),
        format!(r#"{{"type_id":0,"reuse":"LowestFirst","min_free":0,"slots":[{}],"free":[0],"items":[]}}"#, v | 1),
        // Fields missing, unknown, of the wrong kind.
        r#"{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[],"free":[]}"#.into(),
        r#"{"type_id":0}"#.into(),
        r#"{"type_id":0,"reuse":"Lifo","min_free":0,"slots":[],"free":[],"items":[]}"#.into(),
        r#"{"type_id":0,"reuse":"Fifo","min_free":0,"slots":[],"free":[],"items":[],"x":1}"#.into(),
        r#"{"type_id":0,"reuse":"Fifo","min_free":-1,"slots":[],"free":[],"items":[]}"#.into(),
    ] {
        let bad: String = bad;
        assert!(
            serde_json::from_str::<Pool<String, Handle32>>(&bad).is_err(),
            "{bad}"
        );
    }
    // A retired slot stays retired, under either policy.
    for reuse in ["Fifo", "LowestFirst"] {
        let json = format!(
            r#"{{"type_id":0,"reuse":"{reuse}","min_free":0,"slots":[{}],"free":[],"items":[]}}"#,
            v | 0xFFFF
        );
        let mut p: Pool<u8, Handle32> = serde_json::from_str(&json).unwrap();
        p.assert_invariants();
        assert_eq!(p.insert(1).index(), 1);
        assert_eq!(p.insert(1).index(), 2);
        p.assert_invariants();
    }
}

#[cfg(feature = "serde")]
#[test]
fn serde_keeps_the_next_keys() {
    for reuse in [Reuse::Fifo, Reuse::LowestFirst] {
        for min_free in [0, 3] {
            let mut pool: Pool<u32> = Pool::new()
                .with_type_id(5)
                .with_reuse(reuse)
                .with_min_free(min_free);
            let keys: Vec<Handle> = (0..40).map(|i| pool.insert(i)).collect();
            // Holes vacated in an order that is neither slot order nor its reverse.
            for i in [17, 3, 31, 8, 25, 0, 12, 39, 5] {
                pool.remove(keys[i]);
            }
            let json = serde_json::to_string(&pool).unwrap();
            let mut back: Pool<u32> = serde_json::from_str(&json).unwrap();
            back.assert_invariants();
            assert_eq!((back.reuse(), back.min_free()), (reuse, min_free));
            for v in 0..12 {
                let (a, b) = (pool.insert(v), back.insert(v));
                assert_eq!(a, b, "{reuse:?}, min_free {min_free}: insertion {v}");
                if v % 3 == 0 {
                    assert_eq!(pool.remove(a), back.remove(b));
                }
            }
            assert!(pool == back);
        }
    }
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
fn reserve_does_not_count_retired_or_kept_slots_as_room() {
    let v = 1u32 << 31;
    for (reuse, min_free, free) in [
        ("LowestFirst", 0, "[]"),
        ("Fifo", 0, "[4]"),
        ("Fifo", 1, "[4]"),
    ] {
        // Four retired slots and one hole (kept back when min_free is 1).
        let r = v | 0xFFFF;
        let json = format!(
            r#"{{"type_id":0,"reuse":"{reuse}","min_free":{min_free},"slots":[{r},{r},{r},{r},{}],"free":{free},"items":[]}}"#,
            v | 3
        );
        let mut p: Pool<u64> = serde_json::from_str(&json).unwrap();
        p.reserve(5);
        let room = 4 + 5 + min_free as usize;
        assert!(p.capacity() >= room, "capacity {}", p.capacity());
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
}
