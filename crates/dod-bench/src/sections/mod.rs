//! The report's sections: each measures one container family against its peers.

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
