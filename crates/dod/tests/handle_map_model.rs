//! Model test: random operation sequences applied to a `HandleMap` and to a `HashMap` model,
//! with every observable checked after every step, for both key layouts.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use dod::{Handle, Handle32, HandleMap, Key};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Insert(u32),
    InsertMany(Vec<u32>),
    InsertWithHandle,
    Remove(usize),
    RemoveMany(Vec<usize>),
    Get(usize),
    /// A seen handle with its generation moved by the delta (a forged, well-formed handle).
    Forge(usize, i8),
    /// A handle made up from an index (often out of range or never used) and a generation.
    ForgeIndex(u32, u16),
    ForeignTypeId(usize),
    Set(usize, u32),
    Swap(usize, usize),
    Retain(u32),
    Clear,
    Reset,
    Drain(usize),
    SortBy,
    SortUnstable,
    Defragment(usize),
    Reserve(u8),
    ShrinkToFit,
    RoundTrip,
    Clone,
}

fn op() -> impl Strategy<Value = Op> {
    let pick = any::<usize>();
    prop_oneof![
        10 => any::<u32>().prop_map(|v| Op::Insert(v % 1000)),
        2 => prop::collection::vec(0u32..1000, 0..8).prop_map(Op::InsertMany),
        1 => Just(Op::InsertWithHandle),
        6 => pick.prop_map(Op::Remove),
        2 => prop::collection::vec(any::<usize>(), 0..6).prop_map(Op::RemoveMany),
        4 => pick.prop_map(Op::Get),
        2 => (pick, any::<i8>()).prop_map(|(p, d)| Op::Forge(p, d)),
        1 => (0u32..300, 0u16..4).prop_map(|(i, g)| Op::ForgeIndex(i, g)),
        1 => pick.prop_map(Op::ForeignTypeId),
        3 => (pick, 0u32..1000).prop_map(|(p, v)| Op::Set(p, v)),
        1 => (pick, any::<usize>()).prop_map(|(a, b)| Op::Swap(a, b)),
        1 => (2u32..5).prop_map(Op::Retain),
        1 => Just(Op::Clear),
        1 => Just(Op::Reset),
        1 => (0usize..5).prop_map(Op::Drain),
        1 => Just(Op::SortBy),
        1 => Just(Op::SortUnstable),
        2 => (0usize..4).prop_map(Op::Defragment),
        1 => any::<u8>().prop_map(Op::Reserve),
        1 => Just(Op::ShrinkToFit),
        1 => Just(Op::RoundTrip),
        1 => Just(Op::Clone),
    ]
}

/// A key type the test can forge handles of.
trait TestKey: Key {
    fn with_generation(self, generation: u16) -> Option<Self>;
    fn with_type_id(self, type_id: u16) -> Option<Self>;
}

impl TestKey for Handle {
    fn with_generation(self, g: u16) -> Option<Self> {
        Handle::new(self.index(), g, self.type_id())
    }
    fn with_type_id(self, t: u16) -> Option<Self> {
        Handle::new(self.index(), self.generation(), t)
    }
}

impl TestKey for Handle32 {
    fn with_generation(self, g: u16) -> Option<Self> {
        Handle32::new(self.index(), g)
    }
    fn with_type_id(self, _: u16) -> Option<Self> {
        None
    }
}

/// The documented slot policy, played alongside the map so that every handle it hands out can
/// be predicted exactly: FIFO reuse of vacant slots beyond `min_free`, new slots at the
/// watermark generation, retirement at generation 65 535, and `reset`'s watermark.
#[derive(Clone)]
struct SlotModel {
    /// Generation and occupancy of each slot.
    slots: Vec<(u16, bool)>,
    free: std::collections::VecDeque<u32>,
    first_gen: u16,
    max_gen: u16,
    min_free: usize,
    max_slots: usize,
    type_id: u16,
}

impl SlotModel {
    fn new<K: Key>(min_free: u32, type_id: u16) -> Self {
        SlotModel {
            slots: Vec::new(),
            free: Default::default(),
            first_gen: 1,
            max_gen: 1,
            min_free: min_free as usize,
            max_slots: K::MAX_SLOTS as usize,
            type_id,
        }
    }

    fn insert<K: Key>(&mut self) -> Option<K> {
        let reuse = self.free.len() > self.min_free
            || (!self.free.is_empty() && self.slots.len() >= self.max_slots);
        let (i, g) = if reuse {
            let i = self.free.pop_front().unwrap();
            let s = &mut self.slots[i as usize];
            s.0 += 1;
            s.1 = true;
            self.max_gen = self.max_gen.max(s.0);
            (i, s.0)
        } else if self.slots.len() < self.max_slots {
            self.slots.push((self.first_gen, true));
            ((self.slots.len() - 1) as u32, self.first_gen)
        } else {
            return None;
        };
        Some(K::from_parts(
            i,
            std::num::NonZeroU16::new(g).unwrap(),
            self.type_id,
        ))
    }

    fn vacate<K: Key>(&mut self, k: K) {
        let s = &mut self.slots[k.index() as usize];
        assert!(s.1 && s.0 == k.generation(), "model vacates a dead key");
        s.1 = false;
        if s.0 < u16::MAX {
            self.free.push_back(k.index());
        }
    }

    fn reset<K: Key>(&mut self, dense: &[K]) {
        if self.max_gen >= 1 << 15 {
            dense.iter().for_each(|&k| self.vacate(k));
        } else {
            self.first_gen = self.max_gen + 1;
            self.max_gen = self.first_gen;
            self.slots.clear();
            self.free.clear();
        }
    }
}

/// The value type: a number and, for `insert_with_key`, the handle it was given.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct V<K> {
    n: u32,
    me: Option<K>,
}

struct Model<K: TestKey> {
    map: HandleMap<V<K>, K>,
    live: HashMap<K, V<K>>,
    seen: Vec<K>,
    seen_set: HashSet<K>,
    /// The comparator of the last completed sort pass was descending.
    last_desc: bool,
    slots: SlotModel,
}

/// Serialisable when the `serde` feature is on; anything otherwise.
#[cfg(feature = "serde")]
trait MaybeSerde: serde::Serialize + serde::de::DeserializeOwned {}
#[cfg(feature = "serde")]
impl<T: serde::Serialize + serde::de::DeserializeOwned> MaybeSerde for T {}
#[cfg(not(feature = "serde"))]
trait MaybeSerde {}
#[cfg(not(feature = "serde"))]
impl<T> MaybeSerde for T {}

impl<K: TestKey + MaybeSerde> Model<K> {
    fn pick(&self, p: usize) -> Option<K> {
        (!self.seen.is_empty()).then(|| self.seen[p % self.seen.len()])
    }

    fn fresh(&mut self, k: K, v: V<K>) {
        assert_eq!(
            Some(k),
            self.slots.insert::<K>(),
            "the slot policy picks another handle"
        );
        assert!(self.seen_set.insert(k), "handle {k:?} handed out twice");
        self.seen.push(k);
        self.live.insert(k, v);
    }

    fn apply(&mut self, op: &Op) {
        let before: Vec<V<K>> = self.map.values().to_vec();
        let dense: Vec<K> = self.map.keys().collect();
        match *op {
            Op::Insert(n) => {
                let k = self.map.insert(V { n, me: None });
                assert_eq!(self.map.values().last(), Some(&V { n, me: None }));
                self.fresh(k, V { n, me: None });
            }
            Op::InsertMany(ref ns) => {
                let ks = self.map.insert_many(ns.iter().map(|&n| V { n, me: None }));
                assert_eq!(ks.len(), ns.len());
                for (k, &n) in ks.into_iter().zip(ns) {
                    self.fresh(k, V { n, me: None });
                }
            }
            Op::InsertWithHandle => {
                let k = self.map.insert_with_key(|me| V { n: 7, me: Some(me) });
                self.fresh(k, V { n: 7, me: Some(k) });
            }
            Op::Remove(p) => {
                let Some(k) = self.pick(p) else { return };
                let pos = self.map.get_index_of(k);
                let got = self.map.remove(k);
                assert_eq!(got, self.live.remove(&k));
                if got.is_some() {
                    self.slots.vacate(k);
                }
                if let Some(pos) = pos {
                    // Swap-and-pop: the last value moved into the hole.
                    let mut expect = before.clone();
                    expect.swap_remove(pos);
                    assert_eq!(self.map.values(), &expect[..]);
                }
            }
            Op::RemoveMany(ref ps) => {
                let ks: Vec<K> = ps.iter().filter_map(|&p| self.pick(p)).collect();
                let mut expect = 0;
                for &k in &ks {
                    if self.live.remove(&k).is_some() {
                        self.slots.vacate(k);
                        expect += 1;
                    }
                }
                assert_eq!(self.map.remove_many(&ks), expect);
            }
            Op::Get(p) => {
                let Some(k) = self.pick(p) else { return };
                assert_eq!(self.map.get(k), self.live.get(&k));
            }
            Op::Forge(p, delta) => {
                let Some(k) = self.pick(p) else { return };
                let g = k.generation().wrapping_add_signed(i16::from(delta));
                if let Some(f) = k.with_generation(g) {
                    assert_eq!(self.map.get(f), self.live.get(&f), "forged {f:?}");
                    assert_eq!(self.map.contains(f), self.live.contains_key(&f));
                }
            }
            Op::ForgeIndex(i, g) => {
                let f = K::from_parts(i, std::num::NonZeroU16::new(g.max(1)).unwrap(), 0);
                assert_eq!(self.map.get(f), self.live.get(&f), "forged {f:?}");
            }
            Op::ForeignTypeId(p) => {
                let Some(k) = self.pick(p) else { return };
                if let Some(f) = k.with_type_id(k.type_id() ^ 1) {
                    assert_eq!(self.map.get(f), None);
                    assert!(catch_unwind(AssertUnwindSafe(|| &self.map[f])).is_err());
                }
            }
            Op::Set(p, n) => {
                let Some(k) = self.pick(p) else { return };
                match (self.map.get_mut(k), self.live.get_mut(&k)) {
                    (Some(a), Some(b)) => {
                        a.n = n;
                        b.n = n;
                    }
                    (None, None) => {}
                    (a, b) => panic!("get_mut {a:?} vs model {b:?}"),
                }
            }
            Op::Swap(a, b) => {
                let (Some(ka), Some(kb)) = (self.pick(a), self.pick(b)) else {
                    return;
                };
                let both = self.live.contains_key(&ka) && self.live.contains_key(&kb);
                match self.map.get_disjoint_mut([ka, kb]) {
                    Some([x, y]) => {
                        assert!(both && ka != kb);
                        std::mem::swap(&mut x.n, &mut y.n);
                        let na = self.live[&ka].n;
                        let nb = self.live[&kb].n;
                        self.live.get_mut(&ka).unwrap().n = nb;
                        self.live.get_mut(&kb).unwrap().n = na;
                    }
                    None => assert!(!both || ka == kb),
                }
            }
            Op::Retain(m) => {
                self.map.retain(|k, v| {
                    assert!(
                        v.me.is_none_or(|me| me == k),
                        "retain passes each value its handle"
                    );
                    v.n % m != 0
                });
                self.live.retain(|_, v| v.n % m != 0);
                for &k in &dense {
                    if !self.live.contains_key(&k) {
                        self.slots.vacate(k);
                    }
                }
                let expect: Vec<_> = before.into_iter().filter(|v| v.n % m != 0).collect();
                assert_eq!(self.map.values(), &expect[..], "retain keeps order");
            }
            Op::Clear => {
                self.map.clear();
                self.live.clear();
                dense.iter().for_each(|&k| self.slots.vacate(k));
            }
            Op::Reset => {
                self.map.reset();
                self.live.clear();
                self.slots.reset(&dense);
            }
            Op::Drain(take) => {
                let mut got = Vec::new();
                {
                    let mut d = self.map.drain();
                    for _ in 0..take {
                        if let Some(x) = d.next() {
                            got.push(x);
                        }
                    }
                }
                for (k, v) in got {
                    assert_eq!(self.live.get(&k), Some(&v));
                }
                self.live.clear();
                dense.iter().for_each(|&k| self.slots.vacate(k));
            }
            Op::SortBy => {
                self.map.sort_by(|a, b| a.n.cmp(&b.n));
                let mut expect = before;
                expect.sort_by_key(|v| v.n);
                assert_eq!(self.map.values(), &expect[..], "stable sort");
                assert!(!self.map.is_fragmented());
                self.last_desc = false;
            }
            Op::SortUnstable => {
                self.map.sort_unstable_by(|a, b| b.n.cmp(&a.n));
                assert!(self.map.values().is_sorted_by(|a, b| a.n >= b.n));
                assert!(!self.map.is_fragmented());
                self.last_desc = true;
            }
            Op::Defragment(budget) => {
                // Switching comparators is announced, as documented.
                if self.last_desc {
                    self.map.mark_fragmented();
                    self.last_desc = false;
                }
                let was_fragmented = self.map.is_fragmented();
                let moves = self.map.defragment(|a, b| a.n.cmp(&b.n), budget);
                assert!(moves <= budget);
                if !was_fragmented {
                    assert_eq!(moves, 0);
                }
                if !self.map.is_fragmented() {
                    assert!(self.map.values().is_sorted_by(|a, b| a.n <= b.n));
                }
                let mut calls = 0;
                let mut probe = self.map.clone();
                while probe.is_fragmented() {
                    probe.defragment(|a, b| a.n.cmp(&b.n), budget.max(1));
                    calls += 1;
                    // One plan of at most n - 1 moves; if values were edited while a plan
                    // was under way, the final check fails and one more plan follows.
                    assert!(calls <= 2 * probe.len() + 2, "defragment does not converge");
                }
                assert!(probe.values().is_sorted_by(|a, b| a.n <= b.n));
            }
            Op::Reserve(n) => {
                // A refused reservation changes nothing (the model check follows).
                assert!(self.map.try_reserve(usize::MAX).is_err());
                // Either reservation holds the next `n` insertions: no array grows, the
                // slots included (vacant slots kept back by `min_free` are not counted).
                for fallible in [false, true] {
                    let mut tried = self.map.clone();
                    if fallible {
                        assert!(tried.try_reserve(usize::from(n)).is_ok());
                    } else {
                        tried.reserve(usize::from(n));
                    }
                    let held = tried.memory_usage();
                    for _ in 0..n {
                        tried.insert(V { n: 0, me: None });
                    }
                    assert_eq!(tried.memory_usage(), held, "fallible: {fallible}");
                }
                self.map.reserve(usize::from(n));
                assert!(self.map.capacity() >= self.map.len() + usize::from(n));
            }
            Op::ShrinkToFit => {
                self.map.shrink_to_fit();
            }
            Op::RoundTrip => {
                #[cfg(feature = "serde")]
                {
                    let json = serde_json::to_string(&self.map).unwrap();
                    let mut back: HandleMap<V<K>, K> = serde_json::from_str(&json).unwrap();
                    assert_eq!(back.values(), self.map.values());
                    assert!(back.iter().eq(self.map.iter()));
                    assert!(back == self.map);
                    // Replays are deterministic: the same next handles.
                    let mut twin = self.map.clone();
                    for n in 0..3 {
                        assert_eq!(
                            back.insert(V { n, me: None }),
                            twin.insert(V { n, me: None })
                        );
                    }
                    // Carry on with a freshly loaded map.
                    self.map = serde_json::from_str(&json).unwrap();
                }
            }
            Op::Clone => {
                let c = self.map.clone();
                assert!(c.iter().eq(self.map.iter()));
                assert!(c == self.map);
                let mut d = self.map.clone();
                if let Some(h) = d.key_at(0) {
                    d.remove(h);
                    assert!(d != self.map, "one value fewer");
                }
                self.map = c;
            }
        }
        self.check();
    }

    fn check(&self) {
        let map = &self.map;
        assert_eq!(map.len(), self.live.len());
        assert_eq!(map.is_empty(), self.live.is_empty());
        assert_eq!(map.values().len(), map.len());
        let mut from_iter = HashMap::new();
        for (d, (k, v)) in map.iter().enumerate() {
            assert_eq!(map.get_index_of(k), Some(d));
            assert_eq!(map.key_at(d), Some(k));
            assert!(from_iter.insert(k, v.clone()).is_none());
        }
        assert_eq!(map.key_at(map.len()), None);
        assert_eq!(from_iter, self.live);
        let mut panics_checked = 0;
        for &k in &self.seen {
            assert_eq!(map.get(k), self.live.get(&k), "{k:?}");
            assert_eq!(map.contains(k), self.live.contains_key(&k));
            if !self.live.contains_key(&k) && panics_checked < 2 {
                // Unwinding is slow: check the `Index` panic on a couple of stale keys a step.
                panics_checked += 1;
                assert!(catch_unwind(AssertUnwindSafe(|| &map[k])).is_err());
            }
        }
    }
}

fn run<K: TestKey + MaybeSerde>(map: HandleMap<V<K>, K>, ops: &[Op]) {
    let slots = SlotModel::new::<K>(map.min_free(), map.type_id());
    let mut m = Model {
        slots,
        map,
        live: HashMap::new(),
        seen: Vec::new(),
        seen_set: HashSet::new(),
        last_desc: false,
    };
    for op in ops {
        m.apply(op);
    }
}

fn config() -> ProptestConfig {
    // The checks provoke `Index` panics on purpose; keep their messages out of the output.
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = info.to_string();
            let expected = ["stale handle", "out of range", "another map"];
            if !expected.iter().any(|e| msg.contains(e)) {
                default(info);
            }
        }));
    });
    ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 1000 },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Operations per sequence: short under Miri, which runs each step thousands of times slower.
const OPS: usize = if cfg!(miri) { 24 } else { 120 };

proptest! {
    #![proptest_config(config())]

    #[test]
    fn model_handle(ops in prop::collection::vec(op(), 1..OPS)) {
        run::<Handle>(HandleMap::new().with_type_id(5), &ops);
    }

    #[test]
    fn model_handle_min_free(ops in prop::collection::vec(op(), 1..OPS)) {
        run::<Handle>(HandleMap::with_key().with_min_free(3), &ops);
    }

    #[test]
    fn model_handle32(ops in prop::collection::vec(op(), 1..OPS)) {
        run::<Handle32>(HandleMap::with_key(), &ops);
    }
}

/// Counts live instances, so leaks and double drops show.
#[derive(Debug)]
struct Counted {
    n: u32,
    live: Rc<Cell<i64>>,
}

impl Counted {
    fn new(n: u32, live: &Rc<Cell<i64>>) -> Self {
        live.set(live.get() + 1);
        Counted {
            n,
            live: live.clone(),
        }
    }
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        Counted::new(self.n, &self.live)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.live.set(self.live.get() - 1);
    }
}

#[test]
fn every_value_dropped_exactly_once() {
    let live = Rc::new(Cell::new(0i64));
    {
        let mut map = HandleMap::new();
        let hs = map.insert_many((0..100).map(|n| Counted::new(n, &live)));
        assert_eq!(live.get(), 100);
        drop(map.remove(hs[3]));
        assert_eq!(map.remove_many(&hs[10..20]), 10);
        assert_eq!(live.get(), 89);
        map.retain(|_, v| v.n % 3 != 0);
        assert_eq!(live.get() as usize, map.len());
        map.sort_by(|a, b| b.n.cmp(&a.n));
        map.defragment(|a, b| a.n.cmp(&b.n), 5);
        assert_eq!(live.get() as usize, map.len());
        let copy = map.clone();
        assert_eq!(live.get() as usize, 2 * map.len());
        drop(copy);
        {
            let mut d = map.drain();
            d.next();
        }
        assert_eq!(live.get(), 0);
        map.extend((0..10).map(|n| Counted::new(n, &live)));
        map.clear();
        assert_eq!(live.get(), 0);
        map.extend((0..10).map(|n| Counted::new(n, &live)));
        map.reset();
        assert_eq!(live.get(), 0);
        map.extend((0..10).map(|n| Counted::new(n, &live)));
        let mut it = map.into_iter();
        it.next();
        it.next_back();
        drop(it);
        assert_eq!(live.get(), 0);
        let mut map = HandleMap::new();
        map.extend((0..10).map(|n| Counted::new(n, &live)));
        assert_eq!(live.get(), 10);
    }
    assert_eq!(live.get(), 0);
}

/// The live values of a map as a `HashMap`, to compare before and after a panic.
fn snapshot(map: &HandleMap<u32>) -> HashMap<Handle, u32> {
    map.iter().map(|(k, &v)| (k, v)).collect()
}

#[test]
fn panicking_comparator_leaves_map_as_it_was() {
    let mut map = HandleMap::new();
    map.insert_many((0..200u32).map(|i| (i * 7919) % 200));
    let before = snapshot(&map);
    let order: Vec<u32> = map.values().to_vec();
    for limit in [0, 1, 50, 500] {
        let mut calls = 0;
        let r = catch_unwind(AssertUnwindSafe(|| {
            map.sort_by(|a, b| {
                calls += 1;
                assert!(calls <= limit, "comparator gives up");
                a.cmp(b)
            })
        }));
        assert!(r.is_err());
        assert_eq!(snapshot(&map), before);
        assert_eq!(map.values(), &order[..]);
        let mut calls = 0;
        let r = catch_unwind(AssertUnwindSafe(|| {
            map.defragment(
                |a, b| {
                    calls += 1;
                    assert!(calls <= limit, "comparator gives up");
                    a.cmp(b)
                },
                10,
            )
        }));
        assert!(r.is_err());
        assert_eq!(snapshot(&map), before);
    }
    // A defragment in progress survives a panicking call (its final check panics) and still
    // finishes sorted, with every handle on its value.
    map.defragment(|a, b| a.cmp(b), 10);
    assert!(map.is_fragmented());
    let r = catch_unwind(AssertUnwindSafe(|| {
        map.defragment(|_, _| panic!("comparator gives up"), usize::MAX)
    }));
    assert!(r.is_err());
    assert_eq!(snapshot(&map), before);
    while map.is_fragmented() {
        map.defragment(|a, b| a.cmp(b), 10);
    }
    assert_eq!(snapshot(&map), before);
    assert!(map.values().is_sorted());
}

#[test]
fn panicking_retain_leaves_map_valid() {
    let live = Rc::new(Cell::new(0i64));
    let mut map = HandleMap::new();
    let hs = map.insert_many((0..50).map(|n| Counted::new(n, &live)));
    let mut seen = 0;
    let r = catch_unwind(AssertUnwindSafe(|| {
        map.retain(|_, v| {
            seen += 1;
            assert!(seen < 20, "closure gives up");
            v.n % 2 == 0
        })
    }));
    assert!(r.is_err());
    // The first 19 were judged (odd ones removed); the rest stay, in order.
    let kept: Vec<u32> = map.values().iter().map(|v| v.n).collect();
    let expect: Vec<u32> = (0..50).filter(|&n| n >= 19 || n % 2 == 0).collect();
    assert_eq!(kept, expect);
    assert_eq!(live.get() as usize, map.len());
    for (n, &h) in hs.iter().enumerate() {
        let n = n as u32;
        assert_eq!(map.get(h).map(|v| v.n), expect.contains(&n).then_some(n));
    }
}

#[test]
fn one_slot_reused_200_000_times_never_revives_a_handle() {
    let rounds = if cfg!(miri) { 300 } else { 200_000 };
    let mut map = HandleMap::<u32, Handle32>::with_key();
    let keeper = map.insert(u32::MAX);
    let mut old = Vec::with_capacity(rounds);
    let mut all = HashSet::with_capacity(rounds);
    for i in 0..rounds as u32 {
        let h = map.insert(i);
        assert!(all.insert(h), "handle {h:?} handed out twice");
        assert_eq!(map.remove(h), Some(i));
        assert_eq!(map.get(h), None);
        old.push(h);
    }
    // Every handle ever handed out is stale, whatever was put in its slot since.
    for i in 0..64u32 {
        map.insert(i);
    }
    for &h in &old {
        assert_eq!(map.get(h), None, "{h:?} resolves again");
    }
    assert_eq!(map[keeper], u32::MAX);
    // Each slot retires after 65 535 uses: the keeper's slot, the retired ones, the one in use
    // at the end of the loop, and 63 new slots for the last inserts (the vacant slot in the
    // freelist is reused by the first of them).
    let retired = rounds / 65_535;
    assert_eq!(map.slot_count(), 1 + retired + 64);
}

#[test]
fn reset_after_a_busy_slot_leaves_new_slots_long_lives() {
    let rounds = if cfg!(miri) { 200 } else { 65_534 };
    let mut map = HandleMap::<u8, Handle32>::with_key();
    for _ in 0..rounds {
        let h = map.insert(0);
        map.remove(h);
    }
    map.reset();
    // Whatever generation the busy slot reached, slots made now are good for 32 768 uses.
    let churn = if cfg!(miri) { 200 } else { 100_000 };
    for _ in 0..churn {
        let h = map.insert(0);
        map.remove(h);
    }
    assert!(map.slot_count() <= 4, "{} slots", map.slot_count());
}

struct PanicOnDrop(u32, bool);

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        if self.1 && !std::thread::panicking() {
            panic!("drop gives up");
        }
    }
}

#[test]
fn panicking_drop_in_clear_or_reset_leaves_map_valid() {
    for reset in [false, true] {
        let mut map = HandleMap::new();
        let hs: Vec<Handle> = (0..10u32)
            .rev()
            .map(|i| map.insert(PanicOnDrop(i, i == 5)))
            .collect();
        map.defragment(|a, b| a.0.cmp(&b.0), 1); // a plan in progress
        let r = catch_unwind(AssertUnwindSafe(|| {
            if reset {
                map.reset()
            } else {
                map.clear()
            }
        }));
        assert!(r.is_err());
        assert!(map.is_empty());
        assert!(hs.iter().all(|&h| map.get(h).is_none()));
        assert_eq!(map.defragment(|a, b| a.0.cmp(&b.0), 10), 0);
        let h = map.insert(PanicOnDrop(1, false));
        assert_eq!(map[h].0, 1);
    }
}

#[test]
fn handle32_capacity_is_an_error_not_a_panic() {
    if cfg!(miri) {
        return;
    }
    let mut map = HandleMap::<u8, Handle32>::with_key();
    let hs: Vec<Handle32> = (0..65_535).map(|_| map.try_insert(1).unwrap()).collect();
    assert_eq!(map.try_insert(9).unwrap_err().into_inner(), 9);
    let r = catch_unwind(AssertUnwindSafe(|| map.insert(9)));
    assert!(r.is_err());
    map.remove(hs[100]);
    let h = map.try_insert(2).unwrap();
    assert_eq!(h.index(), 100);
    assert_eq!(map.get(hs[100]), None);
}

#[test]
fn defragment_resumes_and_counts_moves() {
    let mut map = HandleMap::new();
    let hs = map.insert_many((0..1000u32).rev());
    let mut total = 0;
    let mut calls = 0;
    while map.is_fragmented() {
        let moves = map.defragment(|a, b| a.cmp(b), 37);
        assert!(moves <= 37);
        total += moves;
        calls += 1;
        // Handles stay valid at every step.
        for (i, &h) in hs.iter().enumerate().step_by(97) {
            assert_eq!(map[h], 999 - i as u32);
        }
    }
    assert!(map.values().is_sorted());
    assert!(total <= 999, "each move places a value: {total}");
    assert_eq!(calls, total.div_ceil(37).max(1));
    assert_eq!(
        map.defragment(|a, b| a.cmp(b), 37),
        0,
        "sorted and unchanged: no work"
    );
    // A value edit between calls is caught by the final check.
    map.mark_fragmented();
    map.defragment(|a, b| b.cmp(a), 10);
    map[hs[0]] = 5000;
    while map.is_fragmented() {
        map.defragment(|a, b| b.cmp(a), 100);
    }
    assert!(map.values().is_sorted_by(|a, b| a >= b));
}

#[cfg(feature = "serde")]
#[test]
fn malformed_serialised_maps_are_errors() {
    let mut map = HandleMap::<u32>::new().with_type_id(3);
    let hs = map.insert_many([10, 20, 30]);
    map.remove(hs[1]);
    let good = serde_json::to_value(&map).unwrap();
    assert!(serde_json::from_value::<HandleMap<u32>>(good.clone()).is_ok());
    let broken = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = good.clone();
        f(&mut v);
        serde_json::from_value::<HandleMap<u32>>(v)
    };
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Edit)> = vec![
        (
            "item slot out of range",
            Box::new(|v| v["items"][0][0] = 99.into()),
        ),
        (
            "item on vacant slot",
            Box::new(|v| v["items"][0][0] = 1.into()),
        ),
        (
            "duplicate item",
            Box::new(|v| v["items"][1][0] = v["items"][0][0].clone()),
        ),
        (
            "missing item",
            Box::new(|v| {
                v["items"].as_array_mut().unwrap().pop();
            }),
        ),
        (
            "freelist twice",
            Box::new(|v| v["free"] = serde_json::json!([1, 1])),
        ),
        (
            "freelist empty",
            Box::new(|v| v["free"] = serde_json::json!([])),
        ),
        (
            "freelist occupied",
            Box::new(|v| v["free"] = serde_json::json!([0])),
        ),
        (
            "zero generation",
            Box::new(|v| v["slots"][0] = (3u32 << 16).into()),
        ),
        (
            "other type id",
            Box::new(|v| v["slots"][0] = (4u32 << 16 | 1).into()),
        ),
        (
            "type id too big",
            Box::new(|v| v["type_id"] = 0x8000.into()),
        ),
        ("watermarks", Box::new(|v| v["first_gen"] = 0.into())),
        ("unknown field", Box::new(|v| v["extra"] = 1.into())),
        ("wrong type", Box::new(|v| v["slots"] = "x".into())),
    ];
    for (what, f) in cases {
        assert!(broken(&*f).is_err(), "{what} accepted");
    }
    // Handle32 maps reject more slots than 16 bits address (65 536 slots: too slow for Miri).
    if cfg!(miri) {
        return;
    }
    let mut v = serde_json::to_value(HandleMap::<u8, Handle32>::with_key()).unwrap();
    v["slots"] = serde_json::Value::Array(vec![1.into(); 65_536]);
    v["free"] = (0..65_536).collect::<Vec<u32>>().into();
    assert!(serde_json::from_value::<HandleMap<u8, Handle32>>(v).is_err());
}

#[test]
fn index_panics_say_why_a_handle_does_not_resolve() {
    let message = |f: &dyn Fn()| {
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_err();
        err.downcast_ref::<String>().cloned().unwrap_or_default()
    };
    let mut map: HandleMap<u32> = HandleMap::new();
    let old = map.insert(1);
    map.reset();
    let fresh = map.insert(2);
    assert!(message(&|| {
        let _ = map[old];
    })
    .contains("reset()"));
    map.remove(fresh);
    assert!(message(&|| {
        let _ = map[fresh];
    })
    .contains("stale"));
    let other: HandleMap<u32> = HandleMap::new().with_type_id(3);
    assert!(message(&|| {
        let _ = other[fresh];
    })
    .contains("type id"));
    let far = Handle::new(1_000, 50, 0).unwrap();
    assert!(message(&|| {
        let _ = map[far];
    })
    .contains("out of range"));
    // A key from before a reset, past the slots the map has made since: the reset is named.
    let before = map.insert_many(0..10);
    map.reset();
    map.insert(1);
    let why = message(&|| {
        let _ = map[before[5]];
    });
    assert!(why.contains("reset()"), "{why}");
    // A generation the slot has not reached: not stale, never handed out.
    let now = map.insert(3);
    let ahead = Handle::new(now.index(), now.generation() + 3, 0).unwrap();
    let why = message(&|| {
        let _ = map[ahead];
    });
    assert!(
        why.contains("has not handed out") && !why.contains("stale"),
        "{why}"
    );
    // Generation 0, which no handle made by `Handle::new` or `from_bits` has.
    #[cfg(feature = "bytemuck")]
    {
        let zero: Option<Handle> = bytemuck::cast(u64::from(now.index()));
        let why = message(&|| {
            let _ = map[zero.unwrap()];
        });
        assert!(
            why.contains("generation 0") && !why.contains("stale"),
            "{why}"
        );
    }
}

/// A value counted like [`Counted`] whose `Drop` panics once, for the value that is armed
/// (after counting itself dropped: its fields are dropped anyway).
struct Bomb {
    live: Rc<Cell<i64>>,
    armed: Rc<Cell<Option<u32>>>,
    n: u32,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        self.live.set(self.live.get() - 1);
        assert!(self.live.get() >= 0, "double drop");
        if self.armed.get() == Some(self.n) {
            self.armed.set(None);
            panic!("drop of {} panics", self.n);
        }
    }
}

#[test]
fn a_panicking_drop_drops_the_others_and_leaves_a_valid_map() {
    type Action = fn(&mut Option<HandleMap<Bomb>>);
    let actions: [(&str, Action); 7] = [
        ("clear", |m| m.as_mut().unwrap().clear()),
        ("reset", |m| m.as_mut().unwrap().reset()),
        ("drain", |m| drop(m.as_mut().unwrap().drain())),
        ("drain after one", |m| {
            let mut d = m.as_mut().unwrap().drain();
            drop(d.next());
            drop(d);
        }),
        ("into_iter", |m| {
            let mut it = m.take().unwrap().into_iter();
            drop(it.next());
            drop(it);
        }),
        ("drop", |m| drop(m.take())),
        ("retain", |m| {
            m.as_mut().unwrap().retain(|_, b| b.n % 2 == 0)
        }),
    ];
    for (name, action) in actions {
        let live = Rc::new(Cell::new(0i64));
        let armed = Rc::new(Cell::new(Some(3)));
        let bomb = |n| {
            live.set(live.get() + 1);
            Bomb {
                live: live.clone(),
                armed: armed.clone(),
                n,
            }
        };
        let mut map = Some(HandleMap::new());
        let hs = map.as_mut().unwrap().insert_many((0..10).map(bomb));
        let r = catch_unwind(AssertUnwindSafe(|| action(&mut map)));
        assert!(r.is_err(), "{name}: the panic goes on");
        assert_eq!(armed.get(), None, "{name}: the armed value was dropped");
        if let Some(map) = &mut map {
            map.assert_invariants();
            if name == "retain" {
                // The values not yet visited stay, as in `Vec::retain`; the removed ones
                // are dropped when the visit ends, the panicking one among them.
                assert_eq!(
                    map.values().iter().map(|b| b.n).collect::<Vec<_>>(),
                    [0, 2, 4, 6, 8],
                    "{name}"
                );
            } else {
                assert!(map.is_empty(), "{name}: every value is gone");
            }
            assert_eq!(live.get() as usize, map.len(), "{name}: no leak");
            for (i, h) in hs.iter().enumerate() {
                assert_eq!(map.contains(*h), name == "retain" && i % 2 == 0, "{name}");
            }
            let h = map.insert(bomb(42));
            assert_eq!(map[h].n, 42);
            map.assert_invariants();
        }
        drop(map);
        assert_eq!(live.get(), 0, "{name}: no leak, no double drop");
    }
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
    let mut map: HandleMap<u8, Malformed> = HandleMap::with_key();
    map.insert(1);
    map.insert(2);
    // Remove slot 0's value through its dense position: no key of this type resolves.
    map.retain(|_, v| *v != 1);
    assert_eq!(map.values(), [2]);
    // Slot 0 is vacant at generation 1 (tag `1 | 1 << 31`), slot 1 occupied at 1: the first
    // key's tag equals the vacant slot's tag, the second is the occupied slot's with bit 31
    // set.
    for forged in [
        Malformed(0, 1),
        Malformed(1, 1),
        Malformed(0, 2),
        Malformed(1, 2),
    ] {
        assert_eq!(map.get(forged), None, "{forged:?}");
        assert_eq!(map.get_mut(forged), None);
        assert!(!map.contains(forged));
        assert_eq!(map.get_index_of(forged), None);
        assert_eq!(map.remove(forged), None);
        let r = catch_unwind(AssertUnwindSafe(|| map[forged]));
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert!(msg.contains("malformed key"), "{msg}");
    }
    assert_eq!(map.len(), 1);
    map.assert_invariants();
}
