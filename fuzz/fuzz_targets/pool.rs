//! Pool against a `HashMap<Handle, u16>`, with stale and forged handles, checked after every
//! step, plus arbitrary bytes fed to the serde reader.
#![no_main]

use std::collections::HashMap;

use dod::{Handle, Handle32, Pool};
use dod_fuzz::Op;
use libfuzzer_sys::fuzz_target;

fn check(pool: &Pool<u16>, model: &HashMap<Handle, u16>, seen: &[Handle]) {
    pool.assert_invariants();
    assert_eq!(pool.len(), model.len());
    for h in seen {
        assert_eq!(pool.get(*h), model.get(h));
    }
    assert_eq!(pool.iter().count(), model.len());
    for (k, v) in pool.iter() {
        assert_eq!(model.get(&k), Some(v));
    }
}

fuzz_target!(|input: (Vec<Op>, Vec<u8>, u8)| {
    let (ops, bytes, type_id) = input;
    // Untrusted bytes never panic the reader and never give a broken pool.
    if let Ok(p) = serde_json::from_slice::<Pool<u16>>(&bytes) {
        p.assert_invariants();
    }
    if let Ok(p) = serde_json::from_slice::<Pool<u16, Handle32>>(&bytes) {
        p.assert_invariants();
    }

    let type_id = u16::from(type_id % 4);
    let mut pool: Pool<u16> = Pool::new().with_type_id(type_id);
    let mut model: HashMap<Handle, u16> = HashMap::new();
    let mut seen: Vec<Handle> = Vec::new();
    let pick =
        |seen: &[Handle], k: u16| (!seen.is_empty()).then(|| seen[usize::from(k) % seen.len()]);
    for op in ops.into_iter().take(256) {
        match op {
            Op::Insert(v) => {
                let h = pool.insert(v);
                assert!(model.insert(h, v).is_none());
                assert!(!seen.contains(&h), "a handle was handed out twice");
                seen.push(h);
            }
            Op::InsertMany(vs) => {
                for v in vs.into_iter().take(64) {
                    let h = pool.insert(v);
                    assert!(model.insert(h, v).is_none());
                    seen.push(h);
                }
            }
            Op::Remove(k) => {
                if let Some(h) = pick(&seen, k) {
                    assert_eq!(pool.remove(h), model.remove(&h));
                }
            }
            Op::RemoveMany(ks) => {
                for k in ks {
                    if let Some(h) = pick(&seen, k) {
                        assert_eq!(pool.remove(h), model.remove(&h));
                    }
                }
            }
            Op::Get(k) => {
                if let Some(h) = pick(&seen, k) {
                    assert_eq!(pool.get(h), model.get(&h));
                }
            }
            Op::GetForged(bits) => {
                if let Some(h) = Handle::from_bits(bits) {
                    assert_eq!(pool.get(h), model.get(&h));
                    assert_eq!(pool.contains(h), model.contains_key(&h));
                }
            }
            Op::Set(k, v) => {
                if let Some(h) = pick(&seen, k) {
                    if let Some(x) = pool.get_mut(h) {
                        *x = v;
                        model.insert(h, v);
                    } else {
                        assert!(!model.contains_key(&h));
                    }
                }
            }
            Op::Retain(m) => {
                let m = u16::from(m.max(1));
                pool.retain(|_, v| *v % m != 0);
                model.retain(|_, v| *v % m != 0);
            }
            Op::Clear => {
                pool.clear();
                model.clear();
            }
            Op::Reset => {
                let n = pool.drain().count();
                assert_eq!(n, model.len());
                model.clear();
            }
            Op::Sort | Op::Defragment(_) => {
                let c = pool.clone();
                c.assert_invariants();
                pool = c;
            }
            Op::Reserve(n) => pool.reserve(usize::from(n)),
            Op::ShrinkToFit => {}
            Op::RoundTrip => {
                let json = serde_json::to_vec(&pool).unwrap();
                pool = serde_json::from_slice(&json).unwrap();
            }
        }
        check(&pool, &model, &seen);
    }
});
