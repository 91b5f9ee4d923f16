//! One slot of a [`Pool`](super::Pool): its [`Tag`] and the room that holds either the item
//! (occupied) or the FIFO freelist's link (vacant). This is the pool's unsafe core: every read
//! of the union happens here.
//!
//! # Invariant
//!
//! While `tag` is vacant, `room.next` is initialised; while it is occupied, `room.item` holds a
//! valid `T` that the entry owns. The fields are private to this module and every function
//! here keeps the invariant, so the safe functions are sound whatever the rest of the pool
//! does; the two `unsafe` ones only add "the entry is occupied" as a precondition.
//!
//! # Why a union
//!
//! Bitsquid's freelist stores its links in the dead objects' own memory. A vacant slot's item
//! bytes are unused, so the link lives there: for every `T` of at least one byte an entry is
//! exactly as large as a tag plus a `MaybeUninit<T>` (the tag already rounds the item up to 4
//! bytes), and only zero-sized items pay 4 bytes more. A separate link array would cost 4
//! bytes per slot for every `T`.

use core::mem::ManuallyDrop;

use crate::key::Key;
use crate::slot::{Tag, NO_SLOT};

/// A slot: tag and room (see the module invariant).
pub(super) struct Entry<T> {
    tag: Tag,
    room: Room<T>,
}

/// The item of an occupied slot or the link of a vacant one.
union Room<T> {
    item: ManuallyDrop<T>,
    next: u32,
}

impl<T> Entry<T> {
    /// A vacant entry at `tag` (its vacancy bit is set if it was not), linked to nothing.
    #[inline]
    pub(super) const fn vacant(tag: Tag) -> Self {
        Entry {
            tag: tag.vacate(),
            room: Room { next: NO_SLOT },
        }
    }

    /// An occupied entry holding `item` at `tag`.
    ///
    /// # Panics
    ///
    /// If `tag` is vacant.
    #[inline]
    #[track_caller]
    pub(super) fn occupied(tag: Tag, item: T) -> Self {
        assert!(!tag.is_vacant(), "an occupied entry needs an occupied tag");
        Entry {
            tag,
            room: Room {
                item: ManuallyDrop::new(item),
            },
        }
    }

    /// The slot's tag.
    #[inline]
    pub(super) fn tag(&self) -> Tag {
        self.tag
    }

    /// Whether the entry holds an item.
    #[inline]
    pub(super) fn is_occupied(&self) -> bool {
        !self.tag.is_vacant()
    }

    /// The item, if the entry is occupied.
    #[inline]
    #[allow(unsafe_code)]
    pub(super) fn get(&self) -> Option<&T> {
        if self.tag.is_vacant() {
            None
        } else {
            // SAFETY: the entry is occupied, so `item` is the initialised field (module
            // invariant).
            Some(unsafe { &self.room.item })
        }
    }

    /// Whether `key` names this entry's item ([`Tag::matches`]: one comparison, which also
    /// says the entry is occupied).
    #[inline(always)]
    pub(super) fn is_named_by<K: Key>(&self, key: K) -> bool {
        self.tag.matches(key)
    }

    /// The item, if `key` names it ([`is_named_by`](Entry::is_named_by)).
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) fn get_by<K: Key>(&self, key: K) -> Option<&T> {
        if self.is_named_by(key) {
            // SAFETY: `key` names the item, so the entry's tag equals a well-formed key's tag
            // and has bit 31 clear: the entry is occupied and `item` is initialised (module
            // invariant).
            Some(unsafe { &self.room.item })
        } else {
            None
        }
    }

    /// The item, mutably, if `key` names it ([`is_named_by`](Entry::is_named_by)).
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) fn get_mut_by<K: Key>(&mut self, key: K) -> Option<&mut T> {
        if self.is_named_by(key) {
            // SAFETY: as in `get_by`, the entry is occupied, so `item` is initialised; the
            // `&mut self` borrow makes the reference unique.
            Some(unsafe { &mut self.room.item })
        } else {
            None
        }
    }

    /// The item, mutably, if the entry is occupied.
    #[inline]
    #[allow(unsafe_code)]
    pub(super) fn get_mut(&mut self) -> Option<&mut T> {
        if self.tag.is_vacant() {
            None
        } else {
            // SAFETY: the entry is occupied, so `item` is the initialised field (module
            // invariant); the `&mut self` borrow makes the reference unique.
            Some(unsafe { &mut self.room.item })
        }
    }

    /// The item, without checking the tag: for iterators that know the slot is alive from the
    /// alive flags and do not read the tag.
    ///
    /// # Safety
    ///
    /// The entry must be occupied.
    #[inline]
    #[allow(unsafe_code)]
    pub(super) unsafe fn get_unchecked(&self) -> &T {
        debug_assert!(self.is_occupied());
        // SAFETY: the caller guarantees the entry is occupied, so `item` is initialised.
        unsafe { &self.room.item }
    }

    /// The item, mutably, without checking the tag.
    ///
    /// # Safety
    ///
    /// The entry must be occupied.
    #[inline]
    #[allow(unsafe_code)]
    pub(super) unsafe fn get_unchecked_mut(&mut self) -> &mut T {
        debug_assert!(self.is_occupied());
        // SAFETY: the caller guarantees the entry is occupied, so `item` is initialised; the
        // `&mut self` borrow makes the reference unique.
        unsafe { &mut self.room.item }
    }

    /// Puts `item` into this vacant entry under the next generation and returns the new tag.
    ///
    /// # Panics
    ///
    /// If the entry is occupied or retired; the pool only fills slots that its freelist or its
    /// search found vacant and not retired.
    #[inline]
    #[track_caller]
    pub(super) fn fill(&mut self, item: T) -> Tag {
        let tag = self.next_tag();
        // The old room is a link (a `u32`): nothing to drop.
        self.room = Room {
            item: ManuallyDrop::new(item),
        };
        self.tag = tag;
        tag
    }

    /// The tag the entry's next item gets: [`Tag::occupy`] of a vacant, non-retired tag, with
    /// both conditions in one comparison. Panics if the entry is occupied or retired.
    #[inline(always)]
    #[track_caller]
    fn next_tag(&self) -> Tag {
        const VACANT_GEN: u32 = Tag::VACANT | 0xFFFF;
        let bits = self.tag.to_bits();
        // Vacant: `bits & VACANT_GEN` is VACANT plus the generation, so the difference is the
        // generation, below 65 535 unless retired. Occupied: the masked bits are below
        // VACANT, so the difference wraps to at least 2^31.
        if (bits & VACANT_GEN).wrapping_sub(Tag::VACANT) >= 0xFFFF {
            fill_failed();
        }
        // Vacant and not retired: clearing the vacancy bit and adding one to the generation
        // does not carry into the type id.
        let tag = Tag::from_bits((bits & !Tag::VACANT) + 1);
        debug_assert_eq!(Some(tag), self.tag.occupy());
        tag
    }

    /// Moves the item out, leaving the entry vacant at the same generation and linked to
    /// nothing; `None` if it is vacant already.
    #[inline]
    #[allow(unsafe_code)]
    pub(super) fn take(&mut self) -> Option<T> {
        if self.tag.is_vacant() {
            return None;
        }
        // SAFETY: the entry is occupied, so `item` is initialised and owned by it. It is read
        // once: the next two lines make the entry vacant with an initialised link, so the
        // moved-out item is never read or dropped through the entry again.
        let item = unsafe { ManuallyDrop::take(&mut self.room.item) };
        self.room = Room { next: NO_SLOT };
        self.tag = self.tag.vacate();
        Some(item)
    }

    /// Moves the item out, leaving the entry vacant at the same generation and linked to
    /// nothing: [`take`](Entry::take) for callers that know the entry is occupied from the
    /// alive flags and do not test the vacancy bit again.
    ///
    /// # Safety
    ///
    /// The entry must be occupied.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) unsafe fn take_unchecked(&mut self) -> T {
        debug_assert!(self.is_occupied());
        // SAFETY: the caller guarantees the entry is occupied, so `item` is initialised and
        // owned by it. It is read once: the next two lines make the entry vacant with an
        // initialised link, so the moved-out item is never read or dropped through the entry
        // again.
        let item = unsafe { ManuallyDrop::take(&mut self.room.item) };
        self.room = Room { next: NO_SLOT };
        self.tag = self.tag.vacate();
        item
    }

    /// Moves the item out if `key` names it ([`is_named_by`](Entry::is_named_by)), leaving the
    /// entry vacant at the same generation and linked to nothing: [`take`](Entry::take)
    /// without testing the vacancy bit again.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) fn take_named<K: Key>(&mut self, key: K) -> Option<T> {
        if !self.is_named_by(key) {
            return None;
        }
        // SAFETY: `key` names the item, so the entry is occupied (see `get_by`) and `item` is
        // initialised and owned by it. It is read once: the next two lines make the entry
        // vacant with an initialised link, so the moved-out item is never read or dropped
        // through the entry again.
        let item = unsafe { ManuallyDrop::take(&mut self.room.item) };
        self.room = Room { next: NO_SLOT };
        self.tag = self.tag.vacate();
        Some(item)
    }

    /// The freelist link of a vacant entry ([`NO_SLOT`] for an occupied one).
    #[inline]
    #[allow(unsafe_code)]
    pub(super) fn next(&self) -> u32 {
        if self.tag.is_vacant() {
            // SAFETY: the entry is vacant, so `next` is the initialised field (module
            // invariant).
            unsafe { self.room.next }
        } else {
            NO_SLOT
        }
    }

    /// The freelist link, without checking the tag: for the freelist, which only reads the
    /// links of slots it knows vacant.
    ///
    /// # Safety
    ///
    /// The entry must be vacant.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) unsafe fn next_unchecked(&self) -> u32 {
        debug_assert!(self.tag.is_vacant());
        // SAFETY: the caller guarantees the entry is vacant, so `next` is the initialised
        // field (module invariant).
        unsafe { self.room.next }
    }

    /// Sets the freelist link without checking the tag.
    ///
    /// # Safety
    ///
    /// The entry must be vacant: in an occupied one the link would overwrite the item, which
    /// the tag still says is there.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) unsafe fn set_next_unchecked(&mut self, next: u32) {
        debug_assert!(self.tag.is_vacant());
        self.room = Room { next };
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn fill_failed() -> ! {
    panic!("Pool: an item was put into a slot that is occupied or retired (a Pool bug)")
}

impl<T> Drop for Entry<T> {
    #[inline]
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        if core::mem::needs_drop::<T>() && self.is_occupied() {
            // SAFETY: the entry is occupied, so `item` is initialised and owned by it; the
            // entry is being dropped, so the item is dropped exactly once.
            unsafe { ManuallyDrop::drop(&mut self.room.item) }
        }
    }
}

impl<T: Clone> Clone for Entry<T> {
    fn clone(&self) -> Self {
        let room = match self.get() {
            Some(item) => Room {
                item: ManuallyDrop::new(item.clone()),
            },
            None => Room { next: self.next() },
        };
        Entry {
            tag: self.tag,
            room,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::size_of;

    #[test]
    fn the_link_costs_nothing_beside_a_sized_item() {
        // The size an entry would have without the link: a tag beside `MaybeUninit<T>`.
        fn plain<T>() -> usize {
            size_of::<(Tag, core::mem::MaybeUninit<T>)>()
        }
        assert_eq!((size_of::<Entry<u8>>(), plain::<u8>()), (8, 8));
        assert_eq!((size_of::<Entry<u16>>(), plain::<u16>()), (8, 8));
        assert_eq!((size_of::<Entry<u32>>(), plain::<u32>()), (8, 8));
        assert_eq!((size_of::<Entry<[u8; 5]>>(), plain::<[u8; 5]>()), (12, 12));
        assert_eq!((size_of::<Entry<u64>>(), plain::<u64>()), (16, 16));
        assert_eq!(
            (size_of::<Entry<[u64; 2]>>(), plain::<[u64; 2]>()),
            (24, 24)
        );
        // Only a zero-sized item pays for the link.
        assert_eq!((size_of::<Entry<()>>(), plain::<()>()), (8, 4));
    }

    #[test]
    #[allow(unsafe_code)]
    fn an_entry_holds_an_item_or_a_link() {
        let mut e = Entry::vacant(Tag::vacant(0, 3));
        assert_eq!((e.get(), e.next()), (None, NO_SLOT));
        // SAFETY: the entry is vacant.
        unsafe { e.set_next_unchecked(7) };
        assert_eq!(e.next(), 7);
        let tag = e.fill(alloc::string::String::from("x"));
        assert_eq!((tag.generation(), tag.type_id()), (1, 3));
        assert_eq!(e.get().map(|s| s.as_str()), Some("x"));
        assert_eq!(e.next(), NO_SLOT, "an occupied entry has no link");
        assert_eq!(e.clone().get().map(|s| s.as_str()), Some("x"));
        assert_eq!(e.take().as_deref(), Some("x"));
        assert_eq!(e.take(), None);
        assert!(e.tag().is_vacant() && e.tag().generation() == 1);
    }

    #[test]
    #[should_panic(expected = "occupied or retired")]
    fn a_retired_entry_takes_no_item() {
        Entry::vacant(Tag::vacant(u16::MAX, 0)).fill(1u8);
    }
}
