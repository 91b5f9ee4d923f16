//! An entity world built from [`dod`]'s containers: generational entities, one sparse-set
//! storage per component type, queries that drive from the smallest storage, deferred
//! commands, and per-entity dynamic data.
//!
//! [`World`] is where dod's parts meet, and where their seams are sealed: entities come from
//! one allocator that follows dod's slot rules (FIFO reuse, keep N free, retirement before a
//! generation wraps), liveness is checked once where an entity enters the API (a component
//! lookup checks it in the component's own sparse slot, which carries the generation of the
//! entity it belongs to), and despawning removes every component, so no component of a dead
//! entity ever shows up under another.
//!
//! # Example
//!
//! ```
//! use dod_world::{Commands, Entity, World};
//!
//! struct Pos([f32; 2]);
//! struct Vel([f32; 2]);
//! struct Bullet;
//! struct Laser;
//!
//! let mut world = World::new();
//! for i in 0..10 {
//!     let e = world.spawn((Pos([i as f32, 0.0]), Vel([0.0, 1.0])));
//!     if i % 2 == 0 {
//!         world.insert(e, (Bullet,)).unwrap();
//!     }
//!     if i % 3 == 0 {
//!         world.insert(e, (Laser,)).unwrap();
//!     }
//! }
//!
//! // A system: move everything.
//! world.query::<(&mut Pos, &Vel)>().for_each(|(p, v)| {
//!     p.0[0] += v.0[0];
//!     p.0[1] += v.0[1];
//! });
//!
//! // "Bullets AND lasers": tags are presence bits, combined by the query.
//! let hot: Vec<Entity> = world.query::<Entity>().with::<Bullet>().with::<Laser>().iter().collect();
//! assert_eq!(hot.len(), 2); // 0 and 6
//!
//! // Structural changes while a query runs go through commands.
//! let mut commands = Commands::new();
//! world.query::<(Entity, &Pos)>().for_each(|(e, p)| {
//!     if p.0[0] > 7.0 {
//!         commands.despawn(e);
//!     }
//! });
//! world.apply(&mut commands);
//! assert_eq!(world.len(), 8);
//! ```
//!
//! # Where each part is described
//!
//! - Queries: [`Query`] (its forms, borrows and filters), [`QueryData`] (what a query hands
//!   out: `Entity`, `&T`, `&mut T`, `Option<..>`, [`Has`]), [`QueryFilter`] ([`With`],
//!   [`Without`], [`Added`], [`Changed`], [`Or`]).
//! - Owning groups: [`WorldBuilder::group`], [`World::group`], [`World::sort_group_by`], and
//!   the packed slices of [`Query::slices`].
//! - Change tracking: [`World::track`], [`QueryState`] with [`Added`] and [`Changed`],
//!   [`World::removed`], [`World::maintain`], and the wrap-around of [`Tick`].
//! - Hooks: [`World::on_insert`], [`World::on_remove`], [`World::remove_hooks`].
//! - Systems side by side: [`World::share`] hands out [`Shared`], whose queries check
//!   their borrows at run time, and whose [`Entities`] reserve the entities a system's
//!   [`Commands`] spawn; [`World::query_ref`] for read-only queries on `&World`.
//! - Commands: [`Commands`], [`World::apply`], [`World::reserve_entity`].
//! - Views: [`World::entity`], [`World::entity_mut`], [`World::view_mut`].
//! - Entities and the limits of world ids: [`Entity`], [`Entities`].
//! - Per-entity data: [`World::data`], [`World::set_data`], [`World::insert_data`].
//! - Saving and loading (feature `serde`): `World::register_saved`, `World::load`.
//!
//! # When to use the world, when a container alone
//!
//! Use the world when entities have varying sets of components and systems ask for
//! combinations of them. Use a container alone when one kind of object is created and
//! destroyed in bulk and walked by one system ([`dod::HandleMap`], [`dod::Pool`]), or when
//! an engine keeps its own entity ids and needs one storage ([`dod::SparseSet`]).
//!
//! # Features
//!
#![cfg_attr(
    feature = "rayon",
    doc = "- `rayon`: [`Query::par_iter`], [`Query::par_for_each`], [`Query::par_for_each_init`], [`Query::par_fold`]."
)]
#![cfg_attr(
    not(feature = "rayon"),
    doc = "- `rayon`: `Query::par_iter`, `Query::par_for_each`, `Query::par_for_each_init`, `Query::par_fold`."
)]
//! - `serde`: saving and loading a world, components registered for saving by name.
//! - `json`: `dod`'s `json` feature, for per-entity data read from JSON
//!   (`dod::DataComponent::from_json`; `dod` is re-exported as `dod_world::dod`).
#![cfg_attr(docsrs, feature(doc_auto_cfg))]

extern crate alloc;

mod bundle;
mod commands;
mod entity;
mod error;
mod group;
pub mod query;
#[cfg(feature = "serde")]
mod serde;
mod storage;
mod view;
mod world;

/// The containers the world is built from, whose types its API uses (the `Key` trait that
/// [`Entity`] implements; `DataComponent`, `DataView`, `DataStore`, `DataKey`, `Value` and
/// `KeyNames` for per-entity data): the same version, without a dependency of one's own.
pub use dod;

pub use bundle::Bundle;
pub use commands::Commands;
pub use entity::{Entities, Entity};
pub use error::{NoSuchEntity, NotAlive, SingleError};
pub use group::{GroupError, MAX_OWNED};
#[cfg(feature = "rayon")]
pub use query::QueryParIter;
pub use query::{
    Added, Changed, GroupEntities, Has, Or, Query, QueryData, QueryFilter, QueryIntoIter,
    QueryIter, QueryState, ReadOnlyQueryData, SharedQuery, SliceData, With, Without,
};
pub use storage::{Component, ComponentId, Tick};
pub use view::ViewMut;
pub use world::{EntityMut, EntityRef, Shared, SpawnBatch, World, WorldBuilder, DEFAULT_MIN_FREE};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
