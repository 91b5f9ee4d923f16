//! The report's sections: each measures one container family against its peers.

use crate::harness::{Config, Table};

mod data;

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
pub const SECTIONS: &[Section] = &[Section {
    name: "data",
    about:
        "DataComponent and DataStore against a naive tree, serde_json, FxHashMap and flexbuffers",
    run: data::run,
}];
