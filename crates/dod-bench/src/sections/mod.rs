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
    Section {
        name: "sparse",
        about:
            "SparseSet: removal strategies x orders x sizes, add / iterate / get, page size, joins",
        run: sparse::run,
    },
    Section {
        name: "memory",
        about: "SparseSet memory against the seed's formulas, Pool's layout, clustered ids",
        run: memory::run,
    },
    Section {
        name: "bits",
        about: "BitSet vs Vec<bool>, a Vec<u64> walk, fixedbitset, hibitset, roaring, bitvec",
        run: bits::run,
    },
    Section {
        name: "alive",
        about: "alive flags inside 64-byte objects vs Pool's separate flags",
        run: alive::run,
    },
    Section {
        name: "pool",
        about: "Pool vs HandleMap, slotmap's SlotMap, HopSlotMap, DenseSlotMap and a Vec floor",
        run: pool::run,
    },
    Section {
        name: "data",
        about:
            "DataComponent and DataStore against a naive tree, serde_json, FxHashMap and flexbuffers",
        run: data::run,
    },
    world::SECTION,
];
