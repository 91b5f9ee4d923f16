//! Iterators over any [`Bits`]: the non-zero words ([`Blocks`]) and the indices ([`Iter`]).
//!
//! Both walk the summary layers top-down and keep, per layer, the bits of the current summary
//! word that are still to visit; a word of the set is read only when its summary bit is set.

use core::iter::FusedIterator;

use super::expr::Bits;
use super::{summary_levels, words_for, BitSet, MAX_LEVELS};

/// An iterator over the non-zero words of a set as `(base, word)`: bit `j` of `word` is index
/// `base + j`. Made by [`BitSet::blocks`](super::BitSet::blocks) and [`Bits::blocks`].
///
/// ```
/// let s: dod::BitSet = [0, 63, 64].into_iter().collect();
/// let mut b = s.blocks();
/// assert_eq!(b.next(), Some((0, 1 | 1 << 63)));
/// assert_eq!(b.next(), Some((64, 1)));
/// assert_eq!(b.next(), None);
/// ```
#[derive(Clone, Debug)]
pub struct Blocks<S> {
    set: S,
    levels: usize,
    /// The bits still to visit of the current word of each summary layer.
    masks: [u64; MAX_LEVELS],
    /// The index of the current word of each summary layer.
    prefix: [usize; MAX_LEVELS],
}

impl<S: Bits> Blocks<S> {
    pub(crate) fn new(set: S) -> Self {
        Self::from_word(set, 0)
    }

    /// Starts at word `start` of the set.
    pub(crate) fn from_word(set: S, start: usize) -> Self {
        let words = words_for(set.universe());
        let levels = summary_levels(words);
        let mut b = Blocks {
            set,
            levels,
            masks: [0; MAX_LEVELS],
            prefix: [0; MAX_LEVELS],
        };
        if start >= words {
            return b;
        }
        // Layer 0 keeps the bit of `start` itself; higher layers keep only the items after the
        // one that holds `start`, whose part at or after `start` the lower layers cover.
        for level in 0..levels {
            let idx = start.checked_shr(6 * (level as u32 + 1)).unwrap_or(0);
            let bit = start.checked_shr(6 * level as u32).unwrap_or(0) & 63;
            let keep = if level == 0 {
                u64::MAX << bit
            } else {
                u64::MAX.checked_shl(bit as u32 + 1).unwrap_or(0)
            };
            b.prefix[level] = idx;
            b.masks[level] = b.set.summary(level, idx) & keep;
        }
        b
    }
}

impl<S: Bits> Iterator for Blocks<S> {
    type Item = (u32, u64);

    #[inline]
    fn next(&mut self) -> Option<(u32, u64)> {
        loop {
            let mut level = 0;
            while self.masks[level] == 0 {
                level += 1;
                if level >= self.levels {
                    return None;
                }
            }
            let m = self.masks[level];
            self.masks[level] = m & (m - 1);
            let idx = (self.prefix[level] << 6) | m.trailing_zeros() as usize;
            if level == 0 {
                let w = self.set.word(idx);
                if w != 0 {
                    return Some(((idx << 6) as u32, w));
                }
            } else {
                self.prefix[level - 1] = idx;
                self.masks[level - 1] = self.set.summary(level - 1, idx);
            }
        }
    }

    #[inline]
    fn fold<Acc, F: FnMut(Acc, (u32, u64)) -> Acc>(self, init: Acc, mut f: F) -> Acc {
        self.fold_words(init, |acc, base, w| f(acc, (base, w)))
    }
}

impl<S: Bits> Blocks<S> {
    /// Pops summary bits above layer 0 until a layer-0 summary word is loaded into
    /// `masks[0]`; `false` when nothing is left.
    #[inline]
    fn refill_first_layer(&mut self) -> bool {
        loop {
            let mut level = 1;
            while level < self.levels && self.masks[level] == 0 {
                level += 1;
            }
            if level >= self.levels {
                return false;
            }
            let m = self.masks[level];
            self.masks[level] = m & (m - 1);
            let idx = (self.prefix[level] << 6) | m.trailing_zeros() as usize;
            self.prefix[level - 1] = idx;
            self.masks[level - 1] = self.set.summary(level - 1, idx);
            if level == 1 && self.masks[0] != 0 {
                return true;
            }
        }
    }

    /// Internal iteration: a tight loop over the words of each layer-0 summary word, which is
    /// what dense sets spend their time in.
    #[inline]
    pub(crate) fn fold_words<Acc>(
        mut self,
        init: Acc,
        mut f: impl FnMut(Acc, u32, u64) -> Acc,
    ) -> Acc {
        let mut acc = init;
        loop {
            let mut m = self.masks[0];
            let base = self.prefix[0] << 6;
            while m != 0 {
                let idx = base | m.trailing_zeros() as usize;
                m &= m - 1;
                let w = self.set.word(idx);
                if w != 0 {
                    // Words exist only below 2^32 / 64 (the universe bound), so the base fits.
                    acc = f(acc, (idx << 6) as u32, w);
                }
            }
            self.masks[0] = 0;
            if !self.refill_first_layer() {
                return acc;
            }
        }
    }
}

impl<S: Bits> Blocks<S> {
    /// Internal iteration over the indices, ascending. The first [`PLAIN_WORDS`] words are
    /// walked a bit at a time, so that a small set is done before the gathering buffer (whose
    /// zeroing costs a small fold more than its walk) is set up; the rest goes to
    /// [`fold_gathered`](Self::fold_gathered).
    #[inline]
    pub(crate) fn fold_indices<Acc>(
        mut self,
        init: Acc,
        mut f: impl FnMut(Acc, u32) -> Acc,
    ) -> Acc {
        let mut acc = init;
        let mut words = PLAIN_WORDS;
        loop {
            while self.masks[0] != 0 {
                if words == 0 {
                    return self.fold_gathered(acc, f);
                }
                words -= 1;
                let m = self.masks[0];
                let idx = (self.prefix[0] << 6) | m.trailing_zeros() as usize;
                self.masks[0] = m & (m - 1);
                // Words exist only below 2^32 / 64 (the universe bound), so the base fits.
                let base = (idx << 6) as u32;
                let mut w = self.set.word(idx);
                while w != 0 {
                    acc = f(acc, base + w.trailing_zeros());
                    w &= w - 1;
                }
            }
            if !self.refill_first_layer() {
                return acc;
            }
        }
    }

    /// The rest of [`fold_indices`](Self::fold_indices), without a branch per bit: the
    /// words are unpacked into a buffer of indices (see [`gather_word`]), which `f` then gets
    /// in one loop whose length the branch predictor learns. A word-at-a-time walk (trailing
    /// zeros, clear the lowest bit) spends two dependent operations per bit and mispredicts
    /// about once per word; this does neither.
    #[inline]
    fn fold_gathered<Acc>(mut self, init: Acc, mut f: impl FnMut(Acc, u32) -> Acc) -> Acc {
        let mut hand_out = |acc, gathered: &[u32]| gathered.iter().fold(acc, |acc, &i| f(acc, i));
        let mut acc = init;
        let mut gathered = [0u32; GATHERED];
        let mut len = 0;
        loop {
            let mut m = self.masks[0];
            while m != 0 {
                if len > FLUSH_AT {
                    acc = hand_out(acc, &gathered[..len]);
                    len = 0;
                }
                let idx = (self.prefix[0] << 6) | m.trailing_zeros() as usize;
                m &= m - 1;
                // Words exist only below 2^32 / 64 (the universe bound), so the base fits.
                len = gather_word(&mut gathered, len, (idx << 6) as u32, self.set.word(idx));
            }
            self.masks[0] = 0;
            if !self.refill_first_layer() {
                return hand_out(acc, &gathered[..len]);
            }
        }
    }
}

impl<S: Bits> FusedIterator for Blocks<S> {}

/// Words [`Blocks::fold_indices`] walks a bit at a time before it gathers.
const PLAIN_WORDS: usize = 8;

/// Indices gathered before they are handed out: a word adds at most 64 (and a table step
/// writes 8 lanes past the count), so a gather past [`FLUSH_AT`] is handed out first.
const GATHERED: usize = 320;
const FLUSH_AT: usize = GATHERED - 64;

/// The positions of the set bits of each byte value, ascending, then zeros.
static BYTE_BITS: [[u32; 8]; 256] = byte_bits();
/// The number of set bits of each byte value (a table: `count_ones` is a long sequence of
/// shifts and masks on targets without a population-count instruction, the default one).
static BYTE_COUNTS: [u8; 256] = byte_counts();

const fn byte_bits() -> [[u32; 8]; 256] {
    let mut t = [[0u32; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let (mut k, mut bit) = (0, 0);
        while bit < 8 {
            if b & (1 << bit) != 0 {
                t[b][k] = bit as u32;
                k += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    t
}

const fn byte_counts() -> [u8; 256] {
    let mut c = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        c[b] = (b as u8).count_ones() as u8;
        b += 1;
    }
    c
}

/// Appends to `gathered[..len]` the indices `base + bit` of the set bits of `w`, ascending,
/// and returns the new length. `len + 64` must be at most `gathered.len()`.
///
/// Each form stores without branching on the bits: a word with up to two bits stores two
/// indices (counted only for the bits it has), a word with up to eight stores eight, and
/// a fuller word stores each byte's eight lanes from [`BYTE_BITS`], counted by
/// [`BYTE_COUNTS`]. Lanes past the count are overwritten by the next store or never read.
#[inline(always)]
fn gather_word(gathered: &mut [u32; GATHERED], len: usize, base: u32, w: u64) -> usize {
    let w1 = w & w.wrapping_sub(1);
    let w2 = w1 & w1.wrapping_sub(1);
    if w2 == 0 {
        // `trailing_zeros` of 0 is 64: a store past the word (it wraps at the top of the
        // universe), not counted.
        let lanes: &mut [u32; 2] = (&mut gathered[len..len + 2]).try_into().unwrap();
        lanes[0] = base.wrapping_add(w.trailing_zeros());
        lanes[1] = base.wrapping_add(w1.trailing_zeros());
        return len + usize::from(w != 0) + usize::from(w1 != 0);
    }
    // Up to eight bits: eight stores along the chain of cleared lowest bits.
    let mut rest = [0u64; 8];
    rest[0] = w;
    rest[1] = w1;
    rest[2] = w2;
    for k in 3..8 {
        rest[k] = rest[k - 1] & rest[k - 1].wrapping_sub(1);
    }
    if rest[7] & rest[7].wrapping_sub(1) == 0 {
        let lanes: &mut [u32; 8] = (&mut gathered[len..len + 8]).try_into().unwrap();
        let mut n = len;
        for (lane, &r) in lanes.iter_mut().zip(&rest) {
            *lane = base.wrapping_add(r.trailing_zeros());
            n += usize::from(r != 0);
        }
        return n;
    }
    let mut len = len;
    for k in 0..8 {
        let byte = ((w >> (8 * k)) & 0xff) as usize;
        let at = base + 8 * k as u32;
        let lanes: &mut [u32; 8] = (&mut gathered[len..len + 8]).try_into().unwrap();
        for (lane, &bit) in lanes.iter_mut().zip(&BYTE_BITS[byte]) {
            *lane = at + bit;
        }
        len += usize::from(BYTE_COUNTS[byte]);
    }
    len
}

/// An iterator over the indices of a set, ascending. Made by
/// [`BitSet::iter`](super::BitSet::iter), [`Bits::iter`] and `into_iter` on expressions.
///
/// It caches the current word and takes one index per step with a trailing-zero count and a
/// clear-lowest-bit.
///
/// ```
/// let s: dod::BitSet = [2, 3].into_iter().collect();
/// let mut it = s.iter();
/// assert_eq!(it.next(), Some(2));
/// assert_eq!(it.next(), Some(3));
/// assert_eq!(it.next(), None);
/// ```
#[derive(Clone, Debug)]
pub struct Iter<S> {
    blocks: Blocks<S>,
    base: u32,
    word: u64,
}

impl<S: Bits> Iter<S> {
    pub(crate) fn new(set: S) -> Self {
        Iter {
            blocks: Blocks::new(set),
            base: 0,
            word: 0,
        }
    }

    pub(crate) fn from(set: S, from: u32) -> Self {
        let from = from as usize;
        let (base, word) = if from < set.universe() {
            let w = from >> 6;
            ((w << 6) as u32, set.word(w) & (u64::MAX << (from & 63)))
        } else {
            (0, 0)
        };
        let start = (from >> 6).saturating_add(1);
        Iter {
            blocks: Blocks::from_word(set, start),
            base,
            word,
        }
    }
}

impl<S: Bits> Iterator for Iter<S> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        while self.word == 0 {
            let (base, word) = self.blocks.next()?;
            self.base = base;
            self.word = word;
        }
        let t = self.word.trailing_zeros();
        self.word &= self.word - 1;
        Some(self.base + t)
    }

    #[inline]
    fn fold<Acc, F: FnMut(Acc, u32) -> Acc>(self, init: Acc, mut f: F) -> Acc {
        let mut acc = init;
        let mut w = self.word;
        while w != 0 {
            acc = f(acc, self.base + w.trailing_zeros());
            w &= w - 1;
        }
        self.blocks.fold_indices(acc, f)
    }
}

impl<S: Bits> FusedIterator for Iter<S> {}

/// An iterator over the indices of a set within a range, ascending. Made by
/// [`BitSet::range`](super::BitSet::range).
///
/// ```
/// let s: dod::BitSet = [2, 3, 70, 71].into_iter().collect();
/// let mut it = s.range(3..71);
/// assert_eq!(it.next(), Some(3));
/// assert_eq!(it.next(), Some(70));
/// assert_eq!(it.next(), None);
/// ```
#[derive(Clone, Debug)]
pub struct Range<S> {
    iter: Iter<S>,
    /// Indices at or past it are not yielded; 0 once one was met.
    end: usize,
}

impl<S: Bits> Range<S> {
    /// The indices of `set` in `start..end`.
    pub(crate) fn new(set: S, start: usize, end: usize) -> Self {
        if start >= end {
            return Range {
                iter: Iter::new(set),
                end: 0,
            };
        }
        // `start < end <= 2^32`, so it fits.
        Range {
            iter: Iter::from(set, start as u32),
            end,
        }
    }
}

impl<S: Bits> Iterator for Range<S> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.end == 0 {
            return None;
        }
        match self.iter.next() {
            Some(i) if (i as usize) < self.end => Some(i),
            _ => {
                self.end = 0;
                None
            }
        }
    }
}

impl<S: Bits> FusedIterator for Range<S> {}

/// An iterator that owns a set and yields its indices, ascending. Made by `into_iter` on a
/// [`BitSet`]; each step is O(log₆₄ n) at worst, through the summary layers.
///
/// ```
/// let s: dod::BitSet = [9, 2, 700].into_iter().collect();
/// let mut seen = Vec::new();
/// for i in s {
///     seen.push(i);
/// }
/// assert_eq!(seen, [2, 9, 700]);
/// ```
#[derive(Clone, Debug)]
pub struct IntoIter {
    set: BitSet,
    /// The next index to look from; `None` once the last was yielded.
    from: Option<u32>,
}

impl IntoIter {
    pub(crate) fn new(set: BitSet) -> Self {
        IntoIter { set, from: Some(0) }
    }
}

impl Iterator for IntoIter {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        let found = self.set.next_one(self.from?);
        self.from = found.and_then(|i| i.checked_add(1));
        found
    }

    #[inline]
    fn fold<Acc, F: FnMut(Acc, u32) -> Acc>(self, init: Acc, f: F) -> Acc {
        match self.from {
            Some(from) => self.set.iter_from(from).fold(init, f),
            None => init,
        }
    }
}

impl FusedIterator for IntoIter {}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::*;

    fn xorshift(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// A word with exactly `count` bits set, at random places.
    fn word_with(count: u32, x: &mut u64) -> u64 {
        let mut w = 0u64;
        while w.count_ones() < count {
            w |= 1 << (xorshift(x) % 64);
        }
        w
    }

    fn bits_of(base: u32, w: u64) -> Vec<u32> {
        (0..64)
            .filter(|b| w >> b & 1 == 1)
            .map(|b| base.wrapping_add(b))
            .collect()
    }

    #[test]
    fn byte_tables_list_each_bit_once() {
        for b in 0..256usize {
            let want: Vec<u32> = (0..8).filter(|bit| b >> bit & 1 == 1).collect();
            let n = usize::from(BYTE_COUNTS[b]);
            assert_eq!(BYTE_BITS[b][..n], want[..], "byte {b:#x}");
        }
    }

    #[test]
    fn gather_word_appends_every_bit_in_order_for_every_count() {
        let mut x = 0x9E37_79B9_7F4A_7C15;
        for count in 0..=64 {
            for _ in 0..40 {
                let w = word_with(count, &mut x);
                // At the start, after a few, and at the last length that may gather; at the
                // first word, a middle one and the last word of the largest universe.
                for (len, base) in [(0, 0), (3, 4096), (FLUSH_AT, u32::MAX - 63)] {
                    let mut g = [0u32; GATHERED];
                    for (k, slot) in g.iter_mut().enumerate() {
                        *slot = k as u32 ^ 0x5555;
                    }
                    let before = g;
                    let end = gather_word(&mut g, len, base, w);
                    assert_eq!(g[..len], before[..len], "the gathered are kept");
                    assert_eq!(g[len..end], bits_of(base, w)[..], "{w:#x} at {base}");
                }
            }
        }
    }

    /// A set whose words hold every count of bits from 0 to 64 in turn, so that the fold
    /// hands out its gathered indices in the middle of a summary word and at its end.
    fn every_count(words: usize, seed: u64) -> BitSet {
        let mut x = seed;
        let mut s = BitSet::with_universe(words * 64);
        for i in 0..words {
            let w = word_with((i % 65) as u32, &mut x);
            for b in bits_of((i * 64) as u32, w) {
                s.insert(b);
            }
        }
        s
    }

    fn push(mut v: Vec<u32>, i: u32) -> Vec<u32> {
        v.push(i);
        v
    }

    #[test]
    fn fold_hands_out_what_next_yields_across_every_gather() {
        for (words, seed) in [(1, 1), (65, 2), (300, 3), (4096 + 70, 4)] {
            let s = every_count(words, seed);
            let stepped: Vec<u32> = s.iter().by_ref().collect();
            let from_blocks: Vec<u32> = s.blocks().flat_map(|(base, w)| bits_of(base, w)).collect();
            assert_eq!(stepped, from_blocks);
            assert_eq!(s.iter().fold(Vec::new(), push), stepped, "{words} words");
            let mut each = Vec::new();
            s.for_each(|i| each.push(i));
            assert_eq!(each, stepped);
            // Folds that start after some steps, or from an index, or of an expression.
            for skip in [1, 7, 64, 1000, stepped.len()] {
                let mut it = s.iter();
                it.by_ref().take(skip).for_each(drop);
                let rest = it.fold(Vec::new(), push);
                assert_eq!(rest, stepped[skip.min(stepped.len())..], "skip {skip}");
            }
            for from in [0, 63, 64, 4095, 4096, 5000, (words * 64) as u32] {
                let want: Vec<u32> = stepped.iter().copied().filter(|&i| i >= from).collect();
                assert_eq!(
                    s.iter_from(from).fold(Vec::new(), push),
                    want,
                    "from {from}"
                );
            }
            let t = every_count(words, seed + 100);
            let want: Vec<u32> = s.and(&t).iter().collect();
            assert_eq!(s.and(&t).iter().fold(Vec::new(), push), want);
            let want: Vec<u32> = s.not().iter().collect();
            assert_eq!(s.not().iter().fold(Vec::new(), push), want);
        }
    }
}
