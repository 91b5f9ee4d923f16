//! [`DataStore`]: the data components of many entities in one buffer.

use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;

use super::buddy::{block_size, order_for, Buddy, MAX_ORDER, MIN_SHIFT};
use super::raw;
use super::value::{Floats, Value};
use super::{DataKey, DataView, DecodeError, KeyNames, PathKey};
use crate::bits::BitSet;
use crate::error::{InsertError, InsertErrorKind};
use crate::key::{Handle, Key};
use crate::pages::Pages;
use crate::slot::{Age, Tag};
use crate::sparse_set::DEFAULT_MAX_INDEX;

const MAGIC: [u8; 4] = *b"DODs";
/// The store format's version: 2 lists the slots in use, by index (version 1 had a dense
/// slot table).
const VERSION: u16 = 2;
const HEADER: usize = 24;
/// Bytes of one slot in the saved form: index, tag, block.
const SLOT_BYTES: usize = 12;
const NO_ARENA: u8 = 0xFF;
/// Slots per page of the slot table: 1 KiB pages.
const SLOT_PAGE: usize = 128;

/// Where an entity's component lives.
///
/// `tag` is 0 for a slot that never held a component; the [`Tag`] bits of the key whose
/// component it holds (generation at least 1, bit 31 clear); or, once that component is
/// removed, the same bits with [`Tag::VACANT`] set, so that an older key stays refused.
/// `loc` is the block offset with the block's order in its low 5 bits (blocks are 32-byte
/// aligned), 0 unless the slot holds a component.
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

    /// Whether the slot holds a component: its tag is not 0 and has bit 31 clear.
    #[inline]
    fn is_live(self) -> bool {
        (self.tag as i32) > 0
    }
}

/// What inserting a key does to its slot.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Plan {
    /// The key's component is there.
    Has,
    /// The slot holds no component: the key gets one.
    Fresh,
    /// The slot holds the component of an older key (a dead entity): it is dropped.
    Replace,
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
/// # Keys
///
/// Entities are named by a [`Key`] (by default [`Handle`]) handed out elsewhere (an entity
/// allocator), and the store follows the [generational slot rules](crate::slot): a slot
/// remembers the generation and type id of the key whose component it holds, or held last.
/// Inserting with a *newer* key replaces the component of the dead entity; an *older* key
/// (stale), one of the same generation but another type id (foreign) and a malformed one (a
/// forged bit pattern: bit 31 of its tag set, generation 0, or an index its key type cannot
/// address) are refused: [`insert`](DataStore::insert) panics, [`try_insert`](DataStore::try_insert)
/// says why. Lookups with such keys find nothing.
///
/// # Memory
///
/// The slot table is paged like a [`SparseSet`](crate::SparseSet)'s: 8 bytes per slot in 1 KiB
/// pages of 128 indices, allocated on first use, and a page table that grows only while it
/// costs no more than the pages (a far index costs one page, and at most about 4 KiB with the
/// table and the spare room of growth, plus 8 KiB once for the table's floor). Indices above
/// [`max_index`](DataStore::max_index) are refused before anything is allocated, and
/// [`try_insert`](DataStore::try_insert) reports a refused allocation instead of aborting.
///
/// [`to_bytes`](DataStore::to_bytes) saves the whole store as one header, the slots in use and
/// one copy of the buffer; [`from_bytes`](DataStore::from_bytes) checks every block and every
/// component before anything reads them. The names the store keeps
/// ([`names`](DataStore::names)) are not saved with it.
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
/// assert!(store.set(imp, "target", hero.to_bits() as i64));
///
/// assert_eq!(store.get_str(hero, "name"), Some("The One"));
/// assert_eq!(store.get(imp).unwrap().get_f32("stats.health"), Some(5.0));
///
/// let saved = store.to_bytes();
/// let loaded: DataStore = DataStore::from_bytes(&saved).unwrap();
/// assert_eq!(loaded.get_f32(hero, "stats.health"), Some(100.0));
/// assert_eq!(loaded.get_i64(imp, "target").map(|b| b as u64), Some(hero.to_bits()));
/// ```
pub struct DataStore<K: Key = Handle> {
    buddy: Buddy,
    slots: Pages<Slot, SLOT_PAGE>,
    len: usize,
    max_index: u32,
    names: KeyNames,
    _key: PhantomData<fn(K) -> K>,
}

impl<K: Key> Clone for DataStore<K> {
    fn clone(&self) -> Self {
        DataStore {
            buddy: self.buddy.clone(),
            slots: self.slots.clone(),
            len: self.len,
            max_index: self.max_index,
            names: self.names.clone(),
            _key: PhantomData,
        }
    }
}

impl<K: Key> Default for DataStore<K> {
    fn default() -> Self {
        Self::new()
    }
}

/// The panic of an `insert` whose key is refused.
#[cold]
#[inline(never)]
#[track_caller]
fn refused<K: Key>(op: &str, key: K, kind: InsertErrorKind) -> ! {
    match kind {
        InsertErrorKind::OutOfMemory => panic!(
            "DataStore::{op}: out of memory: the slot table or the buffer (2 GiB at most) could \
             not grow"
        ),
        kind => panic!("DataStore::{op}: key {key:?} refused: {kind}"),
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
            slots: Pages::new(),
            len: 0,
            max_index: DEFAULT_MAX_INDEX,
            names: KeyNames::new(),
            _key: PhantomData,
        }
    }

    /// An empty store whose buffer holds at least `bytes` bytes and whose slot table has room
    /// for the pages of `entities` indices. O(bytes).
    ///
    /// # Panics
    ///
    /// If `bytes` is more than 2 GiB, or if the slot table for `entities` indices overflows
    /// `isize::MAX` bytes (as [`Vec::with_capacity`]).
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

    /// The largest entity index the store accepts (`u32::MAX - 1` unless set): inserting a
    /// key with a larger index is refused before anything is allocated. O(1).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// assert_eq!(DataStore::<dod::Handle>::new().max_index(), u32::MAX - 1);
    /// ```
    pub fn max_index(&self) -> u32 {
        self.max_index
    }

    /// Sets [`max_index`](DataStore::max_index). Components already in the store above it
    /// stay, and can still be replaced (by the same or a newer key); only new components are
    /// bounded. O(1).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::{Handle, InsertErrorKind};
    /// let mut s: DataStore = DataStore::new();
    /// let held = Handle::new(5000, 1, 0).unwrap();
    /// s.insert(held);
    /// s.set_max_index(1000);
    /// assert_eq!(s.try_insert(held), Ok(false)); // held before the bound: stays
    /// assert!(s.insert(Handle::new(5000, 2, 0).unwrap())); // a newer key replaces it
    /// let held_bytes = s.memory_usage();
    /// let far = Handle::new(4_000_000_000, 1, 0).unwrap();
    /// let err = s.try_insert(far).unwrap_err();
    /// assert_eq!(err.kind(), InsertErrorKind::IndexAboveMax { index: 4_000_000_000, max: 1000 });
    /// assert_eq!(s.memory_usage(), held_bytes); // refused before allocating
    /// ```
    pub fn set_max_index(&mut self, max: u32) {
        self.max_index = max;
    }

    /// The store with [`max_index`](DataStore::max_index) set to `max`. O(1).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// let s: DataStore = DataStore::new().with_max_index(65_535);
    /// assert_eq!(s.max_index(), 65_535);
    /// ```
    pub fn with_max_index(mut self, max: u32) -> Self {
        self.max_index = max;
        self
    }

    /// The block of `e`'s component, if its slot holds one for `e`.
    #[inline]
    fn slot(&self, e: K) -> Option<(u32, u8)> {
        self.slot_at(e.index(), e.tag())
    }

    /// [`slot`](Self::slot) for a key's parts read already: an operation that changes the
    /// store reads `index()` and `tag()` once, so that a key whose answers change between
    /// calls cannot make it look at one slot and change another.
    #[inline]
    fn slot_at(&self, index: u32, t: u32) -> Option<(u32, u8)> {
        let s = self.slots.slot(index)?;
        // A stored tag is 0, a live key's tag, or has bit 31 set; `t > 0` (as an i32) keeps
        // a forged key of tag 0 or with bit 31 set from matching the first or the last.
        (s.tag == t && (t as i32) > 0).then(|| s.block())
    }

    #[inline]
    fn block(&self, off: u32, order: u8) -> &[u8] {
        let off = off as usize;
        &self.buddy.arena[off..off + block_size(order)]
    }

    /// What inserting the key of slot `index` and tag `t` does, or why it is refused.
    /// Allocates nothing.
    fn plan(&self, index: u32, t: u32) -> Result<Plan, InsertErrorKind> {
        if crate::slot::is_malformed_key::<K>(index, t) {
            return Err(InsertErrorKind::MalformedKey);
        }
        let s = self.slots.get(index);
        // A slot that never held a component has tag 0: every well-formed key is newer.
        let plan = match Tag::from_bits(s.tag).age_of_tag(t) {
            Age::Same if s.is_live() => Plan::Has,
            Age::Same => Plan::Fresh,
            Age::Newer if s.is_live() => Plan::Replace,
            Age::Newer => Plan::Fresh,
            Age::Older => return Err(InsertErrorKind::StaleKey),
            Age::Foreign => return Err(InsertErrorKind::ForeignKey),
            Age::Malformed => return Err(InsertErrorKind::MalformedKey),
        };
        // Only a new entry is bounded: one the store holds above a lowered bound stays, and
        // can be replaced.
        if plan == Plan::Fresh && index > self.max_index {
            return Err(InsertErrorKind::IndexAboveMax {
                index,
                max: self.max_index,
            });
        }
        Ok(plan)
    }

    /// Gives the key of slot `index` and tag `t` a new block of order `order` (its page and
    /// the block allocated first, so an error changes nothing but perhaps an empty page),
    /// dropping the component a `Replace` plan finds; the block's offset.
    fn occupy(
        &mut self,
        index: u32,
        t: u32,
        plan: Plan,
        order: u8,
    ) -> Result<u32, InsertErrorKind> {
        self.slots
            .try_alloc_page(index)
            .map_err(|_| InsertErrorKind::OutOfMemory)?;
        let off = self
            .buddy
            .try_alloc(order)
            .map_err(|_| InsertErrorKind::OutOfMemory)?;
        let Some(slot) = self.slots.slot_mut(index) else {
            unreachable!("the page was allocated above")
        };
        let old = core::mem::replace(
            slot,
            Slot {
                tag: t,
                loc: off | u32::from(order),
            },
        );
        if plan == Plan::Replace {
            let (old_off, o) = old.block();
            self.buddy.free(old_off, o);
        } else {
            self.len += 1;
        }
        Ok(off)
    }

    /// Gives `e` an empty component; `Ok(false)` (and nothing changes) if it already has
    /// one. Following the [key rules](DataStore#keys), a newer key than the one whose
    /// component its slot holds replaces that component (the dead entity's data is freed);
    /// an older, foreign or malformed key, or an index above
    /// [`max_index`](DataStore::max_index), is refused without allocating, and a refused
    /// allocation is [`OutOfMemory`](InsertErrorKind::OutOfMemory) instead of an abort. O(1)
    /// amortised.
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::{Handle, InsertErrorKind};
    /// let mut s: DataStore = DataStore::new();
    /// let e = Handle::new(3, 2, 0).unwrap();
    /// assert_eq!(s.try_insert(e), Ok(true));
    /// assert_eq!(s.try_insert(e), Ok(false));
    /// let stale = Handle::new(3, 1, 0).unwrap();
    /// assert_eq!(s.try_insert(stale).unwrap_err().kind(), InsertErrorKind::StaleKey);
    /// let foreign = Handle::new(3, 2, 7).unwrap();
    /// assert_eq!(s.try_insert(foreign).unwrap_err().kind(), InsertErrorKind::ForeignKey);
    /// assert!(s.contains(e));
    /// ```
    pub fn try_insert(&mut self, e: K) -> Result<bool, InsertError<()>> {
        let fail = |kind| InsertError::new(kind, ());
        let (index, t) = (e.index(), e.tag());
        let plan = self.plan(index, t).map_err(fail)?;
        if plan == Plan::Has {
            return Ok(false);
        }
        let off = self.occupy(index, t, plan, 0).map_err(fail)?;
        let start = off as usize;
        raw::init(&mut self.buddy.arena[start..start + block_size(0)]);
        Ok(true)
    }

    /// Gives `e` an empty component; `false` (and nothing changes) if it already has one.
    /// [`try_insert`](DataStore::try_insert) without the error: a newer key than the one
    /// whose component the slot holds replaces it. O(1) amortised.
    ///
    /// # Panics
    ///
    /// If the key is refused ([key rules](DataStore#keys)): stale (older than the key whose
    /// component the slot holds or held), foreign (same generation, another type id),
    /// malformed, or its index is above [`max_index`](DataStore::max_index); or if memory
    /// runs out (the buffer holds 2 GiB at most).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let e = Handle::new(3, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// assert!(s.insert(e));
    /// assert!(!s.insert(e));
    /// assert_eq!(s.len(), 1);
    /// let reused = Handle::new(3, 2, 0).unwrap(); // the entity died, its index was reused
    /// assert!(s.insert(reused));
    /// assert!(!s.contains(e) && s.contains(reused));
    /// ```
    ///
    /// ```should_panic
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(Handle::new(3, 2, 0).unwrap());
    /// s.insert(Handle::new(3, 1, 0).unwrap()); // stale: panics
    /// ```
    #[track_caller]
    pub fn insert(&mut self, e: K) -> bool {
        match self.try_insert(e) {
            Ok(fresh) => fresh,
            Err(err) => refused("insert", e, err.kind()),
        }
    }

    /// Gives `e` a copy of `data` (a [`DataComponent`](super::DataComponent) or a
    /// [`DataView`]), replacing the component it had; `Ok(true)` if it had none (as
    /// [`try_insert`](DataStore::try_insert) answers). The copy is
    /// packed into the smallest block that holds it, in one pass over `data`'s bytes. Keys
    /// are checked as by [`try_insert`](DataStore::try_insert); a refused insertion gives
    /// `data` back and changes nothing. O(size of `data`).
    ///
    /// ```
    /// # use dod::data::{DataComponent, DataStore};
    /// # use dod::{Handle, InsertErrorKind};
    /// let mut sheet = DataComponent::new();
    /// sheet.set("hp", 5);
    /// let mut s: DataStore = DataStore::new().with_max_index(10);
    /// let e = Handle::new(1, 1, 0).unwrap();
    /// assert_eq!(s.try_insert_data(e, &sheet), Ok(true));
    /// assert_eq!(s.try_insert_data(e, &sheet), Ok(false)); // replaced
    /// let far = Handle::new(11, 1, 0).unwrap();
    /// let err = s.try_insert_data(far, &sheet).unwrap_err();
    /// assert_eq!(err.kind(), InsertErrorKind::IndexAboveMax { index: 11, max: 10 });
    /// assert_eq!(err.into_inner(), sheet.view());
    /// ```
    pub fn try_insert_data<'d>(
        &mut self,
        e: K,
        data: impl Into<DataView<'d>>,
    ) -> Result<bool, InsertError<DataView<'d>>> {
        let data = data.into();
        let (index, t) = (e.index(), e.tag());
        let plan = match self.plan(index, t) {
            Ok(plan) => plan,
            Err(kind) => return Err(InsertError::new(kind, data)),
        };
        let src = data.as_bytes();
        let to = order_for(raw::packed_size(src));
        let had = plan == Plan::Has;
        let plan = if had { Plan::Replace } else { plan };
        let off = match self.occupy(index, t, plan, to) {
            Ok(off) => off,
            Err(kind) => return Err(InsertError::new(kind, data)),
        };
        let start = off as usize;
        raw::repack(src, &mut self.buddy.arena[start..start + block_size(to)]);
        Ok(!had)
    }

    /// Gives `e` a copy of `data`, replacing the component it had; `true` if it had none (as
    /// [`insert`](DataStore::insert) answers).
    /// [`try_insert_data`](DataStore::try_insert_data) without the error. O(size of `data`).
    ///
    /// # Panics
    ///
    /// As [`insert`](DataStore::insert): a refused key, or memory running out.
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
    /// assert!(s.insert_data(a, &sheet));
    /// assert!(s.insert_data(b, &sheet));
    /// assert!(!s.insert_data(b, &sheet)); // replaced
    /// assert_eq!(s.get_f32(b, "stats.health"), Some(5.0));
    /// assert_eq!(s.get(a).unwrap(), sheet.view());
    /// ```
    #[track_caller]
    pub fn insert_data<'d>(&mut self, e: K, data: impl Into<DataView<'d>>) -> bool {
        match self.try_insert_data(e, data) {
            Ok(had) => had,
            Err(err) => refused("insert_data", e, err.kind()),
        }
    }

    /// Removes `e`'s component; whether it had one. Its block is zeroed and freed; the slot
    /// keeps `e`'s generation, so older keys stay refused. O(log of the buffer size).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let e = Handle::new(0, 2, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(e);
    /// assert!(s.remove(e));
    /// assert!(!s.remove(e));
    /// assert!(s.try_insert(Handle::new(0, 1, 0).unwrap()).is_err()); // still stale
    /// assert!(s.insert(e)); // the same key may come back
    /// ```
    pub fn remove(&mut self, e: K) -> bool {
        let index = e.index();
        let Some((off, o)) = self.slot_at(index, e.tag()) else {
            return false;
        };
        self.buddy.free(off, o);
        if let Some(s) = self.slots.slot_mut(index) {
            *s = Slot {
                tag: s.tag | Tag::VACANT,
                loc: 0,
            };
        }
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

    /// The float at `key` of `e`; `None` if either is missing or the value has another type,
    /// an integer included: JSON's `100` loads as an integer, so read numbers that may come
    /// either way with [`get_f64`](DataStore::get_f64). O(log n).
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

    /// The number at `key` of `e`, an integer or a float, as `f64`
    /// ([`Value::as_f64`](crate::data::Value::as_f64)); `None` if missing or not a number.
    /// O(log n).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let e = Handle::new(0, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(e);
    /// let _ = s.set(e, "gold", 250i64);
    /// assert_eq!(s.get_f64(e, "gold"), Some(250.0));
    /// ```
    #[inline]
    pub fn get_f64(&self, e: K, key: impl Into<DataKey>) -> Option<f64> {
        self.get(e)?.get_f64(key)
    }

    /// The integer at `key` of `e`; `None` if missing or of another type. O(log n).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let e = Handle::new(0, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(e);
    /// let _ = s.set(e, "owner", e.to_bits() as i64);
    /// assert_eq!(s.get_i64(e, "owner").map(|b| b as u64), Some(e.to_bits()));
    /// ```
    #[inline]
    pub fn get_i64(&self, e: K, key: impl Into<DataKey>) -> Option<i64> {
        self.get(e)?.get_i64(key)
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
    /// `key` is a [`DataKey`] or a path string ([`PathKey`]); a path string's name is kept by
    /// the store ([`names`](DataStore::names)) as [`DataComponent::set`](super::DataComponent::set)
    /// keeps it.
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
    /// assert_eq!(s.names().len(), 2);
    /// ```
    #[track_caller]
    #[must_use = "`false` means the entity has no component and nothing was set"]
    pub fn set<'p, 'v>(
        &mut self,
        e: K,
        key: impl Into<PathKey<'p>>,
        value: impl Into<Value<'v>>,
    ) -> bool {
        let index = e.index();
        let Some((off, o)) = self.slot_at(index, e.tag()) else {
            return false;
        };
        let (key, value) = (key.into(), value.into());
        if let Some(path) = key.path() {
            self.names.note(key.key(), path);
        }
        let key = key.key();
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
            let (noff, no) = self.relocate(index, off, o, to);
            let start = noff as usize;
            let block = &mut self.buddy.arena[start..start + block_size(no)];
            let done = raw::set(block, key, &value);
            debug_assert!(done.is_ok(), "the new block has room");
        }
        true
    }

    /// Moves the component of the live slot `index` from block `(off, o)` to a new block of
    /// order `to`, re-packed; frees the old one.
    #[track_caller]
    fn relocate(&mut self, index: u32, off: u32, o: u8, to: u8) -> (u32, u8) {
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
        if let Some(s) = self.slots.slot_mut(index) {
            s.loc = noff | u32::from(to);
        }
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
        let index = e.index();
        let Some((off, o)) = self.slot_at(index, e.tag()) else {
            return false;
        };
        let start = off as usize;
        let block = &mut self.buddy.arena[start..start + block_size(o)];
        if !raw::remove(block, key.into()) {
            return false;
        }
        let packed = raw::packed_size(block);
        if o > 0 && packed * 4 <= block_size(o) {
            self.relocate(index, off, o, order_for(packed * 2));
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

    /// The entities with a component and their components, in index order. O(slots of the
    /// allocated pages).
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
            .filter(|(_, s)| s.is_live())
            .map(|(i, s)| {
                let k = K::from_index_tag(i, s.tag);
                let (off, o) = s.block();
                (k, DataView::trusted(self.block(off, o)))
            })
    }

    /// The entities with a component, in index order. O(slots of the allocated pages).
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

    /// The names of the paths values were set by ([`set`](DataStore::set) with a path
    /// string), for every entity; `to_json` (feature `json`) uses them. Not saved by
    /// [`to_bytes`](DataStore::to_bytes). O(1).
    ///
    /// ```
    /// # use dod::data::{DataKey, DataStore};
    /// # use dod::Handle;
    /// let e = Handle::new(0, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(e);
    /// let _ = s.set(e, "status.poisoned", true);
    /// let k = DataKey::from_path("status.poisoned");
    /// assert_eq!(s.names().name(k).as_deref(), Some("status.poisoned"));
    /// ```
    pub fn names(&self) -> &KeyNames {
        &self.names
    }

    /// The names the store keeps, to register more or take some from elsewhere. O(1).
    ///
    /// ```
    /// # use dod::data::{DataComponent, DataStore};
    /// let mut sheet = DataComponent::new();
    /// sheet.set("stats.health", 10);
    /// let mut s: DataStore = DataStore::new();
    /// s.names_mut().extend_from(sheet.names());
    /// assert_eq!(s.names().len(), 1);
    /// ```
    pub fn names_mut(&mut self) -> &mut KeyNames {
        &mut self.names
    }

    /// Removes every component, keeping the buffer (zeroed), the slot table and the names.
    /// Every key's slot keeps its generation, so older keys stay refused. O(capacity).
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
        for s in self.slots.all_slots_mut() {
            if s.is_live() {
                *s = Slot {
                    tag: s.tag | Tag::VACANT,
                    loc: 0,
                };
            }
        }
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

    /// Heap bytes held: the buffer, the allocator's bits, the slot table and the names kept
    /// ([`KeyNames::memory_usage`]). O(log of the buffer size + names).
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// # use dod::Handle;
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(Handle::new(0, 1, 0).unwrap());
    /// assert!(s.memory_usage() >= 4096);
    /// // A far index costs one page of the slot table (128 slots of 8 bytes), not 24 GB.
    /// let before = s.memory_usage();
    /// s.insert(Handle::new(3_000_000_000, 1, 0).unwrap());
    /// assert!(s.memory_usage() - before < 2 * 1024);
    /// ```
    pub fn memory_usage(&self) -> usize {
        self.buddy.memory_usage() + self.slots.memory_usage() + self.names.memory_usage()
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
    /// Free space in a buddy buffer comes in power-of-two blocks, so after
    /// [`compact`](DataStore::compact) it is one block only when the free bytes are a power
    /// of two; what compaction guarantees is fewer fragmented bytes than bytes in the largest
    /// free block.
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
    /// assert_eq!(s.fragmentation(), 0); // 64 bytes free, in one block
    ///
    /// // Five 32-byte components in a 256-byte buffer leave 96 bytes: a 64-byte block and a
    /// // 32-byte one.
    /// for i in 4..7 {
    ///     s.insert(Handle::new(i, 1, 0).unwrap());
    /// }
    /// s.compact();
    /// assert_eq!((s.capacity(), s.free_bytes(), s.fragmentation()), (256, 96, 32));
    /// ```
    pub fn fragmentation(&self) -> usize {
        self.buddy.free_bytes() - self.buddy.largest_free()
    }

    /// Re-packs every component into the smallest block that holds it, laid out largest first
    /// in a buffer just large enough: no holes inside components, the blocks in use back to
    /// back from the start of the buffer, and the free space after them in the fewest blocks
    /// the buddy allocator allows (at most one of each size, so
    /// [`fragmentation`](DataStore::fragmentation) is below the size of the largest free
    /// block). Entities keep their handles. O(total size).
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
        // (order, place in the slot arena) of every component.
        let mut live: Vec<(u8, usize)> = Vec::with_capacity(self.len);
        let mut total = 0usize;
        for (at, s) in self.slots.all_slots().iter().enumerate() {
            if s.is_live() {
                let (off, o) = s.block();
                let order = order_for(raw::packed_size(self.block(off, o)));
                total += block_size(order);
                live.push((order, at));
            }
        }
        if live.is_empty() {
            self.buddy = Buddy::new();
            return;
        }
        // Largest first: every block lands right after the previous one.
        live.sort_unstable_by(|a, b| b.cmp(a));
        let mut fresh = Buddy::with_top(order_for(total).max(2));
        for (order, at) in live {
            let noff = fresh.alloc(order);
            let (off, o) = self.slots.all_slots()[at].block();
            let dst = &mut fresh.arena[noff as usize..noff as usize + block_size(order)];
            raw::repack(self.block(off, o), dst);
            self.slots.all_slots_mut()[at].loc = noff | u32::from(order);
        }
        self.buddy = fresh;
    }

    /// The whole store as bytes: a header, the slots in use and one copy of the buffer. Read
    /// back with [`from_bytes`](DataStore::from_bytes). O(size).
    ///
    /// ```text
    /// 0   4    magic "DODs"
    /// 4   2    format version (2)
    /// 6   2    key hash id (1)
    /// 8   1    log2 of the smallest block (5)
    /// 9   1    order of the buffer (0xFF: no buffer)
    /// 10  2    reserved (0)
    /// 12  4    slot count s: slots that hold or held a component
    /// 16  4    buffer length b
    /// 20  4    entities with a component
    /// 24  12s  slots in increasing order of index: index; key tag (generation | type id << 16,
    ///          bit 31 set if the slot holds no component now); block offset | order (0 if none)
    /// ..  b    the buffer
    /// ```
    ///
    /// ```
    /// # use dod::data::DataStore;
    /// let s: DataStore = DataStore::new();
    /// assert_eq!(&s.to_bytes()[..4], b"DODs");
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let arena = &self.buddy.arena;
        let used: Vec<(u32, Slot)> = self
            .slots
            .iter()
            .filter(|(_, s)| s.tag != 0)
            .map(|(i, s)| (i, *s))
            .collect();
        let mut out = Vec::with_capacity(HEADER + SLOT_BYTES * used.len() + arena.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&raw::HASH_ID.to_le_bytes());
        out.push(MIN_SHIFT as u8);
        out.push(if arena.is_empty() {
            NO_ARENA
        } else {
            self.buddy.top
        });
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&(used.len() as u32).to_le_bytes());
        out.extend_from_slice(&(arena.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.len as u32).to_le_bytes());
        for (i, s) in &used {
            out.extend_from_slice(&i.to_le_bytes());
            out.extend_from_slice(&s.tag.to_le_bytes());
            out.extend_from_slice(&s.loc.to_le_bytes());
        }
        // Free blocks travel as they are (zeros and free-list links): loading rebuilds the
        // allocator from the blocks in use, so the buffer is saved with one copy.
        out.extend_from_slice(arena);
        out
    }

    /// Reads a store written by [`to_bytes`](DataStore::to_bytes), checking everything first
    /// in O(size + s) for `s` slots: the header, that the slots are in increasing order of
    /// index and hold keys the key type can have, that every block is aligned to its size,
    /// inside the buffer and overlaps no other, and every component as [`DataView::new`]
    /// does. The buffer is copied once, front to back, each component checked in the copy
    /// right behind it; the allocator's free lists and bits are rebuilt from the blocks in use.
    /// The checks are of structure, not integrity: a changed byte inside a value, a key hash or
    /// an entity's generation can give a valid store with other content, so keep a checksum
    /// beside the bytes where storage or transport may corrupt them.
    ///
    /// What the load allocates follows the input: slots far apart cost a 1 KiB page each, and
    /// the slot table holds at most about 4 KiB per slot read, plus 8 KiB once (the pages, a
    /// page table that grows only while it costs no more than the pages or 4 KiB, and the
    /// spare room of both, which grow by doubling); while the pages grow, their old buffer is
    /// held too. The load also keeps a byte and a bit per 32 bytes of the buffer (about a 28th
    /// of its size). The store's [`max_index`](DataStore::max_index) is not saved: a loaded
    /// store has the default, and
    /// [`from_bytes_with_max_index`](DataStore::from_bytes_with_max_index) bounds the indices
    /// the input may name.
    ///
    /// ```
    /// # use dod::data::{DataStore, DecodeError};
    /// # use dod::Handle;
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(Handle::new(0, 1, 0).unwrap());
    /// let mut bytes = s.to_bytes();
    /// assert!(DataStore::<Handle>::from_bytes(&bytes).is_ok());
    /// bytes[32] = 0x40; // entity 0's block moved out of the buffer
    /// assert!(DataStore::<Handle>::from_bytes(&bytes).is_err());
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::from_bytes_with_max_index(bytes, DEFAULT_MAX_INDEX)
    }

    /// [`from_bytes`](DataStore::from_bytes) for bytes whose entity indices must not exceed
    /// `max`: a slot above it is an error ([`DecodeError::IndexAboveMax`]) before anything
    /// is allocated for it, so the slot table of the loaded store follows the indices the
    /// caller allows, not the ones the input names. The loaded store has that
    /// [`max_index`](DataStore::max_index).
    ///
    /// ```
    /// # use dod::data::{DataStore, DecodeError};
    /// # use dod::Handle;
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(Handle::new(70_000, 1, 0).unwrap());
    /// let bytes = s.to_bytes();
    /// assert_eq!(
    ///     DataStore::<Handle>::from_bytes_with_max_index(&bytes, 65_535),
    ///     Err(DecodeError::IndexAboveMax { entity: 70_000, max: 65_535 })
    /// );
    /// let loaded = DataStore::<Handle>::from_bytes_with_max_index(&bytes, 100_000).unwrap();
    /// assert_eq!(loaded.max_index(), 100_000);
    /// assert_eq!(loaded, s);
    /// ```
    pub fn from_bytes_with_max_index(bytes: &[u8], max: u32) -> Result<Self, DecodeError> {
        if bytes.len() < HEADER {
            return Err(DecodeError::TooShort);
        }
        if bytes[..4] != MAGIC {
            return Err(DecodeError::BadMagic);
        }
        let rd = |at: usize| raw::rd32(bytes, at).unwrap_or(0);
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version != VERSION {
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
            .checked_mul(SLOT_BYTES)
            .and_then(|s| s.checked_add(HEADER))
            .ok_or(DecodeError::BadCounts)?;
        if slots_end.checked_add(arena_len) != Some(bytes.len()) {
            return Err(DecodeError::BadCounts);
        }
        let arena = &bytes[slots_end..];
        let mut slots: Pages<Slot, SLOT_PAGE> = Pages::new();
        // The blocks in buffer order without a sort: block offsets are multiples of the
        // smallest block, so each has a unit of its own, and `starts` marks the units where a
        // block starts, `orders` holds its order. Both are a fraction of the buffer's size
        // (a bit and a byte per 32 bytes); the entity of a block is looked for only to name
        // it in an error.
        let units = arena_len >> MIN_SHIFT;
        let mut starts = BitSet::new();
        starts.try_grow(units).map_err(|_| DecodeError::TooLarge)?;
        let mut orders: Vec<u8> = Vec::new();
        orders
            .try_reserve_exact(units)
            .map_err(|_| DecodeError::TooLarge)?;
        orders.resize(units, 0);
        let mut found = 0usize;
        let mut previous: Option<u32> = None;
        // `slots_end` is `HEADER + SLOT_BYTES * slot_count`, inside `bytes` (checked above).
        for entry in bytes[HEADER..slots_end].chunks_exact(SLOT_BYTES) {
            let word =
                |k: usize| u32::from_le_bytes([entry[k], entry[k + 1], entry[k + 2], entry[k + 3]]);
            let (i, s) = (
                word(0),
                Slot {
                    tag: word(4),
                    loc: word(8),
                },
            );
            let generation = s.tag as u16;
            let type_id = ((s.tag & !Tag::VACANT) >> 16) as u16;
            if previous.is_some_and(|p| p >= i)
                || u64::from(i) >= u64::from(K::MAX_SLOTS)
                || generation == 0
                || type_id > K::MAX_TYPE_ID
            {
                return Err(DecodeError::BadKey { entity: i });
            }
            if i > max {
                return Err(DecodeError::IndexAboveMax { entity: i, max });
            }
            previous = Some(i);
            if s.is_live() {
                let (off, o) = s.block();
                let size = block_size(o.min(MAX_ORDER));
                if o > top
                    || top == NO_ARENA
                    || off as usize % size != 0
                    // In u64: on a 32-bit target the sum could wrap.
                    || u64::from(off) + size as u64 > arena_len as u64
                {
                    return Err(DecodeError::BadBlock { entity: i });
                }
                let unit = off as usize >> MIN_SHIFT;
                if !starts.insert(unit as u32) {
                    // Another block starts here: they overlap.
                    return Err(DecodeError::BadBlock { entity: i });
                }
                orders[unit] = o;
                found += 1;
            } else if s.loc != 0 {
                return Err(DecodeError::BadBlock { entity: i });
            }
            if slots.slot(i).is_none() {
                slots.try_alloc_page(i).map_err(|_| DecodeError::TooLarge)?;
            }
            if let Some(slot) = slots.slot_mut(i) {
                *slot = s;
            }
        }
        if found != live {
            return Err(DecodeError::BadCounts);
        }
        // The entity whose block starts at `off`, to name it in an error.
        let owner = |off: u32| {
            slots
                .iter()
                .find(|(_, s)| s.is_live() && s.block().0 == off)
                .map_or(0, |(i, _)| i)
        };
        // In buffer order: the bytes are copied front to back like a plain copy (the free
        // space between blocks as it is), a chunk ahead of the components, and each component
        // is validated in the copy while the chunk is in the cache: the bytes read from the
        // input once, at the speed of a copy, and the bytes checked are the bytes kept.
        const CHUNK: usize = 16 << 10;
        let mut copy: Vec<u8> = Vec::with_capacity(arena_len);
        let mut blocks: Vec<(u32, u8)> = Vec::with_capacity(live);
        // The end of the block before.
        let mut pos = 0;
        for unit in starts.iter() {
            let o = orders[unit as usize];
            // `unit` and `o` were checked above: the block lies inside the buffer.
            let start = (unit as usize) << MIN_SHIFT;
            let end = start + block_size(o);
            if start < pos {
                // It starts inside the block before.
                return Err(DecodeError::BadBlock {
                    entity: owner(start as u32),
                });
            }
            if end > copy.len() {
                let ahead = end.max(copy.len().saturating_add(CHUNK)).min(arena_len);
                copy.extend_from_slice(&arena[copy.len()..ahead]);
            }
            raw::validate(&copy[start..end]).map_err(|error| DecodeError::InEntity {
                entity: owner(start as u32),
                error: alloc::boxed::Box::new(error),
            })?;
            blocks.push((start as u32, o));
            pos = end;
        }
        copy.extend_from_slice(&arena[copy.len()..]);
        let buddy = if top == NO_ARENA {
            Buddy::new()
        } else {
            Buddy::rebuild(copy, top, &blocks).map_err(|i| DecodeError::BadBlock {
                entity: owner(blocks[i].0),
            })?
        };
        Ok(DataStore {
            buddy,
            slots,
            len: live,
            max_index: max,
            names: KeyNames::new(),
            _key: PhantomData,
        })
    }

    /// Checks every invariant, panicking on the first that fails; for tests and fuzzing.
    /// O(slots + buffer).
    #[doc(hidden)]
    pub fn assert_invariants(&self) {
        self.slots.check();
        let mut used: Vec<(u32, u8)> = Vec::new();
        for (i, s) in self.slots.iter() {
            if s.tag == 0 {
                assert_eq!(s.loc, 0, "slot {i}: never used, but has a block");
                continue;
            }
            assert_ne!(s.tag as u16, 0, "slot {i}: generation 0");
            assert!(
                ((s.tag & !Tag::VACANT) >> 16) as u16 <= K::MAX_TYPE_ID,
                "slot {i}: type id out of range"
            );
            assert!(
                u64::from(i) < u64::from(K::MAX_SLOTS),
                "slot {i}: index out of range"
            );
            if s.is_live() {
                used.push(s.block());
            } else {
                assert_eq!(s.loc, 0, "slot {i}: vacant, but has a block");
            }
        }
        assert_eq!(used.len(), self.len);
        if !self.buddy.arena.is_empty() {
            self.buddy.check(&used);
        } else {
            assert!(used.is_empty());
        }
        for &(off, o) in &used {
            raw::validate(self.block(off, o)).unwrap();
        }
    }
}

impl<K: Key> PartialEq for DataStore<K> {
    /// The same entities with the same entries (floats compared by bits); where the
    /// components sit in the buffer, the generations of slots without a component and the
    /// names do not matter. O(n).
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

    /// The saved bytes with the block of entity slot `n` (in saved order) moved to `loc`.
    fn with_loc(bytes: &[u8], n: usize, loc: u32) -> Vec<u8> {
        let mut b = bytes.to_vec();
        let at = HEADER + SLOT_BYTES * n + 8;
        b[at..at + 4].copy_from_slice(&loc.to_le_bytes());
        b
    }

    #[test]
    fn blocks_that_share_a_start_or_overlap_are_refused() {
        let mut s: DataStore = DataStore::new();
        s.insert(h(0));
        s.insert(h(1));
        s.insert(h(2));
        // Entity 1's block grows past the smallest size, so a small block fits inside it.
        assert!(s.set(h(1), "long", "a string longer than one 32-byte block"));
        let bytes = s.to_bytes();
        let back: DataStore = DataStore::from_bytes(&bytes).unwrap();
        assert_eq!(back, s);
        let loc = |i: u32| s.slots.slot(i).unwrap().loc;
        let (big_off, big_order) = s.slots.slot(1).unwrap().block();
        assert!(big_order >= 1);
        // Entity 2 starts where entity 0 starts.
        let same = with_loc(&bytes, 2, loc(0));
        assert_eq!(
            DataStore::<Handle>::from_bytes(&same),
            Err(DecodeError::BadBlock { entity: 2 })
        );
        // Entity 0 (a smallest block) starts in the second half of entity 1's block: the one
        // that starts later is named.
        assert_eq!(loc(0) & 31, 0);
        let inside = with_loc(&bytes, 0, big_off + block_size(big_order - 1) as u32);
        assert_eq!(
            DataStore::<Handle>::from_bytes(&inside),
            Err(DecodeError::BadBlock { entity: 0 })
        );
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

    /// A key whose `index()` answers two slots by turns: every operation that changes the
    /// store reads it once, so it looks at and changes one slot, and every block stays owned
    /// by exactly one live slot.
    #[test]
    #[cfg(feature = "std")]
    fn a_key_whose_index_changes_between_calls_changes_one_slot() {
        use crate::hostile::{Hostile, FLIP};
        use core::num::NonZeroU16;
        let g = NonZeroU16::new(1).unwrap();
        let k = |i| Hostile(i, i, g);
        let two = Hostile(1, 2, g);
        let long = "a string long enough to move its component to a larger block";
        for op in 0..4 {
            let mut s: DataStore<Hostile> = DataStore::new();
            for i in 0..3 {
                s.insert(k(i));
                assert!(s.set(k(i), "n", i as f32));
            }
            FLIP.with(|f| f.set(false));
            match op {
                0 => drop(s.remove(two)),
                1 => drop(s.set(two, "name", long)),
                2 => drop(s.remove_key(two, "n")),
                _ => drop(s.insert(Hostile(5, 6, g))),
            }
            s.assert_invariants();
            // Each entity has its own component or none, and the rest of the store is intact.
            for i in 0..3 {
                if let Some(v) = s.get_f32(k(i), "n") {
                    assert_eq!(v, i as f32, "op {op}: entity {i}");
                }
            }
            assert_eq!(s.len(), s.iter().count(), "op {op}");
            s.remove(k(0));
            s.remove(k(1));
            s.remove(k(2));
            s.assert_invariants();
        }
    }
}
