//! Random programs against `SparseSet` and a `Vec` model of its dense arrays (live entries and
//! tombstones), checked after every step.
#![no_main]

use dod::sparse_set::{SparseSet, TOMBSTONE};
use dod::Handle;
use dod_fuzz::Op;
use libfuzzer_sys::fuzz_target;

/// A live entry of the model: index, generation (0: inserted by a plain index), value.
type Entry = (u32, u16, u16);

#[derive(Clone, Copy, Debug)]
enum Ent {
    Index(u32),
    Key(Handle),
}

impl Ent {
    fn index(self) -> u32 {
        match self {
            Ent::Index(i) => i,
            Ent::Key(h) => h.index(),
        }
    }
    fn generation(self) -> Option<u16> {
        match self {
            Ent::Index(_) => None,
            Ent::Key(h) => Some(h.generation()),
        }
    }
}

/// The entity a value names: small indices spread over several pages, a few far away, and a
/// generation from 1 to 4 when the low bit asks for a key.
fn entity_of(v: u16) -> Ent {
    let index = if v & 0x8000 != 0 {
        4_000_000 + u32::from(v & 0xFF)
    } else {
        u32::from(v >> 1) % 3000
    };
    if v & 1 == 1 {
        Ent::Key(Handle::new(index, (v >> 13 & 3) + 1, 0).expect("valid"))
    } else {
        Ent::Index(index)
    }
}

fn position(model: &[Option<Entry>], e: Ent) -> Option<usize> {
    model.iter().position(|s| {
        matches!(*s, Some((i, g, _)) if i == e.index() && e.generation().is_none_or(|eg| eg == g))
    })
}

fn get(set: &SparseSet<u16, 64>, e: Ent) -> Option<&u16> {
    match e {
        Ent::Index(i) => set.get(i),
        Ent::Key(h) => set.get(h),
    }
}

fn insert(set: &mut SparseSet<u16, 64>, model: &mut Vec<Option<Entry>>, e: Ent, v: u16) {
    let old = match e {
        Ent::Index(i) => set.insert(i, v),
        Ent::Key(h) => set.insert(h, v),
    };
    let slot = model.iter_mut().flatten().find(|(i, _, _)| *i == e.index());
    match slot {
        Some((_, g, val)) => {
            assert_eq!(old, Some(*val));
            *val = v;
            if let Some(eg) = e.generation() {
                *g = eg;
            }
        }
        None => {
            assert_eq!(old, None);
            model.push(Some((e.index(), e.generation().unwrap_or(0), v)));
        }
    }
}

fn check(set: &SparseSet<u16, 64>, model: &[Option<Entry>], seen: &[Ent]) {
    assert_eq!(set.indices().len(), model.len());
    for (i, s) in model.iter().enumerate() {
        match s {
            Some((e, _, v)) => {
                assert_eq!(set.indices()[i], *e);
                assert_eq!(set.values()[i], *v);
            }
            None => assert_eq!(set.indices()[i], TOMBSTONE),
        }
    }
    let live = model.iter().flatten().count();
    assert_eq!(set.len(), live);
    assert_eq!(set.iter().count(), live);
    for &e in seen {
        let want = position(model, e).and_then(|p| model[p]).map(|(_, _, v)| v);
        assert_eq!(get(set, e).copied(), want, "{e:?}");
    }
}

fuzz_target!(|ops: Vec<Op>| {
    let mut set: SparseSet<u16, 64> = SparseSet::new_paged();
    let mut model: Vec<Option<Entry>> = Vec::new();
    let mut seen: Vec<Ent> = Vec::new();
    let pick = |seen: &[Ent], p: u16| -> Option<Ent> {
        (!seen.is_empty()).then(|| seen[usize::from(p) % seen.len()])
    };
    for op in ops.iter().take(400) {
        match op {
            Op::Insert(v) => {
                let e = entity_of(*v);
                seen.push(e);
                insert(&mut set, &mut model, e, *v);
            }
            Op::InsertMany(vs) => {
                for &v in vs.iter().take(64) {
                    let e = entity_of(v);
                    seen.push(e);
                    insert(&mut set, &mut model, e, v);
                }
            }
            Op::Remove(p) => {
                if let Some(e) = pick(&seen, *p) {
                    let shift = p & 0x100 != 0;
                    let got = match (e, shift) {
                        (Ent::Index(i), false) => set.swap_remove(i),
                        (Ent::Key(h), false) => set.swap_remove(h),
                        (Ent::Index(i), true) => set.shift_remove(i),
                        (Ent::Key(h), true) => set.shift_remove(h),
                    };
                    let want = position(&model, e).map(|pos| {
                        let s = if shift {
                            model.remove(pos)
                        } else {
                            model.swap_remove(pos)
                        };
                        s.map_or(0, |(_, _, v)| v)
                    });
                    assert_eq!(got, want);
                }
            }
            Op::RemoveMany(ps) => {
                let es: Vec<u32> = ps
                    .iter()
                    .filter_map(|&p| pick(&seen, p))
                    .map(Ent::index)
                    .collect();
                let removed = set.remove_many(&es);
                let mut want = 0;
                for &e in &es {
                    if let Some(pos) = position(&model, Ent::Index(e)) {
                        model[pos] = None;
                        want += 1;
                    }
                }
                model.retain(Option::is_some);
                assert_eq!(removed, want);
            }
            Op::Get(p) => {
                if let Some(e) = pick(&seen, *p) {
                    let want = position(&model, e)
                        .and_then(|p| model[p])
                        .map(|(_, _, v)| v);
                    assert_eq!(get(&set, e).copied(), want);
                }
            }
            Op::GetForged(bits) => {
                if let Some(h) = Handle::from_bits(*bits) {
                    let e = Ent::Key(h);
                    let want = position(&model, e)
                        .and_then(|p| model[p])
                        .map(|(_, _, v)| v);
                    assert_eq!(set.get(h).copied(), want);
                    assert_eq!(set.contains(h), want.is_some());
                }
                let i = *bits as u32;
                let want = position(&model, Ent::Index(i))
                    .and_then(|p| model[p])
                    .map(|(_, _, v)| v);
                assert_eq!(set.get(i).copied(), want);
            }
            Op::Set(p, v) => {
                if let Some(e) = pick(&seen, *p) {
                    let got = match e {
                        Ent::Index(i) => set.get_mut(i),
                        Ent::Key(h) => set.get_mut(h),
                    };
                    match (got, position(&model, e)) {
                        (Some(x), Some(pos)) => {
                            *x = *v;
                            if let Some((_, _, val)) = &mut model[pos] {
                                *val = *v;
                            }
                        }
                        (None, None) => {}
                        (g, m) => panic!("get_mut {e:?}: {g:?} vs {m:?}"),
                    }
                }
            }
            Op::Retain(m) => {
                let m = u16::from(*m).max(1);
                set.retain(|_, v| *v % m != 0);
                model.retain(|s| matches!(s, Some((_, _, v)) if v % m != 0));
            }
            Op::Clear => {
                set.clear();
                model.clear();
            }
            Op::Reset => {
                let drained = set.drain();
                let want: Vec<(u32, u16)> =
                    model.iter().flatten().map(|&(e, _, v)| (e, v)).collect();
                assert_eq!(drained, want);
                model.clear();
            }
            Op::Sort => {
                set.sort_by_key(|_, v| *v);
                model.retain(Option::is_some);
                model.sort_by_key(|s| s.map(|(_, _, v)| v));
            }
            Op::Defragment(k) => {
                // Deferred removal: a tombstone now, compaction on an even count.
                if k % 2 == 0 {
                    set.compact();
                    model.retain(Option::is_some);
                } else if let Some(e) = pick(&seen, u16::from(*k)) {
                    let got = match e {
                        Ent::Index(i) => set.defer_remove(i),
                        Ent::Key(h) => set.defer_remove(h),
                    };
                    let want = position(&model, e).map(|p| model[p] = None).is_some();
                    assert_eq!(got, want);
                }
            }
            Op::Reserve(n) => set.reserve(usize::from(*n)),
            Op::ShrinkToFit => set.shrink_to_fit(),
            Op::RoundTrip => {
                let json = serde_json::to_vec(&set).expect("serialises");
                set = serde_json::from_slice(&json).expect("deserialises");
                model.retain(Option::is_some);
                // Untrusted bytes: never a panic, only Ok or Err.
                let _ = serde_json::from_slice::<SparseSet<u16, 64>>(&json[..json.len() / 2]);
            }
        }
        check(&set, &model, &seen);
    }
});
