//! A buddy allocator inside one byte buffer (the arena), with every link an offset so the
//! arena stays relocatable.
//!
//! Block sizes are powers of two: a block of order `o` is `MIN_BLOCK << o` bytes and starts at
//! a multiple of its size; the whole arena is one block of order `top`. The buddy of a block
//! is the block whose offset differs only in the bit of its size (`off ^ size`).
//!
//! - **Free lists**, one per order, doubly linked through the free blocks themselves: the first
//!   8 bytes of a free block hold the offsets of the next and previous free blocks
//!   (`NONE` = `u32::MAX`).
//! - **Pair bits**: one bit per buddy pair of each order below `top`, holding
//!   `A is free XOR B is free`. Freeing a block toggles its pair's bit; if the bit becomes 0 the
//!   buddy is free too and the two merge into their parent.
//! - **Split bits**: one bit per block of each order above 0, set while the block is split
//!   into two halves.
//!
//! The bits of all orders live in two vectors, order after order (see [`Starts`]), so that a
//! new allocator (a load, most of all) makes two allocations for them, not two per order.
//!
//! When no block is large enough the arena doubles: the old arena becomes the lower half of
//! the new one.

use alloc::vec;
use alloc::vec::Vec;

/// Bytes of the smallest block (order 0).
pub(crate) const MIN_BLOCK: usize = 32;
pub(crate) const MIN_SHIFT: u32 = 5;
/// Largest order: 32 << 26 = 2 GiB, so every offset and length fits a `u32`.
pub(crate) const MAX_ORDER: u8 = 26;
const ORDERS: usize = MAX_ORDER as usize + 1;
const NONE: u32 = u32::MAX;

#[inline]
pub(crate) const fn block_size(order: u8) -> usize {
    MIN_BLOCK << order
}

/// The smallest order whose blocks hold `bytes`.
#[inline]
pub(crate) fn order_for(bytes: usize) -> u8 {
    let units = bytes.div_ceil(MIN_BLOCK).max(1).next_power_of_two();
    units.trailing_zeros().min(u32::from(u8::MAX)) as u8
}

/// Why a block could not be had.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum AllocError {
    /// The arena would grow past `block_size(MAX_ORDER)` (2 GiB).
    TooLarge,
    /// The heap refused the memory.
    OutOfMemory,
}

#[derive(Clone, Debug)]
pub(crate) struct Buddy {
    /// Empty (no arena yet) or `block_size(top)` bytes.
    pub(crate) arena: Vec<u8>,
    pub(crate) top: u8,
    heads: [u32; ORDERS],
    free_count: [u32; ORDERS],
    /// The pair bits, order after order: one bit per buddy pair of order `o < top`, in the
    /// words from `starts.pairs[o]`.
    pairs: Vec<u64>,
    /// The split bits, order after order: one bit per block of order `o` (those of order 0
    /// unused), in the words from `starts.splits[o]`.
    splits: Vec<u64>,
    /// Where each order's words start in `pairs` and `splits`: [`Starts::of`] `top`.
    starts: Starts,
}

/// Where the bits of each order start in the two bit vectors of an arena of order `top`:
/// order `o` has `2^(top - o) / 2` pair bits and `2^(top - o)` split bits, each rounded up to
/// whole words; entry `o + 1` is where order `o` ends (and, past `top`, the total).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Starts {
    pairs: [u32; ORDERS + 1],
    splits: [u32; ORDERS + 1],
}

impl Starts {
    /// The layout of no arena: no words.
    const EMPTY: Starts = Starts {
        pairs: [0; ORDERS + 1],
        splits: [0; ORDERS + 1],
    };

    /// The layout for an arena of order `top` (at most `MAX_ORDER`: 2^26 split bits of order
    /// 0 make 2^20 words, and all orders together fewer than 2^22, so a `u32` holds them).
    fn of(top: u8) -> Starts {
        let mut s = Starts::EMPTY;
        for o in 0..ORDERS {
            let (pairs, splits) = if o <= usize::from(top) {
                let blocks = 1usize << (usize::from(top) - o);
                ((blocks / 2).div_ceil(64), blocks.div_ceil(64))
            } else {
                (0, 0)
            };
            s.pairs[o + 1] = s.pairs[o] + pairs as u32;
            s.splits[o + 1] = s.splits[o] + splits as u32;
        }
        s
    }

    /// The words of every order: the lengths of the pair and split vectors.
    fn totals(&self) -> (usize, usize) {
        (self.pairs[ORDERS] as usize, self.splits[ORDERS] as usize)
    }
}

/// Copies the words of each order up to `top` from `old`, laid out by `from`, to the front of
/// the order's range in `new`, laid out by `to` (where every order has at least as many).
fn carry(old: &[u64], from: &[u32; ORDERS + 1], new: &mut [u64], to: &[u32; ORDERS + 1], top: u8) {
    for o in 0..=usize::from(top) {
        let (f, t) = (from[o] as usize, to[o] as usize);
        let n = from[o + 1] as usize - f;
        new[t..t + n].copy_from_slice(&old[f..f + n]);
    }
}

#[inline]
fn rd(a: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([a[at], a[at + 1], a[at + 2], a[at + 3]])
}

#[inline]
fn wr(a: &mut [u8], at: usize, v: u32) {
    a[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

impl Buddy {
    pub(crate) const fn new() -> Self {
        Buddy {
            arena: Vec::new(),
            top: 0,
            heads: [NONE; ORDERS],
            free_count: [0; ORDERS],
            pairs: Vec::new(),
            splits: Vec::new(),
            starts: Starts::EMPTY,
        }
    }

    /// An arena of one free block of order `top`.
    pub(crate) fn with_top(top: u8) -> Self {
        Buddy::with_top_in(vec![0; block_size(top)], top)
    }

    /// [`with_top`](Buddy::with_top), or an error if the heap refuses the arena.
    fn try_with_top(top: u8) -> Result<Self, AllocError> {
        let mut arena = Vec::new();
        arena
            .try_reserve_exact(block_size(top))
            .map_err(|_| AllocError::OutOfMemory)?;
        arena.resize(block_size(top), 0);
        Ok(Buddy::with_top_in(arena, top))
    }

    fn with_top_in(arena: Vec<u8>, top: u8) -> Self {
        let mut b = Buddy::bits_only(arena, top);
        b.push_free(0, top);
        b
    }

    /// `arena` with cleared bits and empty free lists.
    fn bits_only(arena: Vec<u8>, top: u8) -> Self {
        let starts = Starts::of(top);
        let (pairs, splits) = starts.totals();
        Buddy {
            arena,
            top,
            heads: [NONE; ORDERS],
            free_count: [0; ORDERS],
            pairs: vec![0; pairs],
            splits: vec![0; splits],
            starts,
        }
    }

    fn push_free(&mut self, off: u32, o: u8) {
        let head = self.heads[o as usize];
        let at = off as usize;
        wr(&mut self.arena, at, head);
        wr(&mut self.arena, at + 4, NONE);
        if head != NONE {
            wr(&mut self.arena, head as usize + 4, off);
        }
        self.heads[o as usize] = off;
        self.free_count[o as usize] += 1;
    }

    fn unlink(&mut self, off: u32, o: u8) {
        let at = off as usize;
        let (next, prev) = (rd(&self.arena, at), rd(&self.arena, at + 4));
        if prev == NONE {
            self.heads[o as usize] = next;
        } else {
            wr(&mut self.arena, prev as usize, next);
        }
        if next != NONE {
            wr(&mut self.arena, next as usize + 4, prev);
        }
        self.free_count[o as usize] -= 1;
    }

    /// Flips the pair bit of the block at `off` of order `o < top`; the new bit.
    fn toggle_pair(&mut self, off: u32, o: u8) -> bool {
        let pair = (off as usize >> (MIN_SHIFT + u32::from(o))) >> 1;
        let w = &mut self.pairs[self.starts.pairs[o as usize] as usize + pair / 64];
        *w ^= 1 << (pair % 64);
        *w & (1 << (pair % 64)) != 0
    }

    fn set_split(&mut self, off: u32, o: u8, split: bool) {
        let i = off as usize >> (MIN_SHIFT + u32::from(o));
        let w = &mut self.splits[self.starts.splits[o as usize] as usize + i / 64];
        if split {
            *w |= 1 << (i % 64);
        } else {
            *w &= !(1 << (i % 64));
        }
    }

    /// Whether the block at `off` of order `o >= 1` is split.
    fn is_split(&self, off: u32, o: u8) -> bool {
        let i = off as usize >> (MIN_SHIFT + u32::from(o));
        self.splits[self.starts.splits[o as usize] as usize + i / 64] & (1 << (i % 64)) != 0
    }

    /// A block of order `order`; the arena doubles as often as needed.
    ///
    /// # Panics
    ///
    /// If the arena would exceed `block_size(MAX_ORDER)` (2 GiB), or the heap refuses the
    /// memory.
    #[track_caller]
    pub(crate) fn alloc(&mut self, order: u8) -> u32 {
        match self.try_alloc(order) {
            Ok(off) => off,
            Err(AllocError::TooLarge) => panic!(
                "DataStore: the buffer would grow past {} bytes (a block of order {order} was \
                 asked for)",
                block_size(MAX_ORDER)
            ),
            Err(AllocError::OutOfMemory) => {
                panic!("DataStore: out of memory growing the buffer")
            }
        }
    }

    /// A block of order `order`, or an error (and no change) if the arena cannot grow enough.
    pub(crate) fn try_alloc(&mut self, order: u8) -> Result<u32, AllocError> {
        if order > MAX_ORDER {
            return Err(AllocError::TooLarge);
        }
        if self.arena.is_empty() {
            *self = Buddy::try_with_top(order.max(7))?;
        }
        let mut o = loop {
            match (order..=self.top).find(|&o| self.heads[o as usize] != NONE) {
                Some(o) => break o,
                None => self.try_grow()?,
            }
        };
        let off = self.heads[o as usize];
        self.unlink(off, o);
        self.arena[off as usize..off as usize + 8].fill(0);
        if o < self.top {
            self.toggle_pair(off, o);
        }
        while o > order {
            self.set_split(off, o, true);
            o -= 1;
            self.push_free(off + block_size(o) as u32, o);
            self.toggle_pair(off, o);
        }
        Ok(off)
    }

    /// Gives back the block at `off` of order `o`, merging it with free buddies.
    pub(crate) fn free(&mut self, mut off: u32, mut o: u8) {
        // A freed block keeps nothing of its component (saved bytes hold only live data).
        self.arena[off as usize..off as usize + block_size(o)].fill(0);
        while o < self.top && !self.toggle_pair(off, o) {
            // The bit went to 0: the buddy is free as well.
            let buddy = off ^ block_size(o) as u32;
            self.unlink(buddy, o);
            // Inside the merged block the buddy's links are stale: free blocks hold zeros.
            self.arena[buddy as usize..buddy as usize + 8].fill(0);
            off = off.min(buddy);
            o += 1;
            self.set_split(off, o, false);
        }
        self.push_free(off, o);
    }

    /// Doubles the arena: the old one becomes the lower half. On an error nothing changes.
    fn try_grow(&mut self) -> Result<(), AllocError> {
        let old = self.top;
        if old >= MAX_ORDER {
            return Err(AllocError::TooLarge);
        }
        let top = old + 1;
        let half = block_size(old) as u32;
        // Everything the growth needs is allocated first, so that it cannot fail half-way.
        let oom = |_| AllocError::OutOfMemory;
        self.arena
            .try_reserve_exact(block_size(top) - self.arena.len())
            .map_err(oom)?;
        let starts = Starts::of(top);
        let (pair_words, split_words) = starts.totals();
        let (mut pairs, mut splits) = (Vec::new(), Vec::new());
        pairs.try_reserve_exact(pair_words).map_err(oom)?;
        splits.try_reserve_exact(split_words).map_err(oom)?;
        // Reserved above: no allocation.
        pairs.resize(pair_words, 0);
        splits.resize(split_words, 0);
        // The old arena is the lower half of the new one: a block keeps its index within its
        // order, so each order's old words are the first of its new ones, and the rest (the
        // upper half's blocks, and the new top order) start clear.
        carry(
            &self.pairs,
            &self.starts.pairs,
            &mut pairs,
            &starts.pairs,
            old,
        );
        carry(
            &self.splits,
            &self.starts.splits,
            &mut splits,
            &starts.splits,
            old,
        );
        self.arena.resize(block_size(top), 0);
        self.top = top;
        (self.pairs, self.splits, self.starts) = (pairs, splits, starts);
        if self.heads[old as usize] == 0 {
            // The whole old arena was free: the new one is a single free block.
            self.unlink(0, old);
            self.arena[..8].fill(0);
            self.push_free(0, top);
        } else {
            self.set_split(0, top, true);
            self.push_free(half, old);
            self.toggle_pair(0, old);
        }
        Ok(())
    }

    /// Frees everything: the arena is zeroed and becomes one free block. Allocates nothing.
    pub(crate) fn reset(&mut self) {
        if self.arena.is_empty() {
            return;
        }
        self.arena.fill(0);
        self.pairs.fill(0);
        self.splits.fill(0);
        self.heads = [NONE; ORDERS];
        self.free_count = [0; ORDERS];
        self.push_free(0, self.top);
    }

    /// Free bytes in all free blocks.
    pub(crate) fn free_bytes(&self) -> usize {
        (0..=self.top)
            .map(|o| self.free_count[o as usize] as usize * block_size(o))
            .sum()
    }

    /// Size of the largest free block (0 if none).
    pub(crate) fn largest_free(&self) -> usize {
        (0..=self.top)
            .rev()
            .find(|&o| self.free_count[o as usize] > 0)
            .map_or(0, block_size)
    }

    /// Heap bytes of the allocator (arena and bits).
    pub(crate) fn memory_usage(&self) -> usize {
        self.arena.capacity() + 8 * (self.pairs.capacity() + self.splits.capacity())
    }

    /// The allocator state of `arena` (of order `top`) whose allocated blocks are `blocks`:
    /// `(offset, order)` pairs, sorted by offset, each aligned to its size and inside the
    /// arena. `Err(i)`: block `i` breaks one of those rules (it overlaps the one before, is
    /// not aligned, or leaves the arena).
    ///
    /// One pass in offset order. The free space between two blocks is the fewest aligned
    /// blocks that tile it, each the largest that starts where the last ended: exactly the
    /// blocks a fully merged allocator holds free, none with a free buddy. So each free block
    /// is listed (in offset order) and toggles its pair's bit, and the split blocks are the
    /// ancestors of the allocated ones, marked from each block up to the first already
    /// marked. O(blocks × orders) at worst, O(blocks) when blocks are dense.
    pub(crate) fn rebuild(arena: Vec<u8>, top: u8, blocks: &[(u32, u8)]) -> Result<Self, usize> {
        let end = block_size(top);
        let mut b = Buddy::bits_only(arena, top);
        let mut pos = 0usize;
        for (i, &(off, o)) in blocks.iter().enumerate() {
            let start = off as usize;
            // `end - start`, not `start + size`: on a 32-bit target the sum could wrap.
            if o > top
                || start % block_size(o) != 0
                || start < pos
                || block_size(o) > end.saturating_sub(start)
            {
                return Err(i);
            }
            b.free_range(pos, start);
            b.split_above(off, o);
            pos = start + block_size(o);
        }
        b.free_range(pos, end);
        Ok(b)
    }

    /// Lists `[from, to)` (both multiples of `MIN_BLOCK`, inside the arena, no block in it)
    /// as free: at each offset, the largest block aligned there that fits.
    fn free_range(&mut self, mut from: usize, to: usize) {
        while from < to {
            let aligned = if from == 0 {
                self.top
            } else {
                (from.trailing_zeros() - MIN_SHIFT).min(u32::from(self.top)) as u8
            };
            let fits = ((to - from) >> MIN_SHIFT).ilog2() as u8;
            let o = aligned.min(fits);
            self.push_free(from as u32, o);
            if o < self.top {
                // Its buddy holds an allocated block (see `rebuild`): the pair differs.
                self.toggle_pair(from as u32, o);
            }
            from += block_size(o);
        }
    }

    /// Marks the ancestors of the block at `off` of order `o` split, from its parent up to
    /// the first one already marked (whose ancestors are, too).
    fn split_above(&mut self, off: u32, o: u8) {
        for p in o + 1..=self.top {
            let at = off & !(block_size(p) as u32 - 1);
            if self.is_split(at, p) {
                break;
            }
            self.set_split(at, p, true);
        }
    }

    /// Checks the allocator's own invariants (tests and fuzzing).
    pub(crate) fn check(&self, used: &[(u32, u8)]) {
        // Every byte is in exactly one free or used block.
        let mut cover = vec![0u8; self.arena.len() / MIN_BLOCK];
        let mark = |cover: &mut Vec<u8>, off: u32, o: u8| {
            let s = off as usize / MIN_BLOCK;
            for c in &mut cover[s..s + (1 << o)] {
                assert_eq!(*c, 0, "block {off} of order {o} overlaps");
                *c = 1;
            }
        };
        let mut free = Vec::new();
        for o in 0..=self.top {
            let mut at = self.heads[o as usize];
            let mut prev = NONE;
            let mut n = 0;
            while at != NONE {
                assert_eq!(at as usize % block_size(o), 0);
                assert_eq!(rd(&self.arena, at as usize + 4), prev);
                mark(&mut cover, at, o);
                free.push((at, o));
                prev = at;
                at = rd(&self.arena, at as usize);
                n += 1;
            }
            assert_eq!(n, self.free_count[o as usize]);
        }
        for &(off, o) in used {
            mark(&mut cover, off, o);
        }
        assert!(cover.iter().all(|&c| c == 1), "every byte accounted for");
        // No two free buddies (they would have merged); pair bits and split bits agree.
        for &(off, o) in &free {
            if o < self.top {
                let buddy = off ^ block_size(o) as u32;
                assert!(
                    !free.contains(&(buddy, o)),
                    "free buddies {off}, {buddy} of order {o}"
                );
            }
        }
        let is_free = |off: u32, o: u8| free.contains(&(off, o));
        for o in 0..self.top {
            for pair in 0..(1usize << (self.top - o)) / 2 {
                let a = (pair * 2 * block_size(o)) as u32;
                let b = a + block_size(o) as u32;
                let word = self.pairs[self.starts.pairs[o as usize] as usize + pair / 64];
                let bit = word & (1 << (pair % 64)) != 0;
                let parent_split = self.is_split(a, o + 1);
                if parent_split {
                    assert_eq!(bit, is_free(a, o) ^ is_free(b, o), "pair bit {a} order {o}");
                } else {
                    assert!(!bit, "pair bit of an unsplit parent");
                }
            }
        }
        for &(off, o) in free.iter().chain(used) {
            if o >= 1 {
                assert!(!self.is_split(off, o));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The naive model of `rebuild`: descend from the whole arena, splitting every node that
    /// holds more than one block or a smaller one, listing every node that holds none.
    fn rebuild_by_descent(arena: Vec<u8>, top: u8, blocks: &[(u32, u8)]) -> Buddy {
        fn build(b: &mut Buddy, off: u32, o: u8, blocks: &[(u32, u8)]) -> bool {
            match blocks {
                [] => {
                    b.push_free(off, o);
                    return true;
                }
                [(bo, bord)] if *bo == off && *bord == o => return false,
                _ => {}
            }
            assert!(o > 0 && blocks[0].1 < o, "blocks overlap or are misaligned");
            b.set_split(off, o, true);
            let mid = off + block_size(o - 1) as u32;
            let cut = blocks.partition_point(|&(bo, _)| bo < mid);
            let l = build(b, off, o - 1, &blocks[..cut]);
            let r = build(b, mid, o - 1, &blocks[cut..]);
            if l != r {
                b.toggle_pair(off, o - 1);
            }
            false
        }
        let mut b = Buddy::bits_only(arena, top);
        build(&mut b, 0, top, blocks);
        b
    }

    fn same_state(a: &Buddy, b: &Buddy) {
        assert_eq!(a.top, b.top);
        assert_eq!(a.heads, b.heads, "free-list heads");
        assert_eq!(a.free_count, b.free_count);
        assert_eq!(a.starts, b.starts, "bit layout");
        assert_eq!(a.pairs, b.pairs, "pair bits");
        assert_eq!(a.splits, b.splits, "split bits");
        assert!(a.arena == b.arena, "arena bytes (free-list links)");
    }

    #[test]
    fn rebuild_matches_the_descent_for_random_layouts() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let rounds = if cfg!(miri) { 20 } else { 2_000 };
        for _ in 0..rounds {
            let top = next(9) as u8;
            // Random aligned blocks, kept when they do not overlap the ones already kept.
            let mut blocks: Vec<(u32, u8)> = Vec::new();
            let tries = next(1 << top.min(6)) + 1;
            for _ in 0..tries {
                let o = next(u64::from(top) + 1) as u8;
                let off = (next(1 << (top - o)) as usize * block_size(o)) as u32;
                let (s, e) = (off as usize, off as usize + block_size(o));
                if blocks
                    .iter()
                    .all(|&(bo, bord)| e <= bo as usize || s >= bo as usize + block_size(bord))
                {
                    blocks.push((off, o));
                }
            }
            blocks.sort_unstable();
            let arena = vec![0xA5; block_size(top)];
            let fast = Buddy::rebuild(arena.clone(), top, &blocks).expect("a valid layout");
            fast.check(&blocks);
            same_state(&fast, &rebuild_by_descent(arena, top, &blocks));
        }
    }

    #[test]
    fn rebuild_names_the_block_that_breaks_the_layout() {
        let arena = vec![0; block_size(4)];
        // Misaligned, past the end, an order above the arena's, overlapping the one before.
        assert_eq!(
            Buddy::rebuild(arena.clone(), 4, &[(0, 0), (32, 1)]).err(),
            Some(1)
        );
        assert_eq!(Buddy::rebuild(arena.clone(), 4, &[(512, 0)]).err(), Some(0));
        assert_eq!(Buddy::rebuild(arena.clone(), 4, &[(0, 5)]).err(), Some(0));
        assert_eq!(
            Buddy::rebuild(arena.clone(), 4, &[(0, 2), (64, 0)]).err(),
            Some(1)
        );
        assert!(Buddy::rebuild(arena, 4, &[(0, 2), (128, 0)]).is_ok());
    }

    #[test]
    fn orders() {
        assert_eq!(order_for(0), 0);
        assert_eq!(order_for(32), 0);
        assert_eq!(order_for(33), 1);
        assert_eq!(order_for(64), 1);
        assert_eq!(order_for(65), 2);
    }

    #[test]
    fn alloc_free_merge_grow() {
        let mut b = Buddy::new();
        let mut used: Vec<(u32, u8)> = Vec::new();
        let mut seed = 12345u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for step in 0..if cfg!(miri) { 300 } else { 3000 } {
            let r = next();
            if r % 3 != 0 || used.is_empty() {
                let o = (next() % 5) as u8;
                let off = b.alloc(o);
                used.push((off, o));
            } else {
                let i = (next() as usize) % used.len();
                let (off, o) = used.swap_remove(i);
                b.free(off, o);
            }
            if step % 97 == 0 {
                b.check(&used);
                let mut sorted = used.clone();
                sorted.sort();
                let r = Buddy::rebuild(b.arena.clone(), b.top, &sorted).unwrap();
                r.check(&used);
                assert_eq!(r.free_bytes(), b.free_bytes());
                // The bits follow from which blocks are free, however the allocator got
                // there: the ones carried through every growth equal the rebuilt ones.
                assert_eq!(r.starts, b.starts);
                assert_eq!(r.pairs, b.pairs, "pair bits at step {step}");
                assert_eq!(r.splits, b.splits, "split bits at step {step}");
            }
        }
        for (off, o) in used.drain(..) {
            b.free(off, o);
        }
        b.check(&[]);
        assert_eq!(b.largest_free(), b.arena.len());
    }

    #[test]
    fn rebuild_rejects_overlap() {
        let arena = vec![0; block_size(3)];
        assert!(Buddy::rebuild(arena.clone(), 3, &[(0, 1), (32, 0)]).is_err());
        assert!(Buddy::rebuild(arena.clone(), 3, &[(0, 3), (64, 0)]).is_err());
        assert!(Buddy::rebuild(arena, 3, &[(0, 0), (64, 1)]).is_ok());
    }
}
