//! [`KeyNames`]: the paths behind hashed keys, kept on the side.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

use super::{DataKey, DataView, MAX_PATH_DEPTH};

/// A registry of key paths by hash: hashing loses names, this keeps them where they are
/// wanted (tools, debugging, JSON).
///
/// A path is stored as its segments, each a shared string (`Arc<str>`): the paths
/// [`DataComponent::from_json`](super::DataComponent::from_json) registers share their
/// parents' segments, so that the registry's memory follows the JSON's size however many
/// members an object with a long name holds. Registering the same path again is fine;
/// registering a *different* path with the same hash is a [`NameCollision`], the one way to
/// learn that two names share a key.
///
/// Paths have at most [`MAX_PATH_DEPTH`] segments, the bound that `to_json` and `from_json`
/// share, so that every registered name can be written and read back. The one-segment names
/// `#` followed by eight lowercase hex digits are reserved: they are how JSON writes a key
/// that has no name (`DataView::to_json`, feature `json`).
///
/// ```
/// use dod::data::{DataComponent, KeyNames};
///
/// let mut names = KeyNames::new();
/// let hp = names.register("stats.health").unwrap();
/// assert_eq!(names.name(hp).as_deref(), Some("stats.health"));
///
/// let mut c = DataComponent::new();
/// c.set(hp, 100.0);
/// c.set("unnamed", true);
/// let shown = format!("{:?}", names.debug(&c));
/// assert!(shown.contains("\"stats.health\": 100.0"), "{shown}");
/// assert!(shown.contains("#"), "{shown}"); // unnamed keys show their hash
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyNames {
    paths: BTreeMap<DataKey, Vec<Arc<str>>>,
}

/// Two different paths hash to the same [`DataKey`].
///
/// ```
/// use dod::data::{DataKey, KeyNames};
/// let mut names = KeyNames::new();
/// names.register("a").unwrap();
/// assert!(names.register("a").is_ok()); // the same path again
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameCollision {
    /// The shared hash.
    pub key: DataKey,
    /// The path registered first, segments joined with `.`.
    pub existing: String,
    /// The path that was refused.
    pub rejected: String,
}

impl fmt::Display for NameCollision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "key paths {:?} and {:?} have the same hash {}",
            self.existing, self.rejected, self.key
        )
    }
}

impl core::error::Error for NameCollision {}

/// Why a path could not be registered.
///
/// ```
/// use dod::data::{KeyNames, NameError, MAX_PATH_DEPTH};
/// let mut names = KeyNames::new();
/// let deep = vec!["a"; MAX_PATH_DEPTH + 1].join(".");
/// assert_eq!(names.register(&deep), Err(NameError::TooDeep { depth: MAX_PATH_DEPTH + 1 }));
/// assert!(matches!(names.register("#0000002a"), Err(NameError::Reserved { .. })));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameError {
    /// Another path with the same hash is registered.
    Collision(NameCollision),
    /// The path has more than [`MAX_PATH_DEPTH`] segments.
    TooDeep {
        /// Its number of segments.
        depth: usize,
    },
    /// The path is one segment of the form `#` and eight lowercase hex digits, which JSON
    /// uses for keys that have no name.
    Reserved {
        /// The name.
        name: String,
    },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Collision(c) => fmt::Display::fmt(c, f),
            NameError::TooDeep { depth } => write!(
                f,
                "a key path of {depth} segments is deeper than MAX_PATH_DEPTH ({MAX_PATH_DEPTH})"
            ),
            NameError::Reserved { name } => write!(
                f,
                "{name:?} is reserved: JSON writes a key without a name as '#' and its hash"
            ),
        }
    }
}

impl core::error::Error for NameError {}

impl From<NameCollision> for NameError {
    fn from(c: NameCollision) -> Self {
        NameError::Collision(c)
    }
}

/// The key a member name `#` + eight lowercase hex digits stands for: how JSON writes a key
/// that has no name.
pub(crate) fn unnamed_key(name: &str) -> Option<DataKey> {
    let hex = name.strip_prefix('#')?;
    let lower_hex = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
    if hex.len() != 8 || !hex.as_bytes().iter().all(lower_hex) {
        return None;
    }
    u32::from_str_radix(hex, 16).ok().map(DataKey::from_raw)
}

fn join(segments: &[impl AsRef<str>]) -> String {
    let mut s = String::new();
    for (i, seg) in segments.iter().enumerate() {
        if i > 0 {
            s.push('.');
        }
        s.push_str(seg.as_ref());
    }
    s
}

impl KeyNames {
    /// An empty registry. O(1).
    ///
    /// ```
    /// # use dod::data::KeyNames;
    /// assert!(KeyNames::new().is_empty());
    /// ```
    pub const fn new() -> Self {
        KeyNames {
            paths: BTreeMap::new(),
        }
    }

    /// Registers `path` (split at every `.`) and returns its key. O(log n + path length).
    ///
    /// Errors: another path with the same hash is registered; the path has more than
    /// [`MAX_PATH_DEPTH`] segments; the path is a reserved name (see [`NameError`]). Nothing
    /// is registered then.
    ///
    /// ```
    /// # use dod::data::{DataKey, KeyNames};
    /// let mut names = KeyNames::new();
    /// assert_eq!(names.register("stats.mana"), Ok(DataKey::from_path("stats.mana")));
    /// ```
    pub fn register(&mut self, path: &str) -> Result<DataKey, NameError> {
        self.register_segments(path.split('.'))
    }

    /// Registers a path given as segments, each taken whole (a `.` inside one is part of the
    /// name). O(log n + path length); a path past the depth bound is counted, not copied.
    ///
    /// ```
    /// # use dod::data::{DataKey, KeyNames};
    /// let mut names = KeyNames::new();
    /// let k = names.register_segments(["version.major"]).unwrap();
    /// assert_eq!(k, DataKey::ROOT.child("version.major"));
    /// ```
    pub fn register_segments<S: AsRef<str>>(
        &mut self,
        segments: impl IntoIterator<Item = S>,
    ) -> Result<DataKey, NameError> {
        let mut kept: Vec<Arc<str>> = Vec::new();
        let mut depth = 0usize;
        for s in segments {
            depth += 1;
            if depth <= MAX_PATH_DEPTH {
                kept.push(Arc::from(s.as_ref()));
            }
        }
        if depth > MAX_PATH_DEPTH {
            return Err(NameError::TooDeep { depth });
        }
        self.register_kept(DataKey::from_segments(&kept), kept)
    }

    /// [`register_segments`](KeyNames::register_segments) of segments already shared, whose
    /// key the caller has (`key` is `DataKey::from_segments(segments)`): the registry keeps
    /// clones of the `Arc`s, not copies of the strings, and hashes nothing.
    #[cfg(feature = "json")]
    pub(crate) fn register_shared(
        &mut self,
        key: DataKey,
        segments: &[Arc<str>],
    ) -> Result<DataKey, NameError> {
        debug_assert_eq!(key, DataKey::from_segments(segments));
        if segments.len() > MAX_PATH_DEPTH {
            return Err(NameError::TooDeep {
                depth: segments.len(),
            });
        }
        self.register_kept(key, segments.to_vec())
    }

    /// Registers the segments `kept` (at most [`MAX_PATH_DEPTH`]), whose key is `key`.
    fn register_kept(&mut self, key: DataKey, kept: Vec<Arc<str>>) -> Result<DataKey, NameError> {
        if let [only] = kept.as_slice() {
            if unnamed_key(only).is_some() {
                return Err(NameError::Reserved {
                    name: String::from(&**only),
                });
            }
        }
        match self.paths.get(&key) {
            Some(existing) if *existing != kept => Err(NameError::Collision(NameCollision {
                key,
                existing: join(existing),
                rejected: join(&kept),
            })),
            Some(_) => Ok(key),
            None => {
                self.paths.insert(key, kept);
                Ok(key)
            }
        }
    }

    /// Keeps the name of `path`, whose key is `key`, if the registry has none for `key` and
    /// the path can be registered: what setting a value by a path string does. A key that
    /// already has a name costs one lookup.
    pub(crate) fn note(&mut self, key: DataKey, path: &str) {
        if !self.paths.contains_key(&key) {
            let _ = self.register(path);
        }
    }

    /// Adds every name of `other` that does not collide with one of `self`.
    ///
    /// O(m log n + their length) for `m` names in `other`.
    ///
    /// ```
    /// # use dod::data::KeyNames;
    /// let mut a = KeyNames::new();
    /// a.register("x").unwrap();
    /// let mut b = KeyNames::new();
    /// b.register("y").unwrap();
    /// a.extend_from(&b);
    /// assert_eq!(a.len(), 2);
    /// ```
    pub fn extend_from(&mut self, other: &KeyNames) {
        for (k, segments) in &other.paths {
            self.paths.entry(*k).or_insert_with(|| segments.clone());
        }
    }

    /// Bytes held on the heap, approximately: the strings, the segment arrays and the map's
    /// entries (not the map's node overhead). A string several paths share (a parent's
    /// name, as `from_json` shares it) is counted in shares. O(n).
    ///
    /// ```
    /// # use dod::data::KeyNames;
    /// let mut names = KeyNames::new();
    /// assert_eq!(names.memory_usage(), 0);
    /// names.register("stats.health").unwrap();
    /// assert!(names.memory_usage() >= "stats".len() + "health".len());
    /// ```
    pub fn memory_usage(&self) -> usize {
        self.paths
            .values()
            .map(|segments| {
                core::mem::size_of::<(DataKey, Vec<Arc<str>>)>()
                    + segments.capacity() * core::mem::size_of::<Arc<str>>()
                    + segments
                        .iter()
                        .map(|s| s.len().div_ceil(Arc::strong_count(s)))
                        .sum::<usize>()
            })
            .sum()
    }

    /// Removes a name registered by a call that then failed.
    #[cfg(feature = "json")]
    pub(crate) fn forget(&mut self, key: DataKey) {
        self.paths.remove(&key);
    }

    /// The path of `key`, segments joined with `.`. O(log n + path length).
    ///
    /// ```
    /// # use dod::data::{DataKey, KeyNames};
    /// let mut names = KeyNames::new();
    /// names.register("name").unwrap();
    /// assert_eq!(names.name(DataKey::from_path("name")).as_deref(), Some("name"));
    /// assert_eq!(names.name(DataKey::from_path("other")), None);
    /// ```
    pub fn name(&self, key: DataKey) -> Option<String> {
        self.paths.get(&key).map(|s| join(s))
    }

    /// The segments of `key`'s path. O(log n).
    ///
    /// ```
    /// # use dod::data::KeyNames;
    /// let mut names = KeyNames::new();
    /// let k = names.register("a.b").unwrap();
    /// let segments: Vec<&str> = names.segments(k).unwrap().iter().map(|s| &**s).collect();
    /// assert_eq!(segments, ["a", "b"]);
    /// ```
    pub fn segments(&self, key: DataKey) -> Option<&[Arc<str>]> {
        self.paths.get(&key).map(Vec::as_slice)
    }

    /// Number of registered paths. O(1).
    ///
    /// ```
    /// # use dod::data::KeyNames;
    /// let mut names = KeyNames::new();
    /// names.register("a").unwrap();
    /// assert_eq!(names.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Whether no path is registered. O(1).
    ///
    /// ```
    /// # use dod::data::KeyNames;
    /// assert!(KeyNames::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The registered keys and their segments, in increasing order of key. O(1) to create.
    ///
    /// ```
    /// # use dod::data::KeyNames;
    /// let mut names = KeyNames::new();
    /// names.register("a").unwrap();
    /// assert_eq!(names.iter().count(), 1);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (DataKey, &[Arc<str>])> + '_ {
        self.paths.iter().map(|(k, s)| (*k, s.as_slice()))
    }

    /// A `Debug` form of a component that shows registered keys by name and the others by
    /// hash. O(1) to create.
    ///
    /// ```
    /// # use dod::data::{DataComponent, KeyNames};
    /// let mut names = KeyNames::new();
    /// names.register("hp").unwrap();
    /// let mut c = DataComponent::new();
    /// c.set("hp", 1.0);
    /// assert_eq!(format!("{:?}", names.debug(&c)), r#"{"hp": 1.0}"#);
    /// ```
    pub fn debug<'a>(&'a self, data: impl Into<DataView<'a>>) -> Named<'a> {
        Named {
            names: self,
            data: data.into(),
        }
    }
}

/// A component shown with the names of its keys: see [`KeyNames::debug`].
///
/// ```
/// # use dod::data::{DataComponent, KeyNames};
/// let names = KeyNames::new();
/// let c = DataComponent::new();
/// assert_eq!(format!("{:?}", names.debug(&c)), "{}");
/// ```
pub struct Named<'a> {
    names: &'a KeyNames,
    data: DataView<'a>,
}

impl fmt::Debug for Named<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Key<'a>(Option<String>, DataKey, core::marker::PhantomData<&'a ()>);
        impl fmt::Debug for Key<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match &self.0 {
                    Some(name) => fmt::Debug::fmt(name, f),
                    None => fmt::Debug::fmt(&self.1, f),
                }
            }
        }
        f.debug_map()
            .entries(
                self.data
                    .iter()
                    .map(|(k, v)| (Key(self.names.name(k), k, core::marker::PhantomData), v)),
            )
            .finish()
    }
}
