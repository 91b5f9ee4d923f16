//! HandleMap against a HashMap model: every op, then every seen handle checked. The extra
//! byte sets `min_free` (0 to 7), so the FIFO freelist's keep-N-free rule is exercised too.
#![no_main]

use std::collections::HashMap;

use dod::{Handle, HandleMap};
use dod_fuzz::Op;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (Vec<Op>, u8)| {
    let (ops, min_free) = input;
    let min_free = u32::from(min_free % 8);
    let mut map: HandleMap<u16> = HandleMap::new().with_type_id(3).with_min_free(min_free);
    let mut live: HashMap<Handle, u16> = HashMap::new();
    let mut seen: Vec<Handle> = Vec::new();
    let pick = |seen: &[Handle], p: u16| (!seen.is_empty()).then(|| seen[p as usize % seen.len()]);
    for op in ops.iter().take(512) {
        match op {
            Op::Insert(v) => {
                let slots = map.slot_count();
                let vacant = slots - map.len();
                let h = map.insert(*v);
                if map.slot_count() == slots {
                    // A slot was reused: more than `min_free` were vacant.
                    assert!(
                        vacant as u32 > min_free,
                        "min_free {min_free}, {vacant} vacant"
                    );
                }
                assert!(!seen.contains(&h), "handle handed out twice");
                seen.push(h);
                live.insert(h, *v);
            }
            Op::InsertMany(vs) => {
                for (h, v) in map.insert_many(vs.iter().copied()).into_iter().zip(vs) {
                    assert!(!seen.contains(&h));
                    seen.push(h);
                    live.insert(h, *v);
                }
            }
            Op::Remove(p) => {
                if let Some(h) = pick(&seen, *p) {
                    assert_eq!(map.remove(h), live.remove(&h));
                }
            }
            Op::RemoveMany(ps) => {
                let hs: Vec<Handle> = ps.iter().filter_map(|&p| pick(&seen, p)).collect();
                let expect = hs.iter().filter(|h| live.remove(h).is_some()).count();
                assert_eq!(map.remove_many(&hs), expect);
            }
            Op::Get(p) => {
                if let Some(h) = pick(&seen, *p) {
                    assert_eq!(map.get(h), live.get(&h));
                }
            }
            Op::GetForged(bits) => {
                if let Some(h) = Handle::from_bits(*bits) {
                    assert_eq!(map.get(h), live.get(&h));
                }
            }
            Op::Set(p, v) => {
                if let Some(h) = pick(&seen, *p) {
                    if let Some(x) = map.get_mut(h) {
                        *x = *v;
                        live.insert(h, *v);
                    }
                }
            }
            Op::Retain(m) => {
                let m = u16::from(*m).max(2);
                map.retain(|_, v| *v % m != 0);
                live.retain(|_, v| *v % m != 0);
            }
            Op::Clear => {
                map.clear();
                live.clear();
            }
            Op::Reset => {
                map.reset();
                live.clear();
            }
            Op::Sort => {
                map.sort_by(|a, b| a.cmp(b));
                assert!(map.values().is_sorted());
            }
            Op::Defragment(budget) => {
                let moves = map.defragment(|a, b| a.cmp(b), usize::from(*budget));
                assert!(moves <= usize::from(*budget));
                if !map.is_fragmented() {
                    assert!(map.values().is_sorted());
                }
            }
            Op::Reserve(n) => map.reserve(usize::from(*n)),
            Op::ShrinkToFit => map.shrink_to_fit(),
            Op::RoundTrip => {
                let json = serde_json::to_vec(&map).unwrap();
                let back: HandleMap<u16> = serde_json::from_slice(&json).unwrap();
                assert!(back.iter().eq(map.iter()));
                assert_eq!(back.min_free(), min_free);
                map = back;
            }
        }
        assert_eq!(map.len(), live.len());
        for &h in &seen {
            assert_eq!(map.get(h), live.get(&h));
        }
        for (d, (h, v)) in map.iter().enumerate() {
            assert_eq!(live.get(&h), Some(v));
            assert_eq!(map.get_index_of(h), Some(d));
        }
    }
});
