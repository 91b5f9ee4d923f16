//! A `SparseSet`'s slots in the shared paged array ([`crate::pages`]): a slot holds the
//! entity's dense position and the tag of the key it was inserted with.

/// A sparse slot: the dense position + 1 of its entity (0: vacant) and the tag of the key the
/// entry was inserted with (0: by a plain index; otherwise a key's `generation | type_id << 16`,
/// bit 31 clear). Two halves rather than one `u64`, so that moving an entry rewrites its
/// position alone, without reading the slot first (a removal's swap moves an entry whose slot
/// is rarely in the cache).
///
/// Aligned to 8 so that writing a whole slot is one store.
#[derive(Copy, Clone, Default, PartialEq, Eq, Debug)]
#[repr(C, align(8))]
pub(super) struct Slot {
    pos1: u32,
    tag: u32,
}

impl Slot {
    /// The slot of a vacant index.
    pub(super) const VACANT: Slot = Slot { pos1: 0, tag: 0 };

    /// Where a probe for this slot's entry looks: its position, or `u32::MAX` (past any dense
    /// position) when vacant.
    #[inline]
    pub(super) fn probe_position(self) -> usize {
        self.pos1.wrapping_sub(1) as usize
    }
}

/// Encodes a live slot: position `pos` with `tag`.
#[inline]
pub(super) fn encode(pos: usize, tag: u32) -> Slot {
    // The dense arrays hold at most `MAX_DENSE` (< u32::MAX) entries, so `pos + 1` fits.
    Slot {
        pos1: pos as u32 + 1,
        tag,
    }
}

/// The position a slot points at, if it is occupied.
#[inline]
pub(super) fn decode(slot: Slot) -> Option<usize> {
    match slot.pos1 {
        0 => None,
        p => Some(p as usize - 1),
    }
}

/// The tag a slot holds (0: inserted by a plain index).
#[inline]
pub(super) fn slot_tag(slot: Slot) -> u32 {
    slot.tag
}

/// The sparse array of a `SparseSet`: slots made by [`encode`], [`Slot::VACANT`] when vacant.
pub(super) type Pages<const PAGE: usize> = crate::pages::Pages<Slot, PAGE>;

impl<const PAGE: usize> Pages<PAGE> {
    /// Points the slot of live entity `e` at `pos`, keeping its tag: a store of the position
    /// half alone.
    #[inline]
    pub(super) fn relink(&mut self, e: u32, pos: usize) {
        if let Some(s) = self.slot_mut(e) {
            s.pos1 = pos as u32 + 1;
        }
    }

    /// Empties the slot of entity `e`.
    #[inline]
    pub(super) fn unlink(&mut self, e: u32) {
        if let Some(s) = self.slot_mut(e) {
            *s = Slot::VACANT;
        }
    }
}
