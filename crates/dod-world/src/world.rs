//! [`World`]: entities, their components, and their per-entity data.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::cmp::Ordering as CmpOrdering;
use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use dod::data::{DataKey, DataStore, DataView, PathKey, Value};
use dod::slot::Tag;

use crate::bundle::Bundle;
use crate::commands::Commands;
use crate::entity::{Entities, Entity};
use crate::error::NoSuchEntity;
use crate::group::GroupError;
use crate::query::{Query, QueryData, ReadOnlyQueryData, SharedQuery};
use crate::storage::{Component, ComponentId, Components, Ctx, Tick};

/// How many worlds this process has made: a world's number among them is its
/// [`World::instance`], and picks its world id ([`world_id_of`]).
static WORLDS_MADE: AtomicU64 = AtomicU64::new(0);

/// Where this process's world ids start: drawn once, so that a world made here and one
/// loaded from a save made by another process rarely share an id (were every process to start
/// at 1, its first world would share the id of every save of another process's first world,
/// and accept that save's entities). Fixed under the fuzzer, whose runs must replay.
fn first_world_id() -> u32 {
    static START: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *START.get_or_init(|| {
        if cfg!(fuzzing) {
            return 0;
        }
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(0x7FFF);
        (h.finish() % 0x7FFF) as u32
    })
}

/// The id the world made `made`-th stamps into its entities: 1 ..= 0x7FFF, in turn from this
/// process's start, so no two worlds of a process share one until 32 767 have been made.
fn world_id_of(made: u64) -> u16 {
    let k = (made % 0x7FFF) as u32;
    ((first_world_id() + k) % 0x7FFF) as u16 + 1
}

/// The world id of a load's template ([`WorldBuilder::build_template`]) until the save's
/// allocator replaces its entities: no entity is made with it.
#[cfg(feature = "serde")]
const TEMPLATE_WORLD_ID: u16 = 1;

/// The default number of vacant entity slots kept back before one is reused.
pub const DEFAULT_MIN_FREE: u32 = 1024;

/// Entities, each with any set of components, and queries over them.
///
/// - **Entities** are generational ids ([`Entity`]) from dod's slot rules: FIFO reuse of
///   freed slots, `min_free` slots kept back ([`WorldBuilder::min_free`]), a slot retired
///   before its generation wraps. A despawned entity never resolves again, and no component of
///   it shows up under another entity (the one exception: loading a save restores its
///   allocator as a snapshot, so a handle made after that save may name an entity spawned
///   after the load).
/// - **Components** are any `'static + Send + Sync` values, one storage per type: a
///   [`dod::SparseSet`] keyed by entity index, or, for a tag (a zero-sized type with no drop
///   glue), a [`dod::BitSet`] (a tag that is tracked or in an owning group is kept in a sparse
///   set instead, since change stamps and a group's order need dense positions). Liveness is
///   checked once, where an entity enters the world's API; storages never hold a dead
///   entity's component.
/// - **Queries** ([`query`](World::query)) drive from the smallest storage they need;
///   [`share`](World::share) gives the form with runtime borrow checks that several threads
///   can query at once.
/// - **Commands** ([`Commands`]) record structural changes while queries run;
///   [`apply`](World::apply) makes them.
/// - **Per-entity data** ([`data`](World::data)): a [`DataComponent`](dod::DataComponent)
///   per entity in one [`DataStore`], freed with the entity.
///
/// # Example
///
/// ```
/// use dod_world::{Entity, World};
///
/// #[derive(Debug, PartialEq)]
/// struct Pos(f32, f32);
/// struct Vel(f32, f32);
/// struct Enemy;
///
/// let mut world = World::new();
/// let player = world.spawn((Pos(0.0, 0.0), Vel(1.0, 0.0)));
/// let orc = world.spawn((Pos(5.0, 5.0), Vel(0.0, -1.0), Enemy));
///
/// world.query::<(&mut Pos, &Vel)>().for_each(|(p, v)| {
///     p.0 += v.0;
///     p.1 += v.1;
/// });
/// assert_eq!(world.get::<Pos>(player), Some(&Pos(1.0, 0.0)));
///
/// let enemies: Vec<Entity> = world.query::<Entity>().with::<Enemy>().iter().collect();
/// assert_eq!(enemies, [orc]);
///
/// assert!(world.despawn(orc));
/// assert_eq!(world.get::<Pos>(orc), None); // stale: never another entity's data
/// ```
pub struct World {
    entities: Entities,
    components: Components,
    data: DataStore<Entity>,
    /// The change counter: writes are stamped with its low 32 bits ([`Tick`]); the whole
    /// count tells a kept query state how long ago it ran, however often the stamps wrapped.
    tick: AtomicU64,
    /// The tick at which stamps were last clamped.
    clamped_at: u32,
    /// What hooks recorded, applied after the change that ran them.
    hook_commands: Commands,
    /// Whether hook commands are being applied (they are not applied again from inside).
    in_hooks: bool,
    /// This world value among those the process made; kept by a load (unlike the world id,
    /// which a load takes from the save), so that a [`QueryState`](crate::QueryState) can
    /// tell another world from this one reloaded.
    instance: u64,
    #[cfg(feature = "serde")]
    pub(crate) saved: crate::serde::SavedTypes,
}

/// Gives `e` the components of `bundle`. With groups, a panic (a replaced value's `Drop`, a
/// hook) is caught and handed back, so that the caller can still enter `e` into the groups
/// the components given so far complete before the panic goes on: otherwise an entity could
/// hold every type of a group outside its packed prefix.
#[inline]
fn put_bundle<B: Bundle>(
    bundle: B,
    targets: &mut B::Targets<'_>,
    e: Entity,
    ctx: &mut Ctx<'_>,
    grouped: bool,
) -> std::thread::Result<()> {
    if grouped {
        catch_unwind(AssertUnwindSafe(|| bundle.put(targets, e, ctx)))
    } else {
        bundle.put(targets, e, ctx);
        Ok(())
    }
}

/// Makes a new entity alive for a spawn of a `B`. Spawns come in runs, and the slots the
/// next ones take are known now (the queue's front): the entity slot and the slots in `B`'s
/// storages of the spawn after the next start loading into the cache while this one is
/// written, so that a run of spawns does not wait for memory once per entity. (Two ahead:
/// one ahead left part of the wait, measured on a churn frame.)
#[inline]
fn alloc_prefetching<B: Bundle>(entities: &mut Entities, targets: &B::Targets<'_>) -> Entity {
    let e = entities.alloc();
    if let Some(next) = entities.reused_after_next() {
        entities.prefetch(next);
        B::prefetch(targets, next);
    }
    e
}

/// Spawns bundles of `iter` as new entities from the runs' first index on, writing each
/// storage as one run of appends, and makes them alive; returns how many, the first bundle
/// past the run if there is one, and whether `iter` ran out. Stops before a bundle that a
/// storage or the entity slots have no room for (the caller spawns it and the rest one by
/// one, as `spawn` would). A panic of the iterator leaves the
/// world with the entities spawned before it.
fn spawn_run<B: Bundle>(
    entities: &mut Entities,
    mut runs: B::Runs<'_>,
    iter: &mut impl Iterator<Item = B>,
) -> (u32, Option<B>, bool) {
    /// Makes the entities whose components the runs hold alive, also when unwinding.
    struct Spawned<'e> {
        entities: &'e mut Entities,
        n: usize,
    }
    impl Drop for Spawned<'_> {
        fn drop(&mut self) {
            self.entities.push_new(self.n);
        }
    }
    // Up to the limit, every storage takes every bundle without growing its values and the
    // entity slots take every entity without growing (the batch reserved both for the
    // iterator's size hint), and the dense indices are reserved now, before anything is
    // pushed: no push can fail part way through a bundle, and making the entities alive
    // allocates nothing. (The runs' commits may still make sparse pages.) Bundles past the
    // limit are spawned one by one.
    let limit = B::runs_room(&runs).min(entities.new_slots_reserved());
    B::reserve_runs(&mut runs, limit);
    let mut spawned = Spawned { entities, n: 0 };
    let mut done = false;
    while spawned.n < limit {
        let Some(bundle) = iter.next() else {
            done = true;
            break;
        };
        bundle.push_runs(&mut runs);
        spawned.n += 1;
    }
    // At the limit: whether the iterator is done, or the bundle past the limit, which the
    // caller spawns first.
    let mut past = None;
    if !done {
        match iter.next() {
            None => done = true,
            Some(bundle) => past = Some(bundle),
        }
    }
    // At most `MAX_SLOTS - first` entities, so the count fits a u32.
    (spawned.n as u32, past, done)
}

/// How a builder declares a group on the world it builds.
type GroupFn = fn(&mut World) -> Result<(), GroupError>;

/// Settings for a new [`World`]; made by [`World::builder`].
///
/// ```
/// let world = dod_world::World::builder().min_free(64).build();
/// assert_eq!(world.entities().min_free(), 64);
/// ```
#[derive(Clone, Debug)]
pub struct WorldBuilder {
    min_free: u32,
    groups: Vec<GroupFn>,
}

impl WorldBuilder {
    /// Keeps at least `n` vacant entity slots back before one is reused (keep N free;
    /// default [`DEFAULT_MIN_FREE`]). A freed index then stays unused for at least `n` more
    /// despawns, and the generations spread over more slots.
    ///
    /// ```
    /// let mut world = dod_world::World::builder().min_free(0).build();
    /// let a = world.spawn(());
    /// world.despawn(a);
    /// assert_eq!(world.spawn(()).index(), a.index()); // reused at once
    /// ```
    pub fn min_free(mut self, n: u32) -> Self {
        self.min_free = n;
        self
    }

    /// Declares an owning group of the component types `G` (a tuple of 2 to 12 types): see
    /// [`World::group`].
    ///
    /// ```
    /// struct Pos(f32);
    /// struct Vel(f32);
    /// let world = dod_world::World::builder().group::<(Pos, Vel)>().build();
    /// assert_eq!(world.group_len::<Pos>(), Some(0));
    /// ```
    pub fn group<G: Bundle>(mut self) -> Self {
        self.groups.push(|w| w.group::<G>());
        self
    }

    /// The world, or the error of a group that cannot be made (a type in two groups).
    ///
    /// ```
    /// struct Pos(f32);
    /// struct Vel(f32);
    /// struct Acc(f32);
    /// let err = dod_world::World::builder()
    ///     .group::<(Pos, Vel)>()
    ///     .group::<(Vel, Acc)>()
    ///     .try_build()
    ///     .unwrap_err();
    /// assert!(err.to_string().contains("Vel"));
    /// ```
    pub fn try_build(self) -> Result<World, GroupError> {
        let made = WORLDS_MADE.fetch_add(1, Ordering::Relaxed);
        self.try_build_as(world_id_of(made), made)
    }

    /// The world, with `world_id` for its entities and `instance` for its number among the
    /// worlds made (see [`World::instance`]).
    fn try_build_as(self, world_id: u16, instance: u64) -> Result<World, GroupError> {
        let mut world = World {
            entities: Entities::new(world_id, self.min_free),
            components: Components::default(),
            data: DataStore::new(),
            tick: AtomicU64::new(1),
            clamped_at: 1,
            hook_commands: Commands::new(),
            in_hooks: false,
            instance,
            #[cfg(feature = "serde")]
            saved: Default::default(),
        };
        for g in self.groups {
            g(&mut world)?;
        }
        Ok(world)
    }

    /// The world.
    ///
    /// # Panics
    ///
    /// If a group cannot be made (see [`try_build`](WorldBuilder::try_build)).
    ///
    /// ```
    /// let world = dod_world::World::builder().build();
    /// assert!(world.is_empty());
    /// ```
    #[track_caller]
    pub fn build(self) -> World {
        match self.try_build() {
            Ok(w) => w,
            Err(e) => panic!("WorldBuilder::build: {e}"),
        }
    }

    /// The template a load fills, with `saved` registered for saving (and as components).
    /// It draws neither a world id nor an instance number: the save's allocator replaces its
    /// entities (and their id), and its parts move into the world loaded into, which keeps
    /// its own number. Drawing them would use up an id per load: after at most 32 766 loads
    /// (fewer when other worlds were made in between), the next world made would share the id
    /// of one still alive and accept its entities.
    #[cfg(feature = "serde")]
    pub(crate) fn build_template(self, saved: crate::serde::SavedTypes) -> World {
        debug_assert!(
            self.groups.is_empty(),
            "a load's template declares no group"
        );
        let mut world = match self.try_build_as(TEMPLATE_WORLD_ID, u64::MAX) {
            Ok(w) => w,
            Err(_) => unreachable!("a template declares no group"),
        };
        world.saved = saved;
        world.saved.register_all(&mut world.components);
        world
    }
}

impl Default for World {
    fn default() -> Self {
        World::new()
    }
}

impl World {
    /// An empty world with the default settings. Allocates nothing.
    ///
    /// ```
    /// let world = dod_world::World::new();
    /// assert_eq!(world.len(), 0);
    /// ```
    pub fn new() -> Self {
        World::builder().build()
    }

    /// Settings for a new world.
    ///
    /// ```
    /// let world = dod_world::World::builder().min_free(8).build();
    /// assert_eq!(world.entities().min_free(), 8);
    /// ```
    pub fn builder() -> WorldBuilder {
        WorldBuilder {
            min_free: DEFAULT_MIN_FREE,
            groups: Vec::new(),
        }
    }

    /// This world value among those the process made (a load keeps it). For
    /// [`QueryState`](crate::QueryState)'s check that it runs on one world.
    pub(crate) fn instance(&self) -> u64 {
        self.instance
    }

    /// The entity allocator: liveness, counts, and [`reserve`](Entities::reserve).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// assert!(world.entities().is_alive(e));
    /// ```
    #[inline]
    pub fn entities(&self) -> &Entities {
        &self.entities
    }

    #[inline]
    pub(crate) fn components(&self) -> &Components {
        &self.components
    }

    /// Registers the component type `T` (done on first use anyway) and returns its id.
    /// O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let id = world.register::<[f32; 3]>();
    /// assert_eq!(world.register::<[f32; 3]>(), id);
    /// ```
    pub fn register<T: Component>(&mut self) -> ComponentId {
        self.components.register::<T>()
    }

    /// The number of live entities. O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.spawn(());
    /// assert_eq!(world.len(), 1);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether no entity is alive. O(1).
    ///
    /// ```
    /// assert!(dod_world::World::new().is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// Whether `e` is alive in this world. O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// assert!(world.is_alive(e));
    /// ```
    #[inline]
    pub fn is_alive(&self, e: Entity) -> bool {
        self.entities.is_alive(e)
    }

    /// Names an entity that becomes alive (with no component) at the next flush, from `&self`
    /// and from several threads at once; see [`Entities::reserve`].
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.reserve_entity();
    /// world.insert(e, (5u8,)).unwrap(); // flushes first, so `e` is alive
    /// assert_eq!(world.get::<u8>(e), Some(&5));
    /// ```
    #[inline]
    #[track_caller]
    pub fn reserve_entity(&self) -> Entity {
        self.entities.reserve()
    }

    /// Makes every reserved entity alive, with no component, and applies the commands that
    /// hooks left waiting (see [`on_insert`](World::on_insert)). Every structural change does it
    /// first; call it to make reserved entities visible to `&self` methods, or before saving.
    /// O(reserved), plus the waiting commands.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.reserve_entity();
    /// world.flush();
    /// assert!(world.is_alive(e));
    /// ```
    #[inline]
    pub fn flush(&mut self) {
        if self.entities.has_reserved() || !self.hook_commands.is_empty() {
            self.flush_slow();
        }
    }

    #[cold]
    #[inline(never)]
    fn flush_slow(&mut self) {
        self.entities.flush();
        if !self.hook_commands.is_empty() {
            self.run_hooks();
        }
    }

    /// Applies what hooks recorded, until they record nothing more.
    ///
    /// If a command or a hook it runs panics, the hook commands not yet applied are dropped
    /// unmade (as [`apply`](World::apply) drops the commands after a panicking one) and hooks
    /// are applied again from the next change on.
    ///
    /// # Panics
    ///
    /// If hooks keep recording for more rounds than [`hook_round_limit`] allows for the
    /// entities alive when they started (hooks that feed each other).
    #[cold]
    #[track_caller]
    fn run_hooks(&mut self) {
        /// Re-arms the hooks when the loop ends; after a panic, drops what is left (when the
        /// loop ends normally nothing is).
        struct Rearm<'a>(&'a mut World);
        impl Drop for Rearm<'_> {
            fn drop(&mut self) {
                self.0.hook_commands.clear();
                self.0.in_hooks = false;
            }
        }
        if self.in_hooks {
            return;
        }
        self.in_hooks = true;
        let guard = Rearm(self);
        let world = &mut *guard.0;
        let limit = hook_round_limit(world.len());
        let mut rounds = 0;
        while !world.hook_commands.is_empty() {
            rounds += 1;
            if rounds > limit {
                hooks_feed_each_other(limit);
            }
            let mut batch = core::mem::take(&mut world.hook_commands);
            world.entities.flush();
            batch.apply_to(world);
        }
    }

    /// Whether the world is applying the commands hooks recorded (a command it is making
    /// may be a closure of [`Commands::push`]).
    #[cfg(feature = "serde")]
    pub(crate) fn in_hook_round(&self) -> bool {
        self.in_hooks
    }

    /// The parts a [`ViewMut`](crate::ViewMut) borrows.
    pub(crate) fn view_parts(&mut self) -> (&Entities, &mut Components, &mut Commands) {
        (
            &self.entities,
            &mut self.components,
            &mut self.hook_commands,
        )
    }

    /// A context for a structural change: the present tick and the hook buffer.
    #[inline]
    fn ctx_parts(&mut self) -> (&mut Entities, &mut Components, Ctx<'_>) {
        let now = Tick(*self.tick.get_mut() as u32);
        (
            &mut self.entities,
            &mut self.components,
            Ctx {
                now,
                commands: &mut self.hook_commands,
            },
        )
    }

    /// Spawns an entity with the components of `bundle` and returns it. O(components),
    /// amortised.
    ///
    /// # Panics
    ///
    /// If `bundle` holds a type twice (before anything changes), or if every entity index is
    /// in use. If an insert hook panics: see [`on_insert`](World::on_insert).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32, "name"));
    /// assert_eq!(world.get::<u32>(e), Some(&1));
    /// ```
    #[track_caller]
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> Entity {
        crate::bundle::check_distinct::<B>();
        self.flush();
        let (entities, components, mut ctx) = self.ctx_parts();
        let grouped = components.has_groups();
        let (ids, mut targets) = B::targets(components);
        let e = alloc_prefetching::<B>(entities, &targets);
        let put = put_bundle(bundle, &mut targets, e, &mut ctx, grouped);
        drop((targets, ctx));
        if grouped {
            components.enter_groups(e.index(), ids.as_ref());
        }
        if let Err(p) = put {
            resume_unwind(p);
        }
        self.after_change();
        e
    }

    /// Applies what hooks recorded during a change.
    #[inline]
    fn after_change(&mut self) {
        if !self.hook_commands.is_empty() {
            self.run_hooks();
        }
    }

    /// Spawns an entity per bundle of `iter`, reserving room once for the iterator's size
    /// hint, and returns the entities in order. O(n × components).
    ///
    /// When the entities take new slots (no freed slot waits beyond keep-N-free) and no
    /// storage of `B` has hooks, change tracking, an owning group or tags in bits, the whole
    /// batch is written when this is called: as one run of appends per storage (as a bulk
    /// insert of an archetype or of shipyard does) for as many bundles as the room reserved
    /// for the size hint holds, the rest one at a time; the returned iterator only names the
    /// entities. With a type of an owning group or with an insert hook, every bundle is
    /// spawned when this is called, one at a time as [`spawn`](World::spawn) does (each
    /// entity enters its groups, and its hooks' commands are applied, before the next).
    /// Otherwise bundles are spawned as the returned iterator is walked.
    /// Either way, bundles the iterator does not reach are spawned when it is dropped, unless
    /// a panic drops it: then they are dropped unspawned (an iterator that panicked is not
    /// called again), and the world holds exactly the entities spawned before.
    ///
    /// Like `Vec::extend`, it trusts the lower bound of the iterator's size hint: a bound far
    /// above the bundles it yields reserves that much memory (kept until
    /// [`shrink_to_fit`](World::shrink_to_fit)).
    ///
    /// # Panics
    ///
    /// As [`spawn`](World::spawn); on capacity overflow, for a size hint's lower bound past
    /// what a `Vec` can hold (and allocation failure aborts, as for a `Vec`).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let es: Vec<_> = world.spawn_batch((0..100u32).map(|i| (i, i as f32))).collect();
    /// assert_eq!(es.len(), 100);
    /// assert_eq!(world.get::<f32>(es[7]), Some(&7.0));
    /// world.spawn_batch((0..10u32).map(|i| (i,))); // dropped at once: all ten spawned
    /// assert_eq!(world.len(), 110);
    /// ```
    #[track_caller]
    pub fn spawn_batch<B, I>(&mut self, iter: I) -> SpawnBatch<'_, I::IntoIter, B>
    where
        B: Bundle,
        I: IntoIterator<Item = B>,
    {
        crate::bundle::check_distinct::<B>();
        self.flush();
        let iter = iter.into_iter();
        let (lower, _) = iter.size_hint();
        let one_by_one = {
            let (ids, _) = B::targets(&mut self.components);
            ids.as_ref().iter().any(|id| {
                let column = &self.components.columns[id.index()];
                column.group.is_some() || column.any().has_insert_hook()
            })
        };
        if one_by_one {
            // Each entity enters its groups as it is spawned, and the commands of its insert
            // hooks are applied right after it, as `spawn` does: both need the whole world.
            let es: Vec<Entity> = iter.map(|b| self.spawn(b)).collect();
            return SpawnBatch {
                inner: Batch::Done(es.into_iter()),
            };
        }
        let mut iter = iter;
        let ran = {
            let (entities, components, _) = self.ctx_parts();
            let (_, mut targets) = B::targets(components);
            B::reserve(&mut targets, lower);
            entities.reserve_capacity(lower);
            let tag = Entities::fresh_tag(entities.world_id());
            entities.new_run_start().and_then(|first| {
                let runs = B::runs(&mut targets, tag.to_key(first))?;
                let (n, past, done) = spawn_run::<B>(entities, runs, &mut iter);
                Some((first, n, past, done, tag))
            })
        };
        if let Some((first, n, past, done, tag)) = ran {
            let run = Batch::Run {
                next: first,
                end: first + n,
                tag,
            };
            if done {
                return SpawnBatch { inner: run };
            }
            // The run filled up (every new index is taken, or a storage is full): the rest
            // are spawned one at a time, reusing freed slots as `spawn` does.
            let mut es: Vec<Entity> = SpawnBatch::<I::IntoIter, B> { inner: run }.collect();
            es.extend(past.map(|b| self.spawn(b)));
            es.extend(iter.map(|b| self.spawn(b)));
            return SpawnBatch {
                inner: Batch::Done(es.into_iter()),
            };
        }
        let (entities, components, ctx) = self.ctx_parts();
        let (_, targets) = B::targets(components);
        SpawnBatch {
            inner: Batch::Lazy {
                entities,
                targets,
                ctx,
                iter,
            },
        }
    }

    /// Despawns `e`: drops every component and its data, and makes `e` stale for good.
    /// `false` (and nothing changes) if `e` is not alive. O(registered component types).
    ///
    /// If a component's `Drop` panics, the others are still dropped and `e` still despawned;
    /// then the panic goes on.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32,));
    /// assert!(world.despawn(e));
    /// assert!(!world.despawn(e));
    /// assert_eq!(world.get::<u32>(e), None);
    /// ```
    pub fn despawn(&mut self, e: Entity) -> bool {
        // The entity's slot in every storage starts loading before its own slot is checked,
        // so that a despawn waits for those misses together rather than one after another (a
        // despawned entity is usually one no system touched lately).
        self.prefetch_slots(e);
        self.despawn_loaded(e)
    }

    /// Despawns every entity of `entities` that is alive, and returns how many it despawned
    /// (stale and repeated entities are skipped). The same as calling
    /// [`despawn`](World::despawn) for each in turn, faster for many: while it despawns one
    /// entity, the storage slots of the next few are already loading. O(entities × registered
    /// component types).
    ///
    /// The iterator is read up to 8 entities ahead of the despawns, and not again once it has
    /// returned `None`. If a component's `Drop` or a remove hook panics, the entity it belongs
    /// to is still despawned, the entities after it are not (those read ahead included), and
    /// the panic goes on; so do they if the iterator panics.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let es: Vec<_> = world.spawn_batch((0..10u32).map(|i| (i,))).collect();
    /// assert_eq!(world.despawn_batch(es[..4].iter().copied()), 4);
    /// assert_eq!(world.despawn_batch([es[0], es[5]]), 1); // es[0] was despawned already
    /// assert_eq!(world.len(), 5);
    /// ```
    pub fn despawn_batch(&mut self, entities: impl IntoIterator<Item = Entity>) -> usize {
        /// How many entities ahead the slots are loading: enough to cover a miss, few enough
        /// that what it loaded is still cached when its turn comes.
        const AHEAD: usize = 8;
        // Fused: a `None` ends the batch, as it ends a loop of `despawn`.
        let mut iter = entities.into_iter().fuse();
        // Entity `k` of the iterator waits in `ahead[k % AHEAD]` from step `k - AHEAD` (when
        // it is loaded) to step `k` (when it is despawned).
        let mut ahead = [None::<Entity>; AHEAD];
        for slot in &mut ahead {
            let Some(e) = iter.next() else { break };
            self.prefetch_slots(e);
            *slot = Some(e);
        }
        let mut despawned = 0;
        for k in 0.. {
            let slot = &mut ahead[k % AHEAD];
            let Some(e) = slot.take() else { break };
            if let Some(next) = iter.next() {
                *slot = Some(next);
                self.prefetch_slots(next);
            }
            // (The first `AHEAD / 2` entities get no value prefetch: their slots are only
            // starting to load.)
            if let Some(half) = ahead[(k + AHEAD / 2) % AHEAD] {
                self.prefetch_values(half, AHEAD / 2);
            }
            despawned += usize::from(self.despawn_loaded(e));
        }
        despawned
    }

    /// Starts loading entity `e`'s slot in every storage into the cache.
    #[inline]
    fn prefetch_slots(&self, e: Entity) {
        self.entities.prefetch(e.index());
        for column in &self.components.columns {
            column.any().prefetch(e.index());
        }
    }

    /// Starts loading entity `e`'s values into the cache, once its slots are loading, and
    /// the slots of the entities that removals `lag` despawns from now will move.
    #[inline]
    fn prefetch_values(&self, e: Entity, lag: usize) {
        for column in &self.components.columns {
            column.any().prefetch_value(e.index(), lag);
        }
    }

    /// [`despawn`](World::despawn) once the entity's slots are loading.
    fn despawn_loaded(&mut self, e: Entity) -> bool {
        self.flush();
        if !self.entities.free(e) {
            return false;
        }
        let (_, components, mut ctx) = self.ctx_parts();
        if components.has_groups() {
            components.leave_all_groups(e.index());
        }
        let mut panic = None;
        for column in &mut components.columns {
            if let Err(p) = column.any_mut().remove_entity(e, &mut ctx) {
                panic.get_or_insert(p);
            }
        }
        // Most worlds keep no per-entity data: then a despawn does not touch its table.
        if !self.data.is_empty() {
            self.data.remove(e);
        }
        if let Some(p) = panic {
            resume_unwind(p);
        }
        self.after_change();
        true
    }

    /// Despawns every entity. O(entities + components).
    ///
    /// Remove hooks run for every value, and what they record is applied after, as for any
    /// change: a hook that spawns (a "drop loot on death" hook, say) leaves its entities in
    /// the cleared world. Take such hooks away first
    /// ([`remove_hooks`](World::remove_hooks)) for a world that ends empty.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32,));
    /// world.clear();
    /// assert!(world.is_empty() && !world.is_alive(e));
    ///
    /// struct Loot;
    /// world.on_remove::<u32>(|_, _, commands| commands.spawn_unnamed((Loot,)));
    /// world.spawn((2u32,));
    /// world.clear();
    /// assert_eq!(world.len(), 1); // the loot the hook spawned
    /// ```
    pub fn clear(&mut self) {
        self.flush();
        let (entities, components, mut ctx) = self.ctx_parts();
        entities.clear();
        components.clear_groups();
        let mut panic = None;
        for column in &mut components.columns {
            let storage = column.any_mut();
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| storage.clear(entities, &mut ctx))) {
                panic.get_or_insert(p);
            }
        }
        self.data.clear();
        if let Some(p) = panic {
            resume_unwind(p);
        }
        self.after_change();
    }

    /// Gives `e` the components of `bundle`, replacing (and dropping) the ones it has.
    /// O(components).
    ///
    /// If dropping a replaced value panics, the components of the bundle before it and its
    /// own new value are in (the new value without its insert hook call), and the ones after
    /// it are dropped, not given; the world stays valid.
    ///
    /// # Errors
    ///
    /// [`NoSuchEntity`] if `e` is not alive; the bundle is dropped.
    ///
    /// # Panics
    ///
    /// If `bundle` holds a type twice, whether or not `e` is alive. If an insert hook, or the
    /// remove hook of a replaced value, panics: see [`on_insert`](World::on_insert).
    ///
    /// A bundle is a tuple, of one component too: `insert(e, (Frozen,))`.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32,));
    /// world.insert(e, (2u32, 'x')).unwrap();
    /// assert_eq!((world.get::<u32>(e), world.get::<char>(e)), (Some(&2), Some(&'x')));
    /// world.despawn(e);
    /// assert!(world.insert(e, (3u32,)).is_err());
    /// ```
    #[track_caller]
    #[inline]
    pub fn insert<B: Bundle>(&mut self, e: Entity, bundle: B) -> Result<(), NoSuchEntity> {
        crate::bundle::check_distinct::<B>();
        self.flush();
        if !self.entities.is_alive(e) {
            return Err(self.entities.not_alive(e));
        }
        // No group to keep and only plain storages (no bits, stamps or hooks): the sets' own
        // work, inline, with no context to make and no hook to run after.
        let bundle = if self.components.has_groups() {
            bundle
        } else {
            let (_, mut targets) = B::targets(&mut self.components);
            match bundle.put_plain(&mut targets, e) {
                Ok(()) => return Ok(()),
                Err(bundle) => bundle,
            }
        };
        self.insert_special(e, bundle);
        Ok(())
    }

    /// [`insert`](World::insert) of `bundle` into a live `e`, in a world with groups or into
    /// storages with bits, stamps or hooks.
    #[inline(never)]
    #[track_caller]
    fn insert_special<B: Bundle>(&mut self, e: Entity, bundle: B) {
        let (_, components, mut ctx) = self.ctx_parts();
        let grouped = components.has_groups();
        let (ids, mut targets) = B::targets(components);
        let put = put_bundle(bundle, &mut targets, e, &mut ctx, grouped);
        drop((targets, ctx));
        if grouped {
            components.enter_groups(e.index(), ids.as_ref());
        }
        if let Err(p) = put {
            resume_unwind(p);
        }
        self.after_change();
    }

    /// Takes `e`'s `T` out, or `None` if `e` is not alive or has none. O(1); O(owned
    /// storages) when `T` is in an owning group.
    ///
    /// # Panics
    ///
    /// If `T` is not registered and is a reference to a registered component type, or a
    /// tuple of them: `get::<&Pos>` where `get::<Pos>` was meant (see
    /// [`Component`]). If `T`'s remove hook panics: the value is out and dropped (see
    /// [`on_remove`](World::on_remove)).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32, 'x'));
    /// assert_eq!(world.remove::<u32>(e), Some(1));
    /// assert_eq!(world.remove::<u32>(e), None);
    /// assert_eq!(world.get::<char>(e), Some(&'x'));
    /// ```
    #[inline]
    pub fn remove<T: Component>(&mut self, e: Entity) -> Option<T> {
        self.flush();
        // The type is looked up first, so that a misspelled one panics for any entity.
        let id = self.components.id::<T>()?;
        if !self.entities.is_alive(e) {
            return None;
        }
        // A plain storage (no bits, stamps or hooks) outside any group: the set's own work,
        // inline, with no context to make and no hook to run after. In a group, the same out
        // of line, after the entity leaves the group.
        let column = &mut self.components.columns[id.index()];
        let grouped = column.group.is_some();
        // SAFETY: `id` is `T`'s, so its column holds a `Storage<T>`.
        #[allow(unsafe_code)]
        let storage = unsafe { column.storage_of_mut_unchecked::<T>() };
        if !grouped {
            if let Some(taken) = storage.remove_plain(e) {
                return taken;
            }
        } else if storage.is_plain() {
            return self.remove_grouped_plain(e, id);
        }
        self.remove_special(e, id)
    }

    /// [`remove`](World::remove) of a live `e`'s `T` (of id `id`) from a storage of an owning
    /// group that is plain (no bits, stamps or hooks: the caller checked): out of line, as
    /// the group's move is.
    #[inline(never)]
    fn remove_grouped_plain<T: Component>(&mut self, e: Entity, id: ComponentId) -> Option<T> {
        self.components.leave_group_of(e.index(), id);
        // SAFETY: `id` is `T`'s, so its column holds a `Storage<T>`.
        #[allow(unsafe_code)]
        let storage =
            unsafe { self.components.columns[id.index()].storage_of_mut_unchecked::<T>() };
        storage.remove_left_group(e)
    }

    /// [`remove`](World::remove) of a live `e`'s `T` (of id `id`) from a storage that has
    /// bits, stamps or hooks.
    #[inline(never)]
    fn remove_special<T: Component>(&mut self, e: Entity, id: ComponentId) -> Option<T> {
        let (_, components, mut ctx) = self.ctx_parts();
        components.leave_group_of(e.index(), id);
        // SAFETY: `id` is `T`'s, so its column holds a `Storage<T>`.
        #[allow(unsafe_code)]
        let storage = unsafe { components.columns[id.index()].storage_of_mut_unchecked::<T>() };
        let value = storage.remove(e, &mut ctx);
        self.after_change();
        value
    }

    /// Takes every component of bundle `B` out of `e` and returns them, if `e` is alive and
    /// has them all; otherwise `None`, and nothing is removed. O(components of `B`).
    ///
    /// To remove whichever of several types `e` has, call [`remove`](World::remove) per
    /// type.
    ///
    /// # Panics
    ///
    /// If `B` holds a type twice (whether or not `e` is alive), or one of its types is not
    /// registered and is a reference to a registered component type, or a tuple of them
    /// (see [`Component`]). If a remove hook panics: the bundle's components before the
    /// hook's and its own are dropped, the later ones stay (see
    /// [`on_remove`](World::on_remove)).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32, 'x', 2.5f32));
    /// assert_eq!(world.take::<(u32, char)>(e), Some((1, 'x')));
    /// assert_eq!(world.take::<(f32, char)>(e), None); // no char left: nothing taken
    /// assert_eq!(world.get::<f32>(e), Some(&2.5));
    /// ```
    #[track_caller]
    pub fn take<B: Bundle>(&mut self, e: Entity) -> Option<B> {
        crate::bundle::check_distinct::<B>();
        self.flush();
        // The types are looked up first, so that a misspelled one panics for any entity;
        // an unregistered type takes nothing.
        let ids = B::look_up(&self.components)?;
        if !self.entities.is_alive(e) {
            return None;
        }
        let taken = {
            let (_, components, mut ctx) = self.ctx_parts();
            B::take(components, ids, e, &mut ctx)
        };
        self.after_change();
        taken
    }

    /// `e`'s `T`, or `None` if `e` is not alive (stale, of another world) or has none. O(1).
    ///
    /// # Panics
    ///
    /// If `T` is not registered and is a reference to a registered component type, or a
    /// tuple of them: `get::<&Pos>` where `get::<Pos>` was meant (see
    /// [`Component`]).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32,));
    /// assert_eq!(world.get::<u32>(e), Some(&1));
    /// assert_eq!(world.get::<u8>(e), None);
    /// ```
    #[inline]
    pub fn get<T: Component>(&self, e: Entity) -> Option<&T> {
        self.components.storage::<T>()?.get_of(e, &self.entities)
    }

    /// `e`'s `T`, mutably, or `None`. O(1).
    ///
    /// For a tracked `T` ([`track`](World::track)), handing the value out marks it changed,
    /// written or not (see [`Changed`](crate::Changed)).
    ///
    /// # Panics
    ///
    /// If `T` is not registered and is a reference to a registered component type, or a
    /// tuple of them: `&Pos` where `Pos` was meant (see [`Component`](crate::Component)).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32,));
    /// *world.get_mut::<u32>(e).unwrap() += 1;
    /// assert_eq!(world.get::<u32>(e), Some(&2));
    /// ```
    #[inline]
    pub fn get_mut<T: Component>(&mut self, e: Entity) -> Option<&mut T> {
        let now = self.change_tick();
        self.components
            .storage_mut::<T>()?
            .get_mut_of(e, &self.entities, now)
    }

    /// Mutable references to the `T`s of `N` entities at once, or `None` if one of them is
    /// not alive or has no `T`, or two are the same entity. Each is marked changed, as by
    /// [`get_mut`](World::get_mut). O(N²) for the distinctness check.
    ///
    /// # Panics
    ///
    /// If `T` is not registered and is a reference to a registered component type, or a
    /// tuple of them: `&Pos` where `Pos` was meant (see [`Component`](crate::Component)).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let a = world.spawn((10u32,));
    /// let b = world.spawn((20u32,));
    /// if let Some([x, y]) = world.get_disjoint_mut::<u32, 2>([a, b]) {
    ///     core::mem::swap(x, y);
    /// }
    /// assert_eq!((world.get::<u32>(a), world.get::<u32>(b)), (Some(&20), Some(&10)));
    /// assert!(world.get_disjoint_mut::<u32, 2>([a, a]).is_none());
    /// ```
    pub fn get_disjoint_mut<T: Component, const N: usize>(
        &mut self,
        entities: [Entity; N],
    ) -> Option<[&mut T; N]> {
        let now = self.change_tick();
        // The type is looked up first, so that a misspelled one panics for any entities.
        let storage = self.components.storage_mut::<T>()?;
        if !entities.iter().all(|&e| self.entities.is_alive(e)) {
            return None;
        }
        // Live entities are equal iff their indices are.
        storage.get_disjoint_mut(entities.map(Entity::index), now)
    }

    /// Whether `e` is alive and has a `T`. O(1).
    ///
    /// # Panics
    ///
    /// As [`get`](World::get), for a reference to or a tuple of held component types.
    ///
    /// ```
    /// struct Frozen;
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((Frozen,));
    /// assert!(world.has::<Frozen>(e));
    /// assert!(!world.has::<u32>(e));
    /// ```
    #[inline]
    pub fn has<T: Component>(&self, e: Entity) -> bool {
        self.components
            .storage::<T>()
            .is_some_and(|s| s.contains_of(e, &self.entities))
    }

    /// A read-only view of `e`.
    ///
    /// # Errors
    ///
    /// [`NoSuchEntity`] if `e` is not alive.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32,));
    /// let view = world.entity(e).unwrap();
    /// assert_eq!(view.get::<u32>(), Some(&1));
    /// ```
    pub fn entity(&self, e: Entity) -> Result<EntityRef<'_>, NoSuchEntity> {
        if self.entities.is_alive(e) {
            Ok(EntityRef { world: self, e })
        } else {
            Err(self.entities.not_alive(e))
        }
    }

    /// A mutable view of `e`.
    ///
    /// # Errors
    ///
    /// [`NoSuchEntity`] if `e` is not alive.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32,));
    /// let mut view = world.entity_mut(e).unwrap();
    /// *view.get_mut::<u32>().unwrap() = 5;
    /// view.insert(('c',));
    /// assert_eq!(world.get::<char>(e), Some(&'c'));
    /// ```
    pub fn entity_mut(&mut self, e: Entity) -> Result<EntityMut<'_>, NoSuchEntity> {
        self.flush();
        if self.entities.is_alive(e) {
            Ok(EntityMut { world: self, e })
        } else {
            Err(self.entities.not_alive(e))
        }
    }

    /// A query over the world: see [`Query`]. Exclusive (it borrows the world mutably), so
    /// it needs no runtime borrow checks.
    ///
    /// It [`flush`](World::flush)es first, as structural changes do: reserved entities become
    /// alive (so [`len`](World::len) may grow), and the commands hooks left waiting are
    /// applied ([`share`](World::share) does too). [`query_ref`](World::query_ref), on
    /// `&self`, leaves both as they are.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.spawn((1u32, 2u64));
    /// world.query::<(&mut u32, &u64)>().for_each(|(a, b)| *a += *b as u32);
    /// assert_eq!(world.query::<&u32>().iter().next(), Some(&3));
    /// ```
    pub fn query<Q: QueryData>(&mut self) -> Query<'_, Q> {
        self.flush();
        Query::new(self)
    }

    /// The change counter now: writes from now on are stamped with it. See [`Tick`].
    ///
    /// ```
    /// let world = dod_world::World::new();
    /// assert_eq!(world.change_tick().get(), 1);
    /// ```
    #[inline]
    pub fn change_tick(&self) -> Tick {
        Tick(self.tick.load(Ordering::Relaxed) as u32)
    }

    /// The whole count of a remembered run ([`QueryState`](crate::QueryState)), moving the
    /// counter on so that later writes are newer than it.
    #[inline]
    pub(crate) fn next_run_count(&self) -> u64 {
        self.tick.fetch_add(1, Ordering::Relaxed)
    }

    /// Before an exclusive remembered run: clamps the stamps when the counter has moved a
    /// long way since they were last clamped, so that no stamp ages past [`Tick::MAX_AGE`].
    pub(crate) fn prepare_tracked_run(&mut self) {
        let now = *self.tick.get_mut() as u32;
        if now.wrapping_sub(self.clamped_at) >= Tick::CLAMP_EVERY {
            self.clamp_stamps();
        }
    }

    fn clamp_stamps(&mut self) {
        let now = Tick(*self.tick.get_mut() as u32);
        for column in &mut self.components.columns {
            column.any_mut().clamp(now);
        }
        self.clamped_at = now.0;
    }

    /// Sets the change counter as if it had moved there through frames: the stamps are
    /// clamped when the counter is [`Tick::CLAMP_EVERY`] or more past the last clamp, as
    /// [`maintain`](World::maintain) does. For tests of the wrap-around.
    #[doc(hidden)]
    pub fn set_change_tick(&mut self, tick: u32) {
        // Forward, through the wrap when `tick` is below the present one.
        let count = self.tick.get_mut();
        *count += u64::from(tick.wrapping_sub(*count as u32));
        self.prepare_tracked_run();
    }

    /// Starts tracking changes of `T`: every value gets an "added" and a "changed" stamp (the
    /// present one for the values already there), and the entities that lose a `T` are listed
    /// until the next [`maintain`](World::maintain). [`Added<T>`](crate::Added),
    /// [`Changed<T>`](crate::Changed) and [`removed`](World::removed) need it; types that are
    /// not tracked pay nothing. Idempotent.
    ///
    /// # Panics
    ///
    /// If `T` is not registered and is a reference to a registered component type or a
    /// tuple of them (`track::<&Pos>()` for `Pos`), as lookups do (see
    /// [`Component`](crate::Component)): to track a stored reference or tuple type, register
    /// it first.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.track::<u32>();
    /// let e = world.spawn((1u32,));
    /// world.despawn(e);
    /// assert_eq!(world.removed::<u32>(), [e]);
    /// world.maintain();
    /// assert!(world.removed::<u32>().is_empty());
    /// ```
    pub fn track<T: Component>(&mut self) {
        self.flush();
        // `id` refuses a misspelled component type, which `register` would take as a new one.
        let id = match self.components.id::<T>() {
            Some(id) => id,
            None => self.components.register::<T>(),
        };
        let now = self.change_tick();
        self.components.columns[id.index()].any_mut().track(now);
    }

    /// Whether changes of `T` are tracked.
    ///
    /// # Panics
    ///
    /// If `T` is not registered and is a reference to a registered component type, or a
    /// tuple of them: `&Pos` where `Pos` was meant (see [`Component`](crate::Component)).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// assert!(!world.is_tracked::<u8>());
    /// world.track::<u8>();
    /// assert!(world.is_tracked::<u8>());
    /// ```
    pub fn is_tracked<T: Component>(&self) -> bool {
        self.components
            .column::<T>()
            .is_some_and(|c| c.any().is_tracked())
    }

    /// The entities that lost their `T` (removed, or despawned) since the last
    /// [`maintain`](World::maintain), oldest first. An entity that lost `T` twice is listed
    /// twice. A value replaced by an insert is not listed: the entity still has a `T`, stamped
    /// changed (the remove hook does see the old value go).
    ///
    /// The list is the world's, one per frame: a system that does not run every frame
    /// collects it every frame, or misses what the frames it skipped removed.
    ///
    /// # Panics
    ///
    /// If `T` is not tracked ([`track`](World::track)), as [`Changed<T>`](crate::Changed)
    /// does: the world lists nothing for it, and an empty list would hide the missing call.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.track::<char>();
    /// let e = world.spawn(('x',));
    /// world.remove::<char>(e);
    /// assert_eq!(world.removed::<char>(), [e]);
    /// ```
    #[track_caller]
    pub fn removed<T: Component>(&self) -> &[Entity] {
        match self
            .components
            .storage::<T>()
            .and_then(|s| s.ticks.as_ref())
        {
            Some(t) => &t.removed,
            None => crate::storage::needs_tracking::<T>(format_args!(
                "removed::<{}>()",
                core::any::type_name::<T>()
            )),
        }
    }

    /// The frame boundary: forgets the lists of removed entities and moves the change counter
    /// on. Every 2²⁸ ticks it also clamps the change stamps older than [`Tick::MAX_AGE`], so
    /// that comparisons stay right when the counter wraps: call it at least once per 2²⁸
    /// remembered query runs on a shared world (once a frame is plenty). O(component types);
    /// O(tracked values) on the rare call that clamps.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.track::<u8>();
    /// let e = world.spawn((1u8,));
    /// world.despawn(e);
    /// world.maintain();
    /// assert!(world.removed::<u8>().is_empty());
    /// ```
    pub fn maintain(&mut self) {
        self.flush();
        *self.tick.get_mut() += 1;
        for column in &mut self.components.columns {
            column.any_mut().forget_removed();
        }
        self.prepare_tracked_run();
    }

    /// Calls `hook` with the entity and the value every time an entity gets a `T` (spawn,
    /// insert, commands; a replaced value goes through [`on_remove`](World::on_remove)
    /// first, and if dropping it panics, the new value is in and this hook is not called
    /// for it). The hook may record changes in the [`Commands`] it is given (a command of its
    /// own too, [`Commands::push`], which runs with the world: to spawn an entity and link
    /// it, say), which the world applies right after the change that ran the hook (a
    /// [`spawn_batch`](World::spawn_batch) of a hooked type spawns one entity at a time for
    /// this); it cannot touch the world directly. Changes through a
    /// [`view_mut`](World::view_mut) are the exception: the view holds the world, so their
    /// hooks' commands wait for the world's next change (or [`flush`](World::flush)) after
    /// the view is dropped. Replaces the previous insert hook of `T`.
    ///
    /// Commands hooks record may run hooks in turn, a round at a time, as deep as the
    /// cascade goes (a despawn hook that despawns children walks a hierarchy a level per
    /// round). Hooks still recording after 1 000 rounds plus 4 per entity alive when the
    /// cascade started are taken for hooks that feed each other: the change panics, and the
    /// commands not yet applied are dropped. Entities the cascade makes do not raise that
    /// limit (hooks that feed each other may make one per round forever), so a longer chain
    /// of entities each spawned by the hook of the one before panics too: build such a chain
    /// from a loop instead.
    ///
    /// A hook that panics leaves the world valid, and the panic goes on to the caller of the
    /// change. The change stops there: the value the hook was called with stays, and the
    /// rest of the bundle is dropped, not put. A [`spawn`](World::spawn) so stopped leaves
    /// its entity alive with the components put so far, which the caller never receives (a
    /// query finds it). What hooks recorded before the panic is applied with the next change
    /// (or [`flush`](World::flush)); if the panic comes while the world applies hook
    /// commands, the ones not yet applied are dropped unmade, as [`apply`](World::apply)
    /// drops the commands after a panicking one. Commands left waiting by a
    /// [`view_mut`](World::view_mut) are applied by the next [`flush`](World::flush), which
    /// every structural change makes first (as do `query`, `share`, `entity_mut`,
    /// `view_mut`, `track`, `maintain` and the hook setters), so a hook they run that panics
    /// panics out of that call.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// struct Enemy;
    /// struct Alert;
    ///
    /// let mut world = dod_world::World::new();
    /// let seen = Arc::new(AtomicUsize::new(0));
    /// let s = seen.clone();
    /// world.on_insert::<Enemy>(move |e, _, commands| {
    ///     s.fetch_add(1, Ordering::Relaxed);
    ///     commands.insert(e, (Alert,));
    /// });
    /// let e = world.spawn((Enemy,));
    /// assert_eq!(seen.load(Ordering::Relaxed), 1);
    /// assert!(world.has::<Alert>(e));
    /// ```
    pub fn on_insert<T: Component>(
        &mut self,
        hook: impl Fn(Entity, &T, &mut Commands) + Send + Sync + 'static,
    ) {
        self.flush();
        self.components
            .storage_or_insert::<T>()
            .set_on_insert(Box::new(hook));
    }

    /// Calls `hook` with the entity and the value every time an entity loses a `T` (remove,
    /// take, despawn, clear, replacement by insert), before the value is dropped; see
    /// [`on_insert`](World::on_insert) for what the hook may do. Replaces the previous remove
    /// hook of `T`.
    ///
    /// A hook that panics leaves the world valid, and the panic goes on to the caller of the
    /// change. The value it was called with has left the storage already and is dropped (a
    /// [`remove`](World::remove) so stopped returns nothing). A despawn or a clear still
    /// removes every other component; a [`take`](World::take) stops there, the components
    /// before it in the bundle dropped and the ones after it kept.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// let mut world = dod_world::World::new();
    /// let gone = Arc::new(Mutex::new(Vec::new()));
    /// let g = gone.clone();
    /// world.on_remove::<u32>(move |_, v, _| g.lock().unwrap().push(*v));
    /// let e = world.spawn((7u32,));
    /// world.despawn(e);
    /// assert_eq!(*gone.lock().unwrap(), [7]);
    /// ```
    pub fn on_remove<T: Component>(
        &mut self,
        hook: impl Fn(Entity, &T, &mut Commands) + Send + Sync + 'static,
    ) {
        self.flush();
        self.components
            .storage_or_insert::<T>()
            .set_on_remove(Box::new(hook));
    }

    /// Takes away the insert and remove hooks of `T` ([`on_insert`](World::on_insert),
    /// [`on_remove`](World::on_remove)): changes of `T` from now on run none. Commands the
    /// hooks recorded before are applied first.
    ///
    /// # Panics
    ///
    /// If `T` is not registered and is a reference to a registered component type, or a
    /// tuple of them: `&Pos` where `Pos` was meant (see [`Component`](crate::Component)).
    ///
    /// ```
    /// struct Loot;
    /// let mut world = dod_world::World::new();
    /// world.on_remove::<u32>(|_, _, commands| commands.spawn_unnamed((Loot,)));
    /// world.spawn((1u32,));
    /// world.remove_hooks::<u32>();
    /// world.clear();
    /// assert!(world.is_empty());
    /// ```
    pub fn remove_hooks<T: Component>(&mut self) {
        self.flush();
        if let Some(storage) = self.components.storage_mut::<T>() {
            storage.clear_hooks();
        }
    }

    /// Makes an owning group of the component types `G` (a tuple of 2 to 12 types): the
    /// entities that have all of them are kept packed at the front of each of their storages,
    /// in one order, so a query that requires them all walks the packed prefix in lockstep
    /// with no lookups, and [`Query::slices`] hands the prefix out as slices. Adding or
    /// removing one of the types costs a swap per owned storage. Entities that already have
    /// them all are packed now. O(entities with the first type).
    ///
    /// Declaring a group that exists already (the same types, in any order) changes nothing
    /// and is not an error, as registering a type twice is not.
    ///
    /// # Errors
    ///
    /// [`GroupError::AlreadyGrouped`] if one of the types already belongs to another group;
    /// [`GroupError::BadTypes`] if a type is named twice or there are too few or too many.
    ///
    /// ```
    /// struct Pos(f32);
    /// struct Vel(f32);
    /// let mut world = dod_world::World::new();
    /// world.spawn((Pos(0.0), Vel(1.0)));
    /// world.spawn((Pos(0.0),));
    /// world.group::<(Pos, Vel)>().unwrap();
    /// assert_eq!(world.group_len::<Pos>(), Some(1));
    /// world.group::<(Vel, Pos)>().unwrap(); // the same group: nothing changes
    /// assert!(world.group::<(Vel, u8)>().is_err()); // Vel is taken
    /// assert!(world.group::<(Pos, Vel, u8)>().is_err()); // so is Pos, for another group
    /// ```
    pub fn group<G: Bundle>(&mut self) -> Result<(), GroupError> {
        self.flush();
        let mut ids = Vec::new();
        G::ids(&mut self.components, &mut ids);
        // `add_group` refuses a type named twice, naming it, before any group changes (the
        // types are registered either way).
        self.components.add_group(&ids, G::group_moves())
    }

    /// The number of entities packed in the group that owns `T`, or `None` if `T` is in no
    /// group.
    ///
    /// # Panics
    ///
    /// If `T` is not registered and is a reference to a registered component type, or a
    /// tuple of them: `&Pos` where `Pos` was meant (see [`Component`](crate::Component)).
    ///
    /// ```
    /// struct Pos(f32);
    /// struct Vel(f32);
    /// let mut world = dod_world::World::builder().group::<(Pos, Vel)>().build();
    /// world.spawn((Pos(0.0), Vel(0.0)));
    /// assert_eq!(world.group_len::<Vel>(), Some(1));
    /// assert_eq!(world.group_len::<u8>(), None);
    /// ```
    pub fn group_len<T: Component>(&self) -> Option<usize> {
        let id = self.components.id::<T>()?;
        self.components.group_of(id).map(|g| g.len)
    }

    /// Sorts the entities of the group that owns `T` by their `T`, every owned storage
    /// together (a scene graph's "parents before children"). Stable. O(n log n) for the n
    /// packed entities.
    ///
    /// # Panics
    ///
    /// If `T` is in no group.
    ///
    /// ```
    /// use dod_world::Entity;
    /// struct Depth(u32);
    /// struct Local(f32);
    /// let mut world = dod_world::World::builder().group::<(Depth, Local)>().build();
    /// for d in [2, 0, 1] {
    ///     world.spawn((Depth(d), Local(d as f32)));
    /// }
    /// world.sort_group_by::<Depth>(|a, b| a.0.cmp(&b.0));
    /// let depths: Vec<u32> = world.query::<&Depth>().iter().map(|d| d.0).collect();
    /// assert_eq!(depths, [0, 1, 2]);
    /// let locals: Vec<f32> = world.query::<&Local>().iter().map(|l| l.0).collect();
    /// assert_eq!(locals, [0.0, 1.0, 2.0]);
    /// ```
    #[track_caller]
    pub fn sort_group_by<T: Component>(&mut self, mut compare: impl FnMut(&T, &T) -> CmpOrdering) {
        self.flush();
        let Some(id) = self.components.id::<T>() else {
            panic!(
                "sort_group_by: `{}` is in no group",
                core::any::type_name::<T>()
            )
        };
        let Some(group) = self.components.group_of(id) else {
            panic!(
                "sort_group_by: `{}` is in no group",
                core::any::type_name::<T>()
            )
        };
        let (len, owned) = (group.len, group.owned.clone());
        let values = &self.components.columns[id.index()]
            .storage::<T>()
            .set
            .values()[..len];
        let mut order: Vec<usize> = (0..len).collect();
        order.sort_by(|&a, &b| compare(&values[a], &values[b]));
        // Position p must receive the entry now at order[p]: follow each cycle with swaps.
        let mut at: Vec<usize> = (0..len).collect(); // where the entry first at i is now
        let mut holder: Vec<usize> = (0..len).collect(); // which first entry is now at p
        for p in 0..len {
            let want = order[p];
            let from = at[want];
            if from != p {
                for cid in &owned {
                    self.components.columns[cid.index()]
                        .any_mut()
                        .swap_positions(p, from);
                }
                let displaced = holder[p];
                holder.swap(p, from);
                at[want] = p;
                at[displaced] = from;
            }
        }
    }

    /// A read-only query through `&World`.
    ///
    /// ```
    /// fn total(world: &dod_world::World) -> u32 {
    ///     world.query_ref::<&u32>().iter().sum()
    /// }
    /// let mut world = dod_world::World::new();
    /// world.spawn((4u32,));
    /// assert_eq!(total(&world), 4);
    /// ```
    ///
    /// A query that writes does not compile through `&World`:
    ///
    /// ```compile_fail
    /// fn bump(world: &dod_world::World) {
    ///     world.query_ref::<&mut u32>().for_each(|v| *v += 1);
    /// }
    /// ```
    pub fn query_ref<Q: ReadOnlyQueryData>(&self) -> Query<'_, Q> {
        Query::new(self)
    }

    /// The shared form of the world, for systems that run at the same time: its queries take
    /// per-storage borrow flags, so two queries that touch different components (or only read
    /// the same ones, or only test for them with `With`, `Without` or `Has`) run side by
    /// side, and one that conflicts with a running query panics naming the component.
    /// `Shared` is `Copy + Send + Sync`. O(component types): each storage notes where a
    /// query that writes it will write, and every flag starts free (a query of an earlier
    /// share that was leaked, with `mem::forget`, holds none).
    ///
    /// ```
    /// use dod_world::World;
    /// struct Pos(f32);
    /// struct Vel(f32);
    /// struct Health(u32);
    ///
    /// let mut world = World::new();
    /// world.spawn((Pos(0.0), Vel(2.0), Health(10)));
    /// let w = world.share();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| w.query::<(&mut Pos, &Vel)>().for_each(|(p, v)| p.0 += v.0));
    ///     s.spawn(|| w.query::<&mut Health>().for_each(|h| h.0 -= 1));
    /// });
    /// assert_eq!(world.query::<&Pos>().iter().next().unwrap().0, 2.0);
    /// ```
    pub fn share(&mut self) -> Shared<'_> {
        self.flush();
        for column in &mut self.components.columns {
            // A query of an earlier share that was leaked left its flags taken.
            column.borrow.reset();
            column.capture();
        }
        Shared { world: self }
    }

    /// Makes the changes `commands` recorded, in order, and empties it. A command whose entity
    /// is no longer alive is skipped; returns how many were. O(commands).
    ///
    /// Apply or clear commands before a `load` (feature `serde`): their entities were named by
    /// the allocator the load replaces. After a load of this world's save, a
    /// [`spawn`](Commands::spawn) recorded before is skipped (its reservation is gone, so its
    /// entity is not alive), or, like any entity kept across a load, reaches the save's entity
    /// of the same id if that one is alive; after a load of another world's save (whose id the
    /// world takes), it panics, as commands of another world do.
    ///
    /// If a command panics (a replaced component's `Drop`, a
    /// [`spawn`](Commands::spawn) whose entity another world reserved, or a closure of
    /// [`push`](Commands::push)), the commands after it are dropped unmade and the world
    /// stays valid.
    ///
    /// ```
    /// use dod_world::{Commands, World};
    /// let mut world = World::new();
    /// let mut commands = Commands::new();
    /// let e = commands.spawn(world.entities(), (1u32,));
    /// commands.insert(e, ('x',));
    /// assert!(!world.is_alive(e));
    /// assert_eq!(world.apply(&mut commands), 0);
    /// assert_eq!(world.get::<char>(e), Some(&'x'));
    /// ```
    pub fn apply(&mut self, commands: &mut Commands) -> usize {
        self.flush();
        commands.apply_to(self)
    }

    /// `e`'s per-entity data, or `None` if `e` is not alive or has none. O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// world.set_data(e, "stats.health", 10.0).unwrap();
    /// assert_eq!(world.data(e).unwrap().get_f32("stats.health"), Some(10.0));
    /// ```
    pub fn data(&self, e: Entity) -> Option<DataView<'_>> {
        if !self.entities.is_alive(e) {
            return None;
        }
        self.data.get(e)
    }

    /// Sets one value of `e`'s per-entity data, creating the data if it has none (`key` is a
    /// [`DataKey`](dod::DataKey) or a path, whose name is kept for `to_json`, a method of
    /// [`DataView`] that needs `dod`'s `json` feature). O(size of the entity's data).
    ///
    /// Keys are 32-bit hashes of their paths, so two paths with the same hash are one key: the
    /// second set replaces the first's value (see
    /// [`DataComponent::set`](dod::DataComponent::set)). To learn of such a pair, register the
    /// paths up front in [`data_names_mut`](World::data_names_mut), whose
    /// [`register`](dod::data::KeyNames::register) reports a collision.
    ///
    /// # Errors
    ///
    /// [`NoSuchEntity`] if `e` is not alive.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// world.set_data(e, "name", "Gorm").unwrap();
    /// assert_eq!(world.data(e).unwrap().get_str("name"), Some("Gorm"));
    /// ```
    pub fn set_data<'p, 'v>(
        &mut self,
        e: Entity,
        key: impl Into<PathKey<'p>>,
        value: impl Into<Value<'v>>,
    ) -> Result<(), NoSuchEntity> {
        self.flush();
        if !self.entities.is_alive(e) {
            return Err(self.entities.not_alive(e));
        }
        if !self.data.contains(e) {
            self.data.insert(e);
        }
        let set = self.data.set(e, key, value);
        debug_assert!(set, "the entity has data");
        Ok(())
    }

    /// Gives `e` a whole data component (a copy of `data`), replacing the one it has.
    /// O(size of `data`).
    ///
    /// A [`DataView`] carries values, not key names: register the names of `data`'s keys in
    /// [`data_names_mut`](World::data_names_mut) (the [`KeyNames`](dod::data::KeyNames) that
    /// `from_json` filled, or the component's own [`names`](dod::DataComponent::names)) for
    /// `to_json` and saves to write them.
    ///
    /// # Errors
    ///
    /// [`NoSuchEntity`] if `e` is not alive.
    ///
    /// ```
    /// use dod::DataComponent;
    /// let mut sheet = DataComponent::new();
    /// sheet.set("level", 3.0);
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// world.insert_data(e, &sheet).unwrap();
    /// assert_eq!(world.data(e).unwrap().get_f32("level"), Some(3.0));
    /// ```
    pub fn insert_data<'d>(
        &mut self,
        e: Entity,
        data: impl Into<DataView<'d>>,
    ) -> Result<(), NoSuchEntity> {
        self.flush();
        if !self.entities.is_alive(e) {
            return Err(self.entities.not_alive(e));
        }
        self.data.insert_data(e, data);
        Ok(())
    }

    /// Drops `e`'s per-entity data; `false` if it had none (or is not alive). O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// world.set_data(e, "x", 1.0).unwrap();
    /// assert!(world.remove_data(e));
    /// assert!(world.data(e).is_none());
    /// ```
    pub fn remove_data(&mut self, e: Entity) -> bool {
        self.entities.is_alive(e) && self.data.remove(e)
    }

    /// Removes the value under `key` from `e`'s data; whether it was there (`false` too if `e`
    /// is not alive or has no data). O(entries of `e`'s data).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// world.set_data(e, "hp", 3.0).unwrap();
    /// world.set_data(e, "armor", 1.0).unwrap();
    /// assert!(world.remove_data_key(e, "hp"));
    /// assert!(!world.remove_data_key(e, "hp"));
    /// assert_eq!(world.data(e).unwrap().get_f32("armor"), Some(1.0));
    /// ```
    pub fn remove_data_key(&mut self, e: Entity, key: impl Into<DataKey>) -> bool {
        self.entities.is_alive(e) && self.data.remove_key(e, key)
    }

    /// The names of the data keys, which `to_json` writes and a save keeps: those of
    /// [`set_data`](World::set_data)'s paths, and whatever is registered here. O(1).
    ///
    /// ```
    /// use dod::data::{DataComponent, KeyNames};
    /// let mut names = KeyNames::new();
    /// let sheet = DataComponent::from_json(r#"{"stats": {"hp": 5}}"#, &mut names).unwrap();
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// world.insert_data(e, &sheet).unwrap();
    /// world.data_names_mut().extend_from(&names);
    /// let json = world.data(e).unwrap().to_json(world.data_names()).unwrap();
    /// assert_eq!(json, r#"{"stats":{"hp":5}}"#);
    /// ```
    pub fn data_names_mut(&mut self) -> &mut dod::data::KeyNames {
        self.data.names_mut()
    }

    /// The names of the data keys (see [`data_names_mut`](World::data_names_mut)), for
    /// `to_json`. O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// world.set_data(e, "stats.hp", 5.0).unwrap();
    /// let json = world.data(e).unwrap().to_json(world.data_names()).unwrap();
    /// assert_eq!(json, r#"{"stats":{"hp":5.0}}"#);
    /// ```
    pub fn data_names(&self) -> &dod::data::KeyNames {
        self.data.names()
    }

    /// The per-entity data store (read-only): every entity's data in one buffer.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// world.set_data(e, "x", 1.0).unwrap();
    /// assert_eq!(world.data_store().len(), 1);
    /// ```
    pub fn data_store(&self) -> &DataStore<Entity> {
        &self.data
    }

    /// The number of entities that have a `T`. O(1).
    ///
    /// # Panics
    ///
    /// If `T` is not registered and is a reference to a registered component type, or a
    /// tuple of them: `&Pos` where `Pos` was meant (see [`Component`](crate::Component)).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.spawn((1u32,));
    /// world.spawn(());
    /// assert_eq!(world.count::<u32>(), 1);
    /// ```
    pub fn count<T: Component>(&self) -> usize {
        self.components.storage::<T>().map_or(0, |s| s.len())
    }

    /// Heap bytes the world holds: the entity allocator, every storage, the data store.
    /// O(component types).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.spawn_batch((0..1000u32).map(|i| (i,)));
    /// assert!(world.memory_usage() >= 1000 * 4);
    /// ```
    pub fn memory_usage(&self) -> usize {
        self.entities.memory_usage()
            + self
                .components
                .columns
                .iter()
                .map(|c| c.any().memory_usage())
                .sum::<usize>()
            + self.data.memory_usage()
    }

    /// Releases the memory the world holds beyond what its entities, components and data
    /// use: what a batch reserved for a size hint above the bundles it got, or what a crowd
    /// of entities since despawned left in the component storages. It first makes what waits
    /// happen, as every change through `&mut World` does (reserved entities come alive, hook
    /// commands are applied); then entities, components and their order are unchanged.
    /// Every entity slot ever used stays (4 bytes, and 4 more while it waits to be reused):
    /// it holds the generation that keeps old handles stale. O(slots + components), and the
    /// data store's [`compact`](dod::data::DataStore::compact).
    ///
    /// # Panics
    ///
    /// If a hook run by the waiting hook commands panics (see [`on_insert`](World::on_insert)).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let es: Vec<_> = world.spawn_batch((0..10_000u32).map(|i| (i, i as f64))).collect();
    /// for &e in &es[10..] {
    ///     world.despawn(e);
    /// }
    /// let before = world.memory_usage();
    /// world.shrink_to_fit();
    /// assert!(world.memory_usage() < before / 2);
    /// assert_eq!(world.get::<f64>(es[3]), Some(&3.0));
    /// assert!(!world.is_alive(es[10]));
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.flush();
        self.entities.shrink_to_fit();
        for column in &mut self.components.columns {
            column.any_mut().shrink_to_fit();
        }
        self.data.compact();
    }

    /// Checks every invariant, panicking on the first that fails; for tests and fuzzing.
    /// O(entities × component types).
    #[doc(hidden)]
    pub fn assert_invariants(&self) {
        self.entities.assert_invariants();
        self.components.assert_groups();
        // Hook commands may wait for the next change (after a lazy batch, a view, or a
        // caught hook panic): a pending queue is not a broken world.
        for column in &self.components.columns {
            let storage = column.any();
            storage.assert_invariants(column.name);
            let indices = storage.indices();
            assert_eq!(indices.len(), storage.len(), "length of `{}`", column.name);
            for i in indices {
                assert!(
                    self.entities.is_occupied(i),
                    "`{}` holds a component of dead entity {i}",
                    column.name
                );
                assert!(
                    storage.holds(self.entities.entity_at(i)),
                    "`{}`'s slot of entity {i} lacks the entity's tag",
                    column.name
                );
            }
            assert!(
                !column.borrow.is_writing(),
                "`{}` left borrowed",
                column.name
            );
        }
        for k in self.data.keys() {
            assert!(self.entities.is_alive(k), "data of dead entity {k:?}");
        }
    }

    /// Replaces the entity allocator (for loading).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn set_entities(&mut self, entities: Entities) {
        self.entities = entities;
    }

    /// The allocator and the storage of `T`, for storing loaded components.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn loading_parts<T: Component>(
        &mut self,
    ) -> (&Entities, &mut crate::storage::Storage<T>) {
        (&self.entities, self.components.storage_or_insert::<T>())
    }

    /// Replaces the data store (for loading).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn set_data_store(&mut self, data: DataStore<Entity>) {
        self.data = data;
    }

    /// Takes the contents of a freshly loaded world whose saved types are `saved`; keeps the
    /// settings (hooks, tracking, groups) of this one.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn take_loaded(&mut self, loaded: &mut World, saved: &[core::any::TypeId]) {
        self.flush();
        let now = self.change_tick();
        core::mem::swap(&mut self.entities, &mut loaded.entities);
        core::mem::swap(&mut self.data, &mut loaded.data);
        let mut taken = alloc::vec![false; self.components.columns.len()];
        for &t in saved {
            let (Some(mine), Some(theirs)) = (self.components.id_of(t), loaded.components.id_of(t))
            else {
                continue;
            };
            let from = loaded.components.columns[theirs.index()].any_mut();
            self.components.columns[mine.index()]
                .any_mut()
                .replace_values(from, now);
            taken[mine.index()] = true;
        }
        // A value whose `Drop` panics does not stop the load: every other column is still
        // emptied and every group packed again (the entities are the loaded ones by now), and
        // the first panic goes on afterwards. The old values of the saved types, swapped
        // into `loaded`, are dropped here too: left to `loaded`'s drop while that panic
        // unwinds, a second panicking `Drop` would abort the process.
        let mut panic = None;
        let unsaved = self.components.columns.iter_mut().zip(taken);
        let old = unsaved
            .filter(|(_, taken)| !taken)
            .map(|(column, _)| column)
            .chain(loaded.components.columns.iter_mut());
        for column in old {
            let storage = column.any_mut();
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| storage.clear_silently())) {
                panic.get_or_insert(p);
            }
        }
        for g in 0..self.components.groups.len() {
            self.components.pack(g);
        }
        if let Some(p) = panic {
            resume_unwind(p);
        }
    }

    /// Checks that every component and every datum belongs to a live entity (for loading).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn check_loaded(&self) -> Result<(), alloc::string::String> {
        for column in &self.components.columns {
            for i in column.any().indices() {
                if !self.entities.is_occupied(i) {
                    return Err(alloc::format!(
                        "component `{}` on dead entity {i}",
                        column.name
                    ));
                }
            }
        }
        for k in self.data.keys() {
            if !self.entities.is_alive(k) {
                return Err(alloc::format!("data of dead entity {k:?}"));
            }
        }
        Ok(())
    }
}

impl fmt::Debug for World {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("World");
        d.field("entities", &self.entities);
        d.field(
            "components",
            &self
                .components
                .columns
                .iter()
                .map(|c| (c.name, c.any().len()))
                .collect::<alloc::vec::Vec<_>>(),
        );
        d.field("data", &self.data.len());
        d.finish()
    }
}

/// The entities of a [`World::spawn_batch`]: spawned already (a batch written as one run, or
/// one with a type of an owning group or with an insert hook, spawned one entity at a time
/// as [`World::spawn`] does, hook commands applied after each), or spawned as the iterator is
/// walked (and the rest when it is dropped, unless by a panic).
pub struct SpawnBatch<'w, I: Iterator<Item = B>, B: Bundle> {
    inner: Batch<'w, I, B>,
}

/// A batch in progress, one spawned at once one entity at a time (a bundle with grouped
/// types, or the rest of a run that filled up), or one written as one run.
enum Batch<'w, I: Iterator<Item = B>, B: Bundle> {
    Lazy {
        entities: &'w mut Entities,
        targets: B::Targets<'w>,
        ctx: Ctx<'w>,
        iter: I,
    },
    Done(alloc::vec::IntoIter<Entity>),
    /// A batch written as one run: the new entities `next..end`, whose slots hold `tag`.
    Run {
        next: u32,
        end: u32,
        tag: Tag,
    },
}

impl<I: Iterator<Item = B>, B: Bundle> Iterator for SpawnBatch<'_, I, B> {
    type Item = Entity;

    #[inline]
    fn next(&mut self) -> Option<Entity> {
        match &mut self.inner {
            Batch::Lazy {
                entities,
                targets,
                ctx,
                iter,
            } => {
                let bundle = iter.next()?;
                let e = alloc_prefetching::<B>(entities, targets);
                bundle.put(targets, e, ctx);
                Some(e)
            }
            Batch::Done(es) => es.next(),
            Batch::Run { next, end, tag } => {
                if *next == *end {
                    return None;
                }
                *next += 1;
                Some(tag.to_key(*next - 1))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.inner {
            Batch::Lazy { iter, .. } => iter.size_hint(),
            Batch::Done(es) => es.size_hint(),
            Batch::Run { next, end, .. } => {
                let n = (*end - *next) as usize;
                (n, Some(n))
            }
        }
    }
}

impl<I: ExactSizeIterator<Item = B>, B: Bundle> ExactSizeIterator for SpawnBatch<'_, I, B> {}

/// Shows the bundle type and how many entities are left to hand out (the iterator's size
/// hint).
///
/// ```
/// let mut world = dod_world::World::new();
/// let mut batch = world.spawn_batch((0..3u32).map(|i| (i,)));
/// batch.next();
/// assert_eq!(format!("{batch:?}"), "SpawnBatch { bundle: \"(u32,)\", left: (2, Some(2)), .. }");
/// ```
impl<I: Iterator<Item = B>, B: Bundle> fmt::Debug for SpawnBatch<'_, I, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpawnBatch")
            .field("bundle", &core::any::type_name::<B>())
            .field("left", &self.size_hint())
            .finish_non_exhaustive()
    }
}

impl<I: Iterator<Item = B>, B: Bundle> Drop for SpawnBatch<'_, I, B> {
    fn drop(&mut self) {
        // While a panic unwinds (most likely the iterator's own), taking another bundle could
        // panic again, which aborts: the bundles not reached are dropped with the iterator.
        if std::thread::panicking() {
            return;
        }
        if let Batch::Lazy { .. } = self.inner {
            for _ in self.by_ref() {}
        }
    }
}

/// A read-only view of one live entity; made by [`World::entity`].
#[derive(Clone, Copy)]
pub struct EntityRef<'w> {
    world: &'w World,
    e: Entity,
}

impl<'w> EntityRef<'w> {
    /// The entity.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// assert_eq!(world.entity(e).unwrap().id(), e);
    /// ```
    pub fn id(&self) -> Entity {
        self.e
    }

    /// Its `T`, if it has one. O(1).
    ///
    /// # Panics
    ///
    /// If `T` is not registered and is a reference to a registered component type, or a
    /// tuple of them: `&Pos` where `Pos` was meant (see [`Component`](crate::Component)).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((2u8,));
    /// assert_eq!(world.entity(e).unwrap().get::<u8>(), Some(&2));
    /// ```
    pub fn get<T: Component>(&self) -> Option<&'w T> {
        self.world.get(self.e)
    }

    /// Whether it has a `T`. O(1).
    ///
    /// # Panics
    ///
    /// If `T` is not registered and is a reference to a registered component type, or a
    /// tuple of them: `&Pos` where `Pos` was meant (see [`Component`](crate::Component)).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((2u8,));
    /// assert!(world.entity(e).unwrap().has::<u8>());
    /// ```
    pub fn has<T: Component>(&self) -> bool {
        self.world.has::<T>(self.e)
    }

    /// Its per-entity data, if it has any.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// assert!(world.entity(e).unwrap().data().is_none());
    /// ```
    pub fn data(&self) -> Option<DataView<'w>> {
        self.world.data(self.e)
    }
}

impl fmt::Debug for EntityRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("EntityRef").field(&self.e).finish()
    }
}

/// A mutable view of one live entity; made by [`World::entity_mut`].
///
/// A change made through the view applies the commands its hooks recorded, which may
/// despawn the entity: from then on the view answers as for a stale entity (`get` gives
/// `None`, [`is_alive`](EntityMut::is_alive) `false`), and [`insert`](EntityMut::insert)
/// panics rather than drop the bundle unseen.
pub struct EntityMut<'w> {
    world: &'w mut World,
    e: Entity,
}

impl EntityMut<'_> {
    /// The entity.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// assert_eq!(world.entity_mut(e).unwrap().id(), e);
    /// ```
    pub fn id(&self) -> Entity {
        self.e
    }

    /// Whether the entity is still alive: a hook's commands, applied by a change made
    /// through the view, may have despawned it.
    ///
    /// ```
    /// use dod_world::World;
    /// struct Fuse;
    /// let mut world = World::new();
    /// world.on_remove::<Fuse>(|e, _, commands| commands.despawn(e));
    /// let e = world.spawn((Fuse,));
    /// let mut view = world.entity_mut(e).unwrap();
    /// assert!(view.is_alive());
    /// view.remove::<Fuse>();
    /// assert!(!view.is_alive());
    /// ```
    pub fn is_alive(&self) -> bool {
        self.world.is_alive(self.e)
    }

    /// Its `T`, if it has one. O(1).
    ///
    /// # Panics
    ///
    /// If `T` is not registered and is a reference to a registered component type, or a
    /// tuple of them: `&Pos` where `Pos` was meant (see [`Component`](crate::Component)).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((2u8,));
    /// assert_eq!(world.entity_mut(e).unwrap().get::<u8>(), Some(&2));
    /// ```
    pub fn get<T: Component>(&self) -> Option<&T> {
        self.world.get(self.e)
    }

    /// Its `T`, mutably, if it has one. O(1).
    ///
    /// # Panics
    ///
    /// If `T` is not registered and is a reference to a registered component type, or a
    /// tuple of them: `&Pos` where `Pos` was meant (see [`Component`](crate::Component)).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((2u8,));
    /// *world.entity_mut(e).unwrap().get_mut::<u8>().unwrap() = 3;
    /// assert_eq!(world.get::<u8>(e), Some(&3));
    /// ```
    pub fn get_mut<T: Component>(&mut self) -> Option<&mut T> {
        self.world.get_mut(self.e)
    }

    /// Its `T`, mutably, inserting the value `f` makes first if it has none (as
    /// [`Option::get_or_insert_with`]); `f` runs only then. O(1), and the insert's cost when
    /// it inserts (insert hooks run, as for [`insert`](EntityMut::insert)).
    ///
    /// # Panics
    ///
    /// As [`get_mut`](EntityMut::get_mut) and [`insert`](EntityMut::insert), and if the
    /// commands of a hook, applied after the insert, took the new `T` away or despawned the
    /// entity: there is then no `T` to hand out.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// for _ in 0..3 {
    ///     *world.entity_mut(e).unwrap().get_or_insert_with(|| 0u32) += 1;
    /// }
    /// assert_eq!(world.get::<u32>(e), Some(&3));
    /// ```
    #[track_caller]
    pub fn get_or_insert_with<T: Component>(&mut self, f: impl FnOnce() -> T) -> &mut T {
        if !self.has::<T>() {
            self.insert((f(),));
            if !self.has::<T>() {
                panic!(
                    "EntityMut::get_or_insert_with::<{}>: a hook's commands took the inserted \
                     value away again{}",
                    core::any::type_name::<T>(),
                    if self.is_alive() {
                        ""
                    } else {
                        " (they despawned the entity)"
                    }
                );
            }
        }
        self.world
            .get_mut::<T>(self.e)
            .expect("the entity has a T: it had one or was just given one")
    }

    /// Whether it has a `T`. O(1).
    ///
    /// # Panics
    ///
    /// If `T` is not registered and is a reference to a registered component type, or a
    /// tuple of them: `&Pos` where `Pos` was meant (see [`Component`](crate::Component)).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((2u8,));
    /// assert!(world.entity_mut(e).unwrap().has::<u8>());
    /// ```
    pub fn has<T: Component>(&self) -> bool {
        self.world.has::<T>(self.e)
    }

    /// Gives it the components of `bundle`, replacing the ones it has.
    ///
    /// # Panics
    ///
    /// If `bundle` holds a type twice, or if the entity is no longer alive (a hook's commands
    /// despawned it: see [`EntityMut`]); the bundle is dropped.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// world.entity_mut(e).unwrap().insert((1u8, 2u16));
    /// assert!(world.has::<u16>(e));
    /// ```
    #[track_caller]
    pub fn insert<B: Bundle>(&mut self, bundle: B) -> &mut Self {
        if let Err(err) = self.world.insert(self.e, bundle) {
            panic!("EntityMut::insert: {err}: a hook's commands despawned it");
        }
        self
    }

    /// Takes its `T` out.
    ///
    /// # Panics
    ///
    /// As [`World::remove`]: for a reference to or a tuple of registered component types
    /// that is not registered itself, and if `T`'s remove hook panics.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u8,));
    /// assert_eq!(world.entity_mut(e).unwrap().remove::<u8>(), Some(1));
    /// ```
    pub fn remove<T: Component>(&mut self) -> Option<T> {
        self.world.remove(self.e)
    }

    /// Takes every component of bundle `B` out if it has them all; otherwise `None` and
    /// nothing is removed (see [`World::take`]).
    ///
    /// # Panics
    ///
    /// As [`World::take`].
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u8, 'x'));
    /// assert_eq!(world.entity_mut(e).unwrap().take::<(u8, char)>(), Some((1, 'x')));
    /// ```
    #[track_caller]
    pub fn take<B: Bundle>(&mut self) -> Option<B> {
        self.world.take(self.e)
    }

    /// Its per-entity data, if it has any (see [`World::data`]).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// let mut view = world.entity_mut(e).unwrap();
    /// assert!(view.data().is_none());
    /// view.set_data("hp", 3);
    /// assert_eq!(view.data().unwrap().get_i64("hp"), Some(3));
    /// ```
    pub fn data(&self) -> Option<DataView<'_>> {
        self.world.data(self.e)
    }

    /// Sets the value under `key` in its per-entity data, as [`World::set_data`] does.
    ///
    /// # Panics
    ///
    /// If the entity is no longer alive (a hook's commands despawned it: see [`EntityMut`]).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// // A read-modify-write of a counter through one view.
    /// let mut view = world.entity_mut(e).unwrap();
    /// for _ in 0..3 {
    ///     let kills = view.data().and_then(|d| d.get_i64("kills")).unwrap_or(0);
    ///     view.set_data("kills", kills + 1);
    /// }
    /// assert_eq!(world.data(e).unwrap().get_i64("kills"), Some(3));
    /// ```
    #[track_caller]
    pub fn set_data<'p, 'v>(
        &mut self,
        key: impl Into<PathKey<'p>>,
        value: impl Into<Value<'v>>,
    ) -> &mut Self {
        if let Err(err) = self.world.set_data(self.e, key, value) {
            panic!("EntityMut::set_data: {err}: a hook's commands despawned it");
        }
        self
    }

    /// Despawns it.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// world.entity_mut(e).unwrap().despawn();
    /// assert!(!world.is_alive(e));
    /// ```
    pub fn despawn(self) {
        self.world.despawn(self.e);
    }
}

impl fmt::Debug for EntityMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("EntityMut").field(&self.e).finish()
    }
}

/// The shared form of a [`World`], for systems that run at the same time; made by
/// [`World::share`], which borrows the world mutably for as long as it lives.
///
/// Its queries take per-storage borrow flags for as long as they live: shared for `&T` and
/// the change filters ([`Added`](crate::Added), [`Changed`](crate::Changed)), exclusive for
/// `&mut T`. A query whose flags conflict with a running one panics naming the component.
/// The presence tests ([`With`](crate::With), [`Without`](crate::Without),
/// [`Has`](crate::Has)) take none: they read which entities have `T`, which no query changes,
/// so a query that filters on `T` runs beside one that writes `T`.
///
/// ```should_panic
/// let mut world = dod_world::World::new();
/// world.spawn((1u32,));
/// let w = world.share();
/// let mut writer = w.query::<&mut u32>();
/// writer.for_each(|v| *v += 1); // takes `u32` exclusively until `writer` drops
/// let mut reader = w.query::<&u32>();
/// reader.for_each(|_| {}); // panics: `u32` is already borrowed mutably
/// ```
#[derive(Clone, Copy)]
pub struct Shared<'w> {
    world: &'w World,
}

impl Shared<'_> {
    /// The world's [`World::instance`].
    pub(crate) fn instance(&self) -> u64 {
        self.world.instance
    }
}

impl<'w> Shared<'w> {
    /// A query with runtime borrow checks; see [`Query`]. Each `&mut T` it hands out of a
    /// tracked type marks the value changed, written or not (see [`Changed`](crate::Changed)).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.spawn((1u32,));
    /// let w = world.share();
    /// assert_eq!(w.query::<&u32>().count(), 1);
    /// ```
    pub fn query<Q: QueryData>(&self) -> SharedQuery<'w, Q> {
        Query::new(self.world)
    }

    /// The entity allocator: liveness, and [`reserve`](Entities::reserve) for commands.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let w = world.share();
    /// let e = w.entities().reserve();
    /// assert!(!w.is_alive(e));
    /// ```
    pub fn entities(&self) -> &'w Entities {
        &self.world.entities
    }

    /// Whether `e` is alive. O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// assert!(world.share().is_alive(e));
    /// ```
    pub fn is_alive(&self, e: Entity) -> bool {
        self.world.entities.is_alive(e)
    }

    /// The number of live entities. O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.spawn(());
    /// assert_eq!(world.share().len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.world.len()
    }

    /// Whether no entity is alive. O(1).
    ///
    /// ```
    /// assert!(dod_world::World::new().share().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.world.is_empty()
    }
}

impl fmt::Debug for Shared<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared").field("world", self.world).finish()
    }
}

/// How many rounds of hook commands a change may run before the world takes the hooks for
/// ones that feed each other: 1 000, plus 4 for every entity alive when the hooks started.
/// A finite cascade over the world runs a round per level (a hook that despawns the children
/// of the despawned, down a chain of bones), and every level but a few is an entity alive
/// when it started; hooks that feed each other run forever, and stop here in time
/// proportional to the world. A cascade that makes its own levels (each round spawning the
/// next entity) cannot be told from hooks that feed each other, and stops here too.
fn hook_round_limit(alive: usize) -> usize {
    alive.saturating_mul(4).saturating_add(1_000)
}

#[cold]
#[track_caller]
fn hooks_feed_each_other(limit: usize) -> ! {
    panic!(
        "hooks kept recording commands for {limit} rounds (1 000, plus 4 for every entity \
         alive when they started): hooks that feed each other, or a cascade deeper than that \
         (such as a chain of entities, each spawned by the hook of the one before)?"
    )
}
