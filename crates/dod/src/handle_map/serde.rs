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
use super::{HandleMap, Slot, GEN_MASK, NONE, VACANT};
use crate::key::Key;

struct Items<'a, T>(&'a [u32], &'a [T]);

impl<T: Serialize> Serialize for Items<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().zip(self.1))
    }
}

struct FreeList<'a>(&'a [Slot], u32);

impl Serialize for FreeList<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (slots, head) = (self.0, self.1);
        let walk = core::iter::successors((head != NONE).then_some(head), |&i| {
            let next = slots[i as usize].idx;
            (next != NONE).then_some(next)
        });
        s.collect_seq(walk)
    }
}

impl<T: Serialize, K: Key> Serialize for HandleMap<T, K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let tags: Vec<u32> = self.slots.iter().map(|slot| slot.tag).collect();
        let mut st = s.serialize_struct("HandleMap", 7)?;
        st.serialize_field("type_id", &self.type_id)?;
        st.serialize_field("min_free", &self.min_free)?;
        st.serialize_field("first_gen", &self.first_gen)?;
        st.serialize_field("max_gen", &self.max_gen)?;
        st.serialize_field("slots", &tags)?;
        st.serialize_field("free", &FreeList(&self.slots, self.free_head))?;
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
        if r.type_id > K::MAX_TYPE_ID {
            return Err("type id does not fit the key type");
        }
        if r.first_gen == 0 || r.max_gen < r.first_gen {
            return Err("generation watermarks out of order");
        }
        if r.slots.len() as u64 > u64::from(K::MAX_SLOTS) {
            return Err("more slots than the key type can address");
        }
        let type_bits = u32::from(r.type_id) << 16;
        let mut slots = Vec::with_capacity(r.slots.len());
        for &tag in &r.slots {
            let generation = (tag & GEN_MASK) as u16;
            if tag & !(VACANT | GEN_MASK) != type_bits {
                return Err("slot tag with another type id or stray bits");
            }
            if generation < r.first_gen || generation > r.max_gen {
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
            if s.is_vacant() {
                return Err("item names a vacant slot");
            }
            if s.idx != NONE {
                return Err("two items name the same slot");
            }
            s.idx = d as u32;
            links.push(slot);
            values.push(value);
        }
        if slots.iter().any(|s| !s.is_vacant() && s.idx == NONE) {
            return Err("occupied slot without an item");
        }
        let (mut head, mut tail) = (NONE, NONE);
        for &i in &r.free {
            let s = *slots
                .get(i as usize)
                .ok_or("freelist names a slot out of range")?;
            if !s.is_vacant() || s.generation() == u16::MAX {
                return Err("freelist names an occupied or retired slot");
            }
            if s.idx != NONE || i == tail {
                return Err("freelist names a slot twice");
            }
            if tail == NONE {
                head = i;
            } else {
                slots[tail as usize].idx = i;
            }
            tail = i;
        }
        let reusable = slots
            .iter()
            .filter(|s| s.is_vacant() && s.generation() < u16::MAX)
            .count();
        if reusable != r.free.len() {
            return Err("vacant slot missing from the freelist");
        }
        Ok(HandleMap {
            values,
            links,
            slots,
            free_head: head,
            free_tail: tail,
            free_len: r.free.len() as u32,
            min_free: r.min_free,
            type_id: r.type_id,
            first_gen: r.first_gen,
            max_gen: r.max_gen,
            new_tag: u32::from(r.first_gen) | type_bits,
            order: OrderState::unknown(),
            _key: PhantomData,
        })
    }
}
