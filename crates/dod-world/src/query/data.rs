//! [`QueryData`]: what a query hands out per entity (`Entity`, `&T`, `&mut T`, `Option<..>`,
//! [`Has<T>`], tuples), and how each element finds its value.
//!
//! Each element *prepares* once per query run (finds its storage, takes raw pointers into its
//! dense values), *offers* itself as the driver (the smallest required storage), and then
//! *fetches* by entity index: a sparse lookup, or, for the driver, the dense position the
//! loop is at.

use dod::sparse_set::SparseView;
use dod::BitSet;

use super::access::{Access, Accesses, Kind};
use super::filter::{presence, Presence};
use crate::entity::{Entities, Entity};
use crate::storage::{tag_mut, tag_ref, Component, ComponentId, Storage, Tick};
use crate::World;

/// The ticks of one run: writes are stamped `now`; change filters look for stamps newer than
/// `since`. And how the run writes: `captured` when its writers reach the values through the
/// pointers their columns captured (on a [`Shared`](crate::Shared) world, and in a query that
/// tests the presence of a type it writes), forming no `&mut` to a storage. (Public only so
/// that the query traits can name it.)
#[derive(Clone, Copy, Debug)]
#[allow(unreachable_pub)]
pub struct RunTicks {
    pub(crate) since: Tick,
    pub(crate) now: Tick,
    pub(crate) captured: bool,
}

/// How a run walks its entities: a dense slice of entity indices, or a tag's bits. (Public
/// only so that the query traits can name it; not reachable outside.)
#[derive(Clone, Copy)]
#[allow(unreachable_pub)]
pub enum Driver<'w> {
    /// A sparse set's dense indices: the loop's position is a dense position of it.
    Dense(&'w [u32]),
    /// A tag's presence bits.
    Bits(&'w BitSet),
}

/// The best driver offered so far: the smallest required storage, and its component (whose
/// elements then use the loop's position instead of a lookup).
#[allow(unreachable_pub)]
pub struct Candidate<'w> {
    pub(crate) len: usize,
    pub(crate) id: Option<ComponentId>,
    pub(crate) driver: Driver<'w>,
}

/// Records `(len, driver)` of component `id` if it is the smallest offer so far.
#[inline]
pub(crate) fn offer<'w>(
    best: &mut Option<Candidate<'w>>,
    id: Option<ComponentId>,
    len: usize,
    driver: Driver<'w>,
) {
    if best.as_ref().is_none_or(|b| len < b.len) {
        *best = Some(Candidate { len, id, driver });
    }
}

/// What a query hands out for each entity: [`Entity`], `&T`, `&mut T`, `Option<&T>`,
/// `Option<&mut T>`, [`Has<T>`], and tuples of up to 12 of them.
///
/// # Safety
///
/// Implementations hand out references built from raw pointers; the world relies on
/// `fetch` returning references only into the storages `access` declares, with the
/// mutability it declares. Not meant to be implemented outside this crate.
#[allow(unsafe_code)]
pub unsafe trait QueryData {
    /// The value handed out for one entity.
    type Item<'w>;
    /// What one run of the query holds: the storages, as pointers valid for `'w`. `Copy`, so
    /// that a hot loop can keep it in registers.
    #[doc(hidden)]
    type State<'w>: Copy;

    /// Declares the storages read and written.
    #[doc(hidden)]
    fn access(world: &World, out: &mut Accesses);

    /// Prepares a run; `None` if no entity can match (a required type was never registered).
    /// Takes the element's entries of `access` off `ids`, in order.
    ///
    /// # Safety
    ///
    /// The caller has checked `access` against every other live access to the world (the
    /// query's own elements included) and holds what it needs for `'w`; `ids` is what
    /// `access` listed for this world.
    #[doc(hidden)]
    unsafe fn prepare<'w>(
        world: &'w World,
        ticks: RunTicks,
        ids: &mut &[Access],
    ) -> Option<Self::State<'w>>;

    /// Offers the element's storage as the driver.
    #[doc(hidden)]
    fn offer<'w>(state: &Self::State<'w>, best: &mut Option<Candidate<'w>>);

    /// Marks the elements whose component is one of `driving` as walked by position: the
    /// driver's, or every owned type of the group that drives.
    #[doc(hidden)]
    fn choose(state: &mut Self::State<'_>, driving: &[ComponentId]);

    /// The item of entity `index`, or `None` if it lacks a required component. `pos` is the
    /// dense position the loop is at in the driver's storage (meaningful only to the driver).
    ///
    /// # Safety
    ///
    /// `index` is a live entity; no item of this run for `index` is alive.
    #[doc(hidden)]
    unsafe fn fetch<'w>(state: &Self::State<'w>, index: u32, pos: usize) -> Option<Self::Item<'w>>;

    /// Whether entity `index` has every component the item requires, handing nothing out
    /// and marking nothing.
    #[doc(hidden)]
    fn has(state: &Self::State<'_>, index: u32, pos: usize) -> bool;

    /// Whether [`fetch`](QueryData::fetch) marks values changed (a tracked type handed out
    /// mutably): then a tuple checks that every element matches before fetching any, so that
    /// an entity the query skips is not marked.
    #[doc(hidden)]
    fn marks(state: &Self::State<'_>) -> bool;

    /// An item with a shorter lifetime (every item is covariant in it).
    #[doc(hidden)]
    fn shrink<'long: 'short, 'short>(item: Self::Item<'long>) -> Self::Item<'short>;

    /// Whether every element is walked by position (the driver's storage, or a driving
    /// group's): then every position is aligned, and
    /// [`fetch_aligned`](QueryData::fetch_aligned) serves with no lookup and no test.
    #[doc(hidden)]
    fn walked(state: &Self::State<'_>) -> bool;

    /// Whether, for every position `p` in `range` of the driver (whose dense indices are
    /// `indices`), every element holds entity `indices[p]` at position `p` too: entities that
    /// gain and lose components together keep storages aligned, and then
    /// [`fetch_aligned`](QueryData::fetch_aligned) serves. One slice comparison per element.
    #[doc(hidden)]
    fn aligned(state: &Self::State<'_>, indices: &[u32], range: core::ops::Range<usize>) -> bool;

    /// The item of entity `index` at the aligned position `pos`, unmarked: the caller marks
    /// the positions it hands out with [`mark_aligned`](QueryData::mark_aligned).
    ///
    /// # Safety
    ///
    /// `pos` is aligned ([`aligned`](QueryData::aligned) or [`walked`](QueryData::walked)
    /// said so), `index` is the driver's entity there, and no item of this run for it is
    /// alive.
    #[doc(hidden)]
    unsafe fn fetch_aligned<'w>(state: &Self::State<'w>, index: u32, pos: usize) -> Self::Item<'w>;

    /// Marks the values at the aligned positions `range` changed, for every element that
    /// [marks](QueryData::marks): the positions whose items
    /// [`fetch_aligned`](QueryData::fetch_aligned) handed out.
    ///
    /// # Safety
    ///
    /// Every position of `range` is aligned; no reference to the stamps is live.
    #[doc(hidden)]
    #[inline]
    unsafe fn mark_aligned(_state: &Self::State<'_>, _range: core::ops::Range<usize>) {}
}

/// A [`QueryData`] that only reads: usable through `&World`
/// ([`World::query_ref`](crate::World::query_ref)).
///
/// # Safety
///
/// `access` declares no write.
#[allow(unsafe_code)]
pub unsafe trait ReadOnlyQueryData: QueryData {}

// --- Entity ---------------------------------------------------------------------------------

// SAFETY: `Entity` reads only the allocator's tags, which no query writes.
#[allow(unsafe_code)]
unsafe impl QueryData for Entity {
    type Item<'w> = Entity;
    type State<'w> = &'w Entities;

    fn access(_: &World, _: &mut Accesses) {}

    unsafe fn prepare<'w>(
        world: &'w World,
        _: RunTicks,
        _: &mut &[Access],
    ) -> Option<Self::State<'w>> {
        Some(world.entities())
    }

    #[inline]
    fn offer<'w>(_: &Self::State<'w>, _: &mut Option<Candidate<'w>>) {}

    #[inline]
    fn choose(_: &mut Self::State<'_>, _: &[ComponentId]) {}

    #[inline]
    unsafe fn fetch<'w>(state: &Self::State<'w>, index: u32, _: usize) -> Option<Self::Item<'w>> {
        Some(state.entity_at(index))
    }

    #[inline]
    fn has(_: &Self::State<'_>, _: u32, _: usize) -> bool {
        true
    }

    #[inline]
    fn marks(_: &Self::State<'_>) -> bool {
        false
    }

    #[inline]
    fn shrink<'long: 'short, 'short>(item: Entity) -> Entity {
        item
    }

    #[inline]
    fn walked(_: &Self::State<'_>) -> bool {
        true
    }

    #[inline]
    fn aligned(_: &Self::State<'_>, _: &[u32], _: core::ops::Range<usize>) -> bool {
        true
    }

    #[inline]
    unsafe fn fetch_aligned<'w>(state: &Self::State<'w>, index: u32, _: usize) -> Self::Item<'w> {
        state.entity_at(index)
    }
}

// SAFETY: declares no access.
#[allow(unsafe_code)]
unsafe impl ReadOnlyQueryData for Entity {}

// --- &T -------------------------------------------------------------------------------------

/// A run's view of one storage: a sparse set's lookup and dense values, or a tag's bits.
#[allow(unreachable_pub, missing_docs)]
#[derive(Clone, Copy)]
pub enum Column<'w, P> {
    /// Values in a sparse set: the component, the lookup, the values as a pointer (shared or
    /// not), their number, whether the run walks this column by position, and (for a tracked
    /// type handed out mutably) the change stamps to write `now` into, else null.
    Set {
        id: ComponentId,
        sparse: SparseView<'w, { dod::sparse_set::DEFAULT_PAGE_SIZE }>,
        values: P,
        len: usize,
        driver: bool,
        changed: *mut Tick,
        now: Tick,
    },
    /// A tag in bits: its component, the bits and their count.
    Tag {
        id: ComponentId,
        bits: &'w BitSet,
        len: usize,
    },
}

impl<'w, P: Copy> Column<'w, P> {
    #[inline]
    fn offer(this: &Column<'w, P>, best: &mut Option<Candidate<'w>>) {
        match *this {
            Column::Set {
                id, sparse, len, ..
            } => offer(best, Some(id), len, Driver::Dense(sparse.indices())),
            Column::Tag { id, bits, len } => offer(best, Some(id), len, Driver::Bits(bits)),
        }
    }

    #[inline]
    fn choose(&mut self, driving: &[ComponentId]) {
        if let Column::Set { id, driver, .. } = self {
            *driver = driving.contains(id);
        }
    }

    /// Whether the column is walked by position.
    #[inline]
    fn is_walked(&self) -> bool {
        matches!(self, Column::Set { driver: true, .. })
    }

    /// Whether the column holds `indices[p]` at every position `p` of `range`.
    #[inline]
    fn is_aligned(&self, indices: &[u32], range: core::ops::Range<usize>) -> bool {
        match self {
            Column::Set { driver: true, .. } => true,
            Column::Set { sparse, .. } => sparse.indices().get(range.clone()) == indices.get(range),
            Column::Tag { .. } => false,
        }
    }

    /// Whether entity `index` has a value here.
    #[inline]
    fn holds(&self, index: u32, pos: usize) -> bool {
        match self {
            Column::Set { .. } => self.position(index, pos).is_some(),
            Column::Tag { bits, .. } => bits.contains(index),
        }
    }

    /// Whether fetching from this column writes change stamps.
    #[inline]
    fn stamps(&self) -> bool {
        matches!(self, Column::Set { changed, .. } if !changed.is_null())
    }

    /// The dense position of entity `index`, or `None` if it has no value here: the run's
    /// position when this column is walked by position; else that same position if this
    /// storage holds `index` there too (entities that gain and lose components together keep
    /// their storages aligned, and a dense read in order is far cheaper than a random lookup);
    /// else a lookup.
    #[inline]
    fn position(&self, index: u32, pos: usize) -> Option<usize> {
        match self {
            Column::Set { sparse, driver, .. } => {
                if *driver || sparse.indices().get(pos) == Some(&index) {
                    Some(pos)
                } else {
                    sparse.get_index_of(index)
                }
            }
            Column::Tag { .. } => None,
        }
    }
}

/// The shared column of `T`, whose id is `id`.
///
/// # Safety
///
/// No `&mut` to `T`'s storage is live for `'w` (the caller's access checks); `id` is `T`'s.
#[allow(unsafe_code)]
unsafe fn shared_column<'w, T: Component>(
    world: &'w World,
    id: ComponentId,
) -> Column<'w, *const T> {
    // SAFETY: `id` is `T`'s (the caller's contract).
    let storage: &'w Storage<T> = unsafe { world.components().columns[id.index()].storage_of() };
    if storage.in_bits() {
        Column::Tag {
            id,
            bits: &storage.tags,
            len: storage.tag_count,
        }
    } else {
        let (sparse, values) = storage.set.split();
        Column::Set {
            id,
            sparse,
            values: values.as_ptr(),
            len: values.len(),
            driver: false,
            changed: core::ptr::null_mut(),
            now: Tick::default(),
        }
    }
}

/// The exclusive column of `T`, whose id is `id`; its writes are stamped `now` when `T` is
/// tracked.
///
/// With `captured`, it writes through the pointers the column captured
/// ([`World::share`](crate::World::share) for a shared world, the query itself before the run
/// when it also tests `T`'s presence) and forms no `&mut` to the storage, so that presence
/// tests of `T` may borrow the storage meanwhile: in the same run, or on other threads of a
/// shared world (where they take no borrow flag).
///
/// # Safety
///
/// The caller has exclusive access to `T`'s values and stamps for `'w`: through `&mut World`,
/// or through `T`'s exclusive borrow flag on a shared world; with `captured`, the column's
/// captured pointers name the storage's current values and stamps. `id` is `T`'s.
#[allow(unsafe_code)]
unsafe fn exclusive_column<'w, T: Component>(
    world: &'w World,
    id: ComponentId,
    now: Tick,
    captured: bool,
) -> Column<'w, *mut T> {
    let column = &world.components().columns[id.index()];
    let (storage, values, changed): (&'w Storage<T>, *mut T, *mut Tick) = if captured {
        // SAFETY: `id` is `T`'s; no `&mut` to this storage is formed while the run lives (its
        // writers go through the captured pointers), so a shared borrow is sound.
        let storage: &'w Storage<T> = unsafe { column.storage_of::<T>() };
        // The pointers captured with write access: the values and stamps have not moved
        // since (the caller's contract).
        let (values, changed) = column.captured::<T>();
        debug_assert!(
            storage.in_bits() || core::ptr::eq(values, storage.set.values().as_ptr()),
            "the values moved after their pointer was captured"
        );
        debug_assert!(
            core::ptr::eq(
                changed,
                storage
                    .ticks
                    .as_ref()
                    .map_or(core::ptr::null(), |t| t.changed.as_ptr())
            ),
            "the stamps moved after their pointer was captured"
        );
        (storage, values, changed)
    } else {
        // SAFETY: exclusive access to this column for `'w`, and `id` is `T`'s: the caller's
        // contract. The `&mut` is formed before the run's other borrows of this storage (a
        // presence test of `T` makes the run take the captured path instead; the filter's
        // change tests, a group's driver and `slices`' length check come after it), and
        // nothing writes through it: it gives the raw pointers the run writes through and
        // is then held as shared, beside those shared borrows.
        let storage: &'w mut Storage<T> = unsafe { column.storage_mut::<T>() };
        let (values, changed) = storage.writable();
        (&*storage, values, changed)
    };
    if storage.in_bits() {
        return Column::Tag {
            id,
            bits: &storage.tags,
            len: storage.tag_count,
        };
    }
    let sparse = storage.set.sparse_view();
    Column::Set {
        id,
        sparse,
        len: sparse.indices().len(),
        values,
        driver: false,
        changed,
        now,
    }
}

// SAFETY: reads `T`'s storage only, as declared.
#[allow(unsafe_code)]
unsafe impl<T: Component> QueryData for &T {
    type Item<'w> = &'w T;
    type State<'w> = Column<'w, *const T>;

    #[inline]
    fn access(world: &World, out: &mut Accesses) {
        Access::push::<T>(world, Kind::Read, true, out);
    }

    unsafe fn prepare<'w>(
        world: &'w World,
        _: RunTicks,
        ids: &mut &[Access],
    ) -> Option<Self::State<'w>> {
        let id = Access::take(ids)?;
        // SAFETY: the caller checked that no write to `T` is live; `access` listed `T`'s id.
        Some(unsafe { shared_column(world, id) })
    }

    #[inline]
    fn offer<'w>(state: &Self::State<'w>, best: &mut Option<Candidate<'w>>) {
        Column::offer(state, best);
    }

    #[inline]
    fn choose(state: &mut Self::State<'_>, driving: &[ComponentId]) {
        state.choose(driving);
    }

    #[inline]
    unsafe fn fetch<'w>(state: &Self::State<'w>, index: u32, pos: usize) -> Option<&'w T> {
        match *state {
            Column::Set { values, .. } => {
                let p = state.position(index, pos)?;
                // SAFETY: `p` is a position of the dense values (the sparse side's answer, or
                // the walked position below `len`), valid for `'w`; no write to `T` is live.
                Some(unsafe { &*values.add(p) })
            }
            Column::Tag { bits, .. } => bits.contains(index).then(tag_ref),
        }
    }

    #[inline]
    fn has(state: &Self::State<'_>, index: u32, pos: usize) -> bool {
        state.holds(index, pos)
    }

    #[inline]
    fn marks(_: &Self::State<'_>) -> bool {
        false
    }

    #[inline]
    fn shrink<'long: 'short, 'short>(item: &'long T) -> &'short T {
        item
    }

    #[inline]
    fn walked(state: &Self::State<'_>) -> bool {
        state.is_walked()
    }

    #[inline]
    fn aligned(state: &Self::State<'_>, indices: &[u32], range: core::ops::Range<usize>) -> bool {
        state.is_aligned(indices, range)
    }

    #[inline]
    unsafe fn fetch_aligned<'w>(state: &Self::State<'w>, _: u32, pos: usize) -> &'w T {
        match *state {
            // SAFETY: `pos` is aligned (the caller's contract), so it is a dense position of
            // this column, readable for `'w`.
            Column::Set { values, .. } => unsafe { &*values.add(pos) },
            Column::Tag { .. } => unreachable!("a tag in bits is never aligned"),
        }
    }
}

// SAFETY: declares a read only.
#[allow(unsafe_code)]
unsafe impl<T: Component> ReadOnlyQueryData for &T {}

// --- &mut T ---------------------------------------------------------------------------------

// SAFETY: writes `T`'s storage only, as declared; each entity index is fetched at most once
// per live item (the caller's contract), so the `&mut` handed out never alias.
#[allow(unsafe_code)]
unsafe impl<T: Component> QueryData for &mut T {
    type Item<'w> = &'w mut T;
    type State<'w> = Column<'w, *mut T>;

    #[inline]
    fn access(world: &World, out: &mut Accesses) {
        Access::push::<T>(world, Kind::Write, true, out);
    }

    unsafe fn prepare<'w>(
        world: &'w World,
        ticks: RunTicks,
        ids: &mut &[Access],
    ) -> Option<Self::State<'w>> {
        let id = Access::take(ids)?;
        // SAFETY: the caller checked that this is the only access to `T`; `access` listed
        // `T`'s id.
        Some(unsafe { exclusive_column(world, id, ticks.now, ticks.captured) })
    }

    #[inline]
    fn offer<'w>(state: &Self::State<'w>, best: &mut Option<Candidate<'w>>) {
        Column::offer(state, best);
    }

    #[inline]
    fn choose(state: &mut Self::State<'_>, driving: &[ComponentId]) {
        state.choose(driving);
    }

    #[inline]
    unsafe fn fetch<'w>(state: &Self::State<'w>, index: u32, pos: usize) -> Option<&'w mut T> {
        match *state {
            Column::Set {
                values,
                changed,
                now,
                ..
            } => {
                let p = state.position(index, pos)?;
                if !changed.is_null() {
                    // SAFETY: a tracked storage keeps one stamp per dense value, so `p` is in
                    // bounds; the stamps are this run's alone, like the values.
                    unsafe { *changed.add(p) = now };
                }
                // SAFETY: `p` is a dense position below `len`, valid for `'w`; the storage is
                // exclusively this run's, and no other item for `index` (so for `p`) is live.
                Some(unsafe { &mut *values.add(p) })
            }
            Column::Tag { bits, .. } => bits.contains(index).then(tag_mut),
        }
    }

    #[inline]
    fn has(state: &Self::State<'_>, index: u32, pos: usize) -> bool {
        state.holds(index, pos)
    }

    #[inline]
    fn marks(state: &Self::State<'_>) -> bool {
        state.stamps()
    }

    #[inline]
    fn shrink<'long: 'short, 'short>(item: &'long mut T) -> &'short mut T {
        item
    }

    #[inline]
    fn walked(state: &Self::State<'_>) -> bool {
        state.is_walked()
    }

    #[inline]
    fn aligned(state: &Self::State<'_>, indices: &[u32], range: core::ops::Range<usize>) -> bool {
        state.is_aligned(indices, range)
    }

    #[inline]
    unsafe fn fetch_aligned<'w>(state: &Self::State<'w>, _: u32, pos: usize) -> &'w mut T {
        match *state {
            Column::Set { values, .. } => {
                // SAFETY: `pos` is aligned (the caller's contract): a dense position of this
                // column, whose storage is this run's alone; no other item for it is live.
                unsafe { &mut *values.add(pos) }
            }
            Column::Tag { .. } => unreachable!("a tag in bits is never aligned"),
        }
    }

    #[inline]
    unsafe fn mark_aligned(state: &Self::State<'_>, range: core::ops::Range<usize>) {
        if let Column::Set { changed, now, .. } = *state {
            if !changed.is_null() {
                // SAFETY: a tracked storage keeps one stamp per dense value, and aligned
                // positions are dense positions (the caller's contract); the stamps are this
                // run's alone, like the values, and no reference to them is live.
                let stamps = unsafe {
                    core::slice::from_raw_parts_mut(changed.add(range.start), range.len())
                };
                stamps.fill(now);
            }
        }
    }
}

// --- Option<Q> ------------------------------------------------------------------------------

/// The state of an optional element: its inner state, if its storage exists.
#[allow(unreachable_pub)]
#[derive(Clone, Copy)]
pub struct Optional<S>(Option<S>);

// SAFETY: the inner element's accesses, as declared by it.
#[allow(unsafe_code)]
unsafe impl<Q: QueryData> QueryData for Option<Q> {
    type Item<'w> = Option<Q::Item<'w>>;
    type State<'w> = Optional<Q::State<'w>>;

    #[inline]
    fn access(world: &World, out: &mut Accesses) {
        let from = out.len();
        Q::access(world, out);
        for a in &mut out[from..] {
            a.required = false;
        }
    }

    unsafe fn prepare<'w>(
        world: &'w World,
        ticks: RunTicks,
        ids: &mut &[Access],
    ) -> Option<Self::State<'w>> {
        // SAFETY: forwarded contract.
        Some(Optional(unsafe { Q::prepare(world, ticks, ids) }))
    }

    #[inline]
    fn offer<'w>(_: &Self::State<'w>, _: &mut Option<Candidate<'w>>) {
        // Optional elements never drive: they match every entity.
    }

    #[inline]
    fn choose(state: &mut Self::State<'_>, driving: &[ComponentId]) {
        // Walked by position only when a group that owns its type drives: every entity the
        // run visits then has it.
        if let Some(s) = &mut state.0 {
            Q::choose(s, driving);
        }
    }

    #[inline]
    unsafe fn fetch<'w>(state: &Self::State<'w>, index: u32, pos: usize) -> Option<Self::Item<'w>> {
        Some(match &state.0 {
            // SAFETY: forwarded contract.
            Some(s) => unsafe { Q::fetch(s, index, pos) },
            None => None,
        })
    }

    #[inline]
    fn has(_: &Self::State<'_>, _: u32, _: usize) -> bool {
        true
    }

    #[inline]
    fn marks(state: &Self::State<'_>) -> bool {
        state.0.as_ref().is_some_and(Q::marks)
    }

    #[inline]
    fn shrink<'long: 'short, 'short>(item: Self::Item<'long>) -> Self::Item<'short> {
        item.map(Q::shrink)
    }

    #[inline]
    fn walked(state: &Self::State<'_>) -> bool {
        state.0.as_ref().is_none_or(Q::walked)
    }

    #[inline]
    fn aligned(state: &Self::State<'_>, indices: &[u32], range: core::ops::Range<usize>) -> bool {
        // Aligned when the storage does not exist (always `None`) or holds every entity of
        // the range at its position (always `Some`).
        state
            .0
            .as_ref()
            .is_none_or(|s| Q::aligned(s, indices, range))
    }

    #[inline]
    unsafe fn fetch_aligned<'w>(state: &Self::State<'w>, index: u32, pos: usize) -> Self::Item<'w> {
        // SAFETY: forwarded contract: an inner state that exists is aligned too.
        state
            .0
            .as_ref()
            .map(|s| unsafe { Q::fetch_aligned(s, index, pos) })
    }

    #[inline]
    unsafe fn mark_aligned(state: &Self::State<'_>, range: core::ops::Range<usize>) {
        if let Some(s) = &state.0 {
            // SAFETY: forwarded contract: an inner state that exists is aligned too.
            unsafe { Q::mark_aligned(s, range) };
        }
    }
}

// SAFETY: reads only if `Q` does.
#[allow(unsafe_code)]
unsafe impl<Q: ReadOnlyQueryData> ReadOnlyQueryData for Option<Q> {}

// --- Has<T> ---------------------------------------------------------------------------------

/// Whether the entity has a `T`, as a `bool` item, without borrowing the value: a query over
/// entities with and without `T` that only needs to know which (`Option<&T>` would borrow the
/// values; a `Has` reads only which entities are in the storage, as a filter does).
///
/// ```
/// use dod_world::{Entity, Has, World};
/// struct Stunned;
/// let mut world = World::new();
/// let a = world.spawn((1u8, Stunned));
/// let b = world.spawn((2u8,));
/// let mut seen: Vec<(Entity, bool)> = world.query::<(Entity, Has<Stunned>)>().iter().collect();
/// seen.sort();
/// assert_eq!(seen, [(a, true), (b, false)]);
/// ```
pub struct Has<T>(core::marker::PhantomData<fn() -> T>);

// SAFETY: reads only the sparse side of `T`'s storage, declared as a filter's access.
#[allow(unsafe_code)]
unsafe impl<T: Component> QueryData for Has<T> {
    type Item<'w> = bool;
    // `None`: the world has never stored a `T`.
    type State<'w> = Option<Presence<'w>>;

    #[inline]
    fn access(world: &World, out: &mut Accesses) {
        Access::push::<T>(world, Kind::Presence, false, out);
    }

    unsafe fn prepare<'w>(
        world: &'w World,
        _: RunTicks,
        ids: &mut &[Access],
    ) -> Option<Self::State<'w>> {
        Some(Access::take(ids).map(|id| presence::<T>(world, id)))
    }

    #[inline]
    fn offer<'w>(_: &Self::State<'w>, _: &mut Option<Candidate<'w>>) {
        // Matches every entity: never drives.
    }

    #[inline]
    fn choose(_: &mut Self::State<'_>, _: &[ComponentId]) {}

    #[inline]
    unsafe fn fetch<'w>(state: &Self::State<'w>, index: u32, _: usize) -> Option<Self::Item<'w>> {
        Some(state.as_ref().is_some_and(|p| p.contains(index)))
    }

    #[inline]
    fn has(_: &Self::State<'_>, _: u32, _: usize) -> bool {
        true
    }

    #[inline]
    fn marks(_: &Self::State<'_>) -> bool {
        false
    }

    #[inline]
    fn shrink<'long: 'short, 'short>(item: bool) -> bool {
        item
    }

    #[inline]
    fn walked(_: &Self::State<'_>) -> bool {
        // Looks entities up by index: any position serves.
        true
    }

    #[inline]
    fn aligned(_: &Self::State<'_>, _: &[u32], _: core::ops::Range<usize>) -> bool {
        true
    }

    #[inline]
    unsafe fn fetch_aligned<'w>(state: &Self::State<'w>, index: u32, _: usize) -> Self::Item<'w> {
        state.as_ref().is_some_and(|p| p.contains(index))
    }
}

// SAFETY: declares only a filter's access.
#[allow(unsafe_code)]
unsafe impl<T: Component> ReadOnlyQueryData for Has<T> {}

// --- tuples ---------------------------------------------------------------------------------

macro_rules! tuple_data {
    ($($q:ident $i:tt),*) => {
        // SAFETY: the union of the elements' declared accesses.
        #[allow(unsafe_code, clippy::unused_unit, unused_variables)]
        unsafe impl<$($q: QueryData),*> QueryData for ($($q,)*) {
            type Item<'w> = ($($q::Item<'w>,)*);
            type State<'w> = ($($q::State<'w>,)*);

            #[inline]
            fn access(world: &World, out: &mut Accesses) {
                $($q::access(world, out);)*
            }

            unsafe fn prepare<'w>(
                world: &'w World,
                ticks: RunTicks,
                ids: &mut &[Access],
            ) -> Option<Self::State<'w>> {
                // SAFETY: forwarded contract. Every element takes its entries off `ids` even
                // when an earlier one found no storage (`?` after all of them).
                let states = ($(unsafe { $q::prepare(world, ticks, ids) },)*);
                Some(($(states.$i?,)*))
            }

            #[inline]
            fn offer<'w>(state: &Self::State<'w>, best: &mut Option<Candidate<'w>>) {
                $($q::offer(&state.$i, best);)*
            }

            #[inline]
            fn choose(state: &mut Self::State<'_>, driving: &[ComponentId]) {
                $($q::choose(&mut state.$i, driving);)*
            }

            #[inline]
            unsafe fn fetch<'w>(state: &Self::State<'w>, index: u32, pos: usize) -> Option<Self::Item<'w>> {
                // An element that marks its value changed is fetched only once every element
                // is known to match: otherwise an entity the query skips (a later element
                // lacking its component) would be marked.
                if Self::marks(state) && !Self::has(state, index, pos) {
                    return None;
                }
                // SAFETY: forwarded contract, element by element.
                Some(($(unsafe { $q::fetch(&state.$i, index, pos)? },)*))
            }

            #[inline]
            fn has(state: &Self::State<'_>, index: u32, pos: usize) -> bool {
                true $(&& $q::has(&state.$i, index, pos))*
            }

            #[inline]
            fn marks(state: &Self::State<'_>) -> bool {
                false $(|| $q::marks(&state.$i))*
            }

            #[inline]
            fn shrink<'long: 'short, 'short>(item: Self::Item<'long>) -> Self::Item<'short> {
                ($($q::shrink(item.$i),)*)
            }

            #[inline]
            fn walked(state: &Self::State<'_>) -> bool {
                true $(&& $q::walked(&state.$i))*
            }

            #[inline]
            fn aligned(state: &Self::State<'_>, indices: &[u32], range: core::ops::Range<usize>) -> bool {
                true $(&& $q::aligned(&state.$i, indices, range.clone()))*
            }

            #[inline]
            unsafe fn fetch_aligned<'w>(state: &Self::State<'w>, index: u32, pos: usize) -> Self::Item<'w> {
                // SAFETY: forwarded contract, element by element.
                ($(unsafe { $q::fetch_aligned(&state.$i, index, pos) },)*)
            }

            #[inline]
            unsafe fn mark_aligned(state: &Self::State<'_>, range: core::ops::Range<usize>) {
                // SAFETY: forwarded contract, element by element.
                $(unsafe { $q::mark_aligned(&state.$i, range.clone()) };)*
            }
        }

        // SAFETY: reads only if every element does.
        #[allow(unsafe_code)]
        unsafe impl<$($q: ReadOnlyQueryData),*> ReadOnlyQueryData for ($($q,)*) {}
    };
}

tuple_data!();
tuple_data!(A 0);
tuple_data!(A 0, B 1);
tuple_data!(A 0, B 1, C 2);
tuple_data!(A 0, B 1, C 2, D 3);
tuple_data!(A 0, B 1, C 2, D 3, E 4);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
