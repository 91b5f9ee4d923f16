//! Data-oriented containers for game engines and simulations.
//!
//! (The crate guide is written with the containers; see the README.)
#![no_std]
#![cfg_attr(docsrs, feature(doc_auto_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod data;
mod error;
pub mod key;

pub use data::{DataComponent, DataKey, DataStore, DataView};
pub use error::CapacityError;
pub use key::{Handle, Handle32, Key};

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
