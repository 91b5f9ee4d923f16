//! `rayon`: parallel iteration over a [`BitSet`] or any bit expression, split on the words of
//! the first summary layer (4 096 indices each), so that empty regions cost nothing to any
//! thread.

use rayon::prelude::*;

use super::{words_for, BitSet, Bits};

/// The indices of `set`, in parallel: one piece per word of the first summary layer, and a
/// piece whose summary word is zero is dropped after one read.
pub(crate) fn par_iter<S>(set: S) -> impl ParallelIterator<Item = u32>
where
    S: Bits + Copy + Send + Sync,
{
    let pieces = words_for(set.universe()).div_ceil(64);
    (0..pieces)
        .into_par_iter()
        .map(move |s| (s, set.summary(0, s)))
        .filter(|&(_, summary)| summary != 0)
        .flat_map_iter(move |(s, mut summary)| {
            let mut base = 0;
            let mut word = 0u64;
            core::iter::from_fn(move || {
                while word == 0 {
                    if summary == 0 {
                        return None;
                    }
                    let w = (s << 6) | summary.trailing_zeros() as usize;
                    summary &= summary - 1;
                    base = w << 6;
                    word = set.word(w);
                }
                let t = word.trailing_zeros() as usize;
                word &= word - 1;
                // Indices are below 2^32 (the universe bound).
                Some((base + t) as u32)
            })
        })
}

impl BitSet {
    /// A parallel iterator over the indices (feature `rayon`). Work is split on summary
    /// words: each piece is 4 096 indices, and a piece with no index costs one word read.
    /// [`Bits::par_iter`] does the same for any expression.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let s: dod::BitSet = (0..10_000).filter(|i| i % 3 == 0).collect();
    /// let sum: u64 = s.par_iter().map(u64::from).sum();
    /// assert_eq!(sum, s.iter().map(u64::from).sum::<u64>());
    /// ```
    pub fn par_iter(&self) -> impl ParallelIterator<Item = u32> + '_ {
        par_iter(self)
    }
}
