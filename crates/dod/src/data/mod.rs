//! Small dynamic data per entity in relocatable buffers: [`DataComponent`] (one entity, one
//! buffer) and [`DataStore`] (many entities, one buffer).
//!
//! The design is Bitsquid's `DataComponent` (Niklas Gray, *Allocation Adventures*, 2015):
//!
//! - **Restricted JSON.** Values are booleans, `f32`, `i64`, UTF-8 strings and arrays of
//!   `f32` ([`Value`]). Objects exist only as flattened key paths (`stats.health`), so every change
//!   is "set a key" or "remove a key", and merge, [`diff`](DataComponent::diff) and
//!   [`apply`](DataComponent::apply) are simple and well defined.
//! - **Hashed keys.** A path is hashed segment by segment into a 32-bit [`DataKey`] with a
//!   specified, stable function (stored in files). Static paths hash at compile time with
//!   [`data_key!`](crate::data_key!). Names can be kept on the side in a [`KeyNames`] registry, which
//!   also reads and writes the restricted JSON (feature `json`, parsed with `serde_json`).
//! - **One buffer, no pointers.** The header (keys, type tags, 32-bit values; structure of
//!   arrays) grows up from the start, strings and float arrays grow down from the end. The
//!   buffer is its own file format: saving is a copy, loading is a validation and a copy, and
//!   [`DataView`] reads untrusted bytes in place after checking them once.
//! - **Where there is one, there are many.** [`DataStore`] keeps the components of many
//!   entities in one buffer, each in a power-of-two block from a buddy allocator, growing and
//!   shrinking on its own.
//!
//! # JSON
//!
//! With the `json` feature, `DataComponent::from_json` reads, and `to_json` (on
//! [`DataView`], [`DataComponent`] and [`DataStore`]) writes, the restricted JSON:
//!
//! - Key paths become nested objects, one level per segment, members in sorted order. A path
//!   has at most [`MAX_PATH_DEPTH`] segments: `to_json` never writes deeper objects and
//!   `from_json` refuses them (`JsonError::TooDeep`), so whatever is written reads back.
//! - A key with no name is written at the top level as `"#"` and its hash in eight lowercase
//!   hex digits (`"#a1b2c3d4"`); `from_json` reads such a member, when it holds a value, as
//!   that key, without registering a name. [`KeyNames`] refuses to register these names.
//! - Integers are written without a fraction or exponent (`42`), floats always with one
//!   (`42.0`, `1e20`), in the shortest form that reads back as the same `f32`. Read back, a
//!   number without a fraction or exponent that fits an `i64` is an integer (but `-0`, which
//!   an integer cannot hold, is the float `-0.0`); any other number is an `f32` (an error if it
//!   is not finite as one). Array elements are always `f32`. So write-then-read gives the same
//!   values, bit for bit. `get_f32` reads floats only; `get_f64` reads either kind of number.
//!
//! # Bytes from disk
//!
//! [`DataComponent::from_bytes`], [`DataView::new`] and [`DataStore::from_bytes`] check every
//! count, offset, size, type tag, UTF-8 string, key order and overlap in O(n log n) of the
//! input and return a [`DecodeError`] naming what was wrong. Once they succeed, no accessor
//! can panic or read out of place.

mod buddy;
mod component;
#[cfg(feature = "json")]
mod json;
mod names;
mod patch;
mod path;
mod raw;
mod store;
mod value;

pub use component::{DataComponent, DataView, Iter};
#[cfg(feature = "json")]
pub use json::JsonError;
pub use names::{KeyNames, NameCollision, NameError, Named, Segments};
pub use patch::Patch;
pub use path::{DataKey, PathKey};
pub use store::DataStore;
pub use value::{Floats, FloatsIter, OwnedValue, Value, ValueType};

use core::fmt;

/// The most segments a key path may have where its name is kept: in
/// [`KeyNames::register`], in what `to_json` writes (each segment an object level) and in
/// what `DataComponent::from_json` reads (objects nested deeper are refused; feature `json`).
/// One bound for the three, so that whatever is written reads back.
///
/// A value set by a deeper path string is still set (under its hash); its name is not kept,
/// and JSON writes it as an unnamed key.
///
/// ```
/// use dod::data::{KeyNames, MAX_PATH_DEPTH};
/// let mut names = KeyNames::new();
/// assert!(names.register(&vec!["a"; MAX_PATH_DEPTH].join(".")).is_ok());
/// assert!(names.register(&vec!["a"; MAX_PATH_DEPTH + 1].join(".")).is_err());
/// ```
pub const MAX_PATH_DEPTH: usize = 64;

/// Why bytes could not be read as a component or a store.
///
/// ```
/// use dod::data::{DataComponent, DecodeError};
/// assert_eq!(DataComponent::from_bytes(&[]), Err(DecodeError::TooShort));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// Fewer bytes than a header.
    TooShort,
    /// The bytes do not start with the format's magic number.
    BadMagic,
    /// A format version this crate does not read.
    UnsupportedVersion(u16),
    /// Keys hashed with a function this crate does not know.
    UnknownKeyHash(u16),
    /// More bytes than 32-bit offsets can address.
    TooLarge,
    /// The counts or sizes in the header do not fit the bytes.
    BadCounts,
    /// Keys are not strictly increasing at this entry: unsorted or a duplicate.
    KeysNotSorted {
        /// Entry index.
        entry: u32,
    },
    /// An unknown type tag.
    BadTypeTag {
        /// Entry index.
        entry: u32,
        /// The tag found.
        tag: u8,
    },
    /// A boolean that is neither 0 nor 1.
    BadBool {
        /// Entry index.
        entry: u32,
    },
    /// A string or float array that does not lie inside the value area.
    ValueOutOfRange {
        /// Entry index.
        entry: u32,
    },
    /// A string that is not UTF-8.
    InvalidUtf8 {
        /// Entry index.
        entry: u32,
    },
    /// Two values share bytes.
    Overlap,
    /// A store's block is misplaced: not aligned to its size, outside the buffer, or
    /// overlapping another.
    BadBlock {
        /// The entity index whose block it is.
        entity: u32,
    },
    /// A store's slot holds a key its key type cannot have (generation 0, bit 31 of the tag
    /// set where the slot holds a component, a type id out of range, an index the key type
    /// cannot address), or the slots are not in increasing order of index.
    BadKey {
        /// The entity index.
        entity: u32,
    },
    /// A store's slot has an index above the largest the load accepts
    /// ([`DataStore::from_bytes_with_max_index`](crate::data::DataStore::from_bytes_with_max_index)).
    IndexAboveMax {
        /// The entity index.
        entity: u32,
        /// The largest index the load accepts.
        max: u32,
    },
    /// The component of this entity is invalid.
    InEntity {
        /// The entity index.
        entity: u32,
        /// What is wrong with its component.
        error: alloc::boxed::Box<DecodeError>,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::TooShort => f.write_str("fewer bytes than a header"),
            DecodeError::BadMagic => f.write_str("not dod data (wrong magic number)"),
            DecodeError::UnsupportedVersion(v) => write!(f, "unsupported format version {v}"),
            DecodeError::UnknownKeyHash(h) => write!(f, "unknown key hash id {h}"),
            DecodeError::TooLarge => f.write_str("more bytes than 32-bit offsets can address"),
            DecodeError::BadCounts => f.write_str("header counts do not fit the bytes"),
            DecodeError::KeysNotSorted { entry } => {
                write!(f, "entry {entry}: keys not strictly increasing")
            }
            DecodeError::BadTypeTag { entry, tag } => {
                write!(f, "entry {entry}: unknown type tag {tag}")
            }
            DecodeError::BadBool { entry } => write!(f, "entry {entry}: boolean not 0 or 1"),
            DecodeError::ValueOutOfRange { entry } => {
                write!(f, "entry {entry}: value outside the value area")
            }
            DecodeError::InvalidUtf8 { entry } => write!(f, "entry {entry}: string not UTF-8"),
            DecodeError::Overlap => f.write_str("two values overlap"),
            DecodeError::BadBlock { entity } => {
                write!(f, "entity {entity}: block misplaced or overlapping another")
            }
            DecodeError::BadKey { entity } => write!(f, "entity {entity}: impossible key"),
            DecodeError::IndexAboveMax { entity, max } => {
                write!(
                    f,
                    "entity {entity}: index above the largest accepted ({max})"
                )
            }
            DecodeError::InEntity { entity, error } => write!(f, "entity {entity}: {error}"),
        }
    }
}

impl core::error::Error for DecodeError {}
