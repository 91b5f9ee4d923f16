//! [`Pool`]: items that stay where they were inserted, holes skipped by their alive flags.
//!
//! # Layout
//!
//! Bitsquid's "array with holes" with the alive flags moved out of the items into a bit set:
//!
//! - `slots: Vec<Slot<T>>`: per slot a `tag` (`generation | type_id << 16`, plus `VACANT`
//!   when the slot holds no item) and the item itself, uninitialised in a vacant slot. An item
//!   never moves: its slot index is part of its handle.
//! - `alive: BitSet`: bit `i` is set iff slot `i` holds an item. Iteration walks these bits and
//!   touches only live items; insertion takes the first clear bit, in O(log₆₄ n), so holes are
//!   filled before the pool grows.
//!
//! # Invariants
//!
//! 1. `alive.universe() == slots.len()`, and `alive.contains(i)` iff `slots[i].tag` has no
//!    `VACANT` bit; exactly those slots hold an initialised item. `len == alive.count()`.
//! 2. An occupied slot's tag is `generation | type_id << 16` with the generation handed out in
//!    its key (1 ..= 65 535). A vacant slot's tag is `next | VACANT` where `next` is the
//!    generation its next item will get, or `0 | VACANT` when the slot is *retired*: its last
//!    item had generation 65 535, so it is never used again.
//! 3. `blocked` is `None` while no slot is retired; afterwards it is `alive ∪ retired`, and
//!    vacant slots are searched in it instead of in `alive`.
//! 4. No vacant, non-retired slot has an index below `first_hole` (`usize::MAX` says there
//!    is none at all). Removal lowers it to the emptied slot, insertion raises it past the
//!    filled one, so the search for the lowest hole starts at the right word and needs no
//!    search at all when the pool is full.
//!
//! A key resolves only if its tag (with `VACANT` masked off, so a key of any `Key`
//! implementation can never match a vacant slot) equals its slot's tag. Generations only grow
//! and a slot retires before its generation could wrap, so a stale key stays stale forever.
#![allow(unsafe_code)]

mod iter;
#[cfg(feature = "serde")]
mod serde;

use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::num::NonZeroU16;
use core::ops::{Index, IndexMut};

use crate::bits::{BitSet, Bits};
use crate::error::{InsertError, InsertErrorKind};
use crate::key::{Handle, Key};

pub use iter::{Drain, IntoIter, Iter, IterMut, IterMutIn, Keys, Values, ValuesMut};

/// Marks a vacant slot's tag; never set in a key's tag as the pool compares it.
const VACANT: u32 = 1 << 31;
/// The generation bits of a tag.
const GEN_MASK: u32 = 0xFFFF;

struct Slot<T> {
    tag: u32,
    value: MaybeUninit<T>,
}

impl<T> Slot<T> {
    #[inline]
    fn is_occupied(&self) -> bool {
        self.tag & VACANT == 0
    }
}

/// A pool of items that never move: each keeps the slot it was inserted in until it is
/// removed, and removal leaves a hole that a later insertion fills. The alive flags live in a
/// [`BitSet`] beside the items ([`alive`](Pool::alive)).
///
/// Pick a `Pool` when items must stay at a fixed index (callers store plain indices, other
/// arrays run parallel to it, or items are large and moving them costs), or when you filter
/// items with your own masks: `pool.alive().and(&is_bullet)`. Pick a
/// `HandleMap` when dense iteration matters most.
///
/// Handles are generational ([`Handle`] by default, or any [`Key`]): a stale handle, a handle
/// of another pool (a different type id) or a forged one gives `None` from
/// [`get`](Pool::get) and a panic saying which from `pool[key]`, never another item. A slot
/// whose generation would wrap past 65 535 is retired, never reused.
///
/// Memory per slot: `size_of::<T>() + 4` (the item and its tag) rounded up to
/// `max(align_of::<T>(), 4)` — 8 bytes for a `u8` or a `u32`, 16 for a `u64`, 24 for a
/// `[u64; 2]` — plus about 0.13 bytes of flags ([`BitSet::memory_usage`]).
///
/// | operation | cost |
/// |---|---|
/// | `get`, `get_mut`, `contains`, `remove`, `pool[key]` | O(1) |
/// | `insert` | O(log₆₄ n) to find the first hole, amortized O(1) to grow |
/// | iteration | O(live items + non-empty words of flags) |
///
/// # Example
///
/// ```
/// use dod::Pool;
///
/// let mut pool = Pool::new();
/// let a = pool.insert("apple");
/// let b = pool.insert("banana");
/// assert_eq!(pool.remove(a), Some("apple"));
/// assert_eq!(pool.get(a), None); // stale
///
/// let c = pool.insert("cherry"); // fills the hole left by "apple"
/// assert_eq!(c.index(), a.index());
/// assert_eq!(pool[b], "banana"); // never moved
/// assert_eq!(pool.values().copied().collect::<Vec<_>>(), ["cherry", "banana"]);
/// ```
pub struct Pool<T, K: Key = Handle> {
    slots: Vec<Slot<T>>,
    alive: BitSet,
    blocked: Option<BitSet>,
    len: usize,
    /// A lower bound on the lowest hole (invariant 4).
    first_hole: usize,
    type_id: u16,
    _key: PhantomData<fn(K) -> K>,
}

// SAFETY: a `Pool` owns its items like a `Vec<T>` does; `K` is only a marker.
unsafe impl<T: Send, K: Key> Send for Pool<T, K> {}
// SAFETY: shared access only gives out `&T`, like a `Vec<T>`.
unsafe impl<T: Sync, K: Key> Sync for Pool<T, K> {}

impl<T> Pool<T, Handle> {
    /// An empty pool with [`Handle`] keys. Allocates nothing.
    ///
    /// ```
    /// let pool: dod::Pool<u32> = dod::Pool::new();
    /// assert!(pool.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::with_key()
    }

    /// An empty pool with [`Handle`] keys and room for `capacity` items before it
    /// reallocates.
    ///
    /// ```
    /// let pool: dod::Pool<u64> = dod::Pool::with_capacity(100);
    /// assert!(pool.capacity() >= 100);
    /// ```
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_capacity_and_key(capacity)
    }
}

impl<T, K: Key> Default for Pool<T, K> {
    fn default() -> Self {
        Self::with_key()
    }
}

impl<T, K: Key> Pool<T, K> {
    /// An empty pool with keys of type `K`.
    ///
    /// ```
    /// use dod::{Handle32, Pool};
    /// let mut pool: Pool<u8, Handle32> = Pool::with_key();
    /// let h: Handle32 = pool.insert(1);
    /// assert_eq!(pool[h], 1);
    /// ```
    pub fn with_key() -> Self {
        Pool {
            slots: Vec::new(),
            alive: BitSet::new(),
            blocked: None,
            len: 0,
            first_hole: usize::MAX,
            type_id: 0,
            _key: PhantomData,
        }
    }

    /// An empty pool with keys of type `K` and room for `capacity` items before it
    /// reallocates.
    ///
    /// ```
    /// use dod::{Handle32, Pool};
    /// let pool = Pool::<u64, Handle32>::with_capacity_and_key(100);
    /// assert!(pool.capacity() >= 100);
    /// ```
    pub fn with_capacity_and_key(capacity: usize) -> Self {
        let mut p = Self::with_key();
        p.reserve(capacity);
        p
    }

    /// The pool, stamping `type_id` into every key it hands out and refusing keys that carry
    /// another type id (the keys of other pools): builder form, right after construction.
    ///
    /// # Panics
    ///
    /// If `type_id` does not fit the key type (more than 15 bits for [`Handle`]; any non-zero
    /// id for [`Handle32`](crate::Handle32), which has no type id field), or if the pool has
    /// handed out keys already.
    ///
    /// ```
    /// use dod::Pool;
    /// let mut apples = Pool::new().with_type_id(1);
    /// let mut pears = Pool::new().with_type_id(2);
    /// let apple = apples.insert("apple");
    /// pears.insert("pear");
    /// assert_eq!(pears.get(apple), None); // another pool's key
    /// assert_eq!(dod::Key::type_id(apple), 1);
    /// ```
    #[track_caller]
    pub fn with_type_id(mut self, type_id: u16) -> Self {
        crate::slot::check_type_id::<K>("Pool", type_id);
        assert!(
            self.slots.is_empty(),
            "Pool::with_type_id: the pool has handed out keys already; set the type id right \
             after construction"
        );
        self.type_id = type_id;
        self
    }

    /// The type id stamped into this pool's keys. O(1).
    ///
    /// ```
    /// assert_eq!(dod::Pool::<u8>::new().with_type_id(4).type_id(), 4);
    /// ```
    #[inline]
    pub fn type_id(&self) -> u16 {
        self.type_id
    }

    /// The number of items. O(1).
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// pool.insert('x');
    /// assert_eq!(pool.len(), 1);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the pool holds no item. O(1).
    ///
    /// ```
    /// let pool = dod::Pool::<u8>::new();
    /// assert!(pool.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many slots fit before the slot array reallocates. O(1).
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// pool.insert(1);
    /// assert!(pool.capacity() >= 1);
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        self.slots.capacity()
    }

    /// Bytes held on the heap: per allocated slot the item and a 4-byte tag (padded to `T`'s
    /// alignment), plus the alive flags and their summaries ([`BitSet::memory_usage`]), and a
    /// second set of the same size once a slot has been retired. O(log₆₄ n).
    ///
    /// ```
    /// let mut pool = dod::Pool::<u32>::with_capacity(64);
    /// for i in 0..64 {
    ///     pool.insert(i);
    /// }
    /// // 64 slots of 8 bytes (tag + item) and at least one word of flags
    /// assert!(pool.memory_usage() >= 64 * 8 + 8);
    /// ```
    pub fn memory_usage(&self) -> usize {
        self.slots.capacity() * core::mem::size_of::<Slot<T>>()
            + self.alive.memory_usage()
            + self.blocked.as_ref().map_or(0, BitSet::memory_usage)
    }

    /// The number of slots: live items, holes and retired slots. Indices are below it. O(1).
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let a = pool.insert(1);
    /// pool.insert(2);
    /// pool.remove(a);
    /// assert_eq!((pool.len(), pool.slot_count()), (1, 2));
    /// ```
    #[inline]
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// Reserves room for `additional` more items: holes are counted, retired slots are not.
    /// O(n / 64) to count retired slots once any exist; O(n) when it reallocates.
    ///
    /// ```
    /// let mut pool = dod::Pool::<u8>::new();
    /// pool.reserve(10);
    /// assert!(pool.capacity() >= 10);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        // `blocked` is alive ∪ retired: the slots an insertion cannot use.
        let unusable = self.blocked.as_ref().map_or(self.len, BitSet::count);
        let holes = self.slots.len() - unusable;
        self.slots.reserve(additional.saturating_sub(holes));
    }

    /// The alive flags: bit `i` is set iff slot `i` holds an item. Combine them with your own
    /// masks to walk a subset without touching the other items; to change the items of a
    /// subset, use [`iter_mut_in`](Self::iter_mut_in). Your masks are yours to keep in step:
    /// clear an item's bits when you remove it, or a later item in the same slot inherits
    /// them.
    ///
    /// ```
    /// use dod::{BitSet, Bits, Pool};
    /// let mut pool = Pool::new();
    /// let mut is_bullet = BitSet::new();
    /// for kind in ["bullet", "tank", "bullet", "laser"] {
    ///     let h = pool.insert(kind);
    ///     if kind == "bullet" {
    ///         is_bullet.insert(h.index());
    ///     }
    /// }
    /// let first = pool.key_at(0).unwrap();
    /// pool.remove(first);
    /// let bullets: Vec<u32> = pool.alive().and(&is_bullet).iter().collect();
    /// assert_eq!(bullets, [2]);
    /// ```
    #[inline]
    pub fn alive(&self) -> &BitSet {
        &self.alive
    }

    /// Inserts `value` into the first hole, or a new slot if there is none, and returns its
    /// key. O(log₆₄ n), amortized O(1) to grow.
    ///
    /// # Panics
    ///
    /// If the key type cannot address another slot (every index in use or retired); see
    /// [`try_insert`](Pool::try_insert).
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let h = pool.insert(10);
    /// assert_eq!(pool[h], 10);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn insert(&mut self, value: T) -> K {
        match self.try_insert(value) {
            Ok(k) => k,
            Err(_) => capacity_panic::<K>(),
        }
    }

    /// Inserts `value` and returns its key, or gives it back in an [`InsertError`] when the
    /// key type cannot address another slot. O(log₆₄ n).
    ///
    /// ```
    /// use dod::{Handle32, Pool};
    /// let mut pool: Pool<(), Handle32> = Pool::with_key();
    /// for _ in 0..65_535 {
    ///     pool.try_insert(()).unwrap();
    /// }
    /// assert!(pool.try_insert(()).is_err());
    /// ```
    #[inline(always)]
    pub fn try_insert(&mut self, value: T) -> Result<K, InsertError<T>> {
        let i = match self.hole_near_hint() {
            Some(i) => i,
            None => match self.find_slot() {
                Some(i) => i,
                None => return Err(InsertError::new(InsertErrorKind::Full, value)),
            },
        };
        Ok(self.fill(i, value))
    }

    /// The flags that vacant slots are searched in (invariant 3).
    #[inline]
    fn searched(&self) -> &BitSet {
        self.blocked.as_ref().unwrap_or(&self.alive)
    }

    /// The first vacant, non-retired slot if it is in the word of `first_hole`: no slot below
    /// `first_hole` is (invariant 4). After a removal it is the emptied slot.
    #[inline]
    fn hole_near_hint(&self) -> Option<usize> {
        self.searched().next_zero_in_word(self.first_hole)
    }

    /// The first vacant, non-retired slot past the word of `first_hole`, or a new slot, or
    /// `None` if the key type cannot address another; out of line, as the pool is usually
    /// full or has a hole at `first_hole` when items are inserted.
    #[inline(never)]
    fn find_slot(&mut self) -> Option<usize> {
        if let Some(i) = self
            .searched()
            .next_zero(self.first_hole.min(u32::MAX as usize) as u32)
        {
            return Some(i as usize);
        }
        if self.slots.len() >= K::MAX_SLOTS as usize {
            return None;
        }
        Some(self.push_slot())
    }

    fn push_slot(&mut self) -> usize {
        let i = self.slots.len();
        self.slots.push(Slot {
            tag: 1 | VACANT,
            value: MaybeUninit::uninit(),
        });
        self.alive.grow(i + 1);
        if let Some(b) = &mut self.blocked {
            b.grow(i + 1);
        }
        i
    }

    /// Puts `value` into vacant, non-retired slot `i`.
    #[inline(always)]
    fn fill(&mut self, i: usize, value: T) -> K {
        let slot = &mut self.slots[i];
        debug_assert!(!slot.is_occupied() && slot.tag & GEN_MASK != 0);
        let generation = slot.tag & GEN_MASK;
        slot.value.write(value);
        slot.tag = generation | u32::from(self.type_id) << 16;
        self.alive.set_bit(i);
        if self.blocked.is_some() {
            self.block(i);
        }
        self.len += 1;
        // `i` was the lowest hole, so the next one is above it; a full pool has none.
        self.first_hole = if self.len == self.slots.len() {
            usize::MAX
        } else {
            i + 1
        };
        self.key_for(i, slot_generation(generation))
    }

    /// Marks slot `i` in `blocked` (invariant 3); out of line, as in `update_blocked`.
    #[cold]
    #[inline(never)]
    fn block(&mut self, i: usize) {
        if let Some(b) = &mut self.blocked {
            b.insert(i as u32);
        }
    }

    #[inline]
    fn key_for(&self, i: usize, generation: NonZeroU16) -> K {
        K::from_parts(i as u32, generation, self.type_id)
    }

    /// The slot index of `key` if it names a live item.
    #[inline]
    fn slot_of(&self, key: K) -> Option<usize> {
        let i = key.index() as usize;
        let slot = self.slots.get(i)?;
        // A vacant slot's tag has `VACANT`; the masked key tag never has it.
        (slot.tag == key.tag() & !VACANT).then_some(i)
    }

    /// Whether `key` names a live item. O(1).
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let h = pool.insert(1);
    /// assert!(pool.contains(h));
    /// pool.remove(h);
    /// assert!(!pool.contains(h));
    /// ```
    #[inline]
    pub fn contains(&self, key: K) -> bool {
        self.slot_of(key).is_some()
    }

    /// The item of `key`, or `None` if the key is stale, of another pool, or forged. O(1).
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let h = pool.insert(5);
    /// assert_eq!(pool.get(h), Some(&5));
    /// ```
    #[inline]
    pub fn get(&self, key: K) -> Option<&T> {
        let i = self.slot_of(key)?;
        // SAFETY: `slot_of` found the slot occupied (invariant 1: initialised).
        Some(unsafe { self.slots[i].value.assume_init_ref() })
    }

    /// The item of `key`, mutably, or `None` if the key is not live. O(1).
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let h = pool.insert(5);
    /// *pool.get_mut(h).unwrap() += 1;
    /// assert_eq!(pool[h], 6);
    /// ```
    #[inline]
    pub fn get_mut(&mut self, key: K) -> Option<&mut T> {
        let i = self.slot_of(key)?;
        // SAFETY: `slot_of` found the slot occupied (invariant 1: initialised).
        Some(unsafe { self.slots[i].value.assume_init_mut() })
    }

    /// Mutable references to the items of `N` distinct live keys at once, or `None` if a key
    /// is not live or two keys name the same item. O(N²) for the distinctness check.
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let a = pool.insert(1);
    /// let b = pool.insert(2);
    /// if let Some([x, y]) = pool.get_disjoint_mut([a, b]) {
    ///     core::mem::swap(x, y);
    /// }
    /// assert_eq!((pool[a], pool[b]), (2, 1));
    /// assert!(pool.get_disjoint_mut([a, a]).is_none());
    /// ```
    pub fn get_disjoint_mut<const N: usize>(&mut self, keys: [K; N]) -> Option<[&mut T; N]> {
        let mut idx = [0usize; N];
        for (d, k) in idx.iter_mut().zip(keys) {
            *d = self.slot_of(k)?;
        }
        let slots = self.slots.get_disjoint_mut(idx).ok()?;
        // SAFETY: every slot was found occupied by `slot_of` (invariant 1: initialised).
        Some(slots.map(|s| unsafe { s.value.assume_init_mut() }))
    }

    /// The item in slot `index`, for callers that store plain indices, or `None` if the slot
    /// is a hole or past the end. O(1).
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let h = pool.insert('a');
    /// assert_eq!(pool.get_at(h.index()), Some(&'a'));
    /// assert_eq!(pool.get_at(7), None);
    /// ```
    #[inline]
    pub fn get_at(&self, index: u32) -> Option<&T> {
        let slot = self.slots.get(index as usize)?;
        // SAFETY: an occupied slot is initialised (invariant 1).
        slot.is_occupied()
            .then(|| unsafe { slot.value.assume_init_ref() })
    }

    /// The item in slot `index`, mutably, or `None` if the slot is a hole or past the end.
    /// O(1).
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// pool.insert(1);
    /// *pool.get_at_mut(0).unwrap() = 9;
    /// assert_eq!(pool.get_at(0), Some(&9));
    /// ```
    #[inline]
    pub fn get_at_mut(&mut self, index: u32) -> Option<&mut T> {
        let slot = self.slots.get_mut(index as usize)?;
        if slot.is_occupied() {
            // SAFETY: an occupied slot is initialised (invariant 1).
            Some(unsafe { slot.value.assume_init_mut() })
        } else {
            None
        }
    }

    /// The key of the item in slot `index`, or `None` if the slot is a hole or past the end.
    /// O(1).
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let h = pool.insert(1.5);
    /// assert_eq!(pool.key_at(h.index()), Some(h));
    /// pool.remove(h);
    /// assert_eq!(pool.key_at(h.index()), None);
    /// ```
    #[inline]
    pub fn key_at(&self, index: u32) -> Option<K> {
        let slot = self.slots.get(index as usize)?;
        slot.is_occupied()
            .then(|| self.key_for(index as usize, slot_generation(slot.tag & GEN_MASK)))
    }

    /// Removes the item of `key` and returns it, or `None` if the key is not live. The slot
    /// becomes a hole; no other item moves. O(1).
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let a = pool.insert(1);
    /// let b = pool.insert(2);
    /// assert_eq!(pool.remove(a), Some(1));
    /// assert_eq!(pool.remove(a), None);
    /// assert_eq!(pool[b], 2);
    /// ```
    #[inline]
    pub fn remove(&mut self, key: K) -> Option<T> {
        let i = self.slot_of(key)?;
        Some(self.take(i))
    }

    /// Removes the item in slot `index` and returns it, or `None` if the slot is a hole or
    /// past the end. O(1).
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// pool.insert('z');
    /// assert_eq!(pool.remove_at(0), Some('z'));
    /// assert_eq!(pool.remove_at(0), None);
    /// ```
    #[inline]
    pub fn remove_at(&mut self, index: u32) -> Option<T> {
        if self.slots.get(index as usize)?.is_occupied() {
            Some(self.take(index as usize))
        } else {
            None
        }
    }

    /// Empties occupied slot `i`: the slot becomes vacant (or retired) first, then the item
    /// is moved out, so a panic later cannot see it twice.
    #[inline(always)]
    fn take(&mut self, i: usize) -> T {
        let slot = &mut self.slots[i];
        debug_assert!(slot.is_occupied());
        let generation = slot.tag & GEN_MASK;
        let retire = generation == GEN_MASK;
        slot.tag = if retire {
            VACANT
        } else {
            (generation + 1) | VACANT
        };
        // SAFETY: the slot was occupied (checked by the callers), so the item is initialised;
        // the tag now says vacant, so it is never read again.
        let value = unsafe { slot.value.assume_init_read() };
        self.alive.clear_bit(i);
        self.len -= 1;
        self.first_hole = self.first_hole.min(i);
        if retire || self.blocked.is_some() {
            self.update_blocked(i, retire);
        }
        value
    }

    /// Keeps `blocked` equal to `alive ∪ retired` after slot `i` was emptied (invariant 3);
    /// out of line, since no slot is retired in the common case.
    #[cold]
    #[inline(never)]
    fn update_blocked(&mut self, i: usize, retire: bool) {
        match &mut self.blocked {
            Some(b) if !retire => {
                b.remove(i as u32);
            }
            Some(_) => {}
            None => {
                let mut b = self.alive.clone();
                b.insert(i as u32);
                self.blocked = Some(b);
            }
        }
    }

    /// Keeps the items for which `f` returns `true` and removes the others; nothing moves.
    /// O(slots / 64 + len).
    ///
    /// If `f` panics, the items not yet visited stay and the pool remains valid.
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// for i in 1..=6 {
    ///     pool.insert(i);
    /// }
    /// pool.retain(|_, v| *v % 2 == 0);
    /// assert_eq!(pool.values().copied().collect::<Vec<_>>(), [2, 4, 6]);
    /// ```
    pub fn retain(&mut self, mut f: impl FnMut(K, &mut T) -> bool) {
        let mut from = 0;
        while let Some(i) = self.alive.next_one(from) {
            from = i + 1;
            let i = i as usize;
            let tag = self.slots[i].tag;
            let key = self.key_for(i, slot_generation(tag & GEN_MASK));
            // SAFETY: `i` is alive, so slot `i` is occupied and initialised (invariant 1).
            let keep = f(key, unsafe { self.slots[i].value.assume_init_mut() });
            if !keep {
                drop(self.take(i));
            }
        }
    }

    /// Removes every item and returns them with their keys, in slot order. Items the iterator
    /// does not yield are dropped when it is. O(slots / 64 + len).
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let a = pool.insert('a');
    /// pool.insert('b');
    /// let all: Vec<_> = pool.drain().collect();
    /// assert_eq!(all[0], (a, 'a'));
    /// assert!(pool.is_empty());
    /// assert_eq!(pool.get(a), None);
    /// ```
    pub fn drain(&mut self) -> Drain<'_, T, K> {
        Drain::new(self)
    }

    /// Removes every item; every key goes stale. The slots stay (with their generations).
    /// O(slots / 64 + len).
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let h = pool.insert(1);
    /// pool.clear();
    /// assert!(pool.is_empty());
    /// assert_eq!(pool.get(h), None);
    /// ```
    pub fn clear(&mut self) {
        while let Some(i) = self.alive.first() {
            drop(self.take(i as usize));
        }
    }

    /// An iterator over `(key, &item)` in slot order, walking the alive flags.
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let a = pool.insert(1);
    /// let b = pool.insert(2);
    /// assert_eq!(pool.iter().collect::<Vec<_>>(), [(a, &1), (b, &2)]);
    /// ```
    #[inline]
    pub fn iter(&self) -> Iter<'_, T, K> {
        Iter::new(self)
    }

    /// An iterator over `(key, &mut item)` in slot order.
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// pool.insert(1);
    /// for (_, v) in pool.iter_mut() {
    ///     *v *= 10;
    /// }
    /// assert_eq!(pool.get_at(0), Some(&10));
    /// ```
    #[inline]
    pub fn iter_mut(&mut self) -> IterMut<'_, T, K> {
        IterMut::new(self)
    }

    /// An iterator over `(key, &mut item)` for the items whose slot index is in `mask` too,
    /// in slot order: the mutable form of `pool.alive().and(mask)`. Walks the words of both
    /// sets (skipping empty regions through their summaries) and touches only the items it
    /// yields.
    ///
    /// ```
    /// use dod::{BitSet, Pool};
    ///
    /// let mut pool = Pool::new();
    /// let mut bullets = BitSet::new();
    /// for i in 0..6 {
    ///     let h = pool.insert(i * 10);
    ///     if i % 2 == 0 {
    ///         bullets.insert(h.index());
    ///     }
    /// }
    /// for (_, v) in pool.iter_mut_in(&bullets) {
    ///     *v += 1;
    /// }
    /// assert_eq!(pool.values().copied().collect::<Vec<_>>(), [1, 10, 21, 30, 41, 50]);
    /// ```
    #[inline]
    pub fn iter_mut_in<M: Bits>(&mut self, mask: M) -> IterMutIn<'_, T, K, M> {
        IterMutIn::new(self, mask)
    }

    /// An iterator over the keys in slot order.
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let a = pool.insert(());
    /// assert_eq!(pool.keys().collect::<Vec<_>>(), [a]);
    /// ```
    #[inline]
    pub fn keys(&self) -> Keys<'_, T, K> {
        Keys::new(self)
    }

    /// An iterator over the items in slot order: a system's update loop.
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// pool.insert(3);
    /// pool.insert(4);
    /// assert_eq!(pool.values().sum::<i32>(), 7);
    /// ```
    #[inline]
    pub fn values(&self) -> Values<'_, T> {
        Values::new(self)
    }

    /// An iterator over the items, mutably, in slot order.
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// pool.insert(3);
    /// pool.values_mut().for_each(|v| *v += 1);
    /// assert_eq!(pool.values().copied().collect::<Vec<_>>(), [4]);
    /// ```
    #[inline]
    pub fn values_mut(&mut self) -> ValuesMut<'_, T> {
        ValuesMut::new(self)
    }

    /// Checks every invariant; for tests.
    #[doc(hidden)]
    pub fn assert_invariants(&self) {
        self.alive.assert_invariants();
        assert_eq!(
            self.alive.universe(),
            self.slots.len(),
            "flags cover the slots"
        );
        assert_eq!(self.alive.count(), self.len, "len");
        let mut retired = BitSet::with_universe(self.slots.len());
        for (i, s) in self.slots.iter().enumerate() {
            assert_eq!(
                self.alive.contains(i as u32),
                s.is_occupied(),
                "flag of slot {i}"
            );
            if s.is_occupied() {
                assert_ne!(s.tag & GEN_MASK, 0, "generation of slot {i}");
                assert_eq!(s.tag >> 16, u32::from(self.type_id), "type id of slot {i}");
            } else if s.tag == VACANT {
                retired.insert(i as u32);
            } else {
                assert_eq!(s.tag >> 16, VACANT >> 16, "vacant tag of slot {i}");
            }
        }
        match &self.blocked {
            None => {
                assert!(retired.is_empty(), "retired slots without a blocked set");
                if let Some(hole) = self.alive.first_zero() {
                    assert!(self.first_hole <= hole as usize, "a hole below first_hole");
                }
            }
            Some(b) => {
                b.assert_invariants();
                if let Some(hole) = b.first_zero() {
                    assert!(self.first_hole <= hole as usize, "a hole below first_hole");
                }
                assert_eq!(
                    *b,
                    self.alive.or(&retired).to_bitset(),
                    "blocked = alive | retired"
                );
                assert_eq!(b.universe(), self.slots.len());
            }
        }
    }

    /// Explains why `key` does not resolve, for the `Index` panic.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn invalid_key(&self, key: K) -> ! {
        let i = key.index();
        match self.slots.get(i as usize) {
            None => panic!(
                "key {key:?} is out of range: this pool has {} slots (a key of another pool, or forged)",
                self.slots.len()
            ),
            Some(_) if key.type_id() != self.type_id => panic!(
                "key {key:?} has type id {}, but this pool's is {} (a key of another pool)",
                key.type_id(),
                self.type_id
            ),
            Some(s) if s.tag == VACANT => {
                panic!("stale key {key:?}: slot {i} is retired (its generations ran out)")
            }
            Some(s) => panic!(
                "stale key {key:?}: slot {i} is {} at generation {}",
                if s.is_occupied() { "occupied" } else { "vacant" },
                if s.is_occupied() {
                    s.tag & GEN_MASK
                } else {
                    (s.tag & GEN_MASK) - 1
                }
            ),
        }
    }
}

/// The generation of an occupied slot's tag (never 0 by invariant 2).
#[inline]
fn slot_generation(bits: u32) -> NonZeroU16 {
    NonZeroU16::new(bits as u16).expect("an occupied slot has a non-zero generation")
}

#[cold]
#[track_caller]
fn capacity_panic<K: Key>() -> ! {
    panic!(
        "Pool is full: the key type addresses at most {} slots, all in use or retired",
        K::MAX_SLOTS
    )
}

impl<T, K: Key> Drop for Pool<T, K> {
    fn drop(&mut self) {
        if core::mem::needs_drop::<T>() {
            for i in self.alive.iter() {
                // SAFETY: alive slots are initialised (invariant 1), and each is dropped once:
                // the pool is going away and nothing reads the slots after this.
                unsafe { self.slots[i as usize].value.assume_init_drop() };
            }
        }
    }
}

impl<T: Clone, K: Key> Clone for Pool<T, K> {
    fn clone(&self) -> Self {
        // Built slot by slot, marking an item alive only once it is written, so that a
        // panicking `clone` leaves a pool that drops exactly the clones made so far.
        let mut out = Pool {
            slots: Vec::with_capacity(self.slots.len()),
            alive: BitSet::with_universe(self.slots.len()),
            blocked: self.blocked.clone(),
            len: 0,
            first_hole: self.first_hole,
            type_id: self.type_id,
            _key: PhantomData,
        };
        for (i, s) in self.slots.iter().enumerate() {
            let value = if s.is_occupied() {
                // SAFETY: an occupied slot is initialised (invariant 1).
                MaybeUninit::new(unsafe { s.value.assume_init_ref() }.clone())
            } else {
                MaybeUninit::uninit()
            };
            out.slots.push(Slot { tag: s.tag, value });
            if s.is_occupied() {
                out.alive.insert(i as u32);
                out.len += 1;
            }
        }
        out
    }
}

impl<T: PartialEq, K: Key> PartialEq for Pool<T, K> {
    /// Whether both pools hold the same keys with equal items. O(n).
    ///
    /// ```
    /// use dod::Pool;
    /// let mut a = Pool::new();
    /// let x = a.insert(1);
    /// let b = a.clone();
    /// assert_eq!(a, b);
    /// a.remove(x);
    /// a.insert(1); // the same item in the same slot, under a new generation
    /// assert_ne!(a, b);
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl<T: Eq, K: Key> Eq for Pool<T, K> {}

impl<T: fmt::Debug, K: Key> fmt::Debug for Pool<T, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<T, K: Key> Index<K> for Pool<T, K> {
    type Output = T;

    /// The item of `key`.
    ///
    /// # Panics
    ///
    /// If the key is stale, of another pool, or forged; the message says which.
    #[inline]
    #[track_caller]
    fn index(&self, key: K) -> &T {
        match self.get(key) {
            Some(v) => v,
            None => self.invalid_key(key),
        }
    }
}

impl<T, K: Key> IndexMut<K> for Pool<T, K> {
    /// The item of `key`, mutably.
    ///
    /// # Panics
    ///
    /// If the key is stale, of another pool, or forged; the message says which.
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, key: K) -> &mut T {
        match self.slot_of(key) {
            // SAFETY: `slot_of` found the slot occupied (invariant 1: initialised).
            Some(i) => unsafe { self.slots[i].value.assume_init_mut() },
            None => self.invalid_key(key),
        }
    }
}

impl<T, K: Key> Extend<T> for Pool<T, K> {
    /// Inserts every item.
    ///
    /// # Panics
    ///
    /// As [`insert`](Pool::insert).
    #[track_caller]
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for v in iter {
            self.insert(v);
        }
    }
}

impl<T, K: Key> FromIterator<T> for Pool<T, K> {
    /// # Panics
    ///
    /// As [`insert`](Pool::insert).
    #[track_caller]
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut p = Self::with_key();
        p.extend(iter);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Handle32;
    use alloc::string::String;

    #[test]
    fn generations_retire_the_slot() {
        let mut p: Pool<u32, Handle32> = Pool::with_key();
        let mut last = p.insert(0);
        for g in 1..=65_534u32 {
            p.remove(last);
            last = p.insert(g);
            assert_eq!(last.index(), 0);
        }
        assert_eq!(last.generation(), u16::MAX);
        p.remove(last);
        p.assert_invariants();
        let next = p.insert(7);
        assert_eq!(next.index(), 1, "slot 0 is retired");
        assert_eq!(p.get(last), None);
        assert_eq!(p.get(Handle32::new(0, 1).unwrap()), None);
        p.remove(next);
        let again = p.insert(8);
        assert_eq!(again.index(), 1);
        p.assert_invariants();
    }

    #[test]
    #[should_panic(expected = "stale key")]
    fn index_panics_on_stale() {
        let mut p = Pool::new();
        let h = p.insert(1);
        p.remove(h);
        let _ = p[h];
    }

    #[test]
    #[should_panic(expected = "another pool")]
    fn index_panics_on_other_type_id() {
        let mut a = Pool::new().with_type_id(1);
        let b: Pool<i32> = Pool::new().with_type_id(2);
        let mut b = b;
        b.insert(0);
        let h = a.insert(1);
        let _ = b[h];
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn index_panics_out_of_range() {
        let p: Pool<u8> = Pool::new();
        let _ = p[Handle::new(3, 1, 0).unwrap()];
    }

    #[test]
    #[should_panic(expected = "does not fit")]
    fn type_id_must_fit() {
        let _ = Pool::<u8, Handle32>::with_key().with_type_id(1);
    }

    #[test]
    fn clone_is_deep_and_keeps_keys() {
        let mut p = Pool::new();
        let a = p.insert(String::from("a"));
        let b = p.insert(String::from("b"));
        p.remove(a);
        let q = p.clone();
        q.assert_invariants();
        assert_eq!(q.get(b).map(String::as_str), Some("b"));
        assert_eq!(q.get(a), None);
    }
}
