//! Key paths and their specified 32-bit hash.
//!
//! A [`DataKey`] is the hash of a flattened key path such as `stats.health`. It is persisted in
//! the bytes of every [`DataComponent`](super::DataComponent), so the function is part of the
//! format (hash id 1) and never changes between versions of the crate:
//!
//! ```text
//! FNV-1a 32: h = h ^ byte; h = h * 0x0100_0193 (wrapping), for each byte fed
//! ROOT       = 0x811C_9DC5 (the FNV offset basis): the empty path
//! child(h, segment) = h fed with segment.len() as u32 (4 bytes, little-endian),
//!                     then with the segment's UTF-8 bytes
//! path "a.b.c"      = child(child(child(ROOT, "a"), "b"), "c")
//! ```
//!
//! Each segment is prefixed with its length, so the segment `"a.b"` (built with
//! [`DataKey::child`]) and the path `a.b` (two segments) hash differently: a `.` inside a
//! segment cannot be mistaken for a separator.

use core::fmt;

const FNV_PRIME: u32 = 0x0100_0193;

/// The hash of a flattened key path: how a [`DataComponent`](super::DataComponent) names its
/// values.
///
/// Build one at compile time with [`data_key!`](crate::data_key!) or the `const fn`
/// [`DataKey::from_path`], at run time from segments with [`DataKey::child`] or
/// [`DataKey::from_segments`]. `&str` converts into a `DataKey` with [`From`], so methods
/// that take `impl Into<DataKey>` accept `"stats.health"` directly.
///
/// The hash is persisted in every component's bytes, so it is a specified function (hash id
/// 1 of the format), stable across versions of the crate:
///
/// ```text
/// FNV-1a 32: for each byte fed, h = (h ^ byte) * 0x0100_0193 (wrapping)
/// ROOT       = 0x811C_9DC5 (the FNV offset basis): the empty path
/// child(h, segment) = h fed with segment.len() as u32 (4 bytes, little-endian),
///                     then with the segment's UTF-8 bytes
/// path "a.b.c"      = child(child(child(ROOT, "a"), "b"), "c")
/// ```
///
/// Each segment is prefixed with its length, so the segment `"a.b"` and the path `a.b` (two
/// segments) hash differently. Test vectors: `name` = `0x428A5A8A`, `stats.health` =
/// `0x94973C4F`, `stats.mana` = `0x01C0B9E8`, `status_effects.drunk` = `0x32737D55`.
///
/// # Example
///
/// ```
/// use dod::data::DataKey;
/// use dod::data_key;
///
/// const HEALTH: DataKey = DataKey::from_path("stats.health");
/// assert_eq!(data_key!("stats.health"), HEALTH);
/// assert_eq!(DataKey::ROOT.child("stats").child("health"), HEALTH);
/// assert_eq!(DataKey::from("stats.health"), HEALTH);
/// // A '.' inside a segment is not a separator.
/// assert_ne!(DataKey::ROOT.child("stats.health"), HEALTH);
/// assert_eq!(HEALTH.to_raw(), 0x9497_3C4F);
/// ```
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct DataKey(u32);

impl DataKey {
    /// The empty path, the parent of every top-level segment (`0x811C9DC5`).
    pub const ROOT: DataKey = DataKey(0x811C_9DC5);

    /// The key of `path`, split at every `.` into segments. O(path length); a `const fn`.
    ///
    /// `""` is the path of one empty segment, not [`ROOT`](DataKey::ROOT).
    ///
    /// ```
    /// # use dod::data::DataKey;
    /// const NAME: DataKey = DataKey::from_path("name");
    /// assert_eq!(NAME, DataKey::ROOT.child("name"));
    /// ```
    pub const fn from_path(path: &str) -> DataKey {
        let b = path.as_bytes();
        let mut h = DataKey::ROOT.0;
        let mut start = 0;
        loop {
            let mut end = start;
            while end < b.len() && b[end] != b'.' {
                end += 1;
            }
            h = feed_segment(h, b, start, end);
            if end == b.len() {
                return DataKey(h);
            }
            start = end + 1;
        }
    }

    /// The key of this path extended by one segment, taken whole (a `.` in it is part of the
    /// name). O(segment length); a `const fn`.
    ///
    /// ```
    /// # use dod::data::DataKey;
    /// let k = DataKey::ROOT.child("status_effects").child("drunk");
    /// assert_eq!(k, DataKey::from_path("status_effects.drunk"));
    /// ```
    pub const fn child(self, segment: &str) -> DataKey {
        let b = segment.as_bytes();
        DataKey(feed_segment(self.0, b, 0, b.len()))
    }

    /// The key of a path given as segments, each taken whole. O(total length).
    ///
    /// ```
    /// # use dod::data::DataKey;
    /// assert_eq!(DataKey::from_segments(["stats", "mana"]), DataKey::from_path("stats.mana"));
    /// ```
    pub fn from_segments<S: AsRef<str>>(segments: impl IntoIterator<Item = S>) -> DataKey {
        segments
            .into_iter()
            .fold(DataKey::ROOT, |k, s| k.child(s.as_ref()))
    }

    /// The 32-bit hash, as stored in the bytes of a component. O(1).
    ///
    /// ```
    /// # use dod::data::DataKey;
    /// assert_eq!(DataKey::ROOT.to_raw(), 0x811C_9DC5);
    /// ```
    pub const fn to_raw(self) -> u32 {
        self.0
    }

    /// A key from its 32-bit hash, as read from bytes. O(1).
    ///
    /// ```
    /// # use dod::data::DataKey;
    /// let k = DataKey::from_path("name");
    /// assert_eq!(DataKey::from_raw(k.to_raw()), k);
    /// ```
    pub const fn from_raw(raw: u32) -> DataKey {
        DataKey(raw)
    }
}

const fn feed(mut h: u32, byte: u8) -> u32 {
    h ^= byte as u32;
    h.wrapping_mul(FNV_PRIME)
}

const fn feed_segment(mut h: u32, b: &[u8], start: usize, end: usize) -> u32 {
    let len = ((end - start) as u32).to_le_bytes();
    let mut i = 0;
    while i < 4 {
        h = feed(h, len[i]);
        i += 1;
    }
    let mut i = start;
    while i < end {
        h = feed(h, b[i]);
        i += 1;
    }
    h
}

impl From<&str> for DataKey {
    /// [`DataKey::from_path`].
    #[inline]
    fn from(path: &str) -> DataKey {
        DataKey::from_path(path)
    }
}

impl From<&alloc::string::String> for DataKey {
    /// [`DataKey::from_path`].
    #[inline]
    fn from(path: &alloc::string::String) -> DataKey {
        DataKey::from_path(path)
    }
}

/// A key as [`DataComponent::set`](super::DataComponent::set) and
/// [`DataStore::set`](super::DataStore::set) take it: a [`DataKey`], or a path string, which
/// is hashed and whose name the component or store then keeps, so that `to_json` writes it by
/// name.
///
/// Setting by a [`DataKey`] (or [`data_key!`](crate::data_key!)) skips the name: no lookup, no
/// allocation.
///
/// ```
/// use dod::data::{DataKey, PathKey};
/// let by_path = PathKey::from("stats.health");
/// assert_eq!(by_path.key(), DataKey::from_path("stats.health"));
/// assert_eq!(by_path.path(), Some("stats.health"));
/// assert_eq!(PathKey::from(dod::data_key!("stats.health")).path(), None);
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PathKey<'a> {
    key: DataKey,
    path: Option<&'a str>,
}

impl<'a> PathKey<'a> {
    /// The key. O(1).
    ///
    /// ```
    /// # use dod::data::{DataKey, PathKey};
    /// assert_eq!(PathKey::from("a").key(), DataKey::from_path("a"));
    /// ```
    #[inline]
    pub fn key(&self) -> DataKey {
        self.key
    }

    /// The path it was made from, if it was made from a string. O(1).
    ///
    /// ```
    /// # use dod::data::PathKey;
    /// assert_eq!(PathKey::from("a.b").path(), Some("a.b"));
    /// ```
    #[inline]
    pub fn path(&self) -> Option<&'a str> {
        self.path
    }
}

impl From<DataKey> for PathKey<'_> {
    #[inline]
    fn from(key: DataKey) -> Self {
        PathKey { key, path: None }
    }
}

impl<'a> From<&'a str> for PathKey<'a> {
    /// [`DataKey::from_path`], keeping the path.
    #[inline]
    fn from(path: &'a str) -> Self {
        PathKey {
            key: DataKey::from_path(path),
            path: Some(path),
        }
    }
}

impl<'a> From<&'a alloc::string::String> for PathKey<'a> {
    /// [`DataKey::from_path`], keeping the path.
    #[inline]
    fn from(path: &'a alloc::string::String) -> Self {
        PathKey::from(path.as_str())
    }
}

impl From<PathKey<'_>> for DataKey {
    #[inline]
    fn from(k: PathKey<'_>) -> DataKey {
        k.key
    }
}

impl fmt::Debug for DataKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{:08x}", self.0)
    }
}

impl fmt::Display for DataKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{:08x}", self.0)
    }
}

/// The [`DataKey`] of a key path, computed at compile time.
///
/// The argument is any constant `&str` expression; it is split at every `.` into segments
/// (see [`DataKey::from_path`]).
///
/// ```
/// use dod::data::DataKey;
/// let k = dod::data_key!("stats.health");
/// assert_eq!(k, DataKey::ROOT.child("stats").child("health"));
/// ```
#[macro_export]
macro_rules! data_key {
    ($path:expr) => {
        const { $crate::data::DataKey::from_path($path) }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference implementation written independently of the const fn.
    fn reference(segments: &[&str]) -> u32 {
        let mut h: u32 = 0x811C_9DC5;
        for s in segments {
            for b in (s.len() as u32).to_le_bytes().iter().chain(s.as_bytes()) {
                h ^= u32::from(*b);
                h = h.wrapping_mul(0x0100_0193);
            }
        }
        h
    }

    #[test]
    fn matches_reference() {
        for p in [
            "",
            "name",
            "stats.health",
            "a..b",
            ".x.",
            "status_effects.delirious",
        ] {
            let segs: alloc::vec::Vec<&str> = p.split('.').collect();
            assert_eq!(DataKey::from_path(p).to_raw(), reference(&segs), "{p:?}");
            assert_eq!(DataKey::from_segments(&segs), DataKey::from_path(p));
        }
    }

    /// The persisted values: changing any of these breaks every saved file.
    #[test]
    fn test_vectors() {
        let v = [
            ("", 0x4B95_F515),
            ("name", 0x428A_5A8A),
            ("stats.health", 0x9497_3C4F),
            ("stats.mana", 0x01C0_B9E8),
            ("status_effects.drunk", 0x3273_7D55),
            ("status_effects.delirious", 0xF5F1_CC55),
        ];
        for (p, h) in v {
            assert_eq!(DataKey::from_path(p).to_raw(), h, "{p:?}");
        }
        assert_eq!(DataKey::ROOT.child("a.b").to_raw(), 0xDC9A_8D69);
        assert_eq!(DataKey::from_path("a.b").to_raw(), 0x1BAF_5DF4);
        assert_eq!(crate::data_key!("stats.health").to_raw(), 0x9497_3C4F);
    }

    #[test]
    fn separator_inside_segment_differs() {
        assert_ne!(DataKey::ROOT.child("a.b"), DataKey::from_path("a.b"));
        assert_ne!(DataKey::from_path("ab"), DataKey::from_path("a.b"));
    }
}
