//! The paged sparse array: a slot per index, in pages of `PAGE` slots allocated on first use.
//!
//! Pages live in one contiguous arena (`slots`) and a page table maps a page number to its
//! place in the arena, so that allocating a page is an amortised `Vec` extension (no
//! allocation per page) and lookups over many pages stay within one mapping of memory. Used by
//! [`SparseSet`](crate::SparseSet) (index -> dense position and tag) and
//! [`DataStore`](crate::DataStore) (index -> block and tag).
//!
//! The table grows to cover a new page only while it costs no more than the pages themselves
//! (4 bytes per page number against `PAGE * size_of::<S>()` bytes per page, and at least
//! [`TABLE_FLOOR`] bytes): a page further out is a *far* page, listed on the side by page
//! number. So memory follows what is stored, not the largest index: index 3 000 000 000
//! alone costs one page and one far entry. Lookups in the table are O(1); a far page is found
//! by binary search among the far pages, which entity allocators (handing out small indices)
//! never create.

use alloc::collections::TryReserveError;
use alloc::vec::Vec;

/// Table bytes the page table may always take, whatever the pages cost (4 KiB: the pages of
/// the first 1 024 · `PAGE` indices).
pub(crate) const TABLE_FLOOR: usize = 4096;

/// The paged sparse array. A slot that holds nothing is `S::default()`.
///
/// Invariants: `table[p]` is 0 when page `p` is not allocated, else `k + 1` where page `p`
/// is `slots[k * PAGE .. (k + 1) * PAGE]`; `far` holds `(p, k + 1)` for allocated pages
/// `p >= table.len()`, sorted by `p`, and no other; each arena page belongs to exactly one
/// table or far entry; `slots.len()` is a multiple of `PAGE`. The unchecked slot accesses rely
/// on the first two of these, so only this module touches `table`, `far` and `slots`.
#[derive(Clone, Debug)]
pub(crate) struct Pages<S, const PAGE: usize> {
    table: Vec<u32>,
    far: Vec<(u32, u32)>,
    slots: Vec<S>,
}

/// Where a new page's entry goes: the table's length once it has grown (far pages it then
/// covers move into it), and whether the page is far.
struct Place {
    table_len: usize,
    far: bool,
}

impl<S: Copy + Default + PartialEq, const PAGE: usize> Pages<S, PAGE> {
    pub(crate) const fn new() -> Self {
        Pages {
            table: Vec::new(),
            far: Vec::new(),
            slots: Vec::new(),
        }
    }

    /// Where the slot of `index` sits in the arena, if its page is allocated.
    #[inline]
    fn at(&self, index: u32) -> Option<usize> {
        let i = index as usize;
        let k = match self.table.get(i / PAGE) {
            Some(&k) => k,
            None => self.far_entry(i / PAGE)?,
        };
        if k == 0 {
            return None;
        }
        Some((k as usize - 1) * PAGE + i % PAGE)
    }

    /// The entry of page `p` past the table, if it is a far page.
    #[cold]
    #[inline(never)]
    fn far_entry(&self, p: usize) -> Option<u32> {
        let i = self.far.binary_search_by_key(&p, |e| e.0 as usize).ok()?;
        Some(self.far[i].1)
    }

    /// Where the entry of a new page `p` (not allocated) goes. The table reaches as far as
    /// the budget allows over `p` and the far pages.
    fn place(&self, p: usize) -> Place {
        let pages_bytes = (self.allocated() + 1).saturating_mul(PAGE * core::mem::size_of::<S>());
        let budget = pages_bytes.max(TABLE_FLOOR) / core::mem::size_of::<u32>();
        let mut table_len = self.table.len();
        if p >= table_len && p < budget {
            table_len = p + 1;
        }
        let under = self.far.partition_point(|e| (e.0 as usize) < budget);
        if under > 0 {
            table_len = table_len.max(self.far[under - 1].0 as usize + 1);
        }
        Place {
            table_len,
            far: p >= table_len,
        }
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

    /// Starts loading the slot of `index` into the cache, if its page is allocated.
    #[inline]
    pub(crate) fn prefetch(&self, index: u32) {
        if let Some(s) = self.slot(index) {
            crate::hint::prefetch(s);
        }
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
        let p = index as usize / PAGE;
        // At most 2^32 / PAGE pages exist, so `k + 1` fits in a u32.
        let entry = (self.slots.len() / PAGE + 1) as u32;
        let place = self.place(p);
        if place.table_len > self.table.len() {
            self.table.resize(place.table_len, 0);
            // Far pages the table now covers move into it.
            let moved = self
                .far
                .partition_point(|e| (e.0 as usize) < place.table_len);
            for (q, k) in self.far.drain(..moved) {
                self.table[q as usize] = k;
            }
        }
        if place.far {
            let at = self.far.partition_point(|e| (e.0 as usize) < p);
            self.far.insert(at, (p as u32, entry));
        } else {
            self.table[p] = entry;
        }
        self.slots.resize(self.slots.len() + PAGE, S::default());
    }

    /// Where the page of `index` starts in the arena (see
    /// [`all_slots_mut`](Pages::all_slots_mut)), allocating the page if it has none.
    pub(crate) fn page_start(&mut self, index: u32) -> usize {
        self.alloc_page(index);
        let a = self.at(index).expect("the page was just allocated");
        a - index as usize % PAGE
    }

    /// [`alloc_page`](Pages::alloc_page), or an error (and no change) if the memory cannot
    /// be had.
    pub(crate) fn try_alloc_page(&mut self, index: u32) -> Result<(), TryReserveError> {
        if self.at(index).is_some() {
            return Ok(());
        }
        let place = self.place(index as usize / PAGE);
        self.table.try_reserve(place.table_len - self.table.len())?;
        if place.far {
            self.far.try_reserve(1)?;
        }
        self.slots.try_reserve(PAGE)?;
        self.alloc_page(index);
        Ok(())
    }

    /// Reserves arena room for the pages of a run of `indices` new indices, and page-table
    /// room for as many pages past the table's end. Panics like `Vec` if the
    /// memory cannot be had.
    pub(crate) fn reserve(&mut self, indices: usize) {
        let slots = Self::run_slots(indices);
        self.slots.reserve(slots);
        self.table.reserve(slots / PAGE);
    }

    /// [`reserve`](Pages::reserve), or an error if the memory cannot be had.
    pub(crate) fn try_reserve(&mut self, indices: usize) -> Result<(), TryReserveError> {
        let slots = Self::run_slots(indices);
        self.slots.try_reserve(slots)?;
        self.table.try_reserve(slots / PAGE)
    }

    /// The slots of the pages a run of `indices` consecutive indices can touch: one page more
    /// than they fill, for a run that starts inside a page.
    fn run_slots(indices: usize) -> usize {
        if indices == 0 {
            return 0;
        }
        (indices.div_ceil(PAGE) + 1).saturating_mul(PAGE)
    }

    /// The number of allocated pages.
    pub(crate) fn allocated(&self) -> usize {
        self.slots.len() / PAGE
    }

    /// Bytes held: the page table, the far list and the arena, by capacity.
    pub(crate) fn memory_usage(&self) -> usize {
        self.table.capacity() * core::mem::size_of::<u32>()
            + self.far.capacity() * core::mem::size_of::<(u32, u32)>()
            + self.slots.capacity() * core::mem::size_of::<S>()
    }

    /// Releases every page that holds no entity, packs the others into a new arena of exact
    /// size (in page-table order), trims the page table after the last page in use, and frees
    /// spare capacity.
    pub(crate) fn shrink_to_fit(&mut self) {
        let empty = |page: &[S]| page.iter().all(|s| *s == S::default());
        let live = self
            .table
            .iter()
            .chain(self.far.iter().map(|e| &e.1))
            .filter(|&&k| k != 0 && !empty(self.page(k)))
            .count();
        let mut slots = Vec::with_capacity(live * PAGE);
        for k in 0..self.table.len() {
            let entry = self.table[k];
            if entry == 0 {
                continue;
            }
            let page = self.page(entry);
            if empty(page) {
                self.table[k] = 0;
            } else {
                slots.extend_from_slice(page);
                self.table[k] = (slots.len() / PAGE) as u32;
            }
        }
        let mut far = Vec::with_capacity(self.far.len());
        for &(p, entry) in &self.far {
            let page = self.page(entry);
            if !empty(page) {
                slots.extend_from_slice(page);
                far.push((p, (slots.len() / PAGE) as u32));
            }
        }
        far.shrink_to_fit();
        self.far = far;
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

    /// Every slot of every allocated page, mutable, in arena order.
    pub(crate) fn all_slots_mut(&mut self) -> &mut [S] {
        &mut self.slots
    }

    /// Every slot of every allocated page with its index, in increasing order of index.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, &S)> + '_ {
        let table = self.table.iter().enumerate().map(|(p, &k)| (p, k));
        let far = self.far.iter().map(|&(p, k)| (p as usize, k));
        table
            .chain(far)
            .filter(|&(_, k)| k != 0)
            .flat_map(move |(p, k)| {
                self.page(k)
                    .iter()
                    .enumerate()
                    .map(move |(i, s)| ((p * PAGE + i) as u32, s))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type P = Pages<u64, 128>;

    fn set(p: &mut P, index: u32, v: u64) {
        p.alloc_page(index);
        *p.slot_mut(index).unwrap() = v;
    }

    #[test]
    fn a_far_index_costs_one_page() {
        let mut p = P::new();
        set(&mut p, 3_000_000_000, 7);
        assert_eq!(p.get(3_000_000_000), 7);
        assert_eq!(p.get(3_000_000_001), 0);
        assert_eq!(p.slot(2_999_999_999), None);
        assert_eq!(p.allocated(), 1);
        assert!(p.memory_usage() <= 128 * 8 + 64, "{}", p.memory_usage());
        let mut q = P::new();
        q.try_alloc_page(u32::MAX - 1).unwrap();
        assert!(q.memory_usage() <= 128 * 8 + 64, "{}", q.memory_usage());
    }

    #[test]
    fn far_pages_move_into_the_table_once_it_is_worth_it() {
        let mut p = P::new();
        // Page 2000 is past the 1024 pages the floor allows: far.
        set(&mut p, 2000 * 128 + 5, 1);
        set(&mut p, 5000 * 128, 2);
        set(&mut p, 1500 * 128, 3);
        assert_eq!(p.far.len(), 3);
        assert!(p.table.is_empty());
        // Fill near pages until the table may reach page 2000: 2 001 table entries (8 004
        // bytes) against 8 pages of 1 KiB.
        for i in 0..8u32 {
            set(&mut p, i * 128, 10 + u64::from(i));
        }
        assert_eq!(p.far.len(), 1, "pages 1500 and 2000 moved into the table");
        assert_eq!(p.far[0].0, 5000);
        for (index, v) in [
            (2000 * 128 + 5, 1),
            (5000 * 128, 2),
            (1500 * 128, 3),
            (0, 10),
        ] {
            assert_eq!(p.get(index), v, "{index}");
        }
        let seen: Vec<(u32, u64)> = p
            .iter()
            .filter(|e| *e.1 != 0)
            .map(|(i, &v)| (i, v))
            .collect();
        let mut sorted = seen.clone();
        sorted.sort_unstable();
        assert_eq!(seen, sorted, "index order");
        assert_eq!(seen.len(), 11);
        // Shrinking drops empty pages, far ones included, and keeps the others readable.
        *p.slot_mut(5000 * 128).unwrap() = 0;
        *p.slot_mut(0).unwrap() = 0;
        p.shrink_to_fit();
        assert_eq!(p.allocated(), 9);
        assert!(p.far.is_empty());
        assert_eq!(p.get(2000 * 128 + 5), 1);
        assert_eq!(p.get(1500 * 128), 3);
        assert_eq!(p.get(128), 11);
    }
}
