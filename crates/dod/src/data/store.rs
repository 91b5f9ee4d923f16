//! [`DataStore`]: the data components of many entities in one buffer.

use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;
use core::num::NonZeroU16;

use super::buddy::{block_size, order_for, Buddy, MAX_ORDER, MIN_SHIFT};
use super::raw;
use super::value::{Floats, Value};
use super::{DataKey, DataView, DecodeError};
use crate::key::{Handle, Key};

const MAGIC: [u8; 4] = *b"DODs";
const HEADER: usize = 24;
const NO_ARENA: u8 = 0xFF;

/// Where an entity's component lives: `tag` is the key's [`Key::tag`] (never 0 for a live
/// slot, 0 for an empty one); `loc` is the block offset with the block's order in its low 5
/// bits (blocks are 32-byte aligned).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Slot {
    tag: u32,
    loc: u32,
}

impl Slot {
    #[inline]
    fn block(self) -> (u32, u8) {
        (self.loc & !31, (self.loc & 31) as u8)
    }
}

/// "Where there is one, there are many": the [`DataComponent`](super::DataComponent)s of many
/// entities in ONE buffer, each growing and shrinking on its own.
///
/// Each entity's data is a component image (the same format as
/// [`DataComponent::as_bytes`](super::DataComponent::as_bytes)) in a power-of-two block of a
/// buddy allocator that lives inside the buffer: free lists per block size linked by offsets,
/// one bit per buddy pair and one split bit per non-leaf block. A component that outgrows its
/// block moves to a block at least twice as large and is re-packed; one that shrinks to a
/// quarter of its block moves down. When no block is free the buffer doubles. Once the buffer
/// has grown, setting values allocates nothing on the heap.
///
/// Entities are named by a [`Key`] (by default [`Handle`]): the store keeps the key's
/// generation and type id, so a stale handle of a dead entity whose index was reused reads
/// `None`. The slot table takes 8 bytes per index up to the largest index inserted.
///
/// [`to_bytes`](DataStore::to_bytes) saves the whole store as one header, the slot table and
/// one copy of the buffer; [`from_bytes`](DataStore::from_bytes) checks every block and every
/// component before anything reads them.
///
/// # Example
///
/// ```
/// use dod::data::DataStore;
/// use dod::{data_key, Handle};
///
/// let hero = Handle::new(0, 1, 0).unwrap();
/// let imp = Handle::new(1, 1, 0).unwrap();
/// let mut store: DataStore = DataStore::new();
/// store.insert(hero);
/// store.insert(imp);
/// assert!(store.set(hero, "name", "The One"));
/// assert!(store.set(hero, data_key!("stats.health"), 100.0));
/// assert!(store.set(imp, "stats.health", 5.0));
///
/// assert_eq!(store.get_str(hero, "name"), Some("The One"));
/// assert_eq!(store.get(imp).unwrap().get_f32("stats.health"), Some(5.0));
///
/// let saved = store.to_bytes();
/// let loaded: DataStore = DataStore::from_bytes(&saved).unwrap();
/// assert_eq!(loaded.get_f32(hero, "stats.health"), Some(100.0));
/// ```
pub struct DataStore<K: Key = Handle> {
    buddy: Buddy,
    slots: Vec<Slot>,
    len: usize,
    _key: PhantomData<fn(K) -> K>,
}

impl<K: Key> Clone for DataStore<K> {
    fn clone(&self) -> Self {
        DataStore {
            buddy: self.buddy.clone(),
            slots: self.slots.clone(),
            len: self.len,
            _key: PhantomData,
        }
    }
}

impl<K: Key> Default for DataStore<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Key> DataStore<K> {
    /// An empty store; allocates nothing until the first insert. O(1).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// let s: DataStore = DataStore::new();
    /// assert!(s.is_empty());
    /// ```
    pub const fn new() -> Self {
        DataStore {
            buddy: Buddy::new(),
            slots: Vec::new(),
            len: 0,
            _key: PhantomData,
        }
    }

    /// An empty store whose buffer holds at least `bytes` bytes and whose slot table holds
    /// `entities` indices. O(bytes).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// let s: DataStore = DataStore::with_capacity(1000, 128 * 1024);
    /// assert_eq!(s.capacity(), 128 * 1024);
    /// ```
    #[track_caller]
    pub fn with_capacity(entities: usize, bytes: usize) -> Self {
        let mut s = Self::new();
        s.slots.reserve(entities);
        if bytes > 0 {
            let top = order_for(bytes);
            assert!(
                top <= MAX_ORDER,
                "DataStore::with_capacity: {bytes} bytes is more than a store can address (2 GiB)"
            );
            s.buddy = Buddy::with_top(top);
        }
        s
    }

    #[inline]
    fn slot(&self, e: K) -> Option<(u32, u8)> {
        let s = self.slots.get(e.index() as usize)?;
        (s.tag == e.tag()).then(|| s.block())
    }

    #[inline]
    fn block(&self, off: u32, order: u8) -> &[u8] {
        let off = off as usize;
        &self.buddy.arena[off..off + block_size(order)]
    }

    /// Gives `e` an empty component; `false` (and nothing changes) if it already has one.
    ///
    /// If `e`'s index holds the data of another generation or type id (an entity that died
    /// and whose index was reused), that data is dropped and its handles go stale. O(1)
    /// amortised.
    ///
    /// # Panics
    ///
    /// If the buffer would grow past 2 GiB.
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let e = Handle::new(3, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// assert!(s.insert(e));
    /// assert!(!s.insert(e));
    /// assert_eq!(s.len(), 1);
    /// ```
    #[track_caller]
    pub fn insert(&mut self, e: K) -> bool {
        let i = e.index() as usize;
        if i >= self.slots.len() {
            self.slots.resize(i + 1, Slot::default());
        }
        let s = self.slots[i];
        if s.tag == e.tag() {
            return false;
        }
        if s.tag != 0 {
            let (off, o) = s.block();
            self.buddy.free(off, o);
        } else {
            self.len += 1;
        }
        let off = self.buddy.alloc(0);
        raw::init(&mut self.buddy.arena[off as usize..off as usize + block_size(0)]);
        self.slots[i] = Slot {
            tag: e.tag(),
            loc: off,
        };
        true
    }

    /// Gives `e` a copy of `data` (a [`DataComponent`](super::DataComponent) or a
    /// [`DataView`]), replacing the component it had; whether it had one. The copy is packed
    /// into the smallest block that holds it, in one pass over `data`'s bytes. As with
    /// [`insert`](Self::insert), data of another generation at `e`'s index is dropped. O(size
    /// of `data`).
    ///
    /// # Panics
    ///
    /// If the buffer would grow past 2 GiB.
    ///
    /// ```
    /// # use dod::data::{DataComponent, DataStore};
    /// # use dod::Handle;
    /// let mut sheet = DataComponent::new();
    /// sheet.set("name", "Imp");
    /// sheet.set("stats.health", 5.0);
    ///
    /// let mut s: DataStore = DataStore::new();
    /// let (a, b) = (Handle::new(0, 1, 0).unwrap(), Handle::new(1, 1, 0).unwrap());
    /// assert!(!s.insert_data(a, &sheet));
    /// assert!(!s.insert_data(b, &sheet));
    /// assert_eq!(s.get_f32(b, "stats.health"), Some(5.0));
    /// assert_eq!(s.get(a).unwrap(), sheet.view());
    /// ```
    #[track_caller]
    pub fn insert_data<'d>(&mut self, e: K, data: impl Into<DataView<'d>>) -> bool {
        let src = data.into().as_bytes();
        let to = order_for(raw::packed_size(src));
        let i = e.index() as usize;
        if i >= self.slots.len() {
            self.slots.resize(i + 1, Slot::default());
        }
        let s = self.slots[i];
        let had = s.tag == e.tag();
        if s.tag != 0 {
            let (off, o) = s.block();
            self.buddy.free(off, o);
        } else {
            self.len += 1;
        }
        let off = self.buddy.alloc(to);
        let start = off as usize;
        raw::repack(src, &mut self.buddy.arena[start..start + block_size(to)]);
        self.slots[i] = Slot {
            tag: e.tag(),
            loc: off | u32::from(to),
        };
        had
    }

    /// Removes `e`'s component; whether it had one. Its block is zeroed and freed. O(log of
    /// the buffer size).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let e = Handle::new(0, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(e);
    /// assert!(s.remove(e));
    /// assert!(!s.remove(e));
    /// ```
    pub fn remove(&mut self, e: K) -> bool {
        let Some((off, o)) = self.slot(e) else {
            return false;
        };
        self.buddy.free(off, o);
        self.slots[e.index() as usize] = Slot::default();
        self.len -= 1;
        true
    }

    /// Whether `e` has a component. O(1).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let e = Handle::new(0, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(e);
    /// assert!(s.contains(e));
    /// assert!(!s.contains(Handle::new(0, 2, 0).unwrap())); // another generation
    /// ```
    #[inline]
    pub fn contains(&self, e: K) -> bool {
        self.slot(e).is_some()
    }

    /// `e`'s component, read in place. O(1).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let e = Handle::new(0, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(e);
    /// let _ = s.set(e, "a", 1.0);
    /// assert_eq!(s.get(e).unwrap().len(), 1);
    /// ```
    #[inline]
    pub fn get(&self, e: K) -> Option<DataView<'_>> {
        let (off, o) = self.slot(e)?;
        Some(DataView::trusted(self.block(off, o)))
    }

    /// The value of `key` in `e`'s component. O(log n).
    ///
    /// ```
    /// # use dod::data::{DataStore, Value};
    /// # use dod::Handle;
    /// let e = Handle::new(0, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(e);
    /// let _ = s.set(e, "a", true);
    /// assert_eq!(s.get_value(e, "a"), Some(Value::Bool(true)));
    /// ```
    #[inline]
    pub fn get_value(&self, e: K, key: impl Into<DataKey>) -> Option<Value<'_>> {
        self.get(e)?.get(key)
    }

    /// The float at `key` of `e`; `None` if either is missing or the value has another type.
    /// O(log n).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let e = Handle::new(0, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(e);
    /// let _ = s.set(e, "hp", 3.0);
    /// assert_eq!(s.get_f32(e, "hp"), Some(3.0));
    /// ```
    #[inline]
    pub fn get_f32(&self, e: K, key: impl Into<DataKey>) -> Option<f32> {
        self.get(e)?.get_f32(key)
    }

    /// The boolean at `key` of `e`; `None` if missing or of another type. O(log n).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let e = Handle::new(0, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(e);
    /// let _ = s.set(e, "drunk", true);
    /// assert_eq!(s.get_bool(e, "drunk"), Some(true));
    /// ```
    #[inline]
    pub fn get_bool(&self, e: K, key: impl Into<DataKey>) -> Option<bool> {
        self.get(e)?.get_bool(key)
    }

    /// The string at `key` of `e`; `None` if missing or of another type. O(log n).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let e = Handle::new(0, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(e);
    /// let _ = s.set(e, "name", "imp");
    /// assert_eq!(s.get_str(e, "name"), Some("imp"));
    /// ```
    #[inline]
    pub fn get_str(&self, e: K, key: impl Into<DataKey>) -> Option<&str> {
        self.get(e)?.get_str(key)
    }

    /// The float array at `key` of `e`; `None` if missing or of another type. O(log n).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let e = Handle::new(0, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(e);
    /// let _ = s.set(e, "pos", &[1.0, 2.0]);
    /// assert_eq!(s.get_f32s(e, "pos").unwrap().len(), 2);
    /// ```
    #[inline]
    pub fn get_f32s(&self, e: K, key: impl Into<DataKey>) -> Option<Floats<'_>> {
        self.get(e)?.get_f32s(key)
    }

    /// Sets `key` of `e`'s component to `value`. Returns `false`, writing nothing, if `e` has
    /// no component (never inserted, removed, or a stale handle). O(n) in the component's
    /// entries; when the component outgrows its block it moves to a larger one, O(its size).
    ///
    /// # Panics
    ///
    /// If the buffer would grow past 2 GiB.
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let e = Handle::new(0, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// assert!(!s.set(e, "a", 1.0)); // no component yet
    /// s.insert(e);
    /// assert!(s.set(e, "a", 1.0));
    /// assert!(s.set(e, "long", "a string that needs a larger block than 32 bytes"));
    /// assert_eq!(s.get_f32(e, "a"), Some(1.0));
    /// ```
    #[track_caller]
    #[must_use = "`false` means the entity has no component and nothing was set"]
    pub fn set<'v>(&mut self, e: K, key: impl Into<DataKey>, value: impl Into<Value<'v>>) -> bool {
        let Some((off, o)) = self.slot(e) else {
            return false;
        };
        let (key, value) = (key.into(), value.into());
        let start = off as usize;
        let block = &mut self.buddy.arena[start..start + block_size(o)];
        if let Err(need) = raw::set(block, key, &value) {
            // Holes alone may be what is in the way: then a block of the same size, re-packed,
            // has room. Otherwise the component moves at least one size up.
            let to = if need <= block_size(o) {
                o
            } else {
                order_for(need).max(o + 1)
            };
            let (noff, no) = self.relocate(e.index() as usize, off, o, to);
            let start = noff as usize;
            let block = &mut self.buddy.arena[start..start + block_size(no)];
            let done = raw::set(block, key, &value);
            debug_assert!(done.is_ok(), "the new block has room");
        }
        true
    }

    /// Moves the component of slot `i` from block `(off, o)` to a new block of order `to`,
    /// re-packed; frees the old one.
    #[track_caller]
    fn relocate(&mut self, i: usize, off: u32, o: u8, to: u8) -> (u32, u8) {
        let noff = self.buddy.alloc(to);
        let (src, dst) = (off as usize, noff as usize);
        let (a, b) = if src < dst {
            let (lo, hi) = self.buddy.arena.split_at_mut(dst);
            (&lo[src..src + block_size(o)], &mut hi[..block_size(to)])
        } else {
            let (lo, hi) = self.buddy.arena.split_at_mut(src);
            (&hi[..block_size(o)], &mut lo[dst..dst + block_size(to)])
        };
        raw::repack(a, b);
        self.buddy.free(off, o);
        self.slots[i].loc = noff | u32::from(to);
        (noff, to)
    }

    /// Removes `key` from `e`'s component; whether it was there. A component that falls to a
    /// quarter of its block moves to a smaller one. O(n) in the component's entries.
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let e = Handle::new(0, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(e);
    /// let _ = s.set(e, "a", 1.0);
    /// assert!(s.remove_key(e, "a"));
    /// assert!(!s.remove_key(e, "a"));
    /// ```
    pub fn remove_key(&mut self, e: K, key: impl Into<DataKey>) -> bool {
        let Some((off, o)) = self.slot(e) else {
            return false;
        };
        let start = off as usize;
        let block = &mut self.buddy.arena[start..start + block_size(o)];
        if !raw::remove(block, key.into()) {
            return false;
        }
        let packed = raw::packed_size(block);
        if o > 0 && packed * 4 <= block_size(o) {
            self.relocate(e.index() as usize, off, o, order_for(packed * 2));
        }
        true
    }

    /// Number of entities with a component. O(1).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// let s: DataStore = DataStore::new();
    /// assert_eq!(s.len(), 0);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no entity has a component. O(1).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// assert!(DataStore::<dod::Handle>::new().is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entities with a component and their components, in index order. O(largest index).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(Handle::new(2, 1, 0).unwrap());
    /// let all: Vec<_> = s.iter().map(|(e, data)| (e.index(), data.len())).collect();
    /// assert_eq!(all, [(2, 0)]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (K, DataView<'_>)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.tag != 0)
            .map(|(i, s)| {
                let generation = NonZeroU16::new(s.tag as u16).unwrap_or(NonZeroU16::MIN);
                let k = K::from_parts(i as u32, generation, (s.tag >> 16) as u16);
                let (off, o) = s.block();
                (k, DataView::trusted(self.block(off, o)))
            })
    }

    /// The entities with a component, in index order. O(largest index).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let e = Handle::new(2, 5, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(e);
    /// assert_eq!(s.keys().collect::<Vec<_>>(), [e]);
    /// ```
    pub fn keys(&self) -> impl Iterator<Item = K> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// Removes every component, keeping the buffer (zeroed) and the slot table. O(capacity).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(Handle::new(0, 1, 0).unwrap());
    /// s.clear();
    /// assert!(s.is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.slots.fill(Slot::default());
        self.len = 0;
        self.buddy.reset();
    }

    /// The buffer's size in bytes. O(1).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(Handle::new(0, 1, 0).unwrap());
    /// assert_eq!(s.capacity(), 4096);
    /// ```
    pub fn capacity(&self) -> usize {
        self.buddy.arena.len()
    }

    /// Heap bytes held: the buffer, the allocator's bits and the slot table. O(log of the
    /// buffer size).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(Handle::new(0, 1, 0).unwrap());
    /// assert!(s.memory_usage() >= 4096);
    /// ```
    pub fn memory_usage(&self) -> usize {
        self.buddy.memory_usage() + self.slots.capacity() * core::mem::size_of::<Slot>()
    }

    /// Free bytes in the buffer.
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// let s: DataStore = DataStore::with_capacity(0, 1024);
    /// assert_eq!(s.free_bytes(), 1024);
    /// ```
    pub fn free_bytes(&self) -> usize {
        self.buddy.free_bytes()
    }

    /// Free bytes that the largest possible block request could not use: all free bytes but
    /// those of the largest free block. 0 when free space is in one piece. O(log of the buffer
    /// size).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let mut s: DataStore = DataStore::with_capacity(4, 128); // room for four 32-byte blocks
    /// for i in 0..4 {
    ///     s.insert(Handle::new(i, 1, 0).unwrap());
    /// }
    /// s.remove(Handle::new(1, 1, 0).unwrap());
    /// s.remove(Handle::new(2, 1, 0).unwrap());
    /// // Two free 32-byte blocks that are not buddies: a 64-byte request fits in neither.
    /// assert_eq!(s.fragmentation(), 32);
    /// s.compact();
    /// assert_eq!(s.fragmentation(), 0);
    /// ```
    pub fn fragmentation(&self) -> usize {
        self.buddy.free_bytes() - self.buddy.largest_free()
    }

    /// Re-packs every component into the smallest block that holds it, laid out largest first
    /// in a buffer just large enough: no holes inside components, no fragmentation between
    /// them. Entities keep their handles. O(total size).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let mut s: DataStore = DataStore::new();
    /// let e = Handle::new(0, 1, 0).unwrap();
    /// s.insert(e);
    /// let _ = s.set(e, "a", 1.0);
    /// s.compact();
    /// assert_eq!(s.capacity(), 128); // the smallest buffer, holding one 32-byte block
    /// assert_eq!(s.get_f32(e, "a"), Some(1.0));
    /// ```
    pub fn compact(&mut self) {
        let mut live: Vec<(u8, u32)> = Vec::with_capacity(self.len);
        let mut total = 0usize;
        for (i, s) in self.slots.iter().enumerate() {
            if s.tag != 0 {
                let (off, o) = s.block();
                let order = order_for(raw::packed_size(self.block(off, o)));
                total += block_size(order);
                live.push((order, i as u32));
            }
        }
        if live.is_empty() {
            self.buddy = Buddy::new();
            return;
        }
        // Largest first: every block lands right after the previous one.
        live.sort_unstable_by(|a, b| b.cmp(a));
        let mut fresh = Buddy::with_top(order_for(total).max(2));
        for (order, i) in live {
            let noff = fresh.alloc(order);
            let (off, o) = self.slots[i as usize].block();
            let dst = &mut fresh.arena[noff as usize..noff as usize + block_size(order)];
            raw::repack(self.block(off, o), dst);
            self.slots[i as usize].loc = noff | u32::from(order);
        }
        self.buddy = fresh;
    }

    /// The whole store as bytes: a header, the slot table and one copy of the buffer. Read
    /// back with [`from_bytes`](DataStore::from_bytes). O(size).
    ///
    /// ```text
    /// 0   4   magic "DODs"
    /// 4   2   format version (1)
    /// 6   2   key hash id (1)
    /// 8   1   log2 of the smallest block (5)
    /// 9   1   order of the buffer (0xFF: no buffer)
    /// 10  2   reserved (0)
    /// 12  4   slot count s
    /// 16  4   buffer length b
    /// 20  4   entities with a component
    /// 24  8s  slots: key tag (generation | type id << 16; 0 = none), block offset | order
    /// ..  b   the buffer
    /// ```
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// let s: DataStore = DataStore::new();
    /// assert_eq!(&s.to_bytes()[..4], b"DODs");
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let arena = &self.buddy.arena;
        let mut out = Vec::with_capacity(HEADER + 8 * self.slots.len() + arena.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&raw::VERSION.to_le_bytes());
        out.extend_from_slice(&raw::HASH_ID.to_le_bytes());
        out.push(MIN_SHIFT as u8);
        out.push(if arena.is_empty() {
            NO_ARENA
        } else {
            self.buddy.top
        });
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&(self.slots.len() as u32).to_le_bytes());
        out.extend_from_slice(&(arena.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.len as u32).to_le_bytes());
        for s in &self.slots {
            out.extend_from_slice(&s.tag.to_le_bytes());
            out.extend_from_slice(&s.loc.to_le_bytes());
        }
        // Free blocks travel as they are (zeros and free-list links): loading rebuilds the
        // allocator from the blocks in use, so the buffer is saved with one copy.
        out.extend_from_slice(arena);
        out
    }

    /// Reads a store written by [`to_bytes`](DataStore::to_bytes), checking everything first
    /// in O(size + s log s) for `s` entities: the header, that every block is aligned to its
    /// size, inside the buffer and overlaps no other, and every component as
    /// [`DataView::new`] does. The buffer is copied once; the allocator's free lists and bits
    /// are rebuilt from the blocks in use.
    ///
    /// ```
    /// # use dod::data::{DataStore, DecodeError};
    /// # use dod::Handle;
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(Handle::new(0, 1, 0).unwrap());
    /// let mut bytes = s.to_bytes();
    /// assert!(DataStore::<Handle>::from_bytes(&bytes).is_ok());
    /// bytes[28] = 0x40; // entity 0's block moved out of the buffer
    /// assert!(DataStore::<Handle>::from_bytes(&bytes).is_err());
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        if bytes.len() < HEADER {
            return Err(DecodeError::TooShort);
        }
        if bytes[..4] != MAGIC {
            return Err(DecodeError::BadMagic);
        }
        let rd = |at: usize| raw::rd32(bytes, at).unwrap_or(0);
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version != raw::VERSION {
            return Err(DecodeError::UnsupportedVersion(version));
        }
        let hash = u16::from_le_bytes([bytes[6], bytes[7]]);
        if hash != raw::HASH_ID {
            return Err(DecodeError::UnknownKeyHash(hash));
        }
        let (shift, top) = (bytes[8], bytes[9]);
        let (slot_count, arena_len, live) = (rd(12) as usize, rd(16) as usize, rd(20) as usize);
        let expect_arena = match top {
            NO_ARENA => 0,
            t if t <= MAX_ORDER => block_size(t),
            _ => return Err(DecodeError::BadCounts),
        };
        if u32::from(shift) != MIN_SHIFT || bytes[10..12] != [0, 0] || arena_len != expect_arena {
            return Err(DecodeError::BadCounts);
        }
        let slots_end = slot_count
            .checked_mul(8)
            .and_then(|s| s.checked_add(HEADER))
            .ok_or(DecodeError::BadCounts)?;
        if slots_end.checked_add(arena_len) != Some(bytes.len()) {
            return Err(DecodeError::BadCounts);
        }
        let arena = &bytes[slots_end..];
        let mut slots = Vec::with_capacity(slot_count);
        // (block offset | order, entity index) of every component.
        let mut order: Vec<(u32, u32)> = Vec::with_capacity(live.min(slot_count));
        for i in 0..slot_count {
            let s = Slot {
                tag: rd(HEADER + 8 * i),
                loc: rd(HEADER + 8 * i + 4),
            };
            let bad = DecodeError::BadBlock { entity: i as u32 };
            if s.tag == 0 {
                if s.loc != 0 {
                    return Err(bad);
                }
            } else if s.tag as u16 == 0
                || (s.tag >> 16) as u16 > K::MAX_TYPE_ID
                || i as u64 >= u64::from(K::MAX_SLOTS)
            {
                return Err(DecodeError::BadKey { entity: i as u32 });
            } else {
                let (off, o) = s.block();
                let size = block_size(o.min(MAX_ORDER));
                if o > top
                    || top == NO_ARENA
                    || off as usize % size != 0
                    || off as usize + size > arena_len
                {
                    return Err(bad);
                }
                order.push((s.loc, i as u32));
            }
            slots.push(s);
        }
        if order.len() != live {
            return Err(DecodeError::BadCounts);
        }
        // In buffer order, so the components are read front to back like a copy.
        order.sort_unstable();
        let mut blocks: Vec<(u32, u8)> = Vec::with_capacity(order.len());
        for &(loc, i) in &order {
            let (off, o) = Slot { tag: 1, loc }.block();
            let block = &arena[off as usize..off as usize + block_size(o)];
            raw::validate(block).map_err(|error| DecodeError::InEntity {
                entity: i,
                error: alloc::boxed::Box::new(error),
            })?;
            blocks.push((off, o));
        }
        let buddy = if top == NO_ARENA {
            Buddy::new()
        } else {
            Buddy::rebuild(arena.to_vec(), top, &blocks)
                .map_err(|i| DecodeError::BadBlock { entity: order[i].1 })?
        };
        Ok(DataStore {
            buddy,
            slots,
            len: live,
            _key: PhantomData,
        })
    }

    /// Checks every invariant, panicking on the first that fails; for tests and fuzzing.
    /// O(slots + buffer).
    #[doc(hidden)]
    pub fn assert_invariants(&self) {
        let used: Vec<(u32, u8)> = self
            .slots
            .iter()
            .filter(|s| s.tag != 0)
            .map(|s| s.block())
            .collect();
        assert_eq!(used.len(), self.len);
        if !self.buddy.arena.is_empty() {
            self.buddy.check(&used);
        }
        for &(off, o) in &used {
            raw::validate(self.block(off, o)).unwrap();
        }
    }
}

impl<K: Key> PartialEq for DataStore<K> {
    /// The same entities with the same entries (floats compared by bits); where the
    /// components sit in the buffer does not matter. O(n).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let mut a: DataStore = DataStore::new();
    /// a.insert(Handle::new(0, 1, 0).unwrap());
    /// let b: DataStore = DataStore::from_bytes(&a.to_bytes()).unwrap();
    /// assert_eq!(a, b);
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl<K: Key> Eq for DataStore<K> {}

impl<K: Key> fmt::Debug for DataStore<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Handle;

    fn h(i: u32) -> Handle {
        Handle::new(i, 1, 0).unwrap()
    }

    #[test]
    fn grow_shrink_and_reload() {
        let mut s: DataStore = DataStore::new();
        let (entities, rounds) = if cfg!(miri) { (30, 8) } else { (200, 40) };
        for i in 0..entities {
            s.insert(h(i));
        }
        let mut text = alloc::string::String::new();
        for round in 0..rounds {
            text.push_str("abc");
            for i in (0..entities).step_by(3) {
                assert!(s.set(h(i), "name", text.as_str()));
                assert!(s.set(
                    h(i),
                    DataKey::ROOT.child("n").child(&alloc::format!("{round}")),
                    1.0
                ));
            }
            if round % 7 == 0 {
                s.assert_invariants();
            }
        }
        for i in (0..entities).step_by(3) {
            for round in 0..rounds {
                assert!(s.remove_key(
                    h(i),
                    DataKey::ROOT.child("n").child(&alloc::format!("{round}"))
                ));
            }
            assert!(s.remove_key(h(i), "name"));
        }
        s.assert_invariants();
        let bytes = s.to_bytes();
        let back: DataStore = DataStore::from_bytes(&bytes).unwrap();
        back.assert_invariants();
        assert_eq!(back, s);
        s.compact();
        s.assert_invariants();
        // Largest first: the free space is the binary decomposition of what is left, so the
        // free bytes outside the largest free block are fewer than those inside it.
        assert!(s.fragmentation() < s.free_bytes() - s.fragmentation());
        assert!(s.capacity() < 2 * entities as usize * 32);
    }

    #[test]
    fn stale_and_replaced() {
        let mut s: DataStore = DataStore::new();
        s.insert(h(0));
        assert!(s.set(h(0), "a", 1.0));
        let newer = Handle::new(0, 2, 0).unwrap();
        assert!(s.insert(newer));
        assert_eq!(s.len(), 1);
        assert!(s.get(h(0)).is_none());
        assert!(!s.set(h(0), "a", 2.0));
        assert_eq!(s.get(newer).unwrap().len(), 0);
        s.assert_invariants();
    }
}
