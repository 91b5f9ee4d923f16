//! Untrusted bytes for `DataStore::from_bytes`: rejected, or a store whose every accessor and
//! mutator works without panicking, whose keys follow the slot rules, and whose saved bytes
//! load again. Inputs either are the bytes themselves or describe a valid store (far indices,
//! slots whose component was removed, integers) and then corrupt some of its bytes, so that
//! most runs get past the header.
#![no_main]

use std::num::NonZeroU16;

use dod::data::DataStore;
use dod::{Handle, Handle32, InsertErrorKind, Key};
use libfuzzer_sys::fuzz_target;

fn exercise<K: Key>(mut s: DataStore<K>) {
    for (e, v) in s.iter() {
        assert_eq!(s.get(e), Some(v));
        for (k, val) in v.iter() {
            assert_eq!(v.get(k), Some(val));
        }
        let _ = format!("{e:?}{v:?}");
    }
    let _ = (s.fragmentation(), s.memory_usage(), s.free_bytes());
    s.assert_invariants();
    let ents: Vec<K> = s.keys().collect();
    assert_eq!(ents.len(), s.len());
    for e in &ents {
        // The key that holds a component is there; an older one is stale, and the same
        // generation under another type id is foreign: neither enters, nothing is allocated.
        assert_eq!(s.try_insert(*e).map_err(|x| x.kind()), Ok(false));
        let before = s.memory_usage();
        let generation = NonZeroU16::new(e.generation()).expect("a loaded key has a generation");
        if let Some(g) = NonZeroU16::new(generation.get() - 1) {
            let older = K::from_parts(e.index(), g, e.type_id());
            let err = s.try_insert(older).unwrap_err().kind();
            assert_eq!(err, InsertErrorKind::StaleKey);
        }
        if K::MAX_TYPE_ID > 0 {
            let other = K::from_parts(e.index(), generation, e.type_id() ^ 1);
            let err = s.try_insert(other).unwrap_err().kind();
            assert_eq!(err, InsertErrorKind::ForeignKey);
        }
        assert_eq!(s.memory_usage(), before);
    }
    for (i, e) in ents.iter().enumerate() {
        assert!(s.set(
            *e,
            "name",
            "a name long enough to need a larger block than before"
        ));
        assert!(s.set(*e, "pos", &[1.0, 2.0, 3.0, 4.0]));
        assert!(s.set(*e, "id", i64::MIN + i as i64));
        assert_eq!(s.get_i64(*e, "id"), Some(i64::MIN + i as i64));
        if i % 3 == 0 {
            assert!(s.remove(*e));
        }
    }
    let bytes = s.to_bytes();
    let back = DataStore::<K>::from_bytes(&bytes).expect("saved bytes load");
    assert_eq!(back.len(), s.len());
    assert!(back == s);
    s.compact();
    assert_eq!(
        DataStore::<K>::from_bytes(&s.to_bytes())
            .map(|t| t.len())
            .ok(),
        Some(s.len())
    );
}

fn build(n: u8) -> Vec<u8> {
    let mut s: DataStore = DataStore::new();
    for i in 0..u32::from(n % 16) {
        // Every fifth entity far out (a page of its own), every fourth removed again.
        let index = if i % 5 == 4 { 3_000_000_000 + i } else { i * 3 };
        let e = Handle::new(index, 1 + i as u16, i as u16 % 3).unwrap();
        s.insert(e);
        let _ = s.set(e, "name", "x".repeat(i as usize * 5).as_str());
        let _ = s.set(e, "hp", i as f32);
        let _ = s.set(e, "drunk", i % 2 == 0);
        let _ = s.set(e, "id", e.to_bits() as i64);
        if i % 4 == 3 {
            s.remove(e);
        }
    }
    s.to_bytes()
}

fuzz_target!(|input: &[u8]| {
    let Some((&first, rest)) = input.split_first() else {
        return;
    };
    let bytes = if first & 1 == 1 {
        rest.to_vec()
    } else {
        let mut b = build(first >> 1);
        let len = b.len();
        for c in rest.chunks_exact(3) {
            let at = usize::from(u16::from_le_bytes([c[0], c[1]]));
            if let Some(x) = b.get_mut(at % len) {
                *x ^= c[2];
            }
        }
        b
    };
    if let Ok(s) = DataStore::<Handle>::from_bytes(&bytes) {
        exercise(s);
    }
    if let Ok(s) = DataStore::<Handle32>::from_bytes(&bytes) {
        exercise(s);
    }
});
