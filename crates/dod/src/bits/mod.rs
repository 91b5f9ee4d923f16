//! [`BitSet`]: a growable set of indices over `u64` words, with summary layers, and lazy
//! expressions over bit sets ([`Bits`]: `and`, `or`, `and_not`, `xor`, `not`, also written
//! `&`, `|`, `-`, `^`, `!`).
//!
//! # Layout
//!
//! - `words: Vec<u64>`: bit `j` of word `w` is index `64 * w + j` (least significant bit
//!   first, on every platform). The vector may be longer than the universe needs (its
//!   *capacity*); every bit at or past the universe is zero (padding bits).
//! - Two *summaries* of the words, each a stack of layers in which one bit stands for 64 bits
//!   of the layer below (a cascading hierarchy):
//!   - `any`: bit `w` of its first layer is set iff `words[w] != 0`. Walking a sparse set skips
//!     64 empty words per clear summary bit, 4 096 per clear bit of the next layer, and so on;
//!     [`BitSet::first`] and [`BitSet::last`] descend it from either side.
//!   - `free`: bit `w` of its first layer is set iff `words[w] != u64::MAX`, so that the first
//!     zero bit ([`BitSet::first_zero`], claiming a free slot) is found in O(log₆₄ n) word reads,
//!     not by a scan.
//!
//!   A layer has as many words as needed for the layer below, and layers are added until the
//!   top one is a single word; the summary of no words is one layer of no words, so that
//!   [`BitSet::new`] allocates nothing.
//!
//! # Invariants
//!
//! 1. Every bit at index `>= universe` is zero.
//! 2. For each summary and each layer `l`, bit `i` of layer `l + 1` is set iff word `i` of
//!    layer `l` is non-zero; layer 0 is as described above, for every `w < words.len()`, and has
//!    no bit set for `w >= words.len()`; with one exception:
//! 3. `unsummarized` is `usize::MAX` or a word that is not full and whose bit in `free` is
//!    clear: `free` describes the words as if that one were full. A word that stops being full
//!    while no other is deferred becomes `unsummarized` instead of touching `free`, and leaves
//!    it when it fills again, so that clearing a bit and setting it again (a pool removing an
//!    item and filling the hole) costs no summary update. The zero searches take the smaller
//!    of what `free` finds and this word: still O(log₆₄ n). The deferred word lies before
//!    the universe's last word: a truncation that reaches it ends the deferral, so that an
//!    append (which writes only the last word) never fills it.
//! 4. `universe <= max_index + 1` (and `<= 2³²`): the universe grows only on the cold path of
//!    `insert` and in the methods that grow on purpose, and each checks the bound first, so
//!    that an index above it never allocates. Lowering the bound truncates the universe.
//! 5. `universe <= 64 * words.len()`, and both summaries are laid out (layers, their starts
//!    and lengths) for `words.len()` words, laid out again whenever `words.len()` changes:
//!    this holds even while their bits are stale (inside a batch `extend`). `insert` reads
//!    the word and its layer-0 summary word without a bounds check on the strength of it.
//! 6. One more exception to 2: when the universe is a multiple of 64 and its last word is
//!    full, that word's bit in `free` may still be set. Appending indices one by one (a pool
//!    appending slots) then fills a word without touching `free`, and pays one summary update
//!    per word (when the next word gets its first bit) instead of two. The zero searches
//!    read that word's bits before they trust its summary bit. Growing the universe past the
//!    word, or deferring it (invariant 3), brings its bit up to date first.
//!
//! # Memory
//!
//! One bit per index of the capacity, plus two summaries of 1/64 + 1/4096 + … bit each: about
//! **0.129 bytes per index** (1.032 bits). A set holding only index 10 000 000 takes 1.25 MB of
//! words and 40 KB of summaries; one holding `u32::MAX` takes 512 MiB of words and 16 MiB of
//! summaries, which [`BitSet::max_index`] bounds.

mod expr;
mod iter;
#[cfg(feature = "rayon")]
mod rayon;
#[cfg(feature = "serde")]
mod serde;

use alloc::alloc::{handle_alloc_error, Layout};
use alloc::collections::TryReserveError;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::ops::{Bound, RangeBounds};

use crate::error::{InsertError, InsertErrorKind};
use crate::hint::unlikely;

pub use expr::{And, AndNot, Bits, Not, Or, Xor};
pub use iter::{Blocks, IntoIter, Iter, Range};

/// Words needed for `universe` bits.
#[inline]
const fn words_for(universe: usize) -> usize {
    universe.div_ceil(64)
}

/// The word that holds the last index of `universe` (word 0 for an empty universe): the word a
/// deferral must lie before (invariant 3).
#[inline]
const fn last_word(universe: usize) -> usize {
    words_for(universe).saturating_sub(1)
}

/// How many summary layers a set of `words` words has: enough for the top layer to be one word.
#[inline]
pub(crate) const fn summary_levels(words: usize) -> usize {
    let mut n = words.div_ceil(64);
    let mut levels = 1;
    while n > 1 {
        n = n.div_ceil(64);
        levels += 1;
    }
    levels
}

/// Reports a failed allocation of `words` words the way `Vec` does: `handle_alloc_error`.
#[cold]
fn alloc_failed(words: usize) -> ! {
    match Layout::array::<u64>(words) {
        Ok(layout) => handle_alloc_error(layout),
        Err(_) => panic!("BitSet: capacity overflow"),
    }
}

/// A stack of layers over `n` items: bit `i` of layer 0 says something about item `i`, bit `i`
/// of layer `l + 1` says whether word `i` of layer `l` is non-zero. All layers live in one
/// vector, layer `l` at `bits[starts[l]..starts[l + 1]]`, so an update computes its addresses
/// without chasing pointers. The summary of no items is [`Summary::EMPTY`]: one layer of no
/// words, on no heap memory.
#[derive(Clone)]
struct Summary {
    bits: Vec<u64>,
    starts: [usize; MAX_LEVELS + 1],
    levels: usize,
}

/// Enough summary layers for any `usize` index: 64^11 > 2^64.
pub(crate) const MAX_LEVELS: usize = 11;

impl Summary {
    /// The summary of no items: one layer of no words.
    const EMPTY: Summary = Summary {
        bits: Vec::new(),
        starts: [0; MAX_LEVELS + 1],
        levels: 1,
    };

    /// Builds the summary of `n` items whose layer-0 bit is `bit(i)`.
    fn build(n: usize, bit: impl Fn(usize) -> bool) -> Self {
        match Self::try_build(n, bit) {
            Ok(s) => s,
            Err(_) => {
                let (starts, levels) = Self::layout(n);
                alloc_failed(starts[levels])
            }
        }
    }

    /// The start of each layer and the number of layers for `n > 0` items.
    fn layout(n: usize) -> ([usize; MAX_LEVELS + 1], usize) {
        let mut starts = [0usize; MAX_LEVELS + 1];
        let mut levels = 0;
        let mut items = n;
        loop {
            let words = items.div_ceil(64).max(1);
            starts[levels + 1] = starts[levels] + words;
            levels += 1;
            if words == 1 {
                return (starts, levels);
            }
            items = words;
        }
    }

    /// [`build`](Summary::build), or the error if its words cannot be allocated.
    fn try_build(n: usize, bit: impl Fn(usize) -> bool) -> Result<Self, TryReserveError> {
        if n == 0 {
            return Ok(Summary::EMPTY);
        }
        let (starts, levels) = Self::layout(n);
        let mut bits = Vec::new();
        bits.try_reserve_exact(starts[levels])?;
        bits.resize(starts[levels], 0u64);
        Self::fill(&mut bits, &starts, levels, n, bit);
        Ok(Summary {
            bits,
            starts,
            levels,
        })
    }

    /// Rebuilds the summary of the same `n` items it was built for, in place (no
    /// allocation), from their new layer-0 bits.
    fn refill(&mut self, n: usize, bit: impl Fn(usize) -> bool) {
        if n == 0 {
            return;
        }
        debug_assert_eq!(Self::layout(n), (self.starts, self.levels));
        Self::fill(&mut self.bits, &self.starts, self.levels, n, bit);
    }

    /// Writes every word of the layers `bits` (laid out by `starts` for `n > 0` items) from
    /// `bit`, whatever they held.
    fn fill(
        bits: &mut [u64],
        starts: &[usize; MAX_LEVELS + 1],
        levels: usize,
        n: usize,
        bit: impl Fn(usize) -> bool,
    ) {
        // A word of each layer is gathered in a register from its 64 items, with no branch
        // on their bits (which a full rebuild after a batch would mispredict).
        for (k, out) in bits[..n.div_ceil(64)].iter_mut().enumerate() {
            let base = k << 6;
            *out = (base..n.min(base + 64)).fold(0, |acc, i| acc | u64::from(bit(i)) << (i & 63));
        }
        for l in 1..levels {
            let (below, above) = bits.split_at_mut(starts[l]);
            let below = &below[starts[l - 1]..];
            for (out, chunk) in above.iter_mut().zip(below.chunks(64)) {
                *out = chunk
                    .iter()
                    .enumerate()
                    .fold(0, |acc, (j, &w)| acc | u64::from(w != 0) << j);
            }
        }
    }

    /// The single word of the top layer (zero for the summary of no items).
    #[inline]
    fn top(&self) -> u64 {
        self.bits
            .get(self.starts[self.levels - 1])
            .copied()
            .unwrap_or(0)
    }

    /// Layer `l`.
    #[inline]
    fn layer(&self, l: usize) -> &[u64] {
        &self.bits[self.starts[l]..self.starts[l + 1]]
    }

    /// Sets the bit of item `i`: one word per layer, going up only while the word below was
    /// empty before.
    #[inline(always)]
    fn set(&mut self, i: usize) {
        self.set_from(0, i);
    }

    /// Sets the bit of item `i` of layer `l` (a word of layer `l - 1`, or an item for
    /// `l == 0`), going up while the word below was empty before; nothing when `l` is past
    /// the top layer.
    #[inline(always)]
    fn set_from(&mut self, mut l: usize, mut i: usize) {
        if l >= self.levels {
            return;
        }
        loop {
            let word = &mut self.bits[self.starts[l] + (i >> 6)];
            let was = *word;
            *word = was | 1 << (i & 63);
            l += 1;
            if was != 0 || l == self.levels {
                return;
            }
            i >>= 6;
        }
    }

    /// Clears the bit of item `i`: one word per layer, going up only while the word below
    /// became empty.
    #[inline(always)]
    fn clear(&mut self, i: usize) {
        self.clear_from(0, i);
    }

    /// Clears the bit of item `i` of layer `l`, going up while the word below became empty;
    /// nothing when `l` is past the top layer.
    #[inline(always)]
    fn clear_from(&mut self, mut l: usize, mut i: usize) {
        if l >= self.levels {
            return;
        }
        loop {
            let word = &mut self.bits[self.starts[l] + (i >> 6)];
            let now = *word & !(1 << (i & 63));
            *word = now;
            l += 1;
            if now != 0 || l == self.levels {
                return;
            }
            i >>= 6;
        }
    }

    /// The first item at or after `i` whose bit is set.
    #[inline]
    fn next(&self, i: usize) -> Option<usize> {
        let mut level = 0;
        let mut pos = i;
        loop {
            let idx = pos >> 6;
            let m = *self.layer(level).get(idx)? & (u64::MAX << (pos & 63));
            if m != 0 {
                pos = (idx << 6) | m.trailing_zeros() as usize;
                break;
            }
            level += 1;
            if level == self.levels {
                return None;
            }
            pos = idx + 1;
        }
        while level > 0 {
            level -= 1;
            pos = (pos << 6) | self.bits[self.starts[level] + pos].trailing_zeros() as usize;
        }
        Some(pos)
    }

    /// The first item whose bit is set: one descent from the top layer, a word read and a
    /// trailing-zero count per layer.
    #[inline]
    fn first(&self) -> Option<usize> {
        let t = self.top();
        if t == 0 {
            return None;
        }
        let mut pos = t.trailing_zeros() as usize;
        for l in (0..self.levels - 1).rev() {
            pos = (pos << 6) | self.bits[self.starts[l] + pos].trailing_zeros() as usize;
        }
        Some(pos)
    }

    /// The last item whose bit is set: the reverse of [`first`](Summary::first), one descent
    /// from the top layer with a leading-zero count per layer.
    #[inline]
    fn last(&self) -> Option<usize> {
        let t = self.top();
        if t == 0 {
            return None;
        }
        let mut pos = 63 - t.leading_zeros() as usize;
        for l in (0..self.levels - 1).rev() {
            pos = (pos << 6) | (63 - self.bits[self.starts[l] + pos].leading_zeros() as usize);
        }
        Some(pos)
    }

    /// Word `i` of layer `level`, in the canonical layout of [`Bits::summary`]: layers past
    /// the top repeat the top as a single bit.
    #[inline]
    fn word(&self, level: usize, i: usize) -> u64 {
        if level < self.levels {
            self.layer(level).get(i).copied().unwrap_or(0)
        } else {
            u64::from(i == 0 && self.top() != 0)
        }
    }

    fn heap_bytes(&self) -> usize {
        self.bits.len() * 8
    }
}

/// A growable set of indices stored as bits, with summary layers that make walking a sparse
/// set and finding a free slot fast.
///
/// The set has a *universe*: every index in it is below [`universe`](BitSet::universe), and
/// [`not`](BitSet::not) read whole is the complement within it (inside an expression, a
/// complement holds every index: `&a & !&b` is `a - b`). [`insert`](BitSet::insert) grows the
/// universe when needed; [`grow`](BitSet::grow) and [`truncate`](BitSet::truncate) change it
/// explicitly. Bits past the universe are always zero. Two sets are equal when they hold the
/// same indices, whatever their universes, capacities and bounds.
///
/// The universe never grows past [`max_index`](BitSet::max_index)` + 1` (by default every
/// `u32`): the bound on the memory an untrusted index can make the set allocate. Past it,
/// the growing methods panic and [`try_insert`](BitSet::try_insert) and
/// [`try_grow`](BitSet::try_grow) return an error without allocating.
///
/// Lazy expressions over sets (`a.and(&b).and_not(&c)`, or `&a & &b`) never allocate; see
/// [`Bits`].
///
/// | operation | cost |
/// |---|---|
/// | `insert`, `remove`, `toggle`, `contains`, `is_empty` | O(1) (a summary update is O(log₆₄ n) at worst, and rare) |
/// | `count` | O(non-empty words) |
/// | `first`, `last`, `first_zero`, `next_zero`, `next_one`, `claim` | O(log₆₄ n) |
/// | iteration | O(set bits + non-empty words), empty regions are skipped 4 096 indices at a time or more |
/// | `insert_range`, `remove_range`, `count_range` | O(range / 64) |
/// | `is_subset`, `is_superset`, `is_disjoint` | O(non-empty words), stopping at the first witness |
/// | `clear`, in-place `*_with`, `grow` past the capacity | O(n / 64) |
///
/// Memory: about 0.129 bytes per index of the capacity (1 bit, plus 1/64 bit for each of the
/// two summaries). The capacity grows by doubling (never past the bound), so a set grown one
/// index at a time holds up to twice its universe until [`shrink_to_fit`](Self::shrink_to_fit).
/// Memory follows the largest index, not the count: `insert(u32::MAX)` asks for 512 MiB of
/// words and 16 MiB of summaries.
///
/// # Example
///
/// ```
/// use dod::BitSet;
///
/// let mut bullets = BitSet::new();
/// let mut lasers = BitSet::new();
/// bullets.extend([1, 4, 9, 200]);
/// lasers.extend([4, 200, 300]);
/// let both: Vec<u32> = bullets.and(&lasers).into_iter().collect();
/// assert_eq!(both, [4, 200]);
/// assert!((&bullets & &lasers).into_iter().eq(both.iter().copied()));
/// assert_eq!(bullets.count(), 4);
/// assert_eq!(bullets.first_zero(), Some(0));
/// assert_eq!((bullets.first(), bullets.last()), (Some(1), Some(200)));
/// ```
#[derive(Clone)]
pub struct BitSet {
    words: Vec<u64>,
    universe: usize,
    any: Summary,
    free: Summary,
    /// The one word that is not full but has no bit in `free` (invariant 3), or `NONE`.
    unsummarized: usize,
    /// The largest index the universe may grow to hold (invariant 4).
    max_index: u32,
}

/// No word deferred from the "any clear" summary.
const NONE: usize = usize::MAX;

/// The largest universe: every `u32` index (2³²), or as many bits as a `usize` counts on a
/// 32-bit target.
pub(crate) const MAX_UNIVERSE: usize = if usize::BITS > 32 {
    1 << 32
} else {
    usize::MAX
};

/// Panics if `universe` is above [`MAX_UNIVERSE`].
#[track_caller]
pub(crate) fn check_universe(universe: usize) {
    assert!(
        universe <= MAX_UNIVERSE,
        "BitSet universe {universe} is above 2^32: indices are u32"
    );
}

/// Why [`BitSet::try_grow`] did not grow the set. The set is unchanged.
///
/// ```
/// use dod::bits::GrowError;
/// let mut s = dod::BitSet::new().with_max_index(99);
/// assert_eq!(s.try_grow(100), Ok(()));
/// let err = s.try_grow(101).unwrap_err();
/// assert_eq!(err, GrowError::AboveMax { universe: 101, max_index: 99 });
/// assert_eq!(err.to_string(), "BitSet universe 101 would hold index 100, above max_index 99");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GrowError {
    /// The universe asked for would hold an index above [`BitSet::max_index`] (every universe
    /// above 2³² does).
    AboveMax {
        /// The universe that was asked for.
        universe: usize,
        /// The set's [`max_index`](BitSet::max_index).
        max_index: u32,
    },
    /// The words or the summaries could not be allocated.
    OutOfMemory(TryReserveError),
}

impl fmt::Display for GrowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GrowError::AboveMax {
                universe,
                max_index,
            } => write!(
                f,
                "BitSet universe {universe} would hold index {}, above max_index {max_index}",
                universe - 1
            ),
            GrowError::OutOfMemory(e) => write!(f, "BitSet out of memory: {e}"),
        }
    }
}

impl core::error::Error for GrowError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            GrowError::AboveMax { .. } => None,
            GrowError::OutOfMemory(e) => Some(e),
        }
    }
}

impl From<TryReserveError> for GrowError {
    fn from(e: TryReserveError) -> Self {
        GrowError::OutOfMemory(e)
    }
}

/// Panics because `index` is above the bound `max`.
#[cold]
#[track_caller]
fn above_max(index: usize, max: u32) -> ! {
    if let Ok(index) = u32::try_from(index) {
        panic!("BitSet: {}", InsertErrorKind::IndexAboveMax { index, max })
    }
    panic!("BitSet: index {index} is above 2^32 - 1: indices are u32")
}

/// `[start, end)` of `range` as `usize`, with an unbounded end at `unbounded_end`.
#[inline]
fn bounds(range: &impl RangeBounds<u32>, unbounded_end: usize) -> (usize, usize) {
    let start = match range.start_bound() {
        Bound::Included(&s) => s as usize,
        Bound::Excluded(&s) => (s as usize).saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => (e as usize).saturating_add(1),
        Bound::Excluded(&e) => e as usize,
        Bound::Unbounded => unbounded_end,
    };
    (start, end)
}

/// The bits `lo..=hi` of a word.
#[inline]
const fn span(lo: usize, hi: usize) -> u64 {
    (u64::MAX << lo) & (u64::MAX >> (63 - hi))
}

impl Default for BitSet {
    fn default() -> Self {
        BitSet::new()
    }
}

impl BitSet {
    /// An empty set with universe 0 and no bound below `u32::MAX`. Allocates nothing (until
    /// the first insertion) and is `const`, so it can initialise a `static` or a `const`.
    /// O(1).
    ///
    /// ```
    /// use dod::BitSet;
    /// const EMPTY: BitSet = BitSet::new();
    /// let s = EMPTY;
    /// assert!(s.is_empty());
    /// assert_eq!(s.universe(), 0);
    /// assert_eq!(s.memory_usage(), 0);
    /// assert_eq!((s.first(), s.last(), s.first_zero()), (None, None, None));
    /// ```
    pub const fn new() -> Self {
        BitSet {
            words: Vec::new(),
            universe: 0,
            any: Summary::EMPTY,
            free: Summary::EMPTY,
            unsummarized: NONE,
            max_index: u32::MAX,
        }
    }

    /// An empty set with universe `universe` (indices `0..universe` can be held without
    /// growing). O(universe / 64).
    ///
    /// # Panics
    ///
    /// If `universe` is above 2³² (indices are `u32`). `BitSet::new().try_grow(universe)` is
    /// the fallible form.
    ///
    /// ```
    /// use dod::Bits;
    /// let s = dod::BitSet::with_universe(100);
    /// assert_eq!(s.universe(), 100);
    /// assert_eq!(s.not().count(), 100);
    /// ```
    #[track_caller]
    pub fn with_universe(universe: usize) -> Self {
        let mut s = BitSet::new();
        s.grow(universe);
        s
    }

    /// A set of the indices `0..universe` all present. O(universe / 64).
    ///
    /// # Panics
    ///
    /// If `universe` is above 2³² (indices are `u32`). `try_grow(universe)` then
    /// [`insert_range(..)`](BitSet::insert_range) on a new set is the fallible form.
    ///
    /// ```
    /// let s = dod::BitSet::full(70);
    /// assert_eq!(s.count(), 70);
    /// assert_eq!(s.first_zero(), None);
    /// ```
    #[track_caller]
    pub fn full(universe: usize) -> Self {
        check_universe(universe);
        let mut words = vec![u64::MAX; words_for(universe)];
        if universe % 64 != 0 {
            if let Some(last) = words.last_mut() {
                *last = (1u64 << (universe % 64)) - 1;
            }
        }
        Self::from_words_unchecked(words, universe)
    }

    /// Builds the set from words whose bits past `universe` are zero, `universe <= 2^32`
    /// (checked by the callers).
    fn from_words_unchecked(words: Vec<u64>, universe: usize) -> Self {
        debug_assert!(words.len() >= words_for(universe) && universe <= MAX_UNIVERSE);
        let mut s = BitSet {
            words,
            universe,
            any: Summary::EMPTY,
            free: Summary::EMPTY,
            unsummarized: NONE,
            max_index: u32::MAX,
        };
        s.rebuild_summaries();
        s
    }

    fn rebuild_summaries(&mut self) {
        let words = &self.words;
        self.any = Summary::build(words.len(), |w| words[w] != 0);
        self.free = Summary::build(words.len(), |w| words[w] != u64::MAX);
        self.unsummarized = NONE;
    }

    /// The universe: every index in the set is below it. O(1).
    ///
    /// ```
    /// let mut s = dod::BitSet::new();
    /// s.insert(9);
    /// assert_eq!(s.universe(), 10);
    /// ```
    #[inline]
    pub fn universe(&self) -> usize {
        self.universe
    }

    /// The largest index the set accepts: the universe never grows past `max_index() + 1`.
    /// `u32::MAX` (no bound) unless set with [`set_max_index`](BitSet::set_max_index) or
    /// [`with_max_index`](BitSet::with_max_index). O(1).
    ///
    /// ```
    /// let s = dod::BitSet::new();
    /// assert_eq!(s.max_index(), u32::MAX);
    /// assert_eq!(s.with_max_index(1000).max_index(), 1000);
    /// ```
    #[inline]
    pub fn max_index(&self) -> u32 {
        self.max_index
    }

    /// Bounds the set to the indices `0..=max`: from now on, growing the universe past
    /// `max + 1` panics ([`insert`](BitSet::insert), [`grow`](BitSet::grow), ...) or is an
    /// error ([`try_insert`](BitSet::try_insert), [`try_grow`](BitSet::try_grow)), so an
    /// untrusted index can make the set allocate at most `(max + 1) / 8` bytes of words and
    /// 1/32 of that for the summaries. A universe already past `max + 1` is
    /// [truncated](BitSet::truncate) to it, removing the indices above `max`. The capacity
    /// stays. O(removed range / 64).
    ///
    /// ```
    /// let mut s: dod::BitSet = [3, 700].into_iter().collect();
    /// s.set_max_index(500);
    /// assert_eq!(s.iter().collect::<Vec<_>>(), [3]);
    /// assert_eq!(s.universe(), 501);
    /// assert!(s.try_insert(501).is_err());
    /// assert_eq!(s.try_insert(500), Ok(true));
    /// ```
    pub fn set_max_index(&mut self, max: u32) {
        self.max_index = max;
        self.truncate(self.bound());
    }

    /// The set with its [`max_index`](BitSet::max_index) set to `max` (see
    /// [`set_max_index`](BitSet::set_max_index)), as a builder. O(removed range / 64).
    ///
    /// ```
    /// let mut s = dod::BitSet::new().with_max_index(63);
    /// s.insert(63);
    /// assert!(s.try_insert(64).is_err());
    /// assert_eq!(s.memory_usage(), 8 + 8 + 8); // one word and two one-word summaries
    /// ```
    pub fn with_max_index(mut self, max: u32) -> Self {
        self.set_max_index(max);
        self
    }

    /// Whether the universe can grow to hold `index` by a store alone: `index` is within the
    /// words already allocated and the bound. The bits past the universe are zero and the
    /// summaries cover every word (invariants 1, 2 and 5), so nothing else changes.
    #[inline(always)]
    fn grows_by_a_store(&self, index: usize) -> bool {
        index < self.words.len() << 6 && index <= self.max_index as usize
    }

    /// The largest universe the bound allows: `max_index + 1` (or [`MAX_UNIVERSE`]).
    #[inline]
    fn bound(&self) -> usize {
        (self.max_index as usize)
            .saturating_add(1)
            .min(MAX_UNIVERSE)
    }

    /// How many indices the set can hold without reallocating (a multiple of 64). O(1).
    ///
    /// ```
    /// let s = dod::BitSet::with_universe(100);
    /// assert!(s.capacity() >= 100);
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        self.words.len() * 64
    }

    /// The number of indices in the set: a population count of every non-empty word, found
    /// through the summary, so O(non-empty words) ≤ O(n / 64). (No running count is kept:
    /// it would put a serial dependency into every `insert` and `remove`.)
    ///
    /// ```
    /// let s: dod::BitSet = [3, 5, 8].into_iter().collect();
    /// assert_eq!(s.count(), 3);
    /// ```
    #[inline]
    pub fn count(&self) -> usize {
        Bits::count(self)
    }

    /// Whether the set holds no index. O(1): one read of the top summary word.
    ///
    /// ```
    /// let mut s = dod::BitSet::with_universe(10);
    /// assert!(s.is_empty());
    /// s.insert(2);
    /// assert!(!s.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.any.first().is_none()
    }

    /// Whether `index` is in the set (`false` past the universe). O(1).
    ///
    /// ```
    /// let mut s = dod::BitSet::new();
    /// s.insert(4);
    /// assert!(s.contains(4));
    /// assert!(!s.contains(5));
    /// assert!(!s.contains(u32::MAX));
    /// ```
    #[inline]
    pub fn contains(&self, index: u32) -> bool {
        let index = index as usize;
        // Bits past the universe are zero, so the capacity check is the only one needed.
        self.words
            .get(index >> 6)
            .is_some_and(|w| w & (1 << (index & 63)) != 0)
    }

    /// Adds `index`; returns `true` if it was not already present. Grows the universe to
    /// `index + 1` if needed. O(1) amortized; the bound is checked only when the universe
    /// grows.
    ///
    /// Memory follows the largest index: one bit per index below it plus ~1/32 of that for
    /// the summaries, so `insert(u32::MAX)` asks for 512 MiB. For untrusted indices, set a
    /// [`max_index`](BitSet::max_index) and use [`try_insert`](BitSet::try_insert).
    ///
    /// # Panics
    ///
    /// If `index` is above [`max_index`](BitSet::max_index) (and so past the universe).
    ///
    /// ```
    /// let mut s = dod::BitSet::new();
    /// assert!(s.insert(7));
    /// assert!(!s.insert(7));
    /// assert_eq!(s.universe(), 8);
    /// ```
    #[inline]
    #[track_caller]
    #[allow(unsafe_code)]
    pub fn insert(&mut self, index: u32) -> bool {
        let index = index as usize;
        if index >= self.universe {
            return self.insert_past_universe(index);
        }
        // SAFETY: `index` is below the universe.
        unsafe { self.insert_bit(index) }
    }

    /// [`insert`](BitSet::insert) of an index at or past the universe, out of line so that
    /// an insertion within it falls through to the word's update.
    #[inline(never)]
    #[track_caller]
    #[allow(unsafe_code)]
    fn insert_past_universe(&mut self, index: usize) -> bool {
        // Appending the next index (a world tagging its newest entity) grows the universe by
        // a store.
        if self.grows_by_a_store(index) {
            self.settle_last_word();
            self.universe = index + 1;
        } else {
            self.grow_for(index);
        }
        // SAFETY: the universe holds `index`: it grew to above it.
        unsafe { self.insert_bit(index) }
    }

    /// Sets the bit of `index` for [`insert`](BitSet::insert), where indices come in any
    /// order: the word's bit in `any` is set on every call (after the call the word is not
    /// empty, whatever it was), with no branch on whether the word was empty. Such a branch
    /// waits on the word's load, which for random indices is a cache miss, and at low density
    /// it goes either way at random: each misprediction throws away the inserts the processor
    /// had started after it. What still branches is predictable: whether the `any` word was
    /// empty (a 64th of the words, in cache) and whether the word is now full (rare unless
    /// the set is dense).
    ///
    /// # Safety
    ///
    /// `index < universe`.
    #[inline]
    #[allow(unsafe_code)]
    unsafe fn insert_bit(&mut self, index: usize) -> bool {
        debug_assert!(index < self.universe);
        let w = index >> 6;
        // SAFETY: `index < universe` (the caller's contract) `<= 64 * words.len()`
        // (invariant 5).
        let word = unsafe { self.words.get_unchecked_mut(w) };
        let old = *word;
        let new = old | 1u64 << (index & 63);
        *word = new;
        let s = w >> 6;
        // SAFETY: the summaries are laid out for `words.len() > w` words (invariant 5, which
        // holds while their bits are stale too): layer 0 of `any` starts at 0 and has
        // `words.len().div_ceil(64)` words, so it has word `w / 64`.
        let summary = unsafe { self.any.bits.get_unchecked_mut(s) };
        let any_old = *summary;
        *summary = any_old | 1u64 << (w & 63);
        if (any_old == 0) | (new == u64::MAX) {
            self.insert_summaries(w, any_old == 0, new);
        }
        old != new
    }

    /// The summary updates of [`insert_bit`](BitSet::insert_bit) past `any`'s first layer:
    /// its word over `w` was empty (if `any_up`), or `w` is now full. Out of line, as
    /// `set_summaries`.
    #[inline(never)]
    fn insert_summaries(&mut self, w: usize, any_up: bool, new: u64) {
        if any_up {
            self.any.set_from(1, w >> 6);
        }
        if new == u64::MAX {
            self.summarize_full(w);
        }
    }

    /// Grows the universe to hold `index`, or panics naming the index and the bound.
    #[cold]
    #[track_caller]
    fn grow_for(&mut self, index: usize) {
        if index >= self.bound() {
            above_max(index, self.max_index);
        }
        self.grow(index + 1);
    }

    /// Adds `index` like [`insert`](BitSet::insert), but returns an error instead of
    /// panicking or aborting: [`IndexAboveMax`](InsertErrorKind::IndexAboveMax) without
    /// allocating if `index` is above [`max_index`](BitSet::max_index), and
    /// [`OutOfMemory`](InsertErrorKind::OutOfMemory) if the words or summaries it needs cannot
    /// be allocated. In both cases the set is unchanged. O(1) amortized.
    ///
    /// ```
    /// use dod::{BitSet, InsertErrorKind};
    /// let mut s = BitSet::new().with_max_index(1 << 20);
    /// assert_eq!(s.try_insert(5), Ok(true));
    /// assert_eq!(s.try_insert(5), Ok(false));
    /// let before = s.memory_usage();
    /// let err = s.try_insert(u32::MAX).unwrap_err();
    /// assert_eq!(err.kind(), InsertErrorKind::IndexAboveMax { index: u32::MAX, max: 1 << 20 });
    /// assert_eq!(err.into_inner(), u32::MAX);
    /// assert_eq!(s.memory_usage(), before);
    /// ```
    #[allow(unsafe_code)]
    pub fn try_insert(&mut self, index: u32) -> Result<bool, InsertError<u32>> {
        let i = index as usize;
        if i >= self.universe {
            let kind = if i >= self.bound() {
                InsertErrorKind::IndexAboveMax {
                    index,
                    max: self.max_index,
                }
            } else {
                match self.try_grow(i + 1) {
                    // SAFETY: the universe grew to `i + 1`.
                    Ok(()) => return Ok(unsafe { self.insert_bit(i) }),
                    Err(_) => InsertErrorKind::OutOfMemory,
                }
            };
            return Err(InsertError::new(kind, index));
        }
        // SAFETY: `i` is below the universe (tested above).
        Ok(unsafe { self.insert_bit(i) })
    }

    /// Grows the universe by one and sets the new index `index`, which is the universe before
    /// the call, as `insert(index)` does with one check fewer: a pool appending a slot.
    ///
    /// The set must be unbounded (`max_index` is `u32::MAX`, as a pool's alive set is, which
    /// no path bounds): every index the universe can reach is then at most `max_index`, so the
    /// bound check `insert` makes cannot fail, and only the slow path, which grows the words,
    /// checks what it must.
    #[inline]
    pub(crate) fn push_set(&mut self, index: usize) {
        debug_assert_eq!(index, self.universe);
        debug_assert_eq!(self.max_index, u32::MAX, "push_set on a bounded set");
        let w = index >> 6;
        match self.words.get_mut(w) {
            // As in `insert`: the bits past the universe are zero and summarised.
            Some(word) => {
                let old = *word;
                *word = old | 1u64 << (index & 63);
                // Stored before the call, so that no register holds it across: with the store
                // after it, the append measured 12 % slower.
                self.universe = index + 1;
                // A word this fills keeps its bit in `free` (invariant 6); it is brought up to
                // date here, when the next word gets its first bit, or when the universe grows
                // another way.
                if old == 0 {
                    self.push_set_first(w);
                }
            }
            _ => self.push_set_slow(index),
        }
    }

    /// The summary updates of [`push_set`](BitSet::push_set) when word `w` got its first bit:
    /// its bit in `any`, and the bit in `free` of the word before it, which an append may have
    /// filled (invariant 6; the universe already holds `w`, so this is not
    /// `settle_last_word`). Out of line, as `set_summaries`.
    #[inline(never)]
    fn push_set_first(&mut self, w: usize) {
        self.any.set(w);
        if w > 0 && self.words[w - 1] == u64::MAX {
            self.summarize_full(w - 1);
        }
    }

    /// Brings the `free` bit of the universe's last word up to date if it is full (invariant
    /// 6), before the universe grows past it.
    #[inline]
    fn settle_last_word(&mut self) {
        if self.universe % 64 == 0 && self.universe > 0 {
            let w = (self.universe >> 6) - 1;
            if self.words[w] == u64::MAX {
                self.summarize_full(w);
            }
        }
    }

    /// Whether word `w` is the last of a universe that is a multiple of 64: the one word whose
    /// bit in `free` may be set while it is full (invariant 6).
    #[inline]
    fn ends_universe(&self, w: usize) -> bool {
        (w + 1) << 6 == self.universe
    }

    /// [`push_set`](BitSet::push_set) when the words must grow (or the bound refuses).
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn push_set_slow(&mut self, index: usize) {
        self.grow_for(index);
        self.set_bit(index);
    }

    /// Sets the bit of `index < universe`.
    #[inline]
    pub(crate) fn set_bit(&mut self, index: usize) -> bool {
        let w = index >> 6;
        let old = self.words[w];
        let new = old | 1u64 << (index & 63);
        // Branch-free on whether the bit was set: that branch is what a random insert
        // would mispredict. A summary changes only when the word crosses empty or full, and
        // its update is inline: a pool that removes one item and inserts one crosses "full"
        // on every call.
        self.words[w] = new;
        if (old == 0) | (new == u64::MAX) {
            self.summarize_set(w, old, new);
        }
        old != new
    }

    /// The summary updates of `set_bit`: the deferred word filling up again (a pool refilling
    /// the hole it just made) is a store, inline; the rest is a call.
    #[inline(always)]
    fn summarize_set(&mut self, w: usize, old: u64, new: u64) {
        if old != 0 && w == self.unsummarized {
            // `new` is full: the word leaves the deferral, its bit in `free` already clear
            // (invariant 3).
            self.unsummarized = NONE;
        } else {
            self.set_summaries(w, old, new);
        }
    }

    /// The summary updates after word `w` went from `old` to `new` by setting bits; out of
    /// line so that the common case stays a load, an `or` and a store and saves no registers,
    /// with the layer walks inline so that it is one call.
    #[inline(never)]
    fn set_summaries(&mut self, w: usize, old: u64, new: u64) {
        if old == 0 {
            self.any.set(w);
        }
        if new == u64::MAX {
            self.summarize_full(w);
        }
    }

    /// Word `w` is full (it was, or a bit set just filled it): its bit in `free` is cleared, or
    /// the deferral ends if it is the deferred word, whose bit is already clear. Inline in the
    /// out-of-line summary updates of `set_bit` and `insert_bit`.
    #[inline(always)]
    fn summarize_full(&mut self, w: usize) {
        if w == self.unsummarized {
            self.unsummarized = NONE;
        } else {
            // Also reached when the bit was already set in a full word: clearing the summary
            // bit again changes nothing.
            self.free.clear(w);
        }
    }

    /// Removes `index`; returns `true` if it was present. The universe does not change. O(1).
    ///
    /// ```
    /// let mut s: dod::BitSet = [1, 2].into_iter().collect();
    /// assert!(s.remove(1));
    /// assert!(!s.remove(1));
    /// assert!(!s.remove(1000)); // past the universe: nothing to remove
    /// ```
    #[inline]
    pub fn remove(&mut self, index: u32) -> bool {
        let index = index as usize;
        if index >= self.universe {
            return false;
        }
        self.clear_bit(index)
    }

    /// Clears the bit of `index < universe`; returns whether it was set.
    #[inline]
    pub(crate) fn clear_bit(&mut self, index: usize) -> bool {
        let w = index >> 6;
        let old = self.words[w];
        let new = old & !(1u64 << (index & 63));
        self.words[w] = new;
        // Marked unlikely so that the summary code is laid out away from the common path: a
        // pool removing items in random order crosses "full" or "empty" twice per 64 calls,
        // and with the summary code in line its removals ran 1.1-1.2x slower. A set whose
        // every removal empties a word (one bit per word) pays for the jump instead.
        if unlikely((old == u64::MAX) | (new == 0)) {
            if old == 0 {
                // The bit was absent from an empty word, whose summary bits are right
                // already: a world removing a rare tag from every entity it despawns.
            } else if new != 0 && self.unsummarized == NONE && !self.ends_universe(w) {
                // A full word that stays non-empty: deferred (invariant 3) by a store,
                // inline, as `clear_summaries` would. Not the universe's last word, whose
                // bit in `free` may be set (invariant 6).
                self.unsummarized = w;
            } else {
                self.clear_summaries(w, old, new);
            }
        }
        old != new
    }

    /// The summary updates after word `w` went from `old` to `new` by clearing bits; out of
    /// line, as in `set_summaries`.
    #[inline(never)]
    fn clear_summaries(&mut self, w: usize, old: u64, new: u64) {
        if old == u64::MAX {
            if self.unsummarized == NONE && !self.ends_universe(w) {
                self.unsummarized = w;
            } else {
                self.free.set(w);
            }
        }
        if new == 0 {
            // Also reached when the word was already empty: clearing the summary bit again
            // changes nothing.
            self.any.clear(w);
        }
    }

    /// Flips `index` and returns whether it is now present. Grows the universe to `index + 1`
    /// if needed. O(1) amortized.
    ///
    /// # Panics
    ///
    /// If `index` is absent and above [`max_index`](BitSet::max_index), as
    /// [`insert`](BitSet::insert).
    ///
    /// ```
    /// let mut s = dod::BitSet::new();
    /// assert!(s.toggle(3));
    /// assert!(!s.toggle(3));
    /// assert!(s.is_empty());
    /// ```
    #[inline]
    #[track_caller]
    pub fn toggle(&mut self, index: u32) -> bool {
        if self.contains(index) {
            self.remove(index);
            false
        } else {
            self.insert(index);
            true
        }
    }

    /// Sets `index` to `value`; returns whether the set changed. O(1) amortized.
    ///
    /// # Panics
    ///
    /// If `value` is `true` and `index` is above [`max_index`](BitSet::max_index), as
    /// [`insert`](BitSet::insert).
    ///
    /// ```
    /// let mut s = dod::BitSet::new();
    /// assert!(s.set(5, true));
    /// assert!(!s.set(5, true));
    /// assert!(s.set(5, false));
    /// ```
    #[inline]
    #[track_caller]
    pub fn set(&mut self, index: u32, value: bool) -> bool {
        if value {
            self.insert(index)
        } else {
            self.remove(index)
        }
    }

    /// Removes every index; the universe and the capacity stay. O(capacity / 64).
    ///
    /// ```
    /// let mut s: dod::BitSet = (0..100).collect();
    /// s.clear();
    /// assert!(s.is_empty());
    /// assert_eq!(s.universe(), 100);
    /// ```
    pub fn clear(&mut self) {
        self.words.fill(0);
        // The summaries keep their layout (the words do not change in number): refilled in
        // place rather than built anew, so a clear allocates nothing.
        let n = self.words.len();
        self.any.refill(n, |_| false);
        self.free.refill(n, |_| true);
        self.unsummarized = NONE;
    }

    /// Grows the universe to `universe` if it is smaller (the new indices are absent). O(1)
    /// amortized: the capacity at least doubles when it must grow (never past the bound), and
    /// the summaries are rebuilt then, in O(capacity / 64).
    ///
    /// # Panics
    ///
    /// If `universe` would hold an index above [`max_index`](BitSet::max_index) (every
    /// universe above 2³² does). [`try_grow`](BitSet::try_grow) is the fallible form.
    ///
    /// ```
    /// let mut s = dod::BitSet::new();
    /// s.grow(130);
    /// assert_eq!(s.universe(), 130);
    /// assert_eq!(s.first_zero(), Some(0));
    /// s.grow(10); // never shrinks
    /// assert_eq!(s.universe(), 130);
    /// ```
    #[track_caller]
    pub fn grow(&mut self, universe: usize) {
        if universe <= self.universe {
            return;
        }
        if universe > self.bound() {
            above_max(universe - 1, self.max_index);
        }
        self.settle_last_word();
        let need = words_for(universe);
        if need > self.words.len() && self.try_grow_words(need).is_err() {
            alloc_failed(need);
        }
        self.universe = universe;
    }

    /// Makes room for the indices below `universe` (at most the bound) without growing the
    /// universe, so that growing it that far later allocates nothing: the words past the
    /// universe are zero and summarised, as after a growth. For a pool reserving the flags of
    /// the slots it reserves. On an error nothing changed.
    pub(crate) fn try_reserve_universe(&mut self, universe: usize) -> Result<(), TryReserveError> {
        let need = words_for(universe.min(self.bound()));
        if need > self.words.len() {
            self.try_grow_words(need)?;
        }
        Ok(())
    }

    /// [`try_reserve_universe`](BitSet::try_reserve_universe), aborting as `grow` does if the
    /// memory cannot be had.
    pub(crate) fn reserve_universe(&mut self, universe: usize) {
        if self.try_reserve_universe(universe).is_err() {
            alloc_failed(words_for(universe.min(self.bound())));
        }
    }

    /// Grows the universe to `universe` like [`grow`](BitSet::grow), but returns an error
    /// instead of panicking or aborting: [`GrowError::AboveMax`] without allocating if
    /// `universe` would hold an index above [`max_index`](BitSet::max_index), and
    /// [`GrowError::OutOfMemory`] if the words or the summaries cannot be allocated. On error
    /// the set is unchanged. O(1) amortized, as `grow`.
    ///
    /// ```
    /// use dod::bits::GrowError;
    /// let mut s = dod::BitSet::new();
    /// assert_eq!(s.try_grow(1000), Ok(()));
    /// assert_eq!(s.universe(), 1000);
    /// assert!(matches!(s.try_grow(usize::MAX), Err(GrowError::AboveMax { .. })));
    /// assert_eq!(s.universe(), 1000);
    /// ```
    pub fn try_grow(&mut self, universe: usize) -> Result<(), GrowError> {
        if universe <= self.universe {
            return Ok(());
        }
        if universe > self.bound() {
            return Err(GrowError::AboveMax {
                universe,
                max_index: self.max_index,
            });
        }
        let need = words_for(universe);
        if need > self.words.len() {
            self.try_grow_words(need)?;
        }
        self.settle_last_word();
        self.universe = universe;
        Ok(())
    }

    /// Grows the words to at least `need` (`need <= words_for(bound)`), doubling the
    /// capacity if memory allows, and rebuilds the summaries. On error nothing changed.
    #[cold]
    fn try_grow_words(&mut self, need: usize) -> Result<(), TryReserveError> {
        let len = self.words.len();
        let doubled = need.max(len.saturating_mul(2)).min(words_for(self.bound()));
        let cap = if self.words.try_reserve_exact(doubled - len).is_ok() {
            doubled
        } else {
            self.words.try_reserve_exact(need - len)?;
            need
        };
        // Reserved above: no allocation.
        self.words.resize(cap, 0);
        let words = &self.words;
        let summaries = Summary::try_build(cap, |w| words[w] != 0).and_then(|any| {
            Summary::try_build(cap, |w| words[w] != u64::MAX).map(|free| (any, free))
        });
        match summaries {
            Ok((any, free)) => {
                self.any = any;
                self.free = free;
                self.unsummarized = NONE;
                Ok(())
            }
            Err(e) => {
                self.words.truncate(len);
                Err(e)
            }
        }
    }

    /// Shrinks the universe to `universe` if it is larger, removing the indices at or past it.
    /// The capacity stays (see [`shrink_to_fit`](BitSet::shrink_to_fit)). O(removed range / 64).
    ///
    /// ```
    /// let mut s: dod::BitSet = [1, 64, 65, 200].into_iter().collect();
    /// s.truncate(65);
    /// assert_eq!(s.iter().collect::<Vec<_>>(), [1, 64]);
    /// assert_eq!(s.universe(), 65);
    /// ```
    pub fn truncate(&mut self, universe: usize) {
        if universe >= self.universe {
            return;
        }
        let first = universe >> 6;
        let end = words_for(self.universe);
        for w in first..end {
            let old = self.words[w];
            let new = if w == first && universe % 64 != 0 {
                old & ((1u64 << (universe % 64)) - 1)
            } else {
                0
            };
            if new != old {
                self.words[w] = new;
                if new == 0 {
                    self.any.clear(w);
                }
                if old == u64::MAX {
                    self.free.set(w);
                }
            }
        }
        // A deferred word the cut reached, or that is now the last word: summarised again
        // (invariant 3), not full, so its bit in `free` is set.
        if self.unsummarized != NONE && self.unsummarized >= last_word(universe) {
            self.free.set(self.unsummarized);
            self.unsummarized = NONE;
        }
        self.universe = universe;
    }

    /// Releases the capacity past the universe. O(universe / 64).
    ///
    /// ```
    /// let mut s = dod::BitSet::with_universe(10_000);
    /// s.truncate(10);
    /// s.shrink_to_fit();
    /// assert_eq!(s.capacity(), 64);
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.words.truncate(words_for(self.universe));
        self.words.shrink_to_fit();
        self.rebuild_summaries();
    }

    /// The bytes this set owns on the heap: words and both summaries. O(log₆₄ n).
    ///
    /// ```
    /// let mut s = dod::BitSet::new();
    /// s.insert(10_000_000);
    /// assert!(s.memory_usage() <= 1_300_000);
    /// ```
    pub fn memory_usage(&self) -> usize {
        self.words.len() * 8 + self.any.heap_bytes() + self.free.heap_bytes()
    }

    /// The words: bit `j` of word `w` is index `64 * w + j`. Covers the universe exactly
    /// (`universe.div_ceil(64)` words); the bits past the universe are zero. O(1).
    ///
    /// ```
    /// let s: dod::BitSet = [0, 65].into_iter().collect();
    /// assert_eq!(s.as_words(), [1, 2]);
    /// ```
    #[inline]
    pub fn as_words(&self) -> &[u64] {
        &self.words[..words_for(self.universe)]
    }

    /// A set from words (bit `j` of word `w` is index `64 * w + j`) and a universe, or `None`
    /// if `words` is not exactly `universe.div_ceil(64)` long, has a bit set at or past the
    /// universe, or the universe is above 2³². O(words). Its `max_index` is `u32::MAX`.
    ///
    /// ```
    /// use dod::BitSet;
    /// let s = BitSet::from_words(vec![0b101], 3).unwrap();
    /// assert_eq!(s.iter().collect::<Vec<_>>(), [0, 2]);
    /// assert!(BitSet::from_words(vec![0b1000], 3).is_none()); // index 3 is past the universe
    /// assert!(BitSet::from_words(vec![0, 0], 3).is_none()); // one word too many
    /// ```
    pub fn from_words(words: Vec<u64>, universe: usize) -> Option<Self> {
        if universe > MAX_UNIVERSE || words.len() != words_for(universe) {
            return None;
        }
        if universe % 64 != 0 {
            let last = words[words.len() - 1];
            if last >> (universe % 64) != 0 {
                return None;
            }
        }
        Some(Self::from_words_unchecked(words, universe))
    }

    /// The smallest index in the set (`BTreeSet::first`). O(log₆₄ n): one descent through
    /// the summary.
    ///
    /// ```
    /// let s: dod::BitSet = [70, 9].into_iter().collect();
    /// assert_eq!(s.first(), Some(9));
    /// assert_eq!(dod::BitSet::new().first(), None);
    /// ```
    #[inline]
    pub fn first(&self) -> Option<u32> {
        let w = self.any.first()?;
        Some(((w << 6) | self.words[w].trailing_zeros() as usize) as u32)
    }

    /// The largest index in the set (`BTreeSet::last`). O(log₆₄ n): one descent through the
    /// summary, from the right.
    ///
    /// ```
    /// let mut s: dod::BitSet = [70, 9, 5000].into_iter().collect();
    /// assert_eq!(s.last(), Some(5000));
    /// s.remove(5000);
    /// assert_eq!(s.last(), Some(70));
    /// assert_eq!(s.universe(), 5001); // the universe stays
    /// ```
    #[inline]
    pub fn last(&self) -> Option<u32> {
        let w = self.any.last()?;
        Some(((w << 6) | (63 - self.words[w].leading_zeros() as usize)) as u32)
    }

    /// The smallest index `>= from` in the set. O(log₆₄ n).
    ///
    /// ```
    /// let s: dod::BitSet = [3, 5000].into_iter().collect();
    /// assert_eq!(s.next_one(4), Some(5000));
    /// assert_eq!(s.next_one(5001), None);
    /// ```
    #[inline]
    pub fn next_one(&self, from: u32) -> Option<u32> {
        let from = from as usize;
        if from >= self.universe {
            return None;
        }
        let w = from >> 6;
        let m = self.words[w] & (u64::MAX << (from & 63));
        if m != 0 {
            return Some(((w << 6) | m.trailing_zeros() as usize) as u32);
        }
        let w = self.any.next(w + 1)?;
        Some(((w << 6) | self.words[w].trailing_zeros() as usize) as u32)
    }

    /// The smallest index below the universe that is not in the set: the first free slot.
    /// O(log₆₄ n), through the "any clear" summary.
    ///
    /// ```
    /// let mut s = dod::BitSet::full(1000);
    /// s.remove(777);
    /// assert_eq!(s.first_zero(), Some(777));
    /// s.insert(777);
    /// assert_eq!(s.first_zero(), None); // full
    /// ```
    #[inline]
    pub fn first_zero(&self) -> Option<u32> {
        self.zero_named_by_summary(self.free.first().unwrap_or(NONE).min(self.unsummarized))
    }

    /// The first zero of word `w`, the first word that `free` or the deferral names (or
    /// `NONE`), if it is below the universe. A full word is the universe's full last word
    /// (invariant 6), with no zero before it; bits past the universe are zero, so a zero found
    /// there means none is below it.
    #[inline]
    fn zero_named_by_summary(&self, w: usize) -> Option<u32> {
        if w == NONE {
            return None;
        }
        let zeros = !self.words[w];
        if zeros == 0 {
            return None;
        }
        let index = (w << 6) | zeros.trailing_zeros() as usize;
        (index < self.universe).then_some(index as u32)
    }

    /// The smallest index `>= from` and below the universe that is not in the set.
    /// O(log₆₄ n).
    ///
    /// ```
    /// let s: dod::BitSet = (0..200).filter(|&i| i != 150).collect();
    /// assert_eq!(s.next_zero(10), Some(150));
    /// assert_eq!(s.next_zero(151), None);
    /// ```
    #[inline]
    pub fn next_zero(&self, from: u32) -> Option<u32> {
        let from = from as usize;
        if from >= self.universe {
            return None;
        }
        let w = from >> 6;
        let m = !self.words[w] & (u64::MAX << (from & 63));
        if m != 0 {
            let index = (w << 6) | m.trailing_zeros() as usize;
            // Bits past the universe are zero, so a zero found there means none is below it.
            return (index < self.universe).then_some(index as u32);
        }
        let mut next = self.free.next(w + 1).unwrap_or(NONE);
        if self.unsummarized > w {
            next = next.min(self.unsummarized);
        }
        self.zero_named_by_summary(next)
    }

    /// The smallest index `>= from` and below the universe that is not in the set, if it is in
    /// the word of `from`: the first step of [`next_zero`](BitSet::next_zero), without the
    /// summary walk, for callers that keep a good starting point.
    #[inline]
    pub(crate) fn next_zero_in_word(&self, from: usize) -> Option<usize> {
        let word = *self.words.get(from >> 6)?;
        let m = !word & (u64::MAX << (from & 63));
        if m == 0 {
            return None;
        }
        let index = (from & !63) | m.trailing_zeros() as usize;
        // Bits past the universe are zero, so a zero found there means none is below it.
        (index < self.universe).then_some(index)
    }

    /// Inserts the smallest absent index and returns it: claims a free slot. When every index
    /// of the universe is present, the universe grows by one and that new index is claimed.
    /// O(log₆₄ n) amortized.
    ///
    /// # Panics
    ///
    /// If the set holds every index up to [`max_index`](BitSet::max_index).
    ///
    /// ```
    /// let mut s: dod::BitSet = [0, 1, 3].into_iter().collect();
    /// assert_eq!(s.claim(), 2);
    /// assert_eq!(s.claim(), 4);
    /// ```
    #[inline]
    #[track_caller]
    pub fn claim(&mut self) -> u32 {
        match self.first_zero() {
            Some(i) => {
                self.set_bit(i as usize);
                i
            }
            None => {
                if self.universe >= self.bound() {
                    panic!(
                        "BitSet::claim: every index up to max_index {} is in the set",
                        self.max_index
                    );
                }
                // Below the bound, so below 2^32.
                let i = self.universe as u32;
                self.insert(i);
                i
            }
        }
    }

    /// Adds every index of `range`, a word at a time. A non-empty range with a bounded end
    /// past the universe grows the universe to that end; an unbounded end stops at the
    /// universe, so `insert_range(..)` fills the universe without growing it; an empty range
    /// (`100..100`) changes nothing. O(range / 64), plus the growth.
    ///
    /// # Panics
    ///
    /// If a non-empty range ends above [`max_index`](BitSet::max_index) (a bounded end past
    /// `max + 1`).
    /// [`try_grow`](BitSet::try_grow) to the end first is the fallible form: after it,
    /// `insert_range` allocates nothing.
    ///
    /// ```
    /// use dod::BitSet;
    /// let mut s = BitSet::with_universe(10);
    /// s.insert_range(2..5);
    /// s.insert_range(8..);
    /// assert_eq!(s.iter().collect::<Vec<_>>(), [2, 3, 4, 8, 9]);
    /// s.insert_range(100..=101);
    /// assert_eq!(s.universe(), 102);
    /// assert_eq!(s.count_range(5..), 4);
    /// s.insert_range(500..500); // empty
    /// assert_eq!(s.universe(), 102);
    ///
    /// let mut bounded = BitSet::new().with_max_index(99);
    /// assert!(bounded.try_grow(1000).is_err()); // instead of a panic in insert_range(..1000)
    /// ```
    #[track_caller]
    pub fn insert_range(&mut self, range: impl RangeBounds<u32>) {
        let (start, end) = bounds(&range, self.universe);
        if start >= end {
            return;
        }
        if end > self.universe {
            self.grow_for(end - 1);
        }
        let (first, last) = (start >> 6, (end - 1) >> 6);
        for w in first..=last {
            let lo = if w == first { start & 63 } else { 0 };
            let hi = if w == last { (end - 1) & 63 } else { 63 };
            let old = self.words[w];
            let new = old | span(lo, hi);
            if new != old {
                self.words[w] = new;
                if (old == 0) | (new == u64::MAX) {
                    self.set_summaries(w, old, new);
                }
            }
        }
    }

    /// Removes every index of `range`, a word at a time. The universe does not change.
    /// O(range / 64), within the universe.
    ///
    /// ```
    /// let mut s: dod::BitSet = (0..200).collect();
    /// s.remove_range(10..190);
    /// assert_eq!(s.count(), 20);
    /// s.remove_range(..=5);
    /// assert_eq!(s.iter().take(3).collect::<Vec<_>>(), [6, 7, 8]);
    /// s.remove_range(..);
    /// assert!(s.is_empty());
    /// assert_eq!(s.universe(), 200);
    /// ```
    pub fn remove_range(&mut self, range: impl RangeBounds<u32>) {
        let (start, end) = bounds(&range, self.universe);
        let end = end.min(self.universe);
        if start >= end {
            return;
        }
        let (first, last) = (start >> 6, (end - 1) >> 6);
        for w in first..=last {
            let lo = if w == first { start & 63 } else { 0 };
            let hi = if w == last { (end - 1) & 63 } else { 63 };
            let old = self.words[w];
            let new = old & !span(lo, hi);
            if new != old {
                self.words[w] = new;
                if (old == u64::MAX) | (new == 0) {
                    self.clear_summaries(w, old, new);
                }
            }
        }
    }

    /// The number of indices of the set in `range`: a population count of the words the
    /// range covers. O(range / 64), within the universe.
    ///
    /// ```
    /// let s: dod::BitSet = [1, 5, 64, 65, 9000].into_iter().collect();
    /// assert_eq!(s.count_range(5..=64), 2);
    /// assert_eq!(s.count_range(66..), 1);
    /// assert_eq!(s.count_range(..), s.count());
    /// ```
    pub fn count_range(&self, range: impl RangeBounds<u32>) -> usize {
        let (start, end) = bounds(&range, self.universe);
        let end = end.min(self.universe);
        if start >= end {
            return 0;
        }
        let (first, last) = (start >> 6, (end - 1) >> 6);
        let head = u64::MAX << (start & 63);
        let tail = span(0, (end - 1) & 63);
        if first == last {
            return (self.words[first] & head & tail).count_ones() as usize;
        }
        let middle: usize = self.words[first + 1..last]
            .iter()
            .map(|w| w.count_ones() as usize)
            .sum();
        middle
            + (self.words[first] & head).count_ones() as usize
            + (self.words[last] & tail).count_ones() as usize
    }

    /// An iterator over the indices of the set in `range`, ascending (`BTreeSet::range`).
    /// Empty regions are skipped through the summary, as in [`iter`](BitSet::iter).
    ///
    /// ```
    /// let s: dod::BitSet = [1, 5, 64, 9000].into_iter().collect();
    /// assert_eq!(s.range(2..=64).collect::<Vec<_>>(), [5, 64]);
    /// assert_eq!(s.range(65..).collect::<Vec<_>>(), [9000]);
    /// ```
    #[inline]
    pub fn range(&self, range: impl RangeBounds<u32>) -> Range<&BitSet> {
        let (start, end) = bounds(&range, self.universe);
        Range::new(self, start, end.min(self.universe))
    }

    /// An iterator over the indices in ascending order. Each step is a trailing-zero count
    /// and a clear-lowest-bit on a cached word; empty regions are skipped with the summary.
    ///
    /// ```
    /// let s: dod::BitSet = [64, 1, 5].into_iter().collect();
    /// assert_eq!(s.iter().collect::<Vec<_>>(), [1, 5, 64]);
    /// ```
    #[inline]
    pub fn iter(&self) -> Iter<&BitSet> {
        Iter::new(self)
    }

    /// An iterator over the indices `>= from`, ascending.
    ///
    /// ```
    /// let s: dod::BitSet = [1, 5, 64, 9000].into_iter().collect();
    /// assert_eq!(s.iter_from(5).collect::<Vec<_>>(), [5, 64, 9000]);
    /// ```
    #[inline]
    pub fn iter_from(&self, from: u32) -> Iter<&BitSet> {
        Iter::from(self, from)
    }

    /// An iterator over the non-zero words as `(base, word)`: bit `j` of `word` is index
    /// `base + j`. The fastest way to walk a set by hand.
    ///
    /// ```
    /// let s: dod::BitSet = [1, 3, 130].into_iter().collect();
    /// assert_eq!(s.blocks().collect::<Vec<_>>(), [(0, 0b1010), (128, 0b100)]);
    /// ```
    #[inline]
    pub fn blocks(&self) -> Blocks<&BitSet> {
        Blocks::new(self)
    }

    /// Calls `f` with every index, ascending (internal iteration: the tightest loop).
    ///
    /// ```
    /// let s: dod::BitSet = [2, 4].into_iter().collect();
    /// let mut sum = 0;
    /// s.for_each(|i| sum += i);
    /// assert_eq!(sum, 6);
    /// ```
    #[inline]
    pub fn for_each(&self, f: impl FnMut(u32)) {
        Bits::for_each(self, f)
    }

    /// The lazy intersection `self ∧ other`. Allocates nothing.
    ///
    /// ```
    /// let a: dod::BitSet = [1, 2, 3].into_iter().collect();
    /// let b: dod::BitSet = [2, 3, 4].into_iter().collect();
    /// assert_eq!(a.and(&b).into_iter().collect::<Vec<_>>(), [2, 3]);
    /// ```
    #[inline]
    pub fn and<B: Bits>(&self, other: B) -> And<&BitSet, B> {
        Bits::and(self, other)
    }

    /// The lazy union `self ∨ other`. Allocates nothing.
    ///
    /// ```
    /// let a: dod::BitSet = [1].into_iter().collect();
    /// let b: dod::BitSet = [4].into_iter().collect();
    /// assert_eq!(a.or(&b).into_iter().collect::<Vec<_>>(), [1, 4]);
    /// ```
    #[inline]
    pub fn or<B: Bits>(&self, other: B) -> Or<&BitSet, B> {
        Bits::or(self, other)
    }

    /// The lazy difference `self ∧ ¬other` ("enemies NOT tanks"). Allocates nothing.
    ///
    /// ```
    /// let enemies: dod::BitSet = [1, 2, 3].into_iter().collect();
    /// let tanks: dod::BitSet = [2].into_iter().collect();
    /// assert_eq!(enemies.and_not(&tanks).into_iter().collect::<Vec<_>>(), [1, 3]);
    /// ```
    #[inline]
    pub fn and_not<B: Bits>(&self, other: B) -> AndNot<&BitSet, B> {
        Bits::and_not(self, other)
    }

    /// The lazy symmetric difference `self ⊕ other`. Allocates nothing.
    ///
    /// ```
    /// let a: dod::BitSet = [1, 2].into_iter().collect();
    /// let b: dod::BitSet = [2, 3].into_iter().collect();
    /// assert_eq!(a.xor(&b).into_iter().collect::<Vec<_>>(), [1, 3]);
    /// ```
    #[inline]
    pub fn xor<B: Bits>(&self, other: B) -> Xor<&BitSet, B> {
        Bits::xor(self, other)
    }

    /// The lazy complement. Allocates nothing.
    ///
    /// Read whole (iterated, counted, made a set) it stops at
    /// [`universe`](BitSet::universe), and a set built by `insert` or `collect` has the
    /// universe `largest index + 1` (a `remove` does not shrink it, so two sets equal under
    /// `==`, which compares members only, can have different complements). Inside an
    /// expression it holds every index the set does not: `a.and(mask.not())` (`&a & !&mask`)
    /// is `a.and_not(&mask)` whatever the two universes.
    ///
    /// ```
    /// let s: dod::BitSet = dod::BitSet::from_words(vec![0b1010], 5).unwrap();
    /// assert_eq!(s.not().into_iter().collect::<Vec<_>>(), [0, 2, 4]);
    ///
    /// let enemies: dod::BitSet = (0..6).collect();
    /// let tanks: dod::BitSet = [2].into_iter().collect(); // universe 3
    /// assert_eq!(tanks.not().into_iter().collect::<Vec<_>>(), [0, 1]);
    /// assert_eq!(enemies.and(tanks.not()).into_iter().collect::<Vec<_>>(), [0, 1, 3, 4, 5]);
    /// assert_eq!((&enemies & !&tanks).into_iter().collect::<Vec<_>>(), [0, 1, 3, 4, 5]);
    /// ```
    #[inline]
    pub fn not(&self) -> Not<&BitSet> {
        Bits::not(self)
    }

    /// Keeps only the indices also in `other` (in place). O(n / 64). Also written `a &= &b`.
    /// `other` is read as an operand of an expression: `a &= !&b` keeps the indices of `a`
    /// past `b`'s universe (it is `a -= &b`).
    ///
    /// ```
    /// let mut a: dod::BitSet = [1, 2, 3].into_iter().collect();
    /// let b: dod::BitSet = [2, 3, 4].into_iter().collect();
    /// a.and_with(&b);
    /// assert_eq!(a.iter().collect::<Vec<_>>(), [2, 3]);
    /// ```
    pub fn and_with<B: Bits>(&mut self, other: B) {
        self.combine_with(other, |a, b| a & b);
    }

    /// Adds the indices of `other` (in place), growing the universe to cover `other`'s.
    /// O(n / 64). Also written `a |= &b`.
    ///
    /// # Panics
    ///
    /// If `other`'s universe would hold an index above [`max_index`](BitSet::max_index).
    ///
    /// ```
    /// let mut a: dod::BitSet = [1].into_iter().collect();
    /// let b: dod::BitSet = [300].into_iter().collect();
    /// a.or_with(&b);
    /// assert_eq!(a.iter().collect::<Vec<_>>(), [1, 300]);
    /// assert_eq!(a.universe(), 301);
    /// ```
    #[track_caller]
    pub fn or_with<B: Bits>(&mut self, other: B) {
        self.grow(other.universe());
        self.combine_with(other, |a, b| a | b);
    }

    /// Removes the indices of `other` (in place). O(n / 64). Also written `a -= &b`.
    ///
    /// ```
    /// let mut a: dod::BitSet = [1, 2, 3].into_iter().collect();
    /// a.and_not_with(&[2].into_iter().collect::<dod::BitSet>());
    /// assert_eq!(a.iter().collect::<Vec<_>>(), [1, 3]);
    /// ```
    pub fn and_not_with<B: Bits>(&mut self, other: B) {
        self.combine_with(other, |a, b| a & !b);
    }

    /// Flips the indices of `other` (in place), growing the universe to cover `other`'s.
    /// O(n / 64). Also written `a ^= &b`.
    ///
    /// # Panics
    ///
    /// If `other`'s universe would hold an index above [`max_index`](BitSet::max_index).
    ///
    /// ```
    /// let mut a: dod::BitSet = [1, 2].into_iter().collect();
    /// a.xor_with(&[2, 3].into_iter().collect::<dod::BitSet>());
    /// assert_eq!(a.iter().collect::<Vec<_>>(), [1, 3]);
    /// ```
    #[track_caller]
    pub fn xor_with<B: Bits>(&mut self, other: B) {
        self.grow(other.universe());
        self.combine_with(other, |a, b| a ^ b);
    }

    /// Whether every index of the set is in `other` (`BTreeSet::is_subset`). Exact; walks
    /// the non-empty words of the set through its summary and stops at the first index
    /// missing from `other`. O(non-empty words).
    ///
    /// ```
    /// let a: dod::BitSet = [1, 70].into_iter().collect();
    /// let b: dod::BitSet = [1, 2, 70].into_iter().collect();
    /// assert!(a.is_subset(&b));
    /// assert!(!b.is_subset(&a));
    /// assert!(dod::BitSet::new().is_subset(&a));
    /// ```
    #[inline]
    pub fn is_subset<B: Bits>(&self, other: B) -> bool {
        Bits::is_subset(self, other)
    }

    /// Whether every index of `other` is in the set (`BTreeSet::is_superset`). Exact.
    /// O(non-empty words of `other`).
    ///
    /// ```
    /// let a: dod::BitSet = [1, 2, 70].into_iter().collect();
    /// let b: dod::BitSet = [2, 70].into_iter().collect();
    /// assert!(a.is_superset(&b));
    /// assert!(!b.is_superset(&a));
    /// ```
    #[inline]
    pub fn is_superset<B: Bits>(&self, other: B) -> bool {
        Bits::is_superset(self, other)
    }

    /// Whether the set and `other` have no index in common (`BTreeSet::is_disjoint`). Exact;
    /// only the words where both summaries have a bit are read. O(non-empty words).
    ///
    /// ```
    /// let a: dod::BitSet = [1, 5000].into_iter().collect();
    /// let b: dod::BitSet = [2, 4999].into_iter().collect();
    /// assert!(a.is_disjoint(&b));
    /// assert!(!a.is_disjoint(&[5000].into_iter().collect::<dod::BitSet>()));
    /// ```
    #[inline]
    pub fn is_disjoint<B: Bits>(&self, other: B) -> bool {
        Bits::is_disjoint(self, other)
    }

    /// Rewrites every word below the universe as `op(word, other's word)`. The summaries are
    /// rebuilt at the end, also when `other` (a [`Bits`] of the user's) panics part way, so
    /// that the set stays valid with the words rewritten so far.
    fn combine_with<B: Bits>(&mut self, other: B, op: impl Fn(u64, u64) -> u64) {
        let guard = Resummarize(self);
        let s = &mut *guard.0;
        let n = words_for(s.universe);
        let tail = if s.universe % 64 == 0 {
            u64::MAX
        } else {
            (1u64 << (s.universe % 64)) - 1
        };
        for (w, word) in s.words[..n].iter_mut().enumerate() {
            // Every index of `other`, a complement's past its universe too (`a &= !&b`).
            *word = op(*word, other.raw_word(w));
        }
        if let Some(last) = s.words[..n].last_mut() {
            *last &= tail;
        }
    }

    /// Checks every invariant; for tests.
    #[doc(hidden)]
    pub fn assert_invariants(&self) {
        let n = words_for(self.universe);
        assert!(self.words.len() >= n, "capacity below the universe");
        assert!(
            self.universe <= self.bound(),
            "universe {} past max_index {}",
            self.universe,
            self.max_index
        );
        for (w, &word) in self.words.iter().enumerate() {
            let valid = if w + 1 < n || (w + 1 == n && self.universe % 64 == 0) {
                u64::MAX
            } else if w + 1 == n {
                (1u64 << (self.universe % 64)) - 1
            } else {
                0
            };
            assert_eq!(word & !valid, 0, "padding bit set in word {w}");
        }
        let words = &self.words;
        let any = Summary::build(words.len(), |w| words[w] != 0);
        let deferred = self.unsummarized;
        if deferred != NONE {
            assert!(
                deferred < words.len(),
                "unsummarized word past the capacity"
            );
            assert_ne!(words[deferred], u64::MAX, "unsummarized word is full");
            assert!(
                deferred < last_word(self.universe),
                "unsummarized word {deferred} is not before the last word of universe {}",
                self.universe
            );
        }
        // The universe's full last word may keep its bit (invariant 6): expect what it has.
        let kept = |w: usize| self.free.layer(0)[w >> 6] >> (w & 63) & 1 == 1;
        let free = Summary::build(words.len(), |w| {
            if self.ends_universe(w) && words[w] == u64::MAX {
                kept(w)
            } else {
                w != deferred && words[w] != u64::MAX
            }
        });
        assert!(any.bits == self.any.bits, "any-set summary");
        assert!(free.bits == self.free.bits, "any-clear summary");
    }
}

impl PartialEq for BitSet {
    /// Same indices, whatever the universes and capacities.
    fn eq(&self, other: &Self) -> bool {
        let (short, long) = if self.words.len() <= other.words.len() {
            (&self.words, &other.words)
        } else {
            (&other.words, &self.words)
        };
        short[..] == long[..short.len()] && long[short.len()..].iter().all(|&w| w == 0)
    }
}

impl Eq for BitSet {}

impl Hash for BitSet {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let end = self
            .words
            .iter()
            .rposition(|&w| w != 0)
            .map_or(0, |i| i + 1);
        self.words[..end].hash(state);
    }
}

impl fmt::Debug for BitSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl FromIterator<u32> for BitSet {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        let mut s = BitSet::new();
        s.extend(iter);
        s
    }
}

impl Extend<u32> for BitSet {
    /// Adds every index of `iter`, growing the universe as [`insert`](BitSet::insert) does.
    ///
    /// A batch that says (in its size hint) it holds at least as many indices as the set has
    /// words (one per 64 indices of the capacity) is written as words alone, and the
    /// summaries are rebuilt once at the end (also if the iterator panics, or an index above
    /// the bound stops the batch), in
    /// O(capacity / 64): a word write per index, with no branch on what the word held.
    /// Measured on 100 000 random inserts into a universe of 2²⁰ (16 384 words), that is
    /// about 1.2-2x faster than as many `insert` calls, which each also write a summary word
    /// and test whether that summary word was empty and whether the word is now full; the
    /// rebuild costs about 1.2 ns per word, so a smaller batch is inserted one index at a
    /// time.
    ///
    /// # Panics
    ///
    /// At the first index above [`max_index`](BitSet::max_index), as `insert`; the indices
    /// before it are in the set.
    ///
    /// ```
    /// let mut s = dod::BitSet::new();
    /// s.grow(1 << 16);
    /// s.extend([5, 70_000, 5, 12]);
    /// assert_eq!(s.iter().collect::<Vec<_>>(), [5, 12, 70_000]);
    /// assert_eq!(s.first_zero(), Some(0));
    /// ```
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        if iter.size_hint().0 < self.words.len().max(1) {
            for i in iter {
                self.insert(i);
            }
        } else {
            self.extend_deferred(iter);
        }
    }
}

/// Rebuilds the summaries of a set from its words when dropped, unwinding included, so that a
/// panic of user code (an iterator, a [`Bits`] of the user's) or of a growth part way through
/// a batch of word writes leaves a valid set.
struct Resummarize<'a>(&'a mut BitSet);

impl Drop for Resummarize<'_> {
    fn drop(&mut self) {
        self.0.refill_summaries();
    }
}

impl BitSet {
    /// [`extend`](BitSet::extend) with the summaries rebuilt once at the end.
    #[track_caller]
    fn extend_deferred(&mut self, iter: impl Iterator<Item = u32>) {
        let guard = Resummarize(self);
        let s = &mut *guard.0;
        let mut iter = iter;
        loop {
            // Below the universe: only the word. The summaries are stale until the guard
            // drops, and nothing reads them before then.
            let words = s.words.as_mut_slice();
            let end = s.universe.min(words.len() << 6);
            let past = iter.find(|&i| match words.get_mut(i as usize >> 6) {
                Some(word) if (i as usize) < end => {
                    *word |= 1 << (i & 63);
                    false
                }
                _ => true,
            });
            match past {
                // Past the universe but within the words and the bound (an ascending batch
                // takes this path for every index): the universe grows by a store, as in
                // `insert`, and the bit is set; the summaries are refilled at the end.
                Some(i) if s.grows_by_a_store(i as usize) => {
                    s.universe = i as usize + 1;
                    s.words[i as usize >> 6] |= 1 << (i & 63);
                }
                Some(i) => s.grow_and_insert(i),
                None => break,
            }
        }
    }

    /// [`insert`](BitSet::insert) of an index past the words, out of a batch's loop: the
    /// growth rebuilds the summaries from the words, deferred bits included, or panics naming
    /// the bound. Its summary updates on a batch's stale summaries are overwritten at the end.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn grow_and_insert(&mut self, index: u32) {
        self.insert(index);
    }

    /// [`rebuild_summaries`](BitSet::rebuild_summaries) in place, for words that did not
    /// change in number since the summaries were laid out: no allocation.
    fn refill_summaries(&mut self) {
        let (words, n) = (&self.words, self.words.len());
        self.any.refill(n, |w| words[w] != 0);
        self.free.refill(n, |w| words[w] != u64::MAX);
        self.unsummarized = NONE;
    }
}

impl IntoIterator for BitSet {
    type Item = u32;
    type IntoIter = IntoIter;

    fn into_iter(self) -> IntoIter {
        IntoIter::new(self)
    }
}

impl<'a> IntoIterator for &'a BitSet {
    type Item = u32;
    type IntoIter = Iter<&'a BitSet>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Bits for &BitSet {
    #[inline]
    fn universe(&self) -> usize {
        self.universe
    }

    #[inline]
    fn word(&self, i: usize) -> u64 {
        self.words.get(i).copied().unwrap_or(0)
    }

    #[inline]
    fn summary(&self, level: usize, i: usize) -> u64 {
        self.any.word(level, i)
    }

    #[inline]
    fn contains(self, index: u32) -> bool {
        BitSet::contains(self, index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels() {
        assert_eq!(summary_levels(0), 1);
        assert_eq!(summary_levels(64), 1);
        assert_eq!(summary_levels(65), 2);
        assert_eq!(summary_levels(4096), 2);
        assert_eq!(summary_levels(4097), 3);
    }

    #[test]
    fn summary_next() {
        let mut s = Summary::build(10_000, |_| false);
        assert_eq!(s.next(0), None);
        assert_eq!(s.first(), None);
        s.set(5000);
        assert_eq!(s.first(), Some(5000));
        s.set(3);
        assert_eq!(s.next(0), Some(3));
        assert_eq!(s.next(4), Some(5000));
        assert_eq!(s.next(5001), None);
        s.clear(5000);
        assert_eq!(s.next(4), None);
        assert_eq!(s.next(1 << 40), None);
    }

    #[test]
    fn summary_last() {
        assert_eq!(Summary::EMPTY.last(), None);
        assert_eq!(Summary::EMPTY.first(), None);
        assert_eq!(Summary::EMPTY.next(0), None);
        assert_eq!(Summary::EMPTY.word(3, 0), 0);
        let mut s = Summary::build(300_000, |_| false);
        assert_eq!(s.last(), None);
        s.set(3);
        assert_eq!(s.last(), Some(3));
        s.set(299_999);
        s.set(4096);
        assert_eq!(s.last(), Some(299_999));
        s.clear(299_999);
        assert_eq!(s.last(), Some(4096));
        assert_eq!(s.first(), Some(3));
    }

    #[test]
    fn new_allocates_nothing_and_every_operation_works_on_it() {
        const EMPTY: BitSet = BitSet::new();
        let mut s = EMPTY;
        assert_eq!(s.memory_usage(), 0);
        assert_eq!(s.capacity(), 0);
        s.assert_invariants();
        assert!(s.is_empty());
        assert_eq!(s.count(), 0);
        assert_eq!((s.first(), s.last()), (None, None));
        assert_eq!(
            (s.first_zero(), s.next_zero(0), s.next_one(0)),
            (None, None, None)
        );
        assert_eq!(s.iter().next(), None);
        assert_eq!(s.blocks().next(), None);
        assert_eq!(s.range(..).next(), None);
        assert_eq!(s.count_range(..), 0);
        assert!(!s.contains(0) && !s.contains(u32::MAX));
        assert!(s.not().is_empty());
        assert!(s.is_subset(&s) && s.is_disjoint(&s));
        assert_eq!(s, BitSet::default());
        assert!(!s.remove(5));
        s.remove_range(..);
        s.insert_range(..); // fills the (empty) universe
        s.truncate(0);
        s.clear();
        s.shrink_to_fit();
        s.and_with(&BitSet::new());
        s.and_not_with(&BitSet::new());
        s.or_with(&BitSet::new());
        s.xor_with(&BitSet::new());
        s.set_max_index(10);
        s.assert_invariants();
        assert_eq!(s.memory_usage(), 0);
        assert_eq!(s.claim(), 0);
        assert_eq!(s.last(), Some(0));
        s.assert_invariants();
    }

    #[test]
    fn try_insert_above_max_index_allocates_nothing() {
        let mut s = BitSet::new().with_max_index(1000);
        let err = s.try_insert(u32::MAX).unwrap_err();
        assert_eq!(
            err.kind(),
            InsertErrorKind::IndexAboveMax {
                index: u32::MAX,
                max: 1000
            }
        );
        assert_eq!(err.into_inner(), u32::MAX);
        assert_eq!(s.memory_usage(), 0);
        assert_eq!(s.universe(), 0);
        assert!(s.try_insert(1001).is_err());
        assert_eq!(s.memory_usage(), 0);
        assert_eq!(s.try_insert(1000), Ok(true));
        // The capacity stops at the bound instead of doubling past it.
        assert_eq!(s.capacity(), 1024);
        let before = s.memory_usage();
        assert!(s.try_insert(1 << 31).is_err());
        assert!(s.try_grow(1 << 40).is_err());
        assert_eq!(s.memory_usage(), before);
        assert_eq!(
            s.try_grow(1002),
            Err(GrowError::AboveMax {
                universe: 1002,
                max_index: 1000
            })
        );
        assert_eq!(s.try_grow(1001), Ok(()));
        s.assert_invariants();
    }

    #[test]
    #[should_panic(expected = "index 4294967295 is above the container's max_index 99")]
    fn insert_above_max_index_panics_naming_both() {
        let mut s = BitSet::new().with_max_index(99);
        s.insert(u32::MAX);
    }

    #[test]
    #[should_panic(expected = "index 100 is above the container's max_index 99")]
    fn insert_range_above_max_index_panics() {
        let mut s = BitSet::new().with_max_index(99);
        s.insert_range(50..101);
    }

    #[test]
    #[should_panic(expected = "index 4294967296 is above 2^32 - 1")]
    fn grow_above_u32_panics() {
        BitSet::new().grow((1 << 32) + 1);
    }

    #[test]
    #[should_panic(expected = "every index up to max_index 2 is in the set")]
    fn claim_past_max_index_panics() {
        let mut s = BitSet::new().with_max_index(2);
        for _ in 0..4 {
            s.claim();
        }
    }

    #[test]
    fn lowering_max_index_truncates() {
        let mut s: BitSet = [1, 64, 65, 200].into_iter().collect();
        s.set_max_index(64);
        s.assert_invariants();
        assert_eq!(s.iter().collect::<Vec<_>>(), [1, 64]);
        assert_eq!(s.universe(), 65);
        assert_eq!(s.last(), Some(64));
        s.set_max_index(u32::MAX);
        s.insert(1 << 20);
        s.assert_invariants();
    }

    #[test]
    fn ranges_keep_the_summaries() {
        let mut s = BitSet::with_universe(64 * 200);
        s.insert_range(10..64 * 150 + 3);
        s.assert_invariants();
        assert_eq!(s.count(), 64 * 150 + 3 - 10);
        assert_eq!(s.first_zero(), Some(0));
        assert_eq!(s.next_zero(10), Some(64 * 150 + 3));
        s.remove_range(64 * 3..64 * 100);
        s.assert_invariants();
        assert_eq!(s.count_range(..), s.count());
        assert_eq!(s.count_range(64 * 3..64 * 100), 0);
        assert_eq!(s.next_one(64 * 3), Some(64 * 100));
        s.insert_range(..);
        s.assert_invariants();
        assert_eq!(s.first_zero(), None);
        assert_eq!(s.count(), 64 * 200);
        s.remove_range(5..=5);
        assert_eq!(s.first_zero(), Some(5));
        s.insert_range(5..=5);
        s.assert_invariants();
        assert_eq!(s.first_zero(), None);
        s.insert_range(100_000..100_000); // empty: no growth
        assert_eq!(s.universe(), 64 * 200);
    }

    #[test]
    fn large_sparse_index_is_cheap() {
        let mut s = BitSet::new();
        s.insert(10_000_000);
        assert!(s.memory_usage() < 1_300_000, "{}", s.memory_usage());
        assert_eq!(s.iter().collect::<Vec<_>>(), [10_000_000]);
        assert_eq!(s.first_zero(), Some(0));
        assert_eq!(s.next_one(1), Some(10_000_000));
        s.assert_invariants();
    }

    #[test]
    fn zero_search_in_full_words() {
        let mut s = BitSet::full(64 * 5000);
        s.assert_invariants();
        assert_eq!(s.first_zero(), None);
        s.remove(64 * 4000 + 7);
        assert_eq!(s.first_zero(), Some(64 * 4000 + 7));
        assert_eq!(s.claim(), 64 * 4000 + 7);
        assert_eq!(s.claim(), 64 * 5000);
        s.assert_invariants();
    }

    #[test]
    fn deferred_word_is_found_by_the_zero_searches() {
        let mut s = BitSet::full(64 * 300);
        s.remove(64 * 200 + 3); // deferred: `free` is not touched
        assert_eq!(s.unsummarized, 200);
        s.assert_invariants();
        assert_eq!(s.first_zero(), Some(64 * 200 + 3));
        assert_eq!(s.next_zero(5), Some(64 * 200 + 3));
        assert_eq!(s.next_zero(64 * 200 + 4), None);
        s.remove(64 * 100 + 9); // another word: summarized
        s.assert_invariants();
        assert_eq!(s.first_zero(), Some(64 * 100 + 9));
        assert_eq!(s.next_zero(64 * 100 + 10), Some(64 * 200 + 3));
        assert_eq!(s.claim(), 64 * 100 + 9);
        assert_eq!(s.claim(), 64 * 200 + 3); // fills the deferred word
        assert_eq!(s.unsummarized, NONE);
        assert_eq!(s.first_zero(), None);
        s.assert_invariants();
    }

    #[test]
    fn equality_ignores_capacity_and_universe() {
        let mut a = BitSet::with_universe(10_000);
        a.insert(5);
        let b: BitSet = [5].into_iter().collect();
        assert_eq!(a, b);
        #[cfg(feature = "std")]
        {
            use core::hash::BuildHasher;
            let st = std::collections::hash_map::RandomState::new();
            assert_eq!(st.hash_one(&a), st.hash_one(&b));
        }
    }

    #[test]
    fn truncate_keeps_summaries() {
        let mut s: BitSet = (0..300).collect();
        s.truncate(130);
        s.assert_invariants();
        assert_eq!(s.count(), 130);
        assert_eq!(s.first_zero(), None);
        s.grow(131);
        assert_eq!(s.first_zero(), Some(130));
        s.assert_invariants();
    }

    /// An iterator of `n` items (so says its size hint) that panics at item `at`.
    #[cfg(feature = "std")]
    struct PanicsAt {
        next: u32,
        n: u32,
        at: u32,
        stride: u32,
    }

    #[cfg(feature = "std")]
    impl Iterator for PanicsAt {
        type Item = u32;
        fn next(&mut self) -> Option<u32> {
            if self.next == self.at {
                panic!("the iterator panics at item {}", self.at);
            }
            (self.next < self.n).then(|| {
                self.next += 1;
                (self.next - 1) * self.stride
            })
        }
        fn size_hint(&self) -> (usize, Option<usize>) {
            let left = (self.n - self.next) as usize;
            (left, Some(left))
        }
    }

    #[test]
    #[cfg(feature = "std")]
    fn extend_keeps_the_summaries_when_the_batch_panics() {
        // Long enough batches take the deferred path: its summaries are rebuilt on unwinding.
        // Smaller under Miri, where every word read is slow; still past the universe.
        let (universe, n, at) = if cfg!(miri) {
            (1 << 12, 300, 200)
        } else {
            (1 << 16, 5_000, 2_000)
        };
        for stride in [1, 63, 64, 1000] {
            let mut s = BitSet::with_universe(universe);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                s.extend(PanicsAt {
                    next: 0,
                    n,
                    at,
                    stride,
                })
            }));
            assert!(r.is_err());
            s.assert_invariants();
            // Every index before the panic went in, those past the universe by growing it.
            let want: Vec<u32> = (0..at).map(|k| k * stride).collect();
            assert_eq!(s.count(), want.len());
            assert!(want.iter().all(|&i| s.contains(i)));
            assert_eq!(s.first(), Some(0));
            assert_eq!(s.first_zero(), Some(if stride == 1 { at } else { 1 }));
        }
    }

    #[test]
    #[cfg(feature = "std")]
    fn extend_stops_at_an_index_above_the_bound() {
        // One index per word of the capacity at least: the deferred path.
        let mut s = BitSet::with_universe(4_096).with_max_index(10_000);
        let batch = (0..5_000u32).map(|k| if k == 3_000 { 20_000 } else { k });
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.extend(batch)));
        assert!(r.is_err());
        s.assert_invariants();
        assert_eq!(s.count(), 3_000);
        assert_eq!(s.first_zero(), Some(3_000));
        assert_eq!(s.universe(), 4_096);
    }

    /// A xorshift generator of pseudo-random `u64`s from `seed` (not zero).
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    #[test]
    fn appended_full_words_are_found_full_by_every_path() {
        // `push_set` fills a word without clearing its bit in `free` (invariant 6). Appends
        // mixed with every operation that reads or moves that bit, each step checked against
        // a model: the zero searches (also from an odd-numbered last word, where a zero
        // search that trusted the bit would name an index of the word itself), removals that
        // would defer the word, and every way the universe grows or shrinks.
        for words in 1..=4usize {
            // Every word full, the last one by an append: nothing to find, then each way out.
            let n = 64 * words;
            let mut full = BitSet::new();
            for i in 0..n {
                full.push_set(i);
            }
            full.assert_invariants();
            assert_eq!((full.first_zero(), full.next_zero(0)), (None, None));
            let check = |s: &BitSet, zero: Option<u32>| {
                s.assert_invariants();
                assert_eq!(s.first_zero(), zero, "{words} words");
                assert_eq!(s.next_zero(0), zero, "{words} words");
            };
            let mut s = full.clone();
            assert_eq!(s.try_grow(n + 64), Ok(()));
            check(&s, Some(n as u32));
            let mut s = full.clone();
            s.grow(n + 10);
            check(&s, Some(n as u32));
            let mut s = full.clone();
            assert!(s.insert(n as u32 + 5));
            check(&s, Some(n as u32));
            let mut s = full.clone();
            assert_eq!(s.claim(), n as u32);
            check(&s, None);
            let mut s = full.clone();
            assert!(s.remove(n as u32 - 1));
            check(&s, Some(n as u32 - 1));
            assert!(s.insert(n as u32 - 1));
            check(&s, None);
            s.push_set(n);
            check(&s, None);
        }
        let mut next = xorshift(0x6a09_e667_f3bc_c909);
        let mut s = BitSet::new();
        let mut model = alloc::collections::BTreeSet::new();
        let mut universe = 0u32;
        let steps = if cfg!(miri) { 120 } else { 5_000 };
        for step in 0..steps {
            let r = next();
            let k = (r >> 8) as u32;
            match r % 16 {
                // Appends, mostly: the words fill one by one.
                0..=8 => {
                    for _ in 0..1 + k % 80 {
                        s.push_set(universe as usize);
                        model.insert(universe);
                        universe += 1;
                    }
                }
                9 if universe > 0 => {
                    let i = k % universe;
                    assert_eq!(s.remove(i), model.remove(&i));
                }
                10 if universe > 0 => {
                    // The last index: a removal from the last word, full or not.
                    let i = universe - 1;
                    assert_eq!(s.remove(i), model.remove(&i));
                }
                11 if universe > 0 => {
                    let i = k % universe;
                    assert_eq!(s.insert(i), model.insert(i));
                }
                12 => {
                    // Past the universe: by a store within the words, or by growing them.
                    let i = universe + k % 100;
                    assert!(s.insert(i));
                    model.insert(i);
                    universe = i + 1;
                }
                13 => {
                    universe += k % 3 * 64;
                    if k % 2 == 0 {
                        s.grow(universe as usize);
                    } else {
                        assert_eq!(s.try_grow(universe as usize), Ok(()));
                    }
                }
                14 if universe > 0 => {
                    universe -= k % universe.min(70);
                    s.truncate(universe as usize);
                    model.retain(|&i| i < universe);
                }
                15 => {
                    let want = (0..universe).find(|i| !model.contains(i));
                    let got = s.claim();
                    assert_eq!(got, want.unwrap_or(universe));
                    model.insert(got);
                    universe = universe.max(got + 1);
                }
                _ => {}
            }
            s.assert_invariants();
            assert_eq!(s.universe(), universe as usize);
            assert_eq!(s.first_zero(), (0..universe).find(|i| !model.contains(i)));
            let from = if universe > 0 { k % universe } else { 0 };
            assert_eq!(
                s.next_zero(from),
                (from..universe).find(|i| !model.contains(i)),
                "next_zero({from}) at step {step}"
            );
            if step % 64 == 0 {
                assert!(s.iter().eq(model.iter().copied()));
            }
        }
        assert!(
            universe as usize > steps,
            "the appends outgrew the truncations"
        );
    }

    #[test]
    fn truncation_ends_a_deferral_that_appends_would_reach() {
        // A word deferred while the universe was larger, then cut to the universe's end: an
        // append must not fill it while it is still deferred, or its bit in `free` would stay
        // set on a full word once the universe grows past it.
        let mut s = BitSet::new();
        for i in 0..192 {
            s.push_set(i);
        }
        assert!(s.remove(100)); // word 1 deferred
        s.truncate(64);
        s.assert_invariants();
        for i in 64..128 {
            s.push_set(i);
        }
        s.assert_invariants();
        assert!(s.remove(127));
        s.truncate(127);
        s.push_set(127);
        s.assert_invariants();
        s.grow(200);
        s.assert_invariants();
        assert_eq!(s.first_zero(), Some(128));
        assert_eq!(s.next_zero(0), Some(128));
    }

    #[test]
    fn random_inserts_keep_every_summary_layer_exact() {
        // Random indices over three summary layers (2^19 indices: 8 192 words), from empty to
        // about seven in eight present, with a removal for every seven inserts so that words
        // stop being full (and are deferred) and fill again through `insert`. Each summary
        // is compared with a rebuild as the set fills, the contents with a model.
        let universe: u32 = if cfg!(miri) { 1 << 13 } else { 1 << 19 };
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let mut s = BitSet::with_universe(universe as usize);
        let mut model = alloc::collections::BTreeSet::new();
        // Under Miri, where every step is slow, a quarter of the way; the fill below still
        // makes every word full.
        let steps = if cfg!(miri) {
            universe as usize / 4
        } else {
            2 * universe as usize
        };
        for step in 1..=steps {
            let i = (next() % u64::from(universe)) as u32;
            if next() % 8 == 0 {
                assert_eq!(s.remove(i), model.remove(&i));
            } else {
                assert_eq!(s.insert(i), model.insert(i));
            }
            if step % (steps / 8) == 0 {
                s.assert_invariants();
                assert!(s.iter().eq(model.iter().copied()));
                assert_eq!(s.first_zero(), (0..universe).find(|i| !model.contains(i)));
            }
        }
        assert!(model.len() > steps / 8);
        // Every index still absent, in random order: each word fills through `insert`.
        let mut rest: Vec<u32> = (0..universe).filter(|i| !model.contains(i)).collect();
        for k in (1..rest.len()).rev() {
            rest.swap(k, (next() % (k as u64 + 1)) as usize);
        }
        for (k, &i) in rest.iter().enumerate() {
            assert!(s.insert(i));
            if k % (rest.len() / 4 + 1) == 0 {
                s.assert_invariants();
            }
        }
        s.assert_invariants();
        assert_eq!(s.first_zero(), None);
        // A full set taking an index out and putting it back, as a pool fills the hole it
        // just made: the word is deferred, then leaves the deferral through `insert`.
        for _ in 0..if cfg!(miri) { 8 } else { 64 } {
            let i = (next() % u64::from(universe)) as u32;
            assert!(s.remove(i));
            s.assert_invariants();
            assert_eq!(s.first_zero(), Some(i));
            assert!(s.insert(i));
            s.assert_invariants();
            assert_eq!(s.first_zero(), None);
        }
    }

    #[test]
    fn extend_matches_insert_on_every_path() {
        // Short batches go one index at a time, long ones defer the summaries; both must leave
        // the same set, with summaries as exact as `insert` keeps them.
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for (universe, batch, spread) in [
            (0, 10, 500),
            (4_096, 10, 4_096),
            (4_096, 100, 4_096),
            (1 << 16, 5_000, 1 << 16),
            (1 << 16, 5_000, 1 << 18),
            (300, 64, 64),
        ] {
            if cfg!(miri) && universe > 4_096 {
                continue; // every word read is slow under Miri; the small cases take both paths
            }
            let indices: Vec<u32> = (0..batch).map(|_| (next() % spread) as u32).collect();
            let mut a = BitSet::with_universe(universe);
            a.extend(indices.iter().copied());
            let mut b = BitSet::with_universe(universe);
            for &i in &indices {
                b.insert(i);
            }
            a.assert_invariants();
            b.assert_invariants();
            assert_eq!(a, b);
            assert_eq!(a.universe(), b.universe());
            assert_eq!(a.first_zero(), b.first_zero());
            assert_eq!(a.last(), b.last());
        }
        // A word whose "not full" bit is deferred (a pool's hole), then a long batch that
        // leaves it not full: the rebuilt summary describes it, and it is deferred no more.
        let mut s: BitSet = (0..64 * 40).collect();
        s.remove(64 * 3 + 5);
        let batch: Vec<u32> = (0..64 * 40).filter(|&i| i != 64 * 3 + 5).rev().collect();
        s.extend(batch);
        s.assert_invariants();
        assert_eq!(s.first_zero(), Some(64 * 3 + 5));
        // A set made full word by word by one batch: the any-clear summary says so.
        let mut s = BitSet::with_universe(64 * 200);
        s.extend(0..64 * 200);
        s.assert_invariants();
        assert_eq!(s.first_zero(), None);
    }
}
