//! The restricted JSON, with `serde_json` as the parser (feature `json`).

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use serde_json::{Map, Number, Value as Json};

use super::names::{KeyNames, NameCollision};
use super::value::Value;
use super::{DataComponent, DataKey, DataView};

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
    /// Two paths of the JSON hash to the same key.
    Collision(NameCollision),
    /// A key of the component has no registered name, so it cannot be written.
    UnnamedKey(DataKey),
    /// A path is both a value and an object (`a` and `a.b` are both set).
    PathConflict {
        /// The path that is both.
        path: String,
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
            JsonError::UnnamedKey(k) => write!(f, "key {k} has no registered name"),
            JsonError::PathConflict { path } => {
                write!(f, "{path}: is both a value and an object")
            }
        }
    }
}

impl core::error::Error for JsonError {}

fn path_of(segments: &[String]) -> String {
    segments.join(".")
}

fn finite(x: f64, segments: &[String]) -> Result<f32, JsonError> {
    let f = x as f32;
    if f.is_finite() {
        Ok(f)
    } else {
        Err(JsonError::NotFiniteF32 {
            path: path_of(segments),
        })
    }
}

fn number(n: &Number, segments: &[String]) -> Result<f32, JsonError> {
    finite(n.as_f64().unwrap_or(f64::INFINITY), segments)
}

fn read(
    obj: &Map<String, Json>,
    segments: &mut Vec<String>,
    names: &mut KeyNames,
    added: &mut Vec<DataKey>,
    out: &mut DataComponent,
) -> Result<(), JsonError> {
    for (name, v) in obj {
        segments.push(name.clone());
        match v {
            Json::Object(inner) => read(inner, segments, names, added, out)?,
            leaf => {
                let before = names.len();
                let key = names
                    .register_segments(segments.iter())
                    .map_err(JsonError::Collision)?;
                if names.len() > before {
                    added.push(key);
                }
                match leaf {
                    Json::Null => {
                        return Err(JsonError::Null {
                            path: path_of(segments),
                        })
                    }
                    Json::Bool(b) => out.set(key, *b),
                    Json::Number(n) => out.set(key, number(n, segments)?),
                    Json::String(s) => out.set(key, s.as_str()),
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
                        out.set(key, &floats);
                    }
                    Json::Object(_) => unreachable!("objects are walked above"),
                }
            }
        }
        segments.pop();
    }
    Ok(())
}

fn to_json_value(v: Value<'_>, segments: &[String]) -> Result<Json, JsonError> {
    // The shortest decimal that reads back as the same `f32` (0.7, not 0.699999988079071):
    // `f32`'s `Display` gives it, and as an `f64` it prints the same digits.
    let num = |f: f32| {
        alloc::format!("{f}")
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .filter(|_| f.is_finite())
            .map(Json::Number)
            .ok_or_else(|| JsonError::NotFiniteF32 {
                path: path_of(segments),
            })
    };
    Ok(match v {
        Value::Bool(b) => Json::Bool(b),
        Value::F32(f) => num(f)?,
        Value::Str(s) => Json::String(s.to_string()),
        Value::F32s(a) => Json::Array(a.iter().map(num).collect::<Result<_, _>>()?),
    })
}

impl DataView<'_> {
    /// The component as restricted JSON: key paths become nested objects, using `names` for
    /// the paths. Objects are written with their members in sorted order. O(n · path length).
    ///
    /// Errors: a key without a registered name, a path that is both a value and an object,
    /// a float that is NaN or infinite.
    ///
    /// ```
    /// # use dod::data::{DataComponent, KeyNames};
    /// let mut names = KeyNames::new();
    /// let c = DataComponent::from_json(r#"{"stats": {"hp": 10}}"#, &mut names).unwrap();
    /// assert_eq!(c.view().to_json(&names).unwrap(), r#"{"stats":{"hp":10.0}}"#);
    /// ```
    pub fn to_json(&self, names: &KeyNames) -> Result<String, JsonError> {
        let mut root = Map::new();
        for (k, v) in self.iter() {
            let segments = names.segments(k).ok_or(JsonError::UnnamedKey(k))?;
            let (last, parents) = segments.split_last().ok_or(JsonError::UnnamedKey(k))?;
            let mut obj = &mut root;
            for (depth, seg) in parents.iter().enumerate() {
                let conflict = || JsonError::PathConflict {
                    path: path_of(&segments[..=depth]),
                };
                obj = match obj
                    .entry(seg.clone())
                    .or_insert_with(|| Json::Object(Map::new()))
                {
                    Json::Object(m) => m,
                    _ => return Err(conflict()),
                };
            }
            if obj.contains_key(last) {
                return Err(JsonError::PathConflict {
                    path: path_of(segments),
                });
            }
            obj.insert(last.clone(), to_json_value(v, segments)?);
        }
        serde_json::to_string(&Json::Object(root)).map_err(|e| JsonError::Syntax(e.to_string()))
    }
}

impl DataComponent {
    /// Reads the restricted JSON: an object whose members are booleans, numbers (finite as
    /// `f32`), strings, arrays of numbers, or objects of the same, which become key paths.
    /// Every path is registered in `names`; on an error `names` is left as it was. Anything
    /// else (null, an array holding non-numbers, a number out of `f32` range, a top level that
    /// is not an object) is an error naming the path. Empty objects leave no trace. O(input).
    ///
    /// A member name is one path segment even if it holds a dot: `{"a.b": 1}` has the key
    /// `DataKey::ROOT.child("a.b")`, which the string path `"a.b"` (two segments) does not
    /// name; `to_json` writes it back as `"a.b"`.
    ///
    /// ```
    /// use dod::data::{DataComponent, JsonError, KeyNames};
    ///
    /// let mut names = KeyNames::new();
    /// let sheet = DataComponent::from_json(
    ///     r#"{"name": "The One",
    ///         "stats": {"health": 100, "mana": 200},
    ///         "status_effects": {"drunk": true, "delirious": true},
    ///         "color": [0, 0.5, 0.5, 0.7]}"#,
    ///     &mut names,
    /// )
    /// .unwrap();
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
    /// let dotted = DataComponent::from_json(r#"{"a.b": 1}"#, &mut names).unwrap();
    /// assert_eq!(dotted.get_f32("a.b"), None);
    /// assert_eq!(dotted.get_f32(DataKey::ROOT.child("a.b")), Some(1.0));
    /// ```
    pub fn from_json(json: &str, names: &mut KeyNames) -> Result<DataComponent, JsonError> {
        let parsed: Json =
            serde_json::from_str(json).map_err(|e| JsonError::Syntax(e.to_string()))?;
        let Json::Object(obj) = parsed else {
            return Err(JsonError::NotAnObject);
        };
        let mut out = DataComponent::new();
        let mut added = Vec::new();
        match read(&obj, &mut Vec::new(), names, &mut added, &mut out) {
            Ok(()) => Ok(out),
            Err(e) => {
                for key in added {
                    names.forget(key);
                }
                Err(e)
            }
        }
    }

    /// The component as restricted JSON (see [`DataView::to_json`]).
    ///
    /// ```
    /// # use dod::data::{DataComponent, KeyNames};
    /// let mut names = KeyNames::new();
    /// let json = r#"{"a":{"b":true},"name":"x"}"#;
    /// let c = DataComponent::from_json(json, &mut names).unwrap();
    /// assert_eq!(c.to_json(&names).unwrap(), json);
    /// ```
    pub fn to_json(&self, names: &KeyNames) -> Result<String, JsonError> {
        self.view().to_json(names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn writing_needs_names_and_a_tree() {
        let mut names = KeyNames::new();
        let mut c = DataComponent::new();
        c.set("a", 1.0);
        assert_eq!(
            c.to_json(&names),
            Err(JsonError::UnnamedKey(DataKey::from_path("a")))
        );
        names.register("a").unwrap();
        names.register("a.b").unwrap();
        c.set("a.b", 2.0);
        assert!(matches!(
            c.to_json(&names),
            Err(JsonError::PathConflict { .. })
        ));
        let mut d = DataComponent::new();
        d.set("a", f32::NAN);
        assert!(matches!(
            d.to_json(&names),
            Err(JsonError::NotFiniteF32 { .. })
        ));
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
