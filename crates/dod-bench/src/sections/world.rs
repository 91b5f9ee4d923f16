//! Section `world`: `dod_world::World` against the ECS crates a game would otherwise pick
//! (hecs, bevy_ecs, shipyard, sparsey, specs) on the workloads of the ECS bench suite the Rust
//! ECS crates publish, plus a game's frame with entities coming and going, and heap bytes per
//! entity.
//!
//! Each ECS is a [`Contender`]: one small implementation per crate, written the way that crate's
//! docs recommend (its batch spawn, its query loop, its parallel iterator). Every workload makes
//! one [`Sampler`] per contender, and [`harness::measure`] times them in rotating rounds, so
//! that every row of a table sees the same machine and each ratio comes with its spread.

use std::hint::black_box;
use std::time::Duration;

use crate::alloc_counter::live_bytes;
use crate::floors;
use crate::harness::{self, per_elem, progress, time, Boxed, Config, Sampler, Table, Timing};

// --- components -----------------------------------------------------------------------------

/// A component every contender can store: bevy, shipyard and specs ask for their own traits.
trait Comp:
    bevy_ecs::component::Component
    + shipyard::Component
    + specs::Component<Storage: Default>
    + Send
    + Sync
    + 'static
{
}

impl<T> Comp for T where
    T: bevy_ecs::component::Component
        + shipyard::Component
        + specs::Component<Storage: Default>
        + Send
        + Sync
        + 'static
{
}

/// Declares components with the traits of every contender; `$storage` is the specs storage
/// its docs recommend for how many entities have the component.
macro_rules! components {
    ($($(#[$attr:meta])* $name:ident($ty:ty), $storage:ident;)*) => {$(
        #[derive(Clone, Copy, Debug, bevy_ecs::component::Component)]
        $(#[$attr])*
        #[allow(dead_code)] // some are stored and never read: their size is the workload
        struct $name($ty);

        impl shipyard::Component for $name {
            type Tracking = shipyard::track::Untracked;
        }

        impl specs::Component for $name {
            type Storage = specs::$storage<Self>;
        }
    )*};
}

/// A 4x4 matrix of `f32`, rows first.
type Mat4 = [[f32; 4]; 4];

components! {
    /// A 4x4 transform matrix.
    Transform(Mat4), VecStorage;
    /// Where an entity is.
    Position([f32; 3]), VecStorage;
    /// How it is turned.
    Rotation([f32; 3]), VecStorage;
    /// How it moves.
    Velocity([f32; 3]), VecStorage;
    /// frag_iter: the value every entity has, next to one of 26 types.
    Data(f32), VecStorage;
    /// add_remove: the component every entity has.
    Held(f32), VecStorage;
    /// add_remove: the component added to every entity and removed again (bevy's docs
    /// recommend sparse-set storage for a component that comes and goes).
    #[component(storage = "SparseSet")]
    Added(f32), VecStorage;
}

/// frag_iter's 26 component types, 20 entities each.
mod frag {
    components! {
        A(f32), DenseVecStorage; B(f32), DenseVecStorage; C(f32), DenseVecStorage;
        D(f32), DenseVecStorage; E(f32), DenseVecStorage; F(f32), DenseVecStorage;
        G(f32), DenseVecStorage; H(f32), DenseVecStorage; I(f32), DenseVecStorage;
        J(f32), DenseVecStorage; K(f32), DenseVecStorage; L(f32), DenseVecStorage;
        M(f32), DenseVecStorage; N(f32), DenseVecStorage; O(f32), DenseVecStorage;
        P(f32), DenseVecStorage; Q(f32), DenseVecStorage; R(f32), DenseVecStorage;
        S(f32), DenseVecStorage; T(f32), DenseVecStorage; U(f32), DenseVecStorage;
        V(f32), DenseVecStorage; W(f32), DenseVecStorage; X(f32), DenseVecStorage;
        Y(f32), DenseVecStorage; Z(f32), DenseVecStorage;
    }

    /// Registers each type with `c` and spawns `n` entities of it, each also with `Data`.
    pub(super) fn spawn_all<Ecs: super::Contender>(c: &mut Ecs, n: usize) {
        macro_rules! each {
            ($($t:ident)*) => {$(
                c.register::<$t>();
                c.spawn_with_data(n, $t(0.0));
            )*};
        }
        each!(A B C D E F G H I J K L M N O P Q R S T U V W X Y Z);
    }

    /// The number of types.
    pub(super) const TYPES: usize = 26;
}

/// The rotation about the x axis by 1.2 radians: every `Transform` starts as it.
fn start_transform() -> Transform {
    let (s, c) = 1.2f32.sin_cos();
    Transform([
        [1.0, 0.0, 0.0, 0.0],
        [0.0, c, -s, 0.0],
        [0.0, s, c, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ])
}

/// The four components of simple_insert, simple_iter and heavy_compute.
fn simple_bundle() -> (Transform, Position, Rotation, Velocity) {
    (
        start_transform(),
        Position([1.0, 0.0, 0.0]),
        Rotation([1.0, 0.0, 0.0]),
        Velocity([1.0, 0.0, 0.0]),
    )
}

/// The three components of churn's `i`-th entity.
fn mover(i: usize) -> (Position, Rotation, Velocity) {
    let x = (i % 1000) as f32;
    (
        Position([x, 0.0, 0.0]),
        Rotation([0.0, 1.0, 0.0]),
        Velocity([1.0, 0.5, 0.25]),
    )
}

/// `position += velocity`.
#[inline]
fn step(p: &mut Position, v: &Velocity) {
    for (p, v) in p.0.iter_mut().zip(v.0) {
        *p += v;
    }
}

/// The inverse of `m`, or `None` if it is singular: the cofactors from the 2x2
/// sub-determinants of the top two and the bottom two rows (Laplace expansion).
fn invert(m: &Mat4) -> Option<Mat4> {
    let [[a00, a01, a02, a03], [a10, a11, a12, a13], [a20, a21, a22, a23], [a30, a31, a32, a33]] =
        *m;
    let s0 = a00 * a11 - a10 * a01;
    let s1 = a00 * a12 - a10 * a02;
    let s2 = a00 * a13 - a10 * a03;
    let s3 = a01 * a12 - a11 * a02;
    let s4 = a01 * a13 - a11 * a03;
    let s5 = a02 * a13 - a12 * a03;
    let c0 = a20 * a31 - a30 * a21;
    let c1 = a20 * a32 - a30 * a22;
    let c2 = a20 * a33 - a30 * a23;
    let c3 = a21 * a32 - a31 * a22;
    let c4 = a21 * a33 - a31 * a23;
    let c5 = a22 * a33 - a32 * a23;
    let det = s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0;
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let r = 1.0 / det;
    Some([
        [
            (a11 * c5 - a12 * c4 + a13 * c3) * r,
            (-a01 * c5 + a02 * c4 - a03 * c3) * r,
            (a31 * s5 - a32 * s4 + a33 * s3) * r,
            (-a21 * s5 + a22 * s4 - a23 * s3) * r,
        ],
        [
            (-a10 * c5 + a12 * c2 - a13 * c1) * r,
            (a00 * c5 - a02 * c2 + a03 * c1) * r,
            (-a30 * s5 + a32 * s2 - a33 * s1) * r,
            (a20 * s5 - a22 * s2 + a23 * s1) * r,
        ],
        [
            (a10 * c4 - a11 * c2 + a13 * c0) * r,
            (-a00 * c4 + a01 * c2 - a03 * c0) * r,
            (a30 * s4 - a31 * s2 + a33 * s0) * r,
            (-a20 * s4 + a21 * s2 - a23 * s0) * r,
        ],
        [
            (-a10 * c3 + a11 * c1 - a12 * c0) * r,
            (a00 * c3 - a01 * c1 + a02 * c0) * r,
            (-a30 * s3 + a31 * s1 - a32 * s0) * r,
            (a20 * s3 - a21 * s1 + a22 * s0) * r,
        ],
    ])
}

/// heavy_compute's work for one entity: invert its transform 100 times, then turn its
/// position by the result. Never inlined, so that every contender runs the same machine code
/// and only the ECS around it differs.
#[inline(never)]
fn heavy(p: &mut Position, t: &mut Transform) {
    for _ in 0..100 {
        if let Some(inv) = invert(&t.0) {
            t.0 = inv;
        }
    }
    let v = p.0;
    for (i, row) in t.0.iter().take(3).enumerate() {
        p.0[i] = row[0] * v[0] + row[1] * v[1] + row[2] * v[2];
    }
}

// --- contenders -----------------------------------------------------------------------------

/// One ECS: the steps of every workload.
trait Contender: Sized {
    /// The row's name.
    const NAME: &'static str;
    /// Its entity id.
    type Entity: Copy;

    /// An empty world.
    fn new() -> Self;
    /// Makes `T` known before its first use, for the crates that ask for it.
    fn register<T: Comp>(&mut self) {}
    /// Spawns `n` entities with [`simple_bundle`], in one batch.
    fn spawn_simple(&mut self, n: usize);
    /// `position += velocity` for every entity with both.
    fn move_all(&mut self);
    /// Spawns `n` entities with `value` and `Data(1.0)`, in one batch.
    fn spawn_with_data<T: Comp + Copy>(&mut self, n: usize, value: T);
    /// Doubles every `Data`.
    fn double_data(&mut self);
    /// [`heavy`] for every entity with a position and a transform, in parallel.
    fn heavy_compute(&mut self);
    /// Spawns `n` entities with `Held`, in one batch.
    fn spawn_held(&mut self, n: usize) -> Vec<Self::Entity>;
    /// Gives each of `es` an `Added`.
    fn add(&mut self, es: &[Self::Entity]);
    /// Takes each one's `Added` away.
    fn remove(&mut self, es: &[Self::Entity]);
    /// Spawns churn's `i`-th entity.
    fn spawn_mover(&mut self, i: usize) -> Self::Entity;
    /// The sum of the first coordinate of the `Position` of each of `es` (all alive), each
    /// looked up by entity.
    fn sum_positions(&mut self, es: &[Self::Entity]) -> f32;
    /// Despawns every one of `es` (all alive), through the crate's batch despawn where it has
    /// one.
    fn despawn_all(&mut self, es: &[Self::Entity]);
    /// Ends a frame's despawns, for the crates that defer them.
    fn end_despawns(&mut self) {}
    /// What the tests compare between contenders.
    #[cfg(test)]
    fn census(&mut self) -> Census;
}

/// A world's contents in a few numbers, equal for every contender after the same steps.
#[cfg(test)]
#[derive(Debug, PartialEq)]
struct Census {
    positions: usize,
    position_sum: f64,
    data_sum: f64,
    added: usize,
}

/// Registers the components of the simple workloads.
fn register_simple<C: Contender>(c: &mut C) {
    c.register::<Transform>();
    c.register::<Position>();
    c.register::<Rotation>();
    c.register::<Velocity>();
}

/// The world of the simple workloads, with `n` entities.
fn simple_world<C: Contender>(n: usize) -> C {
    let mut c = C::new();
    register_simple(&mut c);
    c.spawn_simple(n);
    c
}

/// The world of add_remove, with its `n` entities.
fn held_world<C: Contender>(n: usize) -> (C, Vec<C::Entity>) {
    let mut c = C::new();
    c.register::<Held>();
    c.register::<Added>();
    let es = c.spawn_held(n);
    (c, es)
}

/// The world of churn, with `n` entities.
fn churn_world<C: Contender>(n: usize) -> (C, Vec<C::Entity>) {
    let mut c = C::new();
    c.register::<Position>();
    c.register::<Rotation>();
    c.register::<Velocity>();
    let live = (0..n).map(|i| c.spawn_mover(i)).collect();
    (c, live)
}

/// The world of frag_iter.
fn frag_world<C: Contender>(per_type: usize) -> C {
    let mut c = C::new();
    c.register::<Data>();
    frag::spawn_all(&mut c, per_type);
    c
}

/// dod-world: batch spawn, `query().for_each`, `par_for_each`, a `view_mut` to insert and
/// remove one type (as shipyard's and specs' views), `spawn`, `despawn_batch`. With
/// `GROUPED`, the world owns two groups: `(Position, Velocity)` for the movement query and
/// `(Held, Added)` for add_remove. Without `BATCH`, it despawns one entity at a time, as the
/// crates without a batch despawn do.
struct DodWorld<const GROUPED: bool = false, const BATCH: bool = true>(dod_world::World);

/// The dod-world row with owning groups.
type DodGrouped = DodWorld<true>;

/// The dod-world row that despawns with `despawn`, one entity at a time.
type DodOneByOne = DodWorld<false, false>;

impl<const GROUPED: bool, const BATCH: bool> Contender for DodWorld<GROUPED, BATCH> {
    const NAME: &'static str = match (GROUPED, BATCH) {
        (false, true) => "dod_world::World",
        (true, true) => "dod_world::World (grouped)",
        (false, false) => "dod_world::World (despawn one by one)",
        (true, false) => "dod_world::World (grouped, despawn one by one)",
    };
    type Entity = dod_world::Entity;

    fn new() -> Self {
        if GROUPED {
            DodWorld(
                dod_world::World::builder()
                    .group::<(Position, Velocity)>()
                    .group::<(Held, Added)>()
                    .build(),
            )
        } else {
            DodWorld(dod_world::World::new())
        }
    }
    fn spawn_simple(&mut self, n: usize) {
        drop(self.0.spawn_batch((0..n).map(|_| simple_bundle())));
    }
    fn move_all(&mut self) {
        self.0
            .query::<(&mut Position, &Velocity)>()
            .for_each(|(p, v)| step(p, v));
    }
    fn spawn_with_data<T: Comp + Copy>(&mut self, n: usize, value: T) {
        drop(self.0.spawn_batch((0..n).map(|_| (value, Data(1.0)))));
    }
    fn double_data(&mut self) {
        self.0.query::<&mut Data>().for_each(|d| d.0 *= 2.0);
    }
    fn heavy_compute(&mut self) {
        self.0
            .query::<(&mut Position, &mut Transform)>()
            .par_for_each(|(p, t)| heavy(p, t));
    }
    fn spawn_held(&mut self, n: usize) -> Vec<Self::Entity> {
        self.0.spawn_batch((0..n).map(|_| (Held(0.0),))).collect()
    }
    fn add(&mut self, es: &[Self::Entity]) {
        let mut added = self.0.view_mut::<Added>();
        for &e in es {
            added.insert(e, Added(0.0)).expect("alive");
        }
    }
    fn remove(&mut self, es: &[Self::Entity]) {
        let mut added = self.0.view_mut::<Added>();
        for &e in es {
            added.remove(e);
        }
    }
    fn spawn_mover(&mut self, i: usize) -> Self::Entity {
        self.0.spawn(mover(i))
    }
    fn sum_positions(&mut self, es: &[Self::Entity]) -> f32 {
        let p = self.0.view_mut::<Position>();
        es.iter().map(|&e| p.get(e).expect("alive").0[0]).sum()
    }
    fn despawn_all(&mut self, es: &[Self::Entity]) {
        if BATCH {
            let despawned = self.0.despawn_batch(es.iter().copied());
            debug_assert_eq!(despawned, es.len());
        } else {
            for &e in es {
                self.0.despawn(e);
            }
        }
    }
    #[cfg(test)]
    fn census(&mut self) -> Census {
        let (mut positions, mut position_sum) = (0, 0.0);
        self.0.query::<&Position>().for_each(|p| {
            positions += 1;
            position_sum += p.0.iter().map(|&x| f64::from(x)).sum::<f64>();
        });
        let mut data_sum = 0.0;
        self.0
            .query::<&Data>()
            .for_each(|d| data_sum += f64::from(d.0));
        Census {
            positions,
            position_sum,
            data_sum,
            added: self.0.count::<Added>(),
        }
    }
}

/// hecs: `spawn_batch`, `query_mut`, `iter_batched` bridged to rayon (its docs' way to go
/// parallel), `insert_one` / `remove_one`.
struct Hecs(hecs::World);

impl Contender for Hecs {
    const NAME: &'static str = "hecs::World";
    type Entity = hecs::Entity;

    fn new() -> Self {
        Hecs(hecs::World::new())
    }
    fn spawn_simple(&mut self, n: usize) {
        drop(self.0.spawn_batch((0..n).map(|_| simple_bundle())));
    }
    fn move_all(&mut self) {
        for (p, v) in self.0.query_mut::<(&mut Position, &Velocity)>() {
            step(p, v);
        }
    }
    fn spawn_with_data<T: Comp + Copy>(&mut self, n: usize, value: T) {
        drop(self.0.spawn_batch((0..n).map(|_| (value, Data(1.0)))));
    }
    fn double_data(&mut self) {
        for d in self.0.query_mut::<&mut Data>() {
            d.0 *= 2.0;
        }
    }
    fn heavy_compute(&mut self) {
        use rayon::iter::{ParallelBridge, ParallelIterator};
        self.0
            .query::<(&mut Position, &mut Transform)>()
            .iter_batched(64)
            .par_bridge()
            .for_each(|batch| batch.for_each(|(p, t)| heavy(p, t)));
    }
    fn spawn_held(&mut self, n: usize) -> Vec<Self::Entity> {
        self.0.spawn_batch((0..n).map(|_| (Held(0.0),))).collect()
    }
    fn add(&mut self, es: &[Self::Entity]) {
        for &e in es {
            self.0.insert_one(e, Added(0.0)).expect("alive");
        }
    }
    fn remove(&mut self, es: &[Self::Entity]) {
        for &e in es {
            self.0.remove_one::<Added>(e).expect("has one");
        }
    }
    fn spawn_mover(&mut self, i: usize) -> Self::Entity {
        self.0.spawn(mover(i))
    }
    fn sum_positions(&mut self, es: &[Self::Entity]) -> f32 {
        let p = self.0.view_mut::<&Position>();
        es.iter().map(|&e| p.get(e).expect("alive").0[0]).sum()
    }
    fn despawn_all(&mut self, es: &[Self::Entity]) {
        for &e in es {
            self.0.despawn(e).expect("alive");
        }
    }
    #[cfg(test)]
    fn census(&mut self) -> Census {
        let (mut positions, mut position_sum) = (0, 0.0);
        for p in self.0.query_mut::<&Position>() {
            positions += 1;
            position_sum += p.0.iter().map(|&x| f64::from(x)).sum::<f64>();
        }
        let data_sum = self
            .0
            .query_mut::<&Data>()
            .into_iter()
            .map(|d| f64::from(d.0))
            .sum();
        Census {
            positions,
            position_sum,
            data_sum,
            added: self.0.query_mut::<&Added>().into_iter().count(),
        }
    }
}

/// The query states bevy's docs keep between runs (a system keeps them for you).
type BevyQuery<D, F = ()> = bevy_ecs::query::QueryState<D, F>;

/// bevy_ecs: `spawn_batch`, cached `QueryState`s, `par_iter_mut` on the compute task pool,
/// `entity_mut().insert` / `remove` with `Added` in a sparse set, `spawn` / `despawn`.
struct Bevy {
    world: bevy_ecs::world::World,
    moves: Option<BevyQuery<(&'static mut Position, &'static Velocity)>>,
    data: Option<BevyQuery<&'static mut Data>>,
    heavy: Option<BevyQuery<(&'static mut Position, &'static mut Transform)>>,
    positions: Option<BevyQuery<&'static Position>>,
}

impl Contender for Bevy {
    const NAME: &'static str = "bevy_ecs::World";
    type Entity = bevy_ecs::entity::Entity;

    fn new() -> Self {
        Bevy {
            world: bevy_ecs::world::World::new(),
            moves: None,
            data: None,
            heavy: None,
            positions: None,
        }
    }
    fn spawn_simple(&mut self, n: usize) {
        drop(self.world.spawn_batch((0..n).map(|_| simple_bundle())));
    }
    fn move_all(&mut self) {
        let q = self.moves.get_or_insert_with(|| self.world.query());
        q.iter_mut(&mut self.world)
            .for_each(|(mut p, v)| step(&mut p, v));
    }
    fn spawn_with_data<T: Comp + Copy>(&mut self, n: usize, value: T) {
        drop(self.world.spawn_batch((0..n).map(|_| (value, Data(1.0)))));
    }
    fn double_data(&mut self) {
        let q = self.data.get_or_insert_with(|| self.world.query());
        q.iter_mut(&mut self.world).for_each(|mut d| d.0 *= 2.0);
    }
    fn heavy_compute(&mut self) {
        bevy_tasks::ComputeTaskPool::get_or_init(bevy_tasks::TaskPool::default);
        let q = self.heavy.get_or_insert_with(|| self.world.query());
        q.par_iter_mut(&mut self.world)
            .for_each(|(mut p, mut t)| heavy(&mut p, &mut t));
    }
    fn spawn_held(&mut self, n: usize) -> Vec<Self::Entity> {
        self.world
            .spawn_batch((0..n).map(|_| (Held(0.0),)))
            .collect()
    }
    fn add(&mut self, es: &[Self::Entity]) {
        for &e in es {
            self.world.entity_mut(e).insert(Added(0.0));
        }
    }
    fn remove(&mut self, es: &[Self::Entity]) {
        for &e in es {
            self.world.entity_mut(e).remove::<Added>();
        }
    }
    fn spawn_mover(&mut self, i: usize) -> Self::Entity {
        self.world.spawn(mover(i)).id()
    }
    fn sum_positions(&mut self, es: &[Self::Entity]) -> f32 {
        // The state kept between samples, one `Query` per sample: `QueryState::get` would
        // update the state's archetypes on every lookup.
        let state = self.positions.get_or_insert_with(|| self.world.query());
        let q = state.query(&self.world);
        es.iter().map(|&e| q.get(e).expect("alive").0[0]).sum()
    }
    fn despawn_all(&mut self, es: &[Self::Entity]) {
        for &e in es {
            self.world.despawn(e);
        }
    }
    #[cfg(test)]
    fn census(&mut self) -> Census {
        let (mut positions, mut position_sum) = (0, 0.0);
        for p in self.world.query::<&Position>().iter(&self.world) {
            positions += 1;
            position_sum += p.0.iter().map(|&x| f64::from(x)).sum::<f64>();
        }
        let data_sum = self
            .world
            .query::<&Data>()
            .iter(&self.world)
            .map(|d| f64::from(d.0))
            .sum();
        let added = self.world.query::<&Added>().iter(&self.world).count();
        Census {
            positions,
            position_sum,
            data_sum,
            added,
        }
    }
}

/// shipyard: `bulk_add_entity`, views borrowed by `run` (for adding and removing components
/// too: `EntitiesView::add_component` and `ViewMut::delete`), `par_iter`, `add_entity` /
/// `delete_entity`.
struct Shipyard(shipyard::World);

impl Contender for Shipyard {
    const NAME: &'static str = "shipyard::World";
    type Entity = shipyard::EntityId;

    fn new() -> Self {
        Shipyard(shipyard::World::new())
    }
    fn spawn_simple(&mut self, n: usize) {
        self.0.bulk_add_entity((0..n).map(|_| simple_bundle()));
    }
    fn move_all(&mut self) {
        use shipyard::{IntoIter, View, ViewMut};
        self.0.run(|mut p: ViewMut<Position>, v: View<Velocity>| {
            for (p, v) in (&mut p, &v).iter() {
                step(p, v);
            }
        });
    }
    fn spawn_with_data<T: Comp + Copy>(&mut self, n: usize, value: T) {
        self.0.bulk_add_entity((0..n).map(|_| (value, Data(1.0))));
    }
    fn double_data(&mut self) {
        use shipyard::{IntoIter, ViewMut};
        self.0.run(|mut d: ViewMut<Data>| {
            for d in (&mut d).iter() {
                d.0 *= 2.0;
            }
        });
    }
    fn heavy_compute(&mut self) {
        use rayon::iter::ParallelIterator;
        use shipyard::{IntoIter, ViewMut};
        self.0
            .run(|mut p: ViewMut<Position>, mut t: ViewMut<Transform>| {
                (&mut p, &mut t).par_iter().for_each(|(p, t)| heavy(p, t));
            });
    }
    fn spawn_held(&mut self, n: usize) -> Vec<Self::Entity> {
        self.0
            .bulk_add_entity((0..n).map(|_| (Held(0.0),)))
            .collect()
    }
    fn add(&mut self, es: &[Self::Entity]) {
        use shipyard::{EntitiesView, ViewMut};
        self.0
            .run(|entities: EntitiesView, mut added: ViewMut<Added>| {
                for &e in es {
                    entities.add_component(e, &mut added, Added(0.0));
                }
            });
    }
    fn remove(&mut self, es: &[Self::Entity]) {
        use shipyard::{Delete, ViewMut};
        self.0.run(|mut added: ViewMut<Added>| {
            for &e in es {
                added.delete(e);
            }
        });
    }
    fn spawn_mover(&mut self, i: usize) -> Self::Entity {
        self.0.add_entity(mover(i))
    }
    fn sum_positions(&mut self, es: &[Self::Entity]) -> f32 {
        use shipyard::{Get, View};
        self.0
            .run(|p: View<Position>| es.iter().map(|&e| (&p).get(e).expect("alive").0[0]).sum())
    }
    fn despawn_all(&mut self, es: &[Self::Entity]) {
        for &e in es {
            self.0.delete_entity(e);
        }
    }
    #[cfg(test)]
    fn census(&mut self) -> Census {
        use shipyard::{IntoIter, View};
        self.0
            .run(|p: View<Position>, d: View<Data>, a: View<Added>| Census {
                positions: p.iter().count(),
                position_sum: p
                    .iter()
                    .map(|p| p.0.iter().map(|&x| f64::from(x)).sum::<f64>())
                    .sum(),
                data_sum: d.iter().map(|d| f64::from(d.0)).sum(),
                added: a.iter().count(),
            })
    }
}

/// sparsey: `extend`, `for_each` / `par_for_each`, `insert` / `delete`, `create` / `destroy`;
/// components registered before use.
struct Sparsey(sparsey::World);

impl Contender for Sparsey {
    const NAME: &'static str = "sparsey::World";
    type Entity = sparsey::Entity;

    fn new() -> Self {
        Sparsey(sparsey::World::default())
    }
    fn register<T: Comp>(&mut self) {
        self.0.register::<T>();
    }
    fn spawn_simple(&mut self, n: usize) {
        self.0.extend((0..n).map(|_| simple_bundle()));
    }
    fn move_all(&mut self) {
        self.0
            .for_each::<(&mut Position, &Velocity)>(|(p, v)| step(p, v));
    }
    fn spawn_with_data<T: Comp + Copy>(&mut self, n: usize, value: T) {
        self.0.extend((0..n).map(|_| (value, Data(1.0))));
    }
    fn double_data(&mut self) {
        self.0.for_each::<&mut Data>(|d| d.0 *= 2.0);
    }
    fn heavy_compute(&mut self) {
        self.0
            .par_for_each::<(&mut Position, &mut Transform)>(|(p, t)| heavy(p, t));
    }
    fn spawn_held(&mut self, n: usize) -> Vec<Self::Entity> {
        self.0.extend((0..n).map(|_| (Held(0.0),))).to_vec()
    }
    fn add(&mut self, es: &[Self::Entity]) {
        for &e in es {
            self.0.insert(e, (Added(0.0),));
        }
    }
    fn remove(&mut self, es: &[Self::Entity]) {
        for &e in es {
            self.0.delete::<(Added,)>(e);
        }
    }
    fn spawn_mover(&mut self, i: usize) -> Self::Entity {
        self.0.create(mover(i))
    }
    fn sum_positions(&mut self, es: &[Self::Entity]) -> f32 {
        let p = self.0.borrow::<Position>();
        es.iter().map(|&e| p.get(e).expect("alive").0[0]).sum()
    }
    fn despawn_all(&mut self, es: &[Self::Entity]) {
        for &e in es {
            self.0.destroy(e);
        }
    }
    #[cfg(test)]
    fn census(&mut self) -> Census {
        let (mut positions, mut position_sum) = (0, 0.0);
        self.0.for_each::<&Position>(|p| {
            positions += 1;
            position_sum += p.0.iter().map(|&x| f64::from(x)).sum::<f64>();
        });
        let mut data_sum = 0.0;
        self.0.for_each::<&Data>(|d| data_sum += f64::from(d.0));
        let mut added = 0;
        self.0.for_each::<&Added>(|_| added += 1);
        Census {
            positions,
            position_sum,
            data_sum,
            added,
        }
    }
}

/// specs: entity builders, storages joined (`join` / `par_join`), storage `insert` /
/// `remove`, `delete_entity` with `maintain` at the end of the despawns.
struct Specs(specs::World);

impl Contender for Specs {
    const NAME: &'static str = "specs::World";
    type Entity = specs::Entity;

    fn new() -> Self {
        use specs::WorldExt;
        Specs(specs::World::new())
    }
    fn register<T: Comp>(&mut self) {
        use specs::WorldExt;
        self.0.register::<T>();
    }
    fn spawn_simple(&mut self, n: usize) {
        use specs::{Builder, WorldExt};
        for _ in 0..n {
            let (t, p, r, v) = simple_bundle();
            self.0
                .create_entity()
                .with(t)
                .with(p)
                .with(r)
                .with(v)
                .build();
        }
    }
    fn move_all(&mut self) {
        use specs::{Join, WorldExt};
        let mut p = self.0.write_storage::<Position>();
        let v = self.0.read_storage::<Velocity>();
        for (p, v) in (&mut p, &v).join() {
            step(p, v);
        }
    }
    fn spawn_with_data<T: Comp + Copy>(&mut self, n: usize, value: T) {
        use specs::{Builder, WorldExt};
        for _ in 0..n {
            self.0.create_entity().with(value).with(Data(1.0)).build();
        }
    }
    fn double_data(&mut self) {
        use specs::{Join, WorldExt};
        for d in (&mut self.0.write_storage::<Data>()).join() {
            d.0 *= 2.0;
        }
    }
    fn heavy_compute(&mut self) {
        use rayon::iter::ParallelIterator;
        use specs::{ParJoin, WorldExt};
        let mut p = self.0.write_storage::<Position>();
        let mut t = self.0.write_storage::<Transform>();
        (&mut p, &mut t).par_join().for_each(|(p, t)| heavy(p, t));
    }
    fn spawn_held(&mut self, n: usize) -> Vec<Self::Entity> {
        use specs::{Builder, WorldExt};
        (0..n)
            .map(|_| self.0.create_entity().with(Held(0.0)).build())
            .collect()
    }
    fn add(&mut self, es: &[Self::Entity]) {
        use specs::WorldExt;
        let mut added = self.0.write_storage::<Added>();
        for &e in es {
            added.insert(e, Added(0.0)).expect("alive");
        }
    }
    fn remove(&mut self, es: &[Self::Entity]) {
        use specs::WorldExt;
        let mut added = self.0.write_storage::<Added>();
        for &e in es {
            added.remove(e);
        }
    }
    fn spawn_mover(&mut self, i: usize) -> Self::Entity {
        use specs::{Builder, WorldExt};
        let (p, r, v) = mover(i);
        self.0.create_entity().with(p).with(r).with(v).build()
    }
    fn sum_positions(&mut self, es: &[Self::Entity]) -> f32 {
        use specs::WorldExt;
        let p = self.0.read_storage::<Position>();
        es.iter().map(|&e| p.get(e).expect("alive").0[0]).sum()
    }
    fn despawn_all(&mut self, es: &[Self::Entity]) {
        use specs::WorldExt;
        self.0.delete_entities(es).expect("alive");
    }
    fn end_despawns(&mut self) {
        use specs::WorldExt;
        self.0.maintain();
    }
    #[cfg(test)]
    fn census(&mut self) -> Census {
        use specs::{Join, WorldExt};
        let p = self.0.read_storage::<Position>();
        let d = self.0.read_storage::<Data>();
        let a = self.0.read_storage::<Added>();
        Census {
            positions: (&p).join().count(),
            position_sum: (&p)
                .join()
                .map(|p| p.0.iter().map(|&x| f64::from(x)).sum::<f64>())
                .sum(),
            data_sum: (&d).join().map(|d| f64::from(d.0)).sum(),
            added: (&a).join().count(),
        }
    }
}

// --- workloads ------------------------------------------------------------------------------

/// The workloads, in table order.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Workload {
    SimpleInsert,
    SimpleIter,
    FragIter,
    HeavyCompute,
    AddRemove,
    Churn,
    Get,
}

impl Workload {
    /// The suite's workloads, the columns of the first table.
    const SUITE: [Workload; 5] = [
        Workload::SimpleInsert,
        Workload::SimpleIter,
        Workload::FragIter,
        Workload::HeavyCompute,
        Workload::AddRemove,
    ];

    fn name(self) -> &'static str {
        match self {
            Workload::SimpleInsert => "simple_insert",
            Workload::SimpleIter => "simple_iter",
            Workload::FragIter => "frag_iter",
            Workload::HeavyCompute => "heavy_compute",
            Workload::AddRemove => "add_remove",
            Workload::Churn => "churn",
            Workload::Get => "get",
        }
    }
}

/// The sizes of a run, and churn's random choices (the same for every contender).
struct Plan {
    /// Entities of simple_insert and simple_iter.
    simple: usize,
    /// Passes of simple_iter per sample.
    iter_passes: usize,
    /// Entities of each of frag_iter's types.
    frag_per_type: usize,
    /// Passes of frag_iter per sample.
    frag_passes: usize,
    /// Entities of heavy_compute.
    heavy: usize,
    /// Entities of add_remove.
    add_remove: usize,
    /// Entities alive in churn.
    churn: usize,
    /// Samples per repetition: short samples, many of them, so that a few slowed down by the
    /// machine's other work do not move the median.
    per_rep: usize,
    /// Frames of churn per repetition (one frame per sample).
    frames: usize,
    /// Entities despawned (and spawned) per frame.
    per_frame: usize,
    /// Per frame, the positions in the list of live entities to despawn, in order (each below
    /// the list's length at that point).
    picks: Vec<Vec<u32>>,
    /// The positions in churn's list of live entities that a sample of random gets looks up,
    /// in order.
    gets: Vec<u32>,
    /// Repetitions (`--reps`).
    reps: usize,
}

impl Plan {
    fn new(cfg: &Config) -> Plan {
        let churn = cfg.n_or(100_000, 10_000);
        let per_frame = (churn / 100).max(1);
        let frames = if cfg.quick { 4 } else { 20 };
        let mut rng = cfg.rng("world churn");
        // One frame per sample, and one more for the warm-up round.
        let picks = (0..frames * cfg.reps + 1)
            .map(|_| {
                (0..per_frame)
                    .map(|k| rng.below(churn - k) as u32)
                    .collect()
            })
            .collect();
        let gets = (0..churn / 10).map(|_| rng.below(churn) as u32).collect();
        Plan {
            simple: 10_000,
            iter_passes: if cfg.quick { 5 } else { 20 },
            frag_per_type: 20,
            frag_passes: if cfg.quick { 50 } else { 400 },
            heavy: 1_000,
            add_remove: 10_000,
            churn,
            per_rep: if cfg.quick { 2 } else { 5 },
            frames,
            per_frame,
            picks,
            gets,
            reps: cfg.reps,
        }
    }

    /// The samples of `w` a cell is the median of.
    fn samples(&self, w: Workload) -> usize {
        match w {
            Workload::Churn => self.reps * self.frames,
            _ => self.reps * self.per_rep,
        }
    }

    /// What one sample of `w` is divided by: entities (times passes), or 1 for churn's frame.
    fn per_sample(&self, w: Workload) -> usize {
        match w {
            Workload::SimpleInsert => self.simple,
            Workload::SimpleIter => self.simple * self.iter_passes,
            Workload::FragIter => frag::TYPES * self.frag_per_type * self.frag_passes,
            Workload::HeavyCompute => self.heavy,
            Workload::AddRemove => self.add_remove,
            Workload::Churn => 1,
            Workload::Get => self.gets.len(),
        }
    }
}

/// One frame of churn: despawn the picked entities (gathered in `dead`), spawn as many, move
/// everything.
fn frame<C: Contender>(
    c: &mut C,
    live: &mut Vec<C::Entity>,
    dead: &mut Vec<C::Entity>,
    picks: &[u32],
    next: &mut usize,
) {
    dead.clear();
    dead.extend(picks.iter().map(|&j| live.swap_remove(j as usize)));
    c.despawn_all(dead);
    c.end_despawns();
    for _ in 0..picks.len() {
        live.push(c.spawn_mover(*next));
        *next += 1;
    }
    c.move_all();
}

/// Runs `passes` calls of `f` on `c` and times them.
fn timed<C>(c: &mut C, passes: usize, f: fn(&mut C)) -> Duration {
    let d = time(|| {
        for _ in 0..passes {
            f(c);
        }
    })
    .0;
    black_box(c);
    d
}

/// Contender `C`'s sampler of workload `w`: it sets its world up now, and each call times one
/// sample.
fn sampler<'p, C: Contender + 'static>(w: Workload, plan: &'p Plan) -> Sampler<'p> {
    match w {
        Workload::SimpleInsert => Box::new(move || {
            let (d, c) = time(|| simple_world::<C>(plan.simple));
            drop(c);
            d
        }),
        Workload::SimpleIter => {
            let mut c = simple_world::<C>(plan.simple);
            Box::new(move || timed(&mut c, plan.iter_passes, C::move_all))
        }
        Workload::FragIter => {
            let mut c = frag_world::<C>(plan.frag_per_type);
            Box::new(move || timed(&mut c, plan.frag_passes, C::double_data))
        }
        Workload::HeavyCompute => {
            let mut c = simple_world::<C>(plan.heavy);
            Box::new(move || timed(&mut c, 1, C::heavy_compute))
        }
        Workload::AddRemove => {
            let (mut c, es) = held_world::<C>(plan.add_remove);
            Box::new(move || {
                let d = time(|| {
                    c.add(&es);
                    c.remove(&es);
                })
                .0;
                black_box(&mut c);
                d
            })
        }
        Workload::Get => {
            let (mut c, live) = churn_world::<C>(plan.churn);
            let es: Vec<C::Entity> = plan.gets.iter().map(|&i| live[i as usize]).collect();
            Box::new(move || {
                let (d, sum) = time(|| c.sum_positions(&es));
                black_box(sum);
                d
            })
        }
        Workload::Churn => {
            let (mut c, mut live) = churn_world::<C>(plan.churn);
            let (mut next, mut frames) = (plan.churn, plan.picks.iter().cycle());
            let mut dead = Vec::with_capacity(plan.per_frame);
            Box::new(move || {
                let picks = frames.next().expect("a cycle never ends");
                let d = time(|| frame(&mut c, &mut live, &mut dead, picks, &mut next)).0;
                black_box(&mut c);
                d
            })
        }
    }
}

/// Heap bytes held by `C`'s world: empty, and with `n` entities of [`simple_bundle`].
fn memory<C: Contender>(n: usize) -> (isize, isize) {
    let before = live_bytes();
    let mut c = C::new();
    register_simple(&mut c);
    let empty = live_bytes() - before;
    c.spawn_simple(n);
    let full = live_bytes() - before;
    drop(c);
    (empty, full)
}

/// A row of the report: a contender's name, its samplers and its memory.
#[derive(Clone, Copy)]
struct Row {
    name: &'static str,
    sampler: for<'p> fn(Workload, &'p Plan) -> Sampler<'p>,
    memory: fn(usize) -> (isize, isize),
}

const fn row<C: Contender + 'static>() -> Row {
    Row {
        name: C::NAME,
        sampler: sampler::<C>,
        memory: memory::<C>,
    }
}

/// Every contender; dod-world first.
const ROWS: [Row; 6] = [
    row::<DodWorld>(),
    row::<Hecs>(),
    row::<Bevy>(),
    row::<Shipyard>(),
    row::<Sparsey>(),
    row::<Specs>(),
];

/// The timings of `rows` on `w`, measured together in rotating rounds.
fn measure(plan: &Plan, rows: &[Row], w: Workload) -> Vec<Timing> {
    let mut contenders: Vec<Boxed<'_>> = rows
        .iter()
        .map(|r| harness::contender(r.name, (r.sampler)(w, plan)))
        .collect();
    harness::measure(plan.samples(w), &mut contenders)
}

/// Fills column `col` of `t` with `w`'s timings, in ns per entity (or per frame).
fn fill(t: &mut Table, col: usize, plan: &Plan, w: Workload, timings: &[Timing]) {
    t.fill(col, timings, |d| per_elem(d, plan.per_sample(w)));
}

// --- tables ---------------------------------------------------------------------------------

/// `dod_world::World`'s value in column `col` over the best peer's (the best row not of
/// dod-world), if both were measured.
fn ratio_to_best_peer(t: &Table, col: usize) -> Option<(f64, &str)> {
    let dod = t.rows.iter().find(|r| r.name == <DodWorld>::NAME)?.cells[col]?;
    let (best, name) = t
        .rows
        .iter()
        .filter(|r| !r.name.starts_with("dod_world::"))
        .filter_map(|r| Some((r.cells[col]?, r.name.as_str())))
        .min_by(|a, b| a.0.total_cmp(&b.0))?;
    Some((dod / best, name))
}

/// The verdict line of column `col` against `target` (`None`: measured, no target).
fn verdict(t: &Table, col: usize, target: Option<f64>) -> String {
    let name = &t.columns[col];
    match (ratio_to_best_peer(t, col), target) {
        (Some((r, peer)), Some(limit)) => format!(
            "{name}: dod_world / best peer ({peer}) = {r:.2}x (target <= {limit:.1}x: {})",
            if r <= limit { "met" } else { "not met" }
        ),
        (Some((r, peer)), None) => {
            format!("{name}: dod_world / best peer ({peer}) = {r:.2}x (measured, no target)")
        }
        (None, _) => format!("{name}: not measured"),
    }
}

/// The target of a suite column, as a ratio to the best peer.
fn target(w: Workload) -> Option<f64> {
    match w {
        Workload::AddRemove | Workload::Churn => Some(1.0),
        Workload::SimpleInsert | Workload::FragIter | Workload::HeavyCompute => Some(1.1),
        Workload::SimpleIter | Workload::Get => None,
    }
}

fn suite_table(plan: &Plan) -> Table {
    let cols: Vec<&str> = Workload::SUITE.iter().map(|w| w.name()).collect();
    let mut t = Table::new(
        "world",
        "world: the ECS bench suite's workloads",
        "ns per entity (median)",
    )
    .columns(&cols);
    t.empty_rows(ROWS.iter().map(|r| r.name));
    for (c, &w) in Workload::SUITE.iter().enumerate() {
        progress(format!("world: {}", w.name()));
        let timings = measure(plan, &ROWS, w);
        fill(&mut t, c, plan, w, &timings);
    }
    for (c, &w) in Workload::SUITE.iter().enumerate() {
        t.note(verdict(&t, c, target(w)));
    }
    t.note(format!(
        "simple_insert: a new world and {} entities with Transform (4x4 f32), Position, \
         Rotation, Velocity (3 x f32), spawned in one batch; dropping the world is not timed. \
         simple_iter: position += velocity over them. frag_iter: 26 types A..Z, {} entities \
         each, every one with Data(f32); double every Data. heavy_compute: {} such entities, in \
         parallel invert the transform 100 times (one inversion function for every row), then \
         turn the position. add_remove: {} entities with one component; add a second to each, \
         then remove it from each.",
        plan.simple, plan.frag_per_type, plan.heavy, plan.add_remove
    ));
    t.note(
        "Each crate as its docs recommend: batch spawns (specs: entity builders), bevy_ecs's \
         query states kept between runs and its sparse-set storage for the component added and \
         removed, hecs's iter_batched(64) bridged to rayon, specs' VecStorage for common \
         components and DenseVecStorage for A..Z, shipyard's and specs' views for the \
         component added and removed (as dod_world's view_mut). Every row splits \
         heavy_compute's 1 000 entities over the threads of its pool (bevy_ecs's own, the \
         others rayon's). Targets: \
         add_remove <= 1.0x the best peer; simple_insert, frag_iter and heavy_compute <= 1.1x; \
         simple_iter measured.",
    );
    t.note(format!(
        "Each cell: the median of {} samples ({} x --reps), the rows timed in turns; a sample \
         of simple_iter is {} passes, of frag_iter {}.",
        plan.samples(Workload::SimpleIter),
        plan.per_rep,
        plan.iter_passes,
        plan.frag_passes
    ));
    t
}

fn churn_table(plan: &Plan) -> Table {
    let mut t = Table::new(
        "world",
        format!(
            "world: a game's frame, {} entities, {} despawned and {} spawned per frame",
            plan.churn, plan.per_frame, plan.per_frame
        ),
        "µs per frame (median)",
    )
    .columns(&["churn"]);
    progress("world: churn");
    // Every contender, and dod-world despawning one by one after its own row.
    let rows: Vec<Row> = ROWS[..1]
        .iter()
        .copied()
        .chain([row::<DodOneByOne>()])
        .chain(ROWS[1..].iter().copied())
        .collect();
    let timings = measure(plan, &rows, Workload::Churn);
    t.fill(0, &timings, |d| d.as_secs_f64() * 1e6);
    t.note(verdict(&t, 0, target(Workload::Churn)));
    if let Some((_, peer)) = ratio_to_best_peer(&t, 0) {
        t.note(ratio_verdict(&t, "churn", DodOneByOne::NAME, peer, None));
    }
    t.note(format!(
        "Each frame despawns {} random live entities (the same seeded choices for every row; \
         in one call where the crate has a batch despawn, dod-world's despawn_batch and \
         specs' delete_entities, else one by one; {} is dod-world with a despawn loop), \
         spawns {} with Position, Rotation and Velocity one at a time, then runs one \
         position += velocity query. Each cell: the median of {} frames, one per sample, the \
         rows timed in turns.",
        plan.per_frame,
        DodOneByOne::NAME,
        plan.per_frame,
        plan.samples(Workload::Churn)
    ));
    t
}

fn get_table(plan: &Plan) -> Table {
    let mut t = Table::new(
        "world",
        format!(
            "world: random access, {} random lookups among {} entities",
            plan.gets.len(),
            plan.churn
        ),
        "ns per lookup (median)",
    )
    .columns(&["get"]);
    progress("world: get");
    let timings = measure(plan, &ROWS, Workload::Get);
    fill(&mut t, 0, plan, Workload::Get, &timings);
    t.note(verdict(&t, 0, target(Workload::Get)));
    t.note(
        "Churn's world before its first frame (every entity with Position, Rotation and \
         Velocity); each sample sums one coordinate of the Position of the same random live \
         entities, each looked up by entity through the crate's random-access form, made \
         once per sample: dod_world's and hecs's view_mut, bevy_ecs's query state, \
         shipyard's and sparsey's views, specs' read storage.",
    );
    t
}

/// The world rows of the groups table: dod-world with and without owning groups, and the two
/// archetype ECSs a group is meant to match. Its add_remove column also times the two
/// stripped layouts of [`add_remove_floors`].
const GROUP_ROWS: [Row; 4] = [
    row::<DodGrouped>(),
    row::<DodWorld>(),
    row::<Hecs>(),
    row::<Bevy>(),
];

/// "`label`: `a` / `b` = r (target <= limit: met)", or "not measured".
fn ratio_verdict(t: &Table, col: &str, a: &str, b: &str, limit: Option<f64>) -> String {
    match (t.ratio(a, b, col), limit) {
        (Some(r), Some(limit)) => format!(
            "{col}: {a} / {b} = {r:.2}x (target <= {limit:.1}x: {})",
            if r <= limit { "met" } else { "not met" }
        ),
        (Some(r), None) => format!("{col}: {a} / {b} = {r:.2}x (measured, no target)"),
        (None, _) => format!("{col}: {a} / {b}: not measured"),
    }
}

/// The faster of hecs and bevy_ecs in column `col`: the best archetype ECS.
fn best_archetype(t: &Table, col: &str) -> &'static str {
    let hecs = t.get(Hecs::NAME, col).unwrap_or(f64::INFINITY);
    let bevy = t.get(Bevy::NAME, col).unwrap_or(f64::INFINITY);
    if hecs <= bevy {
        Hecs::NAME
    } else {
        Bevy::NAME
    }
}

fn groups_table(plan: &Plan) -> Table {
    let ws = [Workload::SimpleIter, Workload::AddRemove];
    let cols: Vec<&str> = ws.iter().map(|w| w.name()).collect();
    let mut t = Table::new(
        "world",
        "world: owning groups against archetypes",
        "ns per entity (median)",
    )
    .columns(&cols);
    t.empty_rows(GROUP_ROWS.iter().map(|r| r.name));
    for (c, &w) in ws.iter().enumerate() {
        progress(format!("world: {} with groups", w.name()));
        let mut contenders: Vec<Boxed<'_>> = GROUP_ROWS
            .iter()
            .map(|r| harness::contender(r.name, (r.sampler)(w, plan)))
            .collect();
        if w == Workload::AddRemove {
            contenders.extend(add_remove_floors(plan.add_remove as u32));
        }
        let timings = harness::measure(plan.samples(w), &mut contenders);
        fill(&mut t, c, plan, w, &timings);
    }
    let (g, u) = (DodGrouped::NAME, <DodWorld>::NAME);
    let iter = Workload::SimpleIter.name();
    let add = Workload::AddRemove.name();
    t.note(ratio_verdict(
        &t,
        iter,
        g,
        best_archetype(&t, iter),
        Some(1.1),
    ));
    t.note(ratio_verdict(&t, iter, u, best_archetype(&t, iter), None));
    t.note(ratio_verdict(&t, add, g, u, Some(1.5)));
    t.note(ratio_verdict(&t, add, GROUP_FLOOR, PLAIN_FLOOR, None));
    t.note(ratio_verdict(
        &t,
        add,
        g,
        best_archetype(&t, add),
        Some(1.0),
    ));
    t.note(
        "The grouped world owns (Position, Velocity) and (Held, Added): simple_iter's query \
         walks the group's packed prefix in lockstep; add_remove's Added joins and leaves the \
         group with one swap per owned storage. The workloads are the suite table's; every row \
         of this table is timed in turns again, in this table's own rounds.",
    );
    t.note(format!(
        "{GROUP_FLOOR}: add_remove on two bare sparse sets (a flat sparse array, the dense \
         entities and the dense values) whose first entries are the entities with both, in one \
         order: an entity that gains its second component is swapped to the group's end in \
         both, one that loses it is swapped out first. {PLAIN_FLOOR}: the same set without a \
         group, an insertion and a swap-and-pop. No world around either (no liveness check, \
         erased storages or stamps). Their ratio is what the group's layout itself costs on \
         add_remove in this run: one more row each, with the same noise as the others, not a \
         proven bound."
    ));
    t
}

/// The name of the owning group's stripped layout in the groups table.
const GROUP_FLOOR: &str = "owning group's layout, stripped (floor)";

/// The name of the plain sparse set's stripped layout in the groups table (the sparse table's
/// name for the same layout).
const PLAIN_FLOOR: &str = "SparseSet's layout, stripped (floor)";

/// add_remove on the stripped layouts, grouped and plain ([`floors::GroupedPair`],
/// [`floors::SoaSet`]), over entities `0..n`.
fn add_remove_floors<'p>(n: u32) -> [Boxed<'p>; 2] {
    [
        add_remove_floor(
            GROUP_FLOOR,
            n,
            floors::GroupedPair::new(n, 0.0f32),
            |pair, e| pair.add(e, 1.0),
            |pair, e| {
                pair.remove(e);
            },
        ),
        add_remove_floor(
            PLAIN_FLOOR,
            n,
            floors::SoaSet::empty(n),
            |set, e| {
                set.insert(e, 0.0f32);
            },
            |set, e| {
                set.swap_remove(e);
            },
        ),
    ]
}

/// The contender `name` whose sample adds to entities `0..n` of `state`, then removes from
/// them.
fn add_remove_floor<'p, S: 'p>(
    name: &str,
    n: u32,
    mut state: S,
    add: impl Fn(&mut S, u32) + 'p,
    remove: impl Fn(&mut S, u32) + 'p,
) -> Boxed<'p> {
    harness::contender(name, move || {
        let d = time(|| {
            for e in 0..n {
                add(&mut state, e);
            }
            for e in 0..n {
                remove(&mut state, e);
            }
        })
        .0;
        black_box(&mut state);
        d
    })
}

/// The change-tracking workload: `n` entities with a `Position` (tracked) and a `Velocity`;
/// each frame writes the position of 1 % of them, picked at random, then a `Changed<Position>`
/// query reads what changed, then the frame ends.
struct TrackPlan {
    n: usize,
    /// Per frame, distinct entity positions (in spawn order) to write.
    picks: Vec<Vec<u32>>,
    /// Samples per cell.
    samples: usize,
}

impl TrackPlan {
    fn new(cfg: &Config, plan: &Plan) -> TrackPlan {
        let n = plan.churn;
        let per_frame = (n / 100).max(1);
        let samples = plan.samples(Workload::Churn);
        let mut rng = cfg.rng("world tracking");
        let mut taken = vec![false; n];
        let picks = (0..samples + 1)
            .map(|_| {
                let mut p = Vec::with_capacity(per_frame);
                while p.len() < per_frame {
                    let i = rng.below(n);
                    if !std::mem::replace(&mut taken[i], true) {
                        p.push(i as u32);
                    }
                }
                for &i in &p {
                    taken[i as usize] = false;
                }
                p
            })
            .collect();
        TrackPlan { n, picks, samples }
    }
}

/// An ECS with change detection: the steps of the tracking workload.
trait Tracker: Sized {
    /// `n` entities with a position and a velocity; `tracked`: whether `Position` changes are
    /// tracked (bevy always tracks). The spawns are already seen by the changed query.
    fn new(n: usize, tracked: bool) -> Self;
    /// Writes the positions of the entities at `picks`.
    fn write(&mut self, picks: &[u32]);
    /// The `Changed<Position>` query: the number of positions changed since its last run.
    fn changed(&mut self) -> usize;
    /// The frame boundary.
    fn end_frame(&mut self);
    /// `position += velocity` over every entity.
    fn iterate(&mut self);
}

struct DodTracker {
    world: dod_world::World,
    es: Vec<dod_world::Entity>,
    changed: dod_world::QueryState<&'static Position, dod_world::Changed<Position>>,
}

impl Tracker for DodTracker {
    fn new(n: usize, tracked: bool) -> Self {
        let mut world = dod_world::World::new();
        if tracked {
            world.track::<Position>();
        }
        let es = world
            .spawn_batch((0..n).map(|i| (mover(i).0, mover(i).2)))
            .collect();
        let mut t = DodTracker {
            world,
            es,
            changed: dod_world::QueryState::new(),
        };
        if tracked {
            t.changed();
        }
        t.end_frame();
        t
    }
    fn write(&mut self, picks: &[u32]) {
        for &i in picks {
            if let Some(p) = self.world.get_mut::<Position>(self.es[i as usize]) {
                p.0[0] += 1.0;
            }
        }
    }
    fn changed(&mut self) -> usize {
        let mut n = 0;
        self.changed
            .query(&mut self.world)
            .for_each(|p| n += usize::from(p.0[0] > f32::MIN));
        n
    }
    fn end_frame(&mut self) {
        self.world.maintain();
    }
    fn iterate(&mut self) {
        self.world
            .query::<(&mut Position, &Velocity)>()
            .for_each(|(p, v)| step(p, v));
    }
}

struct BevyTracker {
    world: bevy_ecs::world::World,
    es: Vec<bevy_ecs::entity::Entity>,
    changed: BevyQuery<&'static Position, bevy_ecs::query::Changed<Position>>,
    moves: BevyQuery<(&'static mut Position, &'static Velocity)>,
}

impl Tracker for BevyTracker {
    fn new(n: usize, _tracked: bool) -> Self {
        let mut world = bevy_ecs::world::World::new();
        let es = world
            .spawn_batch((0..n).map(|i| (mover(i).0, mover(i).2)))
            .collect();
        let changed = world.query_filtered();
        let moves = world.query();
        let mut t = BevyTracker {
            world,
            es,
            changed,
            moves,
        };
        t.changed();
        t.end_frame();
        t
    }
    fn write(&mut self, picks: &[u32]) {
        for &i in picks {
            if let Some(mut p) = self.world.get_mut::<Position>(self.es[i as usize]) {
                p.0[0] += 1.0;
            }
        }
    }
    fn changed(&mut self) -> usize {
        let mut n = 0;
        self.changed
            .iter(&self.world)
            .for_each(|p| n += usize::from(p.0[0] > f32::MIN));
        n
    }
    fn end_frame(&mut self) {
        self.world.clear_trackers();
    }
    fn iterate(&mut self) {
        self.moves
            .iter_mut(&mut self.world)
            .for_each(|(mut p, v)| step(&mut p, v));
    }
}

/// The columns of the tracking table.
#[derive(Clone, Copy, PartialEq)]
enum TrackStep {
    Write,
    Changed,
    EndFrame,
    Iterate,
}

impl TrackStep {
    const ALL: [TrackStep; 4] = [
        TrackStep::Write,
        TrackStep::Changed,
        TrackStep::EndFrame,
        TrackStep::Iterate,
    ];

    fn name(self) -> &'static str {
        match self {
            TrackStep::Write => "write 1%",
            TrackStep::Changed => "Changed query",
            TrackStep::EndFrame => "frame end",
            TrackStep::Iterate => "iterate",
        }
    }
}

/// `X`'s sampler of `step`: each call runs one frame (writes, the changed query, the frame
/// end) and times `step` alone; `Iterate` times one movement pass instead.
fn track_sampler<'p, X: Tracker + 'static>(
    step: TrackStep,
    tp: &'p TrackPlan,
    tracked: bool,
) -> Sampler<'p> {
    let mut x = X::new(tp.n, tracked);
    let mut frames = tp.picks.iter().cycle();
    Box::new(move || {
        let picks = frames.next().expect("a cycle never ends");
        if step == TrackStep::Iterate {
            let d = time(|| x.iterate()).0;
            black_box(&mut x);
            return d;
        }
        let mut d = Duration::ZERO;
        let mut timed = |this: TrackStep, f: &mut dyn FnMut()| {
            if this == step {
                d = time(f).0;
            } else {
                f();
            }
        };
        timed(TrackStep::Write, &mut || x.write(picks));
        let mut seen = 0;
        if tracked {
            timed(TrackStep::Changed, &mut || seen = x.changed());
            assert_eq!(
                seen,
                picks.len(),
                "the changed query sees the frame's writes"
            );
        }
        timed(TrackStep::EndFrame, &mut || x.end_frame());
        black_box(&mut x);
        d
    })
}

/// A row of the tracking table: its name, the steps it is measured on, and their samplers.
struct TrackRow {
    name: &'static str,
    steps: &'static [TrackStep],
    sampler: for<'p> fn(TrackStep, &'p TrackPlan) -> Sampler<'p>,
}

const TRACKED: &str = "dod_world::World (Position tracked)";
const UNTRACKED: &str = "dod_world::World (untracked)";

const TRACK_ROWS: [TrackRow; 3] = [
    TrackRow {
        name: TRACKED,
        steps: &TrackStep::ALL,
        sampler: |s, tp| track_sampler::<DodTracker>(s, tp, true),
    },
    TrackRow {
        name: Bevy::NAME,
        steps: &TrackStep::ALL,
        sampler: |s, tp| track_sampler::<BevyTracker>(s, tp, true),
    },
    TrackRow {
        name: UNTRACKED,
        steps: &[TrackStep::Write, TrackStep::EndFrame, TrackStep::Iterate],
        sampler: |s, tp| track_sampler::<DodTracker>(s, tp, false),
    },
];

fn tracking_table(cfg: &Config, plan: &Plan) -> Table {
    let tp = TrackPlan::new(cfg, plan);
    let cols: Vec<&str> = TrackStep::ALL.iter().map(|s| s.name()).collect();
    let mut t = Table::new(
        "world",
        format!(
            "world: change tracking, {} entities, {} positions written per frame",
            tp.n,
            tp.picks[0].len()
        ),
        "µs per frame (median)",
    )
    .columns(&cols);
    t.empty_rows(TRACK_ROWS.iter().map(|r| r.name));
    for (c, &step) in TrackStep::ALL.iter().enumerate() {
        progress(format!("world: tracking, {}", step.name()));
        let mut contenders: Vec<Boxed<'_>> = TRACK_ROWS
            .iter()
            .filter(|r| r.steps.contains(&step))
            .map(|r| harness::contender(r.name, (r.sampler)(step, &tp)))
            .collect();
        let timings = harness::measure(tp.samples, &mut contenders);
        drop(contenders);
        t.fill(c, &timings, |d| d.as_secs_f64() * 1e6);
    }
    t.note(ratio_verdict(
        &t,
        TrackStep::Changed.name(),
        TRACKED,
        Bevy::NAME,
        Some(1.0),
    ));
    t.note(ratio_verdict(
        &t,
        TrackStep::Iterate.name(),
        TRACKED,
        UNTRACKED,
        Some(1.2),
    ));
    t.note(format!(
        "Each frame writes the positions of {} entities picked at random (the same for every \
         row) through get_mut, runs a Changed<Position> query kept between frames (a \
         QueryState in both crates) that must see exactly those, and ends the frame \
         (dod_world: maintain, which also forgets the removed lists; bevy_ecs: clear_trackers). \
         Each column times one of those steps; iterate times one position += velocity pass \
         over every entity (a &mut Position marks every value changed in both crates). \
         Each cell: the median of {} samples, the rows timed in turns.",
        tp.picks[0].len(),
        tp.samples
    ));
    t
}

fn memory_table(plan: &Plan) -> Table {
    progress("world: memory");
    let n = plan.simple;
    let mut t = Table::new(
        "world",
        format!("world: heap bytes after simple_insert ({n} entities)"),
        "bytes per entity",
    )
    .columns(&["per entity"]);
    let mut empties = Vec::new();
    for r in &ROWS {
        let (empty, full) = (r.memory)(n);
        t.row(r.name, vec![Some(full as f64 / n as f64)]);
        empties.push(format!("{} {empty} B", r.name));
    }
    let v = match ratio_to_best_peer(&t, 0) {
        Some((r, peer)) => format!(
            "per entity: dod_world / smallest peer ({peer}) = {r:.2}x (target <= 1.0x: {})",
            if r <= 1.0 { "met" } else { "not met" }
        ),
        None => "per entity: not measured".to_string(),
    };
    t.note(v);
    t.note(format!(
        "per entity: the world's live heap bytes after simple_insert (counted by the report's \
         allocator, the empty world included) divided by the entity count. The empty worlds, \
         with the four component types registered where a crate asks for it: {}.",
        empties.join(", ")
    ));
    t
}

fn run(cfg: &Config) -> Vec<Table> {
    let plan = Plan::new(cfg);
    let memory = memory_table(&plan);
    vec![
        suite_table(&plan),
        groups_table(&plan),
        churn_table(&plan),
        get_table(&plan),
        tracking_table(cfg, &plan),
        memory,
    ]
}

/// The section.
pub const SECTION: super::Section = super::Section {
    name: "world",
    about: "dod_world::World vs hecs, bevy_ecs, shipyard, sparsey, specs: the ECS bench suite, owning groups, a frame with churn, change tracking, bytes per entity",
    run,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-3 * a.abs().max(b.abs()).max(1.0)
    }

    fn same(a: &Census, b: &Census) -> bool {
        a.positions == b.positions
            && a.added == b.added
            && close(a.position_sum, b.position_sum)
            && close(a.data_sum, b.data_sum)
    }

    #[test]
    #[allow(clippy::needless_range_loop)] // a matrix product reads best with indices
    fn inversion_inverts() {
        let m = [
            [2.0, 0.0, 1.0, 3.0],
            [1.0, 1.0, 0.0, 0.0],
            [0.0, 4.0, 1.0, 2.0],
            [1.0, 0.0, 0.0, 1.0],
        ];
        let inv = invert(&m).unwrap();
        for i in 0..4 {
            for j in 0..4 {
                let p: f32 = (0..4).map(|k| m[i][k] * inv[k][j]).sum();
                let id = if i == j { 1.0 } else { 0.0 };
                assert!((p - id).abs() < 1e-5, "({i}, {j}): {p}");
            }
        }
        let singular = [[1.0, 2.0, 3.0, 4.0]; 4];
        assert_eq!(invert(&singular), None);
    }

    /// `c`'s census, with its types registered first (sparsey and specs ask for it).
    fn census<C: Contender>(c: &mut C) -> Census {
        c.register::<Position>();
        c.register::<Data>();
        c.register::<Added>();
        c.census()
    }

    /// Runs every workload's steps on `C` at small sizes and returns what it holds after each.
    fn census_of<C: Contender>(plan: &Plan) -> Vec<Census> {
        let mut out = Vec::new();
        let mut c = simple_world::<C>(100);
        c.move_all();
        c.move_all();
        out.push(census(&mut c));
        let mut c = simple_world::<C>(50);
        c.heavy_compute();
        out.push(census(&mut c));
        let mut c = frag_world::<C>(3);
        c.double_data();
        out.push(census(&mut c));
        let (mut c, es) = held_world::<C>(40);
        c.add(&es);
        out.push(census(&mut c));
        c.remove(&es[..10]);
        out.push(census(&mut c));
        let (mut c, mut live) = churn_world::<C>(plan.churn);
        let (mut next, mut dead) = (plan.churn, Vec::new());
        for p in &plan.picks {
            frame(&mut c, &mut live, &mut dead, p, &mut next);
        }
        out.push(census(&mut c));
        let es: Vec<C::Entity> = plan.gets.iter().map(|&i| live[i as usize]).collect();
        out.push(Census {
            positions: es.len(),
            position_sum: f64::from(c.sum_positions(&es)),
            data_sum: 0.0,
            added: 0,
        });
        out
    }

    #[test]
    fn every_contender_does_the_same_work() {
        let cfg = Config {
            n: Some(500),
            quick: true,
            reps: 1,
            min_time: std::time::Duration::ZERO,
            seed: 3,
        };
        let plan = Plan::new(&cfg);
        let want = census_of::<DodWorld>(&plan);
        assert_eq!(want[2].data_sum, 26.0 * 3.0 * 2.0);
        assert_eq!((want[3].added, want[4].added), (40, 30));
        assert_eq!(want[5].positions, 500);
        assert_eq!(want[6].positions, 50);
        assert!(want[6].position_sum > 0.0);
        let others = [
            (DodGrouped::NAME, census_of::<DodGrouped>(&plan)),
            (DodOneByOne::NAME, census_of::<DodOneByOne>(&plan)),
            (Hecs::NAME, census_of::<Hecs>(&plan)),
            (Bevy::NAME, census_of::<Bevy>(&plan)),
            (Shipyard::NAME, census_of::<Shipyard>(&plan)),
            (Sparsey::NAME, census_of::<Sparsey>(&plan)),
            (Specs::NAME, census_of::<Specs>(&plan)),
        ];
        for (name, got) in others {
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(same(g, w), "{name}, step {i}: {g:?} vs {w:?}");
            }
        }
    }

    #[test]
    fn both_trackers_see_exactly_the_written_positions() {
        let cfg = Config {
            n: Some(2000),
            quick: true,
            reps: 2,
            min_time: std::time::Duration::ZERO,
            seed: 5,
        };
        let plan = Plan::new(&cfg);
        let tp = TrackPlan::new(&cfg, &plan);
        let mut dod = DodTracker::new(tp.n, true);
        let mut bevy = BevyTracker::new(tp.n, true);
        for picks in &tp.picks {
            let mut distinct = picks.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(distinct.len(), tp.n / 100, "distinct picks, 1 %");
            dod.write(picks);
            bevy.write(picks);
            assert_eq!(dod.changed(), picks.len());
            assert_eq!(bevy.changed(), picks.len());
            dod.end_frame();
            bevy.end_frame();
            assert_eq!(
                (dod.changed(), bevy.changed()),
                (0, 0),
                "nothing new after a frame"
            );
        }
        dod.iterate();
        bevy.iterate();
        assert_eq!(
            (dod.changed(), bevy.changed()),
            (tp.n, tp.n),
            "&mut marks every value"
        );
    }

    #[test]
    fn churn_picks_stay_in_range() {
        let cfg = Config {
            n: Some(1000),
            quick: true,
            reps: 2,
            min_time: std::time::Duration::ZERO,
            seed: 1,
        };
        let plan = Plan::new(&cfg);
        assert_eq!(plan.picks.len(), plan.frames * 2 + 1);
        for p in &plan.picks {
            assert_eq!(p.len(), 10);
            for (k, &j) in p.iter().enumerate() {
                assert!((j as usize) < 1000 - k);
            }
        }
    }
}
