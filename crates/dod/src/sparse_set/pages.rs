//! A `SparseSet`'s slots in the shared paged array ([`crate::pages`]): a slot holds the
//! entity's dense position and generation.

/// Encodes a live slot: position + 1 in the low half (0 means vacant), generation above.
#[inline]
pub(super) fn encode(pos: usize, generation: u16) -> u64 {
    (pos as u64 + 1) | (u64::from(generation) << 32)
}

/// The position a slot points at, if it is occupied.
#[inline]
pub(super) fn decode(slot: u64) -> Option<usize> {
    match slot as u32 {
        0 => None,
        p => Some(p as usize - 1),
    }
}

/// The generation a slot holds (0: inserted by a plain index).
#[inline]
pub(super) fn slot_generation(slot: u64) -> u16 {
    (slot >> 32) as u16
}

/// The sparse array of a `SparseSet`: slots encoded by [`encode`], 0 when vacant.
pub(super) type Pages<const PAGE: usize> = crate::pages::Pages<u64, PAGE>;

impl<const PAGE: usize> Pages<PAGE> {
    /// Points the slot of live entity `e` at `pos`, keeping its generation.
    #[inline]
    pub(super) fn relink(&mut self, e: u32, pos: usize) {
        if let Some(s) = self.slot_mut(e) {
            *s = encode(pos, slot_generation(*s));
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
