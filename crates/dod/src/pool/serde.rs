//! `serde` for [`Pool`]: `{ "type_id": u16, "slots": [[generation, item or null], ...] }`.
//!
//! Every slot is saved with its generation, holes and retired slots included, so that after a
//! round trip every key still names its item at the same index, and every stale key is still
//! stale. An occupied slot stores the generation of its item; a hole stores the generation its
//! next item will get, or 0 when the slot is retired. Reading checks the type id and the slot
//! count against the key type, so untrusted input gives an error, never a broken pool.

use alloc::vec::Vec;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use serde::de::{Deserialize, Deserializer, Error};
use serde::ser::{Serialize, SerializeSeq, SerializeStruct, Serializer};

use super::{Pool, Slot, GEN_MASK, VACANT};
use crate::bits::BitSet;
use crate::key::Key;

struct SlotsRef<'a, T, K: Key>(&'a Pool<T, K>);

impl<T: Serialize, K: Key> Serialize for SlotsRef<'_, T, K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let pool = self.0;
        let mut seq = s.serialize_seq(Some(pool.slots.len()))?;
        for (i, slot) in pool.slots.iter().enumerate() {
            let generation = (slot.tag & GEN_MASK) as u16;
            seq.serialize_element(&(generation, pool.get_at(i)))?;
        }
        seq.end()
    }
}

impl<T: Serialize, K: Key> Serialize for Pool<T, K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Pool", 2)?;
        st.serialize_field("type_id", &self.type_id)?;
        st.serialize_field("slots", &SlotsRef(self))?;
        st.end()
    }
}

#[derive(serde::Deserialize)]
#[serde(rename = "Pool", deny_unknown_fields)]
struct Raw<T> {
    type_id: u16,
    slots: Vec<(u16, Option<T>)>,
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
        if raw.slots.len() > K::MAX_SLOTS as usize {
            return Err(D::Error::custom(format_args!(
                "Pool has {} slots, more than the key type addresses ({})",
                raw.slots.len(),
                K::MAX_SLOTS
            )));
        }
        let n = raw.slots.len();
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
        for (i, (generation, value)) in raw.slots.into_iter().enumerate() {
            let generation = u32::from(generation);
            match value {
                Some(v) => {
                    if generation == 0 {
                        return Err(D::Error::custom(format_args!(
                            "Pool slot {i} holds an item at generation 0"
                        )));
                    }
                    pool.slots.push(Slot {
                        tag: generation | u32::from(raw.type_id) << 16,
                        value: MaybeUninit::new(v),
                    });
                    pool.alive.insert(i);
                    pool.len += 1;
                }
                None => {
                    if generation == 0 {
                        retired.insert(i);
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
