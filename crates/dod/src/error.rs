//! Errors shared by the containers.

use core::fmt;

/// Why an insertion was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InsertErrorKind {
    /// The key type cannot address another slot: every index it can name is in use or
    /// retired (65 535 slots for [`Handle32`](crate::Handle32), 2³² − 1 for
    /// [`Handle`](crate::Handle)).
    Full,
    /// The key is older than the one whose entry the slot holds: its item (its entity) is
    /// gone, and the index now belongs to another.
    StaleKey,
    /// The key has the slot's generation but another type id: a key of another container.
    ForeignKey,
    /// The key is a bit pattern no container hands out (a forged one): bit 31 of its tag set,
    /// generation 0, or an index or type id past what its key type addresses. Checked before
    /// every other refusal.
    MalformedKey,
    /// The index is above the container's [`max_index`](crate::SparseSet::max_index).
    IndexAboveMax {
        /// The index that was asked for.
        index: u32,
        /// The largest index the container accepts.
        max: u32,
    },
    /// The memory the insertion needs could not be allocated.
    OutOfMemory,
}

impl fmt::Display for InsertErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InsertErrorKind::Full => f.write_str(
                "the key type cannot address another slot: every index is in use or retired",
            ),
            InsertErrorKind::StaleKey => f.write_str(
                "stale key: its slot holds the entry of a newer key (the key's item is gone)",
            ),
            InsertErrorKind::ForeignKey => {
                f.write_str("foreign key: its slot holds an entry of another type id")
            }
            InsertErrorKind::MalformedKey => {
                f.write_str("malformed key: a bit pattern no container hands out")
            }
            InsertErrorKind::IndexAboveMax { index, max } => {
                write!(f, "index {index} is above the container's max_index {max}")
            }
            InsertErrorKind::OutOfMemory => f.write_str("out of memory"),
        }
    }
}

/// An insertion that was refused, with the value it was given: every `try_insert` returns
/// one, so the value is never lost.
///
/// ```
/// use dod::{Handle32, HandleMap, InsertErrorKind};
/// let mut map = HandleMap::<&str, Handle32>::with_key();
/// for _ in 0..65_535 {
///     map.try_insert("x").unwrap();
/// }
/// let err = map.try_insert("y").unwrap_err();
/// assert_eq!(err.kind(), InsertErrorKind::Full);
/// assert_eq!(err.into_inner(), "y");
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct InsertError<T> {
    kind: InsertErrorKind,
    value: T,
}

impl<T> InsertError<T> {
    /// An error of `kind` holding the refused `value`.
    ///
    /// ```
    /// use dod::{InsertError, InsertErrorKind};
    /// let e = InsertError::new(InsertErrorKind::OutOfMemory, 3);
    /// assert_eq!(e.into_inner(), 3);
    /// ```
    pub const fn new(kind: InsertErrorKind, value: T) -> Self {
        InsertError { kind, value }
    }

    /// Why the insertion was refused.
    ///
    /// ```
    /// use dod::{InsertError, InsertErrorKind};
    /// assert_eq!(InsertError::new(InsertErrorKind::StaleKey, ()).kind(), InsertErrorKind::StaleKey);
    /// ```
    pub const fn kind(&self) -> InsertErrorKind {
        self.kind
    }

    /// The value that was not inserted.
    ///
    /// ```
    /// use dod::{InsertError, InsertErrorKind};
    /// let e = InsertError::new(InsertErrorKind::Full, String::from("x"));
    /// assert_eq!(e.into_inner(), "x");
    /// ```
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T> fmt::Debug for InsertError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InsertError")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Display for InsertError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.kind, f)
    }
}

impl<T> core::error::Error for InsertError<T> {}
