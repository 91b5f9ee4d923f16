//! Random programs against `SparseSet` and a `Vec` model of its dense arrays (live entries with
//! their tags, and tombstones), checked after every step: plain indices, keys of two type ids,
//! stale and malformed keys, `max_index`, the entry API, `get_disjoint_mut`, partial drains,
//! joins by tag, and loading untrusted bytes.
#![no_main]

use arbitrary::Arbitrary;
use dod::sparse_set::{Entry, SparseSet, TOMBSTONE};
use dod::{Handle, InsertErrorKind, Key};
// The fuzz crate does not depend on serde itself; dod re-exports it for its macros.
use dod::__private::serde::de::DeserializeSeed;
use libfuzzer_sys::fuzz_target;
use std::num::NonZeroU16;

type Set = SparseSet<u16, 64>;

/// A live entry of the model: index, tag (0: inserted by a plain index), value.
type Live = (u32, u32, u16);

/// Bit 31 of a tag: set in no key an allocator hands out.
const MALFORMED: u32 = 1 << 31;

/// The `max_index` programs start with: above every index `entity_of` makes.
const START_MAX: u32 = 5_000_000;

/// One step. `u16` entity codes go through [`entity_of`]; `pick` fields choose among the
/// entities seen so far.
#[derive(Arbitrary, Debug, Clone)]
enum Op {
    Insert(u16, u8, u16),
    TryInsert(u16, u8, u16),
    InsertMany(Vec<(u16, u8, u16)>),
    /// `try_insert` at a raw index (often above `max_index`).
    TryInsertRaw(u32, u16),
    Remove(u16),
    RemoveMany(Vec<u16>),
    Get(u16),
    GetForged(u64),
    Set(u16, u16),
    Entry(u16, u8, u16),
    GetDisjoint(u16, u16, u16),
    Retain(u8),
    Clear,
    Drain(u8, bool),
    Sort,
    Defer(u16),
    Compact,
    SetMaxIndex(u32),
    Reserve(u8),
    TryReserve(u64),
    ShrinkToFit,
    RoundTrip,
    Load(Vec<u8>),
    Join(Vec<(u16, u8)>),
}

/// A key type whose tag has bit 31 set: a forged bit pattern.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
struct Forged(u32);

impl Key for Forged {
    const MAX_SLOTS: u32 = u32::MAX;
    const MAX_TYPE_ID: u16 = 0;
    fn from_parts(index: u32, _: NonZeroU16, _: u16) -> Self {
        Forged(index)
    }
    fn index(self) -> u32 {
        self.0
    }
    fn generation(self) -> u16 {
        1
    }
    fn type_id(self) -> u16 {
        0
    }
    fn tag(self) -> u32 {
        MALFORMED | 1
    }
}

#[derive(Clone, Copy, Debug)]
enum Ent {
    Index(u32),
    Key(Handle),
    Forged(u32),
}

impl Ent {
    fn index(self) -> u32 {
        match self {
            Ent::Index(i) | Ent::Forged(i) => i,
            Ent::Key(h) => h.index(),
        }
    }
    fn tag(self) -> Option<u32> {
        match self {
            Ent::Index(_) => None,
            Ent::Key(h) => Some(h.tag()),
            Ent::Forged(_) => Some(MALFORMED | 1),
        }
    }
    fn plain(self) -> Ent {
        Ent::Index(self.index())
    }
}

/// Calls `$body` with `$k` bound to the entity as the type it names.
macro_rules! with_ent {
    ($e:expr, |$k:ident| $body:expr) => {
        match $e {
            Ent::Index($k) => $body,
            Ent::Key($k) => $body,
            Ent::Forged(i) => {
                let $k = Forged(i);
                $body
            }
        }
    };
}

/// The entity a code names: small indices over several pages, a few far away; `kind` picks a
/// plain index, a key (generation 1 to 4, type id 0 or 1) or a malformed key.
fn entity_of(v: u16, kind: u8) -> Ent {
    let index = if v & 0x8000 != 0 {
        4_000_000 + u32::from(v & 0xFF)
    } else {
        u32::from(v) % 3000
    };
    match kind % 8 {
        0..=2 => Ent::Index(index),
        7 => Ent::Forged(index),
        k => {
            let generation = u16::from(kind >> 3 & 3) + 1;
            let type_id = u16::from(k == 6);
            Ent::Key(Handle::new(index, generation, type_id).expect("valid"))
        }
    }
}

struct Model {
    dense: Vec<Option<Live>>,
    max_index: u32,
}

impl Model {
    fn live_at(&self, index: u32) -> Option<usize> {
        self.dense
            .iter()
            .position(|s| matches!(*s, Some((i, _, _)) if i == index))
    }

    /// The position of the entry `e` names.
    fn position(&self, e: Ent) -> Option<usize> {
        let p = self.live_at(e.index())?;
        match (e.tag(), self.dense[p]) {
            (None, _) => Some(p),
            (Some(t), Some((_, held, _))) if t == held => Some(p),
            _ => None,
        }
    }

    fn value(&self, e: Ent) -> Option<u16> {
        self.position(e)
            .and_then(|p| self.dense[p])
            .map(|(_, _, v)| v)
    }

    /// What inserting for `e` does: replace at a position, append (`None`), or refuse.
    fn insertion(&self, e: Ent) -> Result<Option<usize>, InsertErrorKind> {
        let index = e.index();
        // A malformed key is refused first, wherever it points.
        if e.tag().is_some_and(|t| t & MALFORMED != 0) {
            return Err(InsertErrorKind::MalformedKey);
        }
        // Entries held before `max_index` was lowered below them stay, and can be replaced.
        if index > self.max_index && self.live_at(index).is_none() {
            let max = self.max_index;
            return Err(InsertErrorKind::IndexAboveMax { index, max });
        }
        let Some(p) = self.live_at(index) else {
            return Ok(None);
        };
        let held = self.dense[p].expect("live").1;
        match e.tag() {
            None => Ok(Some(p)),
            Some(t) if t == held || t & 0xFFFF > held & 0xFFFF => Ok(Some(p)),
            Some(t) if t & 0xFFFF < held & 0xFFFF => Err(InsertErrorKind::StaleKey),
            Some(_) => Err(InsertErrorKind::ForeignKey),
        }
    }

    /// Applies an allowed insertion; returns the replaced value.
    fn insert(&mut self, e: Ent, v: u16, at: Option<usize>) -> Option<u16> {
        match at {
            Some(p) => {
                let (_, tag, val) = self.dense[p].as_mut().expect("live");
                if let Some(t) = e.tag() {
                    *tag = t;
                }
                Some(std::mem::replace(val, v))
            }
            None => {
                self.dense.push(Some((e.index(), e.tag().unwrap_or(0), v)));
                None
            }
        }
    }

    fn compact(&mut self) {
        self.dense.retain(Option::is_some);
    }

    fn live(&self) -> impl Iterator<Item = Live> + '_ {
        self.dense.iter().flatten().copied()
    }
}

/// `insert` when the model says it succeeds (a panic would end the run), `try_insert` otherwise.
fn insert(set: &mut Set, model: &mut Model, e: Ent, v: u16, fallible: bool) {
    let want = model.insertion(e);
    match want {
        Ok(at) => {
            let old = if fallible {
                with_ent!(e, |k| set.try_insert(k, v)).expect("allowed")
            } else {
                with_ent!(e, |k| set.insert(k, v))
            };
            assert_eq!(old, model.insert(e, v, at), "{e:?}");
        }
        Err(kind) => {
            let memory = set.memory_usage();
            let err = with_ent!(e, |k| set.try_insert(k, v)).expect_err("refused");
            assert_eq!(err.kind(), kind, "{e:?}");
            assert_eq!(err.into_inner(), v);
            assert_eq!(set.memory_usage(), memory, "a refusal allocates nothing");
        }
    }
}

fn check(set: &Set, model: &Model, seen: &[Ent]) {
    set.assert_invariants();
    assert_eq!(set.indices().len(), model.dense.len());
    for (i, s) in model.dense.iter().enumerate() {
        match s {
            Some((e, _, v)) => {
                assert_eq!(set.indices()[i], *e);
                assert_eq!(set.values()[i], *v);
            }
            None => assert_eq!(set.indices()[i], TOMBSTONE),
        }
    }
    let live = model.live().count();
    assert_eq!(set.len(), live);
    assert_eq!(set.iter().count(), live);
    assert_eq!(set.max_index(), model.max_index);
    let keyed: Vec<(Handle, u16)> = model
        .live()
        .filter(|&(_, t, _)| t != 0)
        .map(|(i, t, v)| (Handle::from_index_tag(i, t), v))
        .collect();
    let got: Vec<(Handle, u16)> = set.iter_keys().map(|(k, v)| (k, *v)).collect();
    assert_eq!(got, keyed);
    assert!(set.keys::<Handle>().eq(keyed.iter().map(|&(k, _)| k)));
    for &e in seen {
        let want = model.value(e);
        assert_eq!(with_ent!(e, |k| set.get(k)).copied(), want, "{e:?}");
        assert_eq!(with_ent!(e, |k| set.contains(k)), want.is_some());
    }
}

/// The joins of `set` with `other` against the model, by the rule of tags.
fn check_joins(set: &mut Set, model: &Model, other: &mut SparseSet<u8, 32>) {
    let other_tag = |i: u32| other.key_of::<Handle>(i).map_or(0, Handle::tag);
    let mut want: Vec<(u32, u16, u8)> = model
        .live()
        .filter_map(|(i, t, v)| {
            let o = *other.get(i)?;
            let ot = other_tag(i);
            (t == 0 || ot == 0 || t == ot).then_some((i, v, o))
        })
        .collect();
    want.sort_unstable();
    let mut got: Vec<(u32, u16, u8)> = set.join(&*other).map(|(e, a, b)| (e, *a, *b)).collect();
    got.sort_unstable();
    assert_eq!(got, want);
    let mut got: Vec<(u32, u16, u8)> = other.join(&*set).map(|(e, b, a)| (e, *a, *b)).collect();
    got.sort_unstable();
    assert_eq!(got, want);
    let mut got: Vec<u32> = set.join3(&*other, &*other).map(|(e, ..)| e).collect();
    got.sort_unstable();
    assert!(got.iter().copied().eq(want.iter().map(|w| w.0)));
    let mut got: Vec<u32> = set
        .join_mut(&*other)
        .map(|(e, a, b)| {
            *a = a.wrapping_add(u16::from(*b));
            e
        })
        .collect();
    got.sort_unstable();
    assert!(got.iter().copied().eq(want.iter().map(|w| w.0)));
    let mut got: Vec<u32> = other.join_mut(&*set).map(|(e, ..)| e).collect();
    got.sort_unstable();
    assert!(got.iter().copied().eq(want.iter().map(|w| w.0)));
}

fuzz_target!(|ops: Vec<Op>| {
    let mut set = Set::new_paged().with_max_index(START_MAX);
    let mut model = Model {
        dense: Vec::new(),
        max_index: START_MAX,
    };
    let mut seen: Vec<Ent> = Vec::new();
    let pick = |seen: &[Ent], p: u16| -> Option<Ent> {
        (!seen.is_empty()).then(|| seen[usize::from(p) % seen.len()])
    };
    for op in ops.iter().take(300) {
        match op {
            Op::Insert(v, kind, x) | Op::TryInsert(v, kind, x) => {
                let e = entity_of(*v, *kind);
                seen.push(e);
                insert(&mut set, &mut model, e, *x, matches!(op, Op::TryInsert(..)));
            }
            Op::InsertMany(vs) => {
                for &(v, kind, x) in vs.iter().take(64) {
                    let e = entity_of(v, kind);
                    seen.push(e);
                    insert(&mut set, &mut model, e, x, false);
                }
            }
            Op::TryInsertRaw(i, x) => insert(&mut set, &mut model, Ent::Index(*i), *x, true),
            Op::Remove(p) => {
                if let Some(e) = pick(&seen, *p) {
                    let shift = p & 0x100 != 0;
                    let got = if shift {
                        with_ent!(e, |k| set.shift_remove(k))
                    } else {
                        with_ent!(e, |k| set.swap_remove(k))
                    };
                    let want = model.position(e).map(|pos| {
                        let s = if shift {
                            model.dense.remove(pos)
                        } else {
                            model.dense.swap_remove(pos)
                        };
                        s.expect("live").2
                    });
                    assert_eq!(got, want);
                }
            }
            Op::RemoveMany(ps) => {
                let es: Vec<Ent> = ps.iter().filter_map(|&p| pick(&seen, p)).collect();
                let removed = if ps.len() % 2 == 0 {
                    set.remove_many(&es.iter().map(|e| e.index()).collect::<Vec<_>>())
                } else {
                    let keys: Vec<Handle> = es
                        .iter()
                        .map(|e| match e {
                            Ent::Key(h) => *h,
                            _ => Handle::new(e.index(), 1, 0).expect("valid"),
                        })
                        .collect();
                    set.remove_many(&keys)
                };
                let mut want = 0;
                for &e in &es {
                    let e = match e {
                        Ent::Key(_) if ps.len() % 2 == 1 => e,
                        _ if ps.len() % 2 == 1 => Ent::Key(Handle::new(e.index(), 1, 0).unwrap()),
                        _ => e.plain(),
                    };
                    if let Some(pos) = model.position(e) {
                        model.dense[pos] = None;
                        want += 1;
                    }
                }
                model.compact();
                assert_eq!(removed, want);
            }
            Op::Get(p) => {
                if let Some(e) = pick(&seen, *p) {
                    assert_eq!(with_ent!(e, |k| set.get(k)).copied(), model.value(e));
                    let pos = with_ent!(e, |k| set.get_index_of(k));
                    assert_eq!(pos, model.position(e));
                }
            }
            Op::GetForged(bits) => {
                if let Some(h) = Handle::from_bits(*bits) {
                    let e = Ent::Key(h);
                    assert_eq!(set.get(h).copied(), model.value(e));
                    assert_eq!(set.contains(h), model.value(e).is_some());
                }
                let i = *bits as u32;
                assert_eq!(set.get(i).copied(), model.value(Ent::Index(i)));
                assert_eq!(set.get(Forged(i)), None);
            }
            Op::Set(p, v) => {
                if let Some(e) = pick(&seen, *p) {
                    let got = with_ent!(e, |k| set.get_mut(k));
                    match (got, model.position(e)) {
                        (Some(x), Some(pos)) => {
                            *x = *v;
                            model.insert(e.plain(), *v, Some(pos));
                        }
                        (None, None) => {}
                        (g, m) => panic!("get_mut {e:?}: {g:?} vs {m:?}"),
                    }
                }
            }
            Op::Entry(v, kind, x) => {
                let e = entity_of(*v, *kind);
                seen.push(e);
                let want = model.insertion(e);
                let occupied = model.position(e);
                let entry = with_ent!(e, |k| set.entry(k));
                match (entry, want) {
                    (None, Err(_)) => {}
                    (Some(entry), Ok(at)) => {
                        assert_eq!(entry.index(), e.index());
                        match entry {
                            Entry::Occupied(o) => {
                                let pos = occupied.expect("occupied in the model");
                                match x % 3 {
                                    0 => {
                                        let old = o.swap_remove();
                                        let want = model.dense.swap_remove(pos).expect("live").2;
                                        assert_eq!(old, want);
                                    }
                                    1 => {
                                        let r = o.into_mut();
                                        *r = r.wrapping_add(1);
                                        let now = *r;
                                        model.insert(e.plain(), now, Some(pos));
                                    }
                                    _ => {
                                        let mut o = o;
                                        let old = o.insert(*x);
                                        assert_eq!(
                                            Some(old),
                                            model.insert(e.plain(), *x, Some(pos))
                                        );
                                    }
                                }
                            }
                            Entry::Vacant(vacant) => {
                                assert!(occupied.is_none());
                                assert_eq!(*vacant.insert(*x), *x);
                                model.insert(e, *x, at);
                            }
                        }
                    }
                    (g, w) => panic!("entry {e:?}: {:?} vs {w:?}", g.is_some()),
                }
            }
            Op::GetDisjoint(a, b, x) => {
                if let (Some(a), Some(b)) = (pick(&seen, *a), pick(&seen, *b)) {
                    let (a, b) = (a.plain(), b.plain());
                    let got = set.get_disjoint_mut([a.index(), b.index()]);
                    match (got, model.position(a), model.position(b)) {
                        (Some([p, q]), Some(pa), Some(pb)) if pa != pb => {
                            *p = *x;
                            *q = x.wrapping_add(1);
                            model.insert(a, *x, Some(pa));
                            model.insert(b, x.wrapping_add(1), Some(pb));
                        }
                        (None, pa, pb) => assert!(pa.is_none() || pb.is_none() || pa == pb),
                        (Some(_), pa, pb) => panic!("get_disjoint_mut: model {pa:?} {pb:?}"),
                    }
                }
            }
            Op::Retain(m) => {
                let m = u16::from(*m).max(1);
                set.retain(|_, v| *v % m != 0);
                model
                    .dense
                    .retain(|s| matches!(s, Some((_, _, v)) if v % m != 0));
            }
            Op::Clear => {
                set.clear();
                model.dense.clear();
            }
            Op::Drain(take, forget) => {
                let want: Vec<(u32, u16)> = model.live().map(|(e, _, v)| (e, v)).collect();
                let mut d = set.drain();
                assert_eq!(d.len(), want.len());
                let taken: Vec<(u32, u16)> = d.by_ref().take(usize::from(*take)).collect();
                if *forget {
                    std::mem::forget(d);
                } else {
                    drop(d);
                }
                assert_eq!(taken[..], want[..taken.len()]);
                assert!(set.is_empty());
                set.assert_invariants();
                model.dense.clear();
            }
            Op::Sort => {
                set.sort_by_key(|_, v| *v);
                model.compact();
                model.dense.sort_by_key(|s| s.map(|(_, _, v)| v));
            }
            Op::Defer(p) => {
                if let Some(e) = pick(&seen, *p) {
                    let got = with_ent!(e, |k| set.defer_remove(k));
                    let want = model.position(e).map(|p| model.dense[p] = None).is_some();
                    assert_eq!(got, want);
                }
            }
            Op::Compact => {
                set.compact();
                model.compact();
            }
            Op::SetMaxIndex(m) => {
                let m = match m % 4 {
                    0 => START_MAX,
                    1 => 100,
                    2 => 3000,
                    _ => m % START_MAX,
                };
                set.set_max_index(m);
                model.max_index = m;
            }
            Op::Reserve(n) => set.reserve(usize::from(*n)),
            Op::TryReserve(n) => {
                // Small requests succeed; those whose byte count overflows fail without
                // aborting. (Requests the allocator would refuse are left out: the sanitizer's
                // allocator aborts on them where a real one returns null.)
                let n = *n as usize;
                if n & 1 == 0 {
                    set.try_reserve(n % (1 << 16)).expect("a small reservation");
                    assert!(set.capacity() >= set.values().len() + n % (1 << 16));
                } else {
                    let memory = set.memory_usage();
                    assert!(set.try_reserve(usize::MAX - n % 1000).is_err());
                    assert_eq!(set.memory_usage(), memory);
                }
            }
            Op::ShrinkToFit => set.shrink_to_fit(),
            Op::RoundTrip => {
                let json = serde_json::to_vec(&set).expect("serialises");
                let seed = Set::new_paged().with_max_index(model.max_index.max(4_000_255));
                let mut de = serde_json::Deserializer::from_slice(&json);
                let mut back = seed.deserialize(&mut de).expect("deserialises");
                back.set_max_index(model.max_index);
                assert!(back == set);
                set = back;
                model.compact();
                // Untrusted bytes: never a panic, only Ok or Err.
                let _ = serde_json::from_slice::<Set>(&json[..json.len() / 2]);
            }
            Op::Load(bytes) => {
                // Untrusted bytes, bounded: never a panic or an abort; a loaded set is valid.
                let seed = Set::new_paged().with_max_index(START_MAX);
                let mut de = serde_json::Deserializer::from_slice(bytes);
                if let Ok(loaded) = seed.deserialize(&mut de) {
                    loaded.assert_invariants();
                    assert!(loaded.indices().iter().all(|&i| i <= START_MAX));
                }
            }
            Op::Join(es) => {
                let mut other: SparseSet<u8, 32> = SparseSet::new_paged();
                for &(v, kind) in es.iter().take(64) {
                    let e = entity_of(v, kind);
                    let _ = with_ent!(e, |k| other.try_insert(k, kind));
                }
                other.assert_invariants();
                check_joins(&mut set, &model, &mut other);
                // join_mut added `b` to every joined value: bring the model along.
                for s in model.dense.iter_mut().flatten() {
                    let (i, t, v) = *s;
                    if let Some(&o) = other.get(i) {
                        let ot = other.key_of::<Handle>(i).map_or(0, Handle::tag);
                        if t == 0 || ot == 0 || t == ot {
                            s.2 = v.wrapping_add(u16::from(o));
                        }
                    }
                }
            }
        }
        check(&set, &model, &seen);
    }
});
