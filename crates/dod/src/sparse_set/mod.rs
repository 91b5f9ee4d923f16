//! [`SparseSet`]: component storage keyed by entity index.
//!
//! A sparse set maps an entity index (`u32`) to a value through two arrays:
//!
//! - the **sparse** array, indexed by entity, holds for each entity its position in the dense
//!   arrays and the generation it was inserted with. It is *paged*: split into pages of `PAGE`
//!   slots (a power of two, [`DEFAULT_PAGE_SIZE`] unless chosen), each allocated on first use
//!   and released by [`shrink_to_fit`](SparseSet::shrink_to_fit) once empty, so a set holding
//!   entities `10_000_000 .. 10_000_100` holds one or two pages and a 300 KB page table, not
//!   eighty megabytes;
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
//! Iteration ([`iter`](SparseSet::iter), [`values`](SparseSet::values), joins, serde) follows
//! the dense order, which each operation changes as follows:
//!
//! | operation | dense order afterwards |
//! |---|---|
//! | `insert` of a new entity | appended at the end |
//! | `insert` of a present index, `get_mut`, `IndexMut` | unchanged |
//! | `swap_remove` | the last entry moves into the hole; the rest unchanged |
//! | `shift_remove`, `retain`, `remove_many`, `compact` | the remaining entries keep their order |
//! | `defer_remove` | unchanged; a tombstone holds the place until `compact` |
//! | `sort_by`, `sort_by_key` | sorted, equal entries in their previous order |
//! | `sort_unstable_by` | sorted |
//! | `sort_as(other)` | shared entities first, in `other`'s order; the rest unspecified |
//!
//! # Keys: plain indices and generational handles
//!
//! Every method that takes an entity is generic over [`SparseKey`], implemented for `u32` and for
//! every [`Key`] (such as [`Handle`](crate::Handle) or a type declared with
//! [`new_handle_type!`](crate::new_handle_type)). One set type serves both styles, and the
//! sparse slot always has room for a generation, so:
//!
//! - a `u32` names the *slot*: lookups by `u32` check only the index, as in the seed's hot-path
//!   storage where liveness is checked by the layer above;
//! - a `Key` names the slot *at one generation*: the generation is stored in the sparse slot
//!   on insertion, and every lookup by key compares it, so `contains(stale_key)` is `false`
//!   without touching the dense arrays (EnTT keeps the entity version in its sparse entries for
//!   the same reason). The key's type id is not stored: keys of two allocators with the same
//!   index and generation are not told apart, so keep one set per kind of entity.
//!
//! The set follows the last insertion: [`insert`](SparseSet::insert) with a key replaces whatever
//! the index held, whatever its generation, and the replaced entity's keys go stale (the index
//! belongs to one entity at a time, as the entity allocator decides).
//!
//! A trait rather than two families of methods (`get` / `get_key`) keeps the API the size of
//! std's and lets `Index`, `Extend` and `FromIterator` take either kind. The trait's methods are
//! named `sparse_index` / `sparse_generation` so that they never clash with [`Key::index`].
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
//!
//! for p in positions.values_mut() {                     // the dense slice, no holes
//!     p[1] -= 9.8;
//! }
//! assert_eq!(positions.indices(), &[7, 9]);
//! ```
//!
//! # Invariants
//!
//! - `entities.len() == values.len()`; position `i` of the dense arrays holds entity
//!   `entities[i]` and its value `values[i]`, or a tombstone (`entities[i] == TOMBSTONE`, its
//!   value not yet dropped).
//! - For every live entity `e` at position `i`, its sparse slot encodes `i + 1` in the low 32
//!   bits and its generation (0 when inserted by a plain index) in bits 32..48. Every other
//!   slot is 0, and no live entity has index `u32::MAX`.
//! - `pending` counts the tombstones, and every tombstone sits at a position `>= first_tombstone`.
//!
//! # Memory
//!
//! [`memory_usage`](SparseSet::memory_usage) reports the bytes held: 8 bytes per sparse slot of
//! every allocated page (all pages live in one arena, so allocating a page is not an allocation),
//! 4 bytes per page-table entry, and `4 + size_of::<T>()` per dense entry of capacity.
//!
//! The page table reaches up to the largest index in use: 4 bytes per `PAGE` ids, so entity
//! `u32::MAX - 1` alone costs a 128 MiB table with the default page size. Entity allocators
//! hand out small indices; data from untrusted sources should have its indices checked
//! before they reach a set.

mod iter;
mod join;
mod pages;
#[cfg(feature = "rayon")]
mod rayon;
mod remove;
#[cfg(feature = "serde")]
mod serde;
mod sort;
mod split;

pub use iter::{IntoIter, Iter, IterMut};
pub use join::{Join, Join3, JoinMut};
pub use split::SparseView;

use crate::key::Key;
use alloc::vec::Vec;
use core::fmt;
use core::num::NonZeroU16;
use core::ops::{Index, IndexMut};
use pages::{decode, encode, slot_generation, Pages};

/// The default number of sparse slots per page (1 KiB of slots).
///
/// Chosen with `dod-bench sparse`'s page-size table. Entities that arrive in clusters leave far
/// fewer untouched slots in small pages: a set holding 10 % of a million ids in runs of 64
/// holds about a third of an unpaged sparse array with 128-slot pages, half with 256, and
/// nearly all of it with 1024 or more. The price is a longer page table (4 bytes per 128 ids):
/// random lookups scattered over a million ids measured up to about 20 % slower than with
/// 4096-slot pages, and the same when the ids are dense. Pick `PAGE` per set when the ids
/// are known to be dense (larger) or very clustered (smaller).
pub const DEFAULT_PAGE_SIZE: usize = 128;

/// The marker that [`SparseSet::indices`] shows at the position of a deferred removal.
///
/// It is `u32::MAX`, an index no [`Key`] can carry and that `insert` rejects.
pub const TOMBSTONE: u32 = u32::MAX;

/// Something that names an entity: a plain `u32` index, or any [`Key`] (index and generation).
///
/// See the [module documentation](self) for how the two kinds are checked.
///
/// ```
/// use dod::sparse_set::SparseKey;
/// use dod::Handle;
///
/// assert_eq!(5u32.sparse_index(), 5);
/// assert_eq!(5u32.sparse_generation(), None);
/// let h = Handle::new(5, 2, 0).unwrap();
/// assert_eq!((h.sparse_index(), h.sparse_generation().map(|g| g.get())), (5, Some(2)));
/// ```
pub trait SparseKey: Copy {
    /// The entity's index: the slot of the sparse array.
    fn sparse_index(self) -> u32;
    /// The generation to check, or `None` to accept whatever generation the slot holds.
    fn sparse_generation(self) -> Option<NonZeroU16>;
}

impl SparseKey for u32 {
    #[inline]
    fn sparse_index(self) -> u32 {
        self
    }
    #[inline]
    fn sparse_generation(self) -> Option<NonZeroU16> {
        None
    }
}

impl<K: Key> SparseKey for K {
    #[inline]
    fn sparse_index(self) -> u32 {
        self.index()
    }
    #[inline]
    fn sparse_generation(self) -> Option<NonZeroU16> {
        Some(self.generation())
    }
}

/// Component storage keyed by entity index: a paged sparse array of positions and generations
/// in front of dense arrays of entities and values.
///
/// `PAGE` is the number of sparse slots per page (a power of two); see the
/// [module documentation](self) for the design, the key kinds and the invariants.
///
/// | operation | cost |
/// |---|---|
/// | `get`, `contains`, `insert`, `swap_remove`, `defer_remove` | O(1) |
/// | `shift_remove` | O(n) |
/// | `retain`, `remove_many`, `compact` | O(n + k) |
/// | `sort_by`, `sort_by_key`, `sort_unstable_by` | O(n log n) |
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

    /// An empty set with room for `capacity` values without reallocating the dense arrays
    /// (sparse pages are still allocated on first use).
    ///
    /// O(1).
    ///
    /// ```
    /// let s: dod::SparseSet<u64> = dod::SparseSet::with_capacity(10);
    /// assert!(s.capacity() >= 10);
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

    /// The dense array of values, in dense order (the seed's `All()`).
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

    /// The dense array of entity indices, position for position with
    /// [`values`](Self::values) (the seed's `AllEntities()`); a deferred removal shows as
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
    fn slot(&self, index: u32) -> u64 {
        self.pages.get(index)
    }

    /// The dense position of `e`, checking its generation if it has one.
    #[inline]
    fn position<E: SparseKey>(&self, e: E) -> Option<usize> {
        position_in(self.slot(e.sparse_index()), e)
    }

    /// Where to look for `e`'s value: its dense position if the set holds it, a position past
    /// the end of the dense arrays if its slot is vacant (so that the caller's bounds check
    /// also checks vacancy), `None` if `e` is a key of another generation.
    #[inline]
    fn probe<E: SparseKey>(&self, e: E) -> Option<usize> {
        let slot = self.slot(e.sparse_index());
        if let Some(g) = e.sparse_generation() {
            if slot_generation(slot) != g.get() {
                return None;
            }
        }
        // A vacant slot (0) wraps to `u32::MAX`, past any dense position: the dense arrays
        // hold fewer than `u32::MAX - 1` entries (see `insert_raw`).
        Some((slot as u32).wrapping_sub(1) as usize)
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
        decode(slot).map(|_| NonZeroU16::new(slot_generation(slot)))
    }

    /// `true` if the set holds `e` (the seed's `Has`). A [`Key`] must also match the
    /// generation it was inserted with; the check reads the sparse slot only.
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
    /// ```
    #[inline]
    pub fn contains<E: SparseKey>(&self, e: E) -> bool {
        self.position(e).is_some()
    }

    /// The value of `e`, if the set holds it (the seed's `Ref`).
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

    /// Inserts `value` for `e` (the seed's `Add`). If the index is already present, its value
    /// is replaced in place (its position does not change) and the old value is returned,
    /// whatever generation it had. A new entity goes to the end of the dense arrays.
    ///
    /// A [`Key`] records its generation in the slot; a plain `u32` records none for a new
    /// entity and keeps the recorded generation when replacing.
    ///
    /// O(1) (amortised; the first entity of a page allocates the page).
    ///
    /// # Panics
    ///
    /// If the index is `u32::MAX` ([`TOMBSTONE`]).
    ///
    /// ```
    /// let mut s = dod::SparseSet::new();
    /// assert_eq!(s.insert(5u32, 'a'), None);
    /// assert_eq!(s.insert(5u32, 'b'), Some('a'));
    /// assert_eq!(s[5u32], 'b');
    /// ```
    #[inline]
    #[track_caller]
    pub fn insert<E: SparseKey>(&mut self, e: E, value: T) -> Option<T> {
        let index = e.sparse_index();
        if index == TOMBSTONE {
            reserved_index();
        }
        let generation = e.sparse_generation().map_or(0, NonZeroU16::get);
        self.insert_raw(index, generation, value)
    }

    /// `insert` with the generation given as a raw `u16` (0: none); `index` is not
    /// [`TOMBSTONE`].
    #[inline]
    pub(crate) fn insert_raw(&mut self, index: u32, generation: u16, value: T) -> Option<T> {
        debug_assert_ne!(index, TOMBSTONE);
        let Some(slot) = self.pages.slot_mut(index) else {
            return self.insert_in_new_page(index, generation, value);
        };
        if let Some(pos) = decode(*slot) {
            if generation != 0 {
                *slot = encode(pos, generation);
            }
            return Some(core::mem::replace(&mut self.values[pos], value));
        }
        let pos = self.entities.len();
        if pos >= u32::MAX as usize - 1 {
            return self.insert_after_compact(index, generation, value);
        }
        if pos == self.entities.capacity() || pos == self.values.capacity() {
            return self.insert_after_grow(index, generation, value);
        }
        push_within_capacity(&mut self.entities, index);
        push_within_capacity(&mut self.values, value);
        *slot = encode(pos, generation);
        None
    }

    /// `insert_raw` of a new entity when the dense arrays are full.
    #[cold]
    #[inline(never)]
    fn insert_after_grow(&mut self, index: u32, generation: u16, value: T) -> Option<T> {
        self.reserve(1);
        self.insert_raw(index, generation, value)
    }

    /// `insert_raw` of an index whose page is not allocated yet: out of line, so that the
    /// common path stays small enough to inline.
    #[cold]
    #[inline(never)]
    fn insert_in_new_page(&mut self, index: u32, generation: u16, value: T) -> Option<T> {
        self.pages.alloc_page(index);
        self.insert_raw(index, generation, value)
    }

    /// `insert_raw` of a new entity when the dense arrays are full of tombstones.
    #[cold]
    #[inline(never)]
    fn insert_after_compact(&mut self, index: u32, generation: u16, value: T) -> Option<T> {
        // Only tombstones can make the dense arrays this long.
        self.compact();
        self.insert_raw(index, generation, value)
    }

    /// Removes every entity; keeps the allocated pages and capacity.
    ///
    /// O(n).
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
        self.values.clear();
    }

    /// Reserves room for `additional` more values in the dense arrays.
    ///
    /// O(n) when it reallocates.
    ///
    /// # Panics
    ///
    /// If the new capacity overflows `usize` (as `Vec::reserve`).
    ///
    /// ```
    /// let mut s: dod::SparseSet<u8> = dod::SparseSet::new();
    /// s.reserve(100);
    /// assert!(s.capacity() >= 100);
    /// ```
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        self.entities.reserve(additional);
        self.values.reserve(additional);
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

    /// Bytes held on the heap by the set: the page table (4 bytes per page number up to the
    /// highest page in use), the arena of allocated pages and the capacity of the dense
    /// arrays.
    ///
    /// O(1).
    ///
    /// ```
    /// let mut s: dod::SparseSet<u64, 256> = dod::SparseSet::with_capacity_paged(1);
    /// s.insert(3u32, 0);
    /// s.shrink_to_fit();
    /// // one page-table entry, one page of 256 slots, one entity and one value
    /// assert_eq!(s.memory_usage(), 4 + 256 * 8 + 4 + 8);
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
        }
    }
}

impl<T: PartialEq, const PAGE: usize> PartialEq for SparseSet<T, PAGE> {
    /// Whether both sets hold the same entities, with the same recorded generations, and equal
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
                other.get(e) == Some(v) && other.generation_of(e) == self.generation_of(e)
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
    /// If the set does not hold `e` (absent index, or a key of another generation).
    #[track_caller]
    fn index(&self, e: E) -> &T {
        match self.get(e) {
            Some(v) => v,
            None => missing(e),
        }
    }
}

impl<T, E: SparseKey, const PAGE: usize> IndexMut<E> for SparseSet<T, PAGE> {
    /// The value of `e`, mutable.
    ///
    /// # Panics
    ///
    /// If the set does not hold `e` (absent index, or a key of another generation).
    #[track_caller]
    fn index_mut(&mut self, e: E) -> &mut T {
        match self.position(e) {
            Some(pos) => &mut self.values[pos],
            None => missing(e),
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
/// of another generation.
#[inline]
fn position_in<E: SparseKey>(slot: u64, e: E) -> Option<usize> {
    if let Some(g) = e.sparse_generation() {
        if slot_generation(slot) != g.get() {
            return None;
        }
    }
    decode(slot)
}

#[cold]
#[track_caller]
fn reserved_index() -> ! {
    panic!("SparseSet::insert: entity index u32::MAX is reserved as the tombstone marker")
}

#[cold]
#[track_caller]
fn missing<E: SparseKey>(e: E) -> ! {
    match e.sparse_generation() {
        Some(g) => panic!(
            "SparseSet: no value for entity {} at generation {} (absent or stale)",
            e.sparse_index(),
            g
        ),
        None => panic!("SparseSet: no value for entity {}", e.sparse_index()),
    }
}

impl<T, E: SparseKey, const PAGE: usize> Extend<(E, T)> for SparseSet<T, PAGE> {
    /// Inserts every pair in order, as [`insert`](SparseSet::insert) does.
    ///
    /// # Panics
    ///
    /// If an index is `u32::MAX`.
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
    /// Collects pairs; a repeated index keeps its first position and its last value.
    ///
    /// # Panics
    ///
    /// If an index is `u32::MAX`.
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
        for &(pos, g) in &[(0usize, 0u16), (5, 7), (u32::MAX as usize - 1, u16::MAX)] {
            let s = encode(pos, g);
            assert_eq!(decode(s), Some(pos));
            assert_eq!(slot_generation(s), g);
        }
        assert_eq!(decode(0), None);
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
    #[should_panic(expected = "reserved as the tombstone")]
    fn tombstone_index_is_rejected() {
        SparseSet::<u8>::new().insert(u32::MAX, 0);
    }

    #[test]
    #[should_panic(expected = "no value for entity 3 at generation 2")]
    fn index_panics_with_the_key() {
        let s = SparseSet::<u8>::new();
        let _ = s[Handle::new(3, 2, 0).unwrap()];
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
