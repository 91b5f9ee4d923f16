//! `serde` support: a map is saved with its slots, generations and freelist order, so that after
//! a round trip every live handle is live, every stale handle is stale, and the next insertions
//! return the same handles they would have returned (deterministic replays).
//!
//! The format is a struct of: `type_id`, `min_free`, `first_gen`, `max_gen`, `slots` (each
//! slot's tag: `generation | type_id << 16`, plus `1 << 31` when vacant), `free` (the vacant
//! slots in freelist order) and `items` (`(slot, value)` pairs in dense order). Loading checks
//! every field against the invariants and reports the first violation as an error; it never
//! panics and never builds a broken map.

use alloc::vec::Vec;
use core::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer};
use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::sort::OrderState;
use super::{HandleMap, Slot, NONE};
use crate::key::Key;
use crate::slot::{self, FreeList, Tag};

struct Items<'a, T>(&'a [u32], &'a [T]);

impl<T: Serialize> Serialize for Items<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().zip(self.1))
    }
}

struct Free<'a>(&'a FreeList, &'a [Slot]);

impl Serialize for Free<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter(self.1))
    }
}

impl<T: Serialize, K: Key> Serialize for HandleMap<T, K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let tags: Vec<u32> = self.slots.iter().map(|slot| slot.tag.to_bits()).collect();
        let mut st = s.serialize_struct("HandleMap", 7)?;
        st.serialize_field("type_id", &self.type_id)?;
        st.serialize_field("min_free", &self.free.min_free())?;
        st.serialize_field("first_gen", &self.first_gen)?;
        st.serialize_field("max_gen", &self.max_gen)?;
        st.serialize_field("slots", &tags)?;
        st.serialize_field("free", &Free(&self.free, &self.slots))?;
        st.serialize_field("items", &Items(&self.links, &self.values))?;
        st.end()
    }
}

#[derive(serde::Deserialize)]
#[serde(rename = "HandleMap", deny_unknown_fields)]
struct Repr<T> {
    type_id: u16,
    min_free: u32,
    first_gen: u16,
    max_gen: u16,
    slots: Vec<u32>,
    free: Vec<u32>,
    items: Vec<(u32, T)>,
}

impl<'de, T: Deserialize<'de>, K: Key> Deserialize<'de> for HandleMap<T, K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let repr = Repr::<T>::deserialize(d)?;
        HandleMap::from_repr(repr).map_err(de::Error::custom)
    }
}

impl<T, K: Key> HandleMap<T, K> {
    fn from_repr(r: Repr<T>) -> Result<Self, &'static str> {
        if r.type_id > slot::max_type_id::<K>() {
            return Err("type id does not fit the key type");
        }
        if r.first_gen == 0 || r.max_gen < r.first_gen {
            return Err("generation watermarks out of order");
        }
        if r.slots.len() as u64 > u64::from(K::MAX_SLOTS) {
            return Err("more slots than the key type can address");
        }
        let mut slots = Vec::with_capacity(r.slots.len());
        for &bits in &r.slots {
            let tag = Tag::from_bits(bits);
            if tag.type_id() != r.type_id {
                return Err("slot tag with another type id");
            }
            if tag.generation() < r.first_gen || tag.generation() > r.max_gen {
                return Err("slot generation outside the watermarks");
            }
            slots.push(Slot { tag, idx: NONE });
        }
        let mut values = Vec::with_capacity(r.items.len());
        let mut links = Vec::with_capacity(r.items.len());
        for (d, (slot, value)) in r.items.into_iter().enumerate() {
            let s = slots
                .get_mut(slot as usize)
                .ok_or("item names a slot out of range")?;
            if s.tag.is_vacant() {
                return Err("item names a vacant slot");
            }
            if s.idx != NONE {
                return Err("two items name the same slot");
            }
            s.idx = d as u32;
            links.push(slot);
            values.push(value);
        }
        if slots.iter().any(|s| !s.tag.is_vacant() && s.idx == NONE) {
            return Err("occupied slot without an item");
        }
        let mut free = FreeList::new();
        free.set_min_free(r.min_free);
        for &i in &r.free {
            let s = *slots
                .get(i as usize)
                .ok_or("freelist names a slot out of range")?;
            if !s.tag.is_vacant() || s.tag.is_retired() {
                return Err("freelist names an occupied or retired slot");
            }
            // A linked slot points at the next one, except the last, which is the tail.
            if s.idx != NONE || i == free.tail() {
                return Err("freelist names a slot twice");
            }
            free.push_back(slots.as_mut_slice(), i);
        }
        let reusable = slots
            .iter()
            .filter(|s| s.tag.is_vacant() && !s.tag.is_retired())
            .count();
        if reusable != r.free.len() {
            return Err("vacant slot missing from the freelist");
        }
        Ok(HandleMap {
            values,
            links,
            slots,
            free,
            type_id: r.type_id,
            first_gen: r.first_gen,
            max_gen: r.max_gen,
            order: OrderState::unknown(),
            _key: PhantomData,
        })
    }
}
