//! Model test: random operation sequences applied to a `World` and to a naive model (a map
//! from entity to a map from component type to value, plus a model of the entity allocator),
//! with every observable checked after every step: each entity's components through `get`,
//! `has` and entity views, the liveness of every entity ever seen (stale ones stay dead),
//! entities of another world and forged ones, queries of every form compared as sets with the
//! model's own filtering, per-entity data, and the number of live counted components.
//!
//! Groups, tracking and hooks: a run is set up (`Setup`) with owning groups declared in the
//! builder, tracked types, hooks, and the change counter just before it wraps; more groups and
//! tracked types are declared by operations. After every step the model checks each declared
//! group from outside (its packed prefix holds exactly the entities that have all its types,
//! in one order across its storages, the order a grouped query walks and `slices` hands out),
//! `removed::<T>()` against its own list of losses since the last `maintain`, and the number
//! of calls of every hook. Kept query states (`QueryState` with `Added` / `Changed` filters)
//! run as operations and are checked against the model's record of what was added and written
//! since each state last ran; the writes of a state's own run are recorded for the others only.
//! Hooks record commands (a tag given, a tag taken), which the model makes when the world
//! does: right after the change that ran the hook, or at the next change where the world
//! defers them (a batch, a panic, as documented).
//!
//! The fuzz target `world_ops` includes this file and runs the same model on operations it
//! reads from fuzz bytes (`run`, `Op`); the proptest driver is the `props` module below.
//!
//! # Panic safety: what the world guarantees
//!
//! The counted component `C` can be armed to panic in `Drop`. After such a panic:
//! - `despawn`: the entity is gone with all its components and data (the others are still
//!   dropped), then the panic goes on;
//! - `clear`: every entity is gone;
//! - `insert`: the bundle's components are given in order; the one whose replaced value
//!   panicked is in, the components after it are dropped, not given;
//! - `apply`: the commands before the panicking one are made, the panicking one makes its own
//!   change (as above), the later ones are dropped unmade and the buffer is empty; entities
//!   the buffer reserved are alive (flushed before the first command).
//!
//! A bundle iterator of `spawn_batch` that panics: the bundles before the panic are spawned,
//! the rest are dropped unspawned, and the iterator is not called again.
//!
//! A query closure that panics keeps the writes it made to the entities it visited before the
//! panic, and the query's borrow flags are released: the same components can be queried
//! mutably through the shared form right after.
//!
//! In every case the world passes `assert_invariants` and matches the model updated that way.

use std::any::{type_name, Any, TypeId};
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt::Debug;
use std::marker::PhantomData;
use std::num::NonZeroU16;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use dod::data::{DataComponent, OwnedValue};
use dod::Key;
use dod_world::{
    Added, Bundle, Changed, Commands, Component, Entities, Entity, GroupError, Has, NoSuchEntity,
    NotAlive, Or, QueryState, SingleError, Tick, With, Without, World, WorldBuilder,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

// --- component types ------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct A(u32);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct B(String);

/// Counted (the live instances of this thread), and armed to panic in `Drop` by `boom`.
#[derive(Debug)]
struct C {
    v: u32,
    boom: bool,
}

/// A tag: zero-sized, no drop glue, stored as bits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct T1;

/// Another tag.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct T2;

/// Zero-sized with drop glue: stored in a sparse set, not as bits. Counted.
#[derive(Debug)]
struct G(());

thread_local! {
    static LIVE_C: Cell<i64> = const { Cell::new(0) };
    static LIVE_G: Cell<i64> = const { Cell::new(0) };
}

/// The message of every panic the test provokes on purpose.
const PLANNED: &str = "planned panic of the world model";

impl C {
    fn new(v: u32) -> Self {
        LIVE_C.with(|n| n.set(n.get() + 1));
        C { v, boom: false }
    }
}

impl Drop for C {
    fn drop(&mut self) {
        LIVE_C.with(|n| n.set(n.get() - 1));
        if self.boom && !std::thread::panicking() {
            panic!("{PLANNED}");
        }
    }
}

impl G {
    fn new() -> Self {
        LIVE_G.with(|n| n.set(n.get() + 1));
        G(())
    }
}

impl Drop for G {
    fn drop(&mut self) {
        LIVE_G.with(|n| n.set(n.get() - 1));
    }
}

impl Serialize for C {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.v.serialize(s)
    }
}

impl<'de> Deserialize<'de> for C {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        u32::deserialize(d).map(C::new)
    }
}

impl Serialize for G {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ().serialize(s)
    }
}

impl<'de> Deserialize<'de> for G {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <()>::deserialize(d).map(|()| G::new())
    }
}

/// The live instances of `C` and `G` on this thread.
fn counts() -> (i64, i64) {
    (LIVE_C.with(Cell::get), LIVE_G.with(Cell::get))
}

/// The component types, in the order bundles hold them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    A,
    B,
    C,
    T1,
    T2,
    G,
}

pub(crate) const KINDS: [Kind; 6] = [Kind::A, Kind::B, Kind::C, Kind::T1, Kind::T2, Kind::G];

/// A component type of the test and its value in the model.
trait Comp: Component + Sized {
    const KIND: Kind;
    type M: Clone + PartialEq + Debug + 'static;
    /// The world's value for a seed.
    fn make(seed: u32) -> Self;
    /// The model's value of a world value.
    fn model(&self) -> Self::M;
    /// The model's value for a seed.
    fn model_of(seed: u32) -> Self::M {
        Self::make(seed).model()
    }
}

impl Comp for A {
    const KIND: Kind = Kind::A;
    type M = u32;
    fn make(seed: u32) -> Self {
        A(seed % 1000)
    }
    fn model(&self) -> u32 {
        self.0
    }
}

impl Comp for B {
    const KIND: Kind = Kind::B;
    type M = String;
    fn make(seed: u32) -> Self {
        B(format!("b{}", seed % 100))
    }
    fn model(&self) -> String {
        self.0.clone()
    }
}

impl Comp for C {
    const KIND: Kind = Kind::C;
    type M = u32;
    fn make(seed: u32) -> Self {
        C::new(seed % 1000)
    }
    fn model(&self) -> u32 {
        self.v
    }
}

impl Comp for T1 {
    const KIND: Kind = Kind::T1;
    type M = ();
    fn make(_: u32) -> Self {
        T1
    }
    fn model(&self) {}
}

impl Comp for T2 {
    const KIND: Kind = Kind::T2;
    type M = ();
    fn make(_: u32) -> Self {
        T2
    }
    fn model(&self) {}
}

impl Comp for G {
    const KIND: Kind = Kind::G;
    type M = ();
    fn make(_: u32) -> Self {
        G::new()
    }
    fn model(&self) {}
}

/// Runs `$body` with `$T` the component type of kind `$k`.
macro_rules! per_kind {
    ($k:expr, $T:ident => $body:expr) => {
        match $k {
            Kind::A => {
                type $T = A;
                $body
            }
            Kind::B => {
                type $T = B;
                $body
            }
            Kind::C => {
                type $T = C;
                $body
            }
            Kind::T1 => {
                type $T = T1;
                $body
            }
            Kind::T2 => {
                type $T = T2;
                $body
            }
            Kind::G => {
                type $T = G;
                $body
            }
        }
    };
}

/// Runs `$body` once per component type, with `$T` that type.
macro_rules! each_type {
    ($T:ident => $body:block) => {
        for k in KINDS {
            per_kind!(k, $T => $body)
        }
    };
}

// --- groups, tracking, hooks: how a world is set up ----------------------------------------

/// The owning groups a world may declare: `(A, C)`; `(T2, G)`, whose tag leaves its bits;
/// `(C, B)`, which cannot be declared beside the first.
pub(crate) const GROUPS: [[Kind; 2]; 3] =
    [[Kind::A, Kind::C], [Kind::T2, Kind::G], [Kind::C, Kind::B]];

/// How a run starts: bits 0 and 1 declare groups 0 and 1 in the builder; bits 2 ..= 5 track
/// `A`, `C`, `T1`, `G`; bit 6 sets the hooks; bit 7 starts the change counter just before it
/// wraps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setup(pub(crate) u8);

/// The settings of a world as declared so far, to make another world like it (to load into).
#[derive(Debug, Clone, Default)]
struct Config {
    /// Indices into `GROUPS`, in declaration order.
    groups: Vec<usize>,
    /// By `Kind`.
    tracked: [bool; 6],
    hooks: bool,
}

impl Config {
    fn of(setup: Setup) -> Config {
        let mut c = Config::default();
        for g in 0..2 {
            if setup.0 >> g & 1 == 1 {
                c.groups.push(g);
            }
        }
        for (bit, k) in [(2, Kind::A), (3, Kind::C), (4, Kind::T1), (5, Kind::G)] {
            c.tracked[k as usize] = setup.0 >> bit & 1 == 1;
        }
        c.hooks = setup.0 & 0x40 != 0;
        c
    }

    /// The declared group that owns `k`.
    fn group_of(&self, k: Kind) -> Option<usize> {
        self.groups
            .iter()
            .copied()
            .find(|&g| GROUPS[g].contains(&k))
    }
}

fn builder_group(b: WorldBuilder, g: usize) -> WorldBuilder {
    match g {
        0 => b.group::<(A, C)>(),
        1 => b.group::<(T2, G)>(),
        _ => b.group::<(C, B)>(),
    }
}

fn declare_group(w: &mut World, g: usize) -> Result<(), GroupError> {
    match g {
        0 => w.group::<(A, C)>(),
        1 => w.group::<(T2, G)>(),
        2 => w.group::<(C, B)>(),
        // Too few types, and a type named twice.
        3 => w.group::<(A,)>(),
        _ => w.group::<(A, A)>(),
    }
}

/// The calls of every hook of one world, by `hook_slot`.
#[derive(Default)]
struct HookLog([AtomicU32; 12]);

fn hook_slot(k: Kind, insert: bool) -> usize {
    k as usize * 2 + usize::from(!insert)
}

impl HookLog {
    fn bump(&self, k: Kind, insert: bool) {
        self.0[hook_slot(k, insert)].fetch_add(1, Ordering::Relaxed);
    }

    fn counts(&self) -> [u32; 12] {
        std::array::from_fn(|i| self.0[i].load(Ordering::Relaxed))
    }
}

/// Whether the insert hook of `A` gives the entity a `T2` for this value.
fn a_hook_tags(a: u32) -> bool {
    a % 5 == 0
}

/// Whether the remove hook of `C` takes the entity's `T1` for this value.
fn c_hook_untags(c: u32) -> bool {
    c % 3 == 0
}

/// Hooks on `A`, `C`, `T1` and `G`, counted in `log`; two of them record commands.
fn set_hooks(w: &mut World, log: &Arc<HookLog>) {
    let l = log.clone();
    w.on_insert::<A>(move |e, a, commands| {
        l.bump(Kind::A, true);
        if a_hook_tags(a.0) {
            commands.insert(e, (T2,));
        }
    });
    let l = log.clone();
    w.on_remove::<A>(move |_, _, _| l.bump(Kind::A, false));
    let l = log.clone();
    w.on_insert::<C>(move |_, _, _| l.bump(Kind::C, true));
    let l = log.clone();
    w.on_remove::<C>(move |e, c, commands| {
        l.bump(Kind::C, false);
        if c_hook_untags(c.v) {
            commands.remove::<T1>(e);
        }
    });
    let l = log.clone();
    w.on_insert::<T1>(move |_, _, _| l.bump(Kind::T1, true));
    let l = log.clone();
    w.on_remove::<T1>(move |_, _, _| l.bump(Kind::T1, false));
    let l = log.clone();
    w.on_insert::<G>(move |_, _, _| l.bump(Kind::G, true));
    let l = log.clone();
    w.on_remove::<G>(move |_, _, _| l.bump(Kind::G, false));
}

/// The kept query states, one per shape (see `Harness::run_state`).
#[derive(Default)]
#[allow(clippy::type_complexity)] // each field spells its query out
struct States {
    a_changed: QueryState<(Entity, &'static A), Changed<A>>,
    a_added: QueryState<Entity, Added<A>>,
    c_changed_mut: QueryState<(Entity, &'static mut C), Changed<C>>,
    ac_added: QueryState<(Entity, &'static A, &'static C), Added<C>>,
    ac_mut_changed: QueryState<(Entity, &'static mut A, &'static C), (Changed<C>, Without<T2>)>,
    t1_changed: QueryState<Entity, (Changed<T1>, With<A>)>,
    t2g_added: QueryState<(Entity, &'static T2, &'static G), (Added<G>, Changed<A>)>,
    b_changed: QueryState<(Entity, &'static mut B), (Changed<B>, Added<C>)>,
    a_or_c: QueryState<(Entity, &'static A, Has<T1>), Or<(Changed<A>, Added<C>)>>,
}

const STATES: usize = 9;

// --- bundles of any set of the types --------------------------------------------------------

/// The mutations the writing queries make, the same on both sides.
fn bump_a(v: u32) -> u32 {
    v.wrapping_mul(3).wrapping_add(1) % 1000
}

fn bump_b(s: &mut String) {
    s.push('+');
    if s.len() > 6 {
        s.truncate(2);
    }
}

fn bump_c(v: u32) -> u32 {
    (v + 7) % 1000
}

/// A bundle: a set of at most four component types (bit `i` is `KINDS[i]`) and a seed for
/// their values.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bun {
    mask: u8,
    seed: u32,
}

impl Bun {
    pub(crate) fn new(mask: u8, seed: u32) -> Bun {
        let mut mask = mask & 0b11_1111;
        while mask.count_ones() > 4 {
            mask &= mask - 1;
        }
        Bun { mask, seed }
    }

    /// The bundle with `k` in it (and at most four types still).
    fn with(self, k: Kind) -> Bun {
        let bit = 1 << k as u8;
        let mut mask = self.mask | bit;
        while mask.count_ones() > 4 {
            let others = mask & !bit;
            mask &= !(others & others.wrapping_neg());
        }
        Bun {
            mask,
            seed: self.seed,
        }
    }

    fn kinds(self) -> Vec<Kind> {
        KINDS
            .iter()
            .enumerate()
            .filter(|(i, _)| self.mask >> i & 1 == 1)
            .map(|(_, &k)| k)
            .collect()
    }

    fn seeds(self) -> Vec<u32> {
        self.kinds()
            .iter()
            .map(|&k| self.seed.wrapping_mul(31).wrapping_add(k as u32 * 1009))
            .collect()
    }
}

/// A tuple of distinct test component types, buildable from seeds.
trait Prefix: Bundle {
    /// The tuple with one more type at the end.
    type Push<H: Comp>: Prefix;
    fn rebuild(seeds: &[u32]) -> Self;
}

impl Prefix for () {
    type Push<H: Comp> = (H,);
    fn rebuild(_: &[u32]) {}
}

macro_rules! prefix {
    ($($t:ident $i:tt),+) => {
        impl<$($t: Comp),+> Prefix for ($($t,)+) {
            type Push<H: Comp> = ($($t,)+ H,);
            fn rebuild(seeds: &[u32]) -> Self {
                ($($t::make(seeds[$i]),)+)
            }
        }
    };
}

prefix!(X0 0);
prefix!(X0 0, X1 1);
prefix!(X0 0, X1 1, X2 2);
prefix!(X0 0, X1 1, X2 2, X3 3);
prefix!(X0 0, X1 1, X2 2, X3 3, X4 4);

impl<X0: Comp, X1: Comp, X2: Comp, X3: Comp, X4: Comp, X5: Comp> Prefix
    for (X0, X1, X2, X3, X4, X5)
{
    // Every type is in already: nothing is ever pushed.
    type Push<H: Comp> = Self;
    fn rebuild(seeds: &[u32]) -> Self {
        (
            X0::make(seeds[0]),
            X1::make(seeds[1]),
            X2::make(seeds[2]),
            X3::make(seeds[3]),
            X4::make(seeds[4]),
            X5::make(seeds[5]),
        )
    }
}

/// What to do with a bundle once its static type is known.
trait Sink {
    type Out;
    fn take<P: Prefix>(self) -> Self::Out;
}

/// A type-level list of the component types, walked to turn a runtime set of kinds (in
/// `KINDS` order) into a tuple type.
trait List {
    fn dispatch<P: Prefix, S: Sink>(kinds: &[Kind], sink: S) -> S::Out;
}

struct Nil;
struct Cons<H, T>(PhantomData<(H, T)>);

impl List for Nil {
    fn dispatch<P: Prefix, S: Sink>(kinds: &[Kind], sink: S) -> S::Out {
        assert!(kinds.is_empty(), "kinds out of order: {kinds:?}");
        sink.take::<P>()
    }
}

impl<H: Comp, T: List> List for Cons<H, T> {
    fn dispatch<P: Prefix, S: Sink>(kinds: &[Kind], sink: S) -> S::Out {
        match kinds.split_first() {
            Some((&k, rest)) if k == H::KIND => T::dispatch::<P::Push<H>, S>(rest, sink),
            _ => T::dispatch::<P, S>(kinds, sink),
        }
    }
}

type AllTypes = Cons<A, Cons<B, Cons<C, Cons<T1, Cons<T2, Cons<G, Nil>>>>>>;

/// Hands `sink` the tuple type of `bun`'s kinds.
fn with_bundle<S: Sink>(bun: Bun, sink: S) -> S::Out {
    AllTypes::dispatch::<(), S>(&bun.kinds(), sink)
}

struct SpawnSink<'a>(&'a mut World, Bun);
impl Sink for SpawnSink<'_> {
    type Out = Entity;
    fn take<P: Prefix>(self) -> Entity {
        self.0.spawn(P::rebuild(&self.1.seeds()))
    }
}

struct InsertSink<'a>(&'a mut World, Entity, Bun);
impl Sink for InsertSink<'_> {
    type Out = Result<(), NoSuchEntity>;
    fn take<P: Prefix>(self) -> Self::Out {
        self.0.insert(self.1, P::rebuild(&self.2.seeds()))
    }
}

/// Spawns a batch of bundles of one type; `take`: walk only so many, drop the batch.
struct BatchSink<'a> {
    world: &'a mut World,
    buns: &'a [Bun],
    take: Option<usize>,
}
impl Sink for BatchSink<'_> {
    type Out = Vec<Entity>;
    fn take<P: Prefix>(self) -> Vec<Entity> {
        let bundles = self.buns.iter().map(|b| P::rebuild(&b.seeds()));
        match self.take {
            None => self.world.spawn_batch(bundles).collect(),
            Some(k) => {
                let mut batch = self.world.spawn_batch(bundles);
                batch.by_ref().take(k).collect()
            }
        }
    }
}

/// Spawns a batch whose iterator panics at bundle `at`.
struct PanicBatchSink<'a> {
    world: &'a mut World,
    buns: &'a [Bun],
    at: usize,
    walk: bool,
}
impl Sink for PanicBatchSink<'_> {
    type Out = ();
    fn take<P: Prefix>(self) {
        let at = self.at;
        let bundles = self.buns.iter().enumerate().map(move |(i, b)| {
            if i == at {
                panic!("{PLANNED}");
            }
            P::rebuild(&b.seeds())
        });
        let batch = self.world.spawn_batch(bundles);
        if self.walk {
            batch.count();
        } else {
            drop(batch);
        }
    }
}

struct CmdSpawnSink<'a>(&'a mut Commands, &'a Entities, Bun);
impl Sink for CmdSpawnSink<'_> {
    type Out = Entity;
    fn take<P: Prefix>(self) -> Entity {
        self.0.spawn(self.1, P::rebuild(&self.2.seeds()))
    }
}

struct CmdSpawnUnnamedSink<'a>(&'a mut Commands, Bun);
impl Sink for CmdSpawnUnnamedSink<'_> {
    type Out = ();
    fn take<P: Prefix>(self) {
        self.0.spawn_unnamed(P::rebuild(&self.1.seeds()));
    }
}

struct CmdInsertSink<'a>(&'a mut Commands, Entity, Bun);
impl Sink for CmdInsertSink<'_> {
    type Out = ();
    fn take<P: Prefix>(self) {
        self.0.insert(self.1, P::rebuild(&self.2.seeds()));
    }
}

struct CmdPushSink<'a>(&'a mut Commands, Entity, Bun);
impl Sink for CmdPushSink<'_> {
    type Out = ();
    fn take<P: Prefix>(self) {
        let (e, bundle) = (self.1, P::rebuild(&self.2.seeds()));
        self.0.push(move |world| {
            if world.is_alive(e) {
                world.insert(e, bundle).unwrap();
            }
        });
    }
}

// --- operations -----------------------------------------------------------------------------

/// Which entity an operation uses. `which % 10`: 0 ..= 4 a live entity (the `n`-th), 5 and 6
/// any entity ever seen (often stale), 7 an entity of another world, 8 a forged one (a seen
/// entity at another generation, or an index past the end), 9 in a command buffer an entity
/// the buffer reserved (otherwise a live one).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    pub(crate) which: u8,
    pub(crate) n: u16,
}

/// One recorded command.
#[derive(Debug, Clone)]
pub(crate) enum Cmd {
    Spawn(Bun),
    /// A spawn whose entity is allocated when the commands are applied.
    SpawnUnnamed(Bun),
    Insert(Target, Bun),
    Remove(Target, Kind),
    Despawn(Target),
    /// A command of the test's own (`Commands::push`): inserts the bundle if the entity is
    /// alive; never skipped.
    Push(Target, Bun),
}

/// One step of a program.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    Spawn(Bun),
    /// Bundles of one type (the mask) from seeds; `take`: walk that many, drop the batch.
    SpawnBatch {
        mask: u8,
        seeds: Vec<u32>,
        take: Option<u8>,
    },
    Despawn(Target),
    /// `despawn_batch` of the entities named, stale and repeated ones among them.
    DespawnBatch(Vec<Target>),
    Insert(Target, Bun),
    Remove(Target, Kind),
    /// `take` of the bundle of two kinds (of one, when they are the same): all or nothing.
    Take(Target, Kind, Kind),
    /// Writes or removes `A`, or despawns, through `get_mut`, `get_disjoint_mut` or an entity
    /// view.
    ViaEntity(Target, u8, u32),
    /// A writing query: its shape, its form (exclusive or shared; for_each, iter, get,
    /// into_iter), and the entity for `get`.
    MutQuery {
        shape: u8,
        form: u8,
        target: Target,
    },
    /// Commands recorded during a shared-form query, then applied.
    Commands(Vec<Cmd>),
    /// Reserves entities, then flushes them in one of several ways.
    Reserve {
        n: u8,
        how: u8,
        bun: Bun,
    },
    Clear,
    SetData(Target, u8, u32),
    InsertData(Target, Vec<(u8, u32)>),
    RemoveData(Target),
    /// Removes one key of an entity's data.
    RemoveDataKey(Target, u8),
    /// Saves and loads: into a new world kept (0) or dropped (1), or into the world itself.
    SaveLoad(u8, Bun),
    /// A saved world with bytes changed, loaded.
    LoadMutated(Vec<(u16, u8)>),
    /// Bytes loaded as a saved world.
    LoadBytes(Vec<u8>),
    /// An armed `C` whose drop panics in despawn, clear, insert, a command, or a despawn
    /// batch.
    PanicDrop(Target, u8, Bun),
    /// A query closure that panics after `after` items.
    PanicQuery {
        form: u8,
        after: u8,
    },
    /// A batch whose bundle iterator panics at bundle `at`; walked, or dropped unwalked.
    PanicBatch {
        mask: u8,
        seeds: Vec<u32>,
        at: u8,
        walk: bool,
    },
    /// Declares a group at run time (`GROUPS[n % 4]`; 3: a bad one): packs the entities
    /// that have its types already, or an error if a type belongs to another group.
    Group(u8),
    /// Starts tracking a type (idempotent).
    Track(Kind),
    /// Runs a kept query state in one of five forms (for_each, iter, shared, get, and a `get`
    /// of every live entity in one run).
    RunState {
        which: u8,
        form: u8,
        target: Target,
    },
    /// Replaces a kept state with one that has never run.
    ResetState(u8),
    /// The frame boundary: the removed lists are emptied.
    Maintain,
    /// Releases spare memory: nothing the model sees changes, and the world holds no more.
    ShrinkToFit,
    /// Moves the change counter on: a little (even), or by more than `Tick::MAX_AGE`
    /// (odd), to just before the wrap when it is far enough.
    SetTick(u32),
    /// Sorts a declared group (by `A`, by `B`, or keeps its order), ascending or not.
    SortGroup(u8, bool),
    /// Writes through a group's slices.
    SliceWrite(u8),
}

// --- the model ------------------------------------------------------------------------------

/// The documented allocator policy: FIFO reuse of freed slots once more than `min_free`
/// wait, new slots at generation 1, retirement at generation 65 535.
struct Slots {
    generation: Vec<u16>,
    occupied: Vec<bool>,
    queue: VecDeque<u32>,
    min_free: usize,
    world_id: u16,
}

fn entity(index: u32, generation: u16, world_id: u16) -> Entity {
    Entity::from_parts(
        index,
        NonZeroU16::new(generation).expect("a generation"),
        world_id,
    )
}

impl Slots {
    fn alloc(&mut self) -> Entity {
        let i = if self.queue.len() > self.min_free {
            let i = self.queue.pop_front().unwrap();
            self.generation[i as usize] += 1;
            i
        } else {
            self.generation.push(1);
            self.occupied.push(false);
            (self.generation.len() - 1) as u32
        };
        self.occupied[i as usize] = true;
        entity(i, self.generation[i as usize], self.world_id)
    }

    /// Why `e`, which is not alive, is not: no reservation is pending when this is asked.
    fn not_alive(&self, e: Entity) -> NotAlive {
        let w = world_of(e);
        if w != self.world_id {
            return NotAlive::OtherWorld {
                entity_world: w,
                this_world: self.world_id,
            };
        }
        match self.generation.get(e.index() as usize) {
            Some(&g) if e.generation() <= g => NotAlive::Despawned,
            _ => NotAlive::NeverMade,
        }
    }

    fn vacate(&mut self, e: Entity) {
        let i = e.index() as usize;
        assert!(self.occupied[i] && self.generation[i] == e.generation());
        self.occupied[i] = false;
        if self.generation[i] < u16::MAX {
            self.queue.push_back(i as u32);
        }
    }
}

/// What a correct world holds. Entities are ordered so that picks are reproducible.
struct Model {
    live: BTreeMap<Entity, HashMap<TypeId, Box<dyn Any>>>,
    data: BTreeMap<Entity, BTreeMap<u8, OwnedValue>>,
    /// Every entity the world handed out (reserved ones included), in order.
    seen: Vec<Entity>,
    slots: Slots,
    /// Groups, tracked types, hooks.
    cfg: Config,
    /// The calls of each hook, by `hook_slot`.
    hooks: [u32; 12],
    /// Commands hooks recorded that the world has not made yet.
    pending: VecDeque<Hooked>,
    /// By kind: the entities that lost a tracked component since the last `maintain`, with
    /// the number of the operation (the order within one operation is the storage's).
    removed: [Vec<(usize, Entity)>; 6],
    /// The number of the operation being applied.
    op: usize,
    /// What each kept query state has not seen yet.
    states: Vec<StateRecord>,
    /// The state whose run is writing (its own writes are not recorded for it).
    running: Option<usize>,
}

/// A command a hook recorded.
#[derive(Debug, Clone, Copy)]
enum Hooked {
    InsertT2(Entity),
    RemoveT1(Entity),
}

/// What a kept query state will see: by kind, the entities whose component was added, or
/// added or written, since the state last ran; everything if it never ran.
#[derive(Default, Clone)]
struct StateRecord {
    ran: bool,
    added: [BTreeSet<Entity>; 6],
    changed: [BTreeSet<Entity>; 6],
}

/// Per-entity data keys (flat paths; a dotted one hashes its segments).
const KEYS: [&str; 5] = ["hp", "name", "stats.armor", "flags.alive", "path"];

fn data_value(seed: u32) -> OwnedValue {
    let s = seed >> 2;
    match seed % 4 {
        0 => OwnedValue::F32((s % 1000) as f32 * 0.5),
        1 => OwnedValue::String(format!("s{}", s % 50)),
        2 => OwnedValue::Bool(s & 1 == 1),
        _ => OwnedValue::F32s((0..s % 4).map(|i| i as f32 + 0.25).collect()),
    }
}

impl Model {
    fn alive(&self, e: Entity) -> bool {
        self.live.contains_key(&e)
    }

    fn get<T: Comp>(&self, e: Entity) -> Option<&T::M> {
        let v = self.live.get(&e)?.get(&TypeId::of::<T>())?;
        Some(v.downcast_ref::<T::M>().expect("model value of the type"))
    }

    /// `e`'s value, to write: marks it changed, as the world's `&mut` access does.
    fn get_mut<T: Comp>(&mut self, e: Entity) -> Option<&mut T::M> {
        self.touch::<T>(e);
        let v = self.live.get_mut(&e)?.get_mut(&TypeId::of::<T>())?;
        Some(v.downcast_mut::<T::M>().expect("model value of the type"))
    }

    /// Marks `e`'s `T` changed (if it has one and `T` is tracked): a `&mut T` was handed out.
    fn touch<T: Comp>(&mut self, e: Entity) {
        if self.has::<T>(e) {
            self.note(e, T::KIND, false);
        }
    }

    /// Records that `e`'s component of kind `k` was added (or written) for every kept state
    /// but the running one.
    fn note(&mut self, e: Entity, k: Kind, added: bool) {
        if !self.cfg.tracked[k as usize] {
            return;
        }
        for (i, s) in self.states.iter_mut().enumerate() {
            if Some(i) != self.running {
                if added {
                    s.added[k as usize].insert(e);
                }
                s.changed[k as usize].insert(e);
            }
        }
    }

    /// `e` lost its component of kind `k`.
    fn lost(&mut self, e: Entity, k: Kind) {
        if self.cfg.tracked[k as usize] {
            self.removed[k as usize].push((self.op, e));
        }
        for s in &mut self.states {
            s.added[k as usize].remove(&e);
            s.changed[k as usize].remove(&e);
        }
    }

    /// A hook of `T` ran for `e` with value `v`: counted, and its command recorded.
    fn hook<T: Comp>(&mut self, e: Entity, v: &T::M, insert: bool) {
        if !self.cfg.hooks || !matches!(T::KIND, Kind::A | Kind::C | Kind::T1 | Kind::G) {
            return;
        }
        self.hooks[hook_slot(T::KIND, insert)] += 1;
        let v: &dyn Any = v;
        match (T::KIND, insert, v.downcast_ref::<u32>()) {
            (Kind::A, true, Some(&a)) if a_hook_tags(a) => {
                self.pending.push_back(Hooked::InsertT2(e))
            }
            (Kind::C, false, Some(&c)) if c_hook_untags(c) => {
                self.pending.push_back(Hooked::RemoveT1(e))
            }
            _ => {}
        }
    }

    /// Makes the commands hooks recorded, and those they record in turn, in order.
    fn settle(&mut self) {
        while let Some(h) = self.pending.pop_front() {
            match h {
                Hooked::InsertT2(e) => {
                    if self.alive(e) {
                        self.put::<T2>(e, ());
                    }
                }
                Hooked::RemoveT1(e) => {
                    self.take::<T1>(e);
                }
            }
        }
    }

    /// Starts tracking `k`: every value there is stamped as added now.
    fn track(&mut self, k: Kind) {
        if self.cfg.tracked[k as usize] {
            return;
        }
        self.cfg.tracked[k as usize] = true;
        let holders: Vec<Entity> = self
            .live
            .iter()
            .filter(|(_, cs)| per_kind!(k, T => cs.contains_key(&TypeId::of::<T>())))
            .map(|(&e, _)| e)
            .collect();
        for e in holders {
            self.note(e, k, true);
        }
    }

    /// The world was loaded: every tracked value is new, no removal is listed.
    #[cfg_attr(not(any(feature = "serde", fuzzing)), allow(dead_code))]
    fn loaded(&mut self) {
        for list in &mut self.removed {
            list.clear();
        }
        let live: Vec<(Entity, Vec<Kind>)> =
            self.live.keys().map(|&e| (e, self.kinds_of(e))).collect();
        for (e, ks) in live {
            for k in ks {
                self.note(e, k, true);
            }
        }
    }

    fn kinds_of(&self, e: Entity) -> Vec<Kind> {
        KINDS
            .into_iter()
            .filter(|&k| per_kind!(k, T => self.has::<T>(e)))
            .collect()
    }

    /// Kept state `i` ran: it has seen everything there was.
    fn ran(&mut self, i: usize) {
        self.states[i] = StateRecord {
            ran: true,
            ..StateRecord::default()
        };
    }

    /// Whether kept state `i` sees `e` through the change filters `filters` (kind, added):
    /// all of them, or one of them (`any`, an `Or`).
    fn fresh(&self, i: usize, e: Entity, filters: &[(Kind, bool)], any: bool) -> bool {
        let s = &self.states[i];
        let seen = |&(k, added): &(Kind, bool)| {
            let set = if added { &s.added } else { &s.changed };
            set[k as usize].contains(&e)
        };
        !s.ran
            || if any {
                filters.iter().any(seen)
            } else {
                filters.iter().all(seen)
            }
    }

    /// The counter jumped by more than `Tick::MAX_AGE`: every state is idle for longer than
    /// that, and its next run sees every value, as its first does.
    fn forget(&mut self) {
        for s in &mut self.states {
            *s = StateRecord::default();
        }
    }

    fn has<T: Comp>(&self, e: Entity) -> bool {
        self.get::<T>(e).is_some()
    }

    /// Gives `e` a `T` (hooks: remove of the replaced value, then insert).
    fn put<T: Comp>(&mut self, e: Entity, v: T::M) {
        let cs = self.live.get_mut(&e).expect("put on a live entity");
        let old = cs.insert(TypeId::of::<T>(), Box::new(v.clone()));
        match old {
            None => self.note(e, T::KIND, true),
            Some(old) => {
                self.note(e, T::KIND, false);
                let old = *old.downcast::<T::M>().expect("model value of the type");
                self.hook::<T>(e, &old, false);
            }
        }
        self.hook::<T>(e, &v, true);
    }

    /// Replaces `e`'s `T` by `v` where dropping the replaced value panics: the remove hook
    /// ran, the insert hook did not.
    fn put_panicking<T: Comp>(&mut self, e: Entity, v: T::M) {
        let cs = self.live.get_mut(&e).expect("put on a live entity");
        let old = cs
            .insert(TypeId::of::<T>(), Box::new(v))
            .expect("the panicking value is replaced");
        self.note(e, T::KIND, false);
        let old = *old.downcast::<T::M>().expect("model value of the type");
        self.hook::<T>(e, &old, false);
    }

    fn take<T: Comp>(&mut self, e: Entity) -> Option<T::M> {
        let v = self.live.get_mut(&e)?.remove(&TypeId::of::<T>())?;
        let v = *v.downcast::<T::M>().expect("model value of the type");
        self.lost(e, T::KIND);
        self.hook::<T>(e, &v, false);
        Some(v)
    }

    fn count<T: Comp>(&self) -> usize {
        self.live
            .values()
            .filter(|cs| cs.contains_key(&TypeId::of::<T>()))
            .count()
    }

    /// The entity the next allocation names (not alive until `make_alive`).
    fn alloc(&mut self) -> Entity {
        let e = self.slots.alloc();
        self.seen.push(e);
        e
    }

    fn make_alive(&mut self, e: Entity) {
        assert!(self.live.insert(e, HashMap::new()).is_none());
    }

    fn spawn(&mut self, bun: Bun) -> Entity {
        let e = self.alloc();
        self.make_alive(e);
        self.put_bundle(e, bun, Kind::G);
        e
    }

    /// Gives `e` the components of `bun` up to kind `last` (all of them with `Kind::G`).
    #[allow(clippy::unit_arg)] // the model value of a tag is `()`
    fn put_bundle(&mut self, e: Entity, bun: Bun, last: Kind) {
        for (k, s) in bun.kinds().into_iter().zip(bun.seeds()) {
            if k <= last {
                per_kind!(k, T => self.put::<T>(e, T::model_of(s)));
            }
        }
    }

    /// Gives `e` the components of `bun` up to its `C`, whose replaced value panics.
    #[allow(clippy::unit_arg)] // the model value of a tag is `()`
    fn put_bundle_panicking(&mut self, e: Entity, bun: Bun) {
        for (k, s) in bun.kinds().into_iter().zip(bun.seeds()) {
            match k {
                Kind::C => return self.put_panicking::<C>(e, C::model_of(s)),
                k if k < Kind::C => per_kind!(k, T => self.put::<T>(e, T::model_of(s))),
                _ => {}
            }
        }
    }

    fn remove_kind(&mut self, e: Entity, k: Kind) -> bool {
        per_kind!(k, T => self.take::<T>(e).is_some())
    }

    fn despawn(&mut self, e: Entity) -> bool {
        if !self.alive(e) {
            return false;
        }
        for k in self.kinds_of(e) {
            per_kind!(k, T => {
                self.take::<T>(e);
            });
        }
        self.live.remove(&e);
        self.data.remove(&e);
        self.slots.vacate(e);
        true
    }

    fn clear(&mut self) {
        // In index order, as the allocator vacates them.
        let mut es: Vec<Entity> = self.live.keys().copied().collect();
        es.sort_by_key(|e| e.index());
        for e in es {
            self.despawn(e);
        }
    }

    fn live_pick(&self, n: u16) -> Option<Entity> {
        let len = self.live.len();
        (len > 0).then(|| *self.live.keys().nth(n as usize % len).unwrap())
    }

    /// The entity `t` names; `reserved` are the entities of the command buffer being recorded.
    fn resolve(&self, t: Target, foreign: &[Entity], reserved: &[Entity]) -> Entity {
        let n = t.n as usize;
        let seen = |k: usize| {
            if self.seen.is_empty() {
                foreign[k % foreign.len()]
            } else {
                self.seen[k % self.seen.len()]
            }
        };
        match t.which % 10 {
            9 if !reserved.is_empty() => reserved[n % reserved.len()],
            0..=4 | 9 => self.live_pick(t.n).unwrap_or_else(|| seen(n)),
            5 | 6 => seen(n),
            7 => foreign[n % foreign.len()],
            _ => {
                let base = seen(n);
                if n % 4 == 0 {
                    entity(
                        self.slots.generation.len() as u32 + (n as u32 >> 2) % 3,
                        1,
                        world_of(base),
                    )
                } else {
                    let g = base.generation().wrapping_add((n % 4) as u16).max(1);
                    entity(base.index(), g, world_of(base))
                }
            }
        }
    }
}

/// The id of the world that made `e`.
fn world_of(e: Entity) -> u16 {
    Key::type_id(e)
}

// --- queries against the model ---------------------------------------------------------

/// A writing query of one shape in one of eight forms (the last `single`), its visits compared with the model's
/// matches, its writes then made in the model too; before it, the query's `contains` of the
/// target and `is_empty`, compared with the model's matches.
macro_rules! mut_query {
    ($world:ident, $m:ident, $form:expr, $target:expr, $q:ty, [$($f:tt)*],
     |$pat:pat_param| $visit:expr, $matches:expr, $write:expr) => {{
        let matches = $matches;
        let write = $write;
        let target: Entity = $target;
        // The answers, against the model's matches. That they mark nothing is the business
        // of a test of its own (`contains_and_is_empty_answer_like_get_and_mark_nothing`):
        // here the run that follows writes the same entities, which would hide a mark.
        assert_eq!(
            $world.query::<$q>()$($f)*.contains(target),
            $m.alive(target) && matches(&*$m, target),
            "contains({target:?}) of {}", stringify!($q)
        );
        assert_eq!(
            $world.query::<$q>()$($f)*.is_empty(),
            !$m.live.keys().any(|&e| matches(&*$m, e)),
            "is_empty of {}", stringify!($q)
        );
        let mut visited: Vec<Entity> = Vec::new();
        let form = $form % 8;
        let n_matches = $m.live.keys().filter(|&&e| matches(&*$m, e)).count();
        match form {
            0 => $world.query::<$q>()$($f)*.for_each(|$pat| visited.push($visit)),
            1 => {
                for $pat in $world.query::<$q>()$($f)*.iter() {
                    visited.push($visit);
                }
            }
            2 => {
                if let Some($pat) = $world.query::<$q>()$($f)*.get(target) {
                    visited.push($visit);
                }
            }
            3 => $world.share().query::<$q>()$($f)*.for_each(|$pat| visited.push($visit)),
            4 => {
                for $pat in &mut $world.share().query::<$q>()$($f)* {
                    visited.push($visit);
                }
            }
            5 => {
                let w = $world.share();
                let mut q = w.query::<$q>()$($f)*;
                if let Some($pat) = q.get(target) {
                    visited.push($visit);
                }
            }
            6 => {
                for $pat in $world.query::<$q>()$($f)* {
                    visited.push($visit);
                }
            }
            _ => match $world.query::<$q>()$($f)*.single() {
                Ok($pat) => visited.push($visit),
                Err(err) => {
                    let want = match n_matches {
                        0 => SingleError::NoMatch,
                        1 => panic!("single() of {} refused the one match", stringify!($q)),
                        _ => SingleError::SeveralMatches,
                    };
                    assert_eq!(err, want, "single() of {}", stringify!($q));
                }
            },
        }
        let want: Vec<Entity> = if form == 2 || form == 5 {
            ($m.alive(target) && matches(&*$m, target))
                .then_some(target)
                .into_iter()
                .collect()
        } else if form == 7 && n_matches != 1 {
            Vec::new()
        } else {
            $m.live.keys().copied().filter(|&e| matches(&*$m, e)).collect()
        };
        visited.sort();
        assert_eq!(visited, want, "entities visited by {} (form {form})", stringify!($q));
        for e in visited {
            write(&mut *$m, e);
        }
    }};
}
/// A run of kept state `$field` (index `$i`, change filters `(kind, added)`): skipped unless
/// the filtered types are tracked; compared with the model's matches (`$want`, without the
/// change filters) that the state has not seen; then the state has seen everything, and its
/// writes (`$write`, for each entity visited) are recorded for the other states.
macro_rules! state_run {
    // The change filters all hold.
    ($h:ident, $i:expr, $form:expr, $target:expr, $field:ident, [$(($k:expr, $added:expr)),*],
     |$pat:pat_param| $item:expr, $want:expr, $write:expr) => {
        state_run!(@ false; $h, $i, $form, $target, $field, [$(($k, $added)),*],
            |$pat| $item, $want, $write)
    };
    // One of the change filters holds (an `Or` of them).
    ($h:ident, $i:expr, $form:expr, $target:expr, $field:ident, or [$(($k:expr, $added:expr)),*],
     |$pat:pat_param| $item:expr, $want:expr, $write:expr) => {
        state_run!(@ true; $h, $i, $form, $target, $field, [$(($k, $added)),*],
            |$pat| $item, $want, $write)
    };
    (@ $any:expr; $h:ident, $i:expr, $form:expr, $target:expr, $field:ident,
     [$(($k:expr, $added:expr)),*], |$pat:pat_param| $item:expr, $want:expr, $write:expr) => {{
        let i: usize = $i;
        let any: bool = $any;
        let filters: &[(Kind, bool)] = &[$(($k, $added)),*];
        if filters.iter().all(|&(k, _)| $h.m.cfg.tracked[k as usize]) {
            let want_of = $want;
            let write = $write;
            let target: Entity = $target;
            let form = $form % 5;
            let m = &mut $h.m;
            // Form 4 looks up every live entity and the target, one `get` each, in one run.
            let mut probe: Vec<Entity> = m.live.keys().copied().collect();
            if !probe.contains(&target) {
                probe.push(target);
            }
            let want: Vec<(Entity, _)> = if form == 4 {
                probe
                    .iter()
                    .filter(|&&e| m.alive(e) && m.fresh(i, e, filters, any))
                    .filter_map(|&e| want_of(&*m, e).map(|r| (e, r)))
                    .collect()
            } else if form == 3 {
                if m.alive(target) && m.fresh(i, target, filters, any) {
                    want_of(&*m, target).map(|r| (target, r)).into_iter().collect()
                } else {
                    Vec::new()
                }
            } else {
                m.live
                    .keys()
                    .filter(|&&e| m.fresh(i, e, filters, any))
                    .filter_map(|&e| want_of(&*m, e).map(|r| (e, r)))
                    .collect()
            };
            let st = &mut $h.states.$field;
            let world = &mut $h.world;
            let mut got = Vec::new();
            match form {
                0 => st.query(world).for_each(|$pat| got.push($item)),
                1 => got.extend(st.query(world).iter().map(|$pat| $item)),
                2 => st.query_shared(world.share()).for_each(|$pat| got.push($item)),
                3 => got.extend(st.query(world).get(target).map(|$pat| $item)),
                _ => {
                    let mut q = st.query(world);
                    for &e in &probe {
                        got.extend(q.get(e).map(|$pat| $item));
                    }
                }
            }
            same_set(stringify!($field), "kept state", got, &want);
            // `get` of an entity that is not alive returns before the run starts.
            let started = match form {
                3 => m.alive(target),
                4 => probe.iter().any(|&e| m.alive(e)),
                _ => true,
            };
            if started {
                m.ran(i);
            }
            m.running = Some(i);
            for (e, _) in &want {
                write(&mut *m, *e);
            }
            m.running = None;
        }
    }};
}

/// A read-only query of one shape, compared as a set with the model's matches: `for_each`
/// on the exclusive form, then one more form by turns (`form` 0: `iter`, 1: `for_each` on the
/// shared form, 2: the owning iterator); then `get` for every entity of `probe`.
macro_rules! read_query {
    ($world:ident, $m:ident, $probe:ident, $form:expr, $q:ty, [$($f:tt)*],
     |$pat:pat_param| $item:expr, $want:expr) => {{
        let want_of = $want;
        let want: Vec<(Entity, _)> = $m
            .live
            .keys()
            .filter_map(|&e| want_of(e).map(|r| (e, r)))
            .collect();
        let what = stringify!($q $($f)*);
        let mut got = Vec::new();
        $world.query_ref::<$q>()$($f)*.for_each(|$pat| got.push($item));
        same_set(what, "for_each", got, &want);
        match $form {
            0 => {
                let got: Vec<_> = $world.query_ref::<$q>()$($f)*.iter().map(|$pat| $item).collect();
                same_set(what, "iter", got, &want);
            }
            1 => {
                let mut got = Vec::new();
                $world.share().query::<$q>()$($f)*.for_each(|$pat| got.push($item));
                same_set(what, "shared for_each", got, &want);
                let w = $world.share();
                let mut q = w.query::<$q>()$($f)*;
                for &e in $probe.iter().rev().take(6) {
                    let want = if $m.alive(e) { want_of(e).map(|r| (e, r)) } else { None };
                    assert_eq!(q.get(e).map(|$pat| $item), want, "{what} shared get {e:?}");
                }
            }
            _ => {
                let got: Vec<_> = $world.query::<$q>()$($f)*.into_iter().map(|$pat| $item).collect();
                same_set(what, "into_iter", got, &want);
            }
        }
        let mut q = $world.query_ref::<$q>()$($f)*;
        for &e in $probe {
            let want = if $m.alive(e) { want_of(e).map(|r| (e, r)) } else { None };
            assert_eq!(q.get(e).map(|$pat| $item), want, "{what} get {e:?}");
        }
    }};
}

// --- the harness ----------------------------------------------------------------------------

/// Makes panics the test provokes on purpose quiet; any other panic goes to the hook that was
/// installed before (the default one, or the fuzzer's).
pub(crate) fn quiet_planned_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.to_string().contains(PLANNED) {
                previous(info);
            }
        }));
    });
}

/// Checks that `r` is a planned panic.
fn expect_planned<T: Debug>(r: std::thread::Result<T>) {
    let payload = r.expect_err("the operation panics");
    let msg = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    assert!(msg.contains(PLANNED), "another panic: {msg:?}");
}

/// A saved world, in a self-describing format or not.
#[cfg(any(feature = "serde", fuzzing))]
enum Saved {
    Json(String),
    Postcard(Vec<u8>),
}

/// A world that saves every test type, with nothing else set up.
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
fn new_world(min_free: u32) -> World {
    configured_world(min_free, &Config::default()).0
}

/// A world that saves every test type, with the groups, tracked types and hooks of `cfg`;
/// and the log its hooks count in.
fn configured_world(min_free: u32, cfg: &Config) -> (World, Arc<HookLog>) {
    let mut b = World::builder().min_free(min_free);
    for &g in &cfg.groups {
        b = builder_group(b, g);
    }
    #[allow(unused_mut)]
    let mut w = b.build();
    #[cfg(any(feature = "serde", fuzzing))]
    {
        w.register_saved::<A>("a");
        w.register_saved::<B>("b");
        w.register_saved::<C>("c");
        w.register_saved::<T1>("t1");
        w.register_saved::<T2>("t2");
        w.register_saved::<G>("g");
    }
    for k in KINDS {
        if cfg.tracked[k as usize] {
            per_kind!(k, T => w.track::<T>());
        }
    }
    let log = Arc::new(HookLog::default());
    if cfg.hooks {
        set_hooks(&mut w, &log);
    }
    (w, log)
}

struct Harness {
    world: World,
    m: Model,
    /// Entities of another world, live and stale.
    foreign: Vec<Entity>,
    /// Live `C` and `G` before the world was made.
    base: (i64, i64),
    /// Where the world's hooks count their calls.
    log: Arc<HookLog>,
    /// The kept query states of the world.
    states: States,
}

/// Runs a program against a world (keeping `min_free` slots back, set up by `setup`) and the
/// model, checking everything after every step, and the drop counts once the world is gone.
pub(crate) fn run(min_free: u32, setup: Setup, ops: &[Op]) {
    quiet_planned_panics();
    let base = counts();
    {
        let mut other = World::builder().min_free(0).build();
        let mut foreign: Vec<Entity> = (0..4).map(|i| other.spawn((A(i),))).collect();
        other.despawn(foreign[0]);
        foreign.push(other.spawn((A(9),)));
        let cfg = Config::of(setup);
        let (mut world, log) = configured_world(min_free, &cfg);
        if setup.0 & 0x80 != 0 {
            world.set_change_tick(u32::MAX - 24);
        }
        let m = Model {
            live: BTreeMap::new(),
            data: BTreeMap::new(),
            seen: Vec::new(),
            slots: Slots {
                generation: Vec::new(),
                occupied: Vec::new(),
                queue: VecDeque::new(),
                min_free: min_free as usize,
                world_id: world.entities().world_id(),
            },
            cfg,
            hooks: [0; 12],
            pending: VecDeque::new(),
            removed: Default::default(),
            op: 0,
            states: vec![StateRecord::default(); STATES],
            running: None,
        };
        assert_ne!(world.entities().world_id(), other.entities().world_id());
        let mut h = Harness {
            world,
            m,
            foreign,
            base,
            log,
            states: States::default(),
        };
        h.check(0);
        for (step, op) in ops.iter().enumerate() {
            h.m.op = step + 1;
            h.apply(op);
            h.m.settle();
            h.check(step);
        }
    }
    assert_eq!(counts(), base, "the world drops every component it holds");
}

impl Harness {
    fn resolve(&self, t: Target) -> Entity {
        self.m.resolve(t, &self.foreign, &[])
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Spawn(bun) => {
                let e = with_bundle(bun, SpawnSink(&mut self.world, bun));
                assert_eq!(e, self.m.spawn(bun), "the allocator's next entity");
            }
            Op::SpawnBatch {
                mask,
                ref seeds,
                take,
            } => {
                let buns: Vec<Bun> = seeds.iter().map(|&s| Bun::new(mask, s)).collect();
                let take = take.map(usize::from);
                let got = with_bundle(
                    Bun::new(mask, 0),
                    BatchSink {
                        world: &mut self.world,
                        buns: &buns,
                        take,
                    },
                );
                assert_eq!(got.len(), take.map_or(buns.len(), |k| k.min(buns.len())));
                // The bundles the walk did not reach were spawned when the batch dropped.
                for (i, &b) in buns.iter().enumerate() {
                    let e = self.m.spawn(b);
                    if let Some(&g) = got.get(i) {
                        assert_eq!(g, e);
                    }
                }
                // What hooks recorded during a batch is made at the next change.
                self.world.flush();
            }
            Op::Despawn(t) => {
                let e = self.resolve(t);
                assert_eq!(self.world.despawn(e), self.m.despawn(e));
            }
            Op::DespawnBatch(ref ts) => {
                let es: Vec<Entity> = ts.iter().map(|&t| self.resolve(t)).collect();
                let despawned = es.iter().filter(|&&e| self.m.despawn(e)).count();
                assert_eq!(self.world.despawn_batch(es.iter().copied()), despawned);
            }
            Op::Insert(t, bun) => {
                let e = self.resolve(t);
                let r = with_bundle(bun, InsertSink(&mut self.world, e, bun));
                if self.m.alive(e) {
                    assert_eq!(r, Ok(()));
                    self.m.put_bundle(e, bun, Kind::G);
                } else {
                    assert_eq!(r.map_err(|err| err.entity()), Err(e));
                }
            }
            Op::Remove(t, k) => {
                let e = self.resolve(t);
                per_kind!(k, T => {
                    let got = self.world.remove::<T>(e).map(|v| v.model());
                    assert_eq!(got, self.m.take::<T>(e), "remove {}", type_name::<T>());
                });
            }
            Op::Take(t, k1, k2) => {
                let e = self.resolve(t);
                per_kind!(k1, T => per_kind!(k2, U => {
                    if k1 == k2 {
                        let got = self.world.take::<(T,)>(e).map(|(v,)| v.model());
                        let want = if self.m.has::<T>(e) { self.m.take::<T>(e) } else { None };
                        assert_eq!(got, want, "take ({},)", type_name::<T>());
                    } else {
                        let got = self.world.take::<(T, U)>(e).map(|(v, w)| (v.model(), w.model()));
                        let want = if self.m.has::<T>(e) && self.m.has::<U>(e) {
                            Some((self.m.take::<T>(e).unwrap(), self.m.take::<U>(e).unwrap()))
                        } else {
                            None
                        };
                        assert_eq!(got, want, "take ({}, {})", type_name::<T>(), type_name::<U>());
                    }
                }));
            }
            Op::ViaEntity(t, how, v) => self.via_entity(t, how, v),
            Op::MutQuery {
                shape,
                form,
                target,
            } => self.mut_query(shape, form, target),
            Op::Commands(ref cmds) => self.commands(cmds),
            Op::Reserve { n, how, bun } => self.reserve(n, how, bun),
            Op::Clear => {
                self.world.clear();
                self.m.clear();
            }
            Op::SetData(t, k, seed) => {
                let e = self.resolve(t);
                let k = k % KEYS.len() as u8;
                let v = data_value(seed);
                let r = self.world.set_data(e, KEYS[k as usize], &v);
                assert_eq!(r.is_ok(), self.m.alive(e));
                if r.is_ok() {
                    self.m.data.entry(e).or_default().insert(k, v);
                }
            }
            Op::InsertData(t, ref entries) => {
                let e = self.resolve(t);
                let mut dc = DataComponent::new();
                let mut map = BTreeMap::new();
                for &(k, seed) in entries {
                    let k = k % KEYS.len() as u8;
                    let v = data_value(seed);
                    dc.set(KEYS[k as usize], &v);
                    map.insert(k, v);
                }
                let r = self.world.insert_data(e, &dc);
                assert_eq!(r.is_ok(), self.m.alive(e));
                if r.is_ok() {
                    self.m.data.insert(e, map);
                }
            }
            Op::RemoveData(t) => {
                let e = self.resolve(t);
                let had = self.m.alive(e) && self.m.data.remove(&e).is_some();
                assert_eq!(self.world.remove_data(e), had);
            }
            Op::RemoveDataKey(t, k) => {
                let e = self.resolve(t);
                let k = k % KEYS.len() as u8;
                let had = self.m.alive(e)
                    && self
                        .m
                        .data
                        .get_mut(&e)
                        .is_some_and(|d| d.remove(&k).is_some());
                assert_eq!(self.world.remove_data_key(e, KEYS[k as usize]), had);
            }
            Op::SaveLoad(how, bun) => self.save_load(how, bun),
            Op::LoadMutated(ref changes) => self.load_mutated(changes),
            Op::LoadBytes(ref bytes) => self.load_bytes(bytes),
            Op::PanicDrop(t, how, bun) => self.panic_drop(t, how, bun),
            Op::PanicQuery { form, after } => self.panic_query(form, after),
            Op::PanicBatch {
                mask,
                ref seeds,
                at,
                walk,
            } => {
                let buns: Vec<Bun> = seeds.iter().map(|&s| Bun::new(mask, s)).collect();
                let at = usize::from(at);
                let sink = PanicBatchSink {
                    world: &mut self.world,
                    buns: &buns,
                    at,
                    walk,
                };
                let r = catch_unwind(AssertUnwindSafe(|| with_bundle(Bun::new(mask, 0), sink)));
                if at < buns.len() {
                    expect_planned(r);
                } else {
                    assert!(r.is_ok());
                }
                for &b in buns.iter().take(at) {
                    self.m.spawn(b);
                }
                self.world.flush();
            }
            Op::Group(n) => {
                let g = usize::from(n % 5);
                let r = declare_group(&mut self.world, g);
                if g >= 3 {
                    assert!(matches!(r, Err(GroupError::BadTypes { .. })), "{r:?}");
                } else if self.m.cfg.groups.contains(&g) {
                    // Declared again: nothing changes (the group invariants checked after
                    // the step see the same packing).
                    assert_eq!(r, Ok(()), "group {g} again");
                } else if GROUPS[g].iter().any(|&k| self.m.cfg.group_of(k).is_some()) {
                    let taken = |name: &str| {
                        GROUPS[g].iter().any(|&k| {
                            self.m.cfg.group_of(k).is_some()
                                && per_kind!(k, T => type_name::<T>()) == name
                        })
                    };
                    match r {
                        Err(GroupError::AlreadyGrouped { component }) => {
                            assert!(taken(component), "{component} is not taken")
                        }
                        r => panic!("group {g} over a taken type: {r:?}"),
                    }
                } else {
                    assert_eq!(r, Ok(()), "group {g}");
                    self.m.cfg.groups.push(g);
                }
            }
            Op::Track(k) => {
                per_kind!(k, T => self.world.track::<T>());
                self.m.track(k);
            }
            Op::RunState {
                which,
                form,
                target,
            } => self.run_state(which, form, target),
            Op::ResetState(n) => {
                let i = usize::from(n) % STATES;
                let s = &mut self.states;
                match i {
                    0 => s.a_changed = QueryState::new(),
                    1 => s.a_added = QueryState::new(),
                    2 => s.c_changed_mut = QueryState::new(),
                    3 => s.ac_added = QueryState::new(),
                    4 => s.ac_mut_changed = QueryState::new(),
                    5 => s.t1_changed = QueryState::new(),
                    6 => s.t2g_added = QueryState::new(),
                    7 => s.b_changed = QueryState::new(),
                    _ => s.a_or_c = QueryState::new(),
                }
                self.m.states[i] = StateRecord::default();
            }
            Op::Maintain => {
                self.world.maintain();
                for list in &mut self.m.removed {
                    list.clear();
                }
            }
            Op::ShrinkToFit => {
                let before = self.world.memory_usage();
                self.world.shrink_to_fit();
                assert!(
                    self.world.memory_usage() <= before,
                    "shrink_to_fit grew the world"
                );
            }
            Op::SetTick(v) => self.set_tick(v),
            Op::SortGroup(n, up) => self.sort_group(n, up),
            Op::SliceWrite(n) => self.slice_write(n),
        }
    }

    fn via_entity(&mut self, t: Target, how: u8, v: u32) {
        let e = self.resolve(t);
        let v = v % 1000;
        let w = &mut self.world;
        let m = &mut self.m;
        match how % 7 {
            6 => {
                // Two at once: `e` and a live entity picked by `v` (sometimes `e` itself).
                let other = m.live.keys().nth(v as usize % m.live.len().max(1)).copied();
                let other = other.unwrap_or(e);
                let got = w
                    .get_disjoint_mut::<A, 2>([e, other])
                    .map(|[x, y]| {
                        x.0 = v;
                        y.0 = v + 1;
                    })
                    .is_some();
                let want = e != other && m.get::<A>(e).is_some() && m.get::<A>(other).is_some();
                assert_eq!(got, want, "get_disjoint_mut of {e:?} and {other:?}");
                if want {
                    *m.get_mut::<A>(e).unwrap() = v;
                    *m.get_mut::<A>(other).unwrap() = v + 1;
                }
            }
            4 => {
                // Through a view (which holds the storage alone, or, for a type of a group,
                // every storage of the group); what hooks record is made at the next change.
                let got = w.view_mut::<A>().insert(e, A(v));
                if m.alive(e) {
                    assert_eq!(got, Ok(!m.has::<A>(e)));
                    m.put::<A>(e, v);
                } else {
                    assert_eq!(got.map_err(|err| err.entity()), Err(e));
                }
                w.flush();
            }
            5 => {
                let got = w.view_mut::<A>().remove(e);
                assert_eq!(got.map(|a| a.0), m.take::<A>(e));
                w.flush();
            }
            0 => {
                let got = w.get_mut::<A>(e).map(|a| a.0 = v).is_some();
                assert_eq!(got, m.get_mut::<A>(e).map(|a| *a = v).is_some());
            }
            1 => {
                let got = match w.entity_mut(e) {
                    Ok(mut view) => {
                        assert_eq!(view.id(), e);
                        view.get_mut::<A>().map(|a| a.0 = v).is_some()
                    }
                    Err(err) => {
                        assert_eq!(err.entity(), e);
                        assert!(!m.alive(e));
                        false
                    }
                };
                assert_eq!(got, m.get_mut::<A>(e).map(|a| *a = v).is_some());
            }
            2 => {
                let got = w.entity_mut(e).ok().and_then(|mut view| view.remove::<A>());
                assert_eq!(got.map(|a| a.0), m.take::<A>(e));
            }
            _ => {
                let alive = w.entity_mut(e).map(|view| view.despawn()).is_ok();
                assert_eq!(alive, m.despawn(e));
            }
        }
    }

    fn mut_query(&mut self, shape: u8, form: u8, target: Target) {
        let target = self.resolve(target);
        let world = &mut self.world;
        let m = &mut self.m;
        match shape % 5 {
            0 => mut_query!(world, m, form, target,
            (Entity, &mut A, Option<&mut C>), [.without::<T2>()],
            |(e, a, c)| {
                a.0 = bump_a(a.0);
                if let Some(c) = c {
                    c.v = bump_c(c.v);
                }
                e
            },
            |m: &Model, e| m.has::<A>(e) && !m.has::<T2>(e),
            |m: &mut Model, e| {
                let a = m.get_mut::<A>(e).unwrap();
                *a = bump_a(*a);
                if let Some(c) = m.get_mut::<C>(e) {
                    *c = bump_c(*c);
                }
            }),
            1 => mut_query!(
                world,
                m,
                form,
                target,
                (Entity, &mut B, &T1),
                [],
                |(e, b, _t)| {
                    bump_b(&mut b.0);
                    e
                },
                |m: &Model, e| m.has::<B>(e) && m.has::<T1>(e),
                |m: &mut Model, e| bump_b(m.get_mut::<B>(e).unwrap())
            ),
            2 => mut_query!(world, m, form, target,
            (Entity, &mut C, Option<&mut T2>), [.with::<G>()],
            |(e, c, t2)| {
                c.v = bump_c(c.v);
                if let Some(t2) = t2 {
                    *t2 = T2;
                }
                e
            },
            |m: &Model, e| m.has::<C>(e) && m.has::<G>(e),
            |m: &mut Model, e| {
                let c = m.get_mut::<C>(e).unwrap();
                *c = bump_c(*c);
                m.touch::<T2>(e);
            }),
            // Tests the presence of what it writes, before and after writing it.
            3 => mut_query!(world, m, form, target,
            (Entity, Has<A>, &mut A, Has<C>), [.with::<A>()],
            |(e, has_a, a, _has_c)| {
                assert!(has_a, "Has<A> of an entity the query writes A of");
                a.0 = bump_a(a.0);
                e
            },
            |m: &Model, e| m.has::<A>(e),
            |m: &mut Model, e| {
                let a = m.get_mut::<A>(e).unwrap();
                *a = bump_a(*a);
            }),
            _ => mut_query!(world, m, form, target,
                (Entity, &mut T1), [.without::<A>()],
                |(e, t1)| {
                    *t1 = T1;
                    e
                },
                |m: &Model, e| m.has::<T1>(e) && !m.has::<A>(e),
                |m: &mut Model, e| m.touch::<T1>(e)),
        }
    }

    fn commands(&mut self, cmds: &[Cmd]) {
        let mut commands = Commands::new();
        // The commands recorded after the query go to a second buffer, appended to the first
        // before the world applies them: one order, as if recorded into one.
        let mut rest = Commands::new();
        let mut reserved: Vec<Entity> = Vec::new();
        let mut plan: Vec<Planned> = Vec::new();
        {
            let w = self.world.share();
            let mut rec = Recorder {
                commands: &mut commands,
                reserved: &mut reserved,
                plan: &mut plan,
                m: &mut self.m,
                foreign: &self.foreign,
            };
            // Record while a shared query runs, a few commands per entity it visits; the rest
            // after it.
            let mut next = 0;
            w.query::<(Entity, Option<&A>)>().for_each(|(e, _)| {
                assert!(w.is_alive(e));
                for _ in 0..2 {
                    if let Some(cmd) = cmds.get(next) {
                        rec.record(cmd, w.entities());
                        next += 1;
                    }
                }
            });
            rec.commands = &mut rest;
            for cmd in &cmds[next..] {
                rec.record(cmd, w.entities());
            }
            for &r in &reserved {
                assert!(!w.is_alive(r), "reserved, not alive before the flush");
            }
            assert_eq!(w.len(), self.m.live.len());
        }
        let recorded = commands.len();
        commands.append(&mut rest);
        assert!(rest.is_empty());
        assert_eq!(commands.len(), cmds.len(), "{recorded} in the query");
        // The model: reservations come alive first, then each command in order.
        for &r in &reserved {
            self.m.make_alive(r);
        }
        let mut skipped = 0;
        for p in plan {
            let done = match p {
                Planned::Spawn(bun) => {
                    self.m.spawn(bun);
                    true
                }
                Planned::Insert(e, bun) => {
                    let alive = self.m.alive(e);
                    if alive {
                        self.m.put_bundle(e, bun, Kind::G);
                    }
                    alive
                }
                Planned::Remove(e, k) => {
                    let alive = self.m.alive(e);
                    if alive {
                        self.m.remove_kind(e, k);
                    }
                    alive
                }
                Planned::Despawn(e) => self.m.despawn(e),
                Planned::Pushed(e, bun) => {
                    if self.m.alive(e) {
                        self.m.put_bundle(e, bun, Kind::G);
                    }
                    true
                }
            };
            // What hooks recorded is made right after the command that ran them.
            self.m.settle();
            skipped += usize::from(!done);
        }
        assert_eq!(self.world.apply(&mut commands), skipped, "skipped commands");
        assert!(commands.is_empty());
    }

    fn reserve(&mut self, n: u8, how: u8, bun: Bun) {
        let n = n % 5;
        let rs: Vec<Entity> = (0..n)
            .map(|i| {
                let r = if i % 2 == 0 {
                    self.world.reserve_entity()
                } else {
                    self.world.entities().reserve()
                };
                assert_eq!(r, self.m.alloc(), "reservations name the next allocations");
                r
            })
            .collect();
        for &r in &rs {
            assert!(!self.world.is_alive(r));
            assert!(self.world.get::<A>(r).is_none() && self.world.data(r).is_none());
            let err = self.world.entity(r).map(|_| ()).unwrap_err();
            assert_eq!(err.reason(), NotAlive::Reserved, "reason for {r:?}");
        }
        // While they are pending, the dead are told apart from them: a reservation that
        // reuses a slot leaves the slot's despawned entities despawned.
        let dead = self.m.seen.iter().rev().take(12).chain(&self.foreign);
        for &e in dead.filter(|e| !rs.contains(e) && !self.m.live.contains_key(e)) {
            let err = self.world.entity(e).map(|_| ()).unwrap_err();
            assert_eq!(
                err.reason(),
                self.m.slots.not_alive(e),
                "reason for {e:?} while {rs:?} are reserved"
            );
        }
        assert_eq!(self.world.len(), self.m.live.len());
        for &r in &rs {
            self.m.make_alive(r);
        }
        match (how % 4, rs.first()) {
            (1, Some(&r)) => {
                // Structural changes flush first.
                let got = with_bundle(bun, InsertSink(&mut self.world, r, bun));
                assert_eq!(got, Ok(()));
                self.m.put_bundle(r, bun, Kind::G);
            }
            (2, Some(&r)) => {
                assert!(self.world.despawn(r));
                assert!(self.m.despawn(r));
            }
            (3, _) => {
                let e = with_bundle(bun, SpawnSink(&mut self.world, bun));
                assert_eq!(e, self.m.spawn(bun), "spawned after the reserved ones");
            }
            _ => self.world.flush(),
        }
    }

    /// Saves, loads, and checks that the loaded world is the model's and spawns the same next
    /// entity as the original.
    #[cfg(any(feature = "serde", fuzzing))]
    fn save_load(&mut self, how: u8, bun: Bun) {
        // JSON, or postcard (a format that is not self-describing: a struct is a sequence).
        let saved = if how & 0x80 == 0 {
            Saved::Json(serde_json::to_string(&self.world).expect("a world saves"))
        } else {
            Saved::Postcard(postcard::to_allocvec(&self.world).expect("a world saves"))
        };
        let load = |w: &mut World| match &saved {
            Saved::Json(s) => w
                .load(&mut serde_json::Deserializer::from_str(s))
                .map_err(|e| e.to_string()),
            Saved::Postcard(b) => w
                .load(&mut postcard::Deserializer::from_bytes(b))
                .map_err(|e| e.to_string()),
        };
        match (how & 0x7F) % 3 {
            2 => {
                // In place: the old contents are dropped, the saved ones come back.
                // The world keeps its groups, tracking and hooks: no hook runs, every value is
                // new, no removal is listed.
                load(&mut self.world).expect("a saved world loads");
                self.m.loaded();
                let e = with_bundle(bun, SpawnSink(&mut self.world, bun));
                assert_eq!(e, self.m.spawn(bun));
            }
            how => {
                let (mut loaded, log) = configured_world(0, &self.m.cfg);
                load(&mut loaded).expect("a saved world loads");
                check_world(&mut loaded, &self.m, &self.foreign, None, how.into(), None);
                // Saved again, the loaded world writes what it was loaded from: every storage
                // keeps the saved order (a group's, a tag's included).
                let again = match &saved {
                    Saved::Json(s) => serde_json::to_string(&loaded).unwrap() == *s,
                    Saved::Postcard(b) => postcard::to_allocvec(&loaded).unwrap() == *b,
                };
                assert!(again, "a loaded world saves what it was loaded from");
                let a = with_bundle(bun, SpawnSink(&mut self.world, bun));
                let b = with_bundle(bun, SpawnSink(&mut loaded, bun));
                assert_eq!(a, b, "the loaded world spawns what the original does");
                if how == 0 {
                    // Another world: new hooks, new kept states.
                    self.world = loaded;
                    self.log = log;
                    self.states = States::default();
                    self.m.hooks = [0; 12];
                    self.m.states = vec![StateRecord::default(); STATES];
                    self.m.loaded();
                }
                assert_eq!(a, self.m.spawn(bun));
            }
        }
    }

    #[cfg(not(any(feature = "serde", fuzzing)))]
    fn save_load(&mut self, _: u8, bun: Bun) {
        let e = with_bundle(bun, SpawnSink(&mut self.world, bun));
        assert_eq!(e, self.m.spawn(bun));
    }

    /// Loads a saved world with bytes changed: an error, or a valid world.
    #[cfg(any(feature = "serde", fuzzing))]
    fn load_mutated(&mut self, changes: &[(u16, u8)]) {
        let mut bytes = serde_json::to_vec(&self.world).expect("a world saves");
        for &(at, b) in changes {
            let at = usize::from(at) % bytes.len();
            // Mostly digits, which keep the text JSON and change numbers.
            bytes[at] = if b & 0x80 != 0 { b'0' + b % 10 } else { b };
        }
        self.load_bytes(&bytes);
    }

    #[cfg(not(any(feature = "serde", fuzzing)))]
    fn load_mutated(&mut self, _: &[(u16, u8)]) {}

    /// Loads `bytes` into a new world: never a panic; an error leaves a world as it was (the
    /// harness's world, checked after the step); success gives a valid, usable world.
    #[cfg(any(feature = "serde", fuzzing))]
    fn load_bytes(&mut self, bytes: &[u8]) {
        let (mut probe, _) = configured_world(0, &self.m.cfg);
        let keep = probe.spawn((A(5), C::new(5)));
        match probe.load(&mut serde_json::Deserializer::from_slice(bytes)) {
            Ok(()) => exercise_loaded(probe, &self.m.cfg),
            Err(_) => {
                assert_eq!(probe.get::<C>(keep).map(|c| c.v), Some(5));
                probe.assert_invariants();
                let r = self
                    .world
                    .load(&mut serde_json::Deserializer::from_slice(bytes));
                assert!(
                    r.is_err(),
                    "one load fails, the same load elsewhere succeeds"
                );
            }
        }
    }

    #[cfg(not(any(feature = "serde", fuzzing)))]
    fn load_bytes(&mut self, _: &[u8]) {}

    fn panic_drop(&mut self, t: Target, how: u8, bun: Bun) {
        // A live entity with a `C`, armed.
        let e = match self.m.live_pick(t.n) {
            Some(e) => e,
            None => {
                let b = Bun::new(0, bun.seed).with(Kind::C);
                let e = with_bundle(b, SpawnSink(&mut self.world, b));
                assert_eq!(e, self.m.spawn(b));
                self.m.settle();
                e
            }
        };
        if !self.m.has::<C>(e) {
            self.world.insert(e, (C::make(bun.seed),)).unwrap();
            self.m.put::<C>(e, C::model_of(bun.seed));
            self.m.settle();
        }
        self.world.get_mut::<C>(e).unwrap().boom = true;
        self.m.touch::<C>(e);
        let with_c = bun.with(Kind::C);
        match how % 7 {
            0 => {
                expect_planned(catch_unwind(AssertUnwindSafe(|| self.world.despawn(e))));
                assert!(self.m.despawn(e));
            }
            6 => {
                // In a batch between two other live entities (when there are): the one
                // before and `e` are despawned, the one after is not.
                let mut others = (1..3)
                    .filter_map(|k| self.m.live_pick(t.n.wrapping_add(k)))
                    .filter(|&o| o != e);
                let before = others.next();
                let after = others.find(|&o| Some(o) != before);
                let batch: Vec<Entity> = before.into_iter().chain([e]).chain(after).collect();
                let world = &mut self.world;
                expect_planned(catch_unwind(AssertUnwindSafe(|| {
                    world.despawn_batch(batch.iter().copied())
                })));
                if let Some(b) = before {
                    assert!(self.m.despawn(b));
                }
                assert!(self.m.despawn(e));
                if let Some(a) = after {
                    assert!(self.world.is_alive(a), "despawned after the panic");
                }
            }
            1 => {
                expect_planned(catch_unwind(AssertUnwindSafe(|| self.world.clear())));
                self.m.clear();
            }
            2 => {
                let world = &mut self.world;
                expect_planned(catch_unwind(AssertUnwindSafe(|| {
                    with_bundle(with_c, InsertSink(world, e, with_c))
                })));
                self.m.put_bundle_panicking(e, with_c);
            }
            how => {
                let mut commands = Commands::new();
                let r1 = with_bundle(bun, CmdSpawnSink(&mut commands, self.world.entities(), bun));
                assert_eq!(r1, self.m.alloc());
                match how {
                    3 => with_bundle(with_c, CmdInsertSink(&mut commands, e, with_c)),
                    4 => commands.remove::<C>(e),
                    _ => {
                        commands.despawn(e);
                        // In one run of despawns with `e`: dropped unmade after the panic too.
                        commands.despawn(r1);
                    }
                }
                // Dropped unmade after the panic.
                let r2 = with_bundle(
                    with_c,
                    CmdSpawnSink(&mut commands, self.world.entities(), with_c),
                );
                assert_eq!(r2, self.m.alloc());
                commands.despawn(r1);
                commands.insert(e, (A(1), C::new(1)));
                let world = &mut self.world;
                expect_planned(catch_unwind(AssertUnwindSafe(|| {
                    world.apply(&mut commands)
                })));
                assert!(commands.is_empty(), "the rest is dropped");
                self.m.make_alive(r1);
                self.m.make_alive(r2);
                self.m.put_bundle(r1, bun, Kind::G);
                match how {
                    3 => self.m.put_bundle_panicking(e, with_c),
                    4 => assert!(self.m.remove_kind(e, Kind::C)),
                    _ => assert!(self.m.despawn(e)),
                }
            }
        }
        // What hooks recorded before the panic is made at the next change.
        self.world.flush();
    }

    fn panic_query(&mut self, form: u8, after: u8) {
        let after = usize::from(after);
        let m = &mut self.m;
        let world = &mut self.world;
        let form = form % 4;
        let want: Vec<Entity> = m
            .live
            .keys()
            .copied()
            .filter(|&e| {
                if form == 3 {
                    m.has::<A>(e) && m.has::<C>(e)
                } else {
                    m.has::<A>(e) && !m.has::<T2>(e)
                }
            })
            .collect();
        let mut visited: Vec<Entity> = Vec::new();
        // The entity whose item was handed out (and so marked changed) when the body panicked.
        let mut hit: Option<Entity> = None;
        let r = catch_unwind(AssertUnwindSafe(|| {
            let mut body = |(e, a, c): (Entity, &mut A, Option<&mut C>)| {
                if visited.len() == after {
                    hit = Some(e);
                    panic!("{PLANNED}");
                }
                a.0 = bump_a(a.0);
                if let Some(c) = c {
                    c.v = bump_c(c.v);
                }
                visited.push(e);
            };
            match form {
                0 => world
                    .query::<(Entity, &mut A, Option<&mut C>)>()
                    .without::<T2>()
                    .for_each(body),
                1 => world
                    .share()
                    .query::<(Entity, &mut A, Option<&mut C>)>()
                    .without::<T2>()
                    .for_each(body),
                2 => {
                    let w = world.share();
                    let mut q = w
                        .query::<(Entity, &mut A, Option<&mut C>)>()
                        .without::<T2>();
                    for item in q.iter() {
                        body(item);
                    }
                }
                _ => world
                    .share()
                    .query::<(Entity, &A, &C)>()
                    .for_each(|(e, _, _)| {
                        if visited.len() == after {
                            panic!("{PLANNED}");
                        }
                        visited.push(e);
                    }),
            }
        }));
        if want.len() > after {
            expect_planned(r);
        } else {
            assert!(r.is_ok());
        }
        assert_eq!(visited.len(), want.len().min(after));
        let mut sorted = visited.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), visited.len(), "an entity visited twice");
        for &e in &visited {
            assert!(want.contains(&e));
            if form != 3 {
                let a = m.get_mut::<A>(e).unwrap();
                *a = bump_a(*a);
                if let Some(c) = m.get_mut::<C>(e) {
                    *c = bump_c(*c);
                }
            }
        }
        if let Some(e) = hit {
            m.touch::<A>(e);
            m.touch::<C>(e);
        }
        // The flags were released: the same components, mutably, through the shared form
        // (which marks them changed).
        let w = world.share();
        let both: Vec<Entity> = m
            .live
            .keys()
            .copied()
            .filter(|&e| m.has::<A>(e) && m.has::<C>(e))
            .collect();
        // Counting hands nothing out and marks nothing; visiting marks.
        assert_eq!(w.query::<(&mut A, &mut C)>().count(), both.len());
        let mut visited = 0;
        w.query::<(&mut A, &mut C)>().for_each(|_| visited += 1);
        assert_eq!(visited, both.len());
        for e in both {
            m.touch::<A>(e);
            m.touch::<C>(e);
        }
    }

    fn check(&mut self, step: usize) {
        check_world(
            &mut self.world,
            &self.m,
            &self.foreign,
            Some(self.base),
            step,
            Some(&self.log),
        );
    }

    /// Runs kept state `which` in one of five forms, compared with the model's matches that
    /// the state has not seen; its writes are then made in the model, for the other states.
    fn run_state(&mut self, which: u8, form: u8, target: Target) {
        let target = self.resolve(target);
        match usize::from(which) % STATES {
            0 => state_run!(
                self,
                0,
                form,
                target,
                a_changed,
                [(Kind::A, false)],
                |(e, a)| (e, a.0),
                |m: &Model, e| m.get::<A>(e).copied(),
                |_: &mut Model, _| {}
            ),
            1 => state_run!(
                self,
                1,
                form,
                target,
                a_added,
                [(Kind::A, true)],
                |e| (e, ()),
                |m: &Model, e| m.has::<A>(e).then_some(()),
                |_: &mut Model, _| {}
            ),
            2 => state_run!(
                self,
                2,
                form,
                target,
                c_changed_mut,
                [(Kind::C, false)],
                |(e, c)| {
                    c.v = bump_c(c.v);
                    (e, c.v)
                },
                |m: &Model, e| m.get::<C>(e).map(|&c| bump_c(c)),
                |m: &mut Model, e| {
                    let c = m.get_mut::<C>(e).unwrap();
                    *c = bump_c(*c);
                }
            ),
            3 => state_run!(
                self,
                3,
                form,
                target,
                ac_added,
                [(Kind::C, true)],
                |(e, a, c)| (e, (a.0, c.v)),
                |m: &Model, e| Some((*m.get::<A>(e)?, *m.get::<C>(e)?)),
                |_: &mut Model, _| {}
            ),
            4 => state_run!(
                self,
                4,
                form,
                target,
                ac_mut_changed,
                [(Kind::C, false)],
                |(e, a, c)| {
                    a.0 = bump_a(a.0);
                    (e, (a.0, c.v))
                },
                |m: &Model, e| {
                    let a = bump_a(*m.get::<A>(e)?);
                    (!m.has::<T2>(e)).then_some((a, *m.get::<C>(e)?))
                },
                |m: &mut Model, e| {
                    let a = m.get_mut::<A>(e).unwrap();
                    *a = bump_a(*a);
                }
            ),
            5 => state_run!(
                self,
                5,
                form,
                target,
                t1_changed,
                [(Kind::T1, false)],
                |e| (e, ()),
                |m: &Model, e| (m.has::<T1>(e) && m.has::<A>(e)).then_some(()),
                |_: &mut Model, _| {}
            ),
            6 => state_run!(
                self,
                6,
                form,
                target,
                t2g_added,
                [(Kind::G, true), (Kind::A, false)],
                |(e, _t2, _g)| (e, ()),
                |m: &Model, e| (m.has::<T2>(e) && m.has::<G>(e) && m.has::<A>(e)).then_some(()),
                |_: &mut Model, _| {}
            ),
            7 => state_run!(
                self,
                7,
                form,
                target,
                b_changed,
                [(Kind::B, false), (Kind::C, true)],
                |(e, b)| {
                    bump_b(&mut b.0);
                    (e, b.0.clone())
                },
                |m: &Model, e| {
                    let mut b = m.get::<B>(e)?.clone();
                    bump_b(&mut b);
                    m.has::<C>(e).then_some(b)
                },
                |m: &mut Model, e| bump_b(m.get_mut::<B>(e).unwrap())
            ),
            _ => state_run!(
                self,
                8,
                form,
                target,
                a_or_c,
                or [(Kind::A, false), (Kind::C, true)],
                |(e, a, t1)| (e, (a.0, t1)),
                |m: &Model, e| Some((*m.get::<A>(e)?, m.has::<T1>(e))),
                |_: &mut Model, _| {}
            ),
        }
    }

    /// Moves the change counter: a little, or by more than `Tick::MAX_AGE` (then every state
    /// is idle for too long, and its next run sees everything).
    fn set_tick(&mut self, v: u32) {
        let now = self.world.change_tick().get();
        let far = |to: u32| {
            let d = to.wrapping_sub(now);
            d > Tick::MAX_AGE + (1 << 20) && d <= 1 << 31
        };
        let to = if v % 2 == 0 {
            now.wrapping_add((v >> 1) % 64)
        } else {
            let near_wrap = u32::MAX - (v >> 1) % 16;
            if far(near_wrap) {
                near_wrap
            } else {
                now.wrapping_add(Tick::MAX_AGE + (1 << 20) + 1 + (v >> 1) % 1024)
            }
        };
        self.world.set_change_tick(to);
        assert_eq!(self.world.change_tick().get(), to);
        if v % 2 == 1 {
            assert!(far(to));
            self.m.forget();
        }
    }

    /// Sorts a declared group; its grouped query then walks in that order.
    fn sort_group(&mut self, n: u8, up: bool) {
        if self.m.cfg.groups.is_empty() {
            return;
        }
        let g = self.m.cfg.groups[usize::from(n) % self.m.cfg.groups.len()];
        let w = &mut self.world;
        let dir = |o: std::cmp::Ordering| if up { o } else { o.reverse() };
        match g {
            0 => {
                w.sort_group_by::<A>(|x, y| dir(x.0.cmp(&y.0)));
                let walked: Vec<u32> = w.query::<(&A, &C)>().iter().map(|(a, _)| a.0).collect();
                assert!(
                    walked.windows(2).all(|p| dir(p[0].cmp(&p[1])).is_le()),
                    "sorted by A: {walked:?}"
                );
            }
            // Every key equal: a stable sort keeps the order.
            1 => {
                let before: Vec<Entity> = w
                    .query::<(Entity, &T2, &G)>()
                    .iter()
                    .map(|(e, ..)| e)
                    .collect();
                w.sort_group_by::<G>(|_, _| std::cmp::Ordering::Equal);
                let after: Vec<Entity> = w
                    .query::<(Entity, &T2, &G)>()
                    .iter()
                    .map(|(e, ..)| e)
                    .collect();
                assert_eq!(before, after, "a stable sort of equal keys");
            }
            _ => {
                w.sort_group_by::<B>(|x, y| dir(x.0.cmp(&y.0)));
                let walked: Vec<String> = w
                    .query::<(&C, &B)>()
                    .iter()
                    .map(|(_, b)| b.0.clone())
                    .collect();
                assert!(
                    walked.windows(2).all(|p| dir(p[0].cmp(&p[1])).is_le()),
                    "sorted by B: {walked:?}"
                );
            }
        }
    }

    /// Writes through the slices of group `n % 3`: none unless it is declared.
    fn slice_write(&mut self, n: u8) {
        let g = usize::from(n % 3);
        let declared = self.m.cfg.groups.contains(&g);
        let w = &mut self.world;
        let members: Vec<Entity> = self
            .m
            .live
            .keys()
            .copied()
            .filter(|&e| {
                GROUPS[g]
                    .iter()
                    .all(|&k| per_kind!(k, T => self.m.has::<T>(e)))
            })
            .collect();
        let len = match g {
            0 => {
                // The values of each position, by entity, to check the entities' order after.
                let mut q = w.query::<(Entity, &mut A, &C)>();
                let seen = q.slices().map(|(es, a, c)| {
                    assert_eq!((es.len(), a.len()), (c.len(), c.len()));
                    a.iter_mut().for_each(|a| a.0 = bump_a(a.0));
                    es.iter()
                        .zip(a.iter().zip(c))
                        .map(|(e, (a, c))| (e, (a.0, c.v)))
                        .collect::<Vec<_>>()
                });
                drop(q);
                seen.map(|seen| {
                    for &(e, v) in &seen {
                        assert_eq!(
                            w.get::<A>(e).map(|a| a.0),
                            Some(v.0),
                            "A of {e:?} by position"
                        );
                        assert_eq!(
                            w.get::<C>(e).map(|c| c.v),
                            Some(v.1),
                            "C of {e:?} by position"
                        );
                    }
                    seen.len()
                })
            }
            1 => w.query::<(&mut T2, &G)>().slices().map(|(t, g)| {
                assert_eq!(t.len(), g.len());
                t.len()
            }),
            _ => w.query::<(&C, &mut B)>().slices().map(|(c, b)| {
                assert_eq!(c.len(), b.len());
                b.iter_mut().for_each(|b| bump_b(&mut b.0));
                b.len()
            }),
        };
        assert_eq!(len.is_some(), declared, "slices of group {g}");
        if declared {
            assert_eq!(len, Some(members.len()));
            for e in members {
                match g {
                    0 => {
                        let a = self.m.get_mut::<A>(e).unwrap();
                        *a = bump_a(*a);
                    }
                    1 => self.m.touch::<T2>(e),
                    _ => bump_b(self.m.get_mut::<B>(e).unwrap()),
                }
            }
        }
    }
}

/// A command as the model makes it.
enum Planned {
    Spawn(Bun),
    Insert(Entity, Bun),
    /// A pushed insert: made if the entity is alive, never skipped.
    Pushed(Entity, Bun),
    Remove(Entity, Kind),
    Despawn(Entity),
}

/// Records commands into a buffer and what they mean into a plan.
struct Recorder<'a> {
    commands: &'a mut Commands,
    reserved: &'a mut Vec<Entity>,
    plan: &'a mut Vec<Planned>,
    m: &'a mut Model,
    foreign: &'a [Entity],
}

impl Recorder<'_> {
    fn record(&mut self, cmd: &Cmd, entities: &Entities) {
        let resolve = |m: &Model, t: Target| m.resolve(t, self.foreign, self.reserved);
        match *cmd {
            Cmd::Spawn(bun) => {
                let e = with_bundle(bun, CmdSpawnSink(self.commands, entities, bun));
                assert_eq!(e, self.m.alloc(), "a reservation names the next allocation");
                assert!(!entities.is_alive(e));
                self.reserved.push(e);
                self.plan.push(Planned::Insert(e, bun));
            }
            Cmd::SpawnUnnamed(bun) => {
                with_bundle(bun, CmdSpawnUnnamedSink(self.commands, bun));
                self.plan.push(Planned::Spawn(bun));
            }
            Cmd::Insert(t, bun) => {
                let e = resolve(self.m, t);
                with_bundle(bun, CmdInsertSink(self.commands, e, bun));
                self.plan.push(Planned::Insert(e, bun));
            }
            Cmd::Remove(t, k) => {
                let e = resolve(self.m, t);
                per_kind!(k, T => self.commands.remove::<T>(e));
                self.plan.push(Planned::Remove(e, k));
            }
            Cmd::Despawn(t) => {
                let e = resolve(self.m, t);
                self.commands.despawn(e);
                self.plan.push(Planned::Despawn(e));
            }
            Cmd::Push(t, bun) => {
                let e = resolve(self.m, t);
                with_bundle(bun, CmdPushSink(self.commands, e, bun));
                self.plan.push(Planned::Pushed(e, bun));
            }
        }
    }
}

fn same_set<R: PartialEq + Debug>(
    what: &str,
    how: &str,
    mut got: Vec<(Entity, R)>,
    want: &[(Entity, R)],
) {
    got.sort_by_key(|p| p.0);
    for w in got.windows(2) {
        assert_ne!(w[0].0, w[1].0, "{what} {how}: an entity twice");
    }
    assert_eq!(got, want, "{what} {how}");
}

/// `removed::<T>()` against the model's list: the same entities, operation by operation
/// (within one, in the storage's order).
fn same_removed(what: &str, got: &[Entity], want: &[(usize, Entity)]) {
    assert_eq!(got.len(), want.len(), "removed {what}: {got:?} vs {want:?}");
    let mut i = 0;
    while i < want.len() {
        let op = want[i].0;
        let j = i + want[i..].iter().take_while(|w| w.0 == op).count();
        let mut g = got[i..j].to_vec();
        let mut w: Vec<Entity> = want[i..j].iter().map(|w| w.1).collect();
        g.sort();
        w.sort();
        assert_eq!(g, w, "removed {what} in operation {op}");
        i = j;
    }
}

/// The dense order of `T`'s storage: a query of `T` alone walks it.
fn storage_order<T: Comp>(world: &World) -> Vec<Entity> {
    world
        .query_ref::<(Entity, &T)>()
        .iter()
        .map(|(e, _)| e)
        .collect()
}

/// A declared group seen from outside: the first `group_len` entries of both storages are
/// exactly the entities with both types, in one order, which a grouped query walks and the
/// slices hand out position for position.
fn check_group<X: Comp, Y: Comp>(world: &mut World, m: &Model) {
    let members: BTreeSet<Entity> = m
        .live
        .keys()
        .copied()
        .filter(|&e| m.has::<X>(e) && m.has::<Y>(e))
        .collect();
    let len = members.len();
    let what = type_name::<(X, Y)>();
    assert_eq!(world.group_len::<X>(), Some(len), "group_len of {what}");
    assert_eq!(world.group_len::<Y>(), Some(len), "group_len of {what}");
    let xs = storage_order::<X>(world);
    let ys = storage_order::<Y>(world);
    assert!(
        xs.len() >= len && ys.len() >= len,
        "{what}: storages shorter than the group"
    );
    assert_eq!(
        xs[..len],
        ys[..len],
        "{what}: one order across the owned storages"
    );
    let prefix: BTreeSet<Entity> = xs[..len].iter().copied().collect();
    assert_eq!(
        prefix, members,
        "{what}: the prefix holds exactly the members"
    );
    let walked: Vec<Entity> = world
        .query_ref::<(Entity, &X, &Y)>()
        .iter()
        .map(|(e, ..)| e)
        .collect();
    assert_eq!(
        walked,
        xs[..len],
        "{what}: a grouped query walks the prefix"
    );
    let mut q = world.query::<(&X, &Y)>();
    let (sx, sy) = q.slices().expect("a declared group hands out slices");
    assert_eq!((sx.len(), sy.len()), (len, len), "{what}: slices");
    for (p, e) in xs[..len].iter().enumerate() {
        assert_eq!(
            Some(&sx[p].model()),
            m.get::<X>(*e),
            "{what}: slice of X at {p}"
        );
        assert_eq!(
            Some(&sy[p].model()),
            m.get::<Y>(*e),
            "{what}: slice of Y at {p}"
        );
    }
}

/// Everything observable about `world` against the model; `base`: also the drop counts
/// (the live counted components before the world was made); `step` picks the query forms;
/// `log`: also the hook calls and the removed lists (the model's own world).
fn check_world(
    world: &mut World,
    m: &Model,
    foreign: &[Entity],
    base: Option<(i64, i64)>,
    step: usize,
    log: Option<&HookLog>,
) {
    world.assert_invariants();
    if let Some(log) = log {
        assert_eq!(log.counts(), m.hooks, "hook calls, by hook_slot");
        each_type!(T => {
            if m.cfg.tracked[T::KIND as usize] {
                same_removed(type_name::<T>(), world.removed::<T>(), &m.removed[T::KIND as usize]);
            }
        });
    }
    each_type!(T => {
        assert_eq!(world.is_tracked::<T>(), m.cfg.tracked[T::KIND as usize], "{} tracked", type_name::<T>());
        let want = m.cfg.group_of(T::KIND).map(|g| {
            let [x, y] = GROUPS[g];
            m.live.keys().filter(|&&e| per_kind!(x, X => m.has::<X>(e)) && per_kind!(y, Y => m.has::<Y>(e))).count()
        });
        assert_eq!(world.group_len::<T>(), want, "group_len of {}", type_name::<T>());
    });
    for g in 0..GROUPS.len() {
        if m.cfg.groups.contains(&g) {
            match g {
                0 => check_group::<A, C>(world, m),
                1 => check_group::<T2, G>(world, m),
                _ => check_group::<C, B>(world, m),
            }
        }
    }
    assert!(
        world.query::<(&B, &G)>().slices().is_none(),
        "no such group"
    );
    assert_eq!(world.len(), m.live.len());
    assert_eq!(world.is_empty(), m.live.is_empty());
    assert_eq!(world.entities().len(), m.live.len());
    assert_eq!(world.entities().slot_count(), m.slots.generation.len());
    if let Some((c, g)) = base {
        let (nc, ng) = counts();
        assert_eq!(nc - c, m.count::<C>() as i64, "live `C`s");
        assert_eq!(ng - g, m.count::<G>() as i64, "live `G`s");
    }
    each_type!(T => {
        assert_eq!(world.count::<T>(), m.count::<T>(), "count of {}", type_name::<T>());
    });

    // Forged entities: seen ones at other generations, and indices past the end.
    let mut forged: Vec<Entity> = m
        .seen
        .iter()
        .rev()
        .take(4)
        .map(|e| {
            entity(
                e.index(),
                e.generation().wrapping_add(1).max(1),
                world_of(*e),
            )
        })
        .collect();
    forged.push(entity(m.slots.generation.len() as u32, 1, m.slots.world_id));

    let alive_or_not = m.seen.iter().chain(foreign).chain(&forged);
    for &e in alive_or_not {
        let alive = m.alive(e);
        assert_eq!(world.is_alive(e), alive, "is_alive {e:?}");
        assert_eq!(world.entities().is_alive(e), alive);
        each_type!(T => {
            assert_eq!(
                world.get::<T>(e).map(T::model).as_ref(),
                m.get::<T>(e),
                "{} of {e:?}",
                type_name::<T>()
            );
            assert_eq!(world.has::<T>(e), m.has::<T>(e));
        });
        match world.entity(e) {
            Ok(view) => {
                assert!(alive, "a view of dead {e:?}");
                assert_eq!(view.id(), e);
                assert_eq!(view.get::<A>().map(|a| a.0).as_ref(), m.get::<A>(e));
                assert_eq!(view.has::<T1>(), m.has::<T1>(e));
                assert_eq!(view.data().is_some(), m.data.contains_key(&e));
            }
            Err(err) => {
                assert!(!alive, "no view of live {e:?}");
                assert_eq!(err.entity(), e);
                assert_eq!(err.reason(), m.slots.not_alive(e), "reason for {e:?}");
            }
        }
        match (world.data(e), m.data.get(&e)) {
            (None, None) => {}
            (Some(view), Some(want)) => {
                assert_eq!(view.len(), want.len(), "data of {e:?}");
                for (k, key) in KEYS.iter().enumerate() {
                    let got = view.get(*key).map(|v| v.to_owned());
                    assert_eq!(got.as_ref(), want.get(&(k as u8)), "{key} of {e:?}");
                }
            }
            (got, want) => panic!("data of {e:?}: {:?} vs {want:?}", got.map(|v| v.len())),
        }
    }
    assert_eq!(world.data_store().len(), m.data.len());

    // Queries get (by turns) up to 16 live entities, the latest stale ones, foreign and
    // forged ones.
    let live: Vec<Entity> = m.live.keys().copied().collect();
    let from = if live.len() > 16 {
        step * 16 % live.len()
    } else {
        0
    };
    let mut probe: Vec<Entity> = live
        .iter()
        .cycle()
        .skip(from)
        .take(live.len().min(16))
        .copied()
        .collect();
    probe.extend(m.seen.iter().rev().filter(|&&e| !m.alive(e)).take(8));
    probe.extend(foreign);
    probe.extend(&forged);
    let probe = &probe[..];
    read_query!(world, m, probe, (step + 1) % 3, (Entity, &A, Option<&C>), [.with::<T1>()],
        |(e, a, c)| (e, (a.0, c.map(|c| c.v))),
        |e| m.has::<T1>(e).then(|| m.get::<A>(e).map(|&a| (a, m.get::<C>(e).copied()))).flatten());
    read_query!(world, m, probe, (step + 2) % 3, (Entity, Option<&A>, &T2), [.without::<T1>()],
        |(e, a, _t)| (e, a.map(|a| a.0)),
        |e| (m.has::<T2>(e) && !m.has::<T1>(e)).then(|| m.get::<A>(e).copied()));
    read_query!(world, m, probe, (step + 3) % 3, (Entity, &C, &G), [.without::<A>()],
        |(e, c, _g)| (e, c.v),
        |e| (m.has::<G>(e) && !m.has::<A>(e)).then(|| m.get::<C>(e).copied()).flatten());
    read_query!(world, m, probe, (step + 4) % 3, Entity, [.with::<T1>().with::<T2>()],
        |e| (e, ()),
        |e| (m.has::<T1>(e) && m.has::<T2>(e)).then_some(()));
    read_query!(
        world,
        m,
        probe,
        (step + 5) % 3,
        (Entity, Option<&B>),
        [],
        |(e, b)| (e, b.map(|b| b.0.clone())),
        |e| Some(m.get::<B>(e).cloned())
    );
    read_query!(world, m, probe, (step + 6) % 3, (Entity, &T1, Option<&T2>), [.without::<C>()],
        |(e, _t1, t2)| (e, t2.is_some()),
        |e| (m.has::<T1>(e) && !m.has::<C>(e)).then(|| m.has::<T2>(e)));
    read_query!(world, m, probe, (step + 7) % 3, (Entity, &B), [.with::<C>().without::<G>()],
        |(e, b)| (e, b.0.clone()),
        |e| (m.has::<C>(e) && !m.has::<G>(e)).then(|| m.get::<B>(e).cloned()).flatten());
    read_query!(world, m, probe, (step + 8) % 3, (Entity, Option<&T1>, Option<&G>), [.with::<A>()],
        |(e, t1, g)| (e, (t1.is_some(), g.is_some())),
        |e| m.has::<A>(e).then(|| (m.has::<T1>(e), m.has::<G>(e))));
    // The shapes of the groups (walked in lockstep when declared), with and without filters.
    read_query!(
        world,
        m,
        probe,
        (step + 9) % 3,
        (Entity, &A, &C),
        [],
        |(e, a, c)| (e, (a.0, c.v)),
        |e| Some((*m.get::<A>(e)?, *m.get::<C>(e)?))
    );
    read_query!(world, m, probe, (step + 10) % 3, (Entity, &C, Option<&B>, &A), [.with::<T1>().without::<G>()],
        |(e, c, b, a)| (e, (c.v, b.map(|b| b.0.clone()), a.0)),
        |e| (m.has::<T1>(e) && !m.has::<G>(e))
            .then(|| Some((*m.get::<C>(e)?, m.get::<B>(e).cloned(), *m.get::<A>(e)?)))
            .flatten());
    read_query!(world, m, probe, (step + 11) % 3, (Entity, &G, &T2), [.with::<A>()],
        |(e, _g, _t2)| (e, ()),
        |e| (m.has::<G>(e) && m.has::<T2>(e) && m.has::<A>(e)).then_some(()));
    read_query!(world, m, probe, (step + 12) % 3, (Entity, &B, &C), [.without::<T1>()],
        |(e, b, c)| (e, (b.0.clone(), c.v)),
        |e| (!m.has::<T1>(e)).then(|| Some((m.get::<B>(e).cloned()?, *m.get::<C>(e)?))).flatten());
    // `Has` and `Or`: a group's types inside an `Or` must not make the group drive.
    read_query!(world, m, probe, (step + 13) % 3, (Entity, &A, Has<C>, Has<T1>),
        [.filter::<Or<(With<C>, (With<T2>, Without<G>))>>()],
        |(e, a, c, t1)| (e, (a.0, c, t1)),
        |e| (m.has::<C>(e) || (m.has::<T2>(e) && !m.has::<G>(e)))
            .then(|| m.get::<A>(e).map(|&a| (a, m.has::<C>(e), m.has::<T1>(e))))
            .flatten());
    read_query!(world, m, probe, (step + 14) % 3, (Entity, Has<B>), [.filter::<Or<(With<T1>, Without<A>)>>()],
        |(e, b)| (e, b),
        |e| (m.has::<T1>(e) || !m.has::<A>(e)).then(|| m.has::<B>(e)));
    read_query!(world, m, probe, (step + 15) % 3, (Entity, Has<G>), [.with::<A>().filter::<Or<(With<G>,)>>()],
        |(e, g)| (e, g),
        |e| (m.has::<A>(e) && m.has::<G>(e)).then_some(true));
}

/// A world loaded from unknown bytes: valid, every entity's components agree across the
/// API, it saves and loads again (into a world made like it, `cfg`) to the same text, and it
/// can be used.
#[cfg(any(feature = "serde", fuzzing))]
fn exercise_loaded(mut world: World, cfg: &Config) {
    world.assert_invariants();
    let es: Vec<Entity> = world.query::<Entity>().iter().collect();
    assert_eq!(es.len(), world.len());
    for &e in &es {
        assert!(world.is_alive(e));
        each_type!(T => {
            assert_eq!(world.has::<T>(e), world.get::<T>(e).is_some());
        });
    }
    each_type!(T => {
        assert_eq!(world.query_ref::<&T>().iter().count(), world.count::<T>());
    });
    let json = serde_json::to_string(&world).expect("a loaded world saves");
    // Made like the first: a grouped tag is kept in a set (saved in its order), another in
    // bits (saved in index order).
    let (mut again, _) = configured_world(0, cfg);
    again
        .load(&mut serde_json::Deserializer::from_str(&json))
        .expect("a saved world loads");
    again.assert_invariants();
    assert_eq!(serde_json::to_string(&again).unwrap(), json);
    drop(again);
    // Every live entity takes data, whatever the loaded store held of removed entries.
    for &e in &es {
        world.set_data(e, "probe", 1.0).expect("a live entity");
        assert_eq!(world.data(e).and_then(|d| d.get_f32("probe")), Some(1.0));
    }
    let e = world.spawn((A(1), T1));
    assert!(world.is_alive(e) && !es.contains(&e));
    world.set_data(e, "probe", 2.0).expect("a live entity");
    assert_eq!(world.data(e).and_then(|d| d.get_f32("probe")), Some(2.0));
    for e in es {
        assert!(world.despawn(e));
    }
    assert_eq!(world.len(), 1);
    world.clear();
    world.assert_invariants();
}

// --- the proptest driver --------------------------------------------------------------------

#[cfg(test)]
mod props {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    fn bun() -> impl Strategy<Value = Bun> {
        (any::<u8>(), any::<u32>()).prop_map(|(mask, seed)| Bun::new(mask, seed))
    }

    fn target() -> impl Strategy<Value = Target> {
        (any::<u8>(), any::<u16>()).prop_map(|(which, n)| Target { which, n })
    }

    fn kind() -> impl Strategy<Value = Kind> {
        (0..KINDS.len()).prop_map(|i| KINDS[i])
    }

    fn cmd() -> impl Strategy<Value = Cmd> {
        prop_oneof![
            2 => bun().prop_map(Cmd::Spawn),
            1 => bun().prop_map(Cmd::SpawnUnnamed),
            3 => (target(), bun()).prop_map(|(t, b)| Cmd::Insert(t, b)),
            2 => (target(), kind()).prop_map(|(t, k)| Cmd::Remove(t, k)),
            3 => target().prop_map(Cmd::Despawn),
            1 => (target(), bun()).prop_map(|(t, b)| Cmd::Push(t, b)),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            8 => bun().prop_map(Op::Spawn),
            2 => (any::<u8>(), vec(any::<u32>(), 0..6), proptest::option::of(0u8..6))
                .prop_map(|(mask, seeds, take)| Op::SpawnBatch { mask, seeds, take }),
            4 => target().prop_map(Op::Despawn),
            2 => vec(target(), 0..12).prop_map(Op::DespawnBatch),
            5 => (target(), bun()).prop_map(|(t, b)| Op::Insert(t, b)),
            4 => (target(), kind()).prop_map(|(t, k)| Op::Remove(t, k)),
            1 => (target(), kind(), kind()).prop_map(|(t, a, b)| Op::Take(t, a, b)),
            2 => (target(), any::<u8>(), any::<u32>()).prop_map(|(t, h, v)| Op::ViaEntity(t, h, v)),
            3 => (any::<u8>(), any::<u8>(), target())
                .prop_map(|(shape, form, target)| Op::MutQuery { shape, form, target }),
            3 => vec(cmd(), 0..8).prop_map(Op::Commands),
            1 => (any::<u8>(), any::<u8>(), bun()).prop_map(|(n, how, bun)| Op::Reserve { n, how, bun }),
            1 => Just(Op::Clear),
            3 => (target(), any::<u8>(), any::<u32>()).prop_map(|(t, k, s)| Op::SetData(t, k, s)),
            1 => (target(), vec((any::<u8>(), any::<u32>()), 0..4))
                .prop_map(|(t, es)| Op::InsertData(t, es)),
            1 => target().prop_map(Op::RemoveData),
            1 => (target(), any::<u8>()).prop_map(|(t, k)| Op::RemoveDataKey(t, k)),
            1 => (any::<u8>(), bun()).prop_map(|(h, b)| Op::SaveLoad(h, b)),
            1 => vec((any::<u16>(), any::<u8>()), 1..4).prop_map(Op::LoadMutated),
            1 => vec(any::<u8>(), 0..32).prop_map(Op::LoadBytes),
            1 => (target(), any::<u8>(), bun()).prop_map(|(t, h, b)| Op::PanicDrop(t, h, b)),
            1 => (any::<u8>(), 0u8..6).prop_map(|(form, after)| Op::PanicQuery { form, after }),
            1 => (any::<u8>(), vec(any::<u32>(), 0..6), 0u8..6, any::<bool>())
                .prop_map(|(mask, seeds, at, walk)| Op::PanicBatch { mask, seeds, at, walk }),
            1 => any::<u8>().prop_map(Op::Group),
            1 => kind().prop_map(Op::Track),
            6 => (any::<u8>(), any::<u8>(), target())
                .prop_map(|(which, form, target)| Op::RunState { which, form, target }),
            1 => any::<u8>().prop_map(Op::ResetState),
            1 => Just(Op::Maintain),
            1 => Just(Op::ShrinkToFit),
            1 => any::<u32>().prop_map(Op::SetTick),
            1 => (any::<u8>(), any::<bool>()).prop_map(|(n, up)| Op::SortGroup(n, up)),
            1 => any::<u8>().prop_map(Op::SliceWrite),
        ]
    }

    /// A fixed seed (the same programs in every run, in CI too; the fuzz target explores),
    /// and few enough cases for a debug build: each step checks the whole world.
    fn config() -> ProptestConfig {
        ProptestConfig {
            cases: if cfg!(miri) { 3 } else { 256 },
            failure_persistence: None,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x0d0d_2024),
            ..ProptestConfig::default()
        }
    }

    /// Operations per sequence: short under Miri, which runs each step thousands of times
    /// slower.
    const OPS: usize = if cfg!(miri) { 20 } else { 100 };

    proptest! {
        #![proptest_config(config())]

        #[test]
        fn world_matches_the_model(
            min_free in 0u32..3,
            setup in any::<u8>(),
            ops in vec(op(), 1..OPS),
        ) {
            run(min_free, Setup(setup), &ops);
        }
    }

    #[test]
    fn bundles_with_a_forced_type_keep_it() {
        for mask in 0..=255u8 {
            for k in KINDS {
                let b = Bun::new(mask, 1).with(k);
                assert!(
                    b.kinds().contains(&k) && b.kinds().len() <= 4,
                    "{mask:#b} {k:?}"
                );
            }
        }
    }
}

/// Saves found wrong by the fuzzer or the model, kept as plain tests.
#[cfg(all(test, feature = "serde"))]
mod bad_saves {
    use super::*;

    /// Loads `json` into a world holding one entity: an error naming `why`, the world as it
    /// was, and no component leaked.
    fn refused(json: &str, why: &str) {
        let base = counts();
        let mut world = new_world(0);
        let keep = world.spawn((A(1), C::new(2)));
        let err = world
            .load(&mut serde_json::Deserializer::from_str(json))
            .expect_err("a bad save is an error");
        assert!(err.to_string().contains(why), "{why}: {err}");
        assert_eq!(world.get::<A>(keep), Some(&A(1)));
        assert_eq!(world.get::<C>(keep).map(|c| c.v), Some(2));
        world.assert_invariants();
        drop(world);
        assert_eq!(counts(), base);
    }

    #[test]
    fn a_component_at_the_index_no_entity_can_have_is_an_error_not_a_panic() {
        // u32::MAX is the one index no entity has (and the sparse set's tombstone marker).
        for name in ["a", "c", "t1", "g"] {
            let value = if name == "a" || name == "c" {
                "7"
            } else {
                "null"
            };
            let json = format!(
                r#"{{"world_id":1,"min_free":0,"slots":[65537],"free":[],"components":{{"{name}":[[4294967295,{value}]]}},"data":null}}"#
            );
            let r = catch_unwind(AssertUnwindSafe(|| refused(&json, "dead entity")));
            assert!(r.is_ok(), "loading `{name}` at index u32::MAX panics");
        }
    }
}

/// Behaviour found wrong by the model or the fuzzer, kept as plain tests.
#[cfg(test)]
mod regressions {
    use super::*;

    #[test]
    fn a_panicking_bundle_iterator_is_not_called_again_while_unwinding() {
        quiet_planned_panics();
        // Walked: the panic leaves `next`; dropped unwalked: it leaves the batch's drop. New
        // slots: the batch is written as one run when made; freed slots to reuse: one entity
        // at a time.
        for (walk, reuse) in [(true, false), (false, false), (true, true), (false, true)] {
            let mut world = World::builder().min_free(0).build();
            if reuse {
                let old: Vec<Entity> = (0..10u32).map(|i| world.spawn((A(i),))).collect();
                old.into_iter().for_each(|e| assert!(world.despawn(e)));
            }
            let calls = Cell::new(0u32);
            let r = catch_unwind(AssertUnwindSafe(|| {
                let batch = world.spawn_batch((0..10u32).map(|i| {
                    calls.set(calls.get() + 1);
                    // An iterator that panicked once may panic again; a second panic while
                    // the first unwinds aborts the process.
                    if i == 3 {
                        panic!("{PLANNED}");
                    }
                    (A(i),)
                }));
                if walk {
                    batch.count();
                } else {
                    drop(batch);
                }
            }));
            expect_planned(r);
            assert_eq!(calls.get(), 4, "walk: {walk}, reuse: {reuse}");
            assert_eq!(world.len(), 3, "the bundles before the panic are spawned");
            assert_eq!(world.count::<A>(), 3);
            world.assert_invariants();
            let e = world.spawn((A(9),));
            assert_eq!(world.get::<A>(e), Some(&A(9)));
            world.assert_invariants();
        }
    }
}
