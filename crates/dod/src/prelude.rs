//! The traits and types most programs use, in one import.
//!
//! ```
//! use dod::prelude::*;
//!
//! let mut map: HandleMap<u32> = HandleMap::new();
//! let h = map.insert(7);
//! let mut marked = BitSet::new();
//! marked.insert(h.index()); // `Key::index`, through the prelude
//! assert_eq!(marked.and(&marked).count(), 1); // `Bits::and`, through the prelude
//! ```

pub use crate::bits::{BitSet, Bits};
pub use crate::data::{DataComponent, DataKey, DataStore, DataView};
pub use crate::handle_map::HandleMap;
pub use crate::key::{Handle, Handle32, Key};
pub use crate::pool::{Pool, Reuse};
pub use crate::sparse_set::{SparseKey, SparseSet};
