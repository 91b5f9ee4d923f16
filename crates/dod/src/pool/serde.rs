//! `serde` for [`Pool`]: a pool is saved with its slots, generations, reuse policy and
//! freelist order, so that after a round trip every key still names its item at the same
//! index, every stale key is still stale, and the next insertions return the same keys they
//! would have returned (deterministic replays).
//!
//! The format is a struct of: `type_id`, `reuse` (`"Fifo"` or `"LowestFirst"`), `min_free`,
//! `slots` (each slot's tag, as [`crate::slot`] lays it out: `generation | type_id << 16`,
//! plus `1 << 31` when vacant; a vacant slot keeps the generation of its last item),
//! `free` (under `Fifo`, the holes in freelist order; empty under `LowestFirst`) and `items`
//! (`[index, item]` pairs in slot order, so an item whose own form is `null`, such as `()` or
//! `None`, is never mistaken for a hole). Loading checks every field against the invariants
//! and reports the first violation as an error: untrusted input never panics and never
//! builds a broken pool.

use alloc::vec::Vec;
use core::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer};
use serde::ser::{Serialize, SerializeSeq, SerializeStruct, Serializer};

use super::{Entry, Pool, Reuse};
use crate::bits::BitSet;
use crate::key::Key;
use crate::slot::{self, FreeList, Tag};

struct Tags<'a, T>(&'a [Entry<T>]);

impl<T> Serialize for Tags<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|e| e.tag().to_bits()))
    }
}

struct Free<'a, T>(&'a FreeList, &'a [Entry<T>]);

impl<T> Serialize for Free<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter(self.1))
    }
}

struct Items<'a, T, K: Key>(&'a Pool<T, K>);

impl<T: Serialize, K: Key> Serialize for Items<'_, T, K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let pool = self.0;
        // The length first, for formats that write it before the elements.
        let mut seq = s.serialize_seq(Some(pool.len()))?;
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
        let mut st = s.serialize_struct("Pool", 6)?;
        st.serialize_field("type_id", &self.type_id)?;
        st.serialize_field("reuse", &self.reuse)?;
        st.serialize_field("min_free", &self.free.min_free())?;
        st.serialize_field("slots", &Tags(&self.slots))?;
        st.serialize_field("free", &Free(&self.free, &self.slots))?;
        st.serialize_field("items", &Items(self))?;
        st.end()
    }
}

#[derive(serde::Deserialize)]
#[serde(rename = "Pool", deny_unknown_fields)]
struct Repr<T> {
    type_id: u16,
    reuse: Reuse,
    min_free: u32,
    slots: Vec<u32>,
    free: Vec<u32>,
    items: Vec<(u32, T)>,
}

impl<'de, T: Deserialize<'de>, K: Key> Deserialize<'de> for Pool<T, K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let repr = Repr::<T>::deserialize(d)?;
        Pool::from_repr(repr).map_err(de::Error::custom)
    }
}

impl<T, K: Key> Pool<T, K> {
    fn from_repr(r: Repr<T>) -> Result<Self, &'static str> {
        if r.type_id > slot::max_type_id::<K>() {
            return Err("type id does not fit the key type");
        }
        let n = r.slots.len();
        if n as u64 > u64::from(K::MAX_SLOTS) {
            return Err("more slots than the key type can address");
        }
        let mut tags = Vec::with_capacity(n);
        for &bits in &r.slots {
            let tag = Tag::from_bits(bits);
            if tag.type_id() != r.type_id {
                return Err("slot tag with another type id");
            }
            if !tag.is_vacant() && tag.generation() == 0 {
                return Err("occupied slot at generation 0");
            }
            tags.push(tag);
        }
        // Check the items against the tags before any is placed: an error drops them with
        // `r.items`.
        let mut next = 0usize;
        for &(i, _) in &r.items {
            let i = i as usize;
            if i < next || i >= n {
                return Err("item indices must increase and be below the slot count");
            }
            if tags[i].is_vacant() {
                return Err("item names a vacant slot");
            }
            next = i + 1;
        }
        let occupied = tags.iter().filter(|t| !t.is_vacant()).count();
        if occupied != r.items.len() {
            return Err("occupied slot without an item");
        }
        let mut pool = Pool::<T, K> {
            slots: Vec::with_capacity(n),
            alive: BitSet::with_universe(n),
            vacant: 0,
            reuse: Reuse::Fifo,
            free: FreeList::new(),
            blocked: None,
            first_hole: usize::MAX,
            type_id: r.type_id,
            append_below: super::append_below::<K>(Reuse::Fifo),
            _key: PhantomData,
        };
        let mut items = r.items.into_iter();
        for (i, &tag) in tags.iter().enumerate() {
            if tag.is_vacant() {
                pool.slots.push(Entry::vacant(tag));
                pool.vacant += 1;
            } else {
                let (_, item) = items.next().ok_or("occupied slot without an item")?;
                pool.slots.push(Entry::occupied(tag, item));
                pool.alive.insert(i as u32);
            }
        }
        pool.free.set_min_free(r.min_free);
        match r.reuse {
            Reuse::Fifo => {
                for &i in &r.free {
                    let tag = *tags
                        .get(i as usize)
                        .ok_or("freelist names a slot out of range")?;
                    if !tag.is_vacant() || tag.is_retired() {
                        return Err("freelist names an occupied or retired slot");
                    }
                    // A linked slot points at the next one, except the last, which is the
                    // tail; a slot that is neither was not linked yet.
                    if pool.slots[i as usize].next() != slot::NO_SLOT || i == pool.free.tail() {
                        return Err("freelist names a slot twice");
                    }
                    pool.free.push_back(pool.slots.as_mut_slice(), i);
                }
                let reusable = tags
                    .iter()
                    .filter(|t| t.is_vacant() && !t.is_retired())
                    .count();
                if reusable != r.free.len() {
                    return Err("hole missing from the freelist");
                }
            }
            Reuse::LowestFirst => {
                if !r.free.is_empty() {
                    return Err("a freelist for a LowestFirst pool");
                }
                pool.reuse = Reuse::LowestFirst;
                pool.append_below = super::append_below::<K>(Reuse::LowestFirst);
                pool.first_hole = 0;
                pool.blocked = pool.retired_or_alive();
            }
        }
        Ok(pool)
    }
}
