//! [`HandleMap`]: dense items addressed by generational handles.
//!
//! # Layout
//!
//! Three arrays, after the griffin `handle_map`:
//!
//! - `values: Vec<T>`, the *dense* items, packed with no holes. Systems iterate this slice.
//! - `links: Vec<u32>`, parallel to `values`: the slot of each item (the dense → sparse
//!   back-link), so that removing by swap-and-pop is O(1).
//! - `slots: Vec<Slot>`, the *sparse* side that handles index: a [`Tag`] per slot (the
//!   generational slot rules of [`crate::slot`]) and an `idx`. An occupied slot's `idx` is the
//!   dense position of its item; a vacant slot's is the next vacant slot, forming the embedded
//!   FIFO freelist (`free`).
//!
//! # Invariants
//!
//! 1. `values.len() == links.len()`, and for every dense position `d`,
//!    `slots[links[d]]` is occupied with `slots[links[d]].idx == d`. Every occupied slot is
//!    reached this way exactly once.
//! 2. Every slot's tag carries the map's type id; an occupied slot's tag is its key's tag, so
//!    [`Tag::matches`] checks occupancy, generation and type id in one comparison.
//! 3. The freelist links every vacant slot that is not retired, each once, in the order the
//!    slots were vacated. A retired slot is never linked and never reused.
//! 4. Every generation ever handed out is at most `max_gen`; a slot pushed since the last
//!    [`HandleMap::reset`] started at `first_gen`, and generations only grow.
//!
//! A handle resolves only if its slot is occupied at the handle's generation. Generations only
//! grow and a slot is retired before its generation could wrap, so a handle, once stale, stays
//! stale forever.

use alloc::collections::TryReserveError;
use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;
use core::ops::{Index, IndexMut};

use crate::error::{InsertError, InsertErrorKind};
use crate::key::{Handle, Key};
use crate::slot::{self, FreeList, Links, Tag, Unresolved};

mod iter;
#[cfg(feature = "rayon")]
mod rayon;
#[cfg(feature = "serde")]
mod serde;
mod sort;

pub use iter::{Drain, IntoIter, Iter, IterMut};

/// The `idx` of a vacant slot that is not linked (retired, or the freelist's tail).
const NONE: u32 = slot::NO_SLOT;
/// `reset` raises the generation watermark only below this, so that a slot made after a reset
/// is always good for at least 32 768 uses.
const RESET_WATERMARK_LIMIT: u16 = 1 << 15;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    tag: Tag,
    /// Occupied: the dense position of the item. Vacant: the next vacant slot, or [`NONE`].
    idx: u32,
}

impl Links for [Slot] {
    #[inline]
    fn next(&self, i: u32) -> u32 {
        self[i as usize].idx
    }
    #[inline]
    fn set_next(&mut self, i: u32, next: u32) {
        self[i as usize].idx = next;
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
    free: FreeList,
    type_id: u16,
    first_gen: u16,
    max_gen: u16,
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
}

impl<T, K: Key> HandleMap<T, K> {
    const fn new_in_type(type_id: u16) -> Self {
        HandleMap {
            values: Vec::new(),
            links: Vec::new(),
            slots: Vec::new(),
            free: FreeList::new(),
            type_id,
            first_gen: 1,
            max_gen: 1,
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

    /// The map, stamping `type_id` into every key it hands out and refusing keys that carry
    /// another type id (the keys of other maps): builder form, right after construction.
    ///
    /// Maps made with [`new`](HandleMap::new) all have type id 0, so a key of one names a
    /// value of another that happens to sit in the same slot at the same generation; a type
    /// id per map (or a key type per map, [`new_handle_type!`](crate::new_handle_type))
    /// tells them apart.
    ///
    /// # Panics
    ///
    /// If `type_id` does not fit the key type (more than 15 bits for [`Handle`]; any non-zero
    /// id for [`Handle32`](crate::Handle32), which has no type id field), or if the map has
    /// handed out keys or been [`reset`](HandleMap::reset) already.
    ///
    /// ```
    /// use dod::HandleMap;
    /// let mut apples = HandleMap::new().with_type_id(1);
    /// let mut oranges = HandleMap::new().with_type_id(2);
    /// let apple = apples.insert("apple");
    /// let orange = oranges.insert("orange");
    /// assert_eq!(apple.index(), orange.index());
    /// assert_eq!(oranges.get(apple), None); // another map's key
    /// assert_eq!(dod::Key::type_id(orange), 2);
    /// ```
    #[track_caller]
    pub fn with_type_id(mut self, type_id: u16) -> Self {
        slot::check_type_id::<K>("HandleMap", type_id);
        // A reset forgets the slots but not that keys were handed out: its watermark
        // (`first_gen` above 1) is what keeps them stale, and they must stay this map's keys.
        assert!(
            self.slots.is_empty() && self.first_gen == 1,
            "HandleMap::with_type_id: the map has handed out keys or been reset already; set \
             the type id right after construction"
        );
        self.type_id = type_id;
        self
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
        self.free.set_min_free(min_free);
    }

    /// How many vacant slots are kept back before one is reused.
    ///
    /// ```
    /// assert_eq!(dod::HandleMap::<u8>::new().min_free(), 0);
    /// ```
    pub fn min_free(&self) -> u32 {
        self.free.min_free()
    }

    /// The type id stamped into this map's handles.
    ///
    /// ```
    /// assert_eq!(dod::HandleMap::<u8>::new().with_type_id(9).type_id(), 9);
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

    /// Reserves room for at least `additional` more values, and for the slots that name them
    /// (the vacant slots beyond the [`min_free`](HandleMap::min_free) kept back are reused
    /// first). O(len) when it reallocates.
    ///
    /// ```
    /// let mut map = dod::HandleMap::<u8>::new();
    /// map.reserve(50);
    /// assert!(map.capacity() >= 50);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.values.reserve(additional);
        self.links.reserve(additional);
        self.slots.reserve(self.new_slots_for(additional));
    }

    /// How many slots past the existing ones `additional` more values need: the vacant
    /// slots beyond the `min_free` kept back are reused first.
    fn new_slots_for(&self, additional: usize) -> usize {
        additional.saturating_sub(self.free.reusable() as usize)
    }

    /// [`reserve`](HandleMap::reserve), or an error if the capacity would overflow or the
    /// allocator refuses; what was reserved before the error stays reserved, and the map is
    /// otherwise unchanged. O(len) when it reallocates.
    ///
    /// ```
    /// let mut map = dod::HandleMap::<u8>::new();
    /// assert!(map.try_reserve(50).is_ok());
    /// assert!(map.capacity() >= 50);
    /// assert!(map.try_reserve(usize::MAX).is_err());
    /// ```
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), TryReserveError> {
        self.values.try_reserve(additional)?;
        self.links.try_reserve(additional)?;
        self.slots.try_reserve(self.new_slots_for(additional))
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
    fn key_for(&self, slot: u32) -> K {
        iter::key_of(&self.slots, slot)
    }

    /// Finds a slot for the value at dense position `dense` and marks it occupied: the oldest
    /// vacant slot beyond the `min_free` reserve, else a new slot, else (the key type cannot
    /// address another) any vacant slot. Returns the slot and its tag.
    ///
    /// An occupied slot must never name a position past the values once user code can run
    /// (invariant 1, which `get` relies on): callers push the value first, or keep a guard
    /// that vacates the slot until it is pushed.
    #[inline]
    fn claim_slot(&mut self, dense: u32) -> Option<(u32, Tag)> {
        let can_grow = (self.slots.len() as u64) < u64::from(K::MAX_SLOTS);
        if self.free.should_reuse(can_grow) {
            let i = self.free.pop_front(self.slots.as_slice());
            let slot = &mut self.slots[i as usize];
            // Linked slots are not retired (invariant 3).
            let tag = slot.tag.occupy().unwrap_or(slot.tag);
            slot.tag = tag;
            slot.idx = dense;
            self.max_gen = self.max_gen.max(tag.generation());
            Some((i, tag))
        } else if can_grow {
            let i = self.slots.len() as u32;
            // A new slot starts at `first_gen`, which `max_gen` already covers (invariant 4).
            let tag = self.new_slot_tag();
            self.slots.push(Slot { tag, idx: dense });
            Some((i, tag))
        } else {
            None
        }
    }

    /// The tag of a slot pushed now: occupied at `first_gen`.
    #[inline]
    fn new_slot_tag(&self) -> Tag {
        // Occupied at `first_gen`: the vacant tag at that generation without its vacancy bit.
        // `first_gen` is at most 32 768 (`reset` keeps it there), so the slot it replaces,
        // vacant at `first_gen - 1`, is not retired and `occupy` would give the same tag; this
        // form skips its retirement test.
        let tag =
            Tag::from_bits(Tag::vacant(self.first_gen, self.type_id).to_bits() & !Tag::VACANT);
        debug_assert_eq!(
            Some(tag),
            Tag::vacant(self.first_gen - 1, self.type_id).occupy()
        );
        tag
    }

    /// Vacates an occupied slot: its generation moves on for the next use, and it joins the
    /// back of the freelist, or is retired if its generation is spent.
    #[inline]
    fn vacate_slot(&mut self, i: u32) {
        let slot = &mut self.slots[i as usize];
        slot.tag = slot.tag.vacate();
        slot.idx = NONE;
        if !slot.tag.is_retired() {
            self.free.push_back(self.slots.as_mut_slice(), i);
        }
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
    #[inline(always)]
    #[track_caller]
    pub fn insert(&mut self, value: T) -> K {
        match self.try_insert(value) {
            Ok(k) => k,
            Err(_) => slot::full_panic::<K>("HandleMap"),
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
    #[inline(always)]
    pub fn try_insert(&mut self, value: T) -> Result<K, InsertError<T>> {
        // The value goes in before a slot names it: if the push panics (capacity overflow),
        // no occupied slot points past the values.
        self.values.push(value);
        let Some((slot, tag)) = self.claim_slot((self.values.len() - 1) as u32) else {
            let value = self.values.pop().expect("the value just pushed");
            return Err(InsertError::new(InsertErrorKind::Full, value));
        };
        self.links.push(slot);
        self.order.changed();
        Ok(tag.key(slot))
    }

    /// Inserts the value that `f` makes from its own handle, so a value can store the handle
    /// that names it. O(1) amortised.
    ///
    /// # Panics
    ///
    /// If the key type cannot address another slot; `f` is not called then. If `f` panics,
    /// the map holds what it held, and the chosen slot is spent as if a value had been
    /// inserted and removed: its generation is used up and it rejoins the free slots last
    /// (or retires).
    ///
    /// ```
    /// use dod::{HandleMap, Handle};
    /// struct Node { me: Handle }
    /// let mut map = HandleMap::new();
    /// let h = map.insert_with_key(|me| Node { me });
    /// assert_eq!(map[h].me, h);
    /// ```
    #[track_caller]
    pub fn insert_with_key(&mut self, f: impl FnOnce(K) -> T) -> K {
        let Some((slot, tag)) = self.claim_slot(self.values.len() as u32) else {
            slot::full_panic::<K>("HandleMap")
        };
        // Until the value is in, a panic (of the key type's constructor, of `f`, or of the
        // push) gives the slot back, so that no occupied slot names a missing value.
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
        let key = tag.key(slot);
        let value = f(key);
        undo.map.values.push(value);
        undo.armed = false;
        undo.map.links.push(slot);
        undo.map.order.changed();
        key
    }

    /// Inserts every value of `values`, reserving room once, and returns their handles in
    /// order. O(n) amortised.
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
        self.dense_at(key.index(), key)
    }

    /// [`dense_of`](Self::dense_of) for slot `i`, which is `key.index()` read once by a
    /// caller that goes on to change that slot: a `Key` is user code, and a second call
    /// could name another slot.
    #[inline]
    fn dense_at(&self, i: u32, key: K) -> Option<usize> {
        let slot = self.slots.get(i as usize)?;
        if slot.tag.matches(key) {
            Some(slot.idx as usize)
        } else {
            None
        }
    }

    /// The value at dense position `d`, which [`dense_of`](Self::dense_of) returned: read
    /// without a second bounds check. A random lookup is two dependent loads; the check on
    /// the second one cost about 10 % of a lookup against `slotmap::DenseSlotMap` (which
    /// makes none), measured interleaved at 100 000 items.
    #[inline(always)]
    #[allow(unsafe_code)]
    fn value(&self, d: usize) -> &T {
        debug_assert!(d < self.values.len());
        // SAFETY: `d` is the `idx` of an occupied slot, which is a dense position below
        // `values.len()` (invariant 1); every path that moves values keeps it, unwinding
        // included.
        unsafe { self.values.get_unchecked(d) }
    }

    /// [`value`](Self::value), mutably.
    #[inline(always)]
    #[allow(unsafe_code)]
    fn value_mut(&mut self, d: usize) -> &mut T {
        debug_assert!(d < self.values.len());
        // SAFETY: as in `value`.
        unsafe { self.values.get_unchecked_mut(d) }
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
        Some(self.value(self.dense_of(key)?))
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
        Some(self.value_mut(d))
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
    /// right now. Positions change when values are removed or sorted; handles do not. O(1).
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let a = map.insert('a');
    /// let b = map.insert('b');
    /// map.remove(a); // 'b' moves into the hole
    /// assert_eq!(map.get_index_of(b), Some(0));
    /// assert_eq!(map.get_index_of(a), None);
    /// ```
    #[inline]
    pub fn get_index_of(&self, key: K) -> Option<usize> {
        self.dense_of(key)
    }

    /// The handle of the value at dense position `index`, or `None` past the end. O(1).
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let h = map.insert(3.5);
    /// assert_eq!(map.key_at(0), Some(h));
    /// assert_eq!(map.key_at(1), None);
    /// ```
    #[inline]
    pub fn key_at(&self, index: usize) -> Option<K> {
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
        let i = key.index();
        let d = self.dense_at(i, key)?;
        self.vacate_slot(i);
        let value = self.values.swap_remove(d);
        self.links.swap_remove(d);
        if let Some(&moved) = self.links.get(d) {
            self.slots[moved as usize].idx = d as u32;
        }
        self.order.changed();
        Some(value)
    }

    /// Removes the values of all `keys` and returns how many were really removed: stale and
    /// repeated keys are skipped. O(keys.len()).
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
    /// Unlike a reset that rewinds every slot's generation, which lets old handles validate
    /// again, the map raises a generation watermark: slots made after the reset start above
    /// every generation handed out before it, and slot indices start again from 0. Each reset
    /// spends generations (a new slot is good for 65 535 minus its starting generation uses),
    /// so once the watermark would pass 32 768, `reset` does what [`clear`](HandleMap::clear)
    /// does instead, in O(len), and every slot keeps its own generation.
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
        self.slots.clear();
        self.free.clear();
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
    /// assert_eq!(map.keys().collect::<Vec<_>>(), hs);
    /// ```
    pub fn keys(&self) -> impl ExactSizeIterator<Item = K> + DoubleEndedIterator + '_ {
        self.links.iter().map(|&s| self.key_for(s))
    }

    /// Checks every invariant of the module header, panicking on the first that fails; for
    /// tests and fuzzing. O(slots).
    #[doc(hidden)]
    pub fn assert_invariants(&self) {
        assert_eq!(self.values.len(), self.links.len(), "one link per value");
        let mut occupied = 0;
        for (i, s) in self.slots.iter().enumerate() {
            let g = s.tag.generation();
            assert!(
                g >= self.first_gen && g <= self.max_gen,
                "generation of slot {i}"
            );
            assert_eq!(s.tag.type_id(), self.type_id, "type id of slot {i}");
            if !s.tag.is_vacant() {
                occupied += 1;
                assert_eq!(
                    self.links[s.idx as usize] as usize, i,
                    "back-link of slot {i}"
                );
            }
        }
        assert_eq!(occupied, self.values.len(), "occupied slots");
        self.free
            .assert_invariants(self.slots.as_slice(), self.slots.len(), |i| {
                let t = self.slots[i as usize].tag;
                t.is_vacant() && !t.is_retired()
            });
        let retired = self.slots.iter().filter(|s| s.tag.is_retired()).count();
        assert_eq!(
            occupied + self.free.len() as usize + retired,
            self.slots.len(),
            "every slot is live, linked or retired"
        );
    }

    /// Explains why `key` does not resolve, for the `Index` panic.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn invalid_key(&self, key: K) -> ! {
        Unresolved {
            container: "HandleMap",
            type_id: self.type_id,
            slot_count: self.slots.len(),
            slot: self.slots.get(key.index() as usize).map(|s| s.tag),
            first_generation: self.first_gen,
        }
        .panic(key)
    }
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
            Some(d) => self.value(d),
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
                self.value_mut(d)
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
            free: self.free.clone(),
            type_id: self.type_id,
            first_gen: self.first_gen,
            max_gen: self.max_gen,
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
    #[should_panic(expected = "handed out keys or been reset already")]
    fn with_type_id_after_a_reset_panics() {
        let mut m = HandleMap::new();
        m.insert(1);
        m.reset();
        let _ = m.with_type_id(7);
    }

    /// `f` panicking in `insert_with_key` spends the chosen slot as a removal would: the
    /// slot rejoins the free slots last.
    #[test]
    #[cfg(feature = "std")]
    fn a_panicking_insert_with_key_spends_its_slot_as_a_removal_would() {
        let mut m = HandleMap::new();
        let ks: Vec<Handle> = (0..3).map(|i| m.insert(i)).collect();
        m.remove(ks[2]);
        m.remove(ks[0]);
        // Free slots, oldest first: 2, 0. The failed insertion takes 2.
        let r = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
            m.insert_with_key(|_| -> i32 { panic!("no value") })
        }));
        assert!(r.is_err());
        m.assert_invariants();
        assert_eq!(m.len(), 1);
        let (a, b) = (m.insert(7), m.insert(8));
        assert_eq!((a.index(), b.index()), (0, 2));
        assert_eq!(b.generation(), ks[2].generation() + 2, "a generation spent");
    }

    #[test]
    fn fifo_freelist_reuses_oldest_slot() {
        let mut m = HandleMap::new();
        let hs = m.insert_many(0..4);
        m.remove(hs[2]);
        m.remove(hs[0]);
        let a = m.insert(10);
        let b = m.insert(11);
        assert_eq!((a.index(), b.index()), (2, 0));
        m.assert_invariants();
    }

    #[test]
    fn min_free_holds_back_slots() {
        let mut m = HandleMap::new().with_min_free(3);
        let mut seen = vec![];
        for i in 0..20 {
            let h = m.insert(i);
            seen.push(h.index());
            m.remove(h);
            m.assert_invariants();
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
        m.assert_invariants();
    }

    #[test]
    fn reset_watermark_and_fallback() {
        let mut m = HandleMap::<u8, Handle32>::with_key();
        let old = m.insert_many(0..10);
        m.reset();
        m.assert_invariants();
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
        m.assert_invariants();
        assert!(!m.contains(top));
        let next = m.insert(3);
        assert_eq!(next.index(), top.index());
        assert_eq!(next.generation(), top.generation() + 1);
        m.assert_invariants();
    }

    #[test]
    #[should_panic(expected = "stale key")]
    fn index_panics_on_stale() {
        let mut m = HandleMap::new();
        let h = m.insert(1);
        m.remove(h);
        let _ = m[h];
    }

    #[test]
    #[should_panic(expected = "a key of another HandleMap")]
    fn index_panics_on_other_type_id() {
        let mut a = HandleMap::new().with_type_id(1);
        let b = HandleMap::<i32>::new().with_type_id(2);
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
        let _ = HandleMap::<u8, Handle32>::with_key().with_type_id(1);
    }

    #[test]
    fn insert_with_key_panic_gives_slot_back() {
        let mut m = HandleMap::<u8>::new();
        let r = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
            m.insert_with_key(|_| panic!("boom"));
        }));
        assert!(r.is_err());
        m.assert_invariants();
        assert!(m.is_empty());
        let h = m.insert(1);
        assert_eq!(
            h.generation(),
            2,
            "the aborted slot's generation was used up"
        );
    }

    #[cfg(feature = "std")]
    use crate::hostile::{refusing_keys, Hostile, FLIP};
    #[cfg(feature = "std")]
    use core::num::NonZeroU16;

    #[test]
    #[cfg(feature = "std")]
    fn a_key_type_that_panics_while_making_a_key_leaves_no_slot_behind() {
        let mut m = HandleMap::<u32, Hostile>::with_key();
        let a = m.insert(10);
        let r = refusing_keys(|| m.insert_with_key(|_| 20));
        assert!(r.is_err());
        m.assert_invariants();
        let gen1 = NonZeroU16::new(1).unwrap();
        assert_eq!(m.get(Hostile(1, 1, gen1)), None, "slot 1 holds nothing");
        assert_eq!(m.len(), 1);
        assert_eq!(m[a], 10);
    }

    #[test]
    #[cfg(feature = "std")]
    fn a_key_whose_index_changes_between_calls_removes_nothing_else() {
        let mut m = HandleMap::<u32, Hostile>::with_key();
        let a = m.insert(10);
        let b = m.insert(20);
        let gen1 = NonZeroU16::new(1).unwrap();
        // Names slot 1 on one call and slot 0 on the next: whichever slot the removal looks
        // at is the one it vacates.
        FLIP.with(|f| f.set(false));
        let removed = m.remove(Hostile(1, 0, gen1));
        m.assert_invariants();
        assert_eq!(m.len(), 1);
        let left = m.values()[0];
        assert_eq!(
            removed,
            Some(30 - left),
            "one of the two went, the other stayed"
        );
        for k in [a, b] {
            // Every lookup either finds the value that is left or nothing.
            for _ in 0..2 {
                if let Some(&v) = m.get(k) {
                    assert_eq!(v, left);
                }
            }
        }
    }
}
