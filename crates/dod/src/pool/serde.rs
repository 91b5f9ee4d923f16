//! `serde` for [`Pool`]:
//! `{ "type_id": u16, "generations": [u16, ...], "items": [[index, item], ...] }`.
//!
//! Every slot is saved with its generation, holes and retired slots included, so that after a
//! round trip every key still names its item at the same index, and every stale key is still
//! stale. An occupied slot stores the generation of its item; a hole stores the generation its
//! next item will get, or 0 when the slot is retired. Items are listed with their slot index,
//! in slot order, so an item whose own form is `null` (a `()`, a `None`) is never mistaken for
//! a hole. Reading checks the type id, the slot count, the indices and the generations
//! against the key type, so untrusted input gives an error, never a broken pool.

use alloc::vec::Vec;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use serde::de::{Deserialize, Deserializer, Error};
use serde::ser::{Serialize, SerializeSeq, SerializeStruct, Serializer};

use super::{Pool, Slot, GEN_MASK, VACANT};
use crate::bits::BitSet;
use crate::key::Key;

struct Generations<'a, T, K: Key>(&'a Pool<T, K>);

impl<T, K: Key> Serialize for Generations<'_, T, K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let slots = &self.0.slots;
        let mut seq = s.serialize_seq(Some(slots.len()))?;
        for slot in slots {
            seq.serialize_element(&((slot.tag & GEN_MASK) as u16))?;
        }
        seq.end()
    }
}

struct Items<'a, T, K: Key>(&'a Pool<T, K>);

impl<T: Serialize, K: Key> Serialize for Items<'_, T, K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let pool = self.0;
        let mut seq = s.serialize_seq(Some(pool.len))?;
        for i in pool.alive.iter() {
            if let Some(v) = pool.get_at(i) {
                seq.serialize_element(&(i, v))?;
            }
        }
        seq.end()
    }
}

impl<T: Serialize, K: Key> Serialize for Pool<T, K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Pool", 3)?;
        st.serialize_field("type_id", &self.type_id)?;
        st.serialize_field("generations", &Generations(self))?;
        st.serialize_field("items", &Items(self))?;
        st.end()
    }
}

#[derive(serde::Deserialize)]
#[serde(rename = "Pool", deny_unknown_fields)]
struct Raw<T> {
    type_id: u16,
    generations: Vec<u16>,
    items: Vec<(u32, T)>,
}

impl<'de, T: Deserialize<'de>, K: Key> Deserialize<'de> for Pool<T, K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Raw::<T>::deserialize(d)?;
        if raw.type_id > K::MAX_TYPE_ID {
            return Err(D::Error::custom(format_args!(
                "Pool type id {} does not fit the key type (largest: {})",
                raw.type_id,
                K::MAX_TYPE_ID
            )));
        }
        let n = raw.generations.len();
        if n > K::MAX_SLOTS as usize {
            return Err(D::Error::custom(format_args!(
                "Pool has {n} slots, more than the key type addresses ({})",
                K::MAX_SLOTS
            )));
        }
        // Check every index before any item is placed, so an error drops the items normally.
        let mut next = 0usize;
        for &(i, _) in &raw.items {
            let i = i as usize;
            if i < next || i >= n {
                return Err(D::Error::custom(format_args!(
                    "Pool item at slot {i}: indices must increase and be below the slot \
                     count {n}"
                )));
            }
            if raw.generations[i] == 0 {
                return Err(D::Error::custom(format_args!(
                    "Pool slot {i} holds an item at generation 0"
                )));
            }
            next = i + 1;
        }
        let mut pool = Pool::<T, K> {
            slots: Vec::with_capacity(n),
            alive: BitSet::with_universe(n),
            blocked: None,
            len: 0,
            first_hole: 0,
            type_id: raw.type_id,
            _key: PhantomData,
        };
        let mut retired = BitSet::new();
        let mut items = raw.items.into_iter().peekable();
        for (i, &generation) in raw.generations.iter().enumerate() {
            let generation = u32::from(generation);
            match items.next_if(|&(at, _)| at as usize == i) {
                Some((_, v)) => {
                    pool.slots.push(Slot {
                        tag: generation | u32::from(raw.type_id) << 16,
                        value: MaybeUninit::new(v),
                    });
                    pool.alive.insert(i as u32);
                    pool.len += 1;
                }
                None => {
                    if generation == 0 {
                        retired.insert(i as u32);
                    }
                    pool.slots.push(Slot {
                        tag: generation | VACANT,
                        value: MaybeUninit::uninit(),
                    });
                }
            }
        }
        if !retired.is_empty() {
            let mut blocked = pool.alive.clone();
            blocked.or_with(&retired);
            pool.blocked = Some(blocked);
        }
        Ok(pool)
    }
}
