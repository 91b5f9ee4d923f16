//! The paged sparse array: a slot per index, in pages of `PAGE` slots allocated on first use.
//!
//! Pages live in one contiguous arena (`slots`) and a page table maps a page number to its
//! place in the arena, so that allocating a page is an amortised `Vec` extension (no
//! allocation per page) and lookups over many pages stay within one mapping of memory. Used by
//! [`SparseSet`](crate::SparseSet) (index -> dense position and tag) and
//! [`DataStore`](crate::DataStore) (index -> block and tag).
//!
//! The pages of the first indices, allocated without a gap, sit at their own place in the
//! arena (page `p` is arena page `p`): the *flat prefix*. A slot there is found from its
//! index alone, with no page-table load in front of it, which is what a lookup costs in a
//! plain array. Entity allocators hand out small indices from 0 up, so their sets mostly live
//! in the prefix. A page allocated out of order goes to the end of the arena; when the pages in
//! front of it arrive, it is swapped into its place (one page swap for each page that joins
//! the prefix), so the prefix keeps growing.
//!
//! The table grows to cover a new page only while it costs no more than the pages themselves
//! (4 bytes per page number against `PAGE * size_of::<S>()` bytes per page, and at least
//! [`TABLE_FLOOR`] bytes): a page further out is a *far* page, listed on the side by page
//! number. So memory follows what is stored, not the largest index: index 3 000 000 000
//! alone costs one page and one far entry. Lookups in the table are O(1); a far page is found
//! by binary search among the far pages, which entity allocators (handing out small indices)
//! never create. The far list keeps gaps, room for new pages, so that far pages added in any
//! order cost amortised O(√n) shifts each, not a shift of the whole list.

use alloc::collections::TryReserveError;
use alloc::vec::Vec;

/// Table bytes the page table may always take, whatever the pages cost (4 KiB: the pages of
/// the first 1 024 · `PAGE` indices).
pub(crate) const TABLE_FLOOR: usize = 4096;

/// The paged sparse array. A slot that holds nothing is `S::default()`.
///
/// Invariants: `table[p]` is 0 when page `p` is not allocated, else `k + 1` where page `p`
/// is `slots[k * PAGE .. (k + 1) * PAGE]`; `far` holds `(p, k + 1)` for allocated pages
/// `p >= table.len()`, once each, and no other; each arena page belongs to exactly one
/// table or far entry, and `owner[k]` is the page of arena page `k`; `slots.len()` is a
/// multiple of `PAGE`; `flat` is a multiple of `PAGE`, at most `slots.len()`, and
/// `table[p] == p + 1` for every `p < flat / PAGE`. The unchecked slot accesses rely on the
/// table, far and flat invariants, so only this module touches these fields
/// ([`check`](Pages::check) asserts them all).
#[derive(Clone, Debug)]
pub(crate) struct Pages<S, const PAGE: usize> {
    table: Vec<u32>,
    far: Far,
    slots: Vec<S>,
    owner: Vec<u32>,
    /// The flat prefix: the slot of an index below it is `slots[index]`.
    flat: usize,
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
            far: Far::new(),
            slots: Vec::new(),
            owner: Vec::new(),
            flat: 0,
        }
    }

    /// Where the slot of `index` sits in the arena, if its page is allocated.
    #[inline]
    fn at(&self, index: u32) -> Option<usize> {
        let i = index as usize;
        if i < self.flat {
            return Some(i);
        }
        let k = match self.table.get(i / PAGE) {
            Some(&k) => k,
            None => self.far.get(i / PAGE)?,
        };
        if k == 0 {
            return None;
        }
        Some((k as usize - 1) * PAGE + i % PAGE)
    }

    /// Where the entry of a new page `p` (not allocated) goes. The table reaches as far as
    /// the budget allows over `p` and the far pages.
    fn place(&self, p: usize) -> Place {
        let pages_bytes =
            (self.allocated() + 1).saturating_mul(PAGE.saturating_mul(core::mem::size_of::<S>()));
        let budget = pages_bytes.max(TABLE_FLOOR) / core::mem::size_of::<u32>();
        let mut table_len = self.table.len();
        if p >= table_len && p < budget {
            table_len = p + 1;
        }
        if let Some(last) = self.far.last_below(budget) {
            table_len = table_len.max(last + 1);
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
        // SAFETY: either `a` is an index below `flat`, which is at most `slots.len()`, or
        // `at` found a non-zero table or far entry `k + 1`, which by the invariant of `Pages`
        // names the arena page `slots[k * PAGE .. (k + 1) * PAGE]`, and `a` is
        // `k * PAGE + index % PAGE`, inside that page.
        Some(unsafe { self.slots.get_unchecked(a) })
    }

    /// The slot of `index`, mutable, if its page is allocated.
    #[inline]
    #[allow(unsafe_code)]
    pub(crate) fn slot_mut(&mut self, index: u32) -> Option<&mut S> {
        let a = self.at(index)?;
        debug_assert!(a < self.slots.len());
        // SAFETY: as in `slot`: `a` is below `flat` (at most `slots.len()`) or lies in the
        // arena page that the table or far entry names.
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

    /// Allocates the page of `index` if it has none: at the end of the arena, then swapped
    /// into its own place if it extends the flat prefix. Arena positions taken before (see
    /// [`page_start`](Pages::page_start)) may name other pages afterwards.
    pub(crate) fn alloc_page(&mut self, index: u32) {
        if self.at(index).is_some() {
            return;
        }
        let p = index as usize / PAGE;
        // At most 2^32 / PAGE pages exist, so `k + 1` fits in a u32.
        let entry = (self.slots.len() / PAGE + 1) as u32;
        let place = self.place(p);
        // Every allocation first: an entry must never name an arena page that a failed
        // allocation left out.
        self.slots.reserve(PAGE);
        self.owner.reserve(1);
        if place.far {
            self.far.reserve_one();
        }
        if place.table_len > self.table.len() {
            self.table.resize(place.table_len, 0);
            // Far pages the table now covers move into it.
            let table = &mut self.table;
            self.far
                .take_below(place.table_len, |q, k| table[q as usize] = k);
        }
        if place.far {
            self.far.insert(p as u32, entry);
        } else {
            self.table[p] = entry;
        }
        self.slots.resize(self.slots.len() + PAGE, S::default());
        self.owner.push(p as u32);
        self.extend_flat();
    }

    /// Extends the flat prefix over the allocated table pages that follow it, moving each
    /// into its own place in the arena: the page that held that place takes the moved page's
    /// old place.
    fn extend_flat(&mut self) {
        loop {
            let p = self.flat / PAGE;
            let k = match self.table.get(p) {
                Some(&entry) if entry != 0 => entry as usize - 1,
                _ => return,
            };
            if k != p {
                // Arena pages `0..p` hold pages `0..p`, so page `p` sits further on (`k > p`)
                // and arena page `p` holds a page outside the prefix.
                let other = self.owner[p];
                let (front, back) = self.slots.split_at_mut(k * PAGE);
                front[p * PAGE..(p + 1) * PAGE].swap_with_slice(&mut back[..PAGE]);
                self.set_entry(other, k);
                self.table[p] = p as u32 + 1;
                self.owner.swap(p, k);
            }
            self.flat += PAGE;
        }
    }

    /// Points the table or far entry of allocated page `p` at arena page `k`.
    fn set_entry(&mut self, p: u32, k: usize) {
        // At most 2^32 / PAGE pages exist, so `k + 1` fits in a u32.
        let entry = k as u32 + 1;
        match self.table.get_mut(p as usize) {
            Some(e) => *e = entry,
            None => {
                let listed = self.far.set(p as usize, entry);
                assert!(listed, "Pages: an allocated page has a table or far entry");
            }
        }
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
            self.far.try_reserve_one()?;
        }
        self.slots.try_reserve(PAGE)?;
        self.owner.try_reserve(1)?;
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
        self.owner.reserve(slots / PAGE);
    }

    /// [`reserve`](Pages::reserve), or an error if the memory cannot be had.
    pub(crate) fn try_reserve(&mut self, indices: usize) -> Result<(), TryReserveError> {
        let slots = Self::run_slots(indices);
        self.slots.try_reserve(slots)?;
        self.table.try_reserve(slots / PAGE)?;
        self.owner.try_reserve(slots / PAGE)
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

    /// Bytes held: the page table, the far list, the arena and its owner list, by capacity.
    pub(crate) fn memory_usage(&self) -> usize {
        (self.table.capacity() + self.owner.capacity()) * core::mem::size_of::<u32>()
            + self.far.memory_usage()
            + self.slots.capacity() * core::mem::size_of::<S>()
    }

    /// Releases every page that holds no entity, packs the others into a new arena of exact
    /// size (in page-table order), trims the page table after the last page in use, and frees
    /// spare capacity.
    pub(crate) fn shrink_to_fit(&mut self) {
        let empty = |page: &[S]| page.iter().all(|s| *s == S::default());
        let live_near = self
            .table
            .iter()
            .filter(|&&k| k != 0 && !empty(self.page(k)))
            .count();
        let live_far = self.far.iter().filter(|e| !empty(self.page(e.1))).count();
        let live = live_near + live_far;
        // Every allocation comes before the table is rewritten, so one that unwinds leaves
        // the pages as they were.
        let mut slots = Vec::with_capacity(live * PAGE);
        let mut owner = Vec::with_capacity(live);
        let mut far = Vec::with_capacity(live_far);
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
                owner.push(k as u32);
                self.table[k] = (slots.len() / PAGE) as u32;
            }
        }
        for (p, entry) in self.far.iter() {
            let page = self.page(entry);
            if !empty(page) {
                slots.extend_from_slice(page);
                owner.push(p);
                far.push((p, (slots.len() / PAGE) as u32));
            }
        }
        self.far = Far::from_sorted(far);
        self.slots = slots;
        self.owner = owner;
        while self.table.last() == Some(&0) {
            self.table.pop();
        }
        self.table.shrink_to_fit();
        // The pages are in page order now: the prefix is the run of them from page 0.
        self.flat = 0;
        self.extend_flat();
    }

    /// Asserts every invariant of the type; for tests.
    pub(crate) fn check(&self) {
        let pages = self.slots.len() / PAGE;
        assert_eq!(self.slots.len() % PAGE, 0, "arena of whole pages");
        assert_eq!(self.owner.len(), pages, "one owner per arena page");
        let mut seen = alloc::vec![false; pages];
        let entries = self.table.iter().enumerate().map(|(p, &e)| (p as u32, e));
        for (p, entry) in entries.chain(self.far.iter()) {
            if entry == 0 {
                continue;
            }
            let k = entry as usize - 1;
            assert!(k < pages, "page {p}: entry past the arena");
            assert!(!seen[k], "arena page {k} named twice");
            seen[k] = true;
            assert_eq!(self.owner[k], p, "owner of arena page {k}");
        }
        assert!(seen.iter().all(|&s| s), "an arena page no entry names");
        self.far.check();
        assert!(
            self.far
                .iter()
                .all(|e| e.0 as usize >= self.table.len() && e.1 != 0),
            "far pages past the table"
        );
        assert_eq!(self.flat % PAGE, 0, "flat prefix of whole pages");
        assert!(
            self.flat <= self.slots.len(),
            "flat prefix inside the arena"
        );
        for p in 0..self.flat / PAGE {
            assert_eq!(
                self.table[p] as usize,
                p + 1,
                "page {p} of the prefix in place"
            );
        }
        let next = self.table.get(self.flat / PAGE).copied().unwrap_or(0);
        assert_eq!(next, 0, "prefix not extended over an allocated page");
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
        let far = self.far.iter().map(|(p, k)| (p as usize, k));
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

/// The far pages' entries `(page, k + 1)`, in one list sorted by page in which a page may
/// also appear more than once: the copies before the last are *gaps*, room for a new entry.
/// A gap holds the same entry as the one after it, so a binary search that lands on any copy
/// of a page finds its entry, and a search for a page that is not listed finds none. A new
/// page fills the gap in front of its place, or a gap within a short distance after it, or
/// else before it (shifting the entries in between); when there is none, the list is spread
/// out again with a gap before every entry, an O(n) step that the inserts between two
/// spreads pay for. So adding `n` far pages in any order shifts O(n √n) entries in all,
/// where one packed sorted list shifts O(n²) (descending pages move the whole list each
/// time), and the lookup stays one binary search.
#[derive(Clone, Debug, Default)]
struct Far {
    list: Vec<(u32, u32)>,
    /// The number of pages listed (gaps not counted).
    pages: usize,
}

impl Far {
    /// The distance a new entry's gap is looked for before the list is spread out: at least
    /// this, at most the square root of the list's length when that is more.
    const REACH: usize = 32;

    const fn new() -> Self {
        Far {
            list: Vec::new(),
            pages: 0,
        }
    }

    /// The far pages of `sorted`, a list sorted by page, with no gap.
    fn from_sorted(sorted: Vec<(u32, u32)>) -> Self {
        Far {
            pages: sorted.len(),
            list: sorted,
        }
    }

    /// The entry of far page `p`. Inlined although far pages are rare: a call in the lookup,
    /// even one never taken, clobbers registers and makes a caller's loop reload the set's
    /// fields after each lookup (measured on a loop of `swap_remove`: 3.0 ns a removal with
    /// the search out of line, 2.5 with it out of line taking the far list alone, 2.1
    /// inlined); a second search inlined beside this one made `dod-world`'s random get a
    /// fifth slower.
    #[inline(always)]
    fn get(&self, p: usize) -> Option<u32> {
        let i = self.list.binary_search_by_key(&p, |e| e.0 as usize).ok()?;
        Some(self.list[i].1)
    }

    /// Where the entries of pages at or past `p` start.
    fn start_of(&self, p: usize) -> usize {
        self.list.partition_point(|e| (e.0 as usize) < p)
    }

    /// Points far page `p` (listed) at `entry`, in every copy; `false` if it is not listed.
    fn set(&mut self, p: usize, entry: u32) -> bool {
        let from = self.start_of(p);
        let mut found = false;
        for e in self.list[from..]
            .iter_mut()
            .take_while(|e| e.0 as usize == p)
        {
            e.1 = entry;
            found = true;
        }
        found
    }

    /// The number of far pages.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.pages
    }

    /// The highest far page below `bound` (the entry before the first at or past `bound` is
    /// the last copy of its page).
    fn last_below(&self, bound: usize) -> Option<usize> {
        let under = self.start_of(bound);
        Some(self.list[under.checked_sub(1)?].0 as usize)
    }

    /// Whether entry `i` is a gap: the entry after it is of the same page.
    fn is_gap(&self, i: usize) -> bool {
        self.list
            .get(i + 1)
            .is_some_and(|next| next.0 == self.list[i].0)
    }

    /// Removes the far pages below `bound`, handing each to `put` as `(page, entry)`, once.
    fn take_below(&mut self, bound: usize, mut put: impl FnMut(u32, u32)) {
        let under = self.start_of(bound);
        for i in 0..under {
            // The entry at `under` is of a page at or past `bound`, so the last copy of each
            // page below it is inside `..under`.
            if !self.is_gap(i) {
                let (p, k) = self.list[i];
                put(p, k);
                self.pages -= 1;
            }
        }
        self.list.drain(..under);
    }

    /// The entries past the list's length an [`insert`](Far::insert) may need room for: to
    /// spread the list out with one more page.
    fn room_needed(&self) -> usize {
        (2 * (self.pages + 1)).max(self.list.len() + 1) - self.list.len()
    }

    /// Reserves what [`insert`](Far::insert) allocates.
    fn reserve_one(&mut self) {
        self.list.reserve(self.room_needed());
    }

    /// [`reserve_one`](Far::reserve_one), or an error if the memory cannot be had.
    fn try_reserve_one(&mut self) -> Result<(), TryReserveError> {
        self.list.try_reserve(self.room_needed())
    }

    /// Adds far page `p` (not listed) with `entry`; allocates nothing after
    /// [`reserve_one`](Far::reserve_one).
    fn insert(&mut self, p: u32, entry: u32) {
        debug_assert!(self.get(p as usize).is_none());
        if !self.insert_near(p, entry) {
            self.spread();
            let placed = self.insert_near(p, entry);
            debug_assert!(placed, "a spread list has a gap before every entry");
        }
        self.pages += 1;
    }

    /// Puts `(p, entry)` in its place: pushed at the end, or into the first gap within reach
    /// after its place, or else the first before it (shifting the entries between); `false`
    /// if no gap is within reach.
    fn insert_near(&mut self, p: u32, entry: u32) -> bool {
        let at = self.start_of(p as usize);
        if at == self.list.len() {
            self.list.push((p, entry));
            return true;
        }
        let reach = Self::REACH.max(self.list.len().isqrt());
        // A gap at or after `at`: the entries `at..gap` move up one, over it.
        if let Some(gap) = (at..self.list.len().min(at + reach)).find(|&i| self.is_gap(i)) {
            self.list.copy_within(at..gap, at + 1);
            self.list[at] = (p, entry);
            return true;
        }
        // A gap before `at`: the entries after it, up to `at`, move down one, over it.
        if let Some(gap) = (at.saturating_sub(reach)..at)
            .rev()
            .find(|&i| self.is_gap(i))
        {
            self.list.copy_within(gap + 1..at, gap);
            self.list[at - 1] = (p, entry);
            return true;
        }
        false
    }

    /// Rewrites the list as its pages with a gap before each, in place (the capacity for it
    /// was reserved).
    fn spread(&mut self) {
        // The pages to the front, in order, then each doubled from the back (entry `r` goes
        // to `2r` and `2r + 1`, never below `r`, so nothing is overwritten before it is read).
        let mut n = 0;
        for i in 0..self.list.len() {
            if !self.is_gap(i) {
                self.list[n] = self.list[i];
                n += 1;
            }
        }
        debug_assert_eq!(n, self.pages);
        self.list.truncate(n);
        self.list.resize(2 * n, (0, 0));
        for r in (0..n).rev() {
            let e = self.list[r];
            self.list[2 * r] = e;
            self.list[2 * r + 1] = e;
        }
    }

    /// Every far page's `(page, entry)`, by increasing page, once.
    fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.list.len())
            .filter(|&i| !self.is_gap(i))
            .map(|i| self.list[i])
    }

    /// Bytes held, by capacity.
    fn memory_usage(&self) -> usize {
        self.list.capacity() * core::mem::size_of::<(u32, u32)>()
    }

    /// Asserts that the list is sorted, that every copy of a page holds one entry, and the
    /// page count; for tests.
    fn check(&self) {
        assert!(
            self.list
                .windows(2)
                .all(|w| w[0].0 < w[1].0 || w[0] == w[1]),
            "far pages sorted, the copies of a page alike"
        );
        assert_eq!(self.iter().count(), self.pages, "far pages counted");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type P = Pages<u64, 128>;

    fn set<const N: usize>(p: &mut Pages<u64, N>, index: u32, v: u64) {
        p.alloc_page(index);
        *p.slot_mut(index).unwrap() = v;
    }

    /// The bound the loaders' docs give: whatever the spacing of the pages, the memory held is
    /// at most four times the pages' own bytes (the arena and the page table, each up to the
    /// pages' size and each with the spare room of growth by doubling), plus 64 bytes of
    /// bookkeeping per page and the table's floor.
    #[test]
    fn memory_stays_within_four_times_the_pages() {
        let page_bytes = 128 * core::mem::size_of::<u64>();
        let pages: u32 = if cfg!(miri) { 12 } else { 3_000 };
        let strides: &[u32] = if cfg!(miri) {
            &[1, 9, 512, 65_536]
        } else {
            &[1, 2, 3, 7, 8, 9, 64, 511, 512, 513, 65_536]
        };
        for &stride in strides {
            let numbers: alloc::vec::Vec<u32> = (1..=pages)
                .map_while(|k| k.checked_mul(stride)?.checked_mul(128))
                .collect();
            // Ascending, descending, and shuffled by a fixed multiplicative step.
            let n = numbers.len();
            let step = (0..)
                .map(|s| 7919 + 2 * s)
                .find(|s| gcd(*s, n) == 1)
                .unwrap();
            let orders: [alloc::vec::Vec<u32>; 3] = [
                numbers.clone(),
                numbers.iter().rev().copied().collect(),
                (0..n).map(|i| numbers[i * step % n]).collect(),
            ];
            for (o, order) in orders.iter().enumerate() {
                let mut p = P::new();
                for (k, &index) in order.iter().enumerate() {
                    p.alloc_page(index);
                    let bound = (k + 1) * (4 * page_bytes + 64) + 2 * TABLE_FLOOR;
                    assert!(
                        p.memory_usage() <= bound,
                        "stride {stride}, order {o}, {} pages: {} bytes held, bound {bound}",
                        k + 1,
                        p.memory_usage()
                    );
                }
                p.check();
            }
        }
    }

    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }

    #[test]
    fn pages_from_zero_up_are_the_flat_prefix() {
        let mut p = P::new();
        for i in 0..1000u32 {
            set(&mut p, i * 3, u64::from(i) + 1);
        }
        p.check();
        assert_eq!(p.flat, p.slots.len());
        assert_eq!(p.flat, 3000usize.div_ceil(128) * 128);
        assert_eq!(p.at(2997), Some(2997));
        assert_eq!(p.get(2997), 1000);
    }

    #[test]
    fn a_page_out_of_order_moves_aside_for_the_prefix() {
        let mut p = P::new();
        set(&mut p, 5 * 128 + 1, 50);
        set(&mut p, 3 * 128, 30);
        p.check();
        assert_eq!(p.flat, 0);
        for page in 0..3u32 {
            set(&mut p, page * 128 + 2, u64::from(page) + 7);
            p.check();
        }
        // Pages 0..=3 are in place; page 5 waits behind them for page 4.
        assert_eq!(p.flat, 4 * 128);
        assert_eq!(p.at(3 * 128), Some(3 * 128));
        set(&mut p, 4 * 128, 40);
        p.check();
        assert_eq!(p.flat, 6 * 128);
        for (index, v) in [
            (5 * 128 + 1, 50),
            (3 * 128, 30),
            (4 * 128, 40),
            (2, 7),
            (130, 8),
        ] {
            assert_eq!(p.get(index), v, "{index}");
        }
    }

    #[test]
    fn random_pages_keep_every_slot_and_invariant() {
        // Allocation in a scrambled order, far pages and shrinking, against a map.
        let mut p = Pages::<u64, 4>::new();
        let mut model = alloc::collections::BTreeMap::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        // Miri runs a shorter sequence over fewer pages (each step checks every page).
        let (steps, wide) = if cfg!(miri) {
            (120, 1_000)
        } else {
            (3000, 20_000)
        };
        for step in 0..steps {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let index = match x % 8 {
                0 => (x >> 8) as u32,
                1..=5 => (x >> 8) as u32 % 400,
                _ => (x >> 8) as u32 % wide,
            };
            if step % (steps / 6) == steps / 6 - 1 {
                model.retain(|_, v| *v % 3 != 0);
                for s in p.slots.iter_mut().filter(|s| **s % 3 == 0) {
                    *s = 0;
                }
                p.shrink_to_fit();
            } else {
                set(&mut p, index, step + 1);
                model.insert(index, step + 1);
            }
            p.check();
            for (&i, &v) in &model {
                assert_eq!(p.get(i), v, "step {step}: index {i}");
            }
        }
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
    fn the_far_list_against_a_map() {
        // Inserts in runs that go up, go down or jump, pages moved into the table from the
        // bottom, and entries rewritten, checked against a map after every step.
        let mut far = Far::new();
        let mut model = alloc::collections::BTreeMap::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let steps = if cfg!(miri) { 300 } else { 20_000 };
        let mut page = 1_000_000u32;
        for step in 0..steps {
            let r = next();
            match r % 100 {
                0 => {
                    let bound = model.keys().nth((r >> 8) as usize % (model.len() + 1));
                    let bound = bound.map_or(usize::MAX, |&b| b as usize);
                    let mut taken = Vec::new();
                    far.take_below(bound, |p, k| taken.push((p, k)));
                    let want: Vec<(u32, u32)> = model
                        .range(..bound.min(u32::MAX as usize) as u32)
                        .map(|(&p, &k)| (p, k))
                        .collect();
                    assert_eq!(taken, want, "step {step}: taken below {bound}");
                    model.retain(|&p, _| p as usize >= bound);
                }
                1..=9 if !model.is_empty() => {
                    let &p = model.keys().nth((r >> 8) as usize % model.len()).unwrap();
                    assert!(far.set(p as usize, step));
                    model.insert(p, step);
                }
                _ => {
                    page = match r % 7 {
                        0..=2 => page.wrapping_sub(1 + (r >> 40) as u32 % 3),
                        3..=4 => page.wrapping_add(1 + (r >> 40) as u32 % 3),
                        _ => (r >> 20) as u32 % 2_000_000,
                    };
                    if page < u32::MAX && !model.contains_key(&page) {
                        far.reserve_one();
                        let cap = far.list.capacity();
                        far.insert(page, step);
                        assert_eq!(far.list.capacity(), cap, "insert allocated");
                        model.insert(page, step);
                    }
                }
            }
            far.check();
            assert_eq!(far.len(), model.len());
            let listed: Vec<(u32, u32)> = far.iter().collect();
            let want: Vec<(u32, u32)> = model.iter().map(|(&p, &k)| (p, k)).collect();
            assert_eq!(listed, want, "step {step}");
            for probe in [page, page.wrapping_add(1), page.wrapping_sub(1)] {
                assert_eq!(far.get(probe as usize), model.get(&probe).copied());
            }
            assert!(
                far.last_below(page as usize)
                    == model.range(..page).next_back().map(|(&p, _)| p as usize)
            );
        }
    }

    #[test]
    fn far_pages_in_any_order_are_listed_once_and_found() {
        // Pages far apart, so that all of them stay far: added descending, ascending and
        // scrambled, which use up the gaps and spread the list many times over.
        let n: u32 = if cfg!(miri) { 150 } else { 5_000 };
        let index = |k: u32| u32::MAX - k * 800_000;
        let orders: [Vec<u32>; 3] = [
            (0..n).collect(),
            (0..n).rev().collect(),
            (0..n).map(|k| k * 2_003 % n).collect(),
        ];
        for order in orders {
            let mut p = Pages::<u64, 4>::new();
            for (step, &k) in order.iter().enumerate() {
                set(&mut p, index(k), u64::from(k) + 1);
                if step % 97 == 0 {
                    p.check();
                    assert_eq!(p.get(index(k)), u64::from(k) + 1);
                }
            }
            p.check();
            assert_eq!(p.far.len(), n as usize);
            for k in 0..n {
                assert_eq!(p.get(index(k)), u64::from(k) + 1, "page of {}", index(k));
                assert_eq!(p.get(index(k) - 4), 0);
            }
            let listed: Vec<u32> = p.far.iter().map(|e| e.0).collect();
            let mut pages: Vec<u32> = (0..n).map(|k| index(k) / 4).collect();
            pages.sort_unstable();
            assert_eq!(listed, pages);
            // Moving an arena page rewrites its entry in whichever list holds it.
            for k in [0, n / 2, n - 1] {
                let page = index(k) / 4;
                let at = p.at(index(k)).unwrap() / 4;
                p.set_entry(page, at);
                assert_eq!(p.get(index(k)), u64::from(k) + 1);
            }
        }
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
            p.check();
        }
        // The far pages were swapped out of arena pages 0..3 for the prefix.
        assert_eq!(p.flat, 8 * 128);
        assert_eq!(p.far.len(), 1, "pages 1500 and 2000 moved into the table");
        assert_eq!(p.far.iter().next().unwrap().0, 5000);
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
        p.check();
        assert_eq!(p.flat, 0, "page 0 was released");
        assert_eq!(p.allocated(), 9);
        assert_eq!(p.far.len(), 0);
        assert_eq!(p.get(2000 * 128 + 5), 1);
        assert_eq!(p.get(1500 * 128), 3);
        assert_eq!(p.get(128), 11);
    }
}
