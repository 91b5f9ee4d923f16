//! Every container with `serde` support loads from a format that is not self-describing
//! (postcard: a struct is its fields in order, with no names), not only from JSON: what is
//! saved in one format loads in it, equal, with the same next key.
#![cfg(feature = "serde")]

use dod::{BitSet, Handle, Handle32, HandleMap, Pool, SparseSet};
use serde::{de::DeserializeOwned, Serialize};

/// Saves `v` in postcard and in JSON and loads it back from both.
fn both<T: Serialize + DeserializeOwned>(v: &T) -> (T, T) {
    let bytes = postcard::to_allocvec(v).expect("saves in postcard");
    let from_postcard = postcard::from_bytes(&bytes).expect("loads from postcard");
    let json = serde_json::to_string(v).expect("saves in JSON");
    let from_json = serde_json::from_str(&json).expect("loads from JSON");
    (from_postcard, from_json)
}

#[test]
fn handles() {
    let h = Handle::new(7, 3, 2).unwrap();
    assert_eq!(both(&h), (h, h));
    let h = Handle32::new(7, 3).unwrap();
    assert_eq!(both(&h), (h, h));
    let hs = vec![Some(h), None];
    assert_eq!(both(&hs), (hs.clone(), hs));
}

#[test]
fn handle_map_keeps_items_and_free_queue() {
    let mut m: HandleMap<String> = HandleMap::new().with_min_free(1);
    let keys: Vec<Handle> = (0..6).map(|i| m.insert(format!("v{i}"))).collect();
    m.remove(keys[4]);
    m.remove(keys[1]);
    m.remove(keys[2]);
    for mut back in <[_; 2]>::from(both(&m)) {
        assert_eq!(back, m);
        assert_eq!(back.get(keys[1]), None);
        assert_eq!(back.get(keys[3]).map(String::as_str), Some("v3"));
        assert_eq!(back.insert("n".into()), m.clone().insert("n".into()));
    }
    let mut small: HandleMap<u8, Handle32> = HandleMap::with_key();
    let k = small.insert(1);
    small.insert(2);
    small.remove(k);
    for mut back in <[_; 2]>::from(both(&small)) {
        assert_eq!(back, small);
        assert_eq!(back.insert(3), small.clone().insert(3));
    }
}

#[test]
fn pool_keeps_slots_and_holes() {
    let mut p: Pool<u64> = Pool::new();
    let keys: Vec<Handle> = (0..8).map(|i| p.insert(i * 10)).collect();
    p.remove(keys[5]);
    p.remove(keys[0]);
    for mut back in <[_; 2]>::from(both(&p)) {
        assert_eq!(back, p);
        assert_eq!(back.get(keys[0]), None);
        assert_eq!(back.get(keys[7]), Some(&70));
        assert_eq!(back.insert(1), p.clone().insert(1));
    }
}

#[test]
fn sparse_set_keeps_order_and_far_pages() {
    let mut s: SparseSet<i32> = SparseSet::new();
    for i in [9u32, 3, 70_000, 0, 512] {
        s.insert(i, -(i as i32));
    }
    s.swap_remove(3u32);
    for back in <[_; 2]>::from(both(&s)) {
        assert_eq!(back, s);
        assert_eq!(back.indices(), s.indices());
    }
}

#[test]
fn bit_set() {
    let b: BitSet = [0u32, 5, 64, 1000, 4095].into_iter().collect();
    assert_eq!(both(&b), (b.clone(), b));
    let empty = BitSet::new();
    assert_eq!(both(&empty), (empty.clone(), empty));
}
