//! [`HandleMap`]: dense items addressed by generational handles.
//!
//! # Layout
//!
//! Three arrays, after the griffin `handle_map`:
//!
//! - `values: Vec<T>`, the *dense* items, packed with no holes. Systems iterate this slice.
//! - `links: Vec<u32>`, parallel to `values`: the slot of each item (the dense → sparse
//!   back-link, the seed's "meta" set), so that removing by swap-and-pop is O(1).
//! - `slots: Vec<Slot>`, the *sparse* side that handles index. An occupied slot holds the dense
//!   position of its item; a vacant slot holds the next vacant slot, forming an embedded FIFO
//!   freelist from `free_head` to `free_tail`.
//!
//! # Invariants
//!
//! 1. `values.len() == links.len()`, and for every dense position `d`,
//!    `slots[links[d]]` is occupied with `slots[links[d]].idx == d`. Every occupied slot is
//!    reached this way exactly once.
//! 2. A slot's `tag` is `generation | type_id << 16`, with `VACANT` (bit 31) set when the slot is
//!    vacant. A handle's [`Key::tag`] never has that bit, so a single comparison checks
//!    occupancy, generation and type id at once.
//! 3. The freelist links every vacant slot whose generation is below `u16::MAX`, each once, in
//!    the order the slots were vacated; `free_len` counts them. A vacant slot at generation
//!    `u16::MAX` is *retired*: it is never linked and never reused.
//! 4. Every generation ever handed out is at most `max_gen`; a slot pushed since the last
//!    [`HandleMap::reset`] started at `first_gen`, and generations only grow.
//!
//! A handle resolves only if its slot is occupied at the handle's generation. Generations only
//! grow and a slot is retired before its generation could wrap, so a handle, once stale, stays
//! stale forever.

use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;
use core::ops::{Index, IndexMut};

use crate::error::CapacityError;
use crate::key::{Handle, Key};

mod iter;
#[cfg(feature = "rayon")]
mod rayon;
#[cfg(feature = "serde")]
mod serde;
mod sort;

pub use iter::{Drain, IntoIter, Iter, IterMut};

/// Marks a vacant slot's tag; never set in a handle's tag.
const VACANT: u32 = 1 << 31;
/// The generation bits of a tag.
const GEN_MASK: u32 = 0xFFFF;
/// End of the freelist.
const NONE: u32 = u32::MAX;
/// `reset` raises the generation watermark only below this, so that a slot made after a reset
/// is always good for at least 32 768 uses.
const RESET_WATERMARK_LIMIT: u16 = 1 << 15;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    /// `generation | type_id << 16`, plus [`VACANT`] when vacant.
    tag: u32,
    /// Occupied: the dense position of the item. Vacant: the next vacant slot, or [`NONE`].
    idx: u32,
}

impl Slot {
    #[inline]
    fn is_vacant(self) -> bool {
        self.tag & VACANT != 0
    }

    #[inline]
    fn generation(self) -> u16 {
        (self.tag & GEN_MASK) as u16
    }
}

/// A map from generational handles to values stored densely, for iteration at the speed of a
/// `Vec` and O(1) insertion, lookup and removal through handles.
///
/// `insert` returns a handle ([`Handle`] by default, or any [`Key`], such as
/// [`Handle32`](crate::Handle32) or a type from [`new_handle_type!`](crate::new_handle_type)).
/// The values live packed in one slice ([`values`](HandleMap::values)), which systems walk
/// directly; other systems keep handles and look up one value at a time. Removing a value moves
/// the last value into its place (swap-and-pop), so the dense order is not insertion order;
/// [`sort_by`](HandleMap::sort_by) and the incremental [`defragment`](HandleMap::defragment)
/// restore an order of your choosing. Handles stay valid through every move.
///
/// A handle whose value was removed is *stale*: [`get`](HandleMap::get) answers `None`, also
/// for handles of another map (a different type id) and forged ones, and never another value.
///
/// Memory: `size_of::<T>() + 4` bytes per value, plus 8 bytes per slot ever used.
///
/// # Example
///
/// ```
/// use dod::HandleMap;
///
/// let mut map = HandleMap::new();
/// let a = map.insert("apple");
/// let b = map.insert("banana");
/// assert_eq!(map[a], "apple");
///
/// assert_eq!(map.remove(a), Some("apple"));
/// assert_eq!(map.get(a), None); // stale
/// assert_eq!(map.values(), ["banana"]);
/// assert_eq!(map[b], "banana");
/// ```
pub struct HandleMap<T, K: Key = Handle> {
    values: Vec<T>,
    links: Vec<u32>,
    slots: Vec<Slot>,
    free_head: u32,
    free_tail: u32,
    free_len: u32,
    min_free: u32,
    type_id: u16,
    first_gen: u16,
    max_gen: u16,
    /// The tag of a slot pushed now: `first_gen | type_id << 16`.
    new_tag: u32,
    order: sort::OrderState,
    _key: PhantomData<fn(K) -> K>,
}

impl<T> HandleMap<T, Handle> {
    /// An empty map with [`Handle`] keys. Allocates nothing.
    ///
    /// ```
    /// let map: dod::HandleMap<u32> = dod::HandleMap::new();
    /// assert!(map.is_empty());
    /// ```
    pub const fn new() -> Self {
        Self::new_in_type(0)
    }

    /// An empty map with room for `capacity` values before it reallocates.
    ///
    /// ```
    /// let map = dod::HandleMap::<u8>::with_capacity(100);
    /// assert!(map.capacity() >= 100);
    /// ```
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_capacity_and_key(capacity)
    }

    /// An empty map that stamps `type_id` into every handle it hands out and rejects handles
    /// that carry another type id (the handles of other maps).
    ///
    /// # Panics
    ///
    /// If `type_id` does not fit the key type: more than 15 bits for [`Handle`]; any non-zero
    /// id for [`Handle32`](crate::Handle32), which has no type id field (see
    /// [`with_type_id_and_key`](HandleMap::with_type_id_and_key)).
    ///
    /// ```
    /// use dod::HandleMap;
    /// let mut apples = HandleMap::with_type_id(1);
    /// let mut oranges = HandleMap::with_type_id(2);
    /// let apple = apples.insert("apple");
    /// let orange = oranges.insert("orange");
    /// assert_eq!(apple.index(), orange.index());
    /// assert_eq!(oranges.get(apple), None); // another map's handle
    /// ```
    #[track_caller]
    pub fn with_type_id(type_id: u16) -> Self {
        Self::with_type_id_and_key(type_id)
    }
}

impl<T, K: Key> HandleMap<T, K> {
    const fn new_in_type(type_id: u16) -> Self {
        HandleMap {
            values: Vec::new(),
            links: Vec::new(),
            slots: Vec::new(),
            free_head: NONE,
            free_tail: NONE,
            free_len: 0,
            min_free: 0,
            type_id,
            first_gen: 1,
            max_gen: 1,
            new_tag: 1 | (type_id as u32) << 16,
            order: sort::OrderState::new(),
            _key: PhantomData,
        }
    }

    /// An empty map with any key type.
    ///
    /// ```
    /// use dod::{HandleMap, Handle32};
    /// let mut map = HandleMap::<f32, Handle32>::with_key();
    /// let h: Handle32 = map.insert(1.0);
    /// assert_eq!(map[h], 1.0);
    /// ```
    pub const fn with_key() -> Self {
        Self::new_in_type(0)
    }

    /// An empty map with any key type and room for `capacity` values.
    ///
    /// ```
    /// use dod::{HandleMap, Handle32};
    /// let map = HandleMap::<u8, Handle32>::with_capacity_and_key(10);
    /// assert!(map.capacity() >= 10);
    /// ```
    pub fn with_capacity_and_key(capacity: usize) -> Self {
        let mut map = Self::new_in_type(0);
        map.reserve(capacity);
        map
    }

    /// An empty map with any key type that stamps `type_id` into its handles.
    ///
    /// # Panics
    ///
    /// If `type_id` is above [`K::MAX_TYPE_ID`](Key::MAX_TYPE_ID).
    ///
    /// ```
    /// use dod::{new_handle_type, HandleMap};
    /// new_handle_type! { struct Apple; }
    /// let mut map = HandleMap::<&str, Apple>::with_type_id_and_key(3);
    /// let h = map.insert("granny smith");
    /// assert_eq!(dod::Key::type_id(h), 3);
    /// ```
    #[track_caller]
    pub fn with_type_id_and_key(type_id: u16) -> Self {
        let largest = K::MAX_TYPE_ID.min(Handle::MAX_TYPE_ID);
        assert!(
            type_id <= largest,
            "type id {type_id} does not fit the key type (largest: {largest})"
        );
        Self::new_in_type(type_id)
    }

    /// Keeps at least `min_free` vacant slots before reusing one (builder form of
    /// [`set_min_free`](HandleMap::set_min_free)).
    ///
    /// ```
    /// let mut map = dod::HandleMap::new().with_min_free(2);
    /// let a = map.insert(1);
    /// map.remove(a);
    /// let b = map.insert(2);
    /// assert_ne!(a.index(), b.index()); // the vacant slot is kept back
    /// ```
    pub fn with_min_free(mut self, min_free: u32) -> Self {
        self.set_min_free(min_free);
        self
    }

    /// Keeps at least `min_free` vacant slots in the FIFO freelist before one is reused.
    ///
    /// With a FIFO freelist of at least N vacant slots, a freed slot is reused no sooner than
    /// N insertions later. In Bitsquid's design this guarded against generations wrapping
    /// around; here stale handles are refused whatever the setting (a slot retires instead of
    /// wrapping), so it only sets the reuse order: a freed index stays unused for longer,
    /// which helps when indices are logged or sent over the network. When the key type cannot
    /// address another slot, vacant slots are reused anyway rather than failing.
    ///
    /// ```
    /// let mut map = dod::HandleMap::<u32>::new();
    /// map.set_min_free(64);
    /// assert_eq!(map.min_free(), 64);
    /// ```
    pub fn set_min_free(&mut self, min_free: u32) {
        self.min_free = min_free;
    }

    /// How many vacant slots are kept back before one is reused.
    ///
    /// ```
    /// assert_eq!(dod::HandleMap::<u8>::new().min_free(), 0);
    /// ```
    pub fn min_free(&self) -> u32 {
        self.min_free
    }

    /// The type id stamped into this map's handles.
    ///
    /// ```
    /// assert_eq!(dod::HandleMap::<u8>::with_type_id(9).type_id(), 9);
    /// ```
    pub fn type_id(&self) -> u16 {
        self.type_id
    }

    /// The number of values. O(1).
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// map.insert('x');
    /// assert_eq!(map.len(), 1);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the map holds no value. O(1).
    ///
    /// ```
    /// assert!(dod::HandleMap::<u8>::new().is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// How many values the map holds without reallocating its dense arrays.
    ///
    /// ```
    /// let map = dod::HandleMap::<u64>::with_capacity(10);
    /// assert!(map.capacity() >= 10);
    /// ```
    pub fn capacity(&self) -> usize {
        self.values.capacity().min(self.links.capacity())
    }

    /// Bytes held on the heap: per allocated value `size_of::<T>()` plus a 4-byte back-link,
    /// and 8 bytes per slot (live, vacant or retired). O(1).
    ///
    /// ```
    /// let mut map = dod::HandleMap::<u64>::with_capacity(4);
    /// map.insert(7);
    /// map.shrink_to_fit();
    /// assert_eq!(map.memory_usage(), 8 + 4 + 8);
    /// ```
    pub fn memory_usage(&self) -> usize {
        self.values.capacity() * core::mem::size_of::<T>()
            + self.links.capacity() * core::mem::size_of::<u32>()
            + self.slots.capacity() * core::mem::size_of::<Slot>()
    }

    /// The number of slots ever used: live, vacant and retired. Handles index this range.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let h = map.insert(1);
    /// map.remove(h);
    /// assert_eq!((map.len(), map.slot_count()), (0, 1));
    /// ```
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// Reserves room for at least `additional` more values. O(len) when it reallocates.
    ///
    /// ```
    /// let mut map = dod::HandleMap::<u8>::new();
    /// map.reserve(50);
    /// assert!(map.capacity() >= 50);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.values.reserve(additional);
        self.links.reserve(additional);
        let vacant = self.free_len as usize;
        self.slots.reserve(additional.saturating_sub(vacant));
    }

    /// Releases unused capacity. The slots stay: each remembers its generation, which is what
    /// keeps every old handle stale, so no handle ever comes back to life.
    ///
    /// ```
    /// let mut map = dod::HandleMap::with_capacity(100);
    /// let h = map.insert(1);
    /// map.remove(h);
    /// map.shrink_to_fit();
    /// assert_eq!(map.get(h), None);
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.values.shrink_to_fit();
        self.links.shrink_to_fit();
        self.slots.shrink_to_fit();
        self.order.release();
    }

    #[inline]
    fn type_bits(&self) -> u32 {
        u32::from(self.type_id) << 16
    }

    #[inline]
    fn key_for(&self, slot: u32) -> K {
        iter::key_of(&self.slots, slot)
    }

    /// Takes the oldest vacant slot for a value about to be pushed at dense position `dense`,
    /// and returns it with its new tag. The freelist must not be empty.
    #[inline]
    fn reuse_slot(&mut self, dense: u32) -> (u32, u32) {
        let i = self.free_head;
        let slot = &mut self.slots[i as usize];
        self.free_head = slot.idx;
        self.free_len -= 1;
        if self.free_len == 0 {
            self.free_tail = NONE;
        }
        // Linked slots are below u16::MAX (invariant 3), so the generation does not wrap, and
        // the tag loses its VACANT bit.
        let tag = (slot.tag & !VACANT) + 1;
        slot.tag = tag;
        slot.idx = dense;
        self.max_gen = self.max_gen.max(tag as u16);
        (i, tag)
    }

    /// Finds a slot for a value about to be pushed at dense position `values.len()` and marks
    /// it occupied: the oldest vacant slot beyond the `min_free` reserve, else a new slot, else
    /// (the key type cannot address another) any vacant slot. Returns the slot and its tag.
    #[inline]
    fn claim_slot(&mut self) -> Option<(u32, u32)> {
        let dense = self.values.len() as u32;
        if self.free_len > self.min_free {
            Some(self.reuse_slot(dense))
        } else if (self.slots.len() as u64) < u64::from(K::MAX_SLOTS) {
            let i = self.slots.len() as u32;
            // A new slot starts at `first_gen`, which `max_gen` already covers (invariant 4).
            let tag = self.new_tag;
            self.slots.push(Slot { tag, idx: dense });
            Some((i, tag))
        } else if self.free_len > 0 {
            Some(self.reuse_slot(dense))
        } else {
            None
        }
    }

    /// Vacates an occupied slot: its generation moves on for the next use, and it joins the
    /// back of the freelist, or is retired if its generation is spent.
    #[inline]
    fn vacate_slot(&mut self, i: u32) {
        let slot = &mut self.slots[i as usize];
        slot.tag |= VACANT;
        slot.idx = NONE;
        if slot.generation() == u16::MAX {
            return; // retired: never linked, never reused
        }
        if self.free_tail == NONE {
            self.free_head = i;
        } else {
            self.slots[self.free_tail as usize].idx = i;
        }
        self.free_tail = i;
        self.free_len += 1;
    }

    /// Inserts a value and returns its handle. O(1) amortised.
    ///
    /// The value goes to the end of the dense slice. The handle's slot is the oldest vacant
    /// slot (FIFO), or a new one.
    ///
    /// # Panics
    ///
    /// If the key type cannot address another slot (65 535 slots for
    /// [`Handle32`](crate::Handle32)); [`try_insert`](HandleMap::try_insert) returns the value
    /// instead.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let h = map.insert(42);
    /// assert_eq!(map[h], 42);
    /// ```
    #[inline]
    #[track_caller]
    pub fn insert(&mut self, value: T) -> K {
        match self.try_insert(value) {
            Ok(k) => k,
            Err(_) => capacity_panic::<K>(),
        }
    }

    /// Inserts a value, or gives it back if the key type cannot address another slot. O(1)
    /// amortised.
    ///
    /// ```
    /// use dod::{HandleMap, Handle32};
    /// let mut map = HandleMap::<u8, Handle32>::with_key();
    /// for _ in 0..65_535 {
    ///     map.try_insert(0).unwrap();
    /// }
    /// let err = map.try_insert(7).unwrap_err();
    /// assert_eq!(err.into_inner(), 7);
    /// ```
    #[inline]
    pub fn try_insert(&mut self, value: T) -> Result<K, CapacityError<T>> {
        let Some((slot, tag)) = self.claim_slot() else {
            return Err(CapacityError::new(value));
        };
        self.values.push(value);
        self.links.push(slot);
        self.order.changed();
        Ok(K::from_index_tag(slot, tag))
    }

    /// Inserts the value that `f` makes from its own handle, so a value can store the handle
    /// that names it. O(1) amortised.
    ///
    /// # Panics
    ///
    /// If the key type cannot address another slot; `f` is not called then.
    ///
    /// ```
    /// use dod::{HandleMap, Handle};
    /// struct Node { me: Handle }
    /// let mut map = HandleMap::new();
    /// let h = map.insert_with_handle(|me| Node { me });
    /// assert_eq!(map[h].me, h);
    /// ```
    #[track_caller]
    pub fn insert_with_handle(&mut self, f: impl FnOnce(K) -> T) -> K {
        let Some((slot, tag)) = self.claim_slot() else {
            capacity_panic::<K>()
        };
        let key = K::from_index_tag(slot, tag);
        // If `f` panics, give the slot back so the map stays consistent.
        struct Undo<'a, T, K: Key> {
            map: &'a mut HandleMap<T, K>,
            slot: u32,
            armed: bool,
        }
        impl<T, K: Key> Drop for Undo<'_, T, K> {
            fn drop(&mut self) {
                if self.armed {
                    self.map.vacate_slot(self.slot);
                }
            }
        }
        let mut undo = Undo {
            map: self,
            slot,
            armed: true,
        };
        let value = f(key);
        undo.armed = false;
        undo.map.values.push(value);
        undo.map.links.push(slot);
        undo.map.order.changed();
        key
    }

    /// Inserts every value of `values`, reserving room once, and returns their handles in
    /// order (the seed's batch emplace). O(n) amortised.
    ///
    /// # Panics
    ///
    /// If the key type runs out of slots; the values inserted before stay.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let hs = map.insert_many([1, 2, 3]);
    /// assert_eq!(hs.iter().map(|&h| map[h]).collect::<Vec<_>>(), [1, 2, 3]);
    /// ```
    #[track_caller]
    pub fn insert_many(&mut self, values: impl IntoIterator<Item = T>) -> Vec<K> {
        let iter = values.into_iter();
        let (lower, _) = iter.size_hint();
        self.reserve(lower);
        let mut keys = Vec::with_capacity(lower);
        for v in iter {
            keys.push(self.insert(v));
        }
        keys
    }

    /// Where the slot of `key` says its value is, if the key is live.
    #[inline]
    fn dense_of(&self, key: K) -> Option<usize> {
        let slot = self.slots.get(key.index() as usize)?;
        // Occupied slots never carry VACANT. Clearing it from the key's tag means a key that
        // has it (a forged bit pattern, or a `Key` that strays past 31 bits) can never match a
        // vacant slot: one comparison checks occupancy, generation and type id.
        if slot.tag == key.tag() & !VACANT {
            Some(slot.idx as usize)
        } else {
            None
        }
    }

    /// Whether `key` names a value of this map. O(1).
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let h = map.insert(());
    /// assert!(map.contains(h));
    /// map.remove(h);
    /// assert!(!map.contains(h));
    /// ```
    #[inline]
    pub fn contains(&self, key: K) -> bool {
        self.dense_of(key).is_some()
    }

    /// The value of `key`, or `None` if the key is stale, of another map, or forged. O(1).
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let h = map.insert(5);
    /// assert_eq!(map.get(h), Some(&5));
    /// ```
    #[inline]
    pub fn get(&self, key: K) -> Option<&T> {
        self.values.get(self.dense_of(key)?)
    }

    /// The value of `key`, mutably, or `None` if the key is not live. O(1).
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let h = map.insert(5);
    /// *map.get_mut(h).unwrap() += 1;
    /// assert_eq!(map[h], 6);
    /// ```
    #[inline]
    pub fn get_mut(&mut self, key: K) -> Option<&mut T> {
        let d = self.dense_of(key)?;
        self.order.touched();
        self.values.get_mut(d)
    }

    /// Mutable references to the values of `N` distinct live keys at once, or `None` if a key
    /// is not live or two keys are equal. O(N²) for the distinctness check.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let a = map.insert(1);
    /// let b = map.insert(2);
    /// if let Some([x, y]) = map.get_disjoint_mut([a, b]) {
    ///     core::mem::swap(x, y);
    /// }
    /// assert_eq!((map[a], map[b]), (2, 1));
    /// assert!(map.get_disjoint_mut([a, a]).is_none());
    /// ```
    pub fn get_disjoint_mut<const N: usize>(&mut self, keys: [K; N]) -> Option<[&mut T; N]> {
        let mut dense = [0usize; N];
        for (d, k) in dense.iter_mut().zip(keys) {
            *d = self.dense_of(k)?;
        }
        self.order.touched();
        self.values.get_disjoint_mut(dense).ok()
    }

    /// The dense position of the value of `key`: where it is in [`values`](HandleMap::values)
    /// right now (the seed's `getInnerIndex`). Positions change when values are removed or
    /// sorted; handles do not. O(1).
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let a = map.insert('a');
    /// let b = map.insert('b');
    /// map.remove(a); // 'b' moves into the hole
    /// assert_eq!(map.index_of(b), Some(0));
    /// assert_eq!(map.index_of(a), None);
    /// ```
    #[inline]
    pub fn index_of(&self, key: K) -> Option<usize> {
        self.dense_of(key)
    }

    /// The handle of the value at dense position `index`, or `None` past the end. O(1).
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let h = map.insert(3.5);
    /// assert_eq!(map.handle_at(0), Some(h));
    /// assert_eq!(map.handle_at(1), None);
    /// ```
    #[inline]
    pub fn handle_at(&self, index: usize) -> Option<K> {
        self.links.get(index).map(|&s| self.key_for(s))
    }

    /// Removes the value of `key` and returns it, or `None` if the key is not live. O(1).
    ///
    /// Swap-and-pop: **the last value of the dense slice moves into the hole** (its handle
    /// stays valid). Every handle of the removed value is stale from now on.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let a = map.insert(1);
    /// let b = map.insert(2);
    /// let c = map.insert(3);
    /// assert_eq!(map.remove(a), Some(1));
    /// assert_eq!(map.values(), [3, 2]); // the last value moved to the front
    /// assert_eq!(map.remove(a), None);
    /// assert_eq!((map[b], map[c]), (2, 3));
    /// ```
    #[inline]
    pub fn remove(&mut self, key: K) -> Option<T> {
        let d = self.dense_of(key)?;
        self.vacate_slot(key.index());
        let value = self.values.swap_remove(d);
        self.links.swap_remove(d);
        if let Some(&moved) = self.links.get(d) {
            self.slots[moved as usize].idx = d as u32;
        }
        self.order.changed();
        Some(value)
    }

    /// Removes the values of all `keys` (the seed's batch erase) and returns how many were
    /// really removed: stale and repeated keys are skipped. O(keys.len()).
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let hs = map.insert_many(0..4);
    /// assert_eq!(map.remove_many(&[hs[0], hs[0], hs[2]]), 2);
    /// assert_eq!(map.len(), 2);
    /// ```
    pub fn remove_many(&mut self, keys: &[K]) -> usize {
        keys.iter().filter(|&&k| self.remove(k).is_some()).count()
    }

    /// Keeps the values for which `f` returns `true` and removes the others, **keeping the
    /// relative order** of the values that stay. O(len).
    ///
    /// If `f` panics, the values not yet visited stay and the map remains valid.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// map.insert_many(1..=6);
    /// map.retain(|_, v| *v % 2 == 0);
    /// assert_eq!(map.values(), [2, 4, 6]);
    /// ```
    pub fn retain(&mut self, mut f: impl FnMut(K, &mut T) -> bool) {
        /// Compacts on the way out, on success or unwinding: `[write, read)` holds removed
        /// values (their slots already vacated), `[read, len)` the values not yet visited.
        struct Compact<'a, T, K: Key> {
            map: &'a mut HandleMap<T, K>,
            read: usize,
            write: usize,
        }
        impl<T, K: Key> Drop for Compact<'_, T, K> {
            fn drop(&mut self) {
                let len = self.map.values.len();
                while self.read < len {
                    self.map.move_down(self.read, self.write);
                    self.read += 1;
                    self.write += 1;
                }
                self.map.links.truncate(self.write);
                self.map.values.truncate(self.write);
            }
        }
        let len = self.values.len();
        self.order.touched();
        let mut c = Compact {
            map: self,
            read: 0,
            write: 0,
        };
        while c.read < len {
            let r = c.read;
            let slot = c.map.links[r];
            let key = c.map.key_for(slot);
            let keep = f(key, &mut c.map.values[r]);
            c.read += 1;
            if keep {
                c.map.move_down(r, c.write);
                c.write += 1;
            } else {
                c.map.vacate_slot(slot);
                c.map.order.changed();
            }
        }
    }

    /// Moves the live value at `from` down to `to` (`to <= from`) by a swap; what was at `to`
    /// (a removed value, or itself) goes to `from`.
    #[inline]
    fn move_down(&mut self, from: usize, to: usize) {
        if from != to {
            self.values.swap(from, to);
            self.links.swap(from, to);
            self.slots[self.links[to] as usize].idx = to as u32;
        }
    }

    /// Swaps two dense positions and fixes both back-links.
    #[inline]
    fn swap_dense(&mut self, a: usize, b: usize) {
        self.values.swap(a, b);
        self.links.swap(a, b);
        self.slots[self.links[a] as usize].idx = a as u32;
        self.slots[self.links[b] as usize].idx = b as u32;
    }

    /// Removes every value; every outstanding handle goes stale. The slots stay, each a
    /// generation further on, and join the freelist. O(len).
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let h = map.insert(1);
    /// map.clear();
    /// assert!(map.is_empty());
    /// assert_eq!(map.get(h), None);
    /// let h2 = map.insert(2);
    /// assert_eq!(h2.index(), h.index());
    /// assert!(h2.generation() > h.generation());
    /// ```
    pub fn clear(&mut self) {
        // Everything but dropping the values first, so a panicking `Drop` leaves a valid map.
        self.order.changed();
        self.vacate_all();
        self.links.clear();
        self.values.clear();
    }

    fn vacate_all(&mut self) {
        for d in 0..self.links.len() {
            self.vacate_slot(self.links[d]);
        }
    }

    /// Removes every value the fast way: the slots are forgotten in O(1) (apart from dropping
    /// the values), and still no outstanding handle resolves afterwards.
    ///
    /// Unlike the seed's reset, which lets old handles validate again, the map raises a
    /// generation watermark: slots made after the reset start above every generation handed out
    /// before it, and slot indices start again from 0. Each reset spends generations (a new
    /// slot is good for 65 535 minus its starting generation uses), so once the watermark would
    /// pass 32 767, `reset` does what [`clear`](HandleMap::clear) does instead, in O(len), and
    /// every slot keeps its own generation.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let old = map.insert_many(0..1000);
    /// map.reset();
    /// let new = map.insert(7);
    /// assert!(old.iter().all(|&h| map.get(h).is_none()));
    /// assert_eq!(map[new], 7);
    /// ```
    pub fn reset(&mut self) {
        if self.max_gen >= RESET_WATERMARK_LIMIT {
            self.clear();
            return;
        }
        self.order.changed();
        self.first_gen = self.max_gen + 1;
        self.max_gen = self.first_gen;
        self.new_tag = u32::from(self.first_gen) | self.type_bits();
        self.slots.clear();
        self.free_head = NONE;
        self.free_tail = NONE;
        self.free_len = 0;
        self.links.clear();
        self.values.clear();
    }

    /// The values in dense order, as a slice: the fast way to read them all.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// map.insert_many([1, 2, 3]);
    /// assert_eq!(map.values().iter().sum::<i32>(), 6);
    /// ```
    #[inline]
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The values in dense order, as a mutable slice: the fast way to update them all.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// map.insert_many([1, 2, 3]);
    /// map.values_mut().iter_mut().for_each(|v| *v *= 10);
    /// assert_eq!(map.values(), [10, 20, 30]);
    /// ```
    #[inline]
    pub fn values_mut(&mut self) -> &mut [T] {
        self.order.touched();
        &mut self.values
    }

    /// The same slice as [`values`](HandleMap::values).
    ///
    /// ```
    /// let map: dod::HandleMap<u8> = [1, 2].into_iter().collect();
    /// assert_eq!(map.as_slice(), [1, 2]);
    /// ```
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        &self.values
    }

    /// The same slice as [`values_mut`](HandleMap::values_mut).
    ///
    /// Handles name positions of this slice, so moving values within it (`swap`, `reverse`,
    /// `sort`) moves them to other handles; to reorder values and keep each handle on its
    /// value, use [`sort_by`](HandleMap::sort_by) or
    /// [`defragment`](HandleMap::defragment).
    ///
    /// ```
    /// let mut map: dod::HandleMap<u8> = dod::HandleMap::new();
    /// let a = map.insert(1);
    /// let b = map.insert(2);
    /// for v in map.as_mut_slice() {
    ///     *v *= 10;
    /// }
    /// assert_eq!((map[a], map[b]), (10, 20));
    ///
    /// map.as_mut_slice().reverse(); // the values trade handles
    /// assert_eq!((map[a], map[b]), (20, 10));
    /// ```
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        self.values_mut()
    }

    /// The handles of the values, in dense order. O(1) per handle, one slot read each.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let hs = map.insert_many(['a', 'b']);
    /// assert_eq!(map.handles().collect::<Vec<_>>(), hs);
    /// ```
    pub fn handles(&self) -> impl ExactSizeIterator<Item = K> + DoubleEndedIterator + '_ {
        self.links.iter().map(|&s| self.key_for(s))
    }

    /// Checks every invariant of the module header; for tests.
    #[cfg(test)]
    pub(crate) fn check(&self) {
        assert_eq!(self.values.len(), self.links.len());
        let mut occupied = 0;
        for (i, s) in self.slots.iter().enumerate() {
            assert_ne!(s.generation(), 0);
            assert!(s.generation() <= self.max_gen);
            assert_eq!((s.tag >> 16) & 0x7FFF, u32::from(self.type_id));
            if !s.is_vacant() {
                occupied += 1;
                assert_eq!(self.links[s.idx as usize] as usize, i);
            }
        }
        assert_eq!(occupied, self.values.len());
        let mut n = 0;
        let mut at = self.free_head;
        let mut last = NONE;
        while at != NONE {
            let s = self.slots[at as usize];
            assert!(s.is_vacant() && s.generation() < u16::MAX);
            last = at;
            at = s.idx;
            n += 1;
            assert!(n <= self.slots.len());
        }
        assert_eq!(n, self.free_len as usize);
        assert_eq!(last, self.free_tail);
        let retired = self
            .slots
            .iter()
            .filter(|s| s.is_vacant() && s.generation() == u16::MAX)
            .count();
        assert_eq!(occupied + n + retired, self.slots.len());
    }

    /// Explains why `key` does not resolve, for the `Index` panic.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn invalid_key(&self, key: K) -> ! {
        let i = key.index();
        if key.type_id() != self.type_id {
            panic!(
                "handle {key:?} has type id {}, but this map's is {} (a handle of another map)",
                key.type_id(),
                self.type_id
            )
        }
        if key.generation().get() < self.first_gen {
            panic!(
                "stale handle {key:?}: it is from before the map's last reset() (this map's \
                 handles start at generation {})",
                self.first_gen
            )
        }
        match self.slots.get(i as usize) {
            None => panic!(
                "handle {key:?} is out of range: this map has {} slots (a handle of another \
                 map, or forged)",
                self.slots.len()
            ),
            Some(s) => panic!(
                "stale handle {key:?}: slot {i} is {} at generation {}",
                if s.is_vacant() { "vacant" } else { "occupied" },
                s.generation()
            ),
        }
    }
}

#[cold]
#[track_caller]
fn capacity_panic<K: Key>() -> ! {
    panic!(
        "HandleMap is full: the key type addresses at most {} slots, all in use or retired",
        K::MAX_SLOTS
    )
}

impl<T, K: Key> Index<K> for HandleMap<T, K> {
    type Output = T;

    /// The value of `key`.
    ///
    /// # Panics
    ///
    /// If the key is stale, of another map, or out of range; the message says which.
    #[inline]
    #[track_caller]
    fn index(&self, key: K) -> &T {
        match self.dense_of(key) {
            Some(d) => &self.values[d],
            None => self.invalid_key(key),
        }
    }
}

impl<T, K: Key> IndexMut<K> for HandleMap<T, K> {
    /// The value of `key`, mutably.
    ///
    /// # Panics
    ///
    /// If the key is stale, of another map, or out of range; the message says which.
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, key: K) -> &mut T {
        match self.dense_of(key) {
            Some(d) => {
                self.order.touched();
                &mut self.values[d]
            }
            None => self.invalid_key(key),
        }
    }
}

impl<T, K: Key> Default for HandleMap<T, K> {
    fn default() -> Self {
        Self::new_in_type(0)
    }
}

impl<T: Clone, K: Key> Clone for HandleMap<T, K> {
    fn clone(&self) -> Self {
        HandleMap {
            values: self.values.clone(),
            links: self.links.clone(),
            slots: self.slots.clone(),
            free_head: self.free_head,
            free_tail: self.free_tail,
            free_len: self.free_len,
            min_free: self.min_free,
            type_id: self.type_id,
            first_gen: self.first_gen,
            max_gen: self.max_gen,
            new_tag: self.new_tag,
            order: self.order.clone(),
            _key: PhantomData,
        }
    }
}

impl<T: PartialEq, K: Key> PartialEq for HandleMap<T, K> {
    /// Whether both maps hold the same handles with equal values; the dense order does not
    /// matter (as for `HashMap`). O(n).
    ///
    /// ```
    /// use dod::HandleMap;
    /// let mut a = HandleMap::new();
    /// let x = a.insert("x");
    /// let y = a.insert("y");
    /// let mut b = a.clone();
    /// assert_eq!(a, b);
    /// b.sort_by(|p, q| q.cmp(p)); // another dense order, the same handles
    /// assert_eq!(a, b);
    /// b.remove(y);
    /// assert_ne!(a, b);
    /// let _ = x;
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl<T: Eq, K: Key> Eq for HandleMap<T, K> {}

impl<T: fmt::Debug, K: Key> fmt::Debug for HandleMap<T, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Handle32;
    use alloc::vec;

    #[test]
    fn fifo_freelist_reuses_oldest_slot() {
        let mut m = HandleMap::new();
        let hs = m.insert_many(0..4);
        m.remove(hs[2]);
        m.remove(hs[0]);
        let a = m.insert(10);
        let b = m.insert(11);
        assert_eq!((a.index(), b.index()), (2, 0));
        m.check();
    }

    #[test]
    fn min_free_holds_back_slots() {
        let mut m = HandleMap::new().with_min_free(3);
        let mut seen = vec![];
        for i in 0..20 {
            let h = m.insert(i);
            seen.push(h.index());
            m.remove(h);
            m.check();
        }
        // A slot comes back only after three others have been vacated since.
        for w in seen.windows(4) {
            assert!(!w[1..].contains(&w[0]), "{seen:?}");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "65 535 rounds; safe code, exercised natively")]
    fn generation_exhaustion_retires_slot() {
        let mut m = HandleMap::<u8, Handle32>::with_key();
        let mut last = None;
        for _ in 0..(u16::MAX as usize) {
            let h = m.insert(0);
            assert_eq!(h.index(), 0);
            m.remove(h);
            last = Some(h);
        }
        assert_eq!(last.unwrap().generation(), u16::MAX);
        let h = m.insert(0);
        assert_eq!(h.index(), 1, "slot 0 is retired");
        m.check();
    }

    #[test]
    fn reset_watermark_and_fallback() {
        let mut m = HandleMap::<u8, Handle32>::with_key();
        let old = m.insert_many(0..10);
        m.reset();
        m.check();
        let new = m.insert(1);
        assert_eq!(new.index(), 0);
        assert!(new.generation() > old[0].generation());
        assert!(old.iter().all(|&h| !m.contains(h)));
        // Near the limit the watermark still rises...
        m.max_gen = RESET_WATERMARK_LIMIT - 1;
        m.reset();
        let top = m.insert(2);
        assert_eq!(top.generation(), RESET_WATERMARK_LIMIT);
        // ...and past it, reset falls back to clear: same slot, next generation.
        m.reset();
        m.check();
        assert!(!m.contains(top));
        let next = m.insert(3);
        assert_eq!(next.index(), top.index());
        assert_eq!(next.generation(), top.generation() + 1);
        m.check();
    }

    #[test]
    #[should_panic(expected = "stale handle")]
    fn index_panics_on_stale() {
        let mut m = HandleMap::new();
        let h = m.insert(1);
        m.remove(h);
        let _ = m[h];
    }

    #[test]
    #[should_panic(expected = "another map")]
    fn index_panics_on_other_type_id() {
        let mut a = HandleMap::with_type_id(1);
        let b = HandleMap::<i32>::with_type_id(2);
        let h = a.insert(1);
        let _ = b[h];
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn index_panics_out_of_range() {
        let m = HandleMap::<i32>::new();
        let _ = m[Handle::new(5, 1, 0).unwrap()];
    }

    #[test]
    #[should_panic(expected = "does not fit")]
    fn type_id_must_fit() {
        let _ = HandleMap::<u8, Handle32>::with_type_id_and_key(1);
    }

    #[test]
    fn insert_with_handle_panic_gives_slot_back() {
        let mut m = HandleMap::<u8>::new();
        let r = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
            m.insert_with_handle(|_| panic!("boom"));
        }));
        assert!(r.is_err());
        m.check();
        assert!(m.is_empty());
        let h = m.insert(1);
        assert_eq!(
            h.generation(),
            2,
            "the aborted slot's generation was used up"
        );
    }
}
