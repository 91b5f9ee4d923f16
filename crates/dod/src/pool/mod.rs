//! [`Pool`]: items that stay where they were inserted, holes skipped by their alive flags.
//!
//! # Layout
//!
//! Bitsquid's "array with holes" with the alive flags moved out of the items into a bit set:
//!
//! - `slots: Vec<Entry<T>>`: per slot a [`Tag`] (the generational slot rules of
//!   [`crate::slot`]) and a room that holds the item while the slot is occupied and the FIFO
//!   freelist's link while it is vacant (`entry.rs`, the pool's unsafe core). An item never
//!   moves: its slot index is part of its key.
//! - `alive: BitSet`: bit `i` is set iff slot `i` holds an item. Iteration walks these bits and
//!   touches only live items.
//! - The reuse policy ([`Reuse`]) and its state: `free`, the FIFO freelist linked through the
//!   vacant slots (for [`Reuse::Fifo`]), or `blocked` and `first_hole`, which guide the search
//!   for the lowest hole in the alive flags (for [`Reuse::LowestFirst`]).
//!
//! # Invariants
//!
//! 1. `alive.universe() == slots.len()`, and `alive.contains(i)` iff slot `i` is occupied;
//!    `vacant == slots.len() - alive.count()`: the length is counted by the vacant slots, so
//!    that appending a slot (the common insertion into a growing pool) writes no counter.
//! 2. Every tag follows [`crate::slot`] and carries the pool's type id: an occupied slot's tag
//!    is the tag of its item's key; a vacant slot keeps the generation of its last item (0 if
//!    it never held one); a vacant slot at generation 65 535 is *retired* and never used again.
//! 3. With [`Reuse::Fifo`], `free` links every vacant slot that is not retired, each once,
//!    in the order they were vacated (in slot order for those vacated before the policy was
//!    set); `blocked` is `None`.
//! 4. With [`Reuse::LowestFirst`], `free` is empty (it keeps only `min_free`); `blocked` is
//!    `None` while no slot is retired and `alive ∪ retired` once one is, and vacant slots are
//!    searched in it instead of in `alive`; no vacant, non-retired slot has an index below
//!    `first_hole` (`usize::MAX` says there is none at all).
//! 5. `append_below` is `K::MAX_SLOTS` with [`Reuse::Fifo`] and 0 with [`Reuse::LowestFirst`]:
//!    an insertion that finds no hole to reuse appends a slot while `slots.len()` is below it,
//!    so the policy and the key type's bound are one comparison.
//!
//! A key resolves only if its slot's tag [`matches`](Tag::matches) it: occupied, same
//! generation, same type id, in one comparison. Generations only grow and a slot retires
//! before its generation could wrap, so a stale key stays stale forever.

mod entry;
mod iter;
#[cfg(feature = "serde")]
mod serde;

use alloc::collections::TryReserveError;
use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;
use core::ops::{Index, IndexMut};

use crate::bits::{BitSet, Bits};
use crate::error::{InsertError, InsertErrorKind};
use crate::key::{Handle, Key};
use crate::slot::{self, FreeList, Links, Tag, Unresolved};
use entry::Entry;

pub use iter::{Drain, IntoIter, Iter, IterMut, IterMutIn, Keys, Values, ValuesMut};

/// Which vacant slot a [`Pool`] fills next; see [`Pool::with_reuse`].
///
/// ```
/// use dod::pool::Reuse;
/// use dod::Pool;
///
/// let mut fifo = Pool::new(); // Reuse::Fifo, the default
/// let mut lowest = Pool::new().with_reuse(Reuse::LowestFirst);
/// for pool in [&mut fifo, &mut lowest] {
///     let keys: Vec<_> = (0..4).map(|i| pool.insert(i)).collect();
///     pool.remove(keys[2]);
///     pool.remove(keys[0]);
/// }
/// assert_eq!(fifo.insert(9).index(), 2); // the slot vacated first
/// assert_eq!(lowest.insert(9).index(), 0); // the lowest hole
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(::serde::Serialize, ::serde::Deserialize))]
pub enum Reuse {
    /// The slot vacated longest ago, once more than [`min_free`](Pool::min_free) slots are
    /// vacant (Bitsquid's FIFO freelist with "keep N free"). Insertion pops the freelist in
    /// O(1), with no search.
    ///
    /// Every vacant slot takes its turn, so the generations spread over all of them: a churn
    /// of one removal per insertion with N slots kept vacant has N + 1 slots take turns, so
    /// each slot lives N + 1 times longer before it retires, and a freed index stays unused
    /// for a while (which helps when indices are logged or sent over the network). Pick it
    /// when items come and go all the time, above all with [`Handle32`](crate::Handle32)
    /// keys.
    #[default]
    Fifo,
    /// The lowest vacant slot, found in the alive flags in O(log₆₄ n).
    ///
    /// Live items stay packed at the low indices, so iteration walks fewer words of flags and
    /// fewer cache lines of items. But a slot that is refilled at every churn (a bullet spawned
    /// and destroyed each frame beside long-lived items) burns one generation each time and
    /// retires after 65 535 uses. Pick it when the pool mostly grows and shrinks in bulk and
    /// dense iteration matters most. [`min_free`](Pool::min_free) does not apply.
    LowestFirst,
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
/// # Which hole is filled
///
/// By default ([`Reuse::Fifo`]) the hole left longest ago, after keeping
/// [`min_free`](Pool::min_free) holes back: O(1), and the generations spread over every hole,
/// so slots retire late. [`Reuse::LowestFirst`] fills the lowest hole, which keeps the items
/// packed at the low indices for iteration; see [`Reuse`] for when each fits and
/// [`with_reuse`](Pool::with_reuse) to choose. When the key type cannot address another slot,
/// a hole is filled whatever the policy.
///
/// # Memory
///
/// Per slot, `max(size_of::<T>(), 4) + 4` bytes (the item, or in a hole the freelist link,
/// beside a 4-byte tag) rounded up to `max(align_of::<T>(), 4)`: 8 bytes for a `u8`, a `u32`
/// or a `()`, 12 for a `[u8; 5]`, 16 for a `u64`, 24 for a `[u64; 2]`. That is what a tag
/// beside the bare item takes for every `T` of at least one byte (the link lives in the hole's
/// unused item bytes); only zero-sized items pay 4 bytes for it. Plus about 0.13 bytes of
/// flags per slot ([`BitSet::memory_usage`]), and with [`Reuse::LowestFirst`] a second set of
/// flags once a slot has retired.
///
/// | operation | cost |
/// |---|---|
/// | `get`, `get_mut`, `contains`, `remove`, `pool[key]` | O(1) |
/// | `insert` | O(1) with [`Reuse::Fifo`], O(log₆₄ n) with [`Reuse::LowestFirst`]; amortized O(1) to grow |
/// | iteration | O(live items + non-empty words of flags) |
///
/// # Threads
///
/// A `Pool<T, K>` is `Send` exactly when `T` is, and `Sync` exactly when `T` is, as a
/// `Vec<T>`:
///
/// ```
/// fn is_send<X: Send>() {}
/// is_send::<dod::Pool<std::cell::Cell<u8>>>();
/// ```
///
/// ```compile_fail,E0277
/// fn is_send<X: Send>() {}
/// is_send::<dod::Pool<std::rc::Rc<u8>>>();
/// ```
///
/// ```compile_fail,E0277
/// fn is_sync<X: Sync>() {}
/// is_sync::<dod::Pool<std::cell::Cell<u8>>>();
/// ```
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
    slots: Vec<Entry<T>>,
    alive: BitSet,
    /// The slots that hold no item (invariant 1); `len()` is `slots.len() - vacant`.
    vacant: usize,
    reuse: Reuse,
    /// The FIFO freelist (invariant 3); empty but for `min_free` under `LowestFirst`.
    free: FreeList,
    /// `alive ∪ retired` under `LowestFirst` once a slot has retired (invariant 4).
    blocked: Option<BitSet>,
    /// A lower bound on the lowest hole under `LowestFirst` (invariant 4).
    first_hole: usize,
    type_id: u16,
    /// `K::MAX_SLOTS` under `Fifo`, 0 under `LowestFirst` (invariant 5).
    append_below: u32,
    _key: PhantomData<fn(K) -> K>,
}

/// The pool's `append_below` under `reuse` (invariant 5).
const fn append_below<K: Key>(reuse: Reuse) -> u32 {
    match reuse {
        Reuse::Fifo => K::MAX_SLOTS,
        Reuse::LowestFirst => 0,
    }
}

/// `Pool<T, K>` is `Send` and `Sync` through the auto traits, never an `unsafe impl`: these
/// fail to compile if a field ever stops passing them on from `T`.
#[allow(dead_code)]
fn pool_is_send_and_sync_when_its_items_are<'a, S: Send + 'a, Y: Sync + 'a, K: Key>() {
    fn is_send<X: Send>() {}
    fn is_sync<X: Sync>() {}
    is_send::<Pool<S, K>>();
    is_sync::<Pool<Y, K>>();
    is_send::<IntoIter<S, K>>();
    is_send::<Iter<'a, Y, K>>();
    is_send::<IterMut<'a, S, K>>();
    is_send::<Drain<'a, S, K>>();
}

/// The FIFO freelist's links, in the pool's vacant entries, read and written without an
/// index or vacancy check: `self.free` is the only user of this impl (`Entry` is private to
/// the pool), and it is only ever handed `self.slots` and asked about a slot it links (vacant,
/// not retired and in bounds: invariant 3) or about the slot `i` a pool path is linking, which
/// every caller of `push_back` and `push_back_unlinked` has just found or made vacant in
/// `self.slots`. Checked, the two tests cost a removal about 10 % of its time at 100 000
/// items, and a `clear` about a quarter.
impl<T> Links for [Entry<T>] {
    #[inline]
    #[allow(unsafe_code)]
    fn next(&self, i: u32) -> u32 {
        debug_assert!(self[i as usize].tag().is_vacant());
        // SAFETY: `i` is a slot the freelist links or is linking, so it is in bounds and its
        // entry is vacant (see the impl's comment).
        unsafe { self.get_unchecked(i as usize).next_unchecked() }
    }
    #[inline]
    #[allow(unsafe_code)]
    fn set_next(&mut self, i: u32, next: u32) {
        debug_assert!(self[i as usize].tag().is_vacant());
        // SAFETY: as in `next`: `i` is in bounds and its entry vacant.
        unsafe { self.get_unchecked_mut(i as usize).set_next_unchecked(next) }
    }
}

impl<T> Pool<T, Handle> {
    /// An empty pool with [`Handle`] keys and [`Reuse::Fifo`]. Allocates no slot.
    ///
    /// ```
    /// let pool: dod::Pool<u32> = dod::Pool::new();
    /// assert!(pool.is_empty());
    /// assert_eq!(pool.memory_usage(), 0);
    /// const EMPTY: dod::Pool<u8> = dod::Pool::new();
    /// ```
    pub const fn new() -> Self {
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
    pub const fn with_key() -> Self {
        Pool {
            slots: Vec::new(),
            alive: BitSet::new(),
            vacant: 0,
            reuse: Reuse::Fifo,
            free: FreeList::new(),
            blocked: None,
            first_hole: usize::MAX,
            type_id: 0,
            append_below: append_below::<K>(Reuse::Fifo),
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
        slot::check_type_id::<K>("Pool", type_id);
        assert!(
            self.slots.is_empty(),
            "Pool::with_type_id: the pool has handed out keys already; set the type id right \
             after construction"
        );
        self.type_id = type_id;
        self
    }

    /// The pool with reuse policy `reuse`: builder form of [`set_reuse`](Pool::set_reuse).
    /// O(1) right after construction.
    ///
    /// [`Reuse::Fifo`] (the default) fills the hole left longest ago and spreads generations
    /// over the holes; [`Reuse::LowestFirst`] fills the lowest hole and keeps the items packed
    /// low. See [`Reuse`] for when each fits.
    ///
    /// ```
    /// use dod::pool::Reuse;
    /// let mut pool = dod::Pool::new().with_reuse(Reuse::LowestFirst);
    /// let a = pool.insert('a');
    /// let b = pool.insert('b');
    /// pool.remove(b);
    /// pool.remove(a);
    /// assert_eq!(pool.insert('c').index(), 0); // the lowest hole, not the oldest
    /// ```
    pub fn with_reuse(mut self, reuse: Reuse) -> Self {
        self.set_reuse(reuse);
        self
    }

    /// Switches the reuse policy; allowed at any time. Every key stays valid and every stale
    /// key stale. O(slots) when the policy changes (the freelist or the search state is
    /// rebuilt from the slots), O(1) otherwise.
    ///
    /// Switching to [`Reuse::Fifo`] queues the current holes in slot order: the oldest-first
    /// order applies to the holes made from then on.
    ///
    /// ```
    /// use dod::pool::Reuse;
    /// let mut pool = dod::Pool::new();
    /// let keys: Vec<_> = (0..4).map(|i| pool.insert(i)).collect();
    /// pool.remove(keys[3]);
    /// pool.remove(keys[1]);
    /// pool.set_reuse(Reuse::LowestFirst);
    /// assert_eq!(pool.reuse(), Reuse::LowestFirst);
    /// assert_eq!(pool.insert(9).index(), 1);
    /// assert_eq!(pool.get(keys[0]), Some(&0));
    /// ```
    pub fn set_reuse(&mut self, reuse: Reuse) {
        if reuse == self.reuse {
            return;
        }
        self.reuse = reuse;
        self.append_below = append_below::<K>(reuse);
        self.free.clear();
        match reuse {
            Reuse::Fifo => {
                self.blocked = None;
                self.first_hole = usize::MAX;
                for i in 0..self.slots.len() {
                    let tag = self.slots[i].tag();
                    if tag.is_vacant() && !tag.is_retired() {
                        self.free.push_back(self.slots.as_mut_slice(), i as u32);
                    }
                }
            }
            Reuse::LowestFirst => {
                self.first_hole = 0;
                self.blocked = self.retired_or_alive();
            }
        }
    }

    /// `alive ∪ retired` if a slot is retired, for `blocked` (invariant 4). O(slots).
    fn retired_or_alive(&self) -> Option<BitSet> {
        let mut blocked: Option<BitSet> = None;
        for (i, e) in self.slots.iter().enumerate() {
            if e.tag().is_retired() {
                blocked
                    .get_or_insert_with(|| self.alive.clone())
                    .insert(i as u32);
            }
        }
        blocked
    }

    /// The reuse policy.
    ///
    /// ```
    /// assert_eq!(dod::Pool::<u8>::new().reuse(), dod::pool::Reuse::Fifo);
    /// ```
    #[inline]
    pub fn reuse(&self) -> Reuse {
        self.reuse
    }

    /// Keeps at least `min_free` holes vacant before one is filled: builder form of
    /// [`set_min_free`](Pool::set_min_free).
    ///
    /// ```
    /// let mut pool = dod::Pool::new().with_min_free(2);
    /// let a = pool.insert(1);
    /// pool.remove(a);
    /// let b = pool.insert(2);
    /// assert_ne!(a.index(), b.index()); // the hole is kept back
    /// ```
    pub fn with_min_free(mut self, min_free: u32) -> Self {
        self.set_min_free(min_free);
        self
    }

    /// Keeps at least `min_free` holes vacant before one is filled ([`Reuse::Fifo`] only;
    /// [`Reuse::LowestFirst`] keeps the setting but does not apply it). O(1).
    ///
    /// This is Bitsquid's "keep N free": a freed slot is not refilled before N other slots
    /// have been freed after it, so a churn spreads its generations over N + 1 slots or more
    /// and each slot retires N + 1 times later. Stale keys are refused
    /// whatever the setting (a slot retires instead of wrapping). When the key type cannot
    /// address another slot, holes are filled anyway rather than failing.
    ///
    /// ```
    /// let mut pool = dod::Pool::<u32>::new();
    /// pool.set_min_free(64);
    /// assert_eq!(pool.min_free(), 64);
    /// ```
    pub fn set_min_free(&mut self, min_free: u32) {
        self.free.set_min_free(min_free);
    }

    /// How many holes are kept vacant before one is filled. O(1).
    ///
    /// ```
    /// assert_eq!(dod::Pool::<u8>::new().min_free(), 0);
    /// ```
    #[inline]
    pub fn min_free(&self) -> u32 {
        self.free.min_free()
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
        self.slots.len() - self.vacant
    }

    /// Whether the pool holds no item. O(1).
    ///
    /// ```
    /// let pool = dod::Pool::<u8>::new();
    /// assert!(pool.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.slots.len() == self.vacant
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

    /// Bytes held on the heap: per allocated slot the item (or the link of a hole) and a
    /// 4-byte tag, as in the [type docs](Pool#memory); plus the alive flags and their summaries
    /// ([`BitSet::memory_usage`]), and under [`Reuse::LowestFirst`] a second set of the same
    /// size once a slot has retired. O(log₆₄ n).
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
        self.slots.capacity() * core::mem::size_of::<Entry<T>>()
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

    /// Reserves room for `additional` more items: the holes the next insertions will fill are
    /// counted, retired slots and the holes kept back by [`min_free`](Pool::min_free) are not.
    /// O(1) with [`Reuse::Fifo`]; O(n / 64) with [`Reuse::LowestFirst`] once a slot has
    /// retired; O(n) when it reallocates.
    ///
    /// The slots and their alive flags are reserved together, so that filling the capacity
    /// allocates nothing.
    ///
    /// ```
    /// let mut pool = dod::Pool::<u8>::new();
    /// pool.reserve(10);
    /// assert!(pool.capacity() >= 10);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.slots.reserve(self.new_slots_for(additional));
        self.reserve_flags();
    }

    /// [`reserve`](Pool::reserve), or an error if the capacity would overflow or the
    /// allocator refuses. On an error the pool holds the same items, keys and holes, and may
    /// have more room for slots than before. Complexity as `reserve`.
    ///
    /// ```
    /// let mut pool = dod::Pool::<u8>::new();
    /// assert!(pool.try_reserve(10).is_ok());
    /// assert!(pool.capacity() >= 10);
    /// assert!(pool.try_reserve(usize::MAX).is_err());
    /// ```
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), TryReserveError> {
        self.slots.try_reserve(self.new_slots_for(additional))?;
        let slots = self.slots.capacity();
        self.alive.try_reserve_universe(slots)?;
        if let Some(b) = &mut self.blocked {
            b.try_reserve_universe(slots)?;
        }
        Ok(())
    }

    /// Makes room in the alive flags (and `blocked`) for every slot the capacity holds, so
    /// that appending slots up to it allocates nothing.
    fn reserve_flags(&mut self) {
        let slots = self.slots.capacity();
        self.alive.reserve_universe(slots);
        if let Some(b) = &mut self.blocked {
            b.reserve_universe(slots);
        }
    }

    /// How many slots past the existing ones `additional` more items need.
    fn new_slots_for(&self, additional: usize) -> usize {
        let reusable = match self.reuse {
            Reuse::Fifo => self.free.reusable() as usize,
            // `blocked` is alive ∪ retired: the slots an insertion cannot use.
            Reuse::LowestFirst => {
                self.slots.len() - self.blocked.as_ref().map_or(self.len(), BitSet::count)
            }
        };
        additional.saturating_sub(reusable)
    }

    /// Releases unused capacity. The slots stay, holes included: items stay put, and each
    /// slot remembers its generation, which is what keeps every old handle stale. O(n).
    ///
    /// ```
    /// let mut pool = dod::Pool::with_capacity(1_000);
    /// let a = pool.insert(1);
    /// pool.remove(a);
    /// pool.shrink_to_fit();
    /// assert!(pool.capacity() < 1_000);
    /// assert_eq!(pool.get(a), None);
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.slots.shrink_to_fit();
        self.alive.shrink_to_fit();
        if let Some(blocked) = &mut self.blocked {
            blocked.shrink_to_fit();
        }
    }

    /// The alive flags: bit `i` is set iff slot `i` holds an item. Combine them with your own
    /// masks to walk a subset without touching the other items; to change the items of a
    /// subset, use [`iter_mut_in`](Self::iter_mut_in). Your masks are yours to keep in step:
    /// clear an item's bits when you remove it, or a later item in the same slot inherits
    /// them. O(1).
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

    /// Inserts `value` into a hole chosen by the [reuse policy](Reuse), or a new slot, and
    /// returns its key. O(1) with [`Reuse::Fifo`], O(log₆₄ n) with [`Reuse::LowestFirst`];
    /// amortized O(1) to grow.
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
            Err(_) => slot::full_panic::<K>("Pool"),
        }
    }

    /// Inserts `value` and returns its key, or gives it back in an [`InsertError`] when the
    /// key type cannot address another slot. O(1) with [`Reuse::Fifo`], O(log₆₄ n) with
    /// [`Reuse::LowestFirst`].
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
        // The common FIFO cases inline, in the order `claim` decides them: pop the oldest
        // hole past `min_free`, or append a slot that is born occupied (no vacant entry is
        // written and then filled).
        if self.free.len() > self.free.min_free() {
            // Under `LowestFirst` the list is empty (invariant 4), so this is `Fifo`; linked
            // slots are vacant and not retired (invariant 3).
            debug_assert!(self.reuse == Reuse::Fifo);
            let i = self.free.pop_front(self.slots.as_slice()) as usize;
            let tag = self.slots[i].fill(value);
            self.alive.set_bit(i);
            self.vacant -= 1;
            return Ok(tag.key(i as u32));
        }
        if (self.slots.len() as u64) < u64::from(self.append_below) {
            return Ok(self.push_item(value));
        }
        match self.claim() {
            Some(i) => Ok(self.fill(i, value)),
            None => Err(InsertError::new(InsertErrorKind::Full, value)),
        }
    }

    /// Appends a slot holding `value` at the first generation, under [`Reuse::Fifo`]
    /// (`slots.len()` is below `K::MAX_SLOTS`, checked by the caller).
    #[inline(always)]
    fn push_item(&mut self, value: T) -> K {
        debug_assert!(self.reuse == Reuse::Fifo && self.blocked.is_none());
        let i = self.slots.len();
        let tag = Tag::born(self.type_id);
        self.slots.push(Entry::occupied(tag, value));
        // `i` is the universe of `alive` (invariant 1), which this grows by one.
        self.alive.push_set(i);
        // Born occupied: `vacant` stays as it is.
        tag.key(i as u32)
    }

    /// Inserts every item of `items`, reserving room once, and returns their keys in order.
    /// O(n) amortised with [`Reuse::Fifo`], O(n log₆₄ slots) with [`Reuse::LowestFirst`].
    ///
    /// # Panics
    ///
    /// If the key type cannot address another slot; the items inserted before stay.
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let keys = pool.insert_many(["a", "b", "c"]);
    /// assert_eq!(keys.iter().map(|&k| pool[k]).collect::<Vec<_>>(), ["a", "b", "c"]);
    /// ```
    #[track_caller]
    pub fn insert_many(&mut self, items: impl IntoIterator<Item = T>) -> Vec<K> {
        let iter = items.into_iter();
        let (lower, _) = iter.size_hint();
        self.reserve(lower);
        let mut keys = Vec::with_capacity(lower);
        for item in iter {
            keys.push(self.insert(item));
        }
        keys
    }

    /// Inserts the item that `f` makes from its own key, so an item can store the key that
    /// names it. O(1) with [`Reuse::Fifo`], O(log₆₄ n) with [`Reuse::LowestFirst`].
    ///
    /// # Panics
    ///
    /// If the key type cannot address another slot; `f` is not called then. If `f` panics, the
    /// pool holds what it held, and the chosen slot is spent as if an item had been inserted
    /// and removed: its generation is used up and it rejoins the holes as a removed item's
    /// slot does (under [`Reuse::Fifo`], last), or retires.
    ///
    /// ```
    /// use dod::{Handle, Pool};
    /// struct Node { me: Handle }
    /// let mut pool = Pool::new();
    /// let h = pool.insert_with_key(|me| Node { me });
    /// assert_eq!(pool[h].me, h);
    /// ```
    #[track_caller]
    pub fn insert_with_key(&mut self, f: impl FnOnce(K) -> T) -> K {
        let Some(i) = self.claim() else {
            slot::full_panic::<K>("Pool")
        };
        /// Puts the claimed slot back if the key type or `f` panics.
        struct Unclaim<'a, T, K: Key> {
            pool: &'a mut Pool<T, K>,
            slot: usize,
        }
        impl<T, K: Key> Drop for Unclaim<'_, T, K> {
            fn drop(&mut self) {
                self.pool.unclaim(self.slot);
            }
        }
        let guard = Unclaim {
            pool: self,
            slot: i,
        };
        // The key the slot's next item gets (the slot is vacant and not retired), made under
        // the guard: the key type is user code too.
        let tag = guard.pool.slots[i].tag();
        let key = tag.occupy().unwrap_or(tag).key(i as u32);
        let value = f(key);
        core::mem::forget(guard);
        let filled = self.fill(i, value);
        debug_assert_eq!(filled, key);
        key
    }

    /// Gives back a slot that [`claim`](Pool::claim) returned and that was not filled: it
    /// spends the generation its item would have had, and rejoins the holes (or retires).
    #[cold]
    fn unclaim(&mut self, i: usize) {
        // Filling and emptying the slot with a unit-like stand-in is not possible for any `T`,
        // so the tag moves on by hand, by the slot rules: occupy, then vacate.
        let tag = self.slots[i].tag();
        let spent = tag.occupy().unwrap_or(tag).vacate();
        self.slots[i] = Entry::vacant(spent);
        self.vacated(i, spent);
    }

    /// Picks the slot for the next item by the reuse policy: vacant and not retired, or new;
    /// `None` if the key type cannot address another slot.
    #[inline(always)]
    fn claim(&mut self) -> Option<usize> {
        match self.reuse {
            Reuse::Fifo => {
                let can_grow = (self.slots.len() as u64) < u64::from(K::MAX_SLOTS);
                if self.free.should_reuse(can_grow) {
                    // Linked slots are vacant and not retired (invariant 3).
                    Some(self.free.pop_front(self.slots.as_slice()) as usize)
                } else if can_grow {
                    Some(self.push_slot())
                } else {
                    None
                }
            }
            Reuse::LowestFirst => match self.hole_near_hint() {
                Some(i) => Some(i),
                None => self.find_slot(),
            },
        }
    }

    /// The flags that vacant slots are searched in (invariant 4).
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
        if self.slots.len() as u64 >= u64::from(K::MAX_SLOTS) {
            return None;
        }
        Some(self.push_slot())
    }

    /// Appends a vacant slot that never held an item.
    fn push_slot(&mut self) -> usize {
        let i = self.slots.len();
        self.slots.push(Entry::vacant(Tag::vacant(0, self.type_id)));
        self.vacant += 1;
        self.alive.grow(i + 1);
        if let Some(b) = &mut self.blocked {
            b.grow(i + 1);
        }
        i
    }

    /// Puts `value` into slot `i`, which [`claim`](Pool::claim) returned.
    #[inline(always)]
    fn fill(&mut self, i: usize, value: T) -> K {
        let tag = self.slots[i].fill(value);
        self.alive.set_bit(i);
        self.vacant -= 1;
        if self.reuse == Reuse::LowestFirst {
            if self.blocked.is_some() {
                self.block(i);
            }
            // `i` was the lowest hole, so the next one is above it; a full pool has none.
            self.first_hole = if self.vacant == 0 { usize::MAX } else { i + 1 };
        }
        tag.key(i as u32)
    }

    /// Marks slot `i` in `blocked` (invariant 4); out of line, as in `update_blocked`.
    #[cold]
    #[inline(never)]
    fn block(&mut self, i: usize) {
        if let Some(b) = &mut self.blocked {
            b.insert(i as u32);
        }
    }

    /// The slot index of `key` if it names a live item.
    #[inline]
    fn slot_of(&self, key: K) -> Option<usize> {
        let i = key.index() as usize;
        self.slots.get(i)?.is_named_by(key).then_some(i)
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
        self.slots.get(key.index() as usize)?.get_by(key)
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
        self.slots.get_mut(key.index() as usize)?.get_mut_by(key)
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
        let entries = self.slots.get_disjoint_mut(idx).ok()?;
        let items = entries.map(Entry::get_mut);
        if items.iter().any(Option::is_none) {
            return None;
        }
        Some(items.map(|v| v.expect("every slot was found occupied")))
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
        self.slots.get(index as usize)?.get()
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
        self.slots.get_mut(index as usize)?.get_mut()
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
        let e = self.slots.get(index as usize)?;
        e.is_occupied().then(|| e.tag().key(index))
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
    #[inline(always)]
    pub fn remove(&mut self, key: K) -> Option<T> {
        let i = key.index() as usize;
        let entry = self.slots.get_mut(i)?;
        let item = entry.take_named(key)?;
        let tag = entry.tag();
        self.alive.clear_bit(i);
        self.vacant += 1;
        self.vacated(i, tag);
        Some(item)
    }

    /// Removes the items of all `keys` and returns how many were really removed: stale and
    /// repeated keys are skipped. O(keys.len()).
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let keys = pool.insert_many(0..4);
    /// assert_eq!(pool.remove_many(&[keys[0], keys[0], keys[2]]), 2);
    /// assert_eq!(pool.len(), 2);
    /// ```
    pub fn remove_many(&mut self, keys: &[K]) -> usize {
        keys.iter().filter(|&&k| self.remove(k).is_some()).count()
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
        if (index as usize) < self.slots.len() {
            self.take(index as usize)
        } else {
            None
        }
    }

    /// Empties slot `i` (below `slots.len()`) and returns its item, or `None` if it is vacant:
    /// the slot is vacant and the pool valid before the item reaches the caller, so a panic in
    /// its `Drop` later cannot see it twice.
    #[inline(always)]
    fn take(&mut self, i: usize) -> Option<T> {
        let entry = &mut self.slots[i];
        let item = entry.take()?;
        let tag = entry.tag();
        self.alive.clear_bit(i);
        self.vacant += 1;
        self.vacated(i, tag);
        Some(item)
    }

    /// Joins slot `i`, just vacated at `tag`, to the holes of the reuse policy, or retires it.
    #[inline(always)]
    fn vacated(&mut self, i: usize, tag: Tag) {
        // `tag` is vacant: it is retired iff its generation is the last.
        let retire = tag.generation() == u16::MAX;
        debug_assert_eq!(retire, tag.is_retired());
        match self.reuse {
            Reuse::Fifo => {
                if !retire {
                    // Every vacating path (`Entry::take`, `Entry::vacant`) links the slot to
                    // nothing.
                    self.free
                        .push_back_unlinked(self.slots.as_mut_slice(), i as u32);
                }
            }
            Reuse::LowestFirst => self.vacated_lowest_first(i, retire),
        }
    }

    /// [`vacated`](Pool::vacated) under [`Reuse::LowestFirst`]; out of line so that the
    /// default policy's removal stays small enough to inline into its callers.
    #[inline(never)]
    fn vacated_lowest_first(&mut self, i: usize, retire: bool) {
        self.first_hole = self.first_hole.min(i);
        if retire || self.blocked.is_some() {
            self.update_blocked(i, retire);
        }
    }

    /// Keeps `blocked` equal to `alive ∪ retired` after slot `i` was emptied (invariant 4);
    /// out of line, since no slot is retired in the common case.
    #[cold]
    #[inline(never)]
    fn update_blocked(&mut self, i: usize, retire: bool) {
        match &mut self.blocked {
            // A retiring slot stays blocked; it may not have been (a slot claimed by
            // `insert_with_key` and given back).
            Some(b) if retire => {
                b.insert(i as u32);
            }
            Some(b) => {
                b.remove(i as u32);
            }
            None => {
                let mut b = self.alive.clone();
                b.insert(i as u32);
                self.blocked = Some(b);
            }
        }
    }

    /// Takes out and drops every item in slots `from..`, in slot order. If an item's `Drop`
    /// panics, the rest are still taken out and dropped while the panic unwinds (as `Vec`'s
    /// drop does; a second panicking `Drop` aborts, as there), so either way the pool ends
    /// valid with no item from `from` on and none is leaked.
    fn drop_from(&mut self, from: u32) {
        /// Finishes the loop from `from` when a `Drop` unwinds out of it.
        struct Rest<'a, T, K: Key> {
            pool: &'a mut Pool<T, K>,
            from: u32,
        }
        impl<T, K: Key> Drop for Rest<'_, T, K> {
            fn drop(&mut self) {
                self.pool.drop_from(self.from);
            }
        }
        let mut from = from;
        while let Some(i) = self.alive.next_one(from) {
            // Slot indices are below `K::MAX_SLOTS <= u32::MAX`, so this does not overflow.
            from = i + 1;
            let item = self.take(i as usize);
            let rest = Rest { pool: self, from };
            drop(item);
            core::mem::forget(rest);
        }
    }

    /// Keeps the items for which `f` returns `true` and removes the others; nothing moves.
    /// O(slots / 64 + len).
    ///
    /// If `f` or the `Drop` of a removed item panics, the items not yet visited stay and the
    /// pool remains valid (as with `Vec::retain`).
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
            let entry = &mut self.slots[i as usize];
            let key = entry.tag().key(i);
            let keep = match entry.get_mut() {
                Some(v) => f(key, v),
                None => true,
            };
            if !keep {
                drop(self.take(i as usize));
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

    /// Removes every item, in slot order; every key goes stale. The slots stay (with their
    /// generations) and become holes. O(slots / 64 + len).
    ///
    /// If an item's `Drop` panics, the others are still dropped and the pool is left empty
    /// before the panic goes on, as with `Vec::clear`.
    ///
    /// ```
    /// let mut pool = dod::Pool::new();
    /// let h = pool.insert(1);
    /// pool.clear();
    /// assert!(pool.is_empty());
    /// assert_eq!(pool.get(h), None);
    /// ```
    pub fn clear(&mut self) {
        match self.reuse {
            Reuse::Fifo => self.clear_fifo(),
            // Its holes feed `blocked`, which must follow `alive` item by item.
            Reuse::LowestFirst => self.drop_from(0),
        }
    }

    /// [`clear`](Pool::clear) under [`Reuse::Fifo`]: one pass over the words of the alive
    /// flags, each item taken out and its slot queued in slot order, then the flags zeroed at
    /// once. Panic safety costs nothing until a `Drop` unwinds: then the guard clears the
    /// flags of the slots already emptied and hands the rest to `drop_from`.
    fn clear_fifo(&mut self) {
        /// Finishes the clear from slot `next` when a `Drop` unwinds out of the loop; the
        /// slots below `next` are vacant and queued (in `free`, the loop's copy of the
        /// freelist) but still flagged.
        struct Rest<'a, T, K: Key> {
            pool: &'a mut Pool<T, K>,
            free: FreeList,
            next: usize,
        }
        impl<T, K: Key> Drop for Rest<'_, T, K> {
            fn drop(&mut self) {
                let pool = &mut *self.pool;
                pool.free = self.free.clone();
                // `next` is at most the slot count, itself at most `K::MAX_SLOTS`.
                let next = self.next as u32;
                pool.alive.remove_range(..next);
                pool.vacant = pool.slots.len() - pool.alive.count();
                pool.drop_from(next);
            }
        }
        /// Takes the item out of slot `i`, queues the slot unless it is retired, and moves
        /// `next` past it.
        ///
        /// # Safety
        ///
        /// Slot `i` is in bounds and occupied, and `free` links only vacant slots of `slots`.
        #[inline(always)]
        #[allow(unsafe_code)]
        unsafe fn take_one<T>(
            slots: &mut [Entry<T>],
            free: &mut FreeList,
            i: usize,
            next: &mut usize,
        ) {
            // SAFETY: the caller guarantees `i` is in bounds. Unchecked, the loops have no
            // panic path when `T` has no `Drop`, so the freelist's ends stay in registers.
            let entry = unsafe { slots.get_unchecked_mut(i) };
            // SAFETY: the caller guarantees the entry is occupied.
            let item = unsafe { entry.take_unchecked() };
            if !entry.tag().is_retired() {
                // `take` links the slot to nothing.
                free.push_back_unlinked(slots, i as u32);
            }
            *next = i + 1;
            drop(item);
        }
        /// The loop, over disjoint borrows and a local copy of the freelist, so that the
        /// freelist's ends stay in registers. A full word's 64 slots are taken in a counted
        /// loop: a full pool, the usual one to clear, then costs no bit walk (its dependent
        /// trailing-zeros chain and the mispredicted exit at each word's end).
        #[inline(always)]
        #[allow(unsafe_code)]
        fn take_all<T>(
            slots: &mut [Entry<T>],
            free: &mut FreeList,
            alive: &[u64],
            next: &mut usize,
        ) {
            // Each index below is in the alive flags, so it is below `slots.len()` and its
            // slot is occupied (invariant 1: the flags' universe is the slot count, and a
            // bit set has no bit at or past its universe, so a full word lies wholly below
            // it); the flags are zeroed only after the loop, and the loop visits each index
            // once, so the slot is still occupied when visited. `free` is the loop's copy
            // of the pool's freelist, which links vacant slots only, and each slot joins it
            // once vacated.
            for (w, &word) in alive.iter().enumerate() {
                if word == u64::MAX {
                    for i in w << 6..(w + 1) << 6 {
                        // SAFETY: `i` is in the alive flags (its word is full): see above.
                        unsafe { take_one(slots, free, i, next) };
                    }
                    continue;
                }
                let mut bits = word;
                while bits != 0 {
                    let i = (w << 6) | bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    // SAFETY: `i` is in the alive flags (its bit is set): see above.
                    unsafe { take_one(slots, free, i, next) };
                }
            }
        }
        let mut rest = Rest {
            free: self.free.clone(),
            pool: self,
            next: 0,
        };
        let pool = &mut *rest.pool;
        take_all(
            pool.slots.as_mut_slice(),
            &mut rest.free,
            pool.alive.as_words(),
            &mut rest.next,
        );
        rest.pool.free = rest.free.clone();
        core::mem::forget(rest);
        self.alive.clear();
        self.vacant = self.slots.len();
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
    /// // Any expression: every item not a bullet (the complement holds every other slot).
    /// let others: Vec<i32> = pool.iter_mut_in(!&bullets).map(|(_, v)| *v).collect();
    /// assert_eq!(others, [10, 30, 50]);
    /// assert_eq!(pool.iter_mut_in(!&BitSet::new()).count(), 6);
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

    /// Checks every invariant of the module header, panicking on the first that fails; for
    /// tests and fuzzing. O(slots).
    #[doc(hidden)]
    pub fn assert_invariants(&self) {
        self.alive.assert_invariants();
        assert_eq!(
            self.alive.universe(),
            self.slots.len(),
            "flags cover the slots"
        );
        assert_eq!(
            self.alive.count(),
            self.slots.len() - self.vacant,
            "vacant slots"
        );
        assert!(
            self.slots.len() as u64 <= u64::from(K::MAX_SLOTS),
            "more slots than the key type addresses"
        );
        assert_eq!(
            self.append_below,
            append_below::<K>(self.reuse),
            "append_below"
        );
        let mut retired = BitSet::with_universe(self.slots.len());
        let mut reusable = 0usize;
        for (i, e) in self.slots.iter().enumerate() {
            let tag = e.tag();
            assert_eq!(
                self.alive.contains(i as u32),
                e.is_occupied(),
                "flag of slot {i}"
            );
            assert_eq!(tag.type_id(), self.type_id, "type id of slot {i}");
            if e.is_occupied() {
                assert_ne!(tag.generation(), 0, "generation of slot {i}");
            } else if tag.is_retired() {
                retired.insert(i as u32);
            } else {
                reusable += 1;
            }
        }
        match self.reuse {
            Reuse::Fifo => {
                assert!(self.blocked.is_none(), "no blocked set under Fifo");
                self.free
                    .assert_invariants(self.slots.as_slice(), self.slots.len(), |i| {
                        let t = self.slots[i as usize].tag();
                        t.is_vacant() && !t.is_retired()
                    });
                assert_eq!(
                    self.free.len() as usize,
                    reusable,
                    "every reusable hole is linked"
                );
            }
            Reuse::LowestFirst => {
                assert_eq!(self.free.len(), 0, "no freelist under LowestFirst");
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
        }
    }

    /// Explains why `key` does not resolve, for the `Index` panic.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn invalid_key(&self, key: K) -> ! {
        Unresolved {
            container: "Pool",
            type_id: self.type_id,
            slot_count: self.slots.len(),
            slot: self.slots.get(key.index() as usize).map(Entry::tag),
            first_generation: 1,
        }
        .panic(key)
    }
}

impl<T: Clone, K: Key> Clone for Pool<T, K> {
    /// A deep copy with the same keys, holes, generations and reuse order. If an item's
    /// `clone` panics, the clones made so far are dropped. O(slots).
    ///
    /// ```
    /// let mut a = dod::Pool::new();
    /// let h = a.insert(String::from("x"));
    /// let b = a.clone();
    /// assert_eq!(b[h], "x");
    /// ```
    fn clone(&self) -> Self {
        Pool {
            slots: self.slots.clone(),
            alive: self.alive.clone(),
            vacant: self.vacant,
            reuse: self.reuse,
            free: self.free.clone(),
            blocked: self.blocked.clone(),
            first_hole: self.first_hole,
            type_id: self.type_id,
            append_below: self.append_below,
            _key: PhantomData,
        }
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
            Some(i) => match self.slots[i].get_mut() {
                Some(v) => v,
                None => unreachable!("slot_of found the slot occupied"),
            },
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
    use alloc::vec;

    #[test]
    #[cfg_attr(miri, ignore = "65 535 rounds; exercised natively")]
    fn generations_retire_the_slot() {
        for reuse in [Reuse::Fifo, Reuse::LowestFirst] {
            let mut p: Pool<u32, Handle32> = Pool::with_key().with_reuse(reuse);
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
            // A retired slot stays out through a switch of policy.
            p.set_reuse(match reuse {
                Reuse::Fifo => Reuse::LowestFirst,
                Reuse::LowestFirst => Reuse::Fifo,
            });
            p.assert_invariants();
            p.remove(again);
            assert_eq!(p.insert(9).index(), 1);
            p.assert_invariants();
        }
    }

    #[test]
    fn fifo_reuses_the_oldest_hole() {
        let mut p = Pool::new();
        let hs: Vec<Handle> = (0..4).map(|i| p.insert(i)).collect();
        p.remove(hs[2]);
        p.remove(hs[0]);
        p.remove(hs[3]);
        let got: Vec<u32> = (0..3).map(|i| p.insert(i).index()).collect();
        assert_eq!(got, [2, 0, 3]);
        p.assert_invariants();
    }

    #[test]
    fn min_free_holds_holes_back() {
        let mut p = Pool::new().with_min_free(3);
        let mut seen = vec![];
        for i in 0..20 {
            let h = p.insert(i);
            seen.push(h.index());
            p.remove(h);
            p.assert_invariants();
        }
        // A slot comes back only after three others have been vacated since.
        for w in seen.windows(4) {
            assert!(!w[1..].contains(&w[0]), "{seen:?}");
        }
        assert_eq!(p.slot_count(), 4);
    }

    #[test]
    fn switching_policy_rebuilds_the_holes() {
        let mut p = Pool::new();
        let hs: Vec<Handle> = (0..6).map(|i| p.insert(i)).collect();
        for i in [4, 1, 3] {
            p.remove(hs[i]);
        }
        p.set_reuse(Reuse::LowestFirst);
        p.assert_invariants();
        assert_eq!(p.insert(10).index(), 1);
        p.set_reuse(Reuse::Fifo);
        p.assert_invariants();
        // The holes left are queued in slot order.
        assert_eq!(p.insert(11).index(), 3);
        assert_eq!(p.insert(12).index(), 4);
        assert_eq!(p.insert(13).index(), 6);
        p.assert_invariants();
    }

    #[test]
    fn insert_with_key_gives_the_slot_back_on_panic() {
        for reuse in [Reuse::Fifo, Reuse::LowestFirst] {
            let mut p = Pool::<String>::new().with_reuse(reuse);
            let a = p.insert(String::from("a"));
            let r = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
                p.insert_with_key(|_| panic!("boom"));
            }));
            assert!(r.is_err());
            p.assert_invariants();
            assert_eq!(p.len(), 1);
            let b = p.insert_with_key(|k| alloc::format!("{k:?}"));
            assert_eq!(b.index(), 1);
            assert_eq!(
                b.generation(),
                2,
                "the aborted slot's generation was used up"
            );
            assert_eq!(p[b], alloc::format!("{b:?}"));
            assert_eq!(p[a], "a");
            p.assert_invariants();
        }
    }

    /// A key type whose construction panics in `insert_with_key`: the claimed slot goes back
    /// to the holes (a FIFO pool reuses it next), as when `f` panics.
    #[test]
    #[cfg(feature = "std")]
    fn insert_with_key_gives_the_slot_back_when_the_key_type_panics() {
        use crate::hostile::{refusing_keys, Hostile};
        for reuse in [Reuse::Fifo, Reuse::LowestFirst] {
            let mut p = Pool::<u32, Hostile>::with_key().with_reuse(reuse);
            let a = p.insert(10);
            p.insert(11);
            p.remove(a);
            let r = refusing_keys(|| p.insert_with_key(|_| 20));
            assert!(r.is_err());
            p.assert_invariants();
            assert_eq!(p.len(), 1);
            assert_eq!(p.insert(30).index(), 0, "the hole is reused ({reuse:?})");
            p.assert_invariants();
        }
    }

    /// A `Drain` whose key type panics mid-way still leaves the pool empty when dropped.
    #[test]
    #[cfg(feature = "std")]
    fn a_drain_whose_key_type_panics_leaves_the_pool_empty() {
        use crate::hostile::{refusing_keys, Hostile};
        let mut p = Pool::<u32, Hostile>::with_key();
        for i in 0..4 {
            p.insert(i);
        }
        let r = refusing_keys(|| p.drain().count());
        assert!(r.is_err());
        p.assert_invariants();
        assert!(p.is_empty(), "{} items left", p.len());
        assert_eq!(p.iter().count(), 0);
    }

    /// `f` panicking in `insert_with_key` spends the chosen slot as a removal would: the
    /// slot rejoins the holes last.
    #[test]
    #[cfg(feature = "std")]
    fn a_panicking_insert_with_key_spends_its_slot_as_a_removal_would() {
        let mut p = Pool::new();
        let ks: Vec<Handle> = (0..3).map(|i| p.insert(i)).collect();
        p.remove(ks[2]);
        p.remove(ks[0]);
        // Holes, oldest first: 2, 0. The failed insertion takes 2.
        let r = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
            p.insert_with_key(|_| -> i32 { panic!("no item") })
        }));
        assert!(r.is_err());
        p.assert_invariants();
        assert_eq!(p.len(), 1);
        let (a, b) = (p.insert(7), p.insert(8));
        assert_eq!((a.index(), b.index()), (0, 2));
        assert_eq!(b.generation(), ks[2].generation() + 2, "a generation spent");
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
    #[should_panic(expected = "a key of another Pool")]
    fn index_panics_on_other_type_id() {
        let mut a = Pool::new().with_type_id(1);
        let mut b: Pool<i32> = Pool::new().with_type_id(2);
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

    /// `with_capacity` and `try_reserve` reserve the alive flags with the slots: filling the
    /// room they made does not grow the pool's memory.
    #[test]
    fn filling_the_reserved_capacity_allocates_nothing() {
        for n in [1, 64, 65, 1000, 4097] {
            let mut pool: Pool<u32> = Pool::with_capacity(n);
            let held = pool.memory_usage();
            for i in 0..n as u32 {
                pool.insert(i);
            }
            assert_eq!(pool.memory_usage(), held, "{n} items into room for {n}");
            let more = pool.capacity() - pool.len() + 100;
            assert!(pool.try_reserve(more).is_ok());
            let held = pool.memory_usage();
            for i in 0..more as u32 {
                pool.insert(i);
            }
            assert_eq!(pool.memory_usage(), held, "{more} more after try_reserve");
            pool.assert_invariants();
        }
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
        let mut q = p.clone();
        q.assert_invariants();
        assert_eq!(q.get(b).map(String::as_str), Some("b"));
        assert_eq!(q.get(a), None);
        assert_eq!(
            q.insert(String::new()),
            p.insert(String::new()),
            "same next key"
        );
    }
}
