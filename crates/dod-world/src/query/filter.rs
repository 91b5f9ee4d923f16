//! [`QueryFilter`]: conditions on components a query does not hand out: [`With`],
//! [`Without`], [`Added`], [`Changed`], tuples of them (all must hold) and [`Or`] of them (one
//! must).

use core::marker::PhantomData;

use dod::sparse_set::SparseView;
use dod::BitSet;

use super::access::{Access, Accesses, Kind};
use super::data::{offer, Candidate, Driver, RunTicks};
use crate::storage::{Component, ComponentId, Storage, Tick};
use crate::World;

/// Keeps the entities that have a `T`, without handing it out; added with
/// [`Query::with`](crate::Query::with).
///
/// ```
/// use dod_world::World;
/// struct Enemy;
/// let mut world = World::new();
/// world.spawn((1u32, Enemy));
/// world.spawn((2u32,));
/// let mut seen = Vec::new();
/// world.query::<&u32>().with::<Enemy>().for_each(|v| seen.push(*v));
/// assert_eq!(seen, [1]);
/// ```
pub struct With<T>(PhantomData<fn() -> T>);

/// Keeps the entities that have no `T`; added with [`Query::without`](crate::Query::without).
///
/// ```
/// use dod_world::World;
/// struct Tank;
/// let mut world = World::new();
/// world.spawn((1u32, Tank));
/// world.spawn((2u32,));
/// let mut seen = Vec::new();
/// world.query::<&u32>().without::<Tank>().for_each(|v| seen.push(*v));
/// assert_eq!(seen, [2]);
/// ```
pub struct Without<T>(PhantomData<fn() -> T>);

/// Presence of one component type: the sparse side of its set, or its tag bits.
#[derive(Clone, Copy)]
#[allow(unreachable_pub)]
pub enum Presence<'w> {
    /// A sparse set's lookup.
    Set(
        ComponentId,
        SparseView<'w, { dod::sparse_set::DEFAULT_PAGE_SIZE }>,
    ),
    /// A tag's bits and their count.
    Tag(ComponentId, &'w BitSet, usize),
}

impl Presence<'_> {
    #[inline]
    pub(super) fn contains(&self, index: u32) -> bool {
        match self {
            Presence::Set(_, s) => s.contains(index),
            Presence::Tag(_, b, _) => b.contains(index),
        }
    }
}

/// The presence of `T`, whose id is `id`, in `world`.
pub(super) fn presence<T: Component>(world: &World, id: ComponentId) -> Presence<'_> {
    let storage: &Storage<T> = world.components().columns[id.index()].storage();
    if storage.in_bits() {
        Presence::Tag(id, &storage.tags, storage.tag_count)
    } else {
        Presence::Set(id, storage.set.sparse_view())
    }
}

/// A condition a query's entities meet: `()` (none), [`With<T>`], [`Without<T>`],
/// [`Added<T>`], [`Changed<T>`], tuples of up to 12 of them (all must hold) and [`Or`] of up
/// to 8 (one must).
///
/// # Safety
///
/// `access` declares every storage `matches` reads. Not meant to be implemented outside this
/// crate.
#[allow(unsafe_code)]
pub unsafe trait QueryFilter {
    /// What one run of the query holds; `Copy`, as [`QueryData`](crate::QueryData)'s.
    #[doc(hidden)]
    type State<'w>: Copy;

    /// Whether the filter keeps every entity (`()` and tuples of it): a run can skip it.
    #[doc(hidden)]
    const KEEPS_ALL: bool = false;

    /// Whether the filter holds a change filter ([`Added`], [`Changed`]), which answers
    /// relative to a query's last run: only a [`QueryState`](crate::QueryState) has one.
    #[doc(hidden)]
    const CHANGES: bool = false;

    /// Declares the storages read (as filters: only their sparse side and stamps).
    #[doc(hidden)]
    fn access(world: &World, out: &mut Accesses);

    /// Prepares a run; `None` if no entity can match. Takes the filter's entries of `access`
    /// off `ids`, in order.
    #[doc(hidden)]
    fn prepare<'w>(
        world: &'w World,
        ticks: RunTicks,
        ids: &mut &[Access],
    ) -> Option<Self::State<'w>>;

    /// Offers the filter's storage as the driver.
    #[doc(hidden)]
    fn offer<'w>(state: &Self::State<'w>, best: &mut Option<Candidate<'w>>);

    /// Marks the filters on one of `driving` as walked by position.
    #[doc(hidden)]
    fn choose(state: &mut Self::State<'_>, driving: &[ComponentId]);

    /// Whether entity `index` (at the walked position `pos`) meets the condition.
    #[doc(hidden)]
    fn matches(state: &Self::State<'_>, index: u32, pos: usize) -> bool;

    /// Whether every filter that reads by dense position (a change filter) is walked by
    /// position: then every position of the driver is aligned for the filter, and
    /// [`matches_aligned`](QueryFilter::matches_aligned) serves with no lookup. A filter that
    /// looks entities up by index serves at any position.
    #[doc(hidden)]
    #[inline]
    fn walked(_state: &Self::State<'_>) -> bool {
        true
    }

    /// Whether, for every position `p` in `range` of the driver (whose dense indices are
    /// `indices`), every filter that reads by dense position holds entity `indices[p]` at `p`.
    #[doc(hidden)]
    #[inline]
    fn aligned(
        _state: &Self::State<'_>,
        _indices: &[u32],
        _range: core::ops::Range<usize>,
    ) -> bool {
        true
    }

    /// [`matches`](QueryFilter::matches) at an aligned position.
    ///
    /// # Safety
    ///
    /// `pos` is aligned ([`aligned`](QueryFilter::aligned) or
    /// [`walked`](QueryFilter::walked) said so) and `index` is the driver's entity there.
    #[doc(hidden)]
    #[inline]
    unsafe fn matches_aligned(state: &Self::State<'_>, index: u32, pos: usize) -> bool {
        Self::matches(state, index, pos)
    }

    /// Whether [`rejects_aligned`](QueryFilter::rejects_aligned) can rule out a run of
    /// positions at once (a change filter can).
    #[doc(hidden)]
    const REJECTS_RUNS: bool = false;

    /// Whether no position of `range` can match: `true` only when that is certain (a change
    /// filter whose stamps in `range` are all older than its last run), `false` when unsure.
    ///
    /// # Safety
    ///
    /// Every position of `range` is aligned, as for
    /// [`matches_aligned`](QueryFilter::matches_aligned).
    #[doc(hidden)]
    #[inline]
    unsafe fn rejects_aligned(_state: &Self::State<'_>, _range: core::ops::Range<usize>) -> bool {
        false
    }
}

// SAFETY: reads the sparse side of `T`'s storage, as declared.
#[allow(unsafe_code)]
unsafe impl<T: Component> QueryFilter for With<T> {
    type State<'w> = Presence<'w>;

    #[inline]
    fn access(world: &World, out: &mut Accesses) {
        Access::push::<T>(world, Kind::Presence, true, out);
    }

    fn prepare<'w>(world: &'w World, _: RunTicks, ids: &mut &[Access]) -> Option<Presence<'w>> {
        Some(presence::<T>(world, Access::take(ids)?))
    }

    #[inline]
    fn offer<'w>(state: &Presence<'w>, best: &mut Option<Candidate<'w>>) {
        match *state {
            Presence::Set(id, s) => offer(
                best,
                Some(id),
                s.indices().len(),
                Driver::Dense(s.indices()),
            ),
            Presence::Tag(id, b, len) => offer(best, Some(id), len, Driver::Bits(b)),
        }
    }

    #[inline]
    fn choose(_: &mut Presence<'_>, _: &[ComponentId]) {}

    #[inline]
    fn matches(state: &Presence<'_>, index: u32, _: usize) -> bool {
        state.contains(index)
    }
}

// SAFETY: reads the sparse side of `T`'s storage, as declared.
#[allow(unsafe_code)]
unsafe impl<T: Component> QueryFilter for Without<T> {
    type State<'w> = Option<Presence<'w>>;

    #[inline]
    fn access(world: &World, out: &mut Accesses) {
        Access::push::<T>(world, Kind::Presence, false, out);
    }

    fn prepare<'w>(
        world: &'w World,
        _: RunTicks,
        ids: &mut &[Access],
    ) -> Option<Option<Presence<'w>>> {
        Some(Access::take(ids).map(|id| presence::<T>(world, id)))
    }

    #[inline]
    fn offer<'w>(_: &Self::State<'w>, _: &mut Option<Candidate<'w>>) {}

    #[inline]
    fn choose(_: &mut Self::State<'_>, _: &[ComponentId]) {}

    #[inline]
    fn matches(state: &Self::State<'_>, index: u32, _: usize) -> bool {
        state.as_ref().is_none_or(|p| !p.contains(index))
    }
}

/// Keeps the entities whose `T` was added since the query's last run, which a
/// [`QueryState`](crate::QueryState) remembers (change filters are used through one; its
/// first run sees every value as added). `T` must be tracked
/// ([`World::track`](crate::World::track)): a query with the filter panics on its first run
/// otherwise.
///
/// ```
/// use dod_world::{Added, Entity, QueryState, World};
/// let mut world = World::new();
/// world.track::<u32>();
/// let mut fresh = QueryState::<Entity, Added<u32>>::new();
/// let a = world.spawn((1u32,));
/// assert_eq!(fresh.query(&mut world).iter().collect::<Vec<_>>(), [a]);
/// let b = world.spawn((2u32,));
/// assert_eq!(fresh.query(&mut world).iter().collect::<Vec<_>>(), [b]);
/// ```
pub struct Added<T>(PhantomData<fn() -> T>);

/// Keeps the entities whose `T` was added or written since the query's last run. A value is
/// written when code takes it mutably: a `&mut T` from a query, or
/// [`World::get_mut`](crate::World::get_mut). `T` must be tracked, as for [`Added`].
///
/// Marking on mutable access, not on an actual write, keeps items plain references (no guard
/// per item, nothing between SIMD code and the slice); the price is that code which takes
/// `&mut T` and writes nothing still marks the value: take `&T` to read.
///
/// ```
/// use dod_world::{Changed, Entity, QueryState, World};
/// let mut world = World::new();
/// world.track::<u32>();
/// let a = world.spawn((1u32,));
/// let b = world.spawn((2u32,));
/// let mut moved = QueryState::<Entity, Changed<u32>>::new();
/// assert_eq!(moved.query(&mut world).count(), 2); // added counts as changed
/// *world.get_mut::<u32>(b).unwrap() += 1;
/// assert_eq!(moved.query(&mut world).iter().collect::<Vec<_>>(), [b]);
/// assert_eq!(moved.query(&mut world).count(), 0);
/// # let _ = a;
/// ```
pub struct Changed<T>(PhantomData<fn() -> T>);

/// The stamps a change filter reads.
#[allow(unreachable_pub)]
#[derive(Clone, Copy)]
pub struct Stamps<'w> {
    id: ComponentId,
    sparse: SparseView<'w, { dod::sparse_set::DEFAULT_PAGE_SIZE }>,
    stamps: *const Tick,
    ticks: RunTicks,
    driver: bool,
}

impl Stamps<'_> {
    #[inline]
    fn newer(&self, index: u32, pos: usize) -> bool {
        let p = if self.driver || self.sparse.indices().get(pos) == Some(&index) {
            pos
        } else {
            match self.sparse.get_index_of(index) {
                Some(p) => p,
                None => return false,
            }
        };
        // SAFETY: `p` is a dense position of this storage.
        #[allow(unsafe_code)]
        unsafe {
            self.newer_at(p)
        }
    }

    /// Whether the stamp at dense position `p` is newer than the run's last.
    ///
    /// # Safety
    ///
    /// `p` is a dense position of this storage.
    #[inline]
    #[allow(unsafe_code)]
    unsafe fn newer_at(&self, p: usize) -> bool {
        // SAFETY: a tracked storage keeps one stamp per dense value, and `p` is a dense
        // position (the caller's contract); no write to these stamps is live (the access
        // checks: only a `&mut T` of the same query writes them, and it does so after the
        // filter has read).
        let stamp = unsafe { *self.stamps.add(p) };
        stamp.is_newer_than(self.ticks.since, self.ticks.now)
    }

    /// Whether no stamp in `range` is newer than the run's last: a branch-free pass the
    /// compiler turns into vector compares.
    ///
    /// # Safety
    ///
    /// `range` is a range of dense positions of this storage.
    #[inline]
    #[allow(unsafe_code)]
    unsafe fn none_newer(&self, range: core::ops::Range<usize>) -> bool {
        // SAFETY: one stamp per dense value, and `range` lies within the dense positions
        // (the caller's contract); no write to the stamps is live (as in `newer_at`).
        let stamps =
            unsafe { core::slice::from_raw_parts(self.stamps.add(range.start), range.len()) };
        let (since, now) = (self.ticks.since, self.ticks.now);
        !stamps
            .iter()
            .fold(false, |any, s| any | s.is_newer_than(since, now))
    }

    /// Whether the storage holds `indices[p]` at every position `p` of `range`.
    #[inline]
    fn is_aligned(&self, indices: &[u32], range: core::ops::Range<usize>) -> bool {
        self.driver || self.sparse.indices().get(range.clone()) == indices.get(range)
    }
}

/// Panics unless `T` is tracked, naming the filter; a type the world has never seen is not,
/// so that a filter on it panics from its first run, not first when the type arrives.
#[track_caller]
fn require_tracked<T: Component>(world: &World, added: bool) {
    let components = world.components();
    let tracked = components.id::<T>().is_some_and(|id| {
        let storage: &Storage<T> = components.columns[id.index()].storage();
        storage.ticks.is_some()
    });
    if !tracked {
        not_tracked::<T>(added);
    }
}

#[cold]
#[track_caller]
fn not_tracked<T: Component>(added: bool) -> ! {
    let filter = if added { "Added" } else { "Changed" };
    crate::storage::needs_tracking::<T>(format_args!("{filter}<{}>", core::any::type_name::<T>()))
}

/// The stamps of `T` (whose id is `id`), added or changed.
#[track_caller]
fn stamps<T: Component>(
    world: &World,
    id: ComponentId,
    ticks: RunTicks,
    added: bool,
) -> Stamps<'_> {
    let storage: &Storage<T> = world.components().columns[id.index()].storage();
    let Some(t) = &storage.ticks else {
        not_tracked::<T>(added)
    };
    Stamps {
        id,
        sparse: storage.set.sparse_view(),
        stamps: if added {
            t.added.as_ptr()
        } else {
            t.changed.as_ptr()
        },
        ticks,
        driver: false,
    }
}

macro_rules! change_filter {
    ($name:ident, $added:literal) => {
        // SAFETY: reads the sparse side and the stamps of `T`'s storage, as declared.
        #[allow(unsafe_code)]
        unsafe impl<T: Component> QueryFilter for $name<T> {
            type State<'w> = Stamps<'w>;
            const CHANGES: bool = true;

            #[inline]
            fn access(world: &World, out: &mut Accesses) {
                require_tracked::<T>(world, $added);
                Access::push::<T>(world, Kind::Stamps, true, out);
            }

            #[track_caller]
            fn prepare<'w>(
                world: &'w World,
                ticks: RunTicks,
                ids: &mut &[Access],
            ) -> Option<Stamps<'w>> {
                Some(stamps::<T>(world, Access::take(ids)?, ticks, $added))
            }

            #[inline]
            fn offer<'w>(state: &Stamps<'w>, best: &mut Option<Candidate<'w>>) {
                let indices = state.sparse.indices();
                offer(best, Some(state.id), indices.len(), Driver::Dense(indices));
            }

            #[inline]
            fn choose(state: &mut Stamps<'_>, driving: &[ComponentId]) {
                state.driver = driving.contains(&state.id);
            }

            #[inline]
            fn matches(state: &Stamps<'_>, index: u32, pos: usize) -> bool {
                state.newer(index, pos)
            }

            #[inline]
            fn walked(state: &Stamps<'_>) -> bool {
                state.driver
            }

            #[inline]
            fn aligned(
                state: &Stamps<'_>,
                indices: &[u32],
                range: core::ops::Range<usize>,
            ) -> bool {
                state.is_aligned(indices, range)
            }

            #[inline]
            unsafe fn matches_aligned(state: &Stamps<'_>, _: u32, pos: usize) -> bool {
                // SAFETY: `pos` is aligned for this storage (the caller's contract), so it is
                // one of its dense positions.
                unsafe { state.newer_at(pos) }
            }

            const REJECTS_RUNS: bool = true;

            #[inline]
            unsafe fn rejects_aligned(state: &Stamps<'_>, range: core::ops::Range<usize>) -> bool {
                // SAFETY: aligned positions are dense positions of this storage (the caller's
                // contract).
                unsafe { state.none_newer(range) }
            }
        }
    };
}

change_filter!(Added, true);
change_filter!(Changed, false);

macro_rules! tuple_filter {
    ($($f:ident $i:tt),*) => {
        // SAFETY: the union of the filters' declared accesses.
        #[allow(unsafe_code, clippy::unused_unit, unused_variables, unused_unsafe)]
        unsafe impl<$($f: QueryFilter),*> QueryFilter for ($($f,)*) {
            type State<'w> = ($($f::State<'w>,)*);
            const KEEPS_ALL: bool = true $(&& $f::KEEPS_ALL)*;
            const CHANGES: bool = false $(|| $f::CHANGES)*;

            #[inline]
            fn access(world: &World, out: &mut Accesses) {
                $($f::access(world, out);)*
            }

            #[track_caller]
            fn prepare<'w>(
                world: &'w World,
                ticks: RunTicks,
                ids: &mut &[Access],
            ) -> Option<Self::State<'w>> {
                // Every filter takes its entries off `ids` even when an earlier one matches
                // nothing (`?` after all of them).
                let states = ($($f::prepare(world, ticks, ids),)*);
                Some(($(states.$i?,)*))
            }

            #[inline]
            fn offer<'w>(state: &Self::State<'w>, best: &mut Option<Candidate<'w>>) {
                $($f::offer(&state.$i, best);)*
            }

            #[inline]
            fn choose(state: &mut Self::State<'_>, driving: &[ComponentId]) {
                $($f::choose(&mut state.$i, driving);)*
            }

            #[inline]
            fn matches(state: &Self::State<'_>, index: u32, pos: usize) -> bool {
                true $(&& $f::matches(&state.$i, index, pos))*
            }

            #[inline]
            fn walked(state: &Self::State<'_>) -> bool {
                true $(&& $f::walked(&state.$i))*
            }

            #[inline]
            fn aligned(
                state: &Self::State<'_>,
                indices: &[u32],
                range: core::ops::Range<usize>,
            ) -> bool {
                true $(&& $f::aligned(&state.$i, indices, range.clone()))*
            }

            #[inline]
            unsafe fn matches_aligned(state: &Self::State<'_>, index: u32, pos: usize) -> bool {
                // SAFETY: the caller's contract holds for every filter of the tuple.
                unsafe { true $(&& $f::matches_aligned(&state.$i, index, pos))* }
            }

            const REJECTS_RUNS: bool = false $(|| $f::REJECTS_RUNS)*;

            #[inline]
            unsafe fn rejects_aligned(
                state: &Self::State<'_>,
                range: core::ops::Range<usize>,
            ) -> bool {
                // SAFETY: the caller's contract holds for every filter of the tuple.
                unsafe {
                    false $(|| ($f::REJECTS_RUNS && $f::rejects_aligned(&state.$i, range.clone())))*
                }
            }
        }
    };
}

tuple_filter!();
tuple_filter!(A 0);
tuple_filter!(A 0, B 1);
tuple_filter!(A 0, B 1, C 2);
tuple_filter!(A 0, B 1, C 2, D 3);
tuple_filter!(A 0, B 1, C 2, D 3, E 4);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);

/// Keeps the entities that meet at least one filter of a tuple: `Or<(With<A>, With<B>)>`,
/// `Or<(Changed<A>, Changed<B>)>`, `Or<(With<A>, (With<B>, Without<C>))>`. Added to a query
/// with [`Query::filter`](crate::Query::filter), or named in a
/// [`QueryState`](crate::QueryState)'s type.
///
/// An `Or` never drives a query (it can hold entities that none of its storages list
/// alone), and its types do not count as required when a query looks for a group to walk:
/// a query made only of an `Or` walks the smallest storage its data requires, or every
/// entity. A type the world has never stored matches nothing, and so does its `With` inside
/// the `Or` (a change filter needs its type tracked, inside an `Or` as outside); a `Without`
/// of it matches every entity.
///
/// ```
/// use dod_world::{Or, With, World};
/// struct Burning;
/// struct Frozen;
/// let mut world = World::new();
/// world.spawn((1u8, Burning));
/// world.spawn((2u8, Frozen));
/// world.spawn((3u8,));
/// let mut hurt: Vec<u8> = world
///     .query::<&u8>()
///     .filter::<Or<(With<Burning>, With<Frozen>)>>()
///     .iter()
///     .copied()
///     .collect();
/// hurt.sort();
/// assert_eq!(hurt, [1, 2]);
/// ```
pub struct Or<F>(PhantomData<fn() -> F>);

macro_rules! or_filter {
    ($($f:ident $i:tt),*) => {
        // SAFETY: the union of the filters' declared accesses, each used only through its own
        // filter.
        #[allow(unsafe_code, unused_unsafe)]
        unsafe impl<$($f: QueryFilter),*> QueryFilter for Or<($($f,)*)> {
            // A filter whose storage does not exist matches nothing: `None`.
            type State<'w> = ($(Option<$f::State<'w>>,)*);
            const CHANGES: bool = false $(|| $f::CHANGES)*;

            #[inline]
            fn access(world: &World, out: &mut Accesses) {
                let from = out.len();
                $($f::access(world, out);)*
                // No type of an `Or` is on every entity it keeps: none may pick a group.
                for a in &mut out[from..] {
                    a.required = false;
                }
            }

            #[track_caller]
            fn prepare<'w>(
                world: &'w World,
                ticks: RunTicks,
                ids: &mut &[Access],
            ) -> Option<Self::State<'w>> {
                let states = ($($f::prepare(world, ticks, ids),)*);
                if true $(&& states.$i.is_none())* {
                    // No filter can match: nor can the `Or`.
                    return None;
                }
                Some(states)
            }

            #[inline]
            fn offer<'w>(_: &Self::State<'w>, _: &mut Option<Candidate<'w>>) {}

            #[inline]
            fn choose(state: &mut Self::State<'_>, driving: &[ComponentId]) {
                $(if let Some(s) = &mut state.$i {
                    $f::choose(s, driving);
                })*
            }

            #[inline]
            fn matches(state: &Self::State<'_>, index: u32, pos: usize) -> bool {
                false $(|| state.$i.as_ref().is_some_and(|s| $f::matches(s, index, pos)))*
            }

            #[inline]
            fn walked(state: &Self::State<'_>) -> bool {
                true $(&& state.$i.as_ref().is_none_or($f::walked))*
            }

            #[inline]
            fn aligned(
                state: &Self::State<'_>,
                indices: &[u32],
                range: core::ops::Range<usize>,
            ) -> bool {
                true $(&& state.$i.as_ref().is_none_or(|s| $f::aligned(s, indices, range.clone())))*
            }

            #[inline]
            unsafe fn matches_aligned(state: &Self::State<'_>, index: u32, pos: usize) -> bool {
                // SAFETY: every filter that exists is aligned at `pos` (`aligned` and `walked`
                // asked them all), so the caller's contract holds for each.
                false $(|| state.$i.as_ref().is_some_and(|s| unsafe { $f::matches_aligned(s, index, pos) }))*
            }

            // A run can be ruled out when every filter can rule it out.
            const REJECTS_RUNS: bool = true $(&& $f::REJECTS_RUNS)*;

            #[inline]
            unsafe fn rejects_aligned(
                state: &Self::State<'_>,
                range: core::ops::Range<usize>,
            ) -> bool {
                // SAFETY: as in `matches_aligned`, for every position of `range`. Only asked
                // when `REJECTS_RUNS`: then every filter can answer.
                true $(&& state.$i.as_ref().is_none_or(|s| unsafe { $f::rejects_aligned(s, range.clone()) }))*
            }
        }
    };
}

or_filter!(A 0);
or_filter!(A 0, B 1);
or_filter!(A 0, B 1, C 2);
or_filter!(A 0, B 1, C 2, D 3);
or_filter!(A 0, B 1, C 2, D 3, E 4);
or_filter!(A 0, B 1, C 2, D 3, E 4, F 5);
or_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
or_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
