//! The report's sections: each measures one container family against its peers.
//!
//! Where a section puts its contenders behind a trait of per-operation methods (insert,
//! get, remove), every implementation marks them `#[inline(always)]`, so that each
//! container's operation is compiled into the timed loop as a direct call in user code would
//! be, by the container's own inlining choices. Left to the compiler, the wrapper around a
//! larger operation stayed out of line (dod's `Pool::remove`, itself `#[inline(always)]`),
//! and the call was timed with it.

use crate::harness::{Config, Table};

mod alive;
mod bits;
mod data;
mod defrag;
mod handles;
mod memory;
mod pool;
mod sparse;
mod world;

/// A named part of the report.
pub struct Section {
    /// The name given on the command line.
    pub name: &'static str,
    /// One line saying what it measures.
    pub about: &'static str,
    /// Runs it.
    pub run: fn(&Config) -> Vec<Table>,
}

/// Every section, in report order.
pub const SECTIONS: &[Section] = &[
    handles::SECTION,
    defrag::SECTION,
    sparse::SECTION,
    memory::SECTION,
    bits::SECTION,
    alive::SECTION,
    pool::SECTION,
    data::SECTION,
    world::SECTION,
];
