//! `rayon`: parallel iteration over a [`BitSet`], split on the words of its first summary
//! layer (4 096 indices each), so that empty regions cost nothing to any thread.

use rayon::prelude::*;

use super::BitSet;

impl BitSet {
    /// A parallel iterator over the indices. Work is split on summary words: each piece is
    /// 4 096 indices, and a piece with no index costs one word read.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let s: dod::BitSet = (0..10_000).filter(|i| i % 3 == 0).collect();
    /// let sum: u64 = s.par_iter().map(u64::from).sum();
    /// assert_eq!(sum, s.iter().map(u64::from).sum::<u64>());
    /// ```
    pub fn par_iter(&self) -> impl ParallelIterator<Item = u32> + '_ {
        let first = self.any.layer(0);
        (0..first.len())
            .into_par_iter()
            .filter(move |&s| first[s] != 0)
            .flat_map_iter(move |s| {
                let mut summary = first[s];
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
                        word = self.words[w];
                    }
                    let t = word.trailing_zeros() as usize;
                    word &= word - 1;
                    // Indices are below 2^32 (the universe bound).
                    Some((base + t) as u32)
                })
            })
    }
}
