//! Diff and patch: the operations the restricted JSON keeps simple, since every change is
//! "set this key" or "remove this key".

use alloc::vec::Vec;

use super::value::{OwnedValue, Value};
use super::{DataComponent, DataKey, DataView};

/// A set of changes to a component: for each key, a new value or a *tombstone* (the key is
/// removed). Made by [`DataComponent::diff`], applied by [`DataComponent::apply`].
///
/// Entries are kept sorted by key hash, one per key.
///
/// ```
/// use dod::data::{DataComponent, Patch};
///
/// let mut base = DataComponent::new();
/// base.set("hp", 100.0);
/// base.set("drunk", true);
/// let mut now = base.clone();
/// now.set("hp", 80.0);
/// now.remove("drunk");
///
/// let patch = now.diff(&base);
/// assert_eq!(patch.len(), 2); // hp = 80, drunk removed
/// base.apply(&patch);
/// assert_eq!(base, now);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Patch {
    ops: Vec<(DataKey, Option<OwnedValue>)>,
}

impl Patch {
    /// An empty patch. O(1).
    ///
    /// ```
    /// # use dod::data::Patch;
    /// assert!(Patch::new().is_empty());
    /// ```
    pub const fn new() -> Self {
        Patch { ops: Vec::new() }
    }

    fn put(&mut self, key: DataKey, op: Option<OwnedValue>) {
        match self.ops.binary_search_by_key(&key, |e| e.0) {
            Ok(i) => self.ops[i].1 = op,
            Err(i) => self.ops.insert(i, (key, op)),
        }
    }

    /// Records "set `key` to `value`", replacing any earlier change of `key`. O(n).
    ///
    /// ```
    /// # use dod::data::{DataComponent, Patch};
    /// let mut p = Patch::new();
    /// p.set("a", 1.0);
    /// let mut c = DataComponent::new();
    /// c.apply(&p);
    /// assert_eq!(c.get_f32("a"), Some(1.0));
    /// ```
    pub fn set<'v>(&mut self, key: impl Into<DataKey>, value: impl Into<Value<'v>>) {
        self.put(key.into(), Some(value.into().to_owned()));
    }

    /// Records a tombstone: "remove `key`". O(n).
    ///
    /// ```
    /// # use dod::data::{DataComponent, Patch};
    /// let mut c = DataComponent::new();
    /// c.set("a", 1.0);
    /// let mut p = Patch::new();
    /// p.remove("a");
    /// c.apply(&p);
    /// assert!(c.is_empty());
    /// ```
    pub fn remove(&mut self, key: impl Into<DataKey>) {
        self.put(key.into(), None);
    }

    /// The change of `key`: `Some(Some(v))` sets it, `Some(None)` removes it, `None` leaves it.
    /// O(log n).
    ///
    /// ```
    /// # use dod::data::Patch;
    /// let mut p = Patch::new();
    /// p.remove("a");
    /// assert_eq!(p.get("a"), Some(None));
    /// assert_eq!(p.get("b"), None);
    /// ```
    pub fn get(&self, key: impl Into<DataKey>) -> Option<Option<Value<'_>>> {
        let i = self.ops.binary_search_by_key(&key.into(), |e| e.0).ok()?;
        Some(self.ops[i].1.as_ref().map(OwnedValue::as_value))
    }

    /// The number of changed keys. O(1).
    ///
    /// ```
    /// # use dod::data::Patch;
    /// assert_eq!(Patch::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the patch changes nothing. O(1).
    ///
    /// ```
    /// # use dod::data::Patch;
    /// assert!(Patch::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The changes in increasing order of key hash; `None` is a tombstone. O(1) to create.
    ///
    /// ```
    /// # use dod::data::Patch;
    /// let mut p = Patch::new();
    /// p.set("a", true);
    /// assert_eq!(p.iter().count(), 1);
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (DataKey, Option<Value<'_>>)> + '_ {
        self.ops
            .iter()
            .map(|(k, v)| (*k, v.as_ref().map(OwnedValue::as_value)))
    }
}

impl<'a> DataView<'a> {
    /// The patch that turns `base` into `self`: every key of `self` that `base` lacks or holds
    /// a different value for, and a tombstone for every key of `base` that `self` lacks.
    /// O(n + m): both key arrays are sorted.
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let mut a = DataComponent::new();
    /// a.set("x", 1.0);
    /// assert_eq!(a.view().diff(a.view()).len(), 0);
    /// ```
    pub fn diff<'b>(&self, base: impl Into<DataView<'b>>) -> Patch {
        let base = base.into();
        let mut ops = Vec::new();
        let (mut a, mut b) = (self.iter().peekable(), base.iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (None, None) => break,
                (Some(&(ka, va)), Some(&(kb, vb))) if ka == kb => {
                    if va != vb {
                        ops.push((ka, Some(va.to_owned())));
                    }
                    a.next();
                    b.next();
                }
                (Some(&(ka, va)), Some(&(kb, _))) if ka < kb => {
                    ops.push((ka, Some(va.to_owned())));
                    a.next();
                }
                (Some(&(ka, va)), None) => {
                    ops.push((ka, Some(va.to_owned())));
                    a.next();
                }
                (_, Some(&(kb, _))) => {
                    ops.push((kb, None));
                    b.next();
                }
            }
        }
        Patch { ops }
    }
}

impl DataComponent {
    /// The patch that turns `base` into `self` (see [`DataView::diff`]); deleted keys are
    /// tombstones. O(n + m) plus copying the changed values.
    ///
    /// ```
    /// # use dod::data::DataComponent;
    /// let base = DataComponent::new();
    /// let mut now = DataComponent::new();
    /// now.set("a", "x");
    /// let p = now.diff(&base);
    /// assert_eq!(p.get("a").unwrap().unwrap().as_str(), Some("x"));
    /// ```
    pub fn diff<'b>(&self, base: impl Into<DataView<'b>>) -> Patch {
        self.view().diff(base)
    }

    /// Applies a patch: sets its values and removes its tombstoned keys. Applying
    /// `now.diff(&base)` to `base` makes it equal to `now`. O(m log n) plus moves.
    ///
    /// ```
    /// # use dod::data::{DataComponent, Patch};
    /// let mut p = Patch::new();
    /// p.set("a", 2.0);
    /// p.remove("b");
    /// let mut c = DataComponent::new();
    /// c.set("b", true);
    /// c.apply(&p);
    /// assert_eq!(c.get_f32("a"), Some(2.0));
    /// assert!(!c.contains("b"));
    /// ```
    pub fn apply(&mut self, patch: &Patch) {
        for (k, v) in patch.iter() {
            match v {
                Some(v) => self.set(k, v),
                None => {
                    self.remove(k);
                }
            }
        }
    }
}
