//! [`DataComponent`]: one entity's small dynamic data in one relocatable buffer, and
//! [`DataView`], the same data read in place from bytes.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use alloc::boxed::Box;

use super::raw;
use super::value::{Floats, Value};
use super::{DataKey, DecodeError, KeyNames, PathKey};

/// Smallest buffer a component allocates.
const MIN_BUFFER: usize = 64;

/// What [`DataComponent::names`] lends when the component keeps none.
static NO_NAMES: KeyNames = KeyNames::new();

/// Small dynamic data of one entity — a character sheet, a quest's flags — in ONE buffer with
/// no pointers: keys, types and 32-bit values grow up from the start, strings and float arrays
/// grow down from the end, and they share the free space between.
///
/// Values are the restricted JSON of the Bitsquid `DataComponent`: [`bool`], [`f32`], UTF-8
/// strings and arrays of `f32` ([`Value`]), plus [`i64`] integers, so that ids and handles
/// above 2²⁴ are stored exactly. Objects exist only as flattened key paths, hashed
/// to a [`DataKey`]: `stats.health`. Keys are kept sorted; lookups are a binary search over
/// the key array alone.
///
/// A value whose size changes takes a new place in the value area (a shorter string is
/// written over the old one); the holes left behind are reclaimed when the buffer grows (it is
/// re-packed) or by [`compact`](DataComponent::compact).
///
/// A value set by a path string (`set("stats.health", ..)`) also keeps the path's name on the
/// side ([`names`](DataComponent::names)), so that `to_json` (feature `json`) writes it by
/// name; a value set by a [`DataKey`] keeps none and costs nothing more. Names are
/// metadata: they are not part of the bytes, of equality, or of what `from_bytes` reads.
///
/// The buffer *is* the file format ([`as_bytes`](DataComponent::as_bytes)): moving, copying
/// or saving a component is a `memcpy`, and [`from_bytes`](DataComponent::from_bytes) /
/// [`DataView::new`] check every offset of untrusted bytes before anything reads them.
///
/// # Example
///
/// ```
/// use dod::data::{DataComponent, DataView};
/// use dod::data_key;
///
/// let mut sheet = DataComponent::new();
/// sheet.set("name", "The One");
/// sheet.set(data_key!("stats.health"), 100.0);
/// sheet.set("stats.mana", 200.0);
/// sheet.set("status_effects.drunk", true);
///
/// assert_eq!(sheet.get_str("name"), Some("The One"));
/// assert_eq!(sheet.get_f32(data_key!("stats.health")), Some(100.0));
/// assert_eq!(sheet.get_f32("name"), None); // another type
/// assert!(sheet.remove("status_effects.drunk"));
///
/// // Save, load, or read in place.
/// let bytes = sheet.as_bytes().to_vec();
/// let view = DataView::new(&bytes).unwrap();
/// assert_eq!(view.get_f32("stats.mana"), Some(200.0));
/// assert_eq!(DataComponent::from_bytes(&bytes).unwrap(), sheet);
/// ```
#[derive(Clone, Default)]
pub struct DataComponent {
    /// Empty, or a buffer that keeps every invariant of the format (see `raw`).
    buf: Vec<u8>,
    /// The names of the paths values were set by, once there is one.
    names: Option<Box<KeyNames>>,
}

impl DataComponent {
    /// An empty component. Allocates nothing until the first [`set`](DataComponent::set).
    /// O(1).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let c = DataComponent::new();
    /// assert!(c.is_empty());
    /// assert_eq!(c.memory_usage(), 0);
    /// ```
    pub const fn new() -> Self {
        DataComponent {
            buf: Vec::new(),
            names: None,
        }
    }

    /// An empty component with a buffer of `bytes` bytes (at least the 16-byte header). Every
    /// entry takes 9 header bytes; an `i64` takes 8 more, a string 4 + its length, a float
    /// array 4 + 4 per float. O(bytes).
    ///
    /// # Panics
    ///
    /// If `bytes` is more than `u32::MAX`.
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let c = DataComponent::with_capacity(256);
    /// assert_eq!(c.capacity(), 256);
    /// ```
    #[track_caller]
    pub fn with_capacity(bytes: usize) -> Self {
        assert!(
            bytes <= u32::MAX as usize,
            "DataComponent::with_capacity: {bytes} bytes is more than a component can address (u32::MAX)"
        );
        let mut buf = vec![0; bytes.max(raw::HEADER)];
        raw::init(&mut buf);
        DataComponent { buf, names: None }
    }

    /// A component of the buffer `buf`, built by `raw::build` (which keeps the format's
    /// invariants), keeping no names.
    #[cfg(feature = "json")]
    pub(super) fn from_built(buf: Vec<u8>) -> Self {
        debug_assert!(raw::validate(&buf).is_ok());
        DataComponent { buf, names: None }
    }

    /// Reads a component from bytes written by [`as_bytes`](DataComponent::as_bytes), checking
    /// all of them first (O(n log n): the records are sorted to find overlaps): the magic,
    /// version and key hash id, every count, offset and size, the type tags, that strings are
    /// UTF-8, that keys are sorted and unique and that no two values overlap. Bytes are copied
    /// once. The component keeps no names. The checks are of structure, not integrity: a
    /// changed byte inside a value or a key hash can give a valid component with other
    /// content, so keep a checksum beside the bytes where storage or transport may corrupt
    /// them.
    ///
    /// ```
    /// # use dod::data::{DataComponent, DecodeError};
    /// let mut c = DataComponent::new();
    /// c.set("a", "text");
    /// let back = DataComponent::from_bytes(c.as_bytes()).unwrap();
    /// assert_eq!(back.get_str("a"), Some("text"));
    /// assert_eq!(DataComponent::from_bytes(b"nonsense"), Err(DecodeError::TooShort));
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        raw::validate(bytes)?;
        Ok(DataComponent {
            buf: bytes.to_vec(),
            names: None,
        })
    }

    /// The component's bytes: the versioned little-endian format, free space included.
    /// Nothing is copied or encoded. O(1).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let c = DataComponent::new();
    /// assert_eq!(&c.as_bytes()[..4], b"DODc");
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        if self.buf.is_empty() {
            &raw::EMPTY
        } else {
            &self.buf
        }
    }

    /// The component as a [`DataView`]. O(1).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("x", 1.0);
    /// assert_eq!(c.view().len(), 1);
    /// ```
    pub fn view(&self) -> DataView<'_> {
        DataView {
            bytes: self.as_bytes(),
        }
    }

    /// Sets the value of `key`, replacing any value of any type. O(n) in the number of
    /// entries for a new key (the header arrays move by a few bytes), O(log n) otherwise, plus
    /// the size of the value; amortised O(size of the component) when the buffer grows.
    ///
    /// `key` is a [`DataKey`] or a path string ([`PathKey`]). A path string's name is kept
    /// ([`names`](DataComponent::names)) unless the key already has one or the path cannot be
    /// registered (deeper than [`MAX_PATH_DEPTH`](super::MAX_PATH_DEPTH), or a reserved
    /// name): one lookup of O(log names), plus, the first time, a copy of the path.
    ///
    /// Keys are 32-bit hashes, so two paths with the same hash are one key: setting the second
    /// replaces the first's value, and the name kept is the first's. To learn of such a pair,
    /// register the names up front with [`KeyNames::register`](super::KeyNames::register),
    /// which reports it as [`NameError::Collision`](super::NameError::Collision) (as
    /// `from_json`, feature `json`, does).
    ///
    /// Keys are flat, so a component can hold both `"a"` and `"a.b"`; JSON cannot write a
    /// value that is also an object, and `to_json` refuses such a component
    /// (`JsonError::PathConflict`, feature `json`).
    ///
    /// # Panics
    ///
    /// If the component would need more than `u32::MAX` bytes.
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("stats.health", 100.0);
    /// c.set("stats.health", "full"); // the type may change
    /// c.set("color", &[0.0, 0.5, 0.5, 0.7]);
    /// c.set("gold", 1_000_000_007i64);
    /// assert_eq!(c.get_str("stats.health"), Some("full"));
    /// assert_eq!(c.len(), 3);
    /// assert_eq!(c.names().name(dod::data_key!("gold")).as_deref(), Some("gold"));
    /// ```
    #[track_caller]
    pub fn set<'p, 'v>(&mut self, key: impl Into<PathKey<'p>>, value: impl Into<Value<'v>>) {
        let (key, value) = (key.into(), value.into());
        if let Some(path) = key.path() {
            self.names
                .get_or_insert_with(Default::default)
                .note(key.key(), path);
        }
        let key = key.key();
        if let Err(need) = raw::set(&mut self.buf, key, &value) {
            self.grow(need);
            let done = raw::set(&mut self.buf, key, &value);
            debug_assert!(done.is_ok(), "a grown buffer has room");
        }
    }

    #[track_caller]
    fn grow(&mut self, need: usize) {
        assert!(
            need <= u32::MAX as usize,
            "DataComponent::set: the component would need {need} bytes, more than it can address (u32::MAX)"
        );
        let len = self.buf.len();
        let size = if need <= len {
            len
        } else {
            need.max(len.saturating_mul(2))
                .max(MIN_BUFFER)
                .min(u32::MAX as usize)
        };
        let mut grown = vec![0; size];
        if self.buf.is_empty() {
            raw::init(&mut grown);
        } else {
            raw::repack(&self.buf, &mut grown);
        }
        self.buf = grown;
    }

    /// The value of `key`. O(log n).
    ///
    /// ```
    /// # use dod::data::{DataComponent, Value};
    /// let mut c = DataComponent::new();
    /// c.set("drunk", true);
    /// assert_eq!(c.get("drunk"), Some(Value::Bool(true)));
    /// assert_eq!(c.get("sober"), None);
    /// ```
    #[inline]
    pub fn get(&self, key: impl Into<DataKey>) -> Option<Value<'_>> {
        self.view().get(key)
    }

    /// The float at `key`; `None` if it is missing *or of another type* ([`get`](Self::get)
    /// tells the two apart), an integer included: JSON's `100` loads as an integer, so read
    /// numbers that may come either way with [`get_f64`](Self::get_f64). O(log n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("hp", 3.0);
    /// assert_eq!(c.get_f32("hp"), Some(3.0));
    /// c.set("hp", 3i64);
    /// assert_eq!(c.get_f32("hp"), None);
    /// ```
    #[inline]
    pub fn get_f32(&self, key: impl Into<DataKey>) -> Option<f32> {
        self.view().get_f32(key)
    }

    /// The number at `key`, an integer or a float, as `f64` ([`Value::as_f64`]); `None` if it
    /// is missing or not a number. O(log n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("hp", 100i64); // as JSON's `"hp": 100` loads
    /// c.set("speed", 2.5);
    /// assert_eq!(c.get_f64("hp"), Some(100.0));
    /// assert_eq!(c.get_f64("speed"), Some(2.5));
    /// ```
    #[inline]
    pub fn get_f64(&self, key: impl Into<DataKey>) -> Option<f64> {
        self.view().get_f64(key)
    }

    /// The integer at `key`; `None` if it is missing or of another type (a float is not
    /// converted). O(log n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// use dod::Handle;
    /// let mut c = DataComponent::new();
    /// let target = Handle::new(7, 3, 1).unwrap();
    /// c.set("gold", 12_000_000_000i64);
    /// c.set("target", target.to_bits() as i64);
    /// assert_eq!(c.get_i64("gold"), Some(12_000_000_000));
    /// let bits = c.get_i64("target").unwrap() as u64;
    /// assert_eq!(Handle::from_bits(bits), Some(target));
    /// ```
    #[inline]
    pub fn get_i64(&self, key: impl Into<DataKey>) -> Option<i64> {
        self.view().get_i64(key)
    }

    /// The boolean at `key`; `None` if it is missing or of another type. O(log n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("drunk", false);
    /// assert_eq!(c.get_bool("drunk"), Some(false));
    /// ```
    #[inline]
    pub fn get_bool(&self, key: impl Into<DataKey>) -> Option<bool> {
        self.view().get_bool(key)
    }

    /// The string at `key`; `None` if it is missing or of another type. O(log n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("name", "The One");
    /// assert_eq!(c.get_str("name"), Some("The One"));
    /// ```
    #[inline]
    pub fn get_str(&self, key: impl Into<DataKey>) -> Option<&str> {
        self.view().get_str(key)
    }

    /// The float array at `key`; `None` if it is missing or of another type. O(log n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("pos", &[1.0, 2.0]);
    /// assert_eq!(c.get_f32s("pos").unwrap().to_vec(), [1.0, 2.0]);
    /// ```
    #[inline]
    pub fn get_f32s(&self, key: impl Into<DataKey>) -> Option<Floats<'_>> {
        self.view().get_f32s(key)
    }

    /// Whether `key` has a value. O(log n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("a", 1.0);
    /// assert!(c.contains("a") && !c.contains("b"));
    /// ```
    #[inline]
    pub fn contains(&self, key: impl Into<DataKey>) -> bool {
        self.view().contains(key)
    }

    /// Removes `key`; whether it had a value. Its bytes are zeroed and become free space or a
    /// hole. O(n) in the number of entries.
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("a", "x");
    /// assert!(c.remove("a"));
    /// assert!(!c.remove("a"));
    /// ```
    pub fn remove(&mut self, key: impl Into<DataKey>) -> bool {
        raw::remove(&mut self.buf, key.into())
    }

    /// The number of entries. O(1).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("a", 1.0);
    /// assert_eq!(c.len(), 1);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        raw::count(&self.buf)
    }

    /// Whether there are no entries. O(1).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// assert!(DataComponent::new().is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries as `(key hash, value)`, in increasing order of key hash. O(1) to create.
    ///
    /// ```
    /// # use dod::data::{DataComponent, Value};
    /// let mut c = DataComponent::new();
    /// c.set("a", 1.0);
    /// let all: Vec<_> = c.iter().collect();
    /// assert_eq!(all, [(dod::data_key!("a"), Value::F32(1.0))]);
    /// ```
    pub fn iter(&self) -> Iter<'_> {
        self.view().iter()
    }

    /// Removes every entry, keeping the buffer (zeroed) and the names. O(capacity).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("a", 1.0);
    /// c.clear();
    /// assert!(c.is_empty());
    /// ```
    pub fn clear(&mut self) {
        if !self.buf.is_empty() {
            self.buf.fill(0);
            raw::init(&mut self.buf);
        }
    }

    /// The buffer's length in bytes: header, free space and value area. O(1).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("a", 1.0);
    /// assert!(c.capacity() >= 16 + 9);
    /// ```
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Heap bytes held: the buffer's allocation (0 for a new component) and the names kept
    /// ([`KeyNames::memory_usage`]). O(1) without names, O(names) with.
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set(dod::data_key!("a"), 1.0);
    /// assert_eq!(c.memory_usage(), 64);
    /// c.set("a", 2.0); // by path: the name is kept too
    /// assert!(c.memory_usage() > 64);
    /// ```
    pub fn memory_usage(&self) -> usize {
        self.buf.capacity()
            + self
                .names
                .as_ref()
                .map_or(0, |n| core::mem::size_of::<KeyNames>() + n.memory_usage())
    }

    /// The names of the paths values were set by ([`set`](DataComponent::set) with a path
    /// string), which `to_json` (feature `json`) uses. Removing a value keeps its
    /// name; `merge_from`, `apply` and `from_bytes` bring none. O(1).
    ///
    /// ```
    /// # use dod::data::{DataComponent, DataKey};
    /// let mut c = DataComponent::new();
    /// c.set("status.poisoned", true);
    /// c.set(DataKey::from_path("status.cursed"), true);
    /// assert_eq!(c.names().name(DataKey::from_path("status.poisoned")).as_deref(), Some("status.poisoned"));
    /// assert_eq!(c.names().name(DataKey::from_path("status.cursed")), None);
    /// ```
    pub fn names(&self) -> &KeyNames {
        self.names.as_deref().unwrap_or(&NO_NAMES)
    }

    /// The names the component keeps, to register more or take some from elsewhere
    /// ([`KeyNames::extend_from`]). O(1).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.names_mut().register("stats.health").unwrap();
    /// assert_eq!(c.names().len(), 1);
    /// ```
    pub fn names_mut(&mut self) -> &mut KeyNames {
        self.names.get_or_insert_with(Default::default)
    }

    /// Bytes left unused by holes in the value area (reclaimed by
    /// [`compact`](Self::compact)). O(n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("a", "short");
    /// c.set("b", 1.0);
    /// c.set("a", "a longer string");
    /// assert_eq!(c.hole_bytes(), 4 + 5);
    /// c.compact();
    /// assert_eq!(c.hole_bytes(), 0);
    /// ```
    pub fn hole_bytes(&self) -> usize {
        if self.buf.is_empty() {
            0
        } else {
            raw::hole_bytes(&self.buf)
        }
    }

    /// Re-packs the values with no holes into a buffer of exactly the size they need (free
    /// space is released too). O(size).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::with_capacity(1024);
    /// c.set("a", 1.0);
    /// c.compact();
    /// assert_eq!(c.capacity(), 16 + 9);
    /// ```
    pub fn compact(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let mut packed = vec![0; raw::packed_size(&self.buf)];
        raw::repack(&self.buf, &mut packed);
        self.buf = packed;
    }

    /// Copies every entry of `other` into `self`; on a key both have, `other`'s value wins.
    /// O(m log n) for `m` entries in `other`.
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut a = DataComponent::new();
    /// a.set("x", 1.0);
    /// a.set("y", 1.0);
    /// let mut b = DataComponent::new();
    /// b.set("y", 2.0);
    /// a.merge_from(&b);
    /// assert_eq!((a.get_f32("x"), a.get_f32("y")), (Some(1.0), Some(2.0)));
    /// ```
    pub fn merge_from<'o>(&mut self, other: impl Into<DataView<'o>>) {
        for (k, v) in other.into().iter() {
            self.set(k, v);
        }
    }
}

impl PartialEq for DataComponent {
    /// Same entries (floats compared by bits); layout, free space and names do not matter.
    fn eq(&self, other: &Self) -> bool {
        self.view() == other.view()
    }
}

impl Eq for DataComponent {}

impl fmt::Debug for DataComponent {
    /// The entries as a map, each key by the path it was set with where the component kept
    /// it (see [`names`](DataComponent::names)), else by its hash.
    ///
    /// ```
    /// # use dod::data::{DataComponent, DataKey};
    /// let mut c = DataComponent::new();
    /// c.set("stats.hp", 3.0);
    /// c.set(DataKey::from_path("speed"), 1.5); // a hash alone: no name kept
    /// let shown = format!("{c:?}");
    /// assert!(shown.contains(r#""stats.hp": 3.0"#), "{shown}");
    /// assert!(shown.contains("#"), "{shown}");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.names {
            Some(names) => fmt::Debug::fmt(&names.debug(self.view()), f),
            None => fmt::Debug::fmt(&self.view(), f),
        }
    }
}

impl<'a> From<&'a DataComponent> for DataView<'a> {
    fn from(c: &'a DataComponent) -> Self {
        c.view()
    }
}

impl From<DataView<'_>> for DataComponent {
    /// Copies the view's bytes. O(n).
    fn from(v: DataView<'_>) -> Self {
        DataComponent {
            buf: v.bytes.to_vec(),
            names: None,
        }
    }
}

impl<'a> IntoIterator for &'a DataComponent {
    type Item = (DataKey, Value<'a>);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// A component read in place from bytes, checked once by [`DataView::new`]: zero copies, and
/// no accessor can panic afterwards, whatever the bytes were.
///
/// # Example
///
/// ```
/// use dod::data::{DataComponent, DataView, DecodeError};
///
/// let mut c = DataComponent::new();
/// c.set("name", "The One");
/// let file: Vec<u8> = c.as_bytes().to_vec();
///
/// let view = DataView::new(&file).unwrap();
/// assert_eq!(view.get_str("name"), Some("The One"));
///
/// let mut corrupt = file.clone();
/// corrupt[8] = 200; // an entry count the bytes cannot hold
/// assert_eq!(DataView::new(&corrupt).unwrap_err(), DecodeError::BadCounts);
/// ```
#[derive(Copy, Clone)]
pub struct DataView<'a> {
    /// Bytes that passed `raw::validate` (or a component's own buffer).
    bytes: &'a [u8],
}

impl<'a> DataView<'a> {
    /// Checks `bytes` (O(n log n), see [`DataComponent::from_bytes`]) and reads them in place.
    ///
    /// ```
    /// # use dod::data::{DataView, DecodeError};
    /// assert_eq!(DataView::new(&[0; 16]).unwrap_err(), DecodeError::BadMagic);
    /// ```
    pub fn new(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        raw::validate(bytes)?;
        Ok(DataView { bytes })
    }

    /// A view of bytes known to be valid (a block of a store, already checked).
    pub(crate) fn trusted(bytes: &'a [u8]) -> Self {
        debug_assert!(raw::validate(bytes).is_ok());
        DataView { bytes }
    }

    /// The bytes viewed. O(1).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let c = DataComponent::new();
    /// assert_eq!(c.view().as_bytes(), c.as_bytes());
    /// ```
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The value of `key`. O(log n).
    ///
    /// ```
    /// # use dod::data::{DataComponent, Value};
    /// let mut c = DataComponent::new();
    /// c.set("a", 1.0);
    /// assert_eq!(c.view().get("a"), Some(Value::F32(1.0)));
    /// ```
    #[inline]
    pub fn get(&self, key: impl Into<DataKey>) -> Option<Value<'a>> {
        raw::lookup(self.bytes, key.into())
    }

    /// The float at `key`; `None` if missing or of another type, an integer included: JSON's
    /// `100` loads as an integer, so read numbers that may come either way with
    /// [`get_f64`](DataView::get_f64). O(log n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("a", 1.0);
    /// assert_eq!(c.view().get_f32("a"), Some(1.0));
    /// ```
    #[inline]
    pub fn get_f32(&self, key: impl Into<DataKey>) -> Option<f32> {
        self.get(key)?.as_f32()
    }

    /// The number at `key`, an integer or a float, as `f64` ([`Value::as_f64`]); `None` if
    /// missing or not a number. O(log n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("a", 7i64);
    /// assert_eq!(c.view().get_f64("a"), Some(7.0));
    /// ```
    #[inline]
    pub fn get_f64(&self, key: impl Into<DataKey>) -> Option<f64> {
        self.get(key)?.as_f64()
    }

    /// The integer at `key`; `None` if missing or of another type. O(log n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("a", i64::MAX);
    /// assert_eq!(c.view().get_i64("a"), Some(i64::MAX));
    /// ```
    #[inline]
    pub fn get_i64(&self, key: impl Into<DataKey>) -> Option<i64> {
        self.get(key)?.as_i64()
    }

    /// The boolean at `key`; `None` if missing or of another type. O(log n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("a", true);
    /// assert_eq!(c.view().get_bool("a"), Some(true));
    /// ```
    #[inline]
    pub fn get_bool(&self, key: impl Into<DataKey>) -> Option<bool> {
        self.get(key)?.as_bool()
    }

    /// The string at `key`; `None` if missing or of another type. O(log n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("a", "x");
    /// assert_eq!(c.view().get_str("a"), Some("x"));
    /// ```
    #[inline]
    pub fn get_str(&self, key: impl Into<DataKey>) -> Option<&'a str> {
        self.get(key)?.as_str()
    }

    /// The float array at `key`; `None` if missing or of another type. O(log n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("a", &[1.0]);
    /// assert_eq!(c.view().get_f32s("a").unwrap().len(), 1);
    /// ```
    #[inline]
    pub fn get_f32s(&self, key: impl Into<DataKey>) -> Option<Floats<'a>> {
        self.get(key)?.as_f32s()
    }

    /// Whether `key` has a value. O(log n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// assert!(!DataComponent::new().view().contains("a"));
    /// ```
    #[inline]
    pub fn contains(&self, key: impl Into<DataKey>) -> bool {
        raw::contains(self.bytes, key.into())
    }

    /// The number of entries. O(1).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// assert_eq!(DataComponent::new().view().len(), 0);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        raw::count(self.bytes)
    }

    /// Whether there are no entries. O(1).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// assert!(DataComponent::new().view().is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries as `(key hash, value)` in increasing order of key hash. O(1) to create.
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("a", 1.0);
    /// assert_eq!(c.view().iter().count(), 1);
    /// ```
    pub fn iter(&self) -> Iter<'a> {
        Iter {
            bytes: self.bytes,
            i: 0,
            n: self.len(),
        }
    }

    /// Bytes an exact copy with no free space and no holes would take. O(n).
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut c = DataComponent::new();
    /// c.set("name", "abc");
    /// assert_eq!(c.view().packed_size(), 16 + 9 + 4 + 3);
    /// ```
    pub fn packed_size(&self) -> usize {
        raw::packed_size(self.bytes)
    }
}

impl PartialEq for DataView<'_> {
    /// Same entries (floats compared by bits).
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for DataView<'_> {}

impl fmt::Debug for DataView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// The entries of a component or view, in increasing order of key hash.
///
/// ```
/// # use dod::data::DataComponent;
/// let mut c = DataComponent::new();
/// c.set("a", 1.0);
/// c.set("b", 2.0);
/// assert_eq!(c.iter().len(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    bytes: &'a [u8],
    i: usize,
    n: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (DataKey, Value<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        if self.i >= self.n {
            return None;
        }
        let i = self.i;
        self.i += 1;
        match (raw::key_at(self.bytes, i), raw::value_at(self.bytes, i)) {
            (Some(k), Some(v)) => Some((k, v)),
            _ => {
                self.i = self.n;
                None
            }
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.n - self.i;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Iter<'_> {}
impl core::iter::FusedIterator for Iter<'_> {}
