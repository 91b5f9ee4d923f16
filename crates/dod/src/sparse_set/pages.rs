//! A `SparseSet`'s slots in the shared paged array ([`crate::pages`]): a slot holds the
//! entity's dense position and the tag of the key it was inserted with.

/// Encodes a live slot: position + 1 in the low half (0 means vacant), the tag above (0: the
/// entry was inserted by a plain index; otherwise a key's `generation | type_id << 16`, bit 31
/// clear).
#[inline]
pub(super) fn encode(pos: usize, tag: u32) -> u64 {
    (pos as u64 + 1) | (u64::from(tag) << 32)
}

/// The position a slot points at, if it is occupied.
#[inline]
pub(super) fn decode(slot: u64) -> Option<usize> {
    match slot as u32 {
        0 => None,
        p => Some(p as usize - 1),
    }
}

/// The tag a slot holds (0: inserted by a plain index).
#[inline]
pub(super) fn slot_tag(slot: u64) -> u32 {
    (slot >> 32) as u32
}

/// The sparse array of a `SparseSet`: slots encoded by [`encode`], 0 when vacant.
pub(super) type Pages<const PAGE: usize> = crate::pages::Pages<u64, PAGE>;

impl<const PAGE: usize> Pages<PAGE> {
    /// Points the slot of live entity `e` at `pos`, keeping its tag.
    #[inline]
    pub(super) fn relink(&mut self, e: u32, pos: usize) {
        if let Some(s) = self.slot_mut(e) {
            *s = encode(pos, slot_tag(*s));
        }
    }

    /// Empties the slot of entity `e`.
    #[inline]
    pub(super) fn unlink(&mut self, e: u32) {
        if let Some(s) = self.slot_mut(e) {
            *s = 0;
        }
    }
}
