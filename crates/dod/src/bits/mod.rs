//! [`BitSet`]: a growable set of indices over `u64` words, with summary layers, and lazy
//! expressions over bit sets ([`Bits`]: `and`, `or`, `and_not`, `xor`, `not`).
//!
//! # Layout
//!
//! - `words: Vec<u64>`: bit `j` of word `w` is index `64 * w + j` (least significant bit
//!   first, on every platform). The vector may be longer than the universe needs (its
//!   *capacity*); every bit at or past the universe is zero (the seed's padding bits).
//! - Two *summaries* of the words, each a stack of layers in which one bit stands for 64 bits
//!   of the layer below (the seed's cascading hierarchy):
//!   - `any`: bit `w` of its first layer is set iff `words[w] != 0`. Walking a sparse set skips
//!     64 empty words per clear summary bit, 4 096 per clear bit of the next layer, and so on.
//!   - `free`: bit `w` of its first layer is set iff `words[w] != u64::MAX`, so that the first
//!     zero bit ([`BitSet::first_zero`], claiming a free slot) is found in O(log₆₄ n) word reads,
//!     not by a scan.
//!
//!   A layer has as many words as needed for the layer below, and layers are added until the
//!   top one is a single word: there is no cap on the largest index.
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
//!    of what `free` finds and this word: still O(log₆₄ n).
//!
//! # Memory
//!
//! One bit per index of the capacity, plus two summaries of 1/64 + 1/4096 + … bit each: about
//! **0.129 bytes per index** (1.032 bits). A set holding only index 10 000 000 takes 1.25 MB of
//! words and 40 KB of summaries.

mod expr;
mod iter;
#[cfg(feature = "rayon")]
mod rayon;
#[cfg(feature = "serde")]
mod serde;

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use core::hash::{Hash, Hasher};

pub use expr::{And, AndNot, Bits, Not, Or, Xor};
pub use iter::{Blocks, Iter};

/// Words needed for `universe` bits.
#[inline]
const fn words_for(universe: usize) -> usize {
    universe.div_ceil(64)
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

/// A stack of layers over `n` items: bit `i` of layer 0 says something about item `i`, bit `i`
/// of layer `l + 1` says whether word `i` of layer `l` is non-zero. All layers live in one
/// vector, layer `l` at `bits[starts[l]..starts[l + 1]]`, so an update computes its addresses
/// without chasing pointers.
#[derive(Clone, Default)]
struct Summary {
    bits: Vec<u64>,
    starts: [usize; MAX_LEVELS + 1],
    levels: usize,
}

/// Enough summary layers for any `usize` index: 64^11 > 2^64.
pub(crate) const MAX_LEVELS: usize = 11;

impl Summary {
    /// Builds the summary of `n` items whose layer-0 bit is `bit(i)`.
    fn build(n: usize, bit: impl Fn(usize) -> bool) -> Self {
        let mut starts = [0usize; MAX_LEVELS + 1];
        let mut levels = 0;
        let mut items = n;
        loop {
            let words = items.div_ceil(64).max(1);
            starts[levels + 1] = starts[levels] + words;
            levels += 1;
            if words == 1 {
                break;
            }
            items = words;
        }
        let mut bits = vec![0u64; starts[levels]];
        for i in 0..n {
            if bit(i) {
                bits[i >> 6] |= 1 << (i & 63);
            }
        }
        for l in 1..levels {
            for j in 0..starts[l] - starts[l - 1] {
                if bits[starts[l - 1] + j] != 0 {
                    bits[starts[l] + (j >> 6)] |= 1 << (j & 63);
                }
            }
        }
        Summary {
            bits,
            starts,
            levels,
        }
    }

    /// Layer `l`.
    #[inline]
    fn layer(&self, l: usize) -> &[u64] {
        &self.bits[self.starts[l]..self.starts[l + 1]]
    }

    /// Sets the bit of item `i`: one word per layer, going up only while the word below was
    /// empty before.
    #[inline(always)]
    fn set(&mut self, mut i: usize) {
        let mut l = 0;
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
    fn clear(&mut self, mut i: usize) {
        let mut l = 0;
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
        let top = self.levels - 1;
        let t = self.bits[self.starts[top]];
        if t == 0 {
            return None;
        }
        let mut pos = t.trailing_zeros() as usize;
        for l in (0..top).rev() {
            pos = (pos << 6) | self.bits[self.starts[l] + pos].trailing_zeros() as usize;
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
            u64::from(i == 0 && self.bits[self.starts[self.levels - 1]] != 0)
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
/// [`not`](BitSet::not) is the complement within it. [`insert`](BitSet::insert) grows the
/// universe when needed; [`grow`](BitSet::grow) and [`truncate`](BitSet::truncate) change it
/// explicitly. Bits past the universe are always zero. Two sets are equal when they hold the
/// same indices, whatever their universes and capacities.
///
/// Lazy expressions over sets (`a.and(&b).and_not(&c)`) never allocate; see [`Bits`].
///
/// | operation | cost |
/// |---|---|
/// | `insert`, `remove`, `toggle`, `contains`, `is_empty` | O(1) (a summary update is O(log₆₄ n) at worst, and rare) |
/// | `count` | O(non-empty words) |
/// | `first_zero`, `next_zero`, `next_one`, `claim` | O(log₆₄ n) |
/// | iteration | O(set bits + non-empty words), empty regions are skipped 4 096 indices at a time or more |
/// | `clear`, in-place `*_with`, `grow` past the capacity | O(n / 64) |
///
/// Memory: about 0.129 bytes per index of the capacity (1 bit, plus 1/64 bit for each of the
/// two summaries). The capacity grows by doubling, so a set grown one index at a time holds
/// up to twice its universe until [`shrink_to_fit`](Self::shrink_to_fit).
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
/// assert_eq!(bullets.count(), 4);
/// assert_eq!(bullets.first_zero(), Some(0));
/// ```
#[derive(Clone)]
pub struct BitSet {
    words: Vec<u64>,
    universe: usize,
    any: Summary,
    free: Summary,
    /// The one word that is not full but has no bit in `free` (invariant 3), or `NONE`.
    unsummarized: usize,
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

/// Words needed for the largest universe.
const MAX_WORDS: usize = words_for(MAX_UNIVERSE);

/// Panics if `universe` is above [`MAX_UNIVERSE`].
#[track_caller]
fn check_universe(universe: usize) {
    assert!(
        universe <= MAX_UNIVERSE,
        "BitSet universe {universe} is above 2^32: indices are u32"
    );
}

impl Default for BitSet {
    fn default() -> Self {
        BitSet::new()
    }
}

impl BitSet {
    /// An empty set with universe 0. Allocates nothing until the first insertion.
    ///
    /// ```
    /// let s = dod::BitSet::new();
    /// assert!(s.is_empty());
    /// assert_eq!(s.universe(), 0);
    /// ```
    pub fn new() -> Self {
        BitSet {
            words: Vec::new(),
            universe: 0,
            any: Summary::build(0, |_| false),
            free: Summary::build(0, |_| false),
            unsummarized: NONE,
        }
    }

    /// An empty set with universe `universe` (indices `0..universe` can be held without
    /// growing). O(universe / 64).
    ///
    /// ```
    /// use dod::Bits;
    /// let s = dod::BitSet::with_universe(100);
    /// assert_eq!(s.universe(), 100);
    /// assert_eq!(s.not().count(), 100);
    /// ```
    pub fn with_universe(universe: usize) -> Self {
        let mut s = BitSet::new();
        s.grow(universe);
        s
    }

    /// A set of the indices `0..universe` all present. O(universe / 64).
    ///
    /// ```
    /// let s = dod::BitSet::full(70);
    /// assert_eq!(s.count(), 70);
    /// assert_eq!(s.first_zero(), None);
    /// ```
    pub fn full(universe: usize) -> Self {
        let mut words = vec![u64::MAX; words_for(universe)];
        if universe % 64 != 0 {
            if let Some(last) = words.last_mut() {
                *last = (1u64 << (universe % 64)) - 1;
            }
        }
        Self::from_words_unchecked(words, universe)
    }

    /// Builds the set from words whose bits past `universe` are zero (checked by the callers).
    fn from_words_unchecked(words: Vec<u64>, universe: usize) -> Self {
        debug_assert!(words.len() >= words_for(universe));
        let mut s = BitSet {
            words,
            universe,
            any: Summary::default(),
            free: Summary::default(),
            unsummarized: NONE,
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
    /// `index + 1` if needed. O(1) amortized.
    ///
    /// Memory follows the largest index: one bit per index below it plus the summaries, so
    /// `insert(u32::MAX)` asks for 512 MiB.
    ///
    /// ```
    /// let mut s = dod::BitSet::new();
    /// assert!(s.insert(7));
    /// assert!(!s.insert(7));
    /// assert_eq!(s.universe(), 8);
    /// ```
    #[inline]
    #[track_caller]
    pub fn insert(&mut self, index: u32) -> bool {
        let index = index as usize;
        if index >= self.universe {
            self.grow_for(index);
        }
        self.set_bit(index)
    }

    #[cold]
    #[track_caller]
    fn grow_for(&mut self, index: usize) {
        self.grow(index + 1);
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
            self.set_summaries(w, old, new);
        }
        old != new
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
            if w == self.unsummarized {
                // Its bit in `free` is already clear, as a full word's must be.
                self.unsummarized = NONE;
            } else {
                // Also reached when the bit was already set in a full word: clearing the
                // summary bit again changes nothing.
                self.free.clear(w);
            }
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
        if (old == u64::MAX) | (new == 0) {
            self.clear_summaries(w, old, new);
        }
        old != new
    }

    /// The summary updates after word `w` went from `old` to `new` by clearing bits; out of
    /// line, as in `set_summaries`.
    #[inline(never)]
    fn clear_summaries(&mut self, w: usize, old: u64, new: u64) {
        if old == u64::MAX {
            if self.unsummarized == NONE {
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
        self.rebuild_summaries();
    }

    /// Grows the universe to `universe` if it is smaller (the new indices are absent). O(1)
    /// amortized: the capacity at least doubles when it must grow, and the summaries are
    /// rebuilt then, in O(capacity / 64).
    ///
    /// # Panics
    ///
    /// If `universe` is above 2³² (indices are `u32`).
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
        check_universe(universe);
        let need = words_for(universe);
        if need > self.words.len() {
            let cap = need.max(self.words.len().saturating_mul(2)).min(MAX_WORDS);
            self.words.resize(cap, 0);
            self.rebuild_summaries();
        }
        self.universe = universe;
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
    /// if `words` is not exactly `universe.div_ceil(64)` long or has a bit set at or past the
    /// universe. O(words).
    ///
    /// ```
    /// use dod::BitSet;
    /// let s = BitSet::from_words(vec![0b101], 3).unwrap();
    /// assert_eq!(s.iter().collect::<Vec<_>>(), [0, 2]);
    /// assert!(BitSet::from_words(vec![0b1000], 3).is_none()); // index 3 is past the universe
    /// assert!(BitSet::from_words(vec![0, 0], 3).is_none()); // one word too many
    /// ```
    pub fn from_words(words: Vec<u64>, universe: usize) -> Option<Self> {
        if words.len() != words_for(universe) {
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

    /// The smallest index in the set. O(log₆₄ n).
    ///
    /// ```
    /// let s: dod::BitSet = [70, 9].into_iter().collect();
    /// assert_eq!(s.first_one(), Some(9));
    /// ```
    #[inline]
    pub fn first_one(&self) -> Option<u32> {
        let w = self.any.first()?;
        Some(((w << 6) | self.words[w].trailing_zeros() as usize) as u32)
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
        let w = self.free.first().unwrap_or(NONE).min(self.unsummarized);
        if w == NONE {
            return None;
        }
        let index = (w << 6) | (!self.words[w]).trailing_zeros() as usize;
        // Bits past the universe are zero, so a zero found there means none is below it.
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
        let index = if m != 0 {
            (w << 6) | m.trailing_zeros() as usize
        } else {
            let mut next = self.free.next(w + 1).unwrap_or(NONE);
            if self.unsummarized > w {
                next = next.min(self.unsummarized);
            }
            if next == NONE {
                return None;
            }
            (next << 6) | (!self.words[next]).trailing_zeros() as usize
        };
        // Bits past the universe are zero, so a zero found there means none is below it.
        (index < self.universe).then_some(index as u32)
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
    /// If the set holds every index a `u32` can name.
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
                let i = u32::try_from(self.universe)
                    .expect("BitSet::claim: every index a u32 can name is in the set");
                self.insert(i);
                i
            }
        }
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

    /// The lazy complement within the universe. Allocates nothing.
    ///
    /// Indices at or past [`universe`](BitSet::universe) are not in the complement, and a set
    /// built by `insert` or `collect` has the universe `largest index + 1`. To take a mask away
    /// from a larger set, write `a.and_not(&mask)`, which needs no universe, rather than
    /// `a.and(mask.not())`, or [`grow`](BitSet::grow) the mask to the larger set's universe
    /// first.
    ///
    /// ```
    /// let s: dod::BitSet = dod::BitSet::from_words(vec![0b1010], 5).unwrap();
    /// assert_eq!(s.not().into_iter().collect::<Vec<_>>(), [0, 2, 4]);
    ///
    /// let enemies: dod::BitSet = (0..6).collect();
    /// let mut tanks: dod::BitSet = [2].into_iter().collect(); // universe 3
    /// assert_eq!(enemies.and(tanks.not()).into_iter().collect::<Vec<_>>(), [0, 1]);
    /// assert_eq!(enemies.and_not(&tanks).into_iter().collect::<Vec<_>>(), [0, 1, 3, 4, 5]);
    /// tanks.grow(enemies.universe());
    /// assert_eq!(enemies.and(tanks.not()).into_iter().collect::<Vec<_>>(), [0, 1, 3, 4, 5]);
    /// ```
    #[inline]
    pub fn not(&self) -> Not<&BitSet> {
        Bits::not(self)
    }

    /// Keeps only the indices also in `other` (in place). O(n / 64).
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
    /// O(n / 64).
    ///
    /// ```
    /// let mut a: dod::BitSet = [1].into_iter().collect();
    /// let b: dod::BitSet = [300].into_iter().collect();
    /// a.or_with(&b);
    /// assert_eq!(a.iter().collect::<Vec<_>>(), [1, 300]);
    /// assert_eq!(a.universe(), 301);
    /// ```
    pub fn or_with<B: Bits>(&mut self, other: B) {
        self.grow(other.universe());
        self.combine_with(other, |a, b| a | b);
    }

    /// Removes the indices of `other` (in place). O(n / 64).
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
    /// O(n / 64).
    ///
    /// ```
    /// let mut a: dod::BitSet = [1, 2].into_iter().collect();
    /// a.xor_with(&[2, 3].into_iter().collect::<dod::BitSet>());
    /// assert_eq!(a.iter().collect::<Vec<_>>(), [1, 3]);
    /// ```
    pub fn xor_with<B: Bits>(&mut self, other: B) {
        self.grow(other.universe());
        self.combine_with(other, |a, b| a ^ b);
    }

    fn combine_with<B: Bits>(&mut self, other: B, op: impl Fn(u64, u64) -> u64) {
        let n = words_for(self.universe);
        let tail = if self.universe % 64 == 0 {
            u64::MAX
        } else {
            (1u64 << (self.universe % 64)) - 1
        };
        for (w, word) in self.words[..n].iter_mut().enumerate() {
            *word = op(*word, other.word(w));
        }
        if let Some(last) = self.words[..n].last_mut() {
            *last &= tail;
        }
        self.rebuild_summaries();
    }

    /// Checks every invariant; for tests.
    #[doc(hidden)]
    pub fn assert_invariants(&self) {
        let n = words_for(self.universe);
        assert!(self.words.len() >= n, "capacity below the universe");
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
        }
        let free = Summary::build(words.len(), |w| w != deferred && words[w] != u64::MAX);
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
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        for i in iter {
            self.insert(i);
        }
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
}
