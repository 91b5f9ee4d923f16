//! [`KeyNames`]: the paths behind hashed keys, kept on the side.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::{DataKey, DataView};

/// A registry of key paths by hash: hashing loses names, this keeps them where they are
/// wanted (tools, debugging, JSON).
///
/// A path is stored as its segments. Registering the same path again is fine; registering a
/// *different* path with the same hash is a [`NameCollision`], the one way to learn that two
/// names share a key.
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
    paths: BTreeMap<DataKey, Vec<String>>,
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
    /// ```
    /// # use dod::data::{DataKey, KeyNames};
    /// let mut names = KeyNames::new();
    /// assert_eq!(names.register("stats.mana"), Ok(DataKey::from_path("stats.mana")));
    /// ```
    pub fn register(&mut self, path: &str) -> Result<DataKey, NameCollision> {
        self.register_segments(path.split('.'))
    }

    /// Registers a path given as segments, each taken whole (a `.` inside one is part of the
    /// name). O(log n + path length).
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
    ) -> Result<DataKey, NameCollision> {
        let segments: Vec<String> = segments
            .into_iter()
            .map(|s| String::from(s.as_ref()))
            .collect();
        let key = DataKey::from_segments(&segments);
        match self.paths.get(&key) {
            Some(existing) if *existing != segments => Err(NameCollision {
                key,
                existing: join(existing),
                rejected: join(&segments),
            }),
            Some(_) => Ok(key),
            None => {
                self.paths.insert(key, segments);
                Ok(key)
            }
        }
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
    /// assert_eq!(names.segments(k).unwrap(), ["a", "b"]);
    /// ```
    pub fn segments(&self, key: DataKey) -> Option<&[String]> {
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
    pub fn iter(&self) -> impl Iterator<Item = (DataKey, &[String])> + '_ {
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
