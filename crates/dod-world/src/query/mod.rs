//! Queries: every entity that has a set of components, with references to them.
//!
//! A query drives from the smallest storage it requires (its dense slice of entity indices,
//! or a tag's bits) and probes the other storages by index: the cost is that of the smallest
//! storage, with one sparse lookup per other component and no hashing per entity. Every
//! element is prepared once per run, so the loop itself touches only the storages.
//!
//! Forms:
//! - [`for_each`](Query::for_each): internal iteration, the fast path;
//! - [`iter`](Query::iter) and `IntoIterator` (by value for the exclusive form only): an
//!   [`Iterator`];
//! - [`get`](Query::get): one entity;
#![cfg_attr(
    feature = "rayon",
    doc = "- [`par_for_each`](Query::par_for_each), [`par_for_each_init`](Query::par_for_each_init) \
           and [`par_fold`](Query::par_fold) (feature `rayon`): the driver's entities split \
           over threads."
)]
#![cfg_attr(
    not(feature = "rayon"),
    doc = "- `par_for_each`, `par_for_each_init` and `par_fold` (feature `rayon`): the \
           driver's entities split over threads."
)]
//!
//! A query asking for one component mutably twice, or mutably and shared, panics naming the
//! type the first time it runs.

pub(crate) mod access;
mod data;
mod filter;
mod slices;
mod state;

use core::fmt;
use core::marker::PhantomData;

use dod::BitSet;

use crate::entity::Entity;
use crate::error::SingleError;
use crate::World;
use access::{check_conflicts, Access, Accesses, Held, Kind};
use smallvec::SmallVec;

use crate::storage::{ComponentId, Tick};
use data::{Driver, RunTicks};
pub use data::{Has, QueryData, ReadOnlyQueryData};
pub use filter::{Added, Changed, Or, QueryFilter, With, Without};
pub use slices::{GroupEntities, SliceData};
pub use state::QueryState;

/// How many positions a run checks for alignment at once (one slice comparison per element).
const ALIGNED_CHUNK: usize = 64;

/// A prepared run: the elements' and filters' states, and the driver (`None`: every live
/// entity, for a query that requires no component).
struct Run<'w, Q: QueryData, F: QueryFilter> {
    data: Q::State<'w>,
    filter: F::State<'w>,
    driver: Option<Driver<'w>>,
}

impl<'w, Q: QueryData, F: QueryFilter> Run<'w, Q, F> {
    /// Prepares every element and filter, with no driver; `None` if no entity can match.
    ///
    /// # Safety
    ///
    /// The query's accesses were checked against each other, and the caller may access the
    /// world as they declare for `'w` (see [`Query::new`]).
    #[allow(unsafe_code)]
    #[track_caller]
    unsafe fn prepare(world: &'w World, ticks: RunTicks, accesses: &[Access]) -> Option<Self> {
        let mut ids = accesses;
        // SAFETY: forwarded contract; `accesses` is what `Q` and `F` listed, in that order.
        let data = unsafe { Q::prepare(world, ticks, &mut ids) };
        let filter = F::prepare(world, ticks, &mut ids);
        Some(Run {
            data: data?,
            filter: filter?,
            driver: None,
        })
    }

    /// Picks how the run walks: the packed prefix of a group whose types the query all
    /// requires (no lookups for them), or else the smallest required storage.
    fn drive(mut self, world: &'w World, accesses: &[Access]) -> Self {
        let mut best = None;
        Q::offer(&self.data, &mut best);
        F::offer(&self.filter, &mut best);
        let components = world.components();
        let group = if components.has_groups() {
            let required: SmallVec<[ComponentId; 16]> = accesses
                .iter()
                .filter(|a| a.required)
                .filter_map(|a| a.id)
                .collect();
            components.group_within(&required)
        } else {
            None
        };
        if let Some(group) = group {
            if best
                .as_ref()
                .is_none_or(|b: &data::Candidate<'_>| group.len <= b.len)
            {
                let first = &components.columns[group.owned[0].index()];
                let indices = &first.any().dense_indices()[..group.len];
                Q::choose(&mut self.data, &group.owned);
                F::choose(&mut self.filter, &group.owned);
                self.driver = Some(Driver::Dense(indices));
                return self;
            }
        }
        if let Some(c) = best {
            let driving: &[ComponentId] = match &c.id {
                Some(id) if matches!(c.driver, Driver::Dense(_)) => core::slice::from_ref(id),
                _ => &[],
            };
            Q::choose(&mut self.data, driving);
            F::choose(&mut self.filter, driving);
            self.driver = Some(c.driver);
        }
        self
    }
}

/// The entities that have the components of `Q` and pass the filter `F`, with references to
/// the components. Made by [`World::query`], [`World::query_ref`] and [`Shared::query`].
///
/// `Q` is [`Entity`], `&T`, `&mut T`, `Option<&T>`, `Option<&mut T>`, [`Has<T>`] or a tuple
/// of them; `F` is added with [`with`](Query::with), [`without`](Query::without) and
/// [`filter`](Query::filter), or named in a [`QueryState`].
///
/// `SHARED` tells the two forms apart. A query made from `&mut World` has the world to
/// itself for `'w`, and a read-only one made from `&World` knows that nothing writes to it
/// for `'w`, so their items may live that long: they are also an `IntoIterator` by value. A
/// query of the shared form ([`SharedQuery`], made by [`Shared::query`]) holds per-storage
/// borrow flags, which it gives back when it drops, so every way its items come out
/// ([`for_each`](Query::for_each), [`iter`](Query::iter), [`get`](Query::get), `slices`,
/// `par_for_each`, a `for` loop over `&mut query`) borrows the query, and it cannot be
/// consumed into an iterator whose items would outlive its flags. A query of the exclusive
/// form holds no flags, so its borrow of the world ends at its last use (see
/// [`QueryForm`]).
///
/// ```
/// use dod_world::{Entity, World};
///
/// #[derive(Debug, PartialEq)]
/// struct Pos(f32);
/// struct Vel(f32);
///
/// let mut world = World::new();
/// let a = world.spawn((Pos(0.0), Vel(1.0)));
/// let b = world.spawn((Pos(5.0),));
///
/// world.query::<(&mut Pos, &Vel)>().for_each(|(p, v)| p.0 += v.0);
/// assert_eq!(world.get::<Pos>(a), Some(&Pos(1.0)));
///
/// let still: Vec<Entity> = world.query::<Entity>().with::<Pos>().without::<Vel>().iter().collect();
/// assert_eq!(still, [b]);
/// ```
///
/// [`Shared::query`]: crate::Shared::query
#[must_use = "a query does nothing until it runs: for_each, iter, get"]
pub struct Query<'w, Q: QueryData, F: QueryFilter = (), const SHARED: bool = false>
where
    Form<SHARED>: QueryForm,
{
    world: &'w World,
    /// The flags held, once a run has taken them (released on drop); nothing in the
    /// exclusive form, so that its drop uses nothing borrowed from the world.
    held: <Form<SHARED> as sealed::Sealed>::Flags<'w>,
    /// What the query's elements and filters use; listed in place by the first run, and
    /// trusted only once `checked`.
    accesses: Accesses,
    /// Whether `accesses` passed the conflict check and, in the shared form, its flags are
    /// held.
    checked: bool,
    /// Whether the query tests the presence of a type it writes (set by the check): its
    /// writers then write through their columns' captured pointers.
    tests_written: bool,
    /// The tick the query's state last ran at, moved by the query's first run (change
    /// filters).
    last_run: Option<&'w mut Option<u64>>,
    /// The ticks of the query's first run, which its later runs share.
    run_ticks: Option<RunTicks>,
    _types: Types<Q, F>,
}

/// A query of the shared form: it takes the storages' borrow flags when it first runs and
/// gives them back when it drops. Made by [`Shared::query`] and
/// [`QueryState::query_shared`].
///
/// Its items borrow the query, so none of them outlives the flags that guard it:
///
/// ```compile_fail,E0716
/// let mut world = dod_world::World::new();
/// world.spawn((1u32,));
/// let w = world.share();
/// // The query is dropped at the end of the statement, and its flags with it, so the
/// // references cannot be kept past it (a second writer could take the flags then).
/// let refs: Vec<&mut u32> = w.query::<&mut u32>().into_iter().collect();
/// let again: Vec<&mut u32> = w.query::<&mut u32>().into_iter().collect();
/// assert_eq!(refs.len() + again.len(), 2);
/// ```
///
/// Kept in a binding, the query holds its flags for as long as its items are used:
///
/// ```
/// let mut world = dod_world::World::new();
/// world.spawn((1u32,));
/// let w = world.share();
/// let mut q = w.query::<&mut u32>();
/// let refs: Vec<&mut u32> = q.iter().collect();
/// assert_eq!(refs.len(), 1);
/// ```
///
/// [`Shared::query`]: crate::Shared::query
pub type SharedQuery<'w, Q, F = ()> = Query<'w, Q, F, true>;

/// A query's form as a type: `Form<false>` is the exclusive form, `Form<true>` the shared
/// one ([`SharedQuery`]). What a query holds while it lives depends on it ([`QueryForm`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Form<const SHARED: bool>;

/// The two forms of a query, and what each holds while it lives.
///
/// A query of the exclusive form holds no borrow flags and has nothing to give back: its drop
/// uses nothing borrowed from the world, so, like a reference, its borrow of the world ends
/// at its last use, and the world can change after that in the same scope. A query of the
/// shared form holds its storages' flags from its first run until it drops.
///
/// ```
/// let mut world = dod_world::World::new();
/// world.spawn((1u32,));
/// let mut q = world.query::<&mut u32>();
/// q.for_each(|v| *v += 1);
/// world.spawn((5u32,)); // `q` is not used again, so the world is free
/// assert_eq!(world.query::<&u32>().iter().sum::<u32>(), 7);
/// ```
///
/// Sealed: `Form<false>` and `Form<true>` are the only forms.
pub trait QueryForm: sealed::Sealed {}

impl QueryForm for Form<false> {}
impl QueryForm for Form<true> {}

mod sealed {
    use super::{Access, Held, World};

    /// What a query of a form holds. Outside code can reach these methods through a
    /// `QueryForm` bound, but cannot make an `Access`, so the only flags it can take are
    /// none: no storage's flag is taken or released but by a query.
    pub trait Sealed {
        /// The borrow flags a query of this form holds.
        type Flags<'w>;
        /// No flags: a query that has not run.
        fn unflagged<'w>() -> Self::Flags<'w>;
        /// The flags a run with `accesses` needs: none for the exclusive form.
        fn take<'w>(world: &'w World, accesses: &[Access]) -> Self::Flags<'w>;
    }

    impl Sealed for super::Form<false> {
        type Flags<'w> = ();

        #[inline]
        fn unflagged<'w>() -> Self::Flags<'w> {}

        #[inline]
        fn take<'w>(_: &'w World, _: &[Access]) -> Self::Flags<'w> {}
    }

    impl Sealed for super::Form<true> {
        type Flags<'w> = Option<Held<'w>>;

        #[inline]
        fn unflagged<'w>() -> Option<Held<'w>> {
            None
        }

        #[track_caller]
        fn take<'w>(world: &'w World, accesses: &[Access]) -> Option<Held<'w>> {
            Some(Held::acquire(world, accesses))
        }
    }
}

/// The query's element and filter types, held by a query that stores neither.
pub(crate) type Types<Q, F> = PhantomData<(fn() -> Q, fn() -> F)>;

/// Shows the query's element and filter types and its form.
///
/// ```
/// let mut world = dod_world::World::new();
/// let q = world.query::<&u32>().with::<u8>();
/// let shown = format!("{q:?}");
/// assert!(shown.starts_with("Query { data: \"&u32\"") && shown.contains("shared: false"));
/// ```
impl<Q: QueryData, F: QueryFilter, const SHARED: bool> fmt::Debug for Query<'_, Q, F, SHARED>
where
    Form<SHARED>: QueryForm,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_types::<Q, F>(f, "Query")
            .field("shared", &SHARED)
            .finish_non_exhaustive()
    }
}

/// The start of a query type's `Debug`: its name, then its element and filter types.
fn debug_types<'a, 'b, Q, F>(
    f: &'a mut fmt::Formatter<'b>,
    name: &str,
) -> fmt::DebugStruct<'a, 'b> {
    let mut d = f.debug_struct(name);
    d.field("data", &core::any::type_name::<Q>())
        .field("filter", &core::any::type_name::<F>());
    d
}

impl<'w, Q: QueryData, F: QueryFilter, const SHARED: bool> Query<'w, Q, F, SHARED>
where
    Form<SHARED>: QueryForm,
{
    /// A query over `world`, which the caller may access as `Q` and `F` declare: exclusively
    /// (it holds `&mut World`, or `Q` is read-only and it holds `&World`), or, with `SHARED`,
    /// through the storages' borrow flags.
    pub(crate) fn new(world: &'w World) -> Self {
        Query {
            world,
            held: <Form<SHARED> as sealed::Sealed>::unflagged(),
            accesses: Accesses::new(),
            checked: false,
            tests_written: false,
            last_run: None,
            run_ticks: None,
            _types: PhantomData,
        }
    }

    /// The query, with its runs remembered in `last_run` (for change filters).
    pub(crate) fn remembering(mut self, last_run: &'w mut Option<u64>) -> Self {
        self.last_run = Some(last_run);
        self
    }

    /// The query, keeping only entities that also have a `T` (not handed out).
    ///
    /// # Panics
    ///
    /// When the query runs, if `T` is not registered and is a reference to a registered
    /// component type, or a tuple of them: `&Pos` where `Pos` was meant (see
    /// [`Component`](crate::Component)).
    ///
    /// ```
    /// use dod_world::World;
    /// struct Frozen;
    /// let mut world = World::new();
    /// world.spawn((1u8, Frozen));
    /// world.spawn((2u8,));
    /// assert_eq!(world.query::<&u8>().with::<Frozen>().iter().count(), 1);
    /// ```
    pub fn with<T: crate::Component>(self) -> Query<'w, Q, (F, With<T>), SHARED> {
        self.refilter()
    }

    /// The query, keeping only entities that have no `T`.
    ///
    /// # Panics
    ///
    /// When the query runs, if `T` is not registered and is a reference to a registered
    /// component type, or a tuple of them: `&Pos` where `Pos` was meant (see
    /// [`Component`](crate::Component)).
    ///
    /// ```
    /// use dod_world::World;
    /// struct Frozen;
    /// let mut world = World::new();
    /// world.spawn((1u8, Frozen));
    /// world.spawn((2u8,));
    /// let v: Vec<u8> = world.query::<&u8>().without::<Frozen>().iter().copied().collect();
    /// assert_eq!(v, [2]);
    /// ```
    pub fn without<T: crate::Component>(self) -> Query<'w, Q, (F, Without<T>), SHARED> {
        self.refilter()
    }

    /// The query, keeping only entities that also pass the filter `G`: any [`QueryFilter`],
    /// such as an [`Or`] of others.
    ///
    /// # Panics
    ///
    /// If `G` holds a change filter ([`Added`], [`Changed`]) and the query is not a
    /// [`QueryState`]'s: a change filter answers relative to the last run, which only a
    /// state remembers. Name it in the state's type, or add it to the state's query.
    ///
    /// ```
    /// use dod_world::{Or, With, Without, World};
    /// struct Player;
    /// struct Ally;
    /// struct Dead;
    /// let mut world = World::new();
    /// world.spawn((1u8, Player));
    /// world.spawn((2u8, Ally, Dead));
    /// world.spawn((3u8, Ally));
    /// world.spawn((4u8,));
    /// let mut friends: Vec<u8> = world
    ///     .query::<&u8>()
    ///     .filter::<(Or<(With<Player>, With<Ally>)>, Without<Dead>)>()
    ///     .iter()
    ///     .copied()
    ///     .collect();
    /// friends.sort();
    /// assert_eq!(friends, [1, 3]);
    /// ```
    #[track_caller]
    pub fn filter<G: QueryFilter>(self) -> Query<'w, Q, (F, G), SHARED> {
        if G::CHANGES && self.last_run.is_none() {
            change_filter_without_state::<G>();
        }
        self.refilter()
    }

    /// The same query with the filter `G` in place of `F`.
    pub(crate) fn with_filter<G: QueryFilter>(self) -> Query<'w, Q, G, SHARED> {
        self.refilter()
    }

    /// The same query with another filter: the checks are made again when it runs, and its
    /// first run is a new run (its borrows, given up here, are taken again then, so what
    /// others wrote in between is seen).
    fn refilter<G: QueryFilter>(self) -> Query<'w, Q, G, SHARED> {
        Query {
            last_run: self.last_run,
            ..Query::new(self.world)
        }
    }

    /// Checks the query's accesses once, and takes the borrow flags in the shared form. The
    /// accesses are kept only once both have succeeded: a query whose check or flags
    /// panicked (and was caught) checks again on its next run, and panics again, rather than
    /// run unchecked.
    #[track_caller]
    fn access(&mut self) {
        if self.checked {
            return;
        }
        let world = self.world;
        // Listed in place (a list built aside and moved in cost a copy per query made); a run
        // after a caught panic lists them again.
        self.accesses.clear();
        Q::access(world, &mut self.accesses);
        F::access(world, &mut self.accesses);
        self.tests_written = check_conflicts(&self.accesses);
        self.held = <Form<SHARED> as sealed::Sealed>::take(world, &self.accesses);
        self.checked = true;
    }

    /// In the exclusive form, for a query that tests the presence of a type it writes: has
    /// each written column capture its pointers now, before the run borrows anything, so
    /// that the writer forms no `&mut` to a storage the test borrows. (A shared world's
    /// columns captured theirs when it was shared.)
    fn capture_writers(&self) {
        if SHARED || !self.tests_written {
            return;
        }
        for a in &self.accesses {
            if let (Kind::Write, Some(id)) = (a.kind, a.id) {
                // SAFETY: the exclusive form has the world as `&mut World` (a writing query
                // cannot be made from `&World`), and no reference into a storage is alive:
                // items of an earlier run borrowed the query, which is borrowed again here.
                #[allow(unsafe_code)]
                unsafe {
                    self.world.components().columns[id.index()].capture_exclusive();
                }
            }
        }
    }

    /// The ticks of a run: stamps `now`, looks for changes since the state's last run (and
    /// moves it to `now`), or, without a state, since ever. Taken by the query's first run;
    /// its later runs (several `get`s, say) share them, so that they all see the changes made
    /// before the query, as one run of a system would. Nothing else writes what the query
    /// reads or filters on between its runs: it holds `&mut World`, or a read-only `&World`,
    /// or, from its first run on, the borrow flags of every type it names (a refiltered query
    /// starts afresh).
    fn ticks(&mut self) -> RunTicks {
        if let Some(ticks) = self.run_ticks {
            return ticks;
        }
        let ticks = self.first_ticks();
        self.run_ticks = Some(ticks);
        ticks
    }

    /// The ticks of the query's first run.
    fn first_ticks(&mut self) -> RunTicks {
        let captured = SHARED || self.tests_written;
        match &mut self.last_run {
            Some(last) => {
                let count = self.world.next_run_count();
                let now = Tick(count as u32);
                let since = match **last {
                    // No stamp made since the last run is old enough to have been clamped.
                    Some(last) if count - last <= u64::from(Tick::MAX_AGE) => Tick(last as u32),
                    // Never run, or so long ago that a stamp made since may have been
                    // clamped to as old as the run: every value is new (a value unchanged
                    // since is reported too; a changed one is never missed). Every stamp is
                    // at most `now`, so all of them are newer than `now + 1` (the whole circle
                    // of ticks back from `now`), however far the counter has moved or wrapped
                    // since they were made; a fixed tick such as 0 is not, once the counter
                    // has passed `MAX_AGE` or wrapped.
                    _ => Tick(now.0.wrapping_add(1)),
                };
                **last = Some(count);
                RunTicks {
                    since,
                    now,
                    captured,
                }
            }
            None => {
                let now = self.world.change_tick();
                RunTicks {
                    since: Tick(now.0.wrapping_sub(Tick::MAX_AGE + 1)),
                    now,
                    captured,
                }
            }
        }
    }

    /// Prepares a run for `'q`, without a driver, or `None` if no entity can match.
    #[track_caller]
    fn prepare(&mut self) -> Option<Run<'_, Q, F>> {
        self.access();
        let ticks = self.ticks();
        self.capture_writers();
        // SAFETY: `access` checked that the query's own elements do not conflict, and the
        // query has the use of what it declares for as long as `&mut self` is borrowed:
        // through `&mut World` (made from it), through `&World` for a read-only `Q`, or
        // through the borrow flags it now holds. Items of the run borrow `self`, so no two
        // runs overlap.
        #[allow(unsafe_code)]
        unsafe {
            Run::prepare(self.world, ticks, &self.accesses)
        }
    }

    /// Prepares a run and picks its driver.
    #[track_caller]
    fn start(&mut self) -> Option<Run<'_, Q, F>> {
        self.access();
        let ticks = self.ticks();
        self.capture_writers();
        let world: &World = self.world;
        let accesses = &self.accesses;
        // SAFETY: as in `prepare`.
        #[allow(unsafe_code)]
        let run = unsafe { Run::prepare(world, ticks, accesses)? };
        Some(run.drive(world, accesses))
    }

    /// Calls `f` with the item of every matching entity, driving from the smallest required
    /// storage. O(smallest storage × components).
    ///
    /// # Panics
    ///
    /// If `Q` asks for a component mutably twice, or mutably and shared; in the shared form,
    /// if a storage is borrowed by another query in a conflicting way; if an element or a
    /// filter names a type that is not registered and is a reference to a registered
    /// component type, or a tuple of them (`&&Pos` or `With<&Pos>` where `Pos` was meant; see
    /// [`Component`](crate::Component)); if a filter [`Added<T>`](crate::Added) or
    /// [`Changed<T>`](crate::Changed) names a type that is not tracked
    /// ([`World::track`](crate::World::track)). If `f` panics, the panic goes on after the
    /// query's borrows are released; the world stays valid.
    ///
    /// A query with no required component (only `Entity` and `Option`s) visits every live
    /// entity. Of a tracked type, each `&mut T` handed to `f` marks its value changed, written
    /// or not (see [`Changed`]): ask for `&T` to read.
    ///
    /// ```
    /// use dod_world::World;
    /// let mut world = World::new();
    /// world.spawn((1u32, 10u64));
    /// world.spawn((2u32,));
    /// let mut sum = 0;
    /// world.query::<(&u32, Option<&u64>)>().for_each(|(a, b)| sum += *a as u64 + b.copied().unwrap_or(0));
    /// assert_eq!(sum, 13);
    /// ```
    #[track_caller]
    pub fn for_each(&mut self, mut f: impl FnMut(Q::Item<'_>)) {
        let entities = self.world.entities();
        let Some(run) = self.start() else {
            return;
        };
        let (data, filter) = (&run.data, &run.filter);
        match run.driver {
            Some(Driver::Dense(indices)) if Q::walked(data) && F::walked(filter) => {
                // Every element and change filter is walked by position (the driver's
                // storage, a driving group's): a walk over slices in lockstep.
                // SAFETY: every position is aligned, and each comes once.
                #[allow(unsafe_code)]
                unsafe {
                    walk_aligned::<Q, F>(data, filter, indices, 0, &mut f)
                };
            }
            Some(Driver::Dense(indices)) => {
                for start in (0..indices.len()).step_by(ALIGNED_CHUNK) {
                    let end = (start + ALIGNED_CHUNK).min(indices.len());
                    let chunk = &indices[start..end];
                    if Q::aligned(data, indices, start..end)
                        && F::aligned(filter, indices, start..end)
                    {
                        // Every element holds the driver's entity at the same position.
                        // SAFETY: as above, for this chunk.
                        #[allow(unsafe_code)]
                        unsafe {
                            walk_aligned::<Q, F>(data, filter, chunk, start, &mut f)
                        };
                    } else {
                        for (k, &index) in chunk.iter().enumerate() {
                            visit::<Q, F>(data, filter, index, start + k, &mut f);
                        }
                    }
                }
            }
            Some(Driver::Bits(bits)) => {
                bits.for_each(|index| visit::<Q, F>(data, filter, index, usize::MAX, &mut f))
            }
            None => {
                for e in entities.iter() {
                    visit::<Q, F>(data, filter, e.index(), usize::MAX, &mut f);
                }
            }
        }
    }

    /// The items of every matching entity, as an iterator (see [`for_each`](Query::for_each),
    /// which is faster for a plain loop).
    ///
    /// # Panics
    ///
    /// As [`for_each`](Query::for_each).
    ///
    /// ```
    /// use dod_world::World;
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// world.spawn((2u32,));
    /// let total: u32 = world.query::<&u32>().iter().sum();
    /// assert_eq!(total, 3);
    /// ```
    #[track_caller]
    pub fn iter(&mut self) -> QueryIter<'_, Q, F> {
        let world = self.world;
        QueryIter {
            cursor: Cursor::new(self.start(), world),
        }
    }

    /// The item of entity `e`, or `None` if `e` is not alive or lacks a component the query
    /// requires (or fails its filter). O(components).
    ///
    /// # Panics
    ///
    /// As [`for_each`](Query::for_each), when `e` is alive: for an entity that is not, the
    /// answer is `None` before the query looks at its types.
    ///
    /// ```
    /// use dod_world::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32, 2.5f32));
    /// let f = world.spawn((3u32,));
    /// let mut q = world.query::<(&mut u32, &f32)>();
    /// if let Some((a, b)) = q.get(e) {
    ///     *a += *b as u32;
    /// }
    /// assert!(q.get(f).is_none());
    /// drop(q);
    /// assert_eq!(world.get::<u32>(e), Some(&3));
    /// ```
    #[track_caller]
    pub fn get(&mut self, e: Entity) -> Option<Q::Item<'_>> {
        let run = self.run_of(e)?;
        // SAFETY: `e` is alive; the run is fresh and has no driver (so every element looks
        // `e`'s index up), and the item borrows `self`, so no other item of it is live.
        #[allow(unsafe_code)]
        let item = unsafe { Q::fetch(&run.data, e.index(), usize::MAX) };
        item.map(Q::shrink)
    }

    /// A fresh run for looking up entity `e` alone, if `e` is alive and passes the filter
    /// (for [`get`](Query::get) and [`contains`](Query::contains)).
    #[track_caller]
    fn run_of(&mut self, e: Entity) -> Option<Run<'_, Q, F>> {
        if !self.world.entities().is_alive(e) {
            return None;
        }
        let run = self.prepare()?;
        F::matches(&run.filter, e.index(), usize::MAX).then_some(run)
    }

    /// The number of matching entities, handing nothing out: a `&mut T` of a tracked type is
    /// not marked changed. O(smallest storage).
    ///
    /// # Panics
    ///
    /// As [`for_each`](Query::for_each).
    ///
    /// ```
    /// use dod_world::{Changed, Entity, QueryState, World};
    /// let mut world = World::new();
    /// world.track::<u32>();
    /// world.spawn((1u32,));
    /// let mut changed = QueryState::<Entity, Changed<u32>>::new();
    /// assert_eq!(changed.query(&mut world).count(), 1); // added counts as changed
    /// assert_eq!(world.query::<&mut u32>().count(), 1);
    /// assert_eq!(changed.query(&mut world).count(), 0); // counting wrote nothing
    /// ```
    #[track_caller]
    pub fn count(&mut self) -> usize {
        self.iter().count()
    }

    /// Whether no entity matches, handing nothing out (as [`count`](Query::count)), and
    /// stopping at the first match. O(smallest storage) at worst.
    ///
    /// # Panics
    ///
    /// As [`for_each`](Query::for_each).
    ///
    /// ```
    /// use dod_world::World;
    /// struct Burning;
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// assert!(world.query::<&u32>().with::<Burning>().is_empty());
    /// assert!(!world.query::<&u32>().is_empty());
    /// ```
    #[track_caller]
    pub fn is_empty(&mut self) -> bool {
        !self.iter().cursor.any_left()
    }

    /// The item of the one entity that matches, or why there is not exactly one (the
    /// player, the camera). Nothing is handed out otherwise: with no match or several, a
    /// `&mut T` of a tracked type is not marked changed. O(smallest storage) at worst. The
    /// item borrows the query, as [`get`](Query::get)'s does: keep the query in a variable
    /// to keep the item past the statement.
    ///
    /// # Panics
    ///
    /// As [`for_each`](Query::for_each).
    ///
    /// ```
    /// use dod_world::{SingleError, World};
    /// struct Player;
    /// let mut world = World::new();
    /// world.spawn((10u32, Player));
    /// world.spawn((20u32,));
    /// let hp = world.query::<&mut u32>().with::<Player>().single().map(|hp| {
    ///     *hp -= 1;
    ///     *hp
    /// });
    /// assert_eq!(hp, Ok(9));
    /// assert_eq!(world.query::<&u32>().single(), Err(SingleError::SeveralMatches));
    /// ```
    #[track_caller]
    pub fn single(&mut self) -> Result<Q::Item<'_>, SingleError> {
        let world = self.world;
        Cursor::new(self.start(), world).single().map(Q::shrink)
    }

    /// Whether entity `e` is alive and matches the query (has what it requires and passes
    /// its filter), handing nothing out: a `&mut T` of a tracked type is not marked changed,
    /// as it would be by [`get`](Query::get). O(components).
    ///
    /// # Panics
    ///
    /// As [`for_each`](Query::for_each), when `e` is alive: for an entity that is not, the
    /// answer is `false` before the query looks at its types.
    ///
    /// ```
    /// use dod_world::World;
    /// struct Frozen;
    /// let mut world = World::new();
    /// let a = world.spawn((1u32,));
    /// let b = world.spawn((2u32, Frozen));
    /// let mut movable = world.query::<&mut u32>().without::<Frozen>();
    /// assert!(movable.contains(a));
    /// assert!(!movable.contains(b));
    /// drop(movable);
    /// world.despawn(a);
    /// assert!(!world.query::<&mut u32>().contains(a));
    /// ```
    #[track_caller]
    pub fn contains(&mut self, e: Entity) -> bool {
        self.run_of(e)
            .is_some_and(|run| Q::has(&run.data, e.index(), usize::MAX))
    }
}

/// How many aligned positions a filter that [rejects runs](QueryFilter::REJECTS_RUNS) rules
/// out at once: a run is skipped with one vector pass when none of it can match.
const REJECTED_RUN: usize = 16;

/// Visits the driver's entities `indices`, at the aligned positions from `start` on, in
/// order; runs of positions the filter rules out whole are skipped.
///
/// The items are fetched unmarked, and the change stamps of the positions handed out are
/// written afterwards: with no filter, as one fill of the whole slice (a vector store, where a
/// stamp per item would be a scalar store in the loop), also when `f` panics part way.
///
/// # Safety
///
/// Every position `start..start + indices.len()` is aligned for every element and filter, and
/// `indices` are the driver's entities there, each visited once.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn walk_aligned<'w, Q: QueryData, F: QueryFilter>(
    data: &Q::State<'w>,
    filter: &F::State<'w>,
    indices: &[u32],
    start: usize,
    f: &mut impl FnMut(Q::Item<'_>),
) {
    // Local copies, which the compiler keeps in registers: a stamp written through a raw
    // pointer could otherwise alias the states behind the references and force reloads.
    let (data, filter) = (*data, *filter);
    let (data, filter) = (&data, &filter);
    if F::KEEPS_ALL {
        let mut handed = Marks::<Q> {
            data,
            from: start,
            to: start,
        };
        for (k, &index) in indices.iter().enumerate() {
            handed.to = start + k + 1;
            // SAFETY: the caller's contract, position by position; the item lives only for
            // the call, and its stamp is written by `handed`.
            f(Q::shrink(unsafe {
                Q::fetch_aligned(data, index, start + k)
            }));
        }
    } else if F::REJECTS_RUNS {
        for (r, run) in indices.chunks(REJECTED_RUN).enumerate() {
            let first = start + r * REJECTED_RUN;
            // SAFETY: the run's positions are aligned (the caller's contract).
            if unsafe { F::rejects_aligned(filter, first..first + run.len()) } {
                continue;
            }
            for (k, &index) in run.iter().enumerate() {
                // SAFETY: the caller's contract, position by position.
                unsafe { filtered::<Q, F>(data, filter, index, first + k, f) };
            }
        }
    } else {
        for (k, &index) in indices.iter().enumerate() {
            // SAFETY: the caller's contract, position by position.
            unsafe { filtered::<Q, F>(data, filter, index, start + k, f) };
        }
    }
}

/// Marks the aligned positions `from..to` changed when dropped: the items handed out there.
struct Marks<'a, 'w, Q: QueryData> {
    data: &'a Q::State<'w>,
    from: usize,
    to: usize,
}

impl<Q: QueryData> Drop for Marks<'_, '_, Q> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: `from..to` are aligned positions the walk handed out.
        #[allow(unsafe_code)]
        unsafe {
            Q::mark_aligned(self.data, self.from..self.to)
        };
    }
}

/// Visits entity `index` at the aligned position `pos` if it passes the filter: mark, call
/// `f`.
///
/// # Safety
///
/// `pos` is aligned for every element and filter ([`QueryData::aligned`] and
/// [`QueryFilter::aligned`], or their `walked`), and `index` is the driver's entity there,
/// visited once.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn filtered<'w, Q: QueryData, F: QueryFilter>(
    data: &Q::State<'w>,
    filter: &F::State<'w>,
    index: u32,
    pos: usize,
    f: &mut impl FnMut(Q::Item<'_>),
) {
    // SAFETY: `pos` is aligned for the filters (the caller's contract).
    if unsafe { F::matches_aligned(filter, index, pos) } {
        // SAFETY: the caller's contract; the item lives only for the call.
        let item = unsafe {
            Q::mark_aligned(data, pos..pos + 1);
            Q::fetch_aligned(data, index, pos)
        };
        f(Q::shrink(item));
    }
}

/// Visits entity `index` (at the driver's position `pos`): filter, look up, call `f`.
#[inline(always)]
fn visit<'w, Q: QueryData, F: QueryFilter>(
    data: &Q::State<'w>,
    filter: &F::State<'w>,
    index: u32,
    pos: usize,
    f: &mut impl FnMut(Q::Item<'_>),
) {
    if !F::matches(filter, index, pos) {
        return;
    }
    // SAFETY: every index comes once from the driver (a dense slice of distinct indices of
    // live entities, or the bits of a tag); the item lives only for the call.
    #[allow(unsafe_code)]
    if let Some(item) = unsafe { Q::fetch(data, index, pos) } {
        f(Q::shrink(item));
    }
}

/// A run being walked one entity at a time.
struct Cursor<'w, Q: QueryData, F: QueryFilter> {
    run: Option<Run<'w, Q, F>>,
    walk: Walk<'w>,
}

/// Where a cursor is.
enum Walk<'w> {
    Dense { indices: &'w [u32], pos: usize },
    Bits(dod::bits::Iter<&'w BitSet>),
    All { world: &'w World, next: u32 },
    Done,
}

impl<'w, Q: QueryData, F: QueryFilter> Cursor<'w, Q, F> {
    fn new(run: Option<Run<'w, Q, F>>, world: &'w World) -> Self {
        let walk = match run.as_ref().map(|r| r.driver) {
            None => Walk::Done,
            Some(Some(Driver::Dense(indices))) => Walk::Dense { indices, pos: 0 },
            Some(Some(Driver::Bits(bits))) => Walk::Bits(bits.iter()),
            Some(None) => Walk::All { world, next: 0 },
        };
        Cursor { run, walk }
    }

    /// The next matching item.
    #[inline]
    fn next(&mut self) -> Option<Q::Item<'w>> {
        loop {
            let (index, pos) = self.advance()?;
            let run = self.run.as_ref()?;
            // SAFETY: the walk yields each index once; items borrow the cursor's run for
            // `'w`, which the iterator holds.
            #[allow(unsafe_code)]
            if let Some(item) = unsafe { Q::fetch(&run.data, index, pos) } {
                return Some(item);
            }
        }
    }

    /// How many of the remaining entities match, handing nothing out (so marking nothing
    /// changed).
    fn count(mut self) -> usize {
        let mut n = 0;
        while self.next_match().is_some() {
            n += 1;
        }
        n
    }

    /// Whether any of the remaining entities matches, handing nothing out.
    fn any_left(mut self) -> bool {
        self.next_match().is_some()
    }

    /// The next matching entity, handing nothing out: its index and driver position.
    fn next_match(&mut self) -> Option<(u32, usize)> {
        loop {
            let (index, pos) = self.advance()?;
            if Q::has(&self.run.as_ref()?.data, index, pos) {
                return Some((index, pos));
            }
        }
    }

    /// The item of the only remaining match; nothing is handed out (or marked) unless there
    /// is exactly one.
    fn single(mut self) -> Result<Q::Item<'w>, SingleError> {
        let (index, pos) = self.next_match().ok_or(SingleError::NoMatch)?;
        if self.next_match().is_some() {
            return Err(SingleError::SeveralMatches);
        }
        let run = self.run.as_ref().ok_or(SingleError::NoMatch)?;
        // SAFETY: the walk yielded `index` once and nothing of it was handed out; the item
        // borrows the run's storages for `'w`, as in `next`.
        #[allow(unsafe_code)]
        let item = unsafe { Q::fetch(&run.data, index, pos) };
        // `has` said the entity has what the query fetches.
        Ok(item.unwrap_or_else(|| unreachable!("`has` and `fetch` disagree on an entity")))
    }

    /// The next entity of the walk that passes the filter, with its position in the driver.
    #[inline]
    fn advance(&mut self) -> Option<(u32, usize)> {
        let run = self.run.as_ref()?;
        loop {
            let (index, pos) = match &mut self.walk {
                Walk::Dense { indices, pos } => {
                    let p = *pos;
                    let index = *indices.get(p)?;
                    *pos += 1;
                    (index, p)
                }
                Walk::Bits(it) => (it.next()?, usize::MAX),
                Walk::All { world, next } => {
                    let es = world.entities();
                    loop {
                        let i = *next;
                        if i as usize >= es.slot_count() {
                            return None;
                        }
                        *next += 1;
                        if es.is_occupied(i) {
                            break (i, usize::MAX);
                        }
                    }
                }
                Walk::Done => return None,
            };
            if F::matches(&run.filter, index, pos) {
                return Some((index, pos));
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.walk {
            Walk::Dense { indices, pos } => (0, Some(indices.len() - pos)),
            Walk::Done => (0, Some(0)),
            _ => (0, None),
        }
    }
}

/// An iterator over a query's items; made by [`Query::iter`].
pub struct QueryIter<'q, Q: QueryData, F: QueryFilter> {
    cursor: Cursor<'q, Q, F>,
}

impl<'q, Q: QueryData, F: QueryFilter> Iterator for QueryIter<'q, Q, F> {
    type Item = Q::Item<'q>;

    #[inline]
    fn next(&mut self) -> Option<Q::Item<'q>> {
        self.cursor.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.cursor.size_hint()
    }

    /// Counts the remaining matches without handing them out: a `&mut T` of a tracked type
    /// is not marked changed.
    fn count(self) -> usize {
        self.cursor.count()
    }
}

/// Shows the element and filter types.
///
/// ```
/// let mut world = dod_world::World::new();
/// let mut q = world.query::<&u32>();
/// assert_eq!(format!("{:?}", q.iter()), "QueryIter { data: \"&u32\", filter: \"()\", .. }");
/// ```
impl<Q: QueryData, F: QueryFilter> fmt::Debug for QueryIter<'_, Q, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_types::<Q, F>(f, "QueryIter").finish_non_exhaustive()
    }
}

impl<'q, 'w, Q: QueryData, F: QueryFilter, const SHARED: bool> IntoIterator
    for &'q mut Query<'w, Q, F, SHARED>
where
    Form<SHARED>: QueryForm,
{
    type Item = Q::Item<'q>;
    type IntoIter = QueryIter<'q, Q, F>;

    fn into_iter(self) -> QueryIter<'q, Q, F> {
        self.iter()
    }
}

/// An iterator that owns its query; made by `Query::into_iter` on a query that has the
/// world to itself (not the shared form, whose items borrow the query).
pub struct QueryIntoIter<'w, Q: QueryData, F: QueryFilter> {
    cursor: Cursor<'w, Q, F>,
}

impl<'w, Q: QueryData, F: QueryFilter> Iterator for QueryIntoIter<'w, Q, F> {
    type Item = Q::Item<'w>;

    #[inline]
    fn next(&mut self) -> Option<Q::Item<'w>> {
        self.cursor.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.cursor.size_hint()
    }

    /// Counts the remaining matches without handing them out, as [`QueryIter::count`].
    fn count(self) -> usize {
        self.cursor.count()
    }
}

impl<Q: QueryData, F: QueryFilter> fmt::Debug for QueryIntoIter<'_, Q, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_types::<Q, F>(f, "QueryIntoIter").finish_non_exhaustive()
    }
}

impl<'w, Q: QueryData, F: QueryFilter> IntoIterator for Query<'w, Q, F, false> {
    type Item = Q::Item<'w>;
    type IntoIter = QueryIntoIter<'w, Q, F>;

    /// The items, for as long as the world is borrowed (a query of the shared form has no
    /// `into_iter`: see [`SharedQuery`]).
    ///
    /// ```
    /// use dod_world::World;
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// let refs: Vec<&mut u32> = world.query::<&mut u32>().into_iter().collect();
    /// assert_eq!(refs.len(), 1);
    /// ```
    #[track_caller]
    fn into_iter(mut self) -> QueryIntoIter<'w, Q, F> {
        self.access();
        let ticks = self.ticks();
        self.capture_writers();
        let world = self.world;
        let accesses = core::mem::take(&mut self.accesses);
        // SAFETY: as in `Query::prepare`: the accesses were checked, and this form of query
        // has the world as its elements declare for all of `'w` (it was made from
        // `&'w mut World`, or from `&'w World` for a read-only `Q`), so items may live that
        // long; the query is consumed, so nothing else runs it.
        #[allow(unsafe_code)]
        let run =
            unsafe { Run::prepare(world, ticks, &accesses) }.map(|r| r.drive(world, &accesses));
        QueryIntoIter {
            cursor: Cursor::new(run, world),
        }
    }
}

#[cfg(feature = "rayon")]
mod par;
#[cfg(feature = "rayon")]
pub use par::QueryParIter;

#[cold]
#[track_caller]
fn change_filter_without_state<G>() -> ! {
    panic!(
        "{} holds a change filter, which answers relative to a query's last run: name it in \
         a QueryState (QueryState<Q, F>), which remembers one",
        public_type_name::<G>()
    )
}

/// The name of `T` as a user writes it: [`core::any::type_name`] without this crate's module
/// paths (`Changed<game::Pos>`, not `dod_world::query::filter::Changed<game::Pos>`), as every
/// public type of the crate is reached from its root. For panic messages.
pub(crate) fn public_type_name<T: ?Sized>() -> String {
    without_crate_paths(core::any::type_name::<T>())
}

/// `name` with every `dod_world::` path (the crate and its lowercase module segments) left
/// out where it starts a path, not inside another crate's name.
fn without_crate_paths(name: &str) -> String {
    const CRATE: &str = "dod_world::";
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find(CRATE) {
        out.push_str(&rest[..at]);
        let starts_path = out
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let mut tail = &rest[at + CRATE.len()..];
        if starts_path {
            while let Some(end) = tail.find("::") {
                let segment = &tail[..end];
                let is_module = !segment.is_empty()
                    && segment.chars().all(|c| c.is_ascii_lowercase() || c == '_');
                if !is_module {
                    break;
                }
                tail = &tail[end + 2..];
            }
        } else {
            out.push_str(CRATE);
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod name_tests {
    use super::{public_type_name, without_crate_paths};
    use crate::{Changed, Entity, With};

    #[test]
    fn public_names_leave_out_the_crate_paths() {
        assert_eq!(public_type_name::<Changed<u32>>(), "Changed<u32>");
        assert_eq!(
            public_type_name::<(Entity, With<u8>, Changed<u16>)>(),
            "(Entity, With<u8>, Changed<u16>)"
        );
        assert_eq!(
            without_crate_paths(
                "dod_world::query::state::QueryState<game::Pos, my_dod_world::a::B>"
            ),
            "QueryState<game::Pos, my_dod_world::a::B>"
        );
        assert_eq!(without_crate_paths("game::Pos"), "game::Pos");
    }
}
