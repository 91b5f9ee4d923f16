//! [`QueryState`]: a query that remembers when it last ran, for change filters.

use core::fmt;
use core::marker::PhantomData;

use super::{Query, QueryData, QueryFilter, SharedQuery, Types};
use crate::storage::Tick;
use crate::world::{Shared, World};

/// A query kept from run to run: it remembers the tick of its last run, so that
/// [`Added<T>`](crate::Added) and [`Changed<T>`](crate::Changed) keep the entities whose `T`
/// arrived or was written since then. Each [`query`](QueryState::query) is one run: its
/// first `for_each`, `iter`, `get`, `count`, `contains`, `is_empty`, ... moves that tick to
/// the present (so a `query(..).is_empty()` used as a guard uses the run up), and its later
/// ones
/// see the same changes (so `get` can check a list of entities one by one, and a second
/// `for_each` visits the same entities as the first). The run's own writes are not seen by
/// the next run. A `get` of an entity that is not alive starts no run: it returns `None` and
/// leaves the tick alone. A run whose closure panics part way has moved the tick all the
/// same: the changes it had not reached are not seen again by the next run.
///
/// A state that has not run for more than [`Tick::MAX_AGE`](crate::Tick::MAX_AGE) (2³⁰)
/// ticks sees every value as added and changed on its next run, as on its first: stamps that
/// old are clamped and can no longer be told apart from the run, and reporting a value that
/// did not change is better than missing one that did (a rarely run resync or autosave
/// system gets everything, never a partial delta).
///
/// Keep one per system and per world: a state belongs to the world of its first
/// [`query`](QueryState::query) or [`query_shared`](QueryState::query_shared) (made, whether
/// or not it ran), and a query on another world panics. A world that loads a save
/// (`World::load`) stays the same world for its states (the load stamps every tracked value
/// changed, so their next run sees all of them); a new world, loaded or not, needs new
/// states: assign `QueryState::new()` to a kept one (the next run is then a first run, which
/// sees every value as added and changed), or load into the world the states belong to.
///
/// ```
/// use dod_world::{Changed, Entity, QueryState, World};
///
/// struct Pos(f32);
///
/// let mut world = World::new();
/// world.track::<Pos>();
/// let es: Vec<Entity> = (0..10).map(|i| world.spawn((Pos(i as f32),))).collect();
///
/// let mut render_sync = QueryState::<(Entity, &Pos), Changed<Pos>>::new();
/// assert_eq!(render_sync.query(&mut world).count(), 10); // first run: everything is new
///
/// world.get_mut::<Pos>(es[3]).unwrap().0 += 1.0;
/// let uploaded: Vec<Entity> = render_sync.query(&mut world).iter().map(|(e, _)| e).collect();
/// assert_eq!(uploaded, [es[3]]);
///
/// // One run, several lookups: each sees what changed before the run.
/// world.get_mut::<Pos>(es[4]).unwrap().0 += 1.0;
/// world.get_mut::<Pos>(es[5]).unwrap().0 += 1.0;
/// let mut q = render_sync.query(&mut world);
/// let changed: Vec<bool> = es[3..6].iter().map(|&e| q.get(e).is_some()).collect();
/// assert_eq!(changed, [false, true, true]);
/// ```
pub struct QueryState<Q: QueryData, F: QueryFilter = ()> {
    /// `None` until the first run.
    last_run: Option<u64>,
    /// The world of the first run ([`World::instance`]): ticks of another world mean nothing
    /// here.
    world: Option<u64>,
    _types: Types<Q, F>,
}

impl<Q: QueryData, F: QueryFilter> QueryState<Q, F> {
    /// A state that has never run: its first run sees every value as added and changed.
    ///
    /// ```
    /// let q = dod_world::QueryState::<&u32>::new();
    /// assert_eq!(q.last_run().get(), 0);
    /// ```
    pub const fn new() -> Self {
        QueryState {
            last_run: None,
            world: None,
            _types: PhantomData,
        }
    }

    /// The tick of the last run (0 before the first).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let mut q = dod_world::QueryState::<&u32>::new();
    /// q.query(&mut world).count();
    /// assert!(q.last_run().get() > 0);
    /// ```
    pub fn last_run(&self) -> Tick {
        self.last_run
            .map_or(Tick::default(), |count| Tick(count as u32))
    }

    /// The query on `world`, exclusively (see [`World::query`]).
    ///
    /// # Panics
    ///
    /// If the state belongs to another world (it made a query on that world first); the
    /// query's runs panic as [`Query::for_each`] says.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32,));
    /// let mut q = dod_world::QueryState::<&mut u32>::new();
    /// q.query(&mut world).for_each(|v| *v += 1);
    /// assert_eq!(world.get::<u32>(e), Some(&2));
    /// ```
    #[track_caller]
    pub fn query<'w>(&'w mut self, world: &'w mut World) -> Query<'w, Q, F> {
        self.check_world(world.instance());
        world.prepare_tracked_run();
        world
            .query::<Q>()
            .with_filter::<F>()
            .remembering(&mut self.last_run)
    }

    /// The query on the shared form of a world, with runtime borrow checks (see
    /// [`Shared::query`]).
    ///
    /// # Panics
    ///
    /// As [`query`](QueryState::query).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.spawn((1u32,));
    /// let mut q = dod_world::QueryState::<&u32>::new();
    /// let w = world.share();
    /// assert_eq!(q.query_shared(w).count(), 1);
    /// ```
    #[track_caller]
    pub fn query_shared<'w>(&'w mut self, world: Shared<'w>) -> SharedQuery<'w, Q, F> {
        self.check_world(world.instance());
        world
            .query::<Q>()
            .with_filter::<F>()
            .remembering(&mut self.last_run)
    }
}

impl<Q: QueryData, F: QueryFilter> QueryState<Q, F> {
    /// Remembers the world of the first run; panics if this run is on another.
    #[track_caller]
    fn check_world(&mut self, instance: u64) {
        match self.world {
            None => self.world = Some(instance),
            Some(first) if first == instance => {}
            Some(_) => panic!(
                "QueryState<{}, {}> ran on another world before: its last run is a tick of \
                 that world, so changes in this one would be missed; keep one QueryState per \
                 world",
                super::public_type_name::<Q>(),
                super::public_type_name::<F>()
            ),
        }
    }
}

impl<Q: QueryData, F: QueryFilter> Default for QueryState<Q, F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<Q: QueryData, F: QueryFilter> fmt::Debug for QueryState<Q, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueryState")
            .field("last_run", &self.last_run())
            .finish()
    }
}
