//! The generational slot: one set of rules for every container that hands out keys or checks
//! them.
//!
//! A container keyed by generational keys keeps, for each slot index, a [`Tag`]: the
//! generation of the slot's current (or last) item, the container's type id, and whether the
//! slot is vacant. [`HandleMap`](crate::HandleMap) and [`Pool`](crate::Pool) hand keys out
//! and follow these rules to do it; [`SparseSet`](crate::SparseSet) and
//! [`DataStore`](crate::DataStore) store values for keys handed out elsewhere and use the same
//! tags to tell a live key from a stale one. An entity allocator of your own (the one in
//! `dod-world` is one) can use them too.
//!
//! # The rules
//!
//! - A tag is `generation | type_id << 16`, with [`Tag::VACANT`] (bit 31) set while the slot
//!   holds no item. A key's [`Key::tag`] has the same layout and never has bit 31 set: a key
//!   that does is *malformed* (a forged bit pattern) and names nothing ([`Tag::of_key`]).
//! - An occupied slot's tag is the tag of the one key that names its item, so checking a key
//!   is one comparison ([`Tag::matches`]).
//! - A vacant slot keeps the generation of its last item (0 if it never held one); the next
//!   item gets the generation after it ([`Tag::occupy`]). Generations only grow.
//! - A slot whose last item had generation 65 535 is *retired* ([`Tag::is_retired`]): it is
//!   never used again, so no generation ever wraps and no stale key ever matches a later item.
//! - A container that follows keys handed out elsewhere compares their *age*
//!   ([`Tag::age_of`]): a key with a newer generation than the slot's replaces its entry (the
//!   entity allocator reused the index), an older one is stale and refused, and one of the
//!   same generation but another type id is foreign and refused.
//!
//! # Example
//!
//! ```
//! use dod::slot::{Age, Tag};
//! use dod::Handle;
//!
//! let fresh = Tag::vacant(0, 3); // a slot of a container with type id 3, never used
//! let first = fresh.occupy().unwrap();
//! assert_eq!((first.generation(), first.type_id()), (1, 3));
//! let key: Handle = first.to_key(7);
//! assert!(first.matches(key));
//!
//! let vacated = first.vacate();
//! assert!(!vacated.matches(key)); // stale
//! let second = vacated.occupy().unwrap();
//! assert_eq!(second.generation(), 2);
//! assert_eq!(second.age_of(key), Age::Older);
//!
//! let spent = Tag::vacant(u16::MAX, 3);
//! assert!(spent.is_retired() && spent.occupy().is_none());
//! ```

use core::fmt;
use core::num::NonZeroU16;

use crate::key::Key;

/// A slot's tag: `generation | type_id << 16`, plus [`Tag::VACANT`] while the slot is vacant.
///
/// See the [module documentation](self) for the rules.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Tag(u32);

/// How a key relates to the tag of the slot its index names; from [`Tag::age_of`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Age {
    /// The key names the slot's current item.
    Same,
    /// The key's generation is newer than the slot's: its index was reused by the allocator
    /// that handed the key out, and the slot's entry belongs to a dead item.
    Newer,
    /// The key's generation is older than the slot's: the key is stale.
    Older,
    /// Same generation, another type id: a key of another container.
    Foreign,
    /// The key can name no slot: it has bit 31 of its tag set (a forged bit pattern).
    Malformed,
}

impl Tag {
    /// Bit 31: set while the slot is vacant, never set in a well-formed key's tag.
    pub const VACANT: u32 = 1 << 31;
    /// The generation bits.
    const GENERATION: u32 = 0xFFFF;
    /// The type id bits, in place.
    const TYPE_ID: u32 = 0x7FFF << 16;

    /// A vacant slot whose last item had `generation` (0: it never held one), in a container
    /// with `type_id` (at most `0x7FFF`; higher bits are dropped).
    ///
    /// ```
    /// let t = dod::slot::Tag::vacant(4, 1);
    /// assert!(t.is_vacant());
    /// assert_eq!(t.occupy().unwrap().generation(), 5);
    /// ```
    #[inline]
    pub const fn vacant(generation: u16, type_id: u16) -> Tag {
        Tag(generation as u32 | ((type_id as u32) << 16) & Self::TYPE_ID | Self::VACANT)
    }

    /// The tag of a new slot's first item: generation 1, in a container with `type_id` (as in
    /// [`vacant`](Tag::vacant)); equal to `Tag::vacant(0, type_id).occupy()`, in a form where
    /// the compiler sees that it is occupied and its generation non-zero.
    #[inline(always)]
    pub(crate) const fn born(type_id: u16) -> Tag {
        Tag(((type_id as u32) << 16) & Self::TYPE_ID | 1)
    }

    /// The tag of a key, or `None` if the key is malformed (bit 31 of its tag set).
    ///
    /// ```
    /// use dod::slot::Tag;
    /// use dod::Handle;
    /// let h = Handle::new(3, 2, 1).unwrap();
    /// assert_eq!(Tag::of_key(h).map(|t| (t.generation(), t.type_id())), Some((2, 1)));
    /// ```
    #[inline]
    pub fn of_key<K: Key>(key: K) -> Option<Tag> {
        let t = key.tag();
        (t & Self::VACANT == 0).then_some(Tag(t))
    }

    /// The raw `u32`, for containers that pack tags with other fields.
    ///
    /// ```
    /// let t = dod::slot::Tag::vacant(1, 0);
    /// assert_eq!(dod::slot::Tag::from_bits(t.to_bits()), t);
    /// ```
    #[inline]
    pub const fn to_bits(self) -> u32 {
        self.0
    }

    /// A tag from [`to_bits`](Tag::to_bits). Every `u32` is a tag.
    ///
    /// ```
    /// assert!(dod::slot::Tag::from_bits(1 << 31).is_vacant());
    /// ```
    #[inline]
    pub const fn from_bits(bits: u32) -> Tag {
        Tag(bits)
    }

    /// The generation: of the current item when occupied, of the last item when vacant.
    ///
    /// ```
    /// assert_eq!(dod::slot::Tag::vacant(9, 0).generation(), 9);
    /// ```
    #[inline]
    pub const fn generation(self) -> u16 {
        (self.0 & Self::GENERATION) as u16
    }

    /// The type id of the container that owns the slot.
    ///
    /// ```
    /// assert_eq!(dod::slot::Tag::vacant(0, 12).type_id(), 12);
    /// ```
    #[inline]
    pub const fn type_id(self) -> u16 {
        ((self.0 & Self::TYPE_ID) >> 16) as u16
    }

    /// Whether the slot holds no item.
    ///
    /// ```
    /// use dod::slot::Tag;
    /// assert!(Tag::vacant(0, 0).is_vacant());
    /// assert!(!Tag::vacant(0, 0).occupy().unwrap().is_vacant());
    /// ```
    #[inline]
    pub const fn is_vacant(self) -> bool {
        self.0 & Self::VACANT != 0
    }

    /// Whether the slot is vacant for good: its last item had generation 65 535.
    ///
    /// ```
    /// use dod::slot::Tag;
    /// assert!(Tag::vacant(u16::MAX, 0).is_retired());
    /// assert!(!Tag::vacant(7, 0).is_retired());
    /// ```
    #[inline]
    pub const fn is_retired(self) -> bool {
        self.0 & (Self::VACANT | Self::GENERATION) == Self::VACANT | Self::GENERATION
    }

    /// The tag of the slot once it takes an item: the next generation, occupied. `None` if
    /// the slot is retired. A tag that is already occupied is returned unchanged.
    ///
    /// ```
    /// use dod::slot::Tag;
    /// let t = Tag::vacant(0, 2).occupy().unwrap();
    /// assert_eq!((t.generation(), t.type_id(), t.is_vacant()), (1, 2, false));
    /// ```
    #[inline]
    pub const fn occupy(self) -> Option<Tag> {
        if !self.is_vacant() {
            return Some(self);
        }
        if self.is_retired() {
            return None;
        }
        // The generation is below 65 535, so adding one does not carry into the type id.
        Some(Tag((self.0 & !Self::VACANT) + 1))
    }

    /// The tag of the slot once its item is removed: vacant, keeping the generation (so the
    /// next item gets a newer one).
    ///
    /// ```
    /// use dod::slot::Tag;
    /// let t = Tag::vacant(0, 0).occupy().unwrap().vacate();
    /// assert!(t.is_vacant() && t.generation() == 1);
    /// ```
    #[inline]
    pub const fn vacate(self) -> Tag {
        Tag(self.0 | Self::VACANT)
    }

    /// The key that names this slot's item (or, for a vacant slot, named its last item).
    ///
    /// # Panics
    ///
    /// If the generation is 0 (a slot that never held an item names no key).
    ///
    /// ```
    /// use dod::slot::Tag;
    /// use dod::{Handle, Key};
    /// let t = Tag::vacant(0, 5).occupy().unwrap();
    /// let k: Handle = t.to_key(10);
    /// assert_eq!((k.index(), k.generation(), k.type_id()), (10, 1, 5));
    /// ```
    #[inline]
    #[track_caller]
    pub fn to_key<K: Key>(self, index: u32) -> K {
        let generation = NonZeroU16::new(self.generation())
            .expect("a slot that never held an item names no key");
        K::from_parts(index, generation, self.type_id())
    }

    /// The key that names this slot's item at `index` (for a vacant slot, its last item):
    /// [`to_key`](Tag::to_key) without the check, for the containers' hot paths, which only
    /// call it on slots that have held an item (a generation of 0 would read as 1).
    #[inline]
    pub(crate) fn key<K: Key>(self, index: u32) -> K {
        K::from_index_tag(index, self.0 & !Self::VACANT)
    }

    /// Whether `key` names this slot's current item: the slot is occupied and the key's tag
    /// equals its tag. One comparison for occupancy, generation and type id.
    ///
    /// ```
    /// use dod::slot::Tag;
    /// use dod::Handle;
    /// let t = Tag::vacant(0, 0).occupy().unwrap();
    /// assert!(t.matches(Handle::new(0, 1, 0).unwrap()));
    /// assert!(!t.matches(Handle::new(0, 2, 0).unwrap()));
    /// assert!(!t.vacate().matches(Handle::new(0, 1, 0).unwrap()));
    /// ```
    #[inline(always)]
    pub fn matches<K: Key>(self, key: K) -> bool {
        // An occupied tag has bit 31 clear, so for a well-formed key (bit 31 clear) equality
        // alone rules out vacant slots. A malformed key (bit 31 set) could equal a vacant tag:
        // sign-extended it has all ones in the upper half, which no zero-extended slot tag
        // has, so the one 64-bit comparison never holds for it, without testing the slot's
        // vacancy bit apart.
        u64::from(self.0) == key.tag() as i32 as i64 as u64
    }

    /// How `key` relates to the item this slot holds or held: the rule of containers that
    /// store values for keys handed out elsewhere. The vacancy bit is not looked at: a
    /// container that keeps entries for several keys of one index compares with the entry's
    /// tag.
    ///
    /// ```
    /// use dod::slot::{Age, Tag};
    /// use dod::Handle;
    /// let slot = Tag::of_key(Handle::new(0, 5, 1).unwrap()).unwrap();
    /// assert_eq!(slot.age_of(Handle::new(0, 5, 1).unwrap()), Age::Same);
    /// assert_eq!(slot.age_of(Handle::new(0, 6, 2).unwrap()), Age::Newer);
    /// assert_eq!(slot.age_of(Handle::new(0, 4, 1).unwrap()), Age::Older);
    /// assert_eq!(slot.age_of(Handle::new(0, 5, 2).unwrap()), Age::Foreign);
    /// ```
    #[inline]
    pub fn age_of<K: Key>(self, key: K) -> Age {
        self.age_of_tag(key.tag())
    }

    /// [`age_of`](Tag::age_of) for a key's tag read already (a container reads a key's
    /// parts once per operation, so that a key whose answers change between calls cannot
    /// name two slots in one operation).
    #[inline]
    pub(crate) fn age_of_tag(self, t: u32) -> Age {
        if t & Self::VACANT != 0 {
            return Age::Malformed;
        }
        let (mine, theirs) = (self.generation(), (t & Self::GENERATION) as u16);
        if theirs > mine {
            Age::Newer
        } else if theirs < mine {
            Age::Older
        } else if t == self.0 & !Self::VACANT {
            Age::Same
        } else {
            Age::Foreign
        }
    }
}

impl fmt::Debug for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tag")
            .field("generation", &self.generation())
            .field("type_id", &self.type_id())
            .field("vacant", &self.is_vacant())
            .finish()
    }
}

/// The largest type id a container with keys of type `K` can stamp.
#[inline]
pub(crate) fn max_type_id<K: Key>() -> u16 {
    K::MAX_TYPE_ID.min(0x7FFF)
}

/// Whether a key of type `K` with slot `index` and tag `tag` is one that no container hands
/// out: bit 31 of its tag set, generation 0, a type id above what `K` carries, or an index at
/// or past `K::MAX_SLOTS`. Such a key (a bit pattern cast from bytes, say) names nothing, and
/// the containers that store values for keys handed out elsewhere refuse it.
#[inline(always)]
pub(crate) fn is_malformed_key<K: Key>(index: u32, tag: u32) -> bool {
    (tag & Tag::VACANT != 0)
        | (tag & Tag::GENERATION == 0)
        | (tag >> 16 > u32::from(max_type_id::<K>()))
        | (index >= K::MAX_SLOTS)
}

/// Checks that `type_id` fits keys of type `K`; the panic of every `with_type_id`.
#[track_caller]
pub(crate) fn check_type_id<K: Key>(container: &str, type_id: u16) {
    let largest = max_type_id::<K>();
    assert!(
        type_id <= largest,
        "{container}::with_type_id: type id {type_id} does not fit the key type (largest: \
         {largest})"
    );
}

/// The panic of an `insert` when the key type cannot address another slot.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn full_panic<K: Key>(container: &str) -> ! {
    panic!(
        "{container} is full: the key type addresses at most {} slots, all in use or retired",
        K::MAX_SLOTS
    )
}

/// What a container knows about a key that did not resolve, for its `Index` panic.
pub(crate) struct Unresolved {
    /// The container's name, as users write it ("HandleMap").
    pub(crate) container: &'static str,
    /// The container's type id.
    pub(crate) type_id: u16,
    /// How many slots it has.
    pub(crate) slot_count: usize,
    /// The tag of the key's slot, if the index is in range.
    pub(crate) slot: Option<Tag>,
    /// The first generation of slots made since the last `reset` (1 if never reset).
    pub(crate) first_generation: u16,
}

impl Unresolved {
    /// Panics with a message that says why `key` does not resolve.
    #[cold]
    #[inline(never)]
    #[track_caller]
    pub(crate) fn panic<K: Key>(&self, key: K) -> ! {
        let c = self.container;
        let t = key.tag();
        if t & Tag::VACANT != 0 {
            panic!("malformed key {key:?}: bit 31 of its tag is set, which no {c} hands out")
        }
        // The tag's bits, which are what the containers compare.
        let generation = (t & 0xFFFF) as u16;
        if generation == 0 {
            panic!("malformed key {key:?}: generation 0, which no {c} hands out")
        }
        if key.type_id() != self.type_id {
            panic!(
                "key {key:?} has type id {}, but this {c}'s is {} (a key of another {c})",
                key.type_id(),
                self.type_id
            )
        }
        if generation < self.first_generation {
            // Whatever its index: `reset` may also have shrunk the slots below it.
            panic!(
                "stale key {key:?}: it is from before the {c}'s last reset() (its keys start \
                 at generation {})",
                self.first_generation
            )
        }
        let i = key.index();
        let state = |s: Tag| if s.is_vacant() { "vacant" } else { "occupied" };
        match self.slot {
            None => panic!(
                "key {key:?} is out of range: this {c} has {} slots (a key of another {c}, or \
                 forged)",
                self.slot_count
            ),
            Some(s) if s.is_retired() => {
                panic!("stale key {key:?}: slot {i} is retired (its generations ran out)")
            }
            Some(s) if generation > s.generation() => panic!(
                "key {key:?} names generation {generation} of slot {i}, which this {c} has not \
                 handed out (the slot is {} at generation {}): a key of another {c}, or forged",
                state(s),
                s.generation()
            ),
            Some(s) => panic!(
                "stale key {key:?}: slot {i} is {} at generation {}",
                state(s),
                s.generation()
            ),
        }
    }
}

/// The FIFO freelist of vacant slots, linked through the slots themselves: each container
/// stores the link where a vacant slot has room for it, and lends it through [`Links`].
///
/// Slots are reused oldest first, and at least `min_free` stay vacant before one is reused
/// (Bitsquid's "keep N free"): a freed index is not handed out again until `min_free` other
/// slots have been freed after it, which spreads the generations over the slots and keeps a
/// freed index unused for longer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FreeList {
    head: u32,
    tail: u32,
    len: u32,
    min_free: u32,
}

/// End of the freelist.
pub(crate) const NO_SLOT: u32 = u32::MAX;

/// Where a container keeps the freelist's links.
pub(crate) trait Links {
    /// The slot after vacant slot `i`.
    fn next(&self, i: u32) -> u32;
    /// Sets the slot after vacant slot `i`.
    fn set_next(&mut self, i: u32, next: u32);
}

impl FreeList {
    pub(crate) const fn new() -> Self {
        FreeList {
            head: NO_SLOT,
            tail: NO_SLOT,
            len: 0,
            min_free: 0,
        }
    }

    /// How many slots are linked.
    #[inline]
    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    #[inline]
    pub(crate) fn min_free(&self) -> u32 {
        self.min_free
    }

    #[inline]
    pub(crate) fn set_min_free(&mut self, min_free: u32) {
        self.min_free = min_free;
    }

    /// The newest slot ([`NO_SLOT`] when empty); for the serde readers.
    #[inline]
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn tail(&self) -> u32 {
        self.tail
    }

    /// How many insertions in a row take a vacant slot before one needs a new slot: the
    /// linked slots beyond the `min_free` kept back (while new slots can be made).
    #[inline]
    pub(crate) fn reusable(&self) -> u32 {
        self.len.saturating_sub(self.min_free)
    }

    /// Whether an insertion should take the oldest vacant slot rather than a new one: there
    /// are more than `min_free`, or there is one and the key type cannot address a new slot.
    #[inline]
    pub(crate) fn should_reuse(&self, can_grow: bool) -> bool {
        self.len > self.min_free || (!can_grow && self.len > 0)
    }

    /// Links slot `i` at the back (it was just vacated, and is not retired).
    #[inline]
    pub(crate) fn push_back<L: Links + ?Sized>(&mut self, links: &mut L, i: u32) {
        links.set_next(i, NO_SLOT);
        if self.tail == NO_SLOT {
            self.head = i;
        } else {
            links.set_next(self.tail, i);
        }
        self.tail = i;
        self.len += 1;
    }

    /// Links slot `i` at the back, as [`push_back`](FreeList::push_back), when its own link
    /// already reads [`NO_SLOT`] (a slot just vacated by a container whose vacating writes
    /// it): one store fewer.
    #[inline]
    pub(crate) fn push_back_unlinked<L: Links + ?Sized>(&mut self, links: &mut L, i: u32) {
        debug_assert_eq!(links.next(i), NO_SLOT);
        if self.tail == NO_SLOT {
            self.head = i;
        } else {
            links.set_next(self.tail, i);
        }
        self.tail = i;
        self.len += 1;
    }

    /// Unlinks the oldest slot and returns it; the list must not be empty.
    #[inline]
    pub(crate) fn pop_front<L: Links + ?Sized>(&mut self, links: &L) -> u32 {
        debug_assert!(self.len > 0);
        let i = self.head;
        self.head = links.next(i);
        self.len -= 1;
        if self.len == 0 {
            self.tail = NO_SLOT;
        }
        i
    }

    /// Forgets every slot (the container is dropping or rebuilding them); keeps `min_free`.
    #[inline]
    pub(crate) fn clear(&mut self) {
        *self = FreeList {
            min_free: self.min_free,
            ..FreeList::new()
        };
    }

    /// The linked slots, oldest first (for serialisation and invariant checks).
    pub(crate) fn iter<'a, L: Links + ?Sized>(&self, links: &'a L) -> FreeIter<'a, L> {
        FreeIter {
            links,
            at: self.head,
            left: self.len,
        }
    }

    /// Checks the list against the slots it links: `len` entries from `head` ending at
    /// `tail`, each vacant according to `is_linkable`; for tests.
    #[doc(hidden)]
    pub(crate) fn assert_invariants<L: Links + ?Sized>(
        &self,
        links: &L,
        slot_count: usize,
        is_linkable: impl Fn(u32) -> bool,
    ) {
        let mut seen = alloc::vec![false; slot_count];
        let mut last = NO_SLOT;
        for i in self.iter(links) {
            assert!((i as usize) < slot_count, "freelist link {i} out of range");
            assert!(!seen[i as usize], "slot {i} linked twice");
            seen[i as usize] = true;
            assert!(
                is_linkable(i),
                "slot {i} is linked but not vacant and reusable"
            );
            last = i;
        }
        assert_eq!(last, self.tail, "freelist tail");
        if self.len == 0 {
            assert_eq!(self.head, NO_SLOT, "empty freelist head");
        }
    }
}

/// The vacant slots of a [`FreeList`], oldest first; its length is known, so that a format
/// that writes a sequence's length first (postcard, bincode) can save it.
pub(crate) struct FreeIter<'a, L: ?Sized> {
    links: &'a L,
    at: u32,
    left: u32,
}

impl<L: Links + ?Sized> Iterator for FreeIter<'_, L> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.left == 0 {
            return None;
        }
        let i = self.at;
        self.at = self.links.next(i);
        self.left -= 1;
        Some(i)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl<L: Links + ?Sized> ExactSizeIterator for FreeIter<'_, L> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Handle, Handle32};
    use alloc::vec::Vec;

    #[test]
    fn a_slot_lives_through_every_generation_then_retires() {
        let mut t = Tag::vacant(0, 7);
        for g in 1..=u16::MAX {
            let occupied = t.occupy().expect("not retired yet");
            assert_eq!((occupied.generation(), occupied.type_id()), (g, 7));
            let k: Handle = occupied.to_key(3);
            assert!(occupied.matches(k));
            t = occupied.vacate();
            assert!(!t.matches(k));
        }
        assert!(t.is_retired());
        assert_eq!(t.occupy(), None);
    }

    #[test]
    fn a_born_tag_is_a_new_slot_occupied() {
        for type_id in [0, 1, 2, 0x1234, 0x7FFE, 0x7FFF, 0x8000, 0xFFFF] {
            assert_eq!(
                Tag::born(type_id),
                Tag::vacant(0, type_id).occupy().unwrap()
            );
        }
    }

    /// A key type whose tag has bit 31 set: what a forged bit pattern looks like.
    #[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
    struct Forged(u32);
    impl Key for Forged {
        const MAX_SLOTS: u32 = u32::MAX;
        const MAX_TYPE_ID: u16 = 0x7FFF;
        fn from_parts(index: u32, _: NonZeroU16, _: u16) -> Self {
            Forged(index)
        }
        fn index(self) -> u32 {
            self.0
        }
        fn generation(self) -> u16 {
            1
        }
        fn type_id(self) -> u16 {
            0
        }
        fn tag(self) -> u32 {
            Tag::VACANT | 1
        }
    }

    #[test]
    fn malformed_keys_match_nothing() {
        let vacant = Tag::vacant(1, 0);
        assert_eq!(
            vacant.to_bits(),
            Forged(0).tag(),
            "the pattern a vacant slot has"
        );
        assert!(!vacant.matches(Forged(0)));
        assert!(!vacant.occupy().unwrap().matches(Forged(0)));
        assert_eq!(Tag::of_key(Forged(0)), None);
        assert_eq!(vacant.age_of(Forged(0)), Age::Malformed);
    }

    #[test]
    fn age_orders_generations_and_tells_foreign_keys() {
        let slot = Tag::of_key(Handle32::new(1, 10).unwrap()).unwrap();
        assert_eq!(slot.age_of(Handle32::new(1, 10).unwrap()), Age::Same);
        assert_eq!(
            slot.vacate().age_of(Handle32::new(1, 10).unwrap()),
            Age::Same
        );
        assert_eq!(slot.age_of(Handle32::new(1, 11).unwrap()), Age::Newer);
        assert_eq!(slot.age_of(Handle32::new(1, 9).unwrap()), Age::Older);
    }

    struct Vecs(Vec<u32>);
    impl Links for Vecs {
        fn next(&self, i: u32) -> u32 {
            self.0[i as usize]
        }
        fn set_next(&mut self, i: u32, next: u32) {
            self.0[i as usize] = next;
        }
    }

    #[test]
    fn freelist_is_fifo_and_keeps_min_free() {
        let mut links = Vecs(alloc::vec![NO_SLOT; 8]);
        let mut f = FreeList::new();
        f.set_min_free(2);
        for i in [5, 1, 7] {
            f.push_back(&mut links, i);
        }
        f.assert_invariants(&links, 8, |_| true);
        assert_eq!(f.iter(&links).collect::<Vec<_>>(), [5, 1, 7]);
        assert!(f.should_reuse(true));
        assert_eq!(f.pop_front(&links), 5);
        assert!(!f.should_reuse(true), "two left: kept back");
        assert!(
            f.should_reuse(false),
            "reused anyway when the key space is full"
        );
        assert_eq!(f.pop_front(&links), 1);
        assert_eq!(f.pop_front(&links), 7);
        assert_eq!(f.len(), 0);
        f.assert_invariants(&links, 8, |_| true);
        f.push_back(&mut links, 3);
        assert_eq!(f.iter(&links).collect::<Vec<_>>(), [3]);
    }
}
