//! [`DebugList`]: how the iterators' `Debug` prints the items still to come.

use core::fmt;

/// Formats the items of a clone of an iterator as a list, leaving the iterator as it is: what
/// an iterator's `Debug` prints, as `std`'s iterators print their remaining items.
pub(crate) struct DebugList<I>(pub(crate) I);

impl<I: Iterator + Clone> fmt::Debug for DebugList<I>
where
    I::Item: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.clone()).finish()
    }
}
