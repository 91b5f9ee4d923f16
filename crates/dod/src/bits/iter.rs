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

impl<S: Bits> FusedIterator for Blocks<S> {}

/// An iterator over the indices of a set, ascending. Made by
/// [`BitSet::iter`](super::BitSet::iter), [`Bits::iter`] and `into_iter` on expressions.
///
/// It caches the current word and takes one index per step with a trailing-zero count and a
/// clear-lowest-bit, the seed's iterator with count-trailing-zeros.
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
        self.blocks.fold_words(acc, |mut acc, base, mut w| {
            while w != 0 {
                acc = f(acc, base + w.trailing_zeros());
                w &= w - 1;
            }
            acc
        })
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
