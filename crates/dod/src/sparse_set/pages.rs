//! The paged sparse array: entity index -> slot, where a slot holds the entity's dense
//! position and generation.
//!
//! Pages live in one contiguous arena (`slots`) and a page table maps a page number to its
//! place in the arena, so that allocating a page is an amortised `Vec` extension (no
//! allocation per page) and lookups over many pages stay within one mapping of memory.

use alloc::vec::Vec;

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

/// The sparse array of a `SparseSet`.
///
/// Invariants: `table[p]` is 0 when page `p` is not allocated, else `k + 1` where page `p`
/// is `slots[k * PAGE .. (k + 1) * PAGE]`; each arena page belongs to exactly one table entry;
/// `slots.len()` is a multiple of `PAGE`. The unchecked slot accesses rely on the first of
/// these, so only this module touches `table` and `slots`.
#[derive(Clone, Debug)]
pub(super) struct Pages<const PAGE: usize> {
    table: Vec<u32>,
    slots: Vec<u64>,
}

impl<const PAGE: usize> Pages<PAGE> {
    pub(super) const fn new() -> Self {
        Pages {
            table: Vec::new(),
            slots: Vec::new(),
        }
    }

    /// Where the slot of `index` sits in the arena, if its page is allocated.
    #[inline]
    fn at(&self, index: u32) -> Option<usize> {
        let i = index as usize;
        // One test for both "past the table" and "page not allocated".
        let k = self.table.get(i / PAGE).copied().unwrap_or(0);
        if k == 0 {
            return None;
        }
        Some((k as usize - 1) * PAGE + i % PAGE)
    }

    /// The slot of `index`, if its page is allocated.
    #[inline]
    #[allow(unsafe_code)]
    pub(super) fn slot(&self, index: u32) -> Option<&u64> {
        let a = self.at(index)?;
        debug_assert!(a < self.slots.len());
        // SAFETY: `at` found a non-zero table entry `k + 1`, which by the invariant of
        // `Pages` names the arena page `slots[k * PAGE .. (k + 1) * PAGE]`, and `a` is
        // `k * PAGE + index % PAGE`, inside that page.
        Some(unsafe { self.slots.get_unchecked(a) })
    }

    /// The slot of `index`, mutable, if its page is allocated.
    #[inline]
    #[allow(unsafe_code)]
    pub(super) fn slot_mut(&mut self, index: u32) -> Option<&mut u64> {
        let a = self.at(index)?;
        debug_assert!(a < self.slots.len());
        // SAFETY: as in `slot`: `a` lies in the arena page that the table entry names.
        Some(unsafe { self.slots.get_unchecked_mut(a) })
    }

    /// The slot of `index` (0 when vacant or when its page does not exist).
    #[inline]
    pub(super) fn get(&self, index: u32) -> u64 {
        self.slot(index).copied().unwrap_or(0)
    }

    /// Allocates the page of `index` at the end of the arena if it has none.
    pub(super) fn alloc_page(&mut self, index: u32) {
        if self.at(index).is_some() {
            return;
        }
        let i = index as usize;
        let p = i / PAGE;
        if p >= self.table.len() {
            self.table.resize(p + 1, 0);
        }
        let k = self.slots.len() / PAGE;
        self.slots.resize(self.slots.len() + PAGE, 0);
        // At most 2^32 / PAGE pages exist, so `k + 1` fits in a u32.
        self.table[p] = (k + 1) as u32;
    }

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

    /// The number of allocated pages.
    pub(super) fn allocated(&self) -> usize {
        self.slots.len() / PAGE
    }

    /// Bytes held: the page table and the arena, by capacity.
    pub(super) fn memory_usage(&self) -> usize {
        self.table.capacity() * core::mem::size_of::<u32>()
            + self.slots.capacity() * core::mem::size_of::<u64>()
    }

    /// Releases every page that holds no entity, packs the others into a new arena of exact
    /// size (in page-table order), trims the page table after the last page in use, and frees
    /// spare capacity.
    pub(super) fn shrink_to_fit(&mut self) {
        let live = self
            .table
            .iter()
            .filter(|&&k| k != 0 && !self.page(k).iter().all(|&s| s == 0))
            .count();
        let mut slots = Vec::with_capacity(live * PAGE);
        for k in 0..self.table.len() {
            let entry = self.table[k];
            if entry == 0 {
                continue;
            }
            let page = self.page(entry);
            if page.iter().all(|&s| s == 0) {
                self.table[k] = 0;
            } else {
                slots.extend_from_slice(page);
                self.table[k] = (slots.len() / PAGE) as u32;
            }
        }
        self.slots = slots;
        while self.table.last() == Some(&0) {
            self.table.pop();
        }
        self.table.shrink_to_fit();
    }

    /// The arena page of a non-zero table entry.
    fn page(&self, entry: u32) -> &[u64] {
        let from = (entry as usize - 1) * PAGE;
        &self.slots[from..from + PAGE]
    }

    /// Every slot of every allocated page (invariant checks).
    pub(super) fn all_slots(&self) -> &[u64] {
        &self.slots
    }
}
