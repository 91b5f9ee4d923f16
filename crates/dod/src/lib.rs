//! Data-oriented containers for game engines and simulations.
//!
//! A game keeps tens of thousands of short-lived objects (particles, bullets, components) that
//! one system updates in bulk every frame while other systems refer to single objects. `dod`
//! serves both: values live in **contiguous** arrays, so the bulk pass walks memory in order;
//! references are **generational handles**, checked in O(1), so a reference to an object that
//! was destroyed is always detected — it answers `None`, never another object, never undefined
//! behaviour.
//!
//! # Which container
//!
//! | you need | use | order of the values | bytes |
//! |---|---|---|---|
//! | objects created and destroyed at random, referred to by handle, iterated in bulk | [`HandleMap`] | packed; removal moves the last value into the hole; `sort_by` / `defragment` set an order | `size_of::<T>() + 4` per value, 8 per slot ever used |
//! | objects that must stay at one index (parallel arrays, plain indices, large values), filtered by masks | [`Pool`] | by slot; holes are skipped through the alive flags | `max(size_of::<T>(), 4) + 4` rounded up to `max(align_of::<T>(), 4)` per slot (8 for a `u32`, 16 for a `u64`), ~0.13 per slot of flags |
//! | components keyed by entity index, each system with its own order | [`SparseSet`] | packed, in the order you choose: insertion, `sort_by`, `sort_as` another set | `size_of::<T>() + 4` per value, 8 per slot of each allocated page of 128 entities, 4 per page of the table |
//! | sets of indices: alive flags, type masks, free slots | [`BitSet`] and its lazy expressions ([`Bits`]) | ascending | ~0.129 per index of the capacity (1 bit + two summaries) |
//! | a few dynamic values per entity (a character sheet), merged, diffed, saved as bytes | [`DataComponent`], many in one buffer: [`DataStore`] | by key hash | 16-byte header + 9 per key + 8 per `i64` + 4 + the bytes of each string or float array; a [`DataComponent`]'s buffer starts at 64 bytes, a [`DataStore`]'s at 4 KiB |
//!
//! The crate's README has the measured comparison with `slotmap`, `hibitset`, `fixedbitset`,
//! `roaring`, the `sparseset` crate, hash maps and `serde_json`, and what each container
//! guarantees about order, stability and stale handles.
//!
//! - [`HandleMap`] is the griffin `handle_map` (dense values, sparse generational slots with an
//!   embedded FIFO freelist, dense → sparse back-links) with its rough edges fixed: a slot whose
//!   generation would wrap is retired instead of reused, `reset` keeps stale handles stale, and
//!   the incremental `defragment` resumes where it stopped.
//! - [`Pool`] is Bitsquid's array with holes with the alive flags moved out of the objects
//!   into a [`BitSet`], so a pass over a mostly dead pool reads the flags, not the objects, and
//!   the flags combine with per-type masks: `pool.alive().and(&bullets).and_not(&lasers)`.
//!   Holes are reused FIFO after keeping [`min_free`](Pool::min_free) back (keep-N-free, which
//!   spreads generations over the slots), or lowest first ([`pool::Reuse::LowestFirst`], which
//!   keeps items packed at the low indices).
//! - [`BitSet`] keeps two summary layers (any bit set, any bit clear), so walking a sparse set
//!   skips empty regions and claiming a free slot is O(log₆₄ n). Its memory follows the largest
//!   index (any `u32`); [`BitSet::max_index`] bounds it, and [`BitSet::try_insert`] refuses an
//!   untrusted index above it without allocating. `&a & &b`, `|`, `^`, `-` and `!` build the
//!   same lazy expressions as the methods.
//! - [`SparseSet`] is EnTT's storage: a paged sparse array of positions and key tags over
//!   dense entity and value arrays, with swap, shift, bulk and deferred removal, sorting and
//!   joins. Keyed by a plain `u32` it checks only the index; keyed by a [`Key`] it keeps the
//!   key's tag (generation and type id) and follows the allocator that handed the key out: a
//!   key older than the stored one is refused (`insert` panics, `try_insert` gives the value
//!   back), a newer generation replaces the dead entity's entry, and joins pair two entries
//!   only when their tags agree (see [`sparse_set`] for the table of rules).
//! - [`DataComponent`] is Bitsquid's restricted JSON in one relocatable buffer: hashed key paths
//!   ([`DataKey`], [`data_key!`]), values growing down from the end, saved by copying and loaded
//!   by validating untrusted bytes once ([`DataView`]). Values are bools, `f32`s, `i64`s
//!   (enough for a [`Handle`]'s bits), strings and `f32` arrays. [`DataStore`] keeps many
//!   components in one buffer, keyed by [`Key`]s with [`SparseSet`]'s rules.
//!
//! # Handles
//!
//! [`Handle`] is 64 bits (index 32, generation 16, type id 15); [`Handle32`] is Bitsquid's 32-bit
//! id (index 16, generation 16) for containers of at most 65 535 values. `Option<Handle>` costs
//! nothing extra. [`new_handle_type!`] declares a handle type per container so handles cannot
//! be mixed up at compile time. [`HandleMap`], [`Pool`], [`SparseSet`] and [`DataStore`] take
//! any [`Key`]. The rules of generations (a tag per slot, vacancy, retirement, which key is
//! older) live in one module, [`slot`], which every container follows; an entity allocator of
//! your own can follow them too. A key that no container hands out (a `Handle` with its
//! reserved bit set, or of generation 0, or a `Handle32` with index 65 535, as a `bytemuck`
//! cast can make) never resolves, and [`SparseSet`] and [`DataStore`] refuse to store it.
//!
//! `use dod::prelude::*;` imports the containers, the handles and the traits programs call
//! methods of ([`Key`], [`Bits`], [`SparseKey`](sparse_set::SparseKey)); every `try_insert`
//! returns an [`InsertError`] that gives the value back.
//!
//! # Untrusted input
//!
//! [`DataComponent::from_bytes`], [`DataView::new`], [`DataStore::from_bytes`] and every `serde`
//! deserializer check their input and return an error for anything malformed, never a panic
//! or a broken container; what a container saves, it loads. What loading allocates follows the
//! input. [`BitSet`], [`SparseSet`] and [`DataStore`] take a `max_index` that `try_insert`
//! checks before allocating; to bound the indices of a `serde` input, load a [`SparseSet`] made
//! with [`with_max_index`](SparseSet::with_max_index) through its
//! [`DeserializeSeed`](https://docs.rs/serde/latest/serde/de/trait.DeserializeSeed.html) impl.
//!
//! # Unsafe code
//!
//! `unsafe_code` is denied for the crate and allowed back on single items, each block with the
//! reason it is sound: [`Pool`]'s slot, a union of the item and the freelist link (read
//! where the slot's tag says which it holds, and the links of the slots its freelist holds),
//! and its unchecked reads of the slots the alive flags mark while iterating; the paged sparse array
//! under [`SparseSet`] and [`DataStore`], reading a slot inside a page it has found;
//! [`SparseSet`]'s append within capacity on insertion, the length an
//! [`AppendRun`](sparse_set::AppendRun) sets over the values it wrote, and the mutable join's
//! disjoint `&mut`; [`HandleMap`]'s reads (shared and mutable) of the value at a dense
//! position its slot names; the word and summary writes of [`BitSet::insert`] and
//! [`BitSet::try_insert`] below the universe; the prefetch instruction
//! behind [`hint::prefetch`]; in data buffers, string reads of validated bytes
//! (`from_utf8_unchecked`) and, on x86-64, the SSE2 compare that finds a key in a lookup;
//! and, with the `bytemuck` feature, the `Pod` impls of optional handles (also for the types
//! [`new_handle_type!`] declares). Each unchecked access was measured to pay; the test suite
//! runs under Miri (`scripts/miri`).
//!
//! # `dod` or `dod-world`?
//!
//! The `dod-world` crate is an entity world built from these containers: one allocator of
//! entities, a [`SparseSet`] per component type, queries, commands and per-entity data. Use
//! it when entities have varying sets of components and systems ask for combinations of them;
//! use a container alone when one kind of object is created and destroyed in bulk and walked
//! by one system ([`HandleMap`], [`Pool`]), or when an engine keeps its own entity ids and
//! needs one storage ([`SparseSet`]).
//!
//! # Features
//!
//! - `std` (default): nothing but `std`'s presence; without it the crate is `no_std` + `alloc`.
//! - `serde`: saving and loading containers with every handle, live or stale, keeping its meaning.
//! - `rayon`: parallel iteration over the dense values, over bit sets and over their lazy
//!   expressions.
//! - `bytemuck`: `Option<Handle>` is `Pod`, for GPU buffers and FFI.
//! - `json`: reading and writing [`DataComponent`]s as restricted JSON (with `serde_json`).
#![no_std]
#![cfg_attr(docsrs, feature(doc_auto_cfg))]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

pub mod bits;
pub mod data;
mod debug_list;
mod error;
pub mod handle_map;
pub mod hint;
#[cfg(all(test, feature = "std"))]
mod hostile;
pub mod key;
mod pages;
pub mod pool;
pub mod prelude;
pub mod slot;
pub mod sparse_set;

pub use bits::{BitSet, Bits, GrowError};
pub use data::{DataComponent, DataKey, DataStore, DataView};
pub use error::{InsertError, InsertErrorKind};
pub use handle_map::HandleMap;
pub use key::{Handle, Handle32, Key};
pub use pool::Pool;
pub use sparse_set::SparseSet;

#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "bytemuck")]
    pub use bytemuck;
    #[cfg(feature = "serde")]
    pub use serde;
}

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
