//! Untrusted bytes for `DataStore::from_bytes`: rejected, or a store whose every accessor and
//! mutator works without panicking. Inputs either are the bytes themselves or describe a
//! valid store and then corrupt some of its bytes, so that most runs get past the header.
#![no_main]

use dod::data::DataStore;
use dod::{Handle, Handle32, Key};
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
    let ents: Vec<K> = s.keys().collect();
    assert_eq!(ents.len(), s.len());
    for (i, e) in ents.iter().enumerate() {
        assert!(s.set(
            *e,
            "name",
            "a name long enough to need a larger block than before"
        ));
        assert!(s.set(*e, "pos", &[1.0, 2.0, 3.0, 4.0]));
        if i % 3 == 0 {
            assert!(s.remove(*e));
        }
    }
    let bytes = s.to_bytes();
    let back = DataStore::<K>::from_bytes(&bytes).expect("saved bytes load");
    assert_eq!(back.len(), s.len());
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
        let e = Handle::new(i * 3, 1 + i as u16, 0).unwrap();
        s.insert(e);
        let _ = s.set(e, "name", "x".repeat(i as usize * 5).as_str());
        let _ = s.set(e, "hp", i as f32);
        let _ = s.set(e, "drunk", i % 2 == 0);
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
