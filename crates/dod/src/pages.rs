//! The paged sparse array: a slot per index, in pages of `PAGE` slots allocated on first use.
//!
//! Pages live in one contiguous arena (`slots`) and a page table maps a page number to its
//! place in the arena, so that allocating a page is an amortised `Vec` extension (no
//! allocation per page) and lookups over many pages stay within one mapping of memory. Used by
//! [`SparseSet`](crate::SparseSet) (index -> dense position and tag) and
//! [`DataStore`](crate::DataStore) (index -> block and tag).
//!
//! Memory follows the largest index: the table holds 4 bytes per `PAGE` indices up to the
//! largest page in use, so index `u32::MAX - 1` alone costs 128 MiB with 128-slot pages.

use alloc::collections::TryReserveError;
use alloc::vec::Vec;

/// The paged sparse array. A slot that holds nothing is `S::default()`.
///
/// Invariants: `table[p]` is 0 when page `p` is not allocated, else `k + 1` where page `p`
/// is `slots[k * PAGE .. (k + 1) * PAGE]`; each arena page belongs to exactly one table entry;
/// `slots.len()` is a multiple of `PAGE`. The unchecked slot accesses rely on the first of
/// these, so only this module touches `table` and `slots`.
#[derive(Clone, Debug)]
pub(crate) struct Pages<S, const PAGE: usize> {
    table: Vec<u32>,
    slots: Vec<S>,
}

impl<S: Copy + Default + PartialEq, const PAGE: usize> Pages<S, PAGE> {
    pub(crate) const fn new() -> Self {
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
    pub(crate) fn slot(&self, index: u32) -> Option<&S> {
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
    pub(crate) fn slot_mut(&mut self, index: u32) -> Option<&mut S> {
        let a = self.at(index)?;
        debug_assert!(a < self.slots.len());
        // SAFETY: as in `slot`: `a` lies in the arena page that the table entry names.
        Some(unsafe { self.slots.get_unchecked_mut(a) })
    }

    /// The slot of `index` (`S::default()` when its page does not exist).
    #[inline]
    pub(crate) fn get(&self, index: u32) -> S {
        self.slot(index).copied().unwrap_or_default()
    }

    /// Allocates the page of `index` at the end of the arena if it has none.
    pub(crate) fn alloc_page(&mut self, index: u32) {
        if self.at(index).is_some() {
            return;
        }
        let i = index as usize;
        let p = i / PAGE;
        if p >= self.table.len() {
            self.table.resize(p + 1, 0);
        }
        let k = self.slots.len() / PAGE;
        self.slots.resize(self.slots.len() + PAGE, S::default());
        // At most 2^32 / PAGE pages exist, so `k + 1` fits in a u32.
        self.table[p] = (k + 1) as u32;
    }

    /// [`alloc_page`](Pages::alloc_page), or an error (and no change) if the memory cannot
    /// be had.
    pub(crate) fn try_alloc_page(&mut self, index: u32) -> Result<(), TryReserveError> {
        if self.at(index).is_some() {
            return Ok(());
        }
        let p = index as usize / PAGE;
        self.table
            .try_reserve(p.saturating_sub(self.table.len()) + 1)?;
        self.slots.try_reserve(PAGE)?;
        self.alloc_page(index);
        Ok(())
    }

    /// The number of allocated pages.
    pub(crate) fn allocated(&self) -> usize {
        self.slots.len() / PAGE
    }

    /// Bytes held: the page table and the arena, by capacity.
    pub(crate) fn memory_usage(&self) -> usize {
        self.table.capacity() * core::mem::size_of::<u32>()
            + self.slots.capacity() * core::mem::size_of::<S>()
    }

    /// Releases every page that holds no entity, packs the others into a new arena of exact
    /// size (in page-table order), trims the page table after the last page in use, and frees
    /// spare capacity.
    pub(crate) fn shrink_to_fit(&mut self) {
        let live = self
            .table
            .iter()
            .filter(|&&k| k != 0 && !self.page(k).iter().all(|s| *s == S::default()))
            .count();
        let mut slots = Vec::with_capacity(live * PAGE);
        for k in 0..self.table.len() {
            let entry = self.table[k];
            if entry == 0 {
                continue;
            }
            let page = self.page(entry);
            if page.iter().all(|s| *s == S::default()) {
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
    fn page(&self, entry: u32) -> &[S] {
        let from = (entry as usize - 1) * PAGE;
        &self.slots[from..from + PAGE]
    }

    /// Every slot of every allocated page (invariant checks).
    pub(crate) fn all_slots(&self) -> &[S] {
        &self.slots
    }
}
