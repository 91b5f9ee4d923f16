//! The values a component holds: the restricted JSON of booleans, floats, 64-bit integers,
//! strings and arrays of floats. Objects exist only as key paths.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// The type of a value, as stored in a component's type array.
///
/// ```
/// use dod::data::{Value, ValueType};
/// assert_eq!(Value::from(1.5).value_type(), ValueType::F32);
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// `true` or `false` (tag 0).
    Bool,
    /// A 32-bit float (tag 1).
    F32,
    /// A UTF-8 string (tag 2).
    Str,
    /// An array of 32-bit floats (tag 3).
    F32s,
    /// A 64-bit signed integer (tag 4): ids, counters, a [`Handle`](crate::Handle)'s bits.
    I64,
}

impl ValueType {
    pub(crate) const fn tag(self) -> u8 {
        match self {
            ValueType::Bool => 0,
            ValueType::F32 => 1,
            ValueType::Str => 2,
            ValueType::F32s => 3,
            ValueType::I64 => 4,
        }
    }

    pub(crate) const fn from_tag(tag: u8) -> Option<ValueType> {
        match tag {
            0 => Some(ValueType::Bool),
            1 => Some(ValueType::F32),
            2 => Some(ValueType::Str),
            3 => Some(ValueType::F32s),
            4 => Some(ValueType::I64),
            _ => None,
        }
    }
}

/// A borrowed value: what the getters return and what [`set`](super::DataComponent::set)
/// takes.
///
/// Floats compare by their bits (`-0.0 != 0.0`, a NaN equals the same NaN), so that
/// [`diff`](super::DataComponent::diff) and equality agree and `Value` can be `Eq`. An
/// integer and a float are different values even when they are equal numbers.
///
/// Integers convert from every integer type that fits an `i64` losslessly (`i8` to `i64`,
/// `u8` to `u32`); an unsuffixed integer literal is an `i32` and so an integer value. A
/// [`Handle`](crate::Handle) is stored as `to_bits() as i64` and read back with
/// `Handle::from_bits(v as u64)`: the cast is exact both ways.
///
/// ```
/// use dod::data::Value;
/// let v = Value::from("The One");
/// assert_eq!(v.as_str(), Some("The One"));
/// assert_eq!(Value::from(&[0.5f32, 1.0][..]).as_f32s().unwrap().to_vec(), [0.5, 1.0]);
/// assert_eq!(Value::from(7), Value::I64(7));
/// assert_ne!(Value::from(7), Value::from(7.0));
/// ```
#[derive(Copy, Clone)]
pub enum Value<'a> {
    /// A boolean.
    Bool(bool),
    /// A float.
    F32(f32),
    /// A string.
    Str(&'a str),
    /// An array of floats.
    F32s(Floats<'a>),
    /// A 64-bit signed integer.
    I64(i64),
}

impl<'a> Value<'a> {
    /// The type of the value. O(1).
    ///
    /// ```
    /// # use dod::data::{Value, ValueType};
    /// assert_eq!(Value::from(true).value_type(), ValueType::Bool);
    /// ```
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::Bool(_) => ValueType::Bool,
            Value::F32(_) => ValueType::F32,
            Value::Str(_) => ValueType::Str,
            Value::F32s(_) => ValueType::F32s,
            Value::I64(_) => ValueType::I64,
        }
    }

    /// The boolean, or `None` for another type. O(1).
    ///
    /// ```
    /// # use dod::data::Value;
    /// assert_eq!(Value::from(true).as_bool(), Some(true));
    /// assert_eq!(Value::from(1.0).as_bool(), None);
    /// ```
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The float, or `None` for another type. O(1).
    ///
    /// ```
    /// # use dod::data::Value;
    /// assert_eq!(Value::from(2.0).as_f32(), Some(2.0));
    /// ```
    pub fn as_f32(&self) -> Option<f32> {
        match *self {
            Value::F32(f) => Some(f),
            _ => None,
        }
    }

    /// The number, an integer or a float, as `f64` (an integer beyond 2^53 rounds to the
    /// nearest `f64`), or `None` for another type: what to read where JSON may give `100` or
    /// `100.0` alike. O(1).
    ///
    /// ```
    /// # use dod::data::Value;
    /// assert_eq!(Value::from(100i64).as_f64(), Some(100.0));
    /// assert_eq!(Value::from(2.5).as_f64(), Some(2.5));
    /// assert_eq!(Value::from(true).as_f64(), None);
    /// ```
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::F32(f) => Some(f64::from(f)),
            Value::I64(i) => Some(i as f64),
            _ => None,
        }
    }

    /// The integer, or `None` for another type (a float is not converted). O(1).
    ///
    /// ```
    /// # use dod::data::Value;
    /// assert_eq!(Value::from(i64::MIN).as_i64(), Some(i64::MIN));
    /// assert_eq!(Value::from(2.0).as_i64(), None);
    /// ```
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::I64(i) => Some(i),
            _ => None,
        }
    }

    /// The string, or `None` for another type. O(1).
    ///
    /// ```
    /// # use dod::data::Value;
    /// assert_eq!(Value::from("x").as_str(), Some("x"));
    /// ```
    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The float array, or `None` for another type. O(1).
    ///
    /// ```
    /// # use dod::data::Value;
    /// assert_eq!(Value::from(&[1.0f32][..]).as_f32s().map(|a| a.len()), Some(1));
    /// ```
    pub fn as_f32s(&self) -> Option<Floats<'a>> {
        match *self {
            Value::F32s(a) => Some(a),
            _ => None,
        }
    }

    /// An owned copy. O(size of the value).
    ///
    /// ```
    /// # use dod::data::{OwnedValue, Value};
    /// assert_eq!(Value::from("a").to_owned(), OwnedValue::String("a".into()));
    /// ```
    #[allow(clippy::wrong_self_convention, clippy::should_implement_trait)]
    pub fn to_owned(&self) -> OwnedValue {
        match *self {
            Value::Bool(b) => OwnedValue::Bool(b),
            Value::F32(f) => OwnedValue::F32(f),
            Value::Str(s) => OwnedValue::String(String::from(s)),
            Value::F32s(a) => OwnedValue::F32s(a.to_vec()),
            Value::I64(i) => OwnedValue::I64(i),
        }
    }

    /// Bytes this value takes in a component's value area (0 for booleans and floats, which
    /// live in the 32-bit value array; 8 for an integer).
    pub(crate) fn record_size(&self) -> usize {
        match self {
            Value::Bool(_) | Value::F32(_) => 0,
            Value::I64(_) => 8,
            Value::Str(s) => 4 + s.len(),
            Value::F32s(a) => 4 + 4 * a.len(),
        }
    }
}

impl PartialEq for Value<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::F32(a), Value::F32(b)) => a.to_bits() == b.to_bits(),
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::F32s(a), Value::F32s(b)) => a == b,
            (Value::I64(a), Value::I64(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Value<'_> {}

impl fmt::Debug for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => fmt::Debug::fmt(b, f),
            Value::F32(x) => fmt::Debug::fmt(x, f),
            Value::Str(s) => fmt::Debug::fmt(s, f),
            Value::F32s(a) => fmt::Debug::fmt(a, f),
            Value::I64(i) => fmt::Debug::fmt(i, f),
        }
    }
}

impl From<bool> for Value<'_> {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<f32> for Value<'_> {
    fn from(f: f32) -> Self {
        Value::F32(f)
    }
}

macro_rules! from_integer {
    ($($t:ty),*) => {$(
        impl From<$t> for Value<'_> {
            /// A [`Value::I64`]: the conversion is lossless.
            fn from(i: $t) -> Self {
                Value::I64(i64::from(i))
            }
        }
    )*};
}

from_integer!(i8, i16, i32, i64, u8, u16, u32);

impl<'a> From<&'a str> for Value<'a> {
    fn from(s: &'a str) -> Self {
        Value::Str(s)
    }
}

impl<'a> From<&'a String> for Value<'a> {
    fn from(s: &'a String) -> Self {
        Value::Str(s)
    }
}

impl<'a> From<&'a [f32]> for Value<'a> {
    fn from(a: &'a [f32]) -> Self {
        Value::F32s(Floats(Repr::Slice(a)))
    }
}

impl<'a, const N: usize> From<&'a [f32; N]> for Value<'a> {
    fn from(a: &'a [f32; N]) -> Self {
        Value::F32s(Floats(Repr::Slice(a)))
    }
}

impl<'a> From<&'a Vec<f32>> for Value<'a> {
    fn from(a: &'a Vec<f32>) -> Self {
        Value::F32s(Floats(Repr::Slice(a)))
    }
}

impl<'a> From<Floats<'a>> for Value<'a> {
    fn from(a: Floats<'a>) -> Self {
        Value::F32s(a)
    }
}

impl<'a> From<&'a OwnedValue> for Value<'a> {
    fn from(v: &'a OwnedValue) -> Self {
        v.as_value()
    }
}

/// A borrowed array of floats: either a `&[f32]` or little-endian bytes inside a component
/// (which need not be aligned, so they are read one float at a time).
///
/// ```
/// use dod::data::DataComponent;
/// let mut c = DataComponent::new();
/// c.set("color", &[0.0, 0.5, 0.5, 0.7]);
/// let a = c.get_f32s("color").unwrap();
/// assert_eq!((a.len(), a.get(1)), (4, Some(0.5)));
/// assert_eq!(a.iter().sum::<f32>(), 1.7);
/// ```
#[derive(Copy, Clone)]
pub struct Floats<'a>(Repr<'a>);

#[derive(Copy, Clone)]
enum Repr<'a> {
    Slice(&'a [f32]),
    /// Length is a multiple of 4.
    Bytes(&'a [u8]),
}

impl<'a> Floats<'a> {
    /// Floats stored as little-endian bytes; `bytes.len()` is a multiple of 4.
    pub(crate) fn from_le_bytes(bytes: &'a [u8]) -> Floats<'a> {
        debug_assert_eq!(bytes.len() % 4, 0);
        Floats(Repr::Bytes(bytes))
    }

    /// The number of floats. O(1).
    ///
    /// ```
    /// # use dod::data::Value;
    /// assert_eq!(Value::from(&[1.0f32, 2.0][..]).as_f32s().unwrap().len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        match self.0 {
            Repr::Slice(s) => s.len(),
            Repr::Bytes(b) => b.len() / 4,
        }
    }

    /// Whether there are no floats. O(1).
    ///
    /// ```
    /// # use dod::data::Value;
    /// assert!(Value::from(&[][..]).as_f32s().unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The float at `i`, or `None` past the end. O(1).
    ///
    /// ```
    /// # use dod::data::Value;
    /// let v = Value::from(&[1.0f32, 2.0][..]);
    /// assert_eq!(v.as_f32s().unwrap().get(1), Some(2.0));
    /// assert_eq!(v.as_f32s().unwrap().get(2), None);
    /// ```
    pub fn get(&self, i: usize) -> Option<f32> {
        match self.0 {
            Repr::Slice(s) => s.get(i).copied(),
            Repr::Bytes(b) => {
                let start = i.checked_mul(4)?;
                let c = b.get(start..start.checked_add(4)?)?;
                Some(f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            }
        }
    }

    /// The floats in order. O(1) to create, O(len) to walk.
    ///
    /// ```
    /// # use dod::data::Value;
    /// let v = Value::from(&[1.0f32, 2.0][..]);
    /// assert_eq!(v.as_f32s().unwrap().iter().collect::<Vec<_>>(), [1.0, 2.0]);
    /// ```
    pub fn iter(&self) -> FloatsIter<'a> {
        FloatsIter(*self, 0)
    }

    /// The floats copied into a `Vec`. O(len).
    ///
    /// ```
    /// # use dod::data::Value;
    /// assert_eq!(Value::from(&[3.0f32][..]).as_f32s().unwrap().to_vec(), [3.0]);
    /// ```
    pub fn to_vec(&self) -> Vec<f32> {
        match self.0 {
            Repr::Slice(s) => s.to_vec(),
            Repr::Bytes(_) => self.iter().collect(),
        }
    }

    /// Writes the floats as little-endian bytes into `out` (`out.len() == 4 * self.len()`).
    pub(crate) fn write_le(&self, out: &mut [u8]) {
        match self.0 {
            Repr::Bytes(b) => out.copy_from_slice(b),
            Repr::Slice(s) => {
                for (o, f) in out.chunks_exact_mut(4).zip(s) {
                    o.copy_from_slice(&f.to_le_bytes());
                }
            }
        }
    }
}

impl PartialEq for Floats<'_> {
    /// Bitwise, like [`Value`]'s equality.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }
}

impl Eq for Floats<'_> {}

impl fmt::Debug for Floats<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for Floats<'a> {
    type Item = f32;
    type IntoIter = FloatsIter<'a>;
    fn into_iter(self) -> FloatsIter<'a> {
        self.iter()
    }
}

/// Iterator over a [`Floats`], from [`Floats::iter`].
///
/// ```
/// # use dod::data::Value;
/// let v = Value::from(&[1.0f32, 2.0][..]);
/// assert_eq!(v.as_f32s().unwrap().iter().len(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct FloatsIter<'a>(Floats<'a>, usize);

impl Iterator for FloatsIter<'_> {
    type Item = f32;
    fn next(&mut self) -> Option<f32> {
        let f = self.0.get(self.1)?;
        self.1 += 1;
        Some(f)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.len().saturating_sub(self.1);
        (n, Some(n))
    }
}

impl ExactSizeIterator for FloatsIter<'_> {}

/// An owned value: the model of a component's entries in tests, the payload of a
/// [`Patch`](super::Patch).
///
/// Equality is bitwise for floats, like [`Value`].
///
/// ```
/// use dod::data::{DataComponent, OwnedValue};
/// let mut c = DataComponent::new();
/// let v = OwnedValue::F32s(vec![1.0, 2.0]);
/// c.set("a", &v);
/// assert_eq!(c.get("a").unwrap().to_owned(), v);
/// ```
#[derive(Clone, Debug)]
pub enum OwnedValue {
    /// A boolean.
    Bool(bool),
    /// A float.
    F32(f32),
    /// A string.
    String(String),
    /// An array of floats.
    F32s(Vec<f32>),
    /// A 64-bit signed integer.
    I64(i64),
}

impl OwnedValue {
    /// The borrowed form. O(1).
    ///
    /// ```
    /// # use dod::data::{OwnedValue, Value};
    /// assert_eq!(OwnedValue::Bool(true).as_value(), Value::Bool(true));
    /// ```
    pub fn as_value(&self) -> Value<'_> {
        match self {
            OwnedValue::Bool(b) => Value::Bool(*b),
            OwnedValue::F32(f) => Value::F32(*f),
            OwnedValue::String(s) => Value::Str(s),
            OwnedValue::F32s(a) => Value::from(a),
            OwnedValue::I64(i) => Value::I64(*i),
        }
    }
}

impl PartialEq for OwnedValue {
    fn eq(&self, other: &Self) -> bool {
        self.as_value() == other.as_value()
    }
}

impl Eq for OwnedValue {}

impl PartialEq<Value<'_>> for OwnedValue {
    fn eq(&self, other: &Value<'_>) -> bool {
        self.as_value() == *other
    }
}

impl PartialEq<OwnedValue> for Value<'_> {
    fn eq(&self, other: &OwnedValue) -> bool {
        *self == other.as_value()
    }
}

impl From<Value<'_>> for OwnedValue {
    fn from(v: Value<'_>) -> Self {
        v.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_get_never_overflows() {
        let bytes = [0u8; 8];
        let a = Floats::from_le_bytes(&bytes);
        assert_eq!(a.get(1), Some(0.0));
        for i in [2, usize::MAX / 4, usize::MAX / 4 + 1, usize::MAX] {
            assert_eq!(a.get(i), None, "{i}");
        }
    }
}
