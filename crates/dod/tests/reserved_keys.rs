//! Keys that no container hands out: a `Handle` with its reserved bit (63) set, a generation of
//! 0, or the index `u32::MAX`; a `Handle32` with a generation of 0 or the index `0xFFFF`; a key
//! type of the user's whose tag has bit 31 set. `Option<Handle>` is `Pod` with the `bytemuck`
//! feature, so a cast of any non-zero integer builds such a handle, and any type can implement
//! `Key`.
//!
//! The containers that store values for keys handed out elsewhere (`SparseSet`, `DataStore`)
//! refuse them alike (`MalformedKey`, `None`, `false`, nothing changed); the ones that hand
//! keys out (`HandleMap`, `Pool`) never resolve them; and what each saves (serde,
//! `to_bytes`) loads again with the same contents.

use dod::data::{DataComponent, DataStore};
use dod::sparse_set::SparseSet;
#[cfg(feature = "bytemuck")]
use dod::{Handle, Handle32, HandleMap, Pool};
use dod::{InsertErrorKind, Key};
use std::num::NonZeroU16;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A key type of the user's whose tag has bit 31 set: the pattern of a vacant slot.
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
        1 << 31 | u32::from(self.1)
    }
}

/// A key type of the user's that carries type ids up to 1, with keys of type id 2 or 3: a
/// pattern its own containers never stamp.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
struct Narrow(u32, u16, u16);

impl Key for Narrow {
    const MAX_SLOTS: u32 = 1 << 20;
    const MAX_TYPE_ID: u16 = 1;
    fn from_parts(index: u32, generation: NonZeroU16, type_id: u16) -> Self {
        Narrow(index, generation.get(), type_id & 1)
    }
    fn index(self) -> u32 {
        self.0
    }
    fn generation(self) -> u16 {
        self.1
    }
    fn type_id(self) -> u16 {
        self.2
    }
}

/// The handles no container hands out, as bytes cast into `Option<Handle>` make them.
#[cfg(feature = "bytemuck")]
fn bad_handles() -> Vec<Handle> {
    let bits: [u64; 7] = [
        1 << 63 | 1 << 32 | 3,           // reserved bit, index 3, generation 1
        1 << 63 | 5 << 48 | 1 << 32 | 3, // reserved bit with a type id
        1 << 63 | 1 << 32,               // reserved bit, index 0
        3,                               // generation 0, type id 0
        2 << 48 | 3,                     // generation 0, type id 2
        1 << 32 | 0xFFFF_FFFF,           // index u32::MAX
        u64::MAX,                        // everything set
    ];
    bits.iter()
        .map(|&b| {
            let h: Option<Handle> = bytemuck::cast(b);
            let h = h.expect("a non-zero pattern is Some");
            assert_eq!(Handle::from_bits(h.to_bits()), None, "{b:#x} is no handle");
            h
        })
        .collect()
}

/// The 32-bit handles no container hands out.
#[cfg(feature = "bytemuck")]
fn bad_handle32s() -> Vec<Handle32> {
    let bits: [u32; 3] = [3, 1 << 16 | 0xFFFF, u32::MAX];
    bits.iter()
        .map(|&b| {
            let h: Option<Handle32> = bytemuck::cast(b);
            let h = h.expect("a non-zero pattern is Some");
            assert_eq!(
                Handle32::from_bits(h.to_bits()),
                None,
                "{b:#x} is no handle"
            );
            h
        })
        .collect()
}

fn forged_keys() -> Vec<Forged> {
    vec![
        Forged(3, 1),
        Forged(0, 1),
        Forged(3, 0xFFFF),
        Forged(u32::MAX, 1),
    ]
}

/// Well-formed keys at the indices the bad ones name, so that the sets hold entries there.
fn good<K: Key>(index: u32) -> K {
    K::from_parts(index % K::MAX_SLOTS.max(1), NonZeroU16::MIN, 0)
}

/// A set after a serde round trip through JSON; panics if the saved set does not load.
#[cfg(feature = "serde")]
fn reloaded(s: &SparseSet<i32>) -> SparseSet<i32> {
    let json = serde_json::to_string(s).unwrap();
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("saved set does not load: {e}: {json}"))
}

/// Everything a sparse set says about `k`, before and after saving, agrees.
fn check_sparse_set<K: Key>(k: K) {
    let index = k.index();
    let mut starts: Vec<SparseSet<i32>> = vec![SparseSet::new()];
    if index <= dod::sparse_set::DEFAULT_MAX_INDEX {
        let mut by_index = SparseSet::new();
        by_index.insert(index, 1);
        let mut by_key = SparseSet::new();
        if let Ok(None) = by_key.try_insert(good::<K>(index), 1) {
            starts.push(by_key);
        }
        starts.push(by_index);
    }
    for start in starts {
        let mut s = start.clone();

        // Lookups never resolve a key the set refuses to insert; removal paths agree.
        let entry_found = s.entry(k).is_some();
        let err = match s.try_insert(k, 7) {
            Err(err) => err,
            Ok(_) => panic!("{k:?}: a malformed key was stored"),
        };
        assert_eq!(err.kind(), InsertErrorKind::MalformedKey, "{k:?}");
        assert_eq!(err.into_inner(), 7);
        assert_eq!(s, start, "{k:?}: a refusal changes nothing");
        assert!(!entry_found, "{k:?}: refused by insert, offered by entry");
        assert!(!s.contains(k) && s.get(k).is_none() && s.get_mut(k).is_none());
        assert!(s.get_index_of(k).is_none());
        assert!(s.get_disjoint_mut([k]).is_none());
        assert!(!s.defer_remove(k));
        assert_eq!(s.remove_many(&[k]), 0);
        assert_eq!(s.swap_remove(k), None);
        assert_eq!(s.shift_remove(k), None);
        assert_eq!(s, start, "{k:?}: lookups and removals by it change nothing");
        let r = catch_unwind(AssertUnwindSafe(|| s[k]));
        assert!(r.is_err(), "{k:?}: indexing by a refused key panics");
        let r = catch_unwind(AssertUnwindSafe(|| s.clone().insert(k, 7)));
        let msg = r.expect_err("insert panics on a malformed key");
        let msg = msg
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| msg.downcast_ref::<&str>().copied())
            .unwrap_or("");
        assert!(msg.contains("malformed key"), "{k:?}: {msg}");
        #[cfg(feature = "serde")]
        assert_eq!(reloaded(&s), s);
    }
}

/// Everything a data store says about `k`, before and after saving, agrees.
fn check_data_store<K: Key>(k: K) {
    let mut sheet = DataComponent::new();
    sheet.set("hp", 3.0f32);
    let mut starts: Vec<DataStore<K>> = vec![DataStore::new()];
    if u64::from(k.index()) < u64::from(K::MAX_SLOTS) {
        let mut s = DataStore::new();
        if s.try_insert(good::<K>(k.index())).is_ok() {
            starts.push(s);
        }
    }
    for start in starts {
        let mut s = start.clone();
        let a = s.try_insert(k).map_err(|e| e.kind());
        let b = s.try_insert_data(k, &sheet).map_err(|e| e.kind());
        for r in [a, b] {
            assert_eq!(r.err(), Some(InsertErrorKind::MalformedKey), "{k:?}");
        }
        assert_eq!(s, start, "{k:?}: a refusal changes nothing");
        assert!(!s.contains(k));
        assert!(s.get(k).is_none() && s.get_f32(k, "hp").is_none());
        assert!(!s.remove(k));
        assert!(!s.remove_key(k, "hp"));
        assert_eq!(s, start);
        let r = catch_unwind(AssertUnwindSafe(|| start.clone().insert(k)));
        assert!(r.is_err(), "{k:?}: insert panics on a malformed key");
        // What it lists it contains, and what it saves loads.
        for key in s.keys() {
            assert!(s.contains(key), "{key:?} listed but not contained");
        }
        let back = DataStore::<K>::from_bytes(&s.to_bytes())
            .unwrap_or_else(|e| panic!("{k:?}: saved store does not load: {e}"));
        assert_eq!(back, s);
    }
}

#[cfg(feature = "bytemuck")]
/// A map or pool never resolves a key it cannot have handed out, before or after saving.
/// (Only for the handle types: a key type whose own tags have bit 31 set cannot key a map.)
fn check_lookups<K: Key>(k: K) {
    let mut map: HandleMap<i32, K> = HandleMap::with_key();
    let mut pool: Pool<i32, K> = Pool::with_key();
    for i in 0..8 {
        map.insert(i);
        pool.insert(i);
    }
    let (map0, pool0) = (map.clone(), pool.clone());
    assert!(!map.contains(k) && map.get(k).is_none() && map.get_mut(k).is_none());
    assert!(map.get_index_of(k).is_none() && map.get_disjoint_mut([k]).is_none());
    assert_eq!(map.remove(k), None);
    assert_eq!(map.remove_many(&[k]), 0);
    assert!(catch_unwind(AssertUnwindSafe(|| map[k])).is_err());
    assert!(!pool.contains(k) && pool.get(k).is_none() && pool.get_mut(k).is_none());
    assert!(pool.get_disjoint_mut([k]).is_none());
    assert_eq!(pool.remove(k), None);
    assert!(catch_unwind(AssertUnwindSafe(|| pool[k])).is_err());
    assert!(
        map == map0 && pool == pool0,
        "{k:?}: lookups changed a container"
    );
    #[cfg(feature = "serde")]
    {
        let map: HandleMap<i32, K> =
            serde_json::from_str(&serde_json::to_string(&map).unwrap()).unwrap();
        let pool: Pool<i32, K> =
            serde_json::from_str(&serde_json::to_string(&pool).unwrap()).unwrap();
        assert!(map == map0 && pool == pool0);
        assert!(map.get(k).is_none() && pool.get(k).is_none());
    }
}

fn check_all<K: Key>(keys: &[K]) {
    for &k in keys {
        check_sparse_set(k);
        check_data_store(k);
    }
}

#[test]
fn forged_keys_are_refused() {
    check_all(&forged_keys());
    // A type id past the key type's, and an index past its slots.
    check_all(&[Narrow(3, 1, 2), Narrow(0, 7, 3), Narrow(1 << 20, 1, 0)]);
}

#[cfg(feature = "bytemuck")]
#[test]
fn handles_cast_from_bytes_are_refused() {
    check_all(&bad_handles());
    check_all(&bad_handle32s());
}

#[cfg(feature = "bytemuck")]
#[test]
fn handles_cast_from_bytes_resolve_nothing_in_maps_and_pools() {
    for k in bad_handles() {
        check_lookups(k);
    }
    for k in bad_handle32s() {
        check_lookups(k);
    }
}

#[cfg(feature = "bytemuck")]
#[test]
fn typed_handles_cast_from_bytes_are_refused() {
    dod::new_handle_type! {
        struct EnemyId;
        struct BoneId: Handle32;
    }
    let enemies: Vec<EnemyId> = bad_handles().into_iter().map(EnemyId::from).collect();
    let bones: Vec<BoneId> = bad_handle32s().into_iter().map(BoneId::from).collect();
    check_all(&enemies);
    check_all(&bones);
    enemies.iter().for_each(|&k| check_lookups(k));
    bones.iter().for_each(|&k| check_lookups(k));
}
