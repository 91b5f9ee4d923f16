//! [`KeyNames`]: the paths behind hashed keys, kept on the side.

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

use super::{DataKey, DataView, MAX_PATH_DEPTH};

/// A registry of key paths by hash: hashing loses names, this keeps them where they are
/// wanted (tools, debugging, JSON).
///
/// A path is stored as its last segment and a shared link to its parent's path, so that the
/// paths [`DataComponent::from_json`](super::DataComponent::from_json) registers share their
/// parents: the registry's memory follows the JSON's size however long the names of its
/// objects and however deep they nest (one link per member, not one segment per level of each
/// member's path). Registering the same path again is fine;
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
#[derive(Clone, Default)]
pub struct KeyNames {
    paths: BTreeMap<DataKey, Path>,
}

/// A registered path: its last segment after its parent's path, or no segment at all.
type Path = Option<Arc<PathNode>>;

/// One segment of a path, after the path of its parent (shared with the parent's other
/// children).
#[derive(Debug)]
pub(crate) struct PathNode {
    parent: Path,
    segment: Box<str>,
    /// The number of segments from the top level to this one, this one included.
    depth: usize,
}

impl PathNode {
    /// The path of `segment` below `parent`.
    pub(crate) fn child(parent: Option<&Arc<PathNode>>, segment: &str) -> PathNode {
        PathNode {
            parent: parent.cloned(),
            segment: Box::from(segment),
            depth: parent.map_or(0, |p| p.depth) + 1,
        }
    }

    /// The path's number of segments.
    #[cfg(feature = "json")]
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// The path's last segment.
    #[cfg(feature = "json")]
    pub(crate) fn segment(&self) -> &str {
        &self.segment
    }

    /// The path of the parent, or `None` for a top-level name.
    #[cfg(any(feature = "json", test))]
    pub(crate) fn parent(&self) -> Option<&PathNode> {
        self.parent.as_deref()
    }

    /// The path's segments, from the top level.
    pub(crate) fn segments(&self) -> Segments<'_> {
        Segments {
            back: Some(self),
            len: self.depth,
        }
    }
}

/// Whether two paths have the same segments. O(depth), and O(1) from where they share a
/// parent.
fn same_path(mut a: Option<&PathNode>, mut b: Option<&PathNode>) -> bool {
    loop {
        match (a, b) {
            (None, None) => return true,
            (Some(x), Some(y)) => {
                if core::ptr::eq(x, y) {
                    return true;
                }
                if x.depth != y.depth || x.segment != y.segment {
                    return false;
                }
                a = x.parent.as_deref();
                b = y.parent.as_deref();
            }
            _ => return false,
        }
    }
}

/// The segments of a registered path, from the top level: see [`KeyNames::segments`].
///
/// From the back (`rev`, `next_back`) each segment is O(1); from the front, O(depth) each,
/// as a path is kept as a link from each segment to its parent.
///
/// ```
/// # use dod::data::KeyNames;
/// let mut names = KeyNames::new();
/// let k = names.register("a.b.c").unwrap();
/// let segments = names.segments(k).unwrap();
/// assert_eq!(segments.len(), 3);
/// assert_eq!(segments.clone().collect::<Vec<_>>(), ["a", "b", "c"]);
/// assert_eq!(segments.rev().collect::<Vec<_>>(), ["c", "b", "a"]);
/// ```
#[derive(Clone, Debug)]
pub struct Segments<'a> {
    /// The node of the last segment not yet yielded.
    back: Option<&'a PathNode>,
    /// How many are left: the front one is `len - 1` links above `back`.
    len: usize,
}

impl<'a> Iterator for Segments<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.len == 0 {
            return None;
        }
        let mut node = self.back?;
        for _ in 1..self.len {
            node = node.parent.as_deref()?;
        }
        self.len -= 1;
        Some(&node.segment)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }
}

impl DoubleEndedIterator for Segments<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.len == 0 {
            return None;
        }
        let node = self.back?;
        self.back = node.parent.as_deref();
        self.len -= 1;
        Some(&node.segment)
    }
}

impl ExactSizeIterator for Segments<'_> {}

impl core::iter::FusedIterator for Segments<'_> {}

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

/// The segments of `path` joined with `.`.
fn join(path: Option<&PathNode>) -> String {
    let Some(node) = path else {
        return String::new();
    };
    let segments: Vec<&str> = node.segments().rev().collect();
    let mut s = String::with_capacity(segments.iter().map(|seg| seg.len() + 1).sum());
    for (i, seg) in segments.iter().rev().enumerate() {
        if i > 0 {
            s.push('.');
        }
        s.push_str(seg);
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
        let mut kept: Path = None;
        let mut key = DataKey::ROOT;
        let mut depth = 0usize;
        for s in segments {
            depth += 1;
            if depth <= MAX_PATH_DEPTH {
                key = key.child(s.as_ref());
                kept = Some(Arc::new(PathNode::child(kept.as_ref(), s.as_ref())));
            }
        }
        if depth > MAX_PATH_DEPTH {
            return Err(NameError::TooDeep { depth });
        }
        self.register_path(key, kept)
    }

    /// Registers the path of `segment` below `parent` (a path the caller keeps, whose
    /// segments need not be registered), whose key the caller has (`key` is `parent`'s key's
    /// [`child`](DataKey::child) `segment`): the registry shares `parent` and hashes
    /// nothing. A path registered before costs no allocation.
    #[cfg(feature = "json")]
    pub(crate) fn register_child(
        &mut self,
        key: DataKey,
        parent: Option<&Arc<PathNode>>,
        segment: &str,
    ) -> Result<DataKey, NameError> {
        let depth = parent.map_or(0, |p| p.depth) + 1;
        if depth > MAX_PATH_DEPTH {
            return Err(NameError::TooDeep { depth });
        }
        if let Some(Some(existing)) = self.paths.get(&key) {
            if existing.segment.as_ref() == segment
                && same_path(existing.parent.as_deref(), parent.map(|p| &**p))
            {
                return Ok(key);
            }
        }
        self.register_path(key, Some(Arc::new(PathNode::child(parent, segment))))
    }

    /// Registers `path` (at most [`MAX_PATH_DEPTH`] segments), whose key is `key`.
    fn register_path(&mut self, key: DataKey, path: Path) -> Result<DataKey, NameError> {
        if let Some(node) = &path {
            if node.depth == 1 && unnamed_key(&node.segment).is_some() {
                return Err(NameError::Reserved {
                    name: String::from(&*node.segment),
                });
            }
        }
        match self.paths.get(&key) {
            Some(existing) if !same_path(existing.as_deref(), path.as_deref()) => {
                Err(NameError::Collision(NameCollision {
                    key,
                    existing: join(existing.as_deref()),
                    rejected: join(path.as_deref()),
                }))
            }
            Some(_) => Ok(key),
            None => {
                self.paths.insert(key, path);
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

    /// Bytes held on the heap, approximately: the segments, the links between them and the
    /// map's entries (not the map's node overhead). A parent's path that several paths share
    /// (as `from_json` shares it) is counted once. O(n log n) for `n` segments kept.
    ///
    /// ```
    /// # use dod::data::KeyNames;
    /// let mut names = KeyNames::new();
    /// assert_eq!(names.memory_usage(), 0);
    /// names.register("stats.health").unwrap();
    /// assert!(names.memory_usage() >= "stats".len() + "health".len());
    /// ```
    pub fn memory_usage(&self) -> usize {
        // An `Arc`'s allocation: its two counts and the node.
        const NODE: usize = 2 * core::mem::size_of::<usize>() + core::mem::size_of::<PathNode>();
        let mut counted = BTreeSet::new();
        let mut bytes = 0;
        for path in self.paths.values() {
            bytes += core::mem::size_of::<(DataKey, Path)>();
            let mut node = path.as_deref();
            // Up to the first node counted already: its parents were counted with it.
            while let Some(n) = node.filter(|n| counted.insert(*n as *const PathNode)) {
                bytes += NODE + n.segment.len();
                node = n.parent.as_deref();
            }
        }
        bytes
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
        self.paths.get(&key).map(|p| join(p.as_deref()))
    }

    /// The segments of `key`'s path, from the top level, or `None` if `key` has no name.
    /// O(log n) to find; see [`Segments`] for the cost of each.
    ///
    /// ```
    /// # use dod::data::KeyNames;
    /// let mut names = KeyNames::new();
    /// let k = names.register("a.b").unwrap();
    /// let segments: Vec<&str> = names.segments(k).unwrap().collect();
    /// assert_eq!(segments, ["a", "b"]);
    /// ```
    pub fn segments(&self, key: DataKey) -> Option<Segments<'_>> {
        self.paths.get(&key).map(|p| segments_of(p.as_deref()))
    }

    /// The last node of `key`'s path (`None` inside for a path of no segment), or `None` if
    /// `key` has no name.
    #[cfg(feature = "json")]
    pub(crate) fn path(&self, key: DataKey) -> Option<Option<&PathNode>> {
        self.paths.get(&key).map(Option::as_deref)
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
    pub fn iter(&self) -> impl Iterator<Item = (DataKey, Segments<'_>)> + '_ {
        self.paths
            .iter()
            .map(|(k, p)| (*k, segments_of(p.as_deref())))
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

/// The segments of `path`: none for a path of no segment.
fn segments_of(path: Option<&PathNode>) -> Segments<'_> {
    match path {
        Some(node) => node.segments(),
        None => Segments { back: None, len: 0 },
    }
}

impl PartialEq for KeyNames {
    /// The same keys, each with the same segments.
    fn eq(&self, other: &Self) -> bool {
        self.paths.len() == other.paths.len()
            && self
                .paths
                .iter()
                .zip(&other.paths)
                .all(|((k, a), (l, b))| k == l && same_path(a.as_deref(), b.as_deref()))
    }
}

impl Eq for KeyNames {}

impl fmt::Debug for KeyNames {
    /// The keys and their names, segments joined with `.`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.paths.iter().map(|(k, p)| (k, join(p.as_deref()))))
            .finish()
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

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::VecDeque;
    use alloc::format;

    /// `Segments` taken from both ends in a random order gives what a `VecDeque` of the
    /// path's segments gives, with the right length at every step, for every depth.
    #[test]
    fn segments_from_both_ends_match_a_deque() {
        let mut names = KeyNames::new();
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for depth in 0..=MAX_PATH_DEPTH {
            let path: Vec<String> = (0..depth).map(|i| format!("s{i}")).collect();
            let key = names.register_segments(&path).unwrap();
            for _ in 0..4 {
                let mut model: VecDeque<&str> = path.iter().map(String::as_str).collect();
                let mut segments = names.segments(key).unwrap();
                loop {
                    assert_eq!(segments.len(), model.len());
                    let (got, want) = if next() % 2 == 0 {
                        (segments.next(), model.pop_front())
                    } else {
                        (segments.next_back(), model.pop_back())
                    };
                    assert_eq!(got, want);
                    if want.is_none() {
                        break;
                    }
                }
                assert_eq!((segments.next(), segments.next_back()), (None, None));
            }
        }
    }

    /// Paths sharing a parent, registered through `register_segments` and compared: the same
    /// segments are the same path, a different last segment or depth is not.
    #[test]
    fn paths_compare_by_their_segments() {
        let mut names = KeyNames::new();
        let ab = names.register("a.b").unwrap();
        let ac = names.register("a.c").unwrap();
        let a_b = names.register_segments(["a", "b"]).unwrap();
        assert_eq!(ab, a_b);
        assert_eq!(names.len(), 2);
        let (pb, pc) = (names.paths[&ab].as_deref(), names.paths[&ac].as_deref());
        assert!(same_path(pb, pb) && !same_path(pb, pc));
        assert!(!same_path(pb, pb.and_then(PathNode::parent)));
        let mut other = KeyNames::new();
        other.register("a.c").unwrap();
        other.register("a.b").unwrap();
        assert_eq!(names, other);
        other.register("a").unwrap();
        assert_ne!(names, other);
        assert_eq!(format!("{other:?}").matches("\"a.b\"").count(), 1);
    }
}
