//! Data-oriented containers for game engines and simulations.
//!
//! A game keeps tens of thousands of short-lived objects (particles, bullets, components) that
//! one system updates in bulk every frame while other systems refer to single objects. `dod`
//! serves both: every container keeps its values **contiguous**, so the bulk pass walks a slice
//! at the speed of a `Vec`; references are **generational handles**, checked in O(1), so a
//! reference to an object that was destroyed is always detected — it answers `None`, never
//! another object, never undefined behaviour.
//!
//! # Which container
//!
//! | you need | use | order of the values | bytes per value |
//! |---|---|---|---|
//! | objects created and destroyed at random, referred to by handle, iterated in bulk | [`HandleMap`] | packed; removal moves the last value into the hole; `sort_by` / `defragment` restore an order | `size_of::<T>() + 4`, plus 8 per slot ever used |
//!
//! [`HandleMap`] is the griffin `handle_map` (dense values, sparse generational slots with an
//! embedded FIFO freelist, dense → sparse back-links) with its rough edges fixed: a slot whose
//! generation would wrap is retired instead of reused, `reset` keeps stale handles stale, and
//! the incremental `defragment` resumes where it stopped.
//!
//! # Handles
//!
//! [`Handle`] is 64 bits (index 32, generation 16, type id 15); [`Handle32`] is Bitsquid's 32-bit
//! id (index 16, generation 16) for maps of at most 65 535 values. `Option<Handle>` costs nothing
//! extra. [`new_handle_type!`] declares a handle type per container so handles cannot be mixed
//! up at compile time.
//!
//! # Features
//!
//! - `std` (default): nothing but `std`'s presence; without it the crate is `no_std` + `alloc`.
//! - `serde`: saving and loading containers with every handle, live or stale, keeping its meaning.
//! - `rayon`: parallel iteration over the dense values.
//! - `bytemuck`: `Option<Handle>` is `Pod`, for GPU buffers and FFI.
#![no_std]
#![cfg_attr(docsrs, feature(doc_auto_cfg))]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

pub mod bits;
pub mod data;
mod error;
pub mod handle_map;
pub mod key;
pub mod pool;
pub mod sparse_set;

pub use bits::{BitSet, Bits};
pub use data::{DataComponent, DataKey, DataStore, DataView};
pub use error::CapacityError;
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
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
