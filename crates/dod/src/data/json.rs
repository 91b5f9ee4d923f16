//! The restricted JSON, with `serde_json` as the parser (feature `json`).
//!
//! The rules are in the [`data`](crate::data#json) module's documentation. The writer works
//! from a sorted list of paths with one loop, no recursion; the reader's recursion is bounded
//! by [`MAX_PATH_DEPTH`], checked before parsing.

use alloc::collections::BTreeSet;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::cmp::Ordering;
use core::fmt;
use core::fmt::Write as _;

use serde_json::{Map, Number, Value as Json};

use super::names::{unnamed_key, KeyNames, NameCollision, NameError, PathNode};
use super::raw;
use super::value::Value;
use super::{DataComponent, DataKey, DataStore, DataView, MAX_PATH_DEPTH};
use crate::key::Key;

/// Why JSON could not be read as, or written from, a component. Paths are segments joined
/// with `.`.
///
/// ```
/// use dod::data::{DataComponent, JsonError, KeyNames};
/// let err = DataComponent::from_json(r#"{"a": {"b": null}}"#, &mut KeyNames::new());
/// assert_eq!(err.unwrap_err(), JsonError::Null { path: "a.b".into() });
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonError {
    /// Not JSON at all: the parser's message.
    Syntax(String),
    /// The top level is not an object.
    NotAnObject,
    /// `null` is not a value of the restricted JSON.
    Null {
        /// Where.
        path: String,
    },
    /// An array holding something other than numbers.
    NotNumbers {
        /// Where.
        path: String,
    },
    /// A number that is not a finite `f32` (too large, or a float to write is NaN or infinite).
    NotFiniteF32 {
        /// Where.
        path: String,
    },
    /// Two paths of the JSON hash to the same key (or a path and an unnamed key `"#…"`).
    Collision(NameCollision),
    /// A path is both a value and an object (`a` and `a.b` are both set).
    PathConflict {
        /// The path that is both.
        path: String,
    },
    /// Objects nested deeper than [`MAX_PATH_DEPTH`].
    TooDeep {
        /// How deep: the deepest object's nesting (the top level is 1), or a path's segments.
        depth: usize,
    },
    /// The values need a component of more than `u32::MAX` bytes, more than it can
    /// address.
    TooLarge {
        /// The bytes the component would need.
        bytes: usize,
    },
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::Syntax(m) => write!(f, "not JSON: {m}"),
            JsonError::NotAnObject => f.write_str("the top level is not an object"),
            JsonError::Null { path } => write!(f, "{path}: null is not allowed"),
            JsonError::NotNumbers { path } => {
                write!(f, "{path}: arrays may only hold numbers")
            }
            JsonError::NotFiniteF32 { path } => write!(f, "{path}: not a finite f32"),
            JsonError::Collision(c) => fmt::Display::fmt(c, f),
            JsonError::PathConflict { path } => {
                write!(f, "{path}: is both a value and an object")
            }
            JsonError::TooDeep { depth } => write!(
                f,
                "objects nested {depth} deep: key paths have at most MAX_PATH_DEPTH \
                 ({MAX_PATH_DEPTH}) segments"
            ),
            JsonError::TooLarge { bytes } => write!(
                f,
                "the values need a component of {bytes} bytes, more than it can address \
                 (u32::MAX)"
            ),
        }
    }
}

impl core::error::Error for JsonError {}

fn path_of(segments: &[impl AsRef<str>]) -> String {
    let mut s = String::new();
    for (i, seg) in segments.iter().enumerate() {
        if i > 0 {
            s.push('.');
        }
        s.push_str(seg.as_ref());
    }
    s
}

fn finite(x: f64, segments: &[&str]) -> Result<f32, JsonError> {
    let f = x as f32;
    if f.is_finite() {
        Ok(f)
    } else {
        Err(JsonError::NotFiniteF32 {
            path: path_of(segments),
        })
    }
}

fn number(n: &Number, segments: &[&str]) -> Result<f32, JsonError> {
    finite(n.as_f64().unwrap_or(f64::INFINITY), segments)
}

/// The deepest nesting of objects in `json` (the top level is 1), counted without parsing:
/// brackets inside strings are skipped. Arrays do not count (the restricted JSON has none
/// around objects).
fn object_depth(json: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in json.as_bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fn name_error(e: NameError, segments: &[&str]) -> JsonError {
    match e {
        NameError::Collision(c) => JsonError::Collision(c),
        NameError::TooDeep { depth } => JsonError::TooDeep { depth },
        // Only a one-segment name of the unnamed-key form is reserved, and those are read as
        // unnamed keys before anything is registered; kept total for safety.
        NameError::Reserved { name } => JsonError::Collision(NameCollision {
            key: DataKey::from_segments(segments),
            existing: name.clone(),
            rejected: name,
        }),
    }
}

/// A value read from JSON, before the component is built.
enum Leaf<'a> {
    Bool(bool),
    I64(i64),
    F32(f32),
    Str(&'a str),
    F32s(Vec<f32>),
}

impl Leaf<'_> {
    fn value(&self) -> Value<'_> {
        match self {
            Leaf::Bool(b) => Value::Bool(*b),
            Leaf::I64(i) => Value::I64(*i),
            Leaf::F32(f) => Value::F32(*f),
            Leaf::Str(s) => Value::from(*s),
            Leaf::F32s(a) => Value::from(a.as_slice()),
        }
    }
}

/// What [`read`] gathers: the values by key, in the order read, and the keys seen.
struct Read<'a> {
    leaves: Vec<(DataKey, Leaf<'a>)>,
    seen: BTreeSet<DataKey>,
}

/// Reads the members of `obj`, an object at path `segments` (whose key is `at`, and whose
/// path `parent` is, shared by the names registered below it): each member's key is its
/// parent's extended by its name, so that a long name is hashed once, not once per member
/// below it.
fn read<'a>(
    obj: &'a Map<String, Json>,
    at: DataKey,
    parent: Option<&Arc<PathNode>>,
    segments: &mut Vec<&'a str>,
    names: &mut KeyNames,
    added: &mut Vec<DataKey>,
    out: &mut Read<'a>,
) -> Result<(), JsonError> {
    for (name, v) in obj {
        segments.push(name);
        if segments.len() > MAX_PATH_DEPTH {
            // `object_depth` found no such nesting, but the bound is kept here too.
            return Err(JsonError::TooDeep {
                depth: segments.len(),
            });
        }
        let here = at.child(name);
        match v {
            Json::Object(inner) => {
                let node = Arc::new(PathNode::child(parent, name));
                read(inner, here, Some(&node), segments, names, added, out)?
            }
            leaf => {
                let unnamed = match segments.as_slice() {
                    [only] => unnamed_key(only),
                    _ => None,
                };
                let key = match unnamed {
                    Some(key) => key,
                    None => {
                        let before = names.len();
                        let key = names
                            .register_child(here, parent, name)
                            .map_err(|e| name_error(e, segments))?;
                        if names.len() > before {
                            added.push(key);
                        }
                        key
                    }
                };
                if !out.seen.insert(key) {
                    // A named path and an unnamed key `"#…"` for the same hash.
                    let existing = names
                        .name(key)
                        .filter(|_| unnamed.is_some())
                        .unwrap_or_else(|| key.to_string());
                    return Err(JsonError::Collision(NameCollision {
                        key,
                        existing,
                        rejected: path_of(segments),
                    }));
                }
                let leaf = match leaf {
                    Json::Null => {
                        return Err(JsonError::Null {
                            path: path_of(segments),
                        })
                    }
                    Json::Bool(b) => Leaf::Bool(*b),
                    Json::Number(n) => match n.as_i64() {
                        Some(i) => Leaf::I64(i),
                        None => Leaf::F32(number(n, segments)?),
                    },
                    Json::String(s) => Leaf::Str(s.as_str()),
                    Json::Array(items) => {
                        let floats = items
                            .iter()
                            .map(|x| match x {
                                Json::Number(n) => number(n, segments),
                                _ => Err(JsonError::NotNumbers {
                                    path: path_of(segments),
                                }),
                            })
                            .collect::<Result<Vec<f32>, _>>()?;
                        Leaf::F32s(floats)
                    }
                    Json::Object(_) => unreachable!("objects are walked above"),
                };
                out.leaves.push((key, leaf));
            }
        }
        segments.pop();
    }
    Ok(())
}

/// Appends `s` as a JSON string.
fn push_string(out: &mut String, s: &str) {
    // Serialising a `&str` cannot fail.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

/// Appends a float in the shortest form that reads back as the same `f32`, always with a
/// fraction or an exponent (0.7, not 0.699999988079071; 100.0, not 100).
fn push_f32(out: &mut String, f: f32, path: &[&str]) -> Result<(), JsonError> {
    // `f32`'s `Display` gives the shortest digits; as an `f64` they print the same, and
    // serde_json writes an `f64` with a fraction or an exponent.
    let n = alloc::format!("{f}")
        .parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .filter(|_| f.is_finite())
        .ok_or_else(|| JsonError::NotFiniteF32 {
            path: path_of(path),
        })?;
    out.push_str(&n.to_string());
    Ok(())
}

fn push_value(out: &mut String, v: Value<'_>, path: &[&str]) -> Result<(), JsonError> {
    match v {
        Value::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Value::F32(f) => push_f32(out, f, path)?,
        Value::I64(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Str(s) => push_string(out, s),
        Value::F32s(a) => {
            out.push('[');
            for (i, f) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_f32(out, f, path)?;
            }
            out.push(']');
        }
    }
    Ok(())
}

/// The restricted JSON of `view`, naming keys with `name_of` (the last node of a path;
/// `None`: unnamed). One loop over the paths in sorted order, keeping the stack of open
/// objects: no recursion, whatever the depth.
fn write_json<'n>(
    view: &DataView<'_>,
    name_of: impl Fn(DataKey) -> Option<&'n PathNode>,
) -> Result<String, JsonError> {
    // The member names of unnamed keys, made first so that paths can borrow them.
    let unnamed: Vec<PathNode> = view
        .iter()
        .filter(|&(k, _)| name_of(k).is_none())
        .map(|(k, _)| PathNode::child(None, &k.to_string()))
        .collect();
    let mut unnamed_at = 0;
    let mut entries: Vec<(&PathNode, Value<'_>)> = Vec::with_capacity(view.len());
    for (k, v) in view.iter() {
        let path = match name_of(k) {
            Some(node) => node,
            None => {
                unnamed_at += 1;
                &unnamed[unnamed_at - 1]
            }
        };
        if path.depth() > MAX_PATH_DEPTH {
            return Err(JsonError::TooDeep {
                depth: path.depth(),
            });
        }
        entries.push((path, v));
    }
    entries.sort_unstable_by(|a, b| compare_paths(a.0, b.0));

    let mut out = String::from("{");
    // The open objects below the top level, and at each open level (the top level first)
    // the last member written, if any.
    let mut open: Vec<&str> = Vec::new();
    let mut last: Vec<Option<&str>> = alloc::vec![None];
    // The segments of the path being written, from the top level.
    let mut segments: Vec<&str> = Vec::new();
    for (node, v) in entries {
        segments.clear();
        segments.extend(node.segments().rev());
        segments.reverse();
        let path = segments.as_slice();
        let Some((&leaf, parents)) = path.split_last() else {
            continue;
        };
        let common = open.iter().zip(parents).take_while(|(a, b)| a == b).count();
        while open.len() > common {
            out.push('}');
            open.pop();
            last.pop();
        }
        let conflict = |depth: usize| JsonError::PathConflict {
            path: path_of(&path[..=depth]),
        };
        for (depth, &seg) in parents.iter().enumerate().skip(common) {
            // Paths are sorted, so a member of this name written before at this level was a
            // value (an object of this name would still be open).
            let level = last.last_mut().expect("the top level is always open");
            match *level {
                Some(prev) if prev == seg => return Err(conflict(depth)),
                Some(_) => out.push(','),
                None => {}
            }
            *level = Some(seg);
            push_string(&mut out, seg);
            out.push_str(":{");
            open.push(seg);
            last.push(None);
        }
        let level = last.last_mut().expect("the top level is always open");
        match *level {
            Some(prev) if prev == leaf => return Err(conflict(path.len() - 1)),
            Some(_) => out.push(','),
            None => {}
        }
        *level = Some(leaf);
        push_string(&mut out, leaf);
        out.push(':');
        push_value(&mut out, v, path)?;
    }
    for _ in open {
        out.push('}');
    }
    out.push('}');
    Ok(out)
}

/// The order of two paths' segment lists, from the top level (a path before the longer ones
/// it begins). O(depth), and O(1) above a parent they share.
fn compare_paths(a: &PathNode, b: &PathNode) -> Ordering {
    // The deeper path's segments below the other's depth decide only a tie.
    let (mut x, mut y) = (Some(a), Some(b));
    for _ in b.depth()..a.depth() {
        x = x.and_then(PathNode::parent);
    }
    for _ in a.depth()..b.depth() {
        y = y.and_then(PathNode::parent);
    }
    // The last difference found going up is the one nearest the top level.
    let mut order = Ordering::Equal;
    while let (Some(p), Some(q)) = (x, y) {
        if core::ptr::eq(p, q) {
            break;
        }
        order = p.segment().cmp(q.segment()).then(order);
        (x, y) = (p.parent(), q.parent());
    }
    order.then(a.depth().cmp(&b.depth()))
}

impl DataView<'_> {
    /// The component as restricted JSON (see [the rules](crate::data#json)): key paths become
    /// nested objects, named by `names`; a key without a name is written as `"#"` and its
    /// hash, which [`DataComponent::from_json`] reads back as the same key. Objects are
    /// written with their members in sorted order. O(n log n · path length), no recursion.
    ///
    /// Errors: a path that is both a value and an object, a float that is NaN or infinite.
    ///
    /// ```
    /// # use dod::data::{DataComponent, KeyNames};
    /// let mut names = KeyNames::new();
    /// let c = DataComponent::from_json(r#"{"stats": {"hp": 10, "speed": 1.5}}"#, &mut names)
    ///     .unwrap();
    /// assert_eq!(c.view().to_json(&names).unwrap(), r#"{"stats":{"hp":10,"speed":1.5}}"#);
    /// // Without names, keys are written by hash, and read back as the same keys.
    /// let bare = c.view().to_json(&KeyNames::new()).unwrap();
    /// assert_eq!(bare, r##"{"#024c6821":10,"#06f9a4e9":1.5}"##);
    /// assert_eq!(DataComponent::from_json(&bare, &mut KeyNames::new()).unwrap(), c);
    /// ```
    pub fn to_json(&self, names: &KeyNames) -> Result<String, JsonError> {
        write_json(self, |k| names.path(k).flatten())
    }
}

impl DataComponent {
    /// Reads the restricted JSON (see [the rules](crate::data#json)): an object whose members
    /// are booleans, numbers (integers that fit an `i64`, or finite as `f32`), strings,
    /// arrays of numbers, or objects of the same, which become key paths. Every path is
    /// registered in `names`; on an error `names` is left as it was. Anything else (null, an
    /// array holding non-numbers, a number out of `f32` range, objects nested deeper than
    /// [`MAX_PATH_DEPTH`], a top level that is not an object) is an error naming the path.
    /// Empty objects leave no trace. A top-level member `"#"` + eight lowercase hex digits
    /// holding a value is the unnamed key of that hash. O(input).
    ///
    /// A member name is one path segment even if it holds a dot: `{"a.b": 1}` has the key
    /// `DataKey::ROOT.child("a.b")`, which the string path `"a.b"` (two segments) does not
    /// name; `to_json` writes it back as `"a.b"`.
    ///
    /// A member named twice in one object keeps its last value, as `serde_json` does
    /// (`{"a": 1, "a": 2}` reads as `a = 2`).
    ///
    /// ```
    /// use dod::data::{DataComponent, JsonError, KeyNames};
    ///
    /// let mut names = KeyNames::new();
    /// let sheet = DataComponent::from_json(
    ///     r#"{"name": "The One",
    ///         "stats": {"health": 100, "mana": 200.0},
    ///         "status_effects": {"drunk": true, "delirious": true},
    ///         "color": [0, 0.5, 0.5, 0.7]}"#,
    ///     &mut names,
    /// )
    /// .unwrap();
    /// assert_eq!(sheet.get_i64("stats.health"), Some(100)); // no fraction: an integer
    /// assert_eq!(sheet.get_f32("stats.mana"), Some(200.0));
    /// assert_eq!(names.len(), 6);
    ///
    /// let bad = DataComponent::from_json(r#"{"inv": ["sword"]}"#, &mut names);
    /// assert_eq!(bad.unwrap_err(), JsonError::NotNumbers { path: "inv".into() });
    /// assert_eq!(names.len(), 6); // nothing registered by a refused input
    /// let big = DataComponent::from_json(r#"{"x": 1e39}"#, &mut names);
    /// assert_eq!(big.unwrap_err(), JsonError::NotFiniteF32 { path: "x".into() });
    ///
    /// use dod::data::DataKey;
    /// let dotted = DataComponent::from_json(r#"{"a.b": 1.0}"#, &mut names).unwrap();
    /// assert_eq!(dotted.get_f32("a.b"), None);
    /// assert_eq!(dotted.get_f32(DataKey::ROOT.child("a.b")), Some(1.0));
    /// ```
    pub fn from_json(json: &str, names: &mut KeyNames) -> Result<DataComponent, JsonError> {
        let depth = object_depth(json);
        if depth > MAX_PATH_DEPTH {
            return Err(JsonError::TooDeep { depth });
        }
        let parsed: Json =
            serde_json::from_str(json).map_err(|e| JsonError::Syntax(e.to_string()))?;
        let Json::Object(obj) = parsed else {
            return Err(JsonError::NotAnObject);
        };
        let mut out = Read {
            leaves: Vec::new(),
            seen: BTreeSet::new(),
        };
        let mut added = Vec::new();
        let built = read(
            &obj,
            DataKey::ROOT,
            None,
            &mut Vec::new(),
            names,
            &mut added,
            &mut out,
        )
        .and_then(|()| {
            if out.leaves.is_empty() {
                return Ok(DataComponent::new());
            }
            // Built in one pass from the sorted values: set one at a time, each new key
            // would move the header arrays, O(n²) in the number of members.
            out.leaves.sort_unstable_by_key(|(key, _)| key.to_raw());
            let values: Vec<(DataKey, Value<'_>)> =
                out.leaves.iter().map(|(k, l)| (*k, l.value())).collect();
            raw::build(&values)
                .map(DataComponent::from_built)
                .map_err(|bytes| JsonError::TooLarge { bytes })
        });
        if built.is_err() {
            for key in added {
                names.forget(key);
            }
        }
        built
    }

    /// The component as restricted JSON (see [`DataView::to_json`]), naming keys with the
    /// names the component keeps ([`names`](DataComponent::names)) and then with `names`.
    ///
    /// ```
    /// # use dod::data::{DataComponent, KeyNames};
    /// let mut names = KeyNames::new();
    /// let json = r#"{"a":{"b":true},"name":"x"}"#;
    /// let mut c = DataComponent::from_json(json, &mut names).unwrap();
    /// assert_eq!(c.to_json(&names).unwrap(), json);
    ///
    /// // A value set by a path string is written by name with no registry at all.
    /// c.set("status.poisoned", 3);
    /// let own = c.to_json(&KeyNames::new()).unwrap();
    /// assert!(own.contains(r#""status":{"poisoned":3}"#), "{own}");
    /// ```
    pub fn to_json(&self, names: &KeyNames) -> Result<String, JsonError> {
        let own = self.names();
        write_json(&self.view(), |k| {
            own.path(k).unwrap_or_else(|| names.path(k).flatten())
        })
    }
}

impl<K: Key> DataStore<K> {
    /// The component of `e` as restricted JSON (see [`DataView::to_json`]), naming keys
    /// with the names the store keeps ([`names`](DataStore::names)) and then with `names`;
    /// `None` if `e` has no component.
    ///
    /// ```
    /// # use dod::data::{DataStore, KeyNames};
    /// # use dod::Handle;
    /// let e = Handle::new(0, 1, 0).unwrap();
    /// let mut s: DataStore = DataStore::new();
    /// s.insert(e);
    /// assert!(s.set(e, "status.poisoned", true));
    /// let json = s.to_json(e, &KeyNames::new()).unwrap().unwrap();
    /// assert_eq!(json, r#"{"status":{"poisoned":true}}"#);
    /// ```
    pub fn to_json(&self, e: K, names: &KeyNames) -> Option<Result<String, JsonError>> {
        let view = self.get(e)?;
        let own = self.names();
        Some(write_json(&view, |k| {
            own.path(k).unwrap_or_else(|| names.path(k).flatten())
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A component read from JSON, built in one pass from its sorted values, holds what
    /// setting each member in turn gives, packed: many members of every type, in an order
    /// unrelated to their keys, with nested objects.
    #[test]
    fn a_read_component_equals_its_members_set_one_by_one() {
        let n = if cfg!(miri) { 40 } else { 3_000 };
        let mut json = String::from("{");
        let mut expected = DataComponent::new();
        for i in 0..n {
            if i > 0 {
                json.push(',');
            }
            let name = alloc::format!("m{}", (i * 7919) % n);
            match i % 5 {
                0 => {
                    json.push_str(&alloc::format!(r#""{name}":{i}"#));
                    expected.set(DataKey::from_path(&name), i as i64);
                }
                1 => {
                    json.push_str(&alloc::format!(r#""{name}":{i}.5"#));
                    expected.set(DataKey::from_path(&name), i as f32 + 0.5);
                }
                2 => {
                    json.push_str(&alloc::format!(r#""{name}":"s{i}""#));
                    expected.set(DataKey::from_path(&name), alloc::format!("s{i}").as_str());
                }
                3 => {
                    json.push_str(&alloc::format!(r#""{name}":[{i},0.25]"#));
                    expected.set(DataKey::from_path(&name), &[i as f32, 0.25]);
                }
                _ => {
                    json.push_str(&alloc::format!(r#""o{i}":{{"{name}":true}}"#));
                    expected.set(DataKey::from_path(&alloc::format!("o{i}.{name}")), true);
                }
            }
        }
        json.push('}');
        let mut names = KeyNames::new();
        let c = DataComponent::from_json(&json, &mut names).unwrap();
        assert_eq!(c, expected);
        assert_eq!(c.len(), n);
        assert_eq!(names.len(), n);
        assert_eq!(c.hole_bytes(), 0);
        assert_eq!(c.view().packed_size(), c.as_bytes().len());
        assert!(DataComponent::from_bytes(c.as_bytes()).is_ok());
    }

    /// The names `from_json` registers share their parents' segments: an object with a
    /// long name and many members costs its name once, not once per member.
    #[test]
    fn registered_names_follow_the_size_of_the_json() {
        let (long, members) = if cfg!(miri) {
            (200, 20)
        } else {
            (10_000, 2_000)
        };
        let parent = "p".repeat(long);
        let mut json = alloc::format!(r#"{{"{parent}":{{"#);
        for i in 0..members {
            if i > 0 {
                json.push(',');
            }
            json.push_str(&alloc::format!(r#""{i}":{i}"#));
        }
        json.push_str("}}");
        let mut names = KeyNames::new();
        let c = DataComponent::from_json(&json, &mut names).unwrap();
        assert_eq!((c.len(), names.len()), (members, members));
        let last = alloc::format!("{}", members - 1);
        let segments = names
            .segments(DataKey::from_segments([parent.as_str(), last.as_str()]))
            .unwrap();
        assert!(segments.eq([parent.as_str(), last.as_str()]));
        assert!(
            names.memory_usage() < 16 * json.len(),
            "{} bytes of names for {} bytes of JSON",
            names.memory_usage(),
            json.len()
        );
        // Written back by those names.
        assert_eq!(c.to_json(&names).unwrap().len(), json.len());
    }

    /// A key the component's own names list with no segment is written unnamed, whatever
    /// another registry calls it: the component's own entry comes first.
    #[test]
    fn an_own_name_of_no_segment_is_written_unnamed() {
        let mut c = DataComponent::new();
        c.set(DataKey::ROOT, 1i64);
        c.names_mut().register_segments::<&str>([]).unwrap();
        let mut names = KeyNames::new();
        // A one-segment name whose hash is the root's.
        names.register("2S5eaae6").unwrap();
        assert_eq!(DataKey::from_path("2S5eaae6"), DataKey::ROOT);
        assert_eq!(c.to_json(&names).unwrap(), r##"{"#811c9dc5":1}"##);
        c.names_mut().forget(DataKey::ROOT);
        assert_eq!(c.to_json(&names).unwrap(), r#"{"2S5eaae6":1}"#);
    }

    /// Deep paths share their parents too: many members at the deepest level cost a few
    /// dozen bytes of names each, not a copy of their path's segments.
    #[test]
    fn registered_names_follow_the_size_of_deep_json() {
        let members = if cfg!(miri) { 30 } else { 20_000 };
        let mut json = String::new();
        for _ in 1..MAX_PATH_DEPTH {
            json.push_str(r#"{"a":"#);
        }
        json.push('{');
        for i in 0..members {
            if i > 0 {
                json.push(',');
            }
            json.push_str(&alloc::format!(r#""{i}":1"#));
        }
        json.push_str(&"}".repeat(MAX_PATH_DEPTH));
        let mut names = KeyNames::new();
        let c = DataComponent::from_json(&json, &mut names).unwrap();
        assert_eq!((c.len(), names.len()), (members, members));
        // A node and a map entry per member, and the members' own names.
        assert!(
            names.memory_usage() < 12 * json.len(),
            "{} bytes of names for {} bytes of JSON",
            names.memory_usage(),
            json.len()
        );
        let deepest = alloc::format!("{}", members - 1);
        let path: Vec<&str> = core::iter::repeat_n("a", MAX_PATH_DEPTH - 1)
            .chain([deepest.as_str()])
            .collect();
        let segments = names.segments(DataKey::from_segments(&path)).unwrap();
        assert_eq!(segments.len(), MAX_PATH_DEPTH);
        assert!(segments.clone().eq(path.iter().copied()));
        assert!(segments.rev().eq(path.iter().rev().copied()));
        // Written back by those names (members sorted), and read back as the same values.
        let written = c.to_json(&names).unwrap();
        assert_eq!(written.len(), json.len());
        let mut again = names.clone();
        assert!(DataComponent::from_json(&written, &mut again).unwrap() == c);
        assert!(again == names);
    }

    #[test]
    fn errors_name_the_path() {
        let mut n = KeyNames::new();
        let e = |j: &str, n: &mut KeyNames| DataComponent::from_json(j, n).unwrap_err();
        assert!(matches!(e("nope", &mut n), JsonError::Syntax(_)));
        assert_eq!(e("[1]", &mut n), JsonError::NotAnObject);
        assert_eq!(
            e(r#"{"a":{"b":[1,"x"]}}"#, &mut n),
            JsonError::NotNumbers { path: "a.b".into() }
        );
        assert_eq!(
            e(r#"{"a":[1e300]}"#, &mut n),
            JsonError::NotFiniteF32 { path: "a".into() }
        );
    }

    #[test]
    fn unnamed_keys_are_written_by_hash_and_paths_need_a_tree() {
        let mut names = KeyNames::new();
        let mut c = DataComponent::new();
        c.set(DataKey::from_path("a"), 1.0);
        c.set(DataKey::from_raw(0xa1b2_c3d4), -7);
        let text = c.to_json(&names).unwrap();
        assert_eq!(text, r##"{"#2c6a20ff":1.0,"#a1b2c3d4":-7}"##);
        let back = DataComponent::from_json(&text, &mut names).unwrap();
        assert_eq!(back, c);
        assert!(names.is_empty(), "unnamed keys register nothing");
        // Upper-case hex, or the wrong length, is an ordinary name.
        let other =
            DataComponent::from_json(r##"{"#A1B2C3D4":1,"#a1b2c3d":2}"##, &mut names).unwrap();
        assert_eq!(other.get_i64(DataKey::ROOT.child("#A1B2C3D4")), Some(1));
        assert_eq!(names.len(), 2);

        names.register("a").unwrap();
        names.register("a.b").unwrap();
        c.set("a.b", 2.0);
        assert_eq!(
            c.to_json(&names),
            Err(JsonError::PathConflict { path: "a".into() })
        );
        let mut d = DataComponent::new();
        d.set("a", f32::NAN);
        assert!(matches!(
            d.to_json(&names),
            Err(JsonError::NotFiniteF32 { .. })
        ));
    }

    #[test]
    fn a_named_path_and_an_unnamed_key_of_the_same_hash_collide() {
        let hash = DataKey::from_path("name").to_raw();
        let json = alloc::format!(r##"{{"#{hash:08x}":1,"name":2}}"##);
        let err = DataComponent::from_json(&json, &mut KeyNames::new()).unwrap_err();
        assert!(matches!(err, JsonError::Collision(_)), "{err:?}");
    }

    #[test]
    fn integers_and_floats_stay_apart() {
        let mut names = KeyNames::new();
        let c = DataComponent::from_json(
            r#"{"i":3,"f":3.0,"e":3e0,"neg":-9223372036854775808,"big":9223372036854775808,"arr":[1,2.5]}"#,
            &mut names,
        )
        .unwrap();
        assert_eq!(c.get("i"), Some(Value::I64(3)));
        assert_eq!(c.get("f"), Some(Value::F32(3.0)));
        assert_eq!(c.get("e"), Some(Value::F32(3.0)));
        assert_eq!(c.get_i64("neg"), Some(i64::MIN));
        // Too large for an i64: read as the nearest f32.
        assert_eq!(c.get_f32("big"), Some(9.223_372e18));
        assert_eq!(c.get_f32s("arr").unwrap().to_vec(), [1.0, 2.5]);
        let text = c.to_json(&names).unwrap();
        assert_eq!(
            text,
            r#"{"arr":[1.0,2.5],"big":9.223372e+18,"e":3.0,"f":3.0,"i":3,"neg":-9223372036854775808}"#
        );
        assert_eq!(DataComponent::from_json(&text, &mut names).unwrap(), c);
    }

    #[test]
    fn depth_is_bounded_at_the_same_place_everywhere() {
        let nested = |depth: usize| {
            let mut s = String::new();
            for i in 0..depth {
                s.push_str(&alloc::format!("{{\"s{i}\":"));
            }
            s.push('1');
            s.push_str(&"}".repeat(depth));
            s
        };
        let mut names = KeyNames::new();
        let at = DataComponent::from_json(&nested(MAX_PATH_DEPTH), &mut names).unwrap();
        assert_eq!(at.len(), 1);
        let written = at.to_json(&names).unwrap();
        assert_eq!(written, nested(MAX_PATH_DEPTH));
        assert_eq!(
            DataComponent::from_json(&nested(MAX_PATH_DEPTH + 1), &mut names),
            Err(JsonError::TooDeep {
                depth: MAX_PATH_DEPTH + 1
            })
        );
        // Far past any parser's recursion limit: refused before parsing, no stack overflow.
        assert_eq!(
            DataComponent::from_json(&nested(20_000), &mut names),
            Err(JsonError::TooDeep { depth: 20_000 })
        );
        // Braces inside strings do not count.
        let braces = alloc::format!(r#"{{"s":"{}"}}"#, "{".repeat(1000));
        assert!(DataComponent::from_json(&braces, &mut names).is_ok());
    }

    #[test]
    fn round_trip_keeps_dots_inside_names() {
        let mut names = KeyNames::new();
        let json = r#"{"v1.2":{"x":[1.0,2.5]},"w":false}"#;
        let c = DataComponent::from_json(json, &mut names).unwrap();
        assert_eq!(
            c.get_f32s(DataKey::ROOT.child("v1.2").child("x"))
                .unwrap()
                .len(),
            2
        );
        assert_eq!(c.to_json(&names).unwrap(), json);
    }

    #[test]
    fn floats_are_written_in_their_shortest_form_and_read_back_exactly() {
        let mut names = KeyNames::new();
        names.register("v").unwrap();
        for f in [
            0.7f32,
            0.1,
            1.0 / 3.0,
            16_777_217.0,
            f32::MAX,
            f32::MIN_POSITIVE,
            -2.5e-38,
        ] {
            let mut c = DataComponent::new();
            c.set("v", f);
            let json = c.to_json(&names).unwrap();
            let back = DataComponent::from_json(&json, &mut names).unwrap();
            assert_eq!(
                back.get_f32("v").map(f32::to_bits),
                Some(f.to_bits()),
                "{json}"
            );
        }
        let mut c = DataComponent::new();
        c.set("v", 0.7f32);
        assert_eq!(c.to_json(&names).unwrap(), r#"{"v":0.7}"#);
    }

    #[test]
    fn a_refused_input_registers_no_name() {
        let mut names = KeyNames::new();
        names.register("kept").unwrap();
        for bad in [
            r#"{"a": 1, "b": {"c": null}}"#,
            r#"{"a": true, "bag": [["sword"]]}"#,
            r#"{"kept": 1, "z": 1e39}"#,
        ] {
            assert!(DataComponent::from_json(bad, &mut names).is_err());
            assert_eq!(names.len(), 1, "{bad}");
            assert!(names.name(DataKey::from_path("kept")).is_some());
        }
    }
}
