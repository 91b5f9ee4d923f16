//! [`World`]: entities, their components, and their per-entity data.

use core::fmt;
use core::sync::atomic::{AtomicU32, Ordering};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use dod::data::{DataKey, DataStore, DataView, Value};

use crate::bundle::Bundle;
use crate::commands::Commands;
use crate::entity::{Entities, Entity};
use crate::error::NoSuchEntity;
use crate::query::{Query, QueryData, ReadOnlyQueryData};
use crate::storage::{Component, ComponentId, Components};

/// The ids worlds stamp into their entities: 1 ..= 0x7FFF, in turn.
static NEXT_WORLD_ID: AtomicU32 = AtomicU32::new(0);

fn next_world_id() -> u16 {
    (NEXT_WORLD_ID.fetch_add(1, Ordering::Relaxed) % 0x7FFF) as u16 + 1
}

/// The default number of vacant entity slots kept back before one is reused.
pub const DEFAULT_MIN_FREE: u32 = 1024;

/// Entities, each with any set of components, and queries over them.
///
/// - **Entities** are generational ids ([`Entity`]) from dod's slot rules: FIFO reuse of
///   freed slots, `min_free` slots kept back ([`WorldBuilder::min_free`]), a slot retired
///   before its generation wraps. A despawned entity never resolves again, and no component of
///   it shows up under another entity.
/// - **Components** are any `'static + Send + Sync` values, one storage per type: a
///   [`dod::SparseSet`] keyed by entity index, or, for a tag (a zero-sized type with no drop
///   glue), a [`dod::BitSet`]. Liveness is checked once, where an entity enters the world's
///   API; storages never hold a dead entity's component.
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
    #[cfg(feature = "serde")]
    pub(crate) saved: crate::serde::SavedTypes,
}

/// Settings for a new [`World`]; made by [`World::builder`].
///
/// ```
/// let world = dod_world::World::builder().min_free(64).build();
/// assert_eq!(world.entities().min_free(), 64);
/// ```
#[derive(Clone, Debug)]
pub struct WorldBuilder {
    min_free: u32,
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

    /// The world.
    ///
    /// ```
    /// let world = dod_world::World::builder().build();
    /// assert!(world.is_empty());
    /// ```
    pub fn build(self) -> World {
        World {
            entities: Entities::new(next_world_id(), self.min_free),
            components: Components::default(),
            data: DataStore::new(),
            #[cfg(feature = "serde")]
            saved: Default::default(),
        }
    }

    /// The world, with `saved` registered for saving (and as components).
    #[cfg(feature = "serde")]
    pub(crate) fn build_saving(self, saved: crate::serde::SavedTypes) -> World {
        let mut world = self.build();
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
        }
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

    /// Makes every reserved entity alive, with no component. Every structural change does it
    /// first; call it to make reserved entities visible to `&self` methods. O(reserved).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.reserve_entity();
    /// world.flush();
    /// assert!(world.is_alive(e));
    /// ```
    #[inline]
    pub fn flush(&mut self) {
        self.entities.flush();
    }

    /// Spawns an entity with the components of `bundle` and returns it. O(components),
    /// amortised.
    ///
    /// # Panics
    ///
    /// If `bundle` holds a type twice (before anything changes), or if every entity index is
    /// in use.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32, "name"));
    /// assert_eq!(world.get::<u32>(e), Some(&1));
    /// ```
    #[track_caller]
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> Entity {
        self.flush();
        let mut targets = B::targets(&mut self.components);
        let e = self.entities.alloc();
        bundle.put(&mut targets, e.index());
        e
    }

    /// Spawns an entity per bundle of `iter`, reserving room once for the iterator's size
    /// hint, and returns the entities in order as they are spawned. Bundles the iterator does
    /// not reach are spawned when it is dropped, unless a panic drops it: then they are
    /// dropped unspawned (an iterator that panicked is not called again). O(n × components).
    ///
    /// # Panics
    ///
    /// As [`spawn`](World::spawn).
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
        self.flush();
        let iter = iter.into_iter();
        let (lower, _) = iter.size_hint();
        let mut targets = B::targets(&mut self.components);
        B::reserve(&mut targets, lower);
        self.entities.reserve_capacity(lower);
        SpawnBatch {
            entities: &mut self.entities,
            targets,
            iter,
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
        self.flush();
        if !self.entities.free(e) {
            return false;
        }
        let index = e.index();
        let mut panic = None;
        for column in &mut self.components.columns {
            let storage = column.any_mut();
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| storage.remove_index(index))) {
                panic.get_or_insert(p);
            }
        }
        self.data.remove(e);
        if let Some(p) = panic {
            resume_unwind(p);
        }
        true
    }

    /// Despawns every entity. O(entities + components).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32,));
    /// world.clear();
    /// assert!(world.is_empty() && !world.is_alive(e));
    /// ```
    pub fn clear(&mut self) {
        self.flush();
        self.entities.clear();
        let mut panic = None;
        for column in &mut self.components.columns {
            let storage = column.any_mut();
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| storage.clear())) {
                panic.get_or_insert(p);
            }
        }
        self.data.clear();
        if let Some(p) = panic {
            resume_unwind(p);
        }
    }

    /// Gives `e` the components of `bundle`, replacing (and dropping) the ones it has.
    /// O(components).
    ///
    /// # Errors
    ///
    /// [`NoSuchEntity`] if `e` is not alive; the bundle is dropped.
    ///
    /// # Panics
    ///
    /// If `bundle` holds a type twice.
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
    pub fn insert<B: Bundle>(&mut self, e: Entity, bundle: B) -> Result<(), NoSuchEntity> {
        self.flush();
        if !self.entities.is_alive(e) {
            return Err(NoSuchEntity(e));
        }
        let mut targets = B::targets(&mut self.components);
        bundle.put(&mut targets, e.index());
        Ok(())
    }

    /// Takes `e`'s `T` out, or `None` if `e` is not alive or has none. O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32, 'x'));
    /// assert_eq!(world.remove::<u32>(e), Some(1));
    /// assert_eq!(world.remove::<u32>(e), None);
    /// assert_eq!(world.get::<char>(e), Some(&'x'));
    /// ```
    pub fn remove<T: Component>(&mut self, e: Entity) -> Option<T> {
        self.flush();
        if !self.entities.is_alive(e) {
            return None;
        }
        self.components.storage_mut::<T>()?.remove(e.index())
    }

    /// `e`'s `T`, or `None` if `e` is not alive (stale, of another world) or has none. O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32,));
    /// assert_eq!(world.get::<u32>(e), Some(&1));
    /// assert_eq!(world.get::<u8>(e), None);
    /// ```
    #[inline]
    pub fn get<T: Component>(&self, e: Entity) -> Option<&T> {
        if !self.entities.is_alive(e) {
            return None;
        }
        self.components.storage::<T>()?.get(e.index())
    }

    /// `e`'s `T`, mutably, or `None`. O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u32,));
    /// *world.get_mut::<u32>(e).unwrap() += 1;
    /// assert_eq!(world.get::<u32>(e), Some(&2));
    /// ```
    #[inline]
    pub fn get_mut<T: Component>(&mut self, e: Entity) -> Option<&mut T> {
        if !self.entities.is_alive(e) {
            return None;
        }
        self.components.storage_mut::<T>()?.get_mut(e.index())
    }

    /// Whether `e` is alive and has a `T`. O(1).
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
        self.entities.is_alive(e)
            && self
                .components
                .storage::<T>()
                .is_some_and(|s| s.contains(e.index()))
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
            Err(NoSuchEntity(e))
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
            Err(NoSuchEntity(e))
        }
    }

    /// A query over the world: see [`Query`]. Exclusive (it borrows the world mutably), so
    /// it needs no runtime borrow checks.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.spawn((1u32, 2u64));
    /// world.query::<(&mut u32, &u64)>().for_each(|(a, b)| *a += *b as u32);
    /// assert_eq!(world.query::<&u32>().iter().next(), Some(&3));
    /// ```
    pub fn query<Q: QueryData>(&mut self) -> Query<'_, Q> {
        self.flush();
        Query::new(self, false)
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
        Query::new(self, false)
    }

    /// The shared form of the world, for systems that run at the same time: its queries take
    /// per-storage borrow flags, so two queries that touch different components (or only read
    /// the same ones) run side by side, and one that conflicts with a running query panics
    /// naming the component. `Shared` is `Copy + Send + Sync`.
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
        Shared { world: self }
    }

    /// Makes the changes `commands` recorded, in order, and empties it. A command whose entity
    /// is no longer alive is skipped; returns how many were. O(commands).
    ///
    /// If a command panics (a replaced component's `Drop`), the commands after it are dropped
    /// unmade and the world stays valid.
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

    /// Sets one value of `e`'s per-entity data, creating the data if it has none. O(size of
    /// the entity's data).
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
    pub fn set_data<'v>(
        &mut self,
        e: Entity,
        key: impl Into<DataKey>,
        value: impl Into<Value<'v>>,
    ) -> Result<(), NoSuchEntity> {
        self.flush();
        if !self.entities.is_alive(e) {
            return Err(NoSuchEntity(e));
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
            return Err(NoSuchEntity(e));
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

    /// Checks every invariant, panicking on the first that fails; for tests and fuzzing.
    /// O(entities × component types).
    #[doc(hidden)]
    pub fn assert_invariants(&self) {
        self.entities.assert_invariants();
        for column in &self.components.columns {
            let storage = column.any();
            let indices = storage.indices();
            assert_eq!(indices.len(), storage.len(), "length of `{}`", column.name);
            for i in indices {
                assert!(
                    self.entities.is_occupied(i),
                    "`{}` holds a component of dead entity {i}",
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

    /// The storages, mutable (for loading).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn components_mut(&mut self) -> &mut Components {
        &mut self.components
    }

    /// Replaces the entity allocator (for loading).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn set_entities(&mut self, entities: Entities) {
        self.entities = entities;
    }

    /// Replaces the data store (for loading).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn set_data_store(&mut self, data: DataStore<Entity>) {
        self.data = data;
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

/// The entities of a [`World::spawn_batch`], spawned as the iterator is walked (and the rest
/// when it is dropped, unless by a panic).
pub struct SpawnBatch<'w, I: Iterator<Item = B>, B: Bundle> {
    entities: &'w mut Entities,
    targets: B::Targets<'w>,
    iter: I,
}

impl<I: Iterator<Item = B>, B: Bundle> Iterator for SpawnBatch<'_, I, B> {
    type Item = Entity;

    #[inline]
    fn next(&mut self) -> Option<Entity> {
        let bundle = self.iter.next()?;
        let e = self.entities.alloc();
        bundle.put(&mut self.targets, e.index());
        Some(e)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.iter.size_hint()
    }
}

impl<I: ExactSizeIterator<Item = B>, B: Bundle> ExactSizeIterator for SpawnBatch<'_, I, B> {}

impl<I: Iterator<Item = B>, B: Bundle> Drop for SpawnBatch<'_, I, B> {
    fn drop(&mut self) {
        // While a panic unwinds (most likely the iterator's own), taking another bundle could
        // panic again, which aborts: the bundles not reached are dropped with the iterator.
        if std::thread::panicking() {
            return;
        }
        for _ in self.by_ref() {}
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

    /// Its `T`, if it has one. O(1).
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
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((2u8,));
    /// *world.entity_mut(e).unwrap().get_mut::<u8>().unwrap() = 3;
    /// assert_eq!(world.get::<u8>(e), Some(&3));
    /// ```
    pub fn get_mut<T: Component>(&mut self) -> Option<&mut T> {
        self.world.get_mut(self.e)
    }

    /// Whether it has a `T`. O(1).
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
    /// If `bundle` holds a type twice.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// world.entity_mut(e).unwrap().insert((1u8, 2u16));
    /// assert!(world.has::<u16>(e));
    /// ```
    #[track_caller]
    pub fn insert<B: Bundle>(&mut self, bundle: B) -> &mut Self {
        let done = self.world.insert(self.e, bundle);
        debug_assert!(done.is_ok(), "the entity of a view is alive");
        self
    }

    /// Takes its `T` out.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((1u8,));
    /// assert_eq!(world.entity_mut(e).unwrap().remove::<u8>(), Some(1));
    /// ```
    pub fn remove<T: Component>(&mut self) -> Option<T> {
        self.world.remove(self.e)
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
/// filters, exclusive for `&mut T`. A query whose flags conflict with a running one panics
/// naming the component.
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

impl<'w> Shared<'w> {
    /// A query with runtime borrow checks; see [`Query`].
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.spawn((1u32,));
    /// let w = world.share();
    /// assert_eq!(w.query::<&u32>().count(), 1);
    /// ```
    pub fn query<Q: QueryData>(&self) -> Query<'w, Q> {
        Query::new(self.world, true)
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
