//! Model tests for `SparseSet`: random programs run against the set and against std models (a
//! `BTreeMap` by index of `(tag, value)` for the contents, a `Vec` for the dense order the API
//! promises), checked after every step; plus the key rules (stale, foreign and malformed keys
//! refused, newer keys replacing), joins that pair entries only when their tags agree, the
//! entry API, `drain`, `sort_as`, drop counting and panic safety.

use dod::sparse_set::{Entry, SparseSet, TOMBSTONE};
use dod::{Handle, InsertErrorKind, Key};
use proptest::prelude::*;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::num::NonZeroU16;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

/// Small pages, so that programs span many of them.
type Set = SparseSet<i32, 16>;

/// The far indices programs use; the set's `max_index` moves below and above them.
const FAR: u32 = 1_000_000;

/// Bit 31 of a tag: set in no key an allocator hands out.
const MALFORMED: u32 = 1 << 31;

/// A key type whose tag has bit 31 set: a forged bit pattern that no allocator hands out.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
struct Forged(u32, u16);

impl Key for Forged {
    const MAX_SLOTS: u32 = u32::MAX;
    const MAX_TYPE_ID: u16 = 0x7FFF;
    fn from_parts(index: u32, generation: NonZeroU16, _: u16) -> Self {
        Forged(index, generation.get())
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
        MALFORMED | u32::from(self.1)
    }
}

/// How a test names an entity.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// A plain `u32` index.
    Index,
    /// A `Handle`.
    Key { generation: u16, type_id: u16 },
    /// A malformed key of this generation ([`Forged`]).
    Forged(u16),
}

/// An entity as a test names it.
#[derive(Clone, Copy, Debug)]
struct Ent {
    index: u32,
    kind: Kind,
}

impl Ent {
    /// The tag the set checks and records (`None` for a plain index).
    fn tag(self) -> Option<u32> {
        match self.kind {
            Kind::Index => None,
            Kind::Key {
                generation,
                type_id,
            } => Some(u32::from(generation) | u32::from(type_id) << 16),
            Kind::Forged(g) => Some(MALFORMED | u32::from(g)),
        }
    }

    fn as_index(self) -> Ent {
        Ent {
            index: self.index,
            kind: Kind::Index,
        }
    }
}

fn handle(index: u32, generation: u16, type_id: u16) -> Handle {
    Handle::new(index, generation, type_id).expect("valid handle")
}

/// The `Handle` of an entity named by a key.
fn as_handle(e: Ent) -> Handle {
    match e.kind {
        Kind::Key {
            generation,
            type_id,
        } => handle(e.index, generation, type_id),
        k => panic!("{k:?} is no handle"),
    }
}

/// Evaluates `$body` with `$k` bound to the entity `$e` as the type it names: `u32`, `Handle`
/// or `Forged`.
macro_rules! with_ent {
    ($e:expr, |$k:ident| $body:expr) => {{
        let e: Ent = $e;
        match e.kind {
            Kind::Index => {
                let $k = e.index;
                $body
            }
            Kind::Key {
                generation,
                type_id,
            } => {
                let $k = handle(e.index, generation, type_id);
                $body
            }
            Kind::Forged(g) => {
                let $k = Forged(e.index, g);
                $body
            }
        }
    }};
}

fn kind() -> impl Strategy<Value = Kind> {
    let type_id = prop_oneof![4 => Just(0u16), 1 => Just(1u16)];
    prop_oneof![
        3 => Just(Kind::Index),
        5 => (1..5u16, type_id).prop_map(|(generation, type_id)| Kind::Key {
            generation,
            type_id
        }),
        1 => (0..3u16).prop_map(Kind::Forged),
    ]
}

fn ent() -> impl Strategy<Value = Ent> {
    let index = prop_oneof![8 => 0..200u32, 1 => FAR..FAR + 8];
    (index, kind()).prop_map(|(index, kind)| Ent { index, kind })
}

/// What to do with an entry.
#[derive(Clone, Copy, Debug)]
enum EntryOp {
    OrInsert(i32),
    OrInsertWithKey,
    AndModifyOrDefault,
    /// `OccupiedEntry::insert` or `VacantEntry::insert`.
    Insert(i32),
    /// `OccupiedEntry::swap_remove`; nothing for a vacant entry.
    Remove,
}

#[derive(Clone, Debug)]
enum Op {
    Insert(Ent, i32),
    TryInsert(Ent, i32),
    /// `try_insert` this far above `max_index`.
    TryInsertAbove(u32, i32),
    SetMaxIndex(u32),
    Entry(Ent, EntryOp),
    GetDisjoint(Ent, Ent, i32),
    SwapRemove(Ent),
    ShiftRemove(Ent),
    DeferRemove(Ent),
    /// `swap_positions` at these positions, modulo the dense length.
    SwapPositions(u16, u16),
    Compact,
    Retain(i32),
    RemoveMany(Vec<Ent>),
    GetMut(Ent, i32),
    Clear,
    SortByValue,
    SortUnstableDesc,
    /// `sort_unstable_by_key` by (value, index), a total order.
    SortUnstableByKey,
    SortAs(Vec<u32>),
    ShrinkToFit,
    Reserve(u8),
    TryReserve(u8),
    CloneSet,
    RoundTrip,
    /// Drain, take this many entries, then drop (or leak) the iterator; put the taken ones
    /// back.
    Drain {
        take: usize,
        forget: bool,
    },
    /// Joins with a set holding these indices (with a key's generation and type id, or none).
    Join(BTreeMap<u32, Option<(u16, u16)>>),
    /// `append_run` from this index, or `append_run_as` from the key of that kind there,
    /// pushing these values (those up to `max_index`).
    AppendRun(Ent, Vec<i32>),
}

fn entry_op() -> impl Strategy<Value = EntryOp> {
    prop_oneof![
        any::<i32>().prop_map(EntryOp::OrInsert),
        Just(EntryOp::OrInsertWithKey),
        Just(EntryOp::AndModifyOrDefault),
        any::<i32>().prop_map(EntryOp::Insert),
        Just(EntryOp::Remove),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let other_tag = prop::option::of((1..5u16, 0..2u16));
    prop_oneof![
        10 => (ent(), any::<i32>()).prop_map(|(e, v)| Op::Insert(e, v)),
        4 => (ent(), any::<i32>()).prop_map(|(e, v)| Op::TryInsert(e, v)),
        1 => (prop_oneof![0..10u32, Just(u32::MAX), any::<u32>()], any::<i32>())
            .prop_map(|(d, v)| Op::TryInsertAbove(d, v)),
        1 => prop_oneof![Just(FAR + 100), 100..200u32, Just(u32::MAX - 1)].prop_map(Op::SetMaxIndex),
        4 => (ent(), entry_op()).prop_map(|(e, o)| Op::Entry(e, o)),
        2 => (ent(), ent(), any::<i32>()).prop_map(|(a, b, v)| Op::GetDisjoint(a, b, v)),
        3 => ent().prop_map(Op::SwapRemove),
        2 => ent().prop_map(Op::ShiftRemove),
        3 => ent().prop_map(Op::DeferRemove),
        1 => Just(Op::Compact),
        2 => (any::<u16>(), any::<u16>()).prop_map(|(a, b)| Op::SwapPositions(a, b)),
        1 => (2..5i32).prop_map(Op::Retain),
        1 => prop::collection::vec(ent(), 0..8).prop_map(Op::RemoveMany),
        2 => (ent(), any::<i32>()).prop_map(|(e, v)| Op::GetMut(e, v)),
        1 => Just(Op::Clear),
        1 => Just(Op::SortByValue),
        1 => Just(Op::SortUnstableDesc),
        1 => Just(Op::SortUnstableByKey),
        1 => prop::collection::vec(0..200u32, 0..30).prop_map(Op::SortAs),
        1 => Just(Op::ShrinkToFit),
        1 => any::<u8>().prop_map(Op::Reserve),
        1 => any::<u8>().prop_map(Op::TryReserve),
        1 => Just(Op::CloneSet),
        1 => Just(Op::RoundTrip),
        1 => (0..12usize, any::<bool>()).prop_map(|(take, forget)| Op::Drain { take, forget }),
        2 => prop::collection::btree_map(0..200u32, other_tag, 0..60).prop_map(Op::Join),
        2 => (prop_oneof![4 => 0..260u32, 1 => FAR - 3..FAR + 8], kind(), prop::collection::vec(any::<i32>(), 0..140))
            .prop_map(|(index, kind, values)| Op::AppendRun(Ent { index, kind }, values)),
    ]
}

/// The order model: the dense arrays as the API promises them.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Slot {
    Live { index: u32, tag: u32, value: i32 },
    Tomb,
}

struct Model {
    dense: Vec<Slot>,
    max_index: u32,
}

impl Model {
    /// Position of the live entry that `e` names (tag checked for keys; malformed keys name
    /// nothing).
    fn position(&self, e: Ent) -> Option<usize> {
        let p = self.live_at(e.index)?;
        match (e.tag(), self.dense[p]) {
            (None, _) => Some(p),
            (Some(t), Slot::Live { tag, .. }) if t == tag => Some(p),
            _ => None,
        }
    }

    /// Position of the live entry of `index`, whatever its tag.
    fn live_at(&self, index: u32) -> Option<usize> {
        self.dense
            .iter()
            .position(|s| matches!(*s, Slot::Live { index: i, .. } if i == index))
    }

    /// What inserting for `e` does: replace the entry at a position (recording `e`'s tag, if
    /// it has one), append (`None`), or refuse.
    fn insertion(&self, e: Ent) -> Result<Option<usize>, InsertErrorKind> {
        // A malformed key is refused first, wherever it points (as a `DataStore` does).
        if e.tag().is_some_and(|t| t & MALFORMED != 0) {
            return Err(InsertErrorKind::MalformedKey);
        }
        let live = self.live_at(e.index);
        // Only a new entry is bounded: one held above a lowered bound stays replaceable.
        if live.is_none() && e.index > self.max_index {
            return Err(InsertErrorKind::IndexAboveMax {
                index: e.index,
                max: self.max_index,
            });
        }
        let Some(p) = live else {
            return Ok(None);
        };
        let Slot::Live { tag: held, .. } = self.dense[p] else {
            unreachable!()
        };
        match e.tag() {
            None => Ok(Some(p)),
            Some(t) if t == held => Ok(Some(p)),
            Some(t) if t & 0xFFFF > held & 0xFFFF => Ok(Some(p)),
            Some(t) if t & 0xFFFF < held & 0xFFFF => Err(InsertErrorKind::StaleKey),
            Some(_) => Err(InsertErrorKind::ForeignKey),
        }
    }

    /// Applies an insertion `insertion` allowed; returns the value it replaces.
    fn insert(&mut self, e: Ent, value: i32, at: Option<usize>) -> Option<i32> {
        match at {
            Some(p) => match &mut self.dense[p] {
                Slot::Live { tag, value: v, .. } => {
                    if let Some(t) = e.tag() {
                        *tag = t;
                    }
                    Some(std::mem::replace(v, value))
                }
                Slot::Tomb => unreachable!(),
            },
            None => {
                self.dense.push(Slot::Live {
                    index: e.index,
                    tag: e.tag().unwrap_or(0),
                    value,
                });
                None
            }
        }
    }

    fn value_at(&self, p: usize) -> i32 {
        value_of(&self.dense[p])
    }

    fn compact(&mut self) {
        self.dense.retain(|s| *s != Slot::Tomb);
    }

    /// The contents model.
    fn map(&self) -> BTreeMap<u32, (u32, i32)> {
        self.entries()
            .into_iter()
            .map(|(i, t, v)| (i, (t, v)))
            .collect()
    }

    /// The live entries in dense order, as `(index, tag, value)`.
    fn entries(&self) -> Vec<(u32, u32, i32)> {
        self.dense
            .iter()
            .filter_map(|s| match *s {
                Slot::Live { index, tag, value } => Some((index, tag, value)),
                Slot::Tomb => None,
            })
            .collect()
    }

    fn live(&self) -> Vec<(u32, i32)> {
        self.entries().iter().map(|&(i, _, v)| (i, v)).collect()
    }
}

fn value_of(s: &Slot) -> i32 {
    match s {
        Slot::Live { value, .. } => *value,
        Slot::Tomb => unreachable!("compacted"),
    }
}

/// The message of a caught panic.
fn message(p: Box<dyn std::any::Any + Send>) -> String {
    match p.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p
            .downcast::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    }
}

/// What an `insert` panic says for each refusal.
fn says(kind: InsertErrorKind) -> &'static str {
    match kind {
        InsertErrorKind::StaleKey => "stale key",
        InsertErrorKind::ForeignKey => "foreign key",
        InsertErrorKind::MalformedKey => "malformed key",
        InsertErrorKind::IndexAboveMax { .. } => "above max_index",
        other => panic!("no insert refuses with {other:?} here"),
    }
}

/// Whether join entries with these tags meet: every tag but 0 is the same.
fn tags_meet(tags: &[u32]) -> bool {
    let mut seen = 0;
    tags.iter().filter(|&&t| t != 0).all(|&t| {
        let ok = seen == 0 || seen == t;
        seen = t;
        ok
    })
}

fn apply(set: &mut Set, model: &mut Model, op: &Op) {
    match op {
        Op::Insert(e, v) => match model.insertion(*e) {
            Ok(at) => {
                let old = with_ent!(*e, |k| set.insert(k, *v));
                assert_eq!(old, model.insert(*e, *v, at), "insert {e:?}");
            }
            Err(kind) => {
                let before: Vec<(u32, i32)> = set.iter().map(|(i, v)| (i, *v)).collect();
                let memory = set.memory_usage();
                let r = catch_unwind(AssertUnwindSafe(|| {
                    with_ent!(*e, |k| set.insert(k, *v));
                }));
                let msg = message(r.expect_err("a refused insert panics"));
                assert!(msg.contains(says(kind)), "{kind:?}: {msg}");
                assert!(msg.contains("try_insert"), "{msg}");
                let after: Vec<(u32, i32)> = set.iter().map(|(i, v)| (i, *v)).collect();
                assert_eq!(after, before, "a refused insert changes nothing");
                assert_eq!(set.memory_usage(), memory);
            }
        },
        Op::TryInsert(e, v) => {
            let memory = set.memory_usage();
            let got = with_ent!(*e, |k| set.try_insert(k, *v));
            match (got, model.insertion(*e)) {
                (Ok(old), Ok(at)) => assert_eq!(old, model.insert(*e, *v, at), "{e:?}"),
                (Err(err), Err(kind)) => {
                    assert_eq!(err.kind(), kind, "{e:?}");
                    assert_eq!(err.into_inner(), *v, "the value comes back");
                    assert_eq!(set.memory_usage(), memory, "a refusal allocates nothing");
                }
                (g, w) => panic!("try_insert {e:?}: set {g:?}, model {w:?}"),
            }
        }
        Op::TryInsertAbove(d, v) => {
            let index = model.max_index.saturating_add(1).saturating_add(*d);
            if model.live_at(index).is_some() {
                // Held from before the bound was lowered: replaceable, as `Insert` checks.
                return;
            }
            let memory = set.memory_usage();
            let err = set.try_insert(index, *v).unwrap_err();
            let kind = InsertErrorKind::IndexAboveMax {
                index,
                max: model.max_index,
            };
            assert_eq!((err.kind(), err.into_inner()), (kind, *v));
            if let Some(h) = Handle::new(index, 1, 0) {
                assert_eq!(set.try_insert(h, *v).unwrap_err().kind(), kind);
                assert!(set.entry(h).is_none());
            }
            assert!(set.entry(index).is_none());
            assert_eq!(set.memory_usage(), memory, "nothing allocated");
        }
        Op::SetMaxIndex(m) => {
            set.set_max_index(*m);
            model.max_index = *m;
        }
        Op::Entry(e, eop) => {
            let want = model.insertion(*e);
            let occupied = model.position(*e);
            let got = with_ent!(*e, |k| set.entry(k));
            let (entry, at) = match (got, want) {
                (None, Err(_)) => return,
                (Some(entry), Ok(at)) => (entry, at),
                (g, w) => panic!("entry {e:?}: set {:?}, model {w:?}", g.map(|x| x.index())),
            };
            assert_eq!(entry.index(), e.index);
            assert_eq!(
                matches!(entry, Entry::Occupied(_)),
                occupied.is_some(),
                "entry {e:?} occupied"
            );
            match *eop {
                EntryOp::OrInsert(v) => {
                    let got = *entry.or_insert(v);
                    let want = match occupied {
                        Some(p) => model.value_at(p),
                        None => {
                            model.insert(*e, v, at);
                            v
                        }
                    };
                    assert_eq!(got, want);
                }
                EntryOp::OrInsertWithKey => {
                    let got = *entry.or_insert_with_key(|i| i as i32 * 3);
                    let want = match occupied {
                        Some(p) => model.value_at(p),
                        None => {
                            model.insert(*e, e.index as i32 * 3, at);
                            e.index as i32 * 3
                        }
                    };
                    assert_eq!(got, want);
                }
                EntryOp::AndModifyOrDefault => {
                    let got = *entry.and_modify(|x| *x = x.wrapping_add(1)).or_default();
                    let want = match occupied {
                        Some(p) => {
                            let v = model.value_at(p).wrapping_add(1);
                            model.insert(e.as_index(), v, Some(p));
                            v
                        }
                        None => {
                            model.insert(*e, 0, at);
                            0
                        }
                    };
                    assert_eq!(got, want);
                }
                EntryOp::Insert(v) => match entry {
                    Entry::Occupied(mut o) => {
                        let p = occupied.unwrap();
                        assert_eq!(*o.get(), model.value_at(p));
                        assert_eq!(*o.get_mut(), model.value_at(p));
                        assert_eq!(o.insert(v), model.value_at(p));
                        assert_eq!(*o.into_mut(), v);
                        model.insert(e.as_index(), v, Some(p));
                    }
                    Entry::Vacant(vacant) => {
                        assert_eq!(vacant.index(), e.index);
                        assert_eq!(*vacant.insert(v), v);
                        model.insert(*e, v, at);
                    }
                },
                EntryOp::Remove => {
                    if let Entry::Occupied(o) = entry {
                        let p = occupied.unwrap();
                        assert_eq!(o.swap_remove(), value_of(&model.dense.swap_remove(p)));
                    }
                }
            }
        }
        Op::GetDisjoint(a, b, v) => {
            let (a, b) = match (a.kind, b.kind) {
                (Kind::Key { .. }, Kind::Key { .. }) => (*a, *b),
                (Kind::Forged(_), _) | (_, Kind::Forged(_)) => {
                    let fa = Forged(a.index, 1);
                    let fb = Forged(b.index, 2);
                    assert!(set.get_disjoint_mut([fa, fb]).is_none());
                    return;
                }
                _ => (a.as_index(), b.as_index()),
            };
            let got = match a.kind {
                Kind::Key { .. } => set.get_disjoint_mut([as_handle(a), as_handle(b)]),
                _ => set.get_disjoint_mut([a.index, b.index]),
            };
            let want = match (model.position(a), model.position(b)) {
                (Some(pa), Some(pb)) if pa != pb => Some((pa, pb)),
                _ => None,
            };
            match (got, want) {
                (Some([x, y]), Some((pa, pb))) => {
                    assert_eq!((*x, *y), (model.value_at(pa), model.value_at(pb)));
                    *x = *v;
                    *y = v.wrapping_add(1);
                    model.insert(a.as_index(), *v, Some(pa));
                    model.insert(b.as_index(), v.wrapping_add(1), Some(pb));
                }
                (None, None) => {}
                (g, w) => panic!(
                    "get_disjoint_mut {a:?} {b:?}: set {:?}, model {w:?}",
                    g.is_some()
                ),
            }
        }
        Op::SwapRemove(e) | Op::ShiftRemove(e) => {
            let shift = matches!(op, Op::ShiftRemove(_));
            let got = if shift {
                with_ent!(*e, |k| set.shift_remove(k))
            } else {
                with_ent!(*e, |k| set.swap_remove(k))
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
            let got = with_ent!(*e, |k| set.defer_remove(k));
            let want = model
                .position(*e)
                .map(|p| model.dense[p] = Slot::Tomb)
                .is_some();
            assert_eq!(got, want);
        }
        Op::SwapPositions(a, b) => {
            let n = model.dense.len();
            if n > 0 {
                let (a, b) = (*a as usize % n, *b as usize % n);
                set.swap_positions(a, b);
                model.dense.swap(a, b);
            }
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
            // By plain index, by key (keys made of the others), or by malformed key (which
            // remove nothing), as the length says.
            let es: Vec<Ent> = es
                .iter()
                .map(|e| match (es.len() % 3, e.kind) {
                    (0, _) => e.as_index(),
                    (1, Kind::Key { .. }) => *e,
                    (1, _) => Ent {
                        index: e.index,
                        kind: Kind::Key {
                            generation: 1,
                            type_id: 0,
                        },
                    },
                    _ => Ent {
                        index: e.index,
                        kind: Kind::Forged(1),
                    },
                })
                .collect();
            let removed = match es.len() % 3 {
                0 => set.remove_many(&es.iter().map(|e| e.index).collect::<Vec<_>>()),
                1 => set.remove_many(&es.iter().map(|e| as_handle(*e)).collect::<Vec<_>>()),
                _ => set.remove_many(&es.iter().map(|e| Forged(e.index, 1)).collect::<Vec<_>>()),
            };
            let mut want = 0;
            for e in &es {
                if let Some(p) = model.position(*e) {
                    model.dense[p] = Slot::Tomb;
                    want += 1;
                }
            }
            model.compact();
            assert_eq!(removed, want);
        }
        Op::GetMut(e, v) => {
            let got = with_ent!(*e, |k| set.get_mut(k));
            match (got, model.position(*e)) {
                (Some(x), Some(p)) => {
                    *x = *v;
                    model.insert(e.as_index(), *v, Some(p));
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
        Op::SortUnstableByKey => {
            set.sort_unstable_by_key(|e, v| (*v, e));
            model.compact();
            model.dense.sort_by_key(|s| match s {
                Slot::Live { value, index, .. } => (*value, *index),
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
        Op::AppendRun(e, values) => {
            let first = &e.index;
            let held_from = model
                .dense
                .iter()
                .any(|s| matches!(*s, Slot::Live { index, .. } if index >= *first));
            let tag = e.tag();
            let malformed = tag.is_some_and(|t| t & MALFORMED != 0);
            let run = with_ent!(*e, |k| set.append_run_as(k));
            if held_from || *first > model.max_index || malformed {
                assert!(
                    run.is_none(),
                    "append_run_as({e:?}) with an index at or past it held, or malformed"
                );
            }
            if let Some(mut run) = run {
                for (k, &v) in values.iter().enumerate() {
                    let index = first + k as u32;
                    // Indices stay where the other ops (and the serde round trip) reach.
                    if index > model.max_index || index > FAR + 8 {
                        break;
                    }
                    assert_eq!(run.next_index(), index);
                    assert_eq!(run.push(v), index);
                    model.dense.push(Slot::Live {
                        index,
                        tag: tag.unwrap_or(0),
                        value: v,
                    });
                }
            }
        }
        Op::Reserve(n) => {
            set.reserve(usize::from(*n));
            assert!(set.capacity() >= set.values().len() + usize::from(*n));
        }
        Op::TryReserve(n) => {
            set.try_reserve(usize::from(*n))
                .expect("a small reservation");
            assert!(set.capacity() >= set.values().len() + usize::from(*n));
            let memory = set.memory_usage();
            assert!(set.try_reserve(usize::MAX).is_err());
            assert_eq!(set.memory_usage(), memory);
        }
        Op::CloneSet => {
            let c = set.clone();
            assert_eq!(c.max_index(), set.max_index());
            *set = c;
        }
        Op::RoundTrip => {
            #[cfg(feature = "serde")]
            {
                use serde::de::DeserializeSeed;
                let json = serde_json::to_string(&*set).expect("serialises");
                let seed = Set::new_paged().with_max_index(model.max_index.max(FAR + 8));
                let mut de = serde_json::Deserializer::from_str(&json);
                let back = seed.deserialize(&mut de).expect("deserialises");
                assert!(back == *set);
                let mut back = back;
                back.set_max_index(model.max_index);
                *set = back;
                model.compact();
            }
        }
        Op::Drain { take, forget } => {
            model.compact();
            let entries = model.entries();
            let mut d = set.drain();
            assert_eq!(d.len(), entries.len());
            let taken: Vec<(u32, i32)> = d.by_ref().take(*take).collect();
            if *forget {
                std::mem::forget(d);
            } else {
                drop(d);
            }
            let want: Vec<(u32, i32)> = entries
                .iter()
                .take(*take)
                .map(|&(i, _, v)| (i, v))
                .collect();
            assert_eq!(taken, want);
            assert!(set.is_empty() && set.indices().is_empty());
            set.assert_invariants();
            model.dense.clear();
            // Put the taken ones back with their tags, where max_index allows.
            for &(index, tag, value) in entries.iter().take(*take) {
                if index > model.max_index {
                    continue;
                }
                match tag {
                    0 => set.insert(index, value),
                    t => set.insert(Handle::from_index_tag(index, t), value),
                };
                model.dense.push(Slot::Live { index, tag, value });
            }
        }
        Op::Join(other) => check_joins(set, model, other),
    }
}

/// `join`, `join3` and `join_mut` (both driving directions) against the model: entries of an
/// index pair only when their tags agree or one of them has none.
fn check_joins(set: &mut Set, model: &mut Model, other: &BTreeMap<u32, Option<(u16, u16)>>) {
    let tag_of =
        |t: &Option<(u16, u16)>| t.map_or(0, |(g, tid)| u32::from(g) | u32::from(tid) << 16);
    let mut other_set: SparseSet<u32, 64> = SparseSet::new_paged();
    for (&i, t) in other {
        match *t {
            None => other_set.insert(i, i * 2 + 1),
            Some((g, tid)) => other_set.insert(handle(i, g, tid), i * 2 + 1),
        };
    }
    let mut third: SparseSet<u8> = SparseSet::new();
    for i in (0..200u32).step_by(2) {
        match i % 4 {
            0 => third.insert(handle(i, 1, 0), 1),
            _ => third.insert(i, 2),
        };
    }
    let third_tag = |i: u32| if i % 4 == 0 { 1 } else { 0 };

    let entries = model.entries();
    let want: Vec<(u32, i32, u32)> = entries
        .iter()
        .filter_map(|&(i, ta, va)| {
            let tb = other.get(&i).map(tag_of)?;
            tags_meet(&[ta, tb]).then_some((i, va, i * 2 + 1))
        })
        .collect();
    let got: Vec<(u32, i32, u32)> = set.join(&other_set).map(|(e, a, b)| (e, *a, *b)).collect();
    if set.len() <= other_set.len() {
        assert_eq!(got, want, "join in the set's dense order");
    } else {
        let by_index: BTreeMap<u32, (i32, u32)> =
            want.iter().map(|&(e, a, b)| (e, (a, b))).collect();
        let got: BTreeMap<u32, (i32, u32)> = got.iter().map(|&(e, a, b)| (e, (a, b))).collect();
        assert_eq!(got, by_index, "join driven by the other set");
    }
    let mut flipped: Vec<(u32, i32, u32)> =
        other_set.join(&*set).map(|(e, b, a)| (e, *a, *b)).collect();
    flipped.sort();
    let mut sorted_want = want.clone();
    sorted_want.sort();
    assert_eq!(flipped, sorted_want, "join from the other side");

    let mut want3: Vec<u32> = entries
        .iter()
        .filter(|&&(i, ta, _)| {
            i % 2 == 0
                && i < 200
                && other
                    .get(&i)
                    .is_some_and(|t| tags_meet(&[ta, tag_of(t), third_tag(i)]))
        })
        .map(|&(i, ..)| i)
        .collect();
    want3.sort();
    for got3 in [
        set.join3(&other_set, &third)
            .map(|(e, ..)| e)
            .collect::<Vec<_>>(),
        third.join3(&*set, &other_set).map(|(e, ..)| e).collect(),
        other_set.join3(&third, &*set).map(|(e, ..)| e).collect(),
    ] {
        let mut got3 = got3;
        got3.sort();
        assert_eq!(got3, want3, "join3");
    }

    // join_mut, with `set` driving or driven: a = b + e.
    let mut written = BTreeSet::new();
    for (e, a, b) in set.join_mut(&other_set) {
        *a = *b as i32 + e as i32;
        assert!(written.insert(e), "each entity once");
    }
    assert_eq!(written, want.iter().map(|&(e, ..)| e).collect());
    for &(e, ..) in &want {
        let p = model
            .position(Ent {
                index: e,
                kind: Kind::Index,
            })
            .unwrap();
        model.insert(
            Ent {
                index: e,
                kind: Kind::Index,
            },
            (e * 2 + 1) as i32 + e as i32,
            Some(p),
        );
    }
    let mut other_mut = other_set.clone();
    let mut seen: Vec<u32> = other_mut
        .join_mut(&*set)
        .map(|(e, b, a)| {
            assert_eq!(*a, *b as i32 + e as i32);
            *b = 0;
            e
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        sorted_want.iter().map(|&(e, ..)| e).collect::<Vec<_>>()
    );
}

fn check(set: &Set, model: &Model, probes: &BTreeSet<u32>) {
    set.assert_invariants();
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
    assert_eq!(set.max_index(), model.max_index);

    // The keys come back exactly, in dense order, for the entries inserted with one.
    let keyed: Vec<(Handle, i32)> = model
        .entries()
        .iter()
        .filter(|&&(_, t, _)| t != 0)
        .map(|&(i, t, v)| (Handle::from_index_tag(i, t), v))
        .collect();
    let keys: Vec<Handle> = set.keys().collect();
    assert_eq!(
        keys,
        keyed.iter().map(|&(k, _)| k).collect::<Vec<_>>(),
        "keys"
    );
    let keys_back: Vec<Handle> = set.keys().rev().collect();
    assert_eq!(
        keys_back,
        keyed.iter().rev().map(|&(k, _)| k).collect::<Vec<_>>()
    );
    let iter_keys: Vec<(Handle, i32)> = set.iter_keys().map(|(k, v)| (k, *v)).collect();
    assert_eq!(iter_keys, keyed, "iter_keys");
    let iter_keys_back: Vec<(Handle, i32)> = set.iter_keys().rev().map(|(k, v)| (k, *v)).collect();
    assert_eq!(
        iter_keys_back,
        keyed.iter().rev().copied().collect::<Vec<_>>()
    );
    for &(k, _) in &keyed {
        assert!(set.contains(k));
        assert_eq!(set.key_of::<Handle>(k.index()), Some(k));
    }

    let map = model.map();
    for &i in probes {
        let want = map.get(&i);
        assert_eq!(set.get(i), want.map(|(_, v)| v), "get({i})");
        assert_eq!(set.contains(i), want.is_some());
        for g in 1..5u16 {
            for tid in 0..2u16 {
                let h = handle(i, g, tid);
                let hit = want.filter(|(t, _)| *t == h.tag()).map(|(_, v)| v);
                assert_eq!(set.get(h), hit, "get({h:?})");
                assert_eq!(set.contains(h), hit.is_some());
            }
            assert_eq!(set.get(Forged(i, g)), None, "a malformed key names nothing");
            assert!(!set.contains(Forged(i, g)));
        }
        assert_eq!(
            set.generation_of(i).map(|g| g.map_or(0, |g| g.get())),
            want.map(|(t, _)| *t as u16),
            "generation_of({i})"
        );
        let key = want
            .filter(|(t, _)| *t != 0)
            .map(|(t, _)| Handle::from_index_tag(i, *t));
        assert_eq!(set.key_of::<Handle>(i), key, "key_of({i})");
        if let Some(p) = set.get_index_of(i) {
            assert_eq!(set.indices()[p], i);
            assert_eq!(Some(&set.values()[p]), want.map(|(_, v)| v));
        }
    }
}

fn config() -> ProptestConfig {
    // The programs provoke `insert` panics on purpose; keep their messages out of the output.
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.to_string().contains("SparseSet::insert: ") {
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

/// Operations per program: short under Miri, which runs each step thousands of times slower.
const OPS: usize = if cfg!(miri) { 20 } else { 60 };

proptest! {
    #![proptest_config(config())]

    #[test]
    fn matches_the_models(ops in prop::collection::vec(op(), 1..OPS)) {
        let mut set = Set::new_paged().with_max_index(FAR + 100);
        let mut model = Model { dense: Vec::new(), max_index: FAR + 100 };
        let mut probes: BTreeSet<u32> = [0, 17, 199, FAR + 3].into_iter().collect();
        for op in &ops {
            match op {
                Op::Insert(e, _) | Op::TryInsert(e, _) | Op::Entry(e, _) => {
                    probes.insert(e.index);
                }
                _ => {}
            }
            apply(&mut set, &mut model, op);
            check(&set, &model, &probes);
        }
    }

    #[test]
    fn sort_as_lines_up_what_join_pairs(
        a in prop::collection::btree_map(0..60u32, 1u32..4, 0..40),
        // Generation 0: inserted by a plain `u32`, no tag.
        b in prop::collection::vec((0..60u32, 0u32..4), 0..40),
    ) {
        let key = |i: u32, g: u32| Handle::new(i, g as u16, 0).unwrap();
        let mut x: SparseSet<u32> = a.iter().map(|(&i, &g)| (key(i, g), i + 1)).collect();
        let mut y: SparseSet<()> = SparseSet::new();
        let mut tags = BTreeMap::new();
        for &(i, g) in &b {
            if tags.contains_key(&i) {
                continue;
            }
            tags.insert(i, g);
            if g == 0 {
                y.insert(i, ());
            } else {
                y.insert(key(i, g), ());
            }
        }
        x.sort_as(&y);
        let shared: Vec<u32> = y
            .indices()
            .iter()
            .copied()
            .filter(|e| a.get(e).is_some_and(|&g| tags[e] == 0 || tags[e] == g))
            .collect();
        let mut joined: Vec<u32> = y.join(&x).map(|(e, ..)| e).collect();
        joined.sort();
        let mut sorted = shared.clone();
        sorted.sort();
        prop_assert_eq!(joined, sorted, "sort_as pairs what join pairs");
        prop_assert_eq!(&x.indices()[..shared.len()], &shared[..]);
        for (i, &e) in shared.iter().enumerate() {
            prop_assert_eq!(x.values()[i], e + 1);
        }
        for (&i, &g) in &a {
            prop_assert_eq!(x.get(key(i, g)), Some(&(i + 1)));
        }
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
    // Animation to scene graph: the bones sorted in node order, then copied position by
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
        let drained: Vec<_> = s.drain().collect();
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
    s.extend([(handle(9, 1, 0), "z")]);
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

#[test]
fn stale_foreign_and_malformed_keys_are_refused_everywhere() {
    let mut s: SparseSet<&str> = SparseSet::new();
    let live = handle(5, 3, 1);
    s.insert(live, "live");
    let refused = [
        (
            handle(5, 2, 1),
            InsertErrorKind::StaleKey,
            "stale key (index 5, generation 2)",
        ),
        (
            handle(5, 3, 2),
            InsertErrorKind::ForeignKey,
            "foreign key (index 5, generation 3, type id 2)",
        ),
    ];
    for (k, kind, msg) in refused {
        assert_eq!(
            s.try_insert(k, "x").map_err(|e| (e.kind(), e.into_inner())),
            Err((kind, "x"))
        );
        assert!(s.entry(k).is_none());
        let r = catch_unwind(AssertUnwindSafe(|| s.insert(k, "x")));
        let got = message(r.unwrap_err());
        assert!(got.contains(msg) && got.contains("try_insert"), "{got}");
        assert!(!s.contains(k) && s.get(k).is_none());
        assert_eq!(s.swap_remove(k), None);
        assert_eq!(s.shift_remove(k), None);
        assert!(!s.defer_remove(k));
        assert_eq!(s.remove_many(&[k]), 0);
    }
    // A malformed key, on an occupied index and on a vacant one.
    for i in [5, 6, 1 << 30] {
        let f = Forged(i, 3);
        assert_eq!(
            s.try_insert(f, "x").unwrap_err().kind(),
            InsertErrorKind::MalformedKey
        );
        assert!(s.entry(f).is_none());
        let r = catch_unwind(AssertUnwindSafe(|| s.insert(f, "x")));
        assert!(message(r.unwrap_err()).contains("malformed key"));
        assert!(!s.contains(f) && s.get(f).is_none() && s.get_mut(f).is_none());
        assert!(s.get_disjoint_mut([f]).is_none());
        assert_eq!(s.get_index_of(f), None);
        assert_eq!(s.swap_remove(f), None);
        assert_eq!(s.shift_remove(f), None);
        assert!(!s.defer_remove(f));
        assert_eq!(s.remove_many(&[f]), 0);
        let r = catch_unwind(AssertUnwindSafe(|| s[f]));
        assert!(message(r.unwrap_err()).contains("malformed key"));
    }
    assert_eq!(
        s.memory_usage(),
        {
            let mut one: SparseSet<&str> = SparseSet::new();
            one.insert(live, "live");
            one.memory_usage()
        },
        "no page allocated for a malformed key"
    );
    assert_eq!(s.iter().collect::<Vec<_>>(), [(5, &"live")]);
    assert_eq!(s.keys::<Handle>().collect::<Vec<_>>(), [live]);

    // A newer key replaces the dead entity's entry, whatever its type id.
    let newer = handle(5, 4, 2);
    assert_eq!(s.insert(newer, "newer"), Some("live"));
    assert!(!s.contains(live) && s.contains(newer));
    assert_eq!(s.keys::<Handle>().collect::<Vec<_>>(), [newer]);
    // A plain index replaces the value and keeps the tag.
    assert_eq!(s.insert(5u32, "plain"), Some("newer"));
    assert_eq!(s.get(newer), Some(&"plain"));
    s.assert_invariants();
}

#[test]
fn extend_and_collect_follow_insert() {
    let r = catch_unwind(|| {
        [(handle(1, 2, 0), 'a'), (handle(1, 1, 0), 'b')]
            .into_iter()
            .collect::<SparseSet<char>>()
    });
    assert!(message(r.unwrap_err()).contains("stale key"));
    let s: SparseSet<char> = [(handle(1, 1, 0), 'a'), (handle(1, 2, 0), 'b')]
        .into_iter()
        .collect();
    assert_eq!(s.iter_keys().collect::<Vec<_>>(), [(handle(1, 2, 0), &'b')]);
}

#[test]
fn joins_skip_entries_whose_tags_differ() {
    let k = handle;
    // Entity 1 lives in both; entity 2 died and its index went to generation 2 in `names`;
    // entity 3 has a foreign key in `names`; entity 4 is a plain index in `names`.
    let mut hp: SparseSet<u32> = [
        (k(1, 1, 0), 10),
        (k(2, 1, 0), 20),
        (k(3, 1, 0), 30),
        (k(4, 7, 0), 40),
    ]
    .into_iter()
    .collect();
    hp.insert(5u32, 50);
    let mut names: SparseSet<&str> = [
        (k(1, 1, 0), "a"),
        (k(2, 2, 0), "b"),
        (k(3, 1, 1), "c"),
        (k(5, 9, 0), "e"),
    ]
    .into_iter()
    .collect();
    names.insert(4u32, "d");
    let want = [1, 4, 5];
    let got: Vec<u32> = hp.join(&names).map(|(e, ..)| e).collect();
    assert_eq!(got, want);
    let mut got: Vec<u32> = names.join(&hp).map(|(e, ..)| e).collect();
    got.sort();
    assert_eq!(got, want);
    let got: Vec<u32> = hp
        .join_mut(&names)
        .map(|(e, a, _)| {
            *a += 1;
            e
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!((hp[1u32], hp[2u32], hp[4u32]), (11, 20, 41));
    let all: SparseSet<()> = (0..10u32).map(|e| (e, ())).collect();
    let got: Vec<u32> = all.join3(&hp, &names).map(|(e, ..)| e).collect();
    assert_eq!(got, want);
    let mut big: SparseSet<u8> = (0..100u32).map(|e| (e, 0)).collect();
    let got: Vec<u32> = big.join_mut(&names).map(|(e, ..)| e).collect();
    assert_eq!(got.len(), 5, "a set of plain indices meets every entry");
    let keyed: SparseSet<u8> = [(k(2, 1, 0), 0)].into_iter().collect();
    assert_eq!(
        keyed.join3(&big, &names).count(),
        0,
        "generation 1 and 2 never meet"
    );
    big.insert(k(2, 2, 0), 1);
    assert_eq!(big.join3(&keyed, &all).count(), 0);
}

/// A value that records its id when dropped, and panics then if asked to.
struct Tracked {
    id: u32,
    bomb: bool,
    dropped: Rc<RefCell<Vec<u32>>>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.dropped.borrow_mut().push(self.id);
        if self.bomb && !std::thread::panicking() {
            panic!("bomb {}", self.id);
        }
    }
}

/// A set of `n` tracked values, entity `i` holding id `i`; `bombs` panic when dropped.
fn tracked(n: u32, bombs: &[u32], dropped: &Rc<RefCell<Vec<u32>>>) -> SparseSet<Tracked, 8> {
    let mut s = SparseSet::new_paged();
    for id in 0..n {
        let v = Tracked {
            id,
            bomb: bombs.contains(&id),
            dropped: dropped.clone(),
        };
        s.insert(handle(id, 1, 0), v);
    }
    s
}

/// Every id in `0..n` was dropped exactly once.
fn all_dropped_once(dropped: &RefCell<Vec<u32>>, n: u32) {
    let mut d = dropped.borrow().clone();
    d.sort();
    assert_eq!(d, (0..n).collect::<Vec<_>>());
}

#[test]
fn drain_taken_in_part_dropped_or_leaked() {
    let dropped = Rc::new(RefCell::new(Vec::new()));
    let mut s = tracked(40, &[], &dropped);
    s.defer_remove(3u32);
    s.swap_remove(10u32);
    let mut d = s.drain();
    assert_eq!(d.len(), 38);
    let first: Vec<u32> = d
        .by_ref()
        .take(5)
        .map(|(e, v)| {
            assert_eq!(e, v.id);
            e
        })
        .collect();
    assert_eq!(first, [0, 1, 2, 4, 5], "dense order, the tombstone skipped");
    let last = d.next_back().unwrap();
    assert_eq!(last.0, 38, "39 moved into 10's place");
    drop(last);
    assert_eq!(
        dropped.borrow().len(),
        1 + 1 + 5 + 1,
        "swap_remove, tombstone, taken, last"
    );
    drop(d);
    assert!(s.is_empty());
    s.assert_invariants();
    all_dropped_once(&dropped, 40);

    // A leaked drain leaks its values, and leaves the set empty and valid. (The values borrow
    // their counter, so that leaking them leaks no heap memory for Miri to report.)
    struct CountedRef<'a>(&'a Cell<usize>);
    impl Drop for CountedRef<'_> {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }
    let counted = Cell::new(0);
    let mut s: SparseSet<CountedRef<'_>> = (0..20u32).map(|e| (e, CountedRef(&counted))).collect();
    let mut d = s.drain();
    drop(d.next());
    std::mem::forget(d);
    assert_eq!(counted.get(), 1);
    assert!(s.is_empty() && s.indices().is_empty() && s.values().is_empty());
    s.assert_invariants();
    assert!(!s.contains(5u32));
    s.insert(5u32, CountedRef(&counted));
    assert_eq!(s.len(), 1);
    drop(s);
    assert_eq!(counted.get(), 2, "the 18 leaked values are never dropped");
}

#[test]
fn a_panicking_drop_inside_drain_clear_or_retain_leaves_a_valid_set() {
    // drain: the bomb goes off while the iterator drops the rest.
    let dropped = Rc::new(RefCell::new(Vec::new()));
    let mut s = tracked(30, &[12], &dropped);
    s.defer_remove(20u32);
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut d = s.drain();
        drop(d.next());
        drop(d);
    }));
    assert!(r.is_err());
    assert!(s.is_empty());
    s.assert_invariants();
    all_dropped_once(&dropped, 30);

    // drain: the bomb is a tombstone, dropped while iterating.
    let dropped = Rc::new(RefCell::new(Vec::new()));
    let mut s = tracked(30, &[2], &dropped);
    s.defer_remove(2u32);
    let r = catch_unwind(AssertUnwindSafe(|| s.drain().count()));
    assert!(r.is_err());
    assert!(s.is_empty());
    s.assert_invariants();
    all_dropped_once(&dropped, 30);

    // clear
    let dropped = Rc::new(RefCell::new(Vec::new()));
    let mut s = tracked(30, &[0, 17], &dropped);
    assert!(catch_unwind(AssertUnwindSafe(|| s.clear())).is_err());
    assert!(s.is_empty());
    s.assert_invariants();
    all_dropped_once(&dropped, 30);

    // retain: the rejected bomb is removed, the entries after it kept.
    let dropped = Rc::new(RefCell::new(Vec::new()));
    let mut s = tracked(30, &[9], &dropped);
    let r = catch_unwind(AssertUnwindSafe(|| s.retain(|e, _| e % 3 != 0)));
    assert!(r.is_err());
    s.assert_invariants();
    assert!(!s.contains(9u32) && !s.contains(6u32) && s.contains(10u32) && s.contains(12u32));
    assert_eq!(s.len(), 30 - 4, "0, 3, 6 and 9 removed");
    assert_eq!(dropped.borrow().len(), 4);
    let keys: Vec<Handle> = s.keys().collect();
    assert!(keys
        .iter()
        .all(|k| s.get(*k).is_some_and(|v| v.id == k.index())));
    drop(s);
    all_dropped_once(&dropped, 30);
}

#[test]
fn entry_api_follows_the_rules() {
    let mut s: SparseSet<String> = SparseSet::new();
    let old = handle(3, 1, 0);
    let new = handle(3, 2, 0);
    s.entry(old).unwrap().or_insert_with(|| "old".into());
    assert!(matches!(s.entry(old), Some(Entry::Occupied(_))));
    assert!(matches!(s.entry(3u32), Some(Entry::Occupied(_))));
    // A newer key: vacant, and inserting replaces the dead entity's value in place.
    s.insert(9u32, "nine".into());
    match s.entry(new) {
        Some(Entry::Vacant(v)) => {
            assert_eq!(v.index(), 3);
            v.insert("new".into()).push('!');
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(s.indices(), &[3, 9]);
    assert_eq!(s.get(new).map(String::as_str), Some("new!"));
    assert!(s.entry(old).is_none(), "stale");
    assert!(s.entry(handle(3, 2, 1)).is_none(), "foreign");
    assert!(s.entry(Forged(3, 2)).is_none(), "malformed");
    assert!(s.entry(Forged(4, 2)).is_none(), "malformed, vacant index");
    s.set_max_index(100);
    assert!(s.entry(101u32).is_none(), "above max_index");
    let len = s.entry(100u32).unwrap().or_default().len();
    assert_eq!(len, 0);
    match s.entry(new).unwrap() {
        Entry::Occupied(o) => assert_eq!(o.swap_remove(), "new!"),
        Entry::Vacant(_) => panic!("occupied"),
    }
    assert_eq!(s.indices(), &[100, 9]);
    s.assert_invariants();
}

#[test]
fn get_disjoint_mut_needs_distinct_present_entities() {
    let mut s: SparseSet<u32> = (0..10u32).map(|e| (e, e)).collect();
    let [a, b, c] = s.get_disjoint_mut([7u32, 2, 9]).unwrap();
    std::mem::swap(a, b);
    *c += 100;
    assert_eq!((s[7u32], s[2u32], s[9u32]), (2, 7, 109));
    assert!(s.get_disjoint_mut([1u32, 1]).is_none());
    assert!(s.get_disjoint_mut([1u32, 10]).is_none());
    s.insert(handle(20, 2, 0), 20);
    assert!(s.get_disjoint_mut([handle(20, 1, 0)]).is_none());
    assert!(s.get_disjoint_mut([handle(20, 2, 0)]).is_some());
    assert!(s.get_disjoint_mut::<u32, 0>([]).is_some());
}

#[test]
fn huge_indices_are_refused_before_any_allocation() {
    let mut s: SparseSet<u64> = SparseSet::new().with_max_index(1 << 16);
    for i in [(1 << 16) + 1, u32::MAX - 1, u32::MAX] {
        let before = s.memory_usage();
        let err = s.try_insert(i, 1).unwrap_err();
        assert_eq!(
            err.kind(),
            InsertErrorKind::IndexAboveMax {
                index: i,
                max: 1 << 16
            }
        );
        assert_eq!(s.memory_usage(), before);
        let r = catch_unwind(AssertUnwindSafe(|| s.insert(i, 2)));
        let msg = message(r.unwrap_err());
        if i == u32::MAX {
            // No bound admits it: the panic does not advise raising one.
            assert!(
                msg.contains("never an entity") && !msg.contains("raise"),
                "{msg}"
            );
        } else {
            assert!(
                msg.contains(&format!("index {i} is above max_index 65536")),
                "{msg}"
            );
        }
        assert_eq!(s.memory_usage(), before);
    }
    let r = catch_unwind(AssertUnwindSafe(|| s.set_max_index(u32::MAX)));
    assert!(message(r.unwrap_err()).contains("tombstone"));
    // At the default bound, u32::MAX is still refused and nothing allocated.
    let mut d: SparseSet<u64> = SparseSet::new();
    assert!(d.try_insert(u32::MAX, 0).is_err());
    assert_eq!(d.memory_usage(), 0);
}

#[test]
fn swap_positions_moves_tombstones_below_the_first_one() {
    // A pending removal swapped below every other one: `compact` must still find it, and every
    // lookup must follow the live entries, for each pair of positions.
    for a in 0..10usize {
        for b in 0..10usize {
            let mut set: Set = (0..10u32).map(|i| (i, i as i32)).collect();
            assert!(set.defer_remove(7u32));
            assert!(set.defer_remove(8u32));
            set.swap_positions(a, b);
            set.assert_invariants();
            let mut want: Vec<u32> = (0..10).collect();
            want[7] = TOMBSTONE;
            want[8] = TOMBSTONE;
            want.swap(a, b);
            assert_eq!(set.indices(), &want[..], "swap {a} {b}");
            for i in (0..10u32).filter(|&i| i != 7 && i != 8) {
                assert_eq!(set.get(i), Some(&(i as i32)), "swap {a} {b}: get({i})");
            }
            set.compact();
            set.assert_invariants();
            want.retain(|&e| e != TOMBSTONE);
            assert_eq!(set.indices(), &want[..], "swap {a} {b}, compacted");
        }
    }
}
