//! Errors shared by the containers.

use core::fmt;

/// The container's key type cannot address another slot: the value is given back.
///
/// Returned by `try_insert` when every index a key type can name is in use (65 535 slots for
/// [`Handle32`](crate::Handle32), 2³² − 1 for [`Handle`](crate::Handle)), counting slots that
/// were retired because their generation ran out.
///
/// ```
/// use dod::CapacityError;
/// let e = CapacityError::new("payload");
/// assert_eq!(e.into_inner(), "payload");
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CapacityError<T> {
    value: T,
}

impl<T> CapacityError<T> {
    /// Wraps the value that could not be inserted.
    ///
    /// ```
    /// assert_eq!(dod::CapacityError::new(3).into_inner(), 3);
    /// ```
    pub const fn new(value: T) -> Self {
        CapacityError { value }
    }

    /// The value that could not be inserted.
    ///
    /// ```
    /// let e = dod::CapacityError::new(String::from("x"));
    /// assert_eq!(e.into_inner(), "x");
    /// ```
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T> fmt::Debug for CapacityError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CapacityError { .. }")
    }
}

impl<T> fmt::Display for CapacityError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the key type cannot address another slot: every index is in use or retired")
    }
}

impl<T> core::error::Error for CapacityError<T> {}
