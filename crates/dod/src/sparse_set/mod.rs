//! [`SparseSet`]: component storage keyed by entity index.
//!
//! A sparse set maps an entity index (`u32`) to a value through two arrays:
//!
//! - the **sparse** array, indexed by entity, holds for each entity its position in the dense
//!   arrays and the tag of the key it was inserted with. It is *paged*: split into pages of
//!   `PAGE` slots (a power of two, [`DEFAULT_PAGE_SIZE`] unless chosen), each allocated on first
//!   use and released by [`shrink_to_fit`](SparseSet::shrink_to_fit) once empty, so a set
//!   holding entities `10_000_000 .. 10_000_100` holds one or two pages (listed on the side,
//!   with no page table reaching up to them), not eighty megabytes;
//! - the **dense** arrays, [`indices()`](SparseSet::indices) and
//!   [`values()`](SparseSet::values), are plain slices with no holes: a system walks them
//!   directly.
//!
//! Lookup, insertion and [`swap_remove`](SparseSet::swap_remove) are O(1). Order-preserving
//! removal comes in four shapes, each documented with what it does to the order: one at a time
//! ([`shift_remove`](SparseSet::shift_remove), O(n)), in bulk
//! ([`retain`](SparseSet::retain), [`remove_many`](SparseSet::remove_many), O(n + k)), and
//! deferred ([`defer_remove`](SparseSet::defer_remove) leaves a tombstone that iteration skips,
//! [`compact`](SparseSet::compact) removes every tombstone in one stable pass).
//!
//! # Dense order
//!
//! Iteration ([`iter`](SparseSet::iter), [`values`](SparseSet::values), [`keys`](SparseSet::keys),
//! joins, [`drain`](SparseSet::drain), serde) follows the dense order, which each operation
//! changes as follows:
//!
//! | operation | dense order afterwards |
//! |---|---|
//! | `insert`, `try_insert`, `entry(..).or_insert(..)` of a new entity | appended at the end |
//! | the same for a present index (a newer key included), `get_mut`, `get_disjoint_mut`, `IndexMut` | unchanged |
//! | `swap_remove` (also through an entry) | the last entry moves into the hole; the rest unchanged |
//! | `shift_remove`, `retain`, `remove_many`, `compact` | the remaining entries keep their order |
//! | `defer_remove` | unchanged; a tombstone holds the place until `compact` |
//! | `sort_by`, `sort_by_key` | sorted, equal entries in their previous order |
//! | `sort_unstable_by`, `sort_unstable_by_key` | sorted |
//! | `sort_as(other)` | shared entities first, in `other`'s order; the rest unspecified |
//! | `clear`, `drain` | empty |
//!
//! # Keys: plain indices and generational handles
//!
//! Every method that takes an entity is generic over [`SparseKey`], implemented for `u32` and for
//! every [`Key`] (such as [`Handle`](crate::Handle) or a type declared with
//! [`new_handle_type!`](crate::new_handle_type)). One set type serves both styles:
//!
//! - a `u32` names the *slot*: lookups by `u32` check only the index, as a hot-path storage does
//!   where liveness is checked by the layer above;
//! - a `Key` names the slot *for one entity*: its [tag](Key::tag) (generation and type id) is
//!   stored in the sparse slot on insertion, and every lookup by key compares it, so
//!   `contains(stale_key)` is `false` without touching the dense arrays (EnTT keeps the entity
//!   version in its sparse entries for the same reason), and keys of two allocators with other
//!   type ids are told apart.
//!
//! The set follows the keys an allocator hands out, with the rules of [`crate::slot`] (the
//! rules of slotmap's `SecondaryMap`):
//!
//! | what `e` is, for an index the set holds | `get(e)`, `contains`, removals | `insert(e, v)`, `try_insert`, `entry` |
//! |---|---|---|
//! | a `u32` | the entry | replaces the value, keeps the recorded tag |
//! | the key the entry was inserted with | the entry | replaces the value |
//! | a key with a newer generation, or any key when the entry was inserted by a `u32` | nothing | replaces the dead entity's entry, value and tag, in place |
//! | a key with an older generation (stale) | nothing | refused: [`StaleKey`](crate::InsertErrorKind::StaleKey) |
//! | a key of the same generation and another type id (foreign) | nothing | refused: [`ForeignKey`](crate::InsertErrorKind::ForeignKey) |
//! | a malformed key (one no container of its type hands out: bit 31 of its tag set, generation 0, or an index or type id past its type's range) | nothing | refused: [`MalformedKey`](crate::InsertErrorKind::MalformedKey) |
//!
//! For an index the set does not hold, a `u32` inserts with no tag and a well-formed key
//! inserts with its tag (a set keeps nothing of removed entries, so it cannot tell a stale key
//! from a live one there: liveness is the allocator's to know). [`insert`](SparseSet::insert)
//! panics on a refusal; [`try_insert`](SparseSet::try_insert) gives the value back in an
//! [`InsertError`]; [`entry`](SparseSet::entry) answers `None`.
//!
//! Joins pair two entries of one index only if their tags agree, or if either was inserted by
//! a `u32` (no tag to compare), so a dead entity's leftover in one set never meets a new
//! entity's component in another. [`keys`](SparseSet::keys) and
//! [`iter_keys`](SparseSet::iter_keys) give back the keys the entries were inserted with.
//!
//! A trait rather than two families of methods (`get` / `get_key`) keeps the API the size of
//! std's and lets `Index`, `Extend` and `FromIterator` take either kind. The trait's methods are
//! named `sparse_index` / `sparse_tag` so that they never clash with [`Key::index`].
//!
//! ```
//! use dod::{Handle, SparseSet};
//!
//! let mut positions: SparseSet<[f32; 2]> = SparseSet::new();
//! positions.insert(7u32, [0.0, 1.0]);                   // a plain entity index
//! let h = Handle::new(9, 3, 0).unwrap();                 // entity 9, generation 3
//! positions.insert(h, [2.0, 3.0]);
//!
//! assert_eq!(positions.get(9u32), Some(&[2.0, 3.0]));   // by index: any generation
//! assert_eq!(positions.get(h), Some(&[2.0, 3.0]));      // by key: generation 3 only
//! let stale = Handle::new(9, 2, 0).unwrap();
//! assert!(!positions.contains(stale));
//! assert!(positions.try_insert(stale, [9.0, 9.0]).is_err()); // entity 9 is not stale's
//!
//! for p in positions.values_mut() {                     // the dense slice, no holes
//!     p[1] -= 9.8;
//! }
//! assert_eq!(positions.indices(), &[7, 9]);
//! assert_eq!(positions.keys::<Handle>().collect::<Vec<_>>(), [h]);
//! ```
//!
//! # Invariants
//!
//! - `entities.len() == values.len()`; position `i` of the dense arrays holds entity
//!   `entities[i]` and its value `values[i]`, or a tombstone (`entities[i] == TOMBSTONE`, its
//!   value not yet dropped).
//! - For every live entity `e` at position `i`, its sparse slot holds `i + 1` and its tag (0
//!   when inserted by a plain index, else a key's `generation | type_id << 16`, bit 31
//!   clear). Every other slot is vacant (both halves 0), and no live entity has index
//!   `u32::MAX`.
//! - `pending` counts the tombstones, and every tombstone sits at a position `>= first_tombstone`.
//! - Every slot of an index `>= vacant_from` is vacant.
//! - The dense arrays hold fewer than `u32::MAX - 1` entries.
//!
//! # Memory
//!
//! [`memory_usage`](SparseSet::memory_usage) reports the bytes held: 8 bytes per sparse slot of
//! every allocated page (all pages live in one arena, so allocating a page is not an allocation)
//! and 4 bytes naming each page, 4 bytes per page-table entry, and `4 + size_of::<T>()` per
//! dense entry of capacity.
//!
//! The page table reaches only as far as it costs no more than the pages themselves (4 bytes
//! per `PAGE` indices against `8 * PAGE` bytes a page); a page past it is listed on the side,
//! so entity `u32::MAX - 1` alone costs one page. The pages of the indices from 0 up, allocated
//! without a gap, sit in the arena at their own place, so their slots are found from the index
//! alone, without the page table: a lookup there costs what it costs in a plain array. The ids
//! an allocator hands out from 0 up land there while every page in front of them is held; a
//! page that arrives out of order is swapped into place once the pages in front of it exist,
//! and a page released by `shrink_to_fit` ends the prefix where it was.
//! [`max_index`](SparseSet::max_index) caps the indices a set accepts (`u32::MAX - 1` unless
//! set; the table then stays within `4 * (max_index / PAGE + 1)` bytes), and
//! [`try_insert`](SparseSet::try_insert) refuses an index above it before allocating anything
//! and reports a failed allocation as an error instead of aborting. Entity allocators hand out
//! small indices; for indices from untrusted input, set `max_index` and use `try_insert` (the
//! serde loader does).

mod entry;
mod iter;
mod join;
mod pages;
#[cfg(feature = "rayon")]
mod rayon;
mod remove;
mod run;
#[cfg(feature = "serde")]
mod serde;
mod sort;
mod split;

pub use entry::{Entry, OccupiedEntry, VacantEntry};
pub use iter::{Drain, IntoIter, Iter, IterKeys, IterMut, Keys};
pub use join::{Join, Join3, JoinMut};
pub use run::AppendRun;
pub use split::SparseView;

use crate::error::{InsertError, InsertErrorKind};
use crate::key::Key;
use crate::slot::{Age, Tag};
use alloc::collections::TryReserveError;
use alloc::vec::Vec;
use core::fmt;
use core::num::NonZeroU16;
use core::ops::{Index, IndexMut};
use pages::{decode, encode, slot_tag, Pages, Slot};

/// The default number of sparse slots per page (1 KiB of slots).
///
/// Chosen with `dod-bench sparse`'s page-size table. Entities that arrive in clusters leave far
/// fewer untouched slots in small pages: a set holding 10 % of a million ids in runs of 64
/// holds about a third of an unpaged sparse array with 128-slot pages, half with 256, and
/// nearly all of it with 1024 or more. The price is a longer page table (4 bytes per 128 ids),
/// which only lookups past the pages held from index 0 up without a gap read: with a page
/// missing early, small pages leave more of the ids behind such a gap. Pick `PAGE` per set
/// when the ids are known to be dense (larger) or very clustered (smaller).
pub const DEFAULT_PAGE_SIZE: usize = 128;

/// The marker that [`SparseSet::indices`] shows at the position of a deferred removal.
///
/// It is `u32::MAX`, an index no [`Key`] can carry and above every
/// [`max_index`](SparseSet::max_index).
pub const TOMBSTONE: u32 = u32::MAX;

/// The [`max_index`](SparseSet::max_index) of a new set: every index but [`TOMBSTONE`].
///
/// ```
/// use dod::sparse_set::{SparseSet, DEFAULT_MAX_INDEX};
/// assert_eq!(SparseSet::<u8>::new().max_index(), DEFAULT_MAX_INDEX);
/// ```
pub const DEFAULT_MAX_INDEX: u32 = u32::MAX - 1;

/// The most entries the dense arrays hold: a sparse slot encodes position + 1 in 32 bits, and
/// `u32::MAX` stays free so that a vacant slot's probe lands past the end (see `probe`).
const MAX_DENSE: usize = u32::MAX as usize - 1;

/// Something that names an entity: a plain `u32` index, or any [`Key`] (index and tag).
///
/// See the [module documentation](self) for how the two kinds are checked.
///
/// ```
/// use dod::sparse_set::SparseKey;
/// use dod::{Handle, Key};
///
/// assert_eq!(5u32.sparse_index(), 5);
/// assert_eq!(5u32.sparse_tag(), None);
/// let h = Handle::new(5, 2, 1).unwrap();
/// assert_eq!((h.sparse_index(), h.sparse_tag()), (5, Some(h.tag())));
/// assert_eq!(h.tag(), 2 | 1 << 16);
/// ```
pub trait SparseKey: Copy {
    /// The entity's index: the slot of the sparse array.
    fn sparse_index(self) -> u32;
    /// The tag to check and record (a key's [`Key::tag`]: `generation | type_id << 16`), or
    /// `None` for a plain index, which accepts whatever tag the slot holds.
    fn sparse_tag(self) -> Option<u32>;
    /// The tag an insertion records: [`sparse_tag`](Self::sparse_tag), with bit 31 also set
    /// for a key its type's containers never hand out because its index or type id is past
    /// the type's range, so that every insertion refuses it. Lookups keep the cheaper
    /// `sparse_tag`: no insertion stores such a key, so none can match one.
    #[doc(hidden)]
    #[inline]
    fn sparse_insert_tag(self) -> Option<u32>
    where
        Self: Sized,
    {
        self.sparse_tag()
    }
    /// How many indices this kind of key addresses (a key type's
    /// [`MAX_SLOTS`](Key::MAX_SLOTS)); a plain index addresses every `u32`. An
    /// [`append_run_as`](SparseSet::append_run_as) stops before it, so that every entry of
    /// the run is one a key of the type can name.
    const SPARSE_SLOTS: u64 = 1 << 32;
}

impl SparseKey for u32 {
    #[inline]
    fn sparse_index(self) -> u32 {
        self
    }
    #[inline]
    fn sparse_tag(self) -> Option<u32> {
        None
    }
}

impl<K: Key> SparseKey for K {
    const SPARSE_SLOTS: u64 = K::MAX_SLOTS as u64;
    #[inline]
    fn sparse_index(self) -> u32 {
        self.index()
    }
    /// The key's tag; a tag of generation 0 (a forged bit pattern, such as a `Handle` cast
    /// from bytes) comes back with bit 31 set, so that the set refuses it as malformed instead
    /// of reading it as the tag 0 of a plain index, or storing a tag its loader refuses.
    #[inline]
    fn sparse_tag(self) -> Option<u32> {
        let t = self.tag();
        Some(if t as u16 == 0 { t | Tag::VACANT } else { t })
    }
    /// The key's tag, with bit 31 set for every malformed key (a pattern no container of its
    /// type hands out: also a `Handle32` with index `0xFFFF`, say), which a `DataStore`
    /// refuses too. Kept out of lookups, whose cost it measurably raised (random gets through
    /// `dod-world`: 1.36–1.45x sparsey's time without it, 1.73–1.97x with it).
    #[inline]
    fn sparse_insert_tag(self) -> Option<u32> {
        let t = self.tag();
        let malformed = crate::slot::is_malformed_key::<K>(self.index(), t);
        Some(t | u32::from(malformed) << 31)
    }
}

/// Why a key with tag `key` may not take over an entry recorded with tag `entry` (the two
/// differ), or `None` if it may (it is newer: its entity replaced the entry's).
#[cold]
#[inline(never)]
fn refusal(entry: u32, key: u32) -> Option<InsertErrorKind> {
    match Tag::from_bits(entry).age_of_tag(key) {
        Age::Newer | Age::Same => None,
        Age::Older => Some(InsertErrorKind::StaleKey),
        Age::Foreign => Some(InsertErrorKind::ForeignKey),
        Age::Malformed => Some(InsertErrorKind::MalformedKey),
    }
}

/// Whether a key's tag is malformed (bit 31 set), which no key hands out.
#[inline]
fn is_malformed(tag: u32) -> bool {
    tag & Tag::VACANT != 0
}

/// Component storage keyed by entity index: a paged sparse array of positions and key tags
/// in front of dense arrays of entities and values.
///
/// `PAGE` is the number of sparse slots per page (a power of two); see the
/// [module documentation](self) for the design, the key kinds and the invariants.
///
/// | operation | cost |
/// |---|---|
/// | `get`, `contains`, `insert`, `try_insert`, `entry`, `swap_remove`, `defer_remove` | O(1) |
/// | `get_disjoint_mut` of `N` entities | O(N²) |
/// | `shift_remove` | O(n) |
/// | `retain`, `remove_many`, `compact` | O(n + k) |
/// | `sort_by`, `sort_by_key`, `sort_unstable_by`, `sort_unstable_by_key` | O(n log n) |
/// | `sort_as` | O(other.len()) |
///
/// ```
/// use dod::SparseSet;
///
/// let mut hp: SparseSet<u32> = SparseSet::new();
/// hp.insert(3u32, 100);
/// hp.insert(1u32, 80);
/// hp[3u32] -= 25;
/// assert_eq!(hp.iter().collect::<Vec<_>>(), [(3, &75), (1, &80)]);
/// assert_eq!(hp.swap_remove(3u32), Some(75));
/// assert_eq!(hp.len(), 1);
/// ```
pub struct SparseSet<T, const PAGE: usize = DEFAULT_PAGE_SIZE> {
    pages: Pages<PAGE>,
    entities: Vec<u32>,
    values: Vec<T>,
    pending: usize,
    first_tombstone: usize,
    max_index: u32,
    /// Every index at or above it has a vacant slot: no entry has held it since the set was
    /// last cleared. An insertion of such an index (a run of new entities, the common case of
    /// an allocator handing out fresh ids) writes its slot without reading it first.
    vacant_from: u32,
}

impl<T> SparseSet<T> {
    /// An empty set with the default page size ([`DEFAULT_PAGE_SIZE`]); allocates nothing.
    ///
    /// O(1).
    ///
    /// ```
    /// let s: dod::SparseSet<u8> = dod::SparseSet::new();
    /// assert!(s.is_empty());
    /// assert_eq!(s.memory_usage(), 0);
    /// ```
    pub const fn new() -> Self {
        Self::new_paged()
    }

    /// An empty set with room for `capacity` values without reallocating: the dense arrays
    /// get exactly that room and, as [`reserve`](SparseSet::reserve) gives, the arena gets
    /// room for the sparse pages of a run of `capacity` new indices (the pages themselves are
    /// still made on first use).
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s: dod::SparseSet<u64> = dod::SparseSet::with_capacity(1_000);
    /// assert!(s.capacity() >= 1_000);
    /// let held = s.memory_usage();
    /// s.extend((0..1_000u32).map(|i| (i, 0)));
    /// assert!(s.memory_usage() <= held + 64); // the page table grew; nothing else did
    /// ```
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_capacity_paged(capacity)
    }
}

impl<T, const PAGE: usize> SparseSet<T, PAGE> {
    const PAGE_IS_POWER_OF_TWO: () = assert!(
        PAGE.is_power_of_two(),
        "SparseSet: PAGE must be a power of two"
    );

    /// An empty set with `PAGE` sparse slots per page; allocates nothing.
    ///
    /// [`new`](SparseSet::new) is this with the default page size; a const generic default
    /// does not take part in type inference, so the default has its own constructors (as
    /// `HashMap::new` does for its default hasher).
    ///
    /// O(1).
    ///
    /// ```
    /// let s = dod::SparseSet::<u8, 64>::new_paged();
    /// assert!(s.is_empty());
    /// ```
    ///
    /// A page size that is not a power of two does not compile:
    ///
    /// ```compile_fail
    /// let s = dod::SparseSet::<u8, 100>::new_paged();
    /// ```
    pub const fn new_paged() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::PAGE_IS_POWER_OF_TWO;
        SparseSet {
            pages: Pages::new(),
            entities: Vec::new(),
            values: Vec::new(),
            pending: 0,
            first_tombstone: 0,
            max_index: DEFAULT_MAX_INDEX,
            vacant_from: 0,
        }
    }

    /// An empty set with `PAGE` sparse slots per page and room for `capacity` values (see
    /// [`with_capacity`](SparseSet::with_capacity)).
    ///
    /// O(1).
    ///
    /// ```
    /// let s = dod::SparseSet::<u8, 1024>::with_capacity_paged(10);
    /// assert!(s.capacity() >= 10);
    /// ```
    pub fn with_capacity_paged(capacity: usize) -> Self {
        let mut s = Self::new_paged();
        s.entities.reserve_exact(capacity);
        s.values.reserve_exact(capacity);
        s.pages.reserve(capacity);
        s
    }

    /// The number of entities in the set (tombstones not counted).
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s = dod::SparseSet::new();
    /// s.insert(4u32, 'a');
    /// assert_eq!(s.len(), 1);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.entities.len() - self.pending
    }

    /// `true` if the set holds no entity.
    ///
    /// O(1).
    ///
    /// ```
    /// assert!(dod::SparseSet::<u8>::new().is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many values the dense arrays can hold without reallocating.
    ///
    /// O(1).
    ///
    /// ```
    /// let s: dod::SparseSet<u8> = dod::SparseSet::with_capacity(3);
    /// assert!(s.capacity() >= 3);
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        self.values.capacity().min(self.entities.capacity())
    }

    /// The dense array of values, in dense order.
    ///
    /// While removals are pending (see [`defer_remove`](Self::defer_remove)) the slice still
    /// holds their values, at the positions where [`entities`](Self::indices) shows
    /// [`TOMBSTONE`]; [`compact`](Self::compact) drops them. Without pending removals, its
    /// length is [`len`](Self::len).
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s = dod::SparseSet::new();
    /// s.insert(8u32, 1.5);
    /// s.insert(2u32, 2.5);
    /// assert_eq!(s.values(), &[1.5, 2.5]);
    /// ```
    #[inline]
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The dense array of values, mutable; see [`values`](Self::values).
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s = dod::SparseSet::new();
    /// s.insert(8u32, 1);
    /// s.values_mut()[0] += 1;
    /// assert_eq!(s[8u32], 2);
    /// ```
    #[inline]
    pub fn values_mut(&mut self) -> &mut [T] {
        &mut self.values
    }

    /// A raw pointer to the dense array of values, for code that writes values while other
    /// code reads the set through shared borrows (an entity world's queries running on several
    /// threads).
    ///
    /// As [`Vec::as_mut_ptr`]: it materializes no reference to the values, so the pointer
    /// stays valid beside later shared borrows of the set, for as long as the array does not
    /// move. Any call through `&mut self` may move it (an insertion that grows it,
    /// [`shrink_to_fit`](Self::shrink_to_fit)) or move values within it (a removal, a sort,
    /// [`compact`](Self::compact)); take the pointer again after one. Calls through `&self`
    /// do neither. The caller keeps Rust's aliasing rules: while a value is written through
    /// the pointer, no reference to it (a `&T`, a `&mut T`, or a slice such as
    /// [`values`](Self::values) or [`split`](Self::split) hand out) may be alive.
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s = dod::SparseSet::new();
    /// s.insert(8u32, 1);
    /// let p = s.values_as_mut_ptr();
    /// // Shared borrows of the set do not make `p` invalid.
    /// let at = s.get_index_of(8u32).unwrap();
    /// // SAFETY: `at` is below the length, and no reference to that value is alive.
    /// unsafe { *p.add(at) += 1 };
    /// assert_eq!(s[8u32], 2);
    /// ```
    #[inline]
    pub fn values_as_mut_ptr(&mut self) -> *mut T {
        self.values.as_mut_ptr()
    }

    /// The dense array of entity indices, position for position with
    /// [`values`](Self::values); a deferred removal shows as
    /// [`TOMBSTONE`] until [`compact`](Self::compact).
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s = dod::SparseSet::new();
    /// s.insert(8u32, ());
    /// s.insert(2u32, ());
    /// assert_eq!(s.indices(), &[8, 2]);
    /// ```
    #[inline]
    pub fn indices(&self) -> &[u32] {
        &self.entities
    }

    /// The raw sparse slot of an entity index (0 when vacant).
    #[inline]
    fn slot(&self, index: u32) -> Slot {
        self.pages.get(index)
    }

    /// The dense position of `e`, checking its tag if it has one.
    #[inline]
    fn position<E: SparseKey>(&self, e: E) -> Option<usize> {
        position_in(self.slot(e.sparse_index()), e)
    }

    /// Where to look for `e`'s value: its dense position if the set holds it, a position past
    /// the end of the dense arrays if its slot is vacant (so that the caller's bounds check
    /// also checks vacancy), `None` if `e` is a key with another tag.
    #[inline]
    fn probe<E: SparseKey>(&self, e: E) -> Option<usize> {
        let slot = self.slot(e.sparse_index());
        if let Some(t) = e.sparse_tag() {
            if slot_tag(slot) != t {
                return None;
            }
        }
        // A vacant slot (0) wraps to `u32::MAX`, past any dense position: the dense arrays
        // hold at most `MAX_DENSE` entries (see `insert_slow`).
        Some(slot.probe_position())
    }

    /// The position of `e` in the dense arrays, if the set holds it.
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s = dod::SparseSet::new();
    /// s.insert(10u32, 'x');
    /// s.insert(20u32, 'y');
    /// assert_eq!(s.get_index_of(20u32), Some(1));
    /// assert_eq!(s.get_index_of(30u32), None);
    /// ```
    #[inline]
    pub fn get_index_of<E: SparseKey>(&self, e: E) -> Option<usize> {
        self.position(e)
    }

    /// The generation `index` was inserted with: `Some(None)` when it was inserted by a plain
    /// `u32`, `None` when the set does not hold `index`.
    ///
    /// O(1).
    ///
    /// ```
    /// use dod::{Handle, SparseSet};
    /// let mut s = SparseSet::new();
    /// s.insert(Handle::new(4, 7, 0).unwrap(), ());
    /// s.insert(5u32, ());
    /// assert_eq!(s.generation_of(4).map(|g| g.map(|g| g.get())), Some(Some(7)));
    /// assert_eq!(s.generation_of(5), Some(None));
    /// assert_eq!(s.generation_of(6), None);
    /// ```
    #[inline]
    pub fn generation_of(&self, index: u32) -> Option<Option<NonZeroU16>> {
        let slot = self.slot(index);
        decode(slot).map(|_| NonZeroU16::new(slot_tag(slot) as u16))
    }

    /// The key the entry of `index` was inserted with, rebuilt from its tag, or `None` if the
    /// set does not hold `index` or holds it by a plain `u32`. `K` should be the key type the
    /// set is filled with.
    ///
    /// O(1).
    ///
    /// ```
    /// use dod::{Handle, SparseSet};
    /// let mut s = SparseSet::new();
    /// let h = Handle::new(4, 7, 2).unwrap();
    /// s.insert(h, ());
    /// s.insert(5u32, ());
    /// assert_eq!(s.key_of::<Handle>(4), Some(h));
    /// assert_eq!(s.key_of::<Handle>(5), None);
    /// ```
    #[inline]
    pub fn key_of<K: Key>(&self, index: u32) -> Option<K> {
        let slot = self.slot(index);
        match (decode(slot), slot_tag(slot)) {
            (Some(_), t) if t != 0 => Some(K::from_index_tag(index, t)),
            _ => None,
        }
    }

    /// `true` if the set holds `e`. A [`Key`] must also match the tag
    /// (generation and type id) it was inserted with; the check reads the sparse slot only.
    ///
    /// O(1).
    ///
    /// ```
    /// use dod::{Handle, SparseSet};
    /// let mut s = SparseSet::new();
    /// let h = Handle::new(3, 1, 0).unwrap();
    /// s.insert(h, "x");
    /// assert!(s.contains(h) && s.contains(3u32));
    /// assert!(!s.contains(Handle::new(3, 2, 0).unwrap()));
    /// assert!(!s.contains(Handle::new(3, 1, 5).unwrap())); // another type id
    /// ```
    #[inline]
    pub fn contains<E: SparseKey>(&self, e: E) -> bool {
        self.position(e).is_some()
    }

    /// The value of `e`, if the set holds it.
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s = dod::SparseSet::new();
    /// s.insert(1u32, "one");
    /// assert_eq!(s.get(1u32), Some(&"one"));
    /// assert_eq!(s.get(2u32), None);
    /// ```
    #[inline]
    pub fn get<E: SparseKey>(&self, e: E) -> Option<&T> {
        self.values.get(self.probe(e)?)
    }

    /// Starts loading the sparse slot of `e` into the cache, so that an insertion, lookup or
    /// removal of `e` a little later does not wait for memory. A hint for loops that know
    /// their next entities ahead (an allocator's free list, a sorted batch): it changes
    /// nothing observable and costs a few instructions.
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s = dod::SparseSet::new();
    /// s.insert(7u32, 'a');
    /// s.prefetch(7u32);
    /// assert_eq!(s.get(7u32), Some(&'a'));
    /// ```
    #[inline]
    pub fn prefetch<E: SparseKey>(&self, e: E) {
        self.pages.prefetch(e.sparse_index());
    }

    /// The value of `e`, mutable.
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s = dod::SparseSet::new();
    /// s.insert(1u32, 10);
    /// *s.get_mut(1u32).unwrap() += 1;
    /// assert_eq!(s[1u32], 11);
    /// ```
    #[inline]
    pub fn get_mut<E: SparseKey>(&mut self, e: E) -> Option<&mut T> {
        let pos = self.probe(e)?;
        self.values.get_mut(pos)
    }

    /// Mutable references to the values of `N` entities at once, or `None` if the set does not
    /// hold one of them or two name the same index.
    ///
    /// O(N²) for the distinctness check.
    ///
    /// ```
    /// let mut s: dod::SparseSet<u32> = [(1u32, 10), (2, 20)].into_iter().collect();
    /// if let Some([a, b]) = s.get_disjoint_mut([1u32, 2]) {
    ///     core::mem::swap(a, b);
    /// }
    /// assert_eq!((s[1u32], s[2u32]), (20, 10));
    /// assert!(s.get_disjoint_mut([1u32, 1]).is_none());
    /// assert!(s.get_disjoint_mut([1u32, 3]).is_none());
    /// ```
    pub fn get_disjoint_mut<E: SparseKey, const N: usize>(
        &mut self,
        entities: [E; N],
    ) -> Option<[&mut T; N]> {
        let mut positions = [0usize; N];
        for (p, e) in positions.iter_mut().zip(entities) {
            *p = self.position(e)?;
        }
        self.values.get_disjoint_mut(positions).ok()
    }

    /// Inserts `value` for `e` and returns the value it replaces.
    ///
    /// If the set holds the index, its value is replaced in place (its position does not
    /// change) and the old value is returned; a new entity goes to the end of the dense
    /// arrays. A [`Key`] records its tag; a plain `u32` records none for a new entity and
    /// keeps the recorded tag when replacing. A key newer than the entry's replaces the dead
    /// entity's entry (its value is returned) and records its own tag; see the
    /// [module documentation](self) for every case.
    ///
    /// O(1) (amortised; the first entity of a page allocates the page).
    ///
    /// # Panics
    ///
    /// If the key is refused: stale (older than the entry's), foreign (another type id) or
    /// malformed; if the index is above [`max_index`](Self::max_index) (so always for
    /// [`TOMBSTONE`]); and if the dense arrays are full (`u32::MAX - 1` entries).
    /// [`try_insert`](Self::try_insert) returns these as errors, with the value.
    ///
    /// ```
    /// use dod::{Handle, SparseSet};
    /// let mut s = SparseSet::new();
    /// assert_eq!(s.insert(5u32, 'a'), None);
    /// assert_eq!(s.insert(5u32, 'b'), Some('a'));
    /// assert_eq!(s[5u32], 'b');
    ///
    /// let old = Handle::new(6, 1, 0).unwrap();
    /// let new = Handle::new(6, 2, 0).unwrap(); // entity 6 died and its index was reused
    /// s.insert(old, 'c');
    /// assert_eq!(s.insert(new, 'd'), Some('c'));
    /// assert!(!s.contains(old) && s.contains(new));
    /// ```
    ///
    /// ```should_panic
    /// # use dod::{Handle, SparseSet};
    /// let mut s = SparseSet::new();
    /// s.insert(Handle::new(6, 2, 0).unwrap(), 'd');
    /// s.insert(Handle::new(6, 1, 0).unwrap(), 'c'); // stale: panics
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn insert<E: SparseKey>(&mut self, e: E, value: T) -> Option<T> {
        self.insert_tagged(e.sparse_index(), e.sparse_insert_tag(), value)
    }

    /// [`insert`](Self::insert) that refuses instead of panicking or aborting, and gives the
    /// value back in the error:
    ///
    /// - [`MalformedKey`](InsertErrorKind::MalformedKey) for a key no container of its type
    ///   hands out, wherever its index points;
    /// - [`IndexAboveMax`](InsertErrorKind::IndexAboveMax) if the index is above
    ///   [`max_index`](Self::max_index) and the set does not hold it (an entry held from
    ///   before [`set_max_index`](Self::set_max_index) lowered the bound can still be
    ///   replaced); nothing is allocated;
    /// - [`StaleKey`](InsertErrorKind::StaleKey), [`ForeignKey`](InsertErrorKind::ForeignKey)
    ///   for a key the [rules](self#keys-plain-indices-and-generational-handles) refuse;
    /// - [`OutOfMemory`](InsertErrorKind::OutOfMemory) if the page or the dense arrays
    ///   cannot grow (a page allocated before the failure stays, empty, until
    ///   [`shrink_to_fit`](Self::shrink_to_fit));
    /// - [`Full`](InsertErrorKind::Full) if the dense arrays hold `u32::MAX - 1` entries.
    ///
    /// On success it returns what `insert` returns: the replaced value, if any.
    ///
    /// O(1) (amortised).
    ///
    /// ```
    /// use dod::{Handle, InsertErrorKind, SparseSet};
    /// let mut s: SparseSet<&str> = SparseSet::new().with_max_index(1_000);
    /// let live = Handle::new(3, 2, 0).unwrap();
    /// assert_eq!(s.try_insert(live, "b").unwrap(), None);
    ///
    /// let stale = Handle::new(3, 1, 0).unwrap();
    /// let err = s.try_insert(stale, "a").unwrap_err();
    /// assert_eq!(err.kind(), InsertErrorKind::StaleKey);
    /// assert_eq!(err.into_inner(), "a");
    ///
    /// let before = s.memory_usage();
    /// let err = s.try_insert(u32::MAX - 1, "far").unwrap_err();
    /// assert_eq!(err.kind(), InsertErrorKind::IndexAboveMax { index: u32::MAX - 1, max: 1_000 });
    /// assert_eq!(s.memory_usage(), before);
    /// ```
    #[inline]
    pub fn try_insert<E: SparseKey>(
        &mut self,
        e: E,
        value: T,
    ) -> Result<Option<T>, InsertError<T>> {
        self.try_insert_tagged(e.sparse_index(), e.sparse_insert_tag(), value)
    }

    /// `insert` with the key's tag (`None` for a plain index).
    #[inline(always)]
    #[track_caller]
    fn insert_tagged(&mut self, index: u32, tag: Option<u32>, value: T) -> Option<T> {
        match self.insert_hot(index, tag, value) {
            Ok(old) => old,
            Err(value) => self.insert_cold(index, tag, value),
        }
    }

    /// `try_insert` with the key's tag (`None` for a plain index).
    #[inline]
    fn try_insert_tagged(
        &mut self,
        index: u32,
        tag: Option<u32>,
        value: T,
    ) -> Result<Option<T>, InsertError<T>> {
        match self.insert_hot(index, tag, value) {
            Ok(old) => Ok(old),
            Err(value) => self.insert_slow::<true>(index, tag, value),
        }
    }

    /// The two common insertions, inlined into the caller's loop: a new entity when the
    /// dense arrays have room, and a present entity named by its own tag or by a plain
    /// index. Every other case gives the value back for [`insert_slow`](Self::insert_slow)
    /// (measured: a shared path that returned `Result<_, InsertError>` stayed a call, or
    /// stored its result on every insertion).
    #[inline(always)]
    fn insert_hot(&mut self, index: u32, tag: Option<u32>, value: T) -> Result<Option<T>, T> {
        if index > self.max_index {
            return Err(value);
        }
        let Some(slot) = self.pages.slot_mut(index) else {
            return Err(value);
        };
        if index < self.vacant_from {
            let stored = *slot;
            if let Some(pos) = decode(stored) {
                if tag.is_some_and(|t| t != slot_tag(stored)) {
                    return Err(value);
                }
                return Ok(Some(core::mem::replace(&mut self.values[pos], value)));
            }
        }
        let pos = self.entities.len();
        let t = tag.unwrap_or(0);
        if is_malformed(t)
            || pos >= MAX_DENSE
            || pos >= self.entities.capacity()
            || self.values.len() >= self.values.capacity()
        {
            return Err(value);
        }
        push_within_capacity(&mut self.entities, index);
        push_within_capacity(&mut self.values, value);
        *slot = encode(pos, t);
        // `index <= max_index < u32::MAX`, so `index + 1` does not overflow.
        self.vacant_from = self.vacant_from.max(index + 1);
        Ok(None)
    }

    /// `insert`'s way out of [`insert_hot`](Self::insert_hot): the checked insertion, which
    /// panics on a refusal.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn insert_cold(&mut self, index: u32, tag: Option<u32>, value: T) -> Option<T> {
        match self.insert_slow::<false>(index, tag, value) {
            Ok(old) => old,
            Err(err) => self.refused(index, tag, err),
        }
    }

    /// Every insertion [`insert_hot`](Self::insert_hot) leaves out: refuses an index above
    /// `max_index` or a key the rules refuse (before allocating anything), replaces the entry
    /// of a dead entity for a newer key, and otherwise makes room (a page, dense capacity, or
    /// a compaction when tombstones fill the dense arrays) and inserts. With `TRY` an
    /// allocation failure is an error; without, it aborts as `Vec`'s do.
    #[cold]
    #[inline(never)]
    fn insert_slow<const TRY: bool>(
        &mut self,
        index: u32,
        tag: Option<u32>,
        mut value: T,
    ) -> Result<Option<T>, InsertError<T>> {
        use InsertErrorKind::{Full, MalformedKey, OutOfMemory};
        if tag.is_some_and(is_malformed) {
            return Err(InsertError::new(MalformedKey, value));
        }
        if self.bounds_out(index, self.slot(index)) {
            return Err(self.above_max(index, value));
        }
        loop {
            let Some(slot) = self.pages.slot_mut(index) else {
                if !TRY {
                    self.pages.alloc_page(index);
                } else if self.pages.try_alloc_page(index).is_err() {
                    return Err(InsertError::new(OutOfMemory, value));
                }
                continue;
            };
            let stored = *slot;
            if let Some(pos) = decode(stored) {
                if let Some(t) = tag.filter(|&t| t != slot_tag(stored)) {
                    if let Some(kind) = refusal(slot_tag(stored), t) {
                        return Err(InsertError::new(kind, value));
                    }
                    *slot = encode(pos, t);
                }
                return Ok(Some(core::mem::replace(&mut self.values[pos], value)));
            }
            let len = self.entities.len();
            if len >= MAX_DENSE {
                // Only tombstones can make the dense arrays this long, short of `MAX_DENSE`
                // live entities.
                if self.pending == 0 {
                    return Err(InsertError::new(Full, value));
                }
                self.compact();
            } else if len == self.entities.capacity() || len == self.values.capacity() {
                // The dense arrays only: the page of `index` exists by now.
                if !TRY {
                    self.entities.reserve(1);
                    self.values.reserve(1);
                } else if self.entities.try_reserve(1).is_err()
                    || self.values.try_reserve(1).is_err()
                {
                    return Err(InsertError::new(OutOfMemory, value));
                }
            }
            // The page exists, the tag is well formed and the dense arrays have room now.
            match self.insert_hot(index, tag, value) {
                Ok(old) => return Ok(old),
                Err(v) => value = v,
            }
        }
    }

    /// Whether an insertion at `index`, whose slot is `stored`, is refused by `max_index`.
    /// Only a new entry is bounded: one the set holds above a lowered bound stays, and its
    /// value can be replaced.
    #[inline]
    fn bounds_out(&self, index: u32, stored: Slot) -> bool {
        index > self.max_index && decode(stored).is_none()
    }

    /// The error of an index above `max_index`.
    #[cold]
    #[inline(never)]
    fn above_max(&self, index: u32, value: T) -> InsertError<T> {
        let max = self.max_index;
        InsertError::new(InsertErrorKind::IndexAboveMax { index, max }, value)
    }

    /// The panic of an `insert` that `insert_slow` refused.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn refused(&self, index: u32, tag: Option<u32>, err: InsertError<T>) -> ! {
        let kind = err.kind();
        drop(err);
        let entry = Tag::from_bits(slot_tag(self.slot(index)));
        let key = Tag::from_bits(tag.unwrap_or(0));
        let (g, tid) = (key.generation(), key.type_id());
        match kind {
            InsertErrorKind::IndexAboveMax {
                index: TOMBSTONE, ..
            } => panic!(
                "SparseSet::insert: index u32::MAX is never an entity (it marks deferred \
                 removals; use try_insert to refuse it without a panic)"
            ),
            InsertErrorKind::IndexAboveMax { index, max } => panic!(
                "SparseSet::insert: index {index} is above max_index {max} (raise it with \
                 set_max_index, or use try_insert to refuse such indices without a panic)"
            ),
            InsertErrorKind::StaleKey => panic!(
                "SparseSet::insert: stale key (index {index}, generation {g}): the entry holds \
                 generation {}, a later entity's (try_insert refuses it and gives the value \
                 back)",
                entry.generation()
            ),
            InsertErrorKind::ForeignKey => panic!(
                "SparseSet::insert: foreign key (index {index}, generation {g}, type id {tid}): \
                 the entry holds type id {} at that generation, another allocator's (try_insert \
                 refuses it and gives the value back)",
                entry.type_id()
            ),
            InsertErrorKind::MalformedKey => panic!(
                "SparseSet::insert: malformed key for index {index}: bit 31 of its tag set, \
                 generation 0, or an index or type id past its key type's range, which no \
                 container hands out (try_insert refuses it and gives the value back)"
            ),
            InsertErrorKind::Full => panic!(
                "SparseSet::insert: the dense arrays hold u32::MAX - 1 entries, the most a set \
                 can"
            ),
            other => panic!("SparseSet::insert: {other}"),
        }
    }

    /// The largest index the set accepts: [`insert`](Self::insert) panics above it and
    /// [`try_insert`](Self::try_insert) (and the serde loader) refuse it before allocating
    /// anything. [`DEFAULT_MAX_INDEX`] (`u32::MAX - 1`) unless set.
    ///
    /// It bounds the memory an index can make the set allocate: a page table of
    /// `4 * (max_index / PAGE + 1)` bytes at most, and pages of `8 * PAGE` bytes.
    ///
    /// O(1).
    ///
    /// ```
    /// let s = dod::SparseSet::<u8>::new().with_max_index(9_999);
    /// assert_eq!(s.max_index(), 9_999);
    /// assert_eq!(dod::SparseSet::<u8>::new().max_index(), u32::MAX - 1);
    /// ```
    #[inline]
    pub fn max_index(&self) -> u32 {
        self.max_index
    }

    /// Sets [`max_index`](Self::max_index). Entries already above it stay, and their values
    /// can still be replaced; only new entries are bounded.
    ///
    /// O(1).
    ///
    /// # Panics
    ///
    /// If `max_index` is `u32::MAX` ([`TOMBSTONE`], never an entity).
    ///
    /// ```
    /// let mut s = dod::SparseSet::new();
    /// s.insert(500u32, 'a');
    /// s.set_max_index(100);
    /// assert!(s.try_insert(101u32, 'b').is_err());
    /// assert!(s.try_insert(100u32, 'c').is_ok());
    /// assert_eq!(s.try_insert(500u32, 'd'), Ok(Some('a'))); // held before: replaced
    /// assert!(s.entry(500u32).is_some());
    /// ```
    #[track_caller]
    pub fn set_max_index(&mut self, max_index: u32) {
        assert!(
            max_index != TOMBSTONE,
            "SparseSet::set_max_index: u32::MAX is the tombstone marker, never an index \
             (the largest max_index is u32::MAX - 1)"
        );
        self.max_index = max_index;
    }

    /// The set with [`max_index`](Self::max_index) set: a builder for
    /// [`set_max_index`](Self::set_max_index).
    ///
    /// O(1).
    ///
    /// # Panics
    ///
    /// If `max_index` is `u32::MAX`.
    ///
    /// ```
    /// let s: dod::SparseSet<u8, 64> = dod::SparseSet::new_paged().with_max_index(4095);
    /// assert_eq!(s.max_index(), 4095);
    /// ```
    #[track_caller]
    pub fn with_max_index(mut self, max_index: u32) -> Self {
        self.set_max_index(max_index);
        self
    }

    /// Removes every entity; keeps the allocated pages and capacity.
    ///
    /// O(n). If a value's `Drop` panics, the set is already empty and the other values are
    /// still dropped.
    ///
    /// ```
    /// let mut s = dod::SparseSet::new();
    /// s.insert(1u32, ());
    /// s.clear();
    /// assert!(s.is_empty() && !s.contains(1u32));
    /// ```
    pub fn clear(&mut self) {
        for &e in &self.entities {
            if e != TOMBSTONE {
                self.pages.unlink(e);
            }
        }
        self.entities.clear();
        self.pending = 0;
        self.first_tombstone = 0;
        self.vacant_from = 0;
        self.values.clear();
    }

    /// Reserves room for `additional` more values: in the dense arrays, and in the arena of
    /// sparse pages for the pages a run of that many new consecutive indices can need
    /// (`additional / PAGE` rounded up, plus one for a run that starts inside a page), so
    /// that filling a run of new entities allocates nothing more.
    ///
    /// O(n) when it reallocates.
    ///
    /// # Panics
    ///
    /// If the new capacity overflows `usize` (as `Vec::reserve`).
    ///
    /// ```
    /// let mut s: dod::SparseSet<u8> = dod::SparseSet::new();
    /// s.reserve(1_000);
    /// let held = s.memory_usage();
    /// for i in 0..1_000u32 {
    ///     s.insert(i, 0);
    /// }
    /// assert!(s.capacity() >= 1_000);
    /// assert!(s.memory_usage() <= held + 64); // the page table grew; the pages had room
    /// ```
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        self.entities.reserve(additional);
        self.values.reserve(additional);
        self.pages.reserve(additional);
    }

    /// [`reserve`](Self::reserve), or an error if the capacity overflows or the memory cannot
    /// be had (the arrays may have grown partly: some may have room already).
    ///
    /// O(n) when it reallocates.
    ///
    /// ```
    /// let mut s: dod::SparseSet<u8> = dod::SparseSet::new();
    /// s.try_reserve(100).unwrap();
    /// assert!(s.capacity() >= 100);
    /// assert!(s.try_reserve(usize::MAX).is_err());
    /// ```
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), TryReserveError> {
        self.entities.try_reserve(additional)?;
        self.values.try_reserve(additional)?;
        self.pages.try_reserve(additional)
    }

    /// Releases unused memory: the spare capacity of the dense arrays, every sparse page that
    /// holds no entity, and the page table past the last page in use.
    ///
    /// O(number of allocated slots).
    ///
    /// ```
    /// let mut s = dod::SparseSet::new();
    /// s.insert(10_000_000u32, 1u8);
    /// let before = s.memory_usage();
    /// s.swap_remove(10_000_000u32);
    /// s.shrink_to_fit();
    /// assert!(s.memory_usage() < before);
    /// assert_eq!(s.memory_usage(), 0);
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.pages.shrink_to_fit();
        self.entities.shrink_to_fit();
        self.values.shrink_to_fit();
    }

    /// Bytes held on the heap by the set: the page table (4 bytes per page number it covers)
    /// and the list of pages past it (8 bytes each), the arena of allocated pages (and 4
    /// bytes per page naming it) and the capacity of the dense arrays.
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s: dod::SparseSet<u64, 256> = dod::SparseSet::with_capacity_paged(1);
    /// s.insert(3u32, 0);
    /// s.shrink_to_fit();
    /// // one page-table entry, one page of 256 slots and its name, one entity and one value
    /// assert_eq!(s.memory_usage(), 4 + 256 * 8 + 4 + 4 + 8);
    /// ```
    pub fn memory_usage(&self) -> usize {
        self.pages.memory_usage()
            + self.entities.capacity() * core::mem::size_of::<u32>()
            + self.values.capacity() * core::mem::size_of::<T>()
    }

    /// The number of sparse pages allocated.
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s: dod::SparseSet<(), 64> = dod::SparseSet::new_paged();
    /// s.insert(0u32, ());
    /// s.insert(63u32, ());
    /// s.insert(64u32, ());
    /// assert_eq!(s.allocated_pages(), 2);
    /// ```
    pub fn allocated_pages(&self) -> usize {
        self.pages.allocated()
    }
}

impl<T, const PAGE: usize> Default for SparseSet<T, PAGE> {
    /// An empty set.
    fn default() -> Self {
        Self::new_paged()
    }
}

impl<T: Clone, const PAGE: usize> Clone for SparseSet<T, PAGE> {
    fn clone(&self) -> Self {
        SparseSet {
            pages: self.pages.clone(),
            entities: self.entities.clone(),
            values: self.values.clone(),
            pending: self.pending,
            first_tombstone: self.first_tombstone,
            max_index: self.max_index,
            vacant_from: self.vacant_from,
        }
    }
}

impl<T: PartialEq, const PAGE: usize> PartialEq for SparseSet<T, PAGE> {
    /// Whether both sets hold the same entities, with the same recorded tags, and equal
    /// values; the dense order does not matter (as for `IndexMap`). O(n).
    ///
    /// ```
    /// use dod::SparseSet;
    /// let a: SparseSet<char> = [(1u32, 'a'), (2, 'b')].into_iter().collect();
    /// let b: SparseSet<char> = [(2u32, 'b'), (1, 'a')].into_iter().collect();
    /// assert_eq!(a, b);
    /// let c: SparseSet<char> = [(1u32, 'a')].into_iter().collect();
    /// assert_ne!(a, c);
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self.iter().all(|(e, v)| {
                other.get(e) == Some(v) && slot_tag(other.slot(e)) == slot_tag(self.slot(e))
            })
    }
}

impl<T: Eq, const PAGE: usize> Eq for SparseSet<T, PAGE> {}

impl<T: fmt::Debug, const PAGE: usize> fmt::Debug for SparseSet<T, PAGE> {
    /// The live entries as a map from entity index to value, in dense order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<T, E: SparseKey, const PAGE: usize> Index<E> for SparseSet<T, PAGE> {
    type Output = T;

    /// The value of `e`.
    ///
    /// # Panics
    ///
    /// If the set does not hold `e` (absent index, or a key with another tag).
    #[track_caller]
    fn index(&self, e: E) -> &T {
        // Read once: a key is user code, and the panic must describe the key looked up.
        let e = ReadKey::of(e);
        match self.get(e) {
            Some(v) => v,
            None => missing(e, self.slot(e.index)),
        }
    }
}

impl<T, E: SparseKey, const PAGE: usize> IndexMut<E> for SparseSet<T, PAGE> {
    /// The value of `e`, mutable.
    ///
    /// # Panics
    ///
    /// If the set does not hold `e` (absent index, or a key with another tag).
    #[track_caller]
    fn index_mut(&mut self, e: E) -> &mut T {
        let e = ReadKey::of(e);
        match self.position(e) {
            Some(pos) => &mut self.values[pos],
            None => missing(e, self.slot(e.index)),
        }
    }
}

/// Appends `x` to `v`, which has room for it.
#[inline]
#[allow(unsafe_code)]
fn push_within_capacity<X>(v: &mut Vec<X>, x: X) {
    let len = v.len();
    assert!(len < v.capacity());
    // SAFETY: `len < capacity`, so the slot at `len` is allocated and uninitialised; it is
    // written before the length covers it.
    unsafe {
        v.as_mut_ptr().add(len).write(x);
        v.set_len(len + 1);
    }
}

/// The dense position a sparse slot gives `e`: `None` if the slot is vacant or `e` is a key
/// with another tag.
#[inline]
fn position_in<E: SparseKey>(slot: Slot, e: E) -> Option<usize> {
    if let Some(t) = e.sparse_tag() {
        if slot_tag(slot) != t {
            return None;
        }
    }
    decode(slot)
}

/// A key's index and tag, read once, for a lookup whose failure is then described.
#[derive(Copy, Clone)]
struct ReadKey {
    index: u32,
    tag: Option<u32>,
}

impl ReadKey {
    #[inline(always)]
    fn of<E: SparseKey>(e: E) -> ReadKey {
        ReadKey {
            index: e.sparse_index(),
            tag: e.sparse_tag(),
        }
    }
}

impl SparseKey for ReadKey {
    #[inline(always)]
    fn sparse_index(self) -> u32 {
        self.index
    }
    #[inline(always)]
    fn sparse_tag(self) -> Option<u32> {
        self.tag
    }
}

#[cold]
#[track_caller]
fn missing<E: SparseKey>(e: E, slot: Slot) -> ! {
    let i = e.sparse_index();
    let Some(t) = e.sparse_tag().map(Tag::from_bits) else {
        // A plain index names whatever entry its index holds: there is none.
        panic!("SparseSet: no value for entity {i}")
    };
    // Lookups read the lookup tag, which marks only these two patterns; a key malformed by
    // its index or type id is told below as a key the set holds nothing for.
    if t.is_vacant() {
        panic!(
            "SparseSet: no value for malformed key of entity {i} (bit 31 of its tag set, or \
             generation 0)"
        )
    }
    /// The key's parts, as `insert`'s panics print them: `(index 3, generation 2)`, with the
    /// type id if it has one.
    struct Parts(u32, Tag);
    impl fmt::Display for Parts {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "(index {}, generation {}", self.0, self.1.generation())?;
            match self.1.type_id() {
                0 => f.write_str(")"),
                id => write!(f, ", type id {id})"),
            }
        }
    }
    let key = Parts(i, t);
    if decode(slot).is_none() {
        panic!("SparseSet: no value for key {key}: the set holds nothing at index {i}")
    }
    if slot_tag(slot) == 0 {
        panic!(
            "SparseSet: no value for key {key}: the entry of index {i} was inserted by a plain \
             index, which no key names"
        )
    }
    let held = Tag::from_bits(slot_tag(slot));
    match held.age_of_tag(t.to_bits()) {
        Age::Older => panic!(
            "SparseSet: no value for stale key {key}: the entry holds generation {}, a later \
             entity's",
            held.generation()
        ),
        Age::Newer => panic!(
            "SparseSet: no value for key {key}: the entry holds generation {}, a dead entity's \
             (inserting the key replaces it)",
            held.generation()
        ),
        Age::Foreign => panic!(
            "SparseSet: no value for foreign key {key}: the entry holds type id {} at that \
             generation, another allocator's",
            held.type_id()
        ),
        // The key is well formed (checked above) and the lookup refused it.
        Age::Same | Age::Malformed => unreachable!("SparseSet: a refused key matches its entry"),
    }
}

impl<T, E: SparseKey, const PAGE: usize> Extend<(E, T)> for SparseSet<T, PAGE> {
    /// Inserts every pair in order, as [`insert`](SparseSet::insert) does.
    ///
    /// # Panics
    ///
    /// Where `insert` panics: a refused key, or an index above
    /// [`max_index`](SparseSet::max_index).
    #[track_caller]
    fn extend<I: IntoIterator<Item = (E, T)>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.reserve(iter.size_hint().0);
        for (e, v) in iter {
            self.insert(e, v);
        }
    }
}

impl<T, E: SparseKey, const PAGE: usize> FromIterator<(E, T)> for SparseSet<T, PAGE> {
    /// Collects pairs, as [`insert`](SparseSet::insert) does: a repeated index keeps its
    /// first position and its last value.
    ///
    /// # Panics
    ///
    /// Where `insert` panics: a refused key (such as a stale key after a newer one of its
    /// index), or index `u32::MAX`.
    #[track_caller]
    fn from_iter<I: IntoIterator<Item = (E, T)>>(iter: I) -> Self {
        let mut s = Self::new_paged();
        s.extend(iter);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Handle;

    #[test]
    fn slot_encoding_round_trips() {
        for &(pos, t) in &[(0usize, 0u32), (5, 7), (MAX_DENSE - 1, 0x7FFF_FFFF)] {
            let s = encode(pos, t);
            assert_eq!(decode(s), Some(pos));
            assert_eq!(slot_tag(s), t);
        }
        assert_eq!(decode(Slot::VACANT), None);
    }

    #[test]
    fn far_entities_allocate_one_page() {
        let mut s: SparseSet<u32> = SparseSet::new();
        for e in 10_000_000..10_000_100u32 {
            s.insert(e, e);
        }
        assert!(s.allocated_pages() <= 2);
        // The page table is one pointer per page before the first entity: 312 KB, not 40 MB.
        assert!(s.memory_usage() < 400_000, "{}", s.memory_usage());
        assert_eq!(s[10_000_050u32], 10_000_050);
    }

    #[test]
    fn u32_replace_keeps_generation() {
        let mut s = SparseSet::<u8>::new();
        let h = Handle::new(2, 9, 0).unwrap();
        s.insert(h, 1);
        assert_eq!(s.insert(2u32, 2), Some(1));
        assert_eq!(s.get(h), Some(&2));
        let h2 = Handle::new(2, 10, 0).unwrap();
        assert_eq!(s.insert(h2, 3), Some(2));
        assert_eq!(s.get(h), None);
        assert_eq!(s.get(h2), Some(&3));
    }

    #[test]
    fn u32_entities_do_not_match_keys() {
        let mut s = SparseSet::<u8>::new();
        s.insert(4u32, 1);
        assert!(!s.contains(Handle::new(4, 1, 0).unwrap()));
        assert!(s.contains(4u32));
    }

    #[test]
    #[should_panic(expected = "index u32::MAX is never an entity")]
    fn tombstone_index_is_rejected() {
        SparseSet::<u8>::new().insert(u32::MAX, 0);
    }

    #[test]
    fn older_foreign_and_malformed_keys_are_refused() {
        let mut s = SparseSet::<u8>::new();
        let live = Handle::new(2, 5, 1).unwrap();
        assert_eq!(s.insert(live, 1), None);
        for (k, kind) in [
            (Handle::new(2, 4, 1).unwrap(), InsertErrorKind::StaleKey),
            (Handle::new(2, 4, 0).unwrap(), InsertErrorKind::StaleKey),
            (Handle::new(2, 5, 2).unwrap(), InsertErrorKind::ForeignKey),
        ] {
            let err = s.try_insert(k, 9).unwrap_err();
            assert_eq!((err.kind(), err.into_inner()), (kind, 9));
            assert!(s.entry(k).is_none());
        }
        assert_eq!(s.get(live), Some(&1));
        let newer = Handle::new(2, 6, 2).unwrap();
        assert_eq!(s.try_insert(newer, 3).unwrap(), Some(1));
        assert!(!s.contains(live) && s.contains(newer));
        assert_eq!(s.key_of::<Handle>(2), Some(newer));
        s.assert_invariants();
    }

    #[test]
    #[should_panic(expected = "stale key (index 2, generation 4): the entry holds generation 5")]
    fn insert_panics_on_a_stale_key() {
        let mut s = SparseSet::<u8>::new();
        s.insert(Handle::new(2, 5, 0).unwrap(), 1);
        s.insert(Handle::new(2, 4, 0).unwrap(), 2);
    }

    #[test]
    #[should_panic(expected = "foreign key (index 2, generation 5, type id 3)")]
    fn insert_panics_on_a_foreign_key() {
        let mut s = SparseSet::<u8>::new();
        s.insert(Handle::new(2, 5, 1).unwrap(), 1);
        s.insert(Handle::new(2, 5, 3).unwrap(), 2);
    }

    #[test]
    fn a_failed_insert_above_max_allocates_nothing() {
        let mut s = SparseSet::<u64>::new().with_max_index(1 << 20);
        for i in [(1 << 20) + 1, u32::MAX - 1, u32::MAX] {
            let err = s.try_insert(i, 7).unwrap_err();
            assert_eq!(
                err.kind(),
                InsertErrorKind::IndexAboveMax {
                    index: i,
                    max: 1 << 20
                }
            );
            assert_eq!(s.memory_usage(), 0);
        }
        assert_eq!(s.try_insert(1u32 << 20, 1).unwrap(), None);
        assert!(s.entry(u32::MAX - 1).is_none());
    }

    /// The message of `s[key]`'s panic.
    fn index_panic<K: SparseKey>(s: &SparseSet<u8>, key: K) -> std::string::String {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s[key]));
        let payload = r.expect_err("the index resolved");
        match payload.downcast::<std::string::String>() {
            Ok(m) => *m,
            Err(p) => std::string::String::from(*p.downcast::<&str>().expect("a text message")),
        }
    }

    #[test]
    fn an_index_panic_describes_the_key_it_looked_up() {
        std::thread_local!(static CALLS: core::cell::Cell<u32> = const { core::cell::Cell::new(0) });
        /// Answers generation 4 on its first tag read, 5 after: user code may do that.
        #[derive(Copy, Clone)]
        struct Fickle;
        impl SparseKey for Fickle {
            fn sparse_index(self) -> u32 {
                1
            }
            fn sparse_tag(self) -> Option<u32> {
                Some(CALLS.with(|c| c.replace(c.get() + 1)).min(1) + 4)
            }
        }
        let mut s = SparseSet::<u8>::new();
        s.insert(Handle::new(1, 5, 0).unwrap(), 1);
        let msg = index_panic(&s, Fickle);
        assert!(
            msg.contains("stale key (index 1, generation 4): the entry holds generation 5"),
            "{msg}"
        );
    }

    #[test]
    fn index_panics_say_why_the_key_does_not_resolve() {
        let mut s = SparseSet::<u8>::new();
        s.insert(Handle::new(2, 5, 3).unwrap(), 1);
        s.insert(4u32, 2);
        let cases = [
            (
                Handle::new(3, 2, 0).unwrap(),
                "no value for key (index 3, generation 2): the set holds nothing at index 3",
            ),
            (
                Handle::new(2, 4, 3).unwrap(),
                "no value for stale key (index 2, generation 4, type id 3): the entry holds \
                 generation 5, a later entity's",
            ),
            (
                Handle::new(2, 6, 3).unwrap(),
                "no value for key (index 2, generation 6, type id 3): the entry holds \
                 generation 5, a dead entity's",
            ),
            (
                Handle::new(2, 5, 1).unwrap(),
                "no value for foreign key (index 2, generation 5, type id 1): the entry holds \
                 type id 3 at that generation",
            ),
            (
                Handle::new(4, 1, 0).unwrap(),
                "no value for key (index 4, generation 1): the entry of index 4 was inserted by \
                 a plain index",
            ),
        ];
        for (key, expected) in cases {
            let msg = index_panic(&s, key);
            assert!(msg.contains(expected), "{key:?}: {msg}");
        }
        assert_eq!(index_panic(&s, 7u32), "SparseSet: no value for entity 7");
    }

    #[test]
    fn a_first_insertion_allocates_one_page() {
        let mut s = SparseSet::<u8>::new();
        s.insert(5u32, 1);
        assert_eq!(s.allocated_pages(), 1);
        // One page of slots, a short page table and small dense arrays: not two pages.
        assert!(
            s.memory_usage() < 2 * DEFAULT_PAGE_SIZE * 8,
            "{}",
            s.memory_usage()
        );
    }

    #[test]
    fn reserve_covers_a_run_that_starts_inside_a_page() {
        let mut s = SparseSet::<u8>::new();
        s.insert(0u32, 0);
        s.reserve(128);
        let held = s.memory_usage();
        for i in 1000..1128u32 {
            s.insert(i, 1);
        }
        assert_eq!(s.allocated_pages(), 3);
        // Only the page table may grow: 4 bytes per page number, up to page 8.
        assert!(
            s.memory_usage() <= held + 4 * 16,
            "{} -> {}",
            held,
            s.memory_usage()
        );
    }

    #[test]
    fn shrink_releases_empty_pages() {
        let mut s: SparseSet<u8, 64> = SparseSet::new_paged();
        for e in 0..640u32 {
            s.insert(e, 0);
        }
        assert_eq!(s.allocated_pages(), 10);
        s.retain(|e, _| !(64..576).contains(&e));
        s.shrink_to_fit();
        assert_eq!(s.allocated_pages(), 2);
        assert_eq!(s.len(), 128);
        assert!(s.contains(600u32) && !s.contains(100u32));
    }
}
