//! The [`Bits`] trait and the lazy expressions built with it.
//!
//! An expression is a small struct holding its operands (references to sets, or other
//! expressions); it computes a word of the result when asked, so `a.and(&b).and_not(&c)` walks
//! the three sets once, word by word, and allocates nothing. Expressions also combine the
//! operands' summaries, so iterating `a.and(&b)` skips every region where either is empty.
//!
//! The operators build the same expressions: `&a & &b` is `a.and(&b)`, `|` is `or`, `^` is
//! `xor`, `-` is `and_not` and `!&a` is `a.not()`, on `&BitSet` and on every expression; the
//! assign forms (`a &= &b`, `|=`, `^=`, `-=`) are the in-place `*_with` methods of
//! [`BitSet`].

use alloc::vec::Vec;
use core::ops;

use super::iter::{Blocks, Iter};
use super::{check_universe, summary_levels, words_for, BitSet};

/// Anything that reads like a bit set: `&`[`BitSet`] and the lazy expressions
/// [`And`], [`Or`], [`AndNot`], [`Xor`] and [`Not`].
///
/// Implementors provide three reads (the universe, a word, a summary word); iteration,
/// counting, comparison and combination are provided on top of them. Expressions are `Copy`
/// when their operands are, and cost nothing until iterated.
///
/// # Example
///
/// ```
/// use dod::{BitSet, Bits};
///
/// let alive: BitSet = (0..10).collect();
/// let bullets: BitSet = [1, 2, 3, 8].into_iter().collect();
/// let lasers: BitSet = [3, 4].into_iter().collect();
/// let tracers: BitSet = [2].into_iter().collect();
/// let hot = alive.and(bullets.or(&lasers)).and_not(&tracers);
/// assert_eq!(hot.iter().collect::<Vec<_>>(), [1, 3, 4, 8]);
/// assert_eq!(hot.count(), 4);
/// assert!(!hot.is_empty());
/// assert!(hot.is_subset(&alive));
/// ```
///
/// # Operators
///
/// `&`, `|`, `^`, `-` and unary `!` on `&BitSet` and on expressions build the same lazy
/// expressions as [`and`](Bits::and), [`or`](Bits::or), [`xor`](Bits::xor),
/// [`and_not`](Bits::and_not) and [`not`](Bits::not), and `&=`, `|=`, `^=`, `-=` on a
/// [`BitSet`] are its in-place [`and_with`](BitSet::and_with),
/// [`or_with`](BitSet::or_with), [`xor_with`](BitSet::xor_with) and
/// [`and_not_with`](BitSet::and_not_with), taking any `Bits`:
///
/// ```
/// use dod::{BitSet, Bits};
///
/// let alive: BitSet = (0..10).collect();
/// let bullets: BitSet = [1, 2, 3, 8].into_iter().collect();
/// let lasers: BitSet = [3, 4].into_iter().collect();
/// let tracers: BitSet = [2].into_iter().collect();
/// let hot = &alive & (&bullets | &lasers) - &tracers;
/// assert!(hot.iter().eq(alive.and(bullets.or(&lasers)).and_not(&tracers).iter()));
/// assert!((&bullets ^ &lasers).iter().eq(bullets.xor(&lasers).iter()));
/// assert!((!&bullets).iter().eq(bullets.not().iter()));
/// assert_eq!((!(&bullets | &lasers)).count(), bullets.or(&lasers).not().count());
///
/// let mut a = bullets.clone();
/// a |= &lasers;
/// a -= &tracers;
/// a &= &alive;
/// assert_eq!(a, hot.to_bitset());
/// let copy = a.clone();
/// a ^= &copy;
/// assert!(a.is_empty());
/// ```
///
/// Note that `-` binds tighter than `&`: `&a & &b - &c` is `a.and(b.and_not(c))`, which is
/// the same set as `a.and(b).and_not(c)`.
pub trait Bits {
    /// Every index of the set, read whole, is below the universe. For binary expressions it
    /// is the larger of the operands' universes; [`not`](Bits::not) read whole complements
    /// within it.
    fn universe(&self) -> usize;

    /// Word `i`: bit `j` is index `64 * i + j`. Zero for words past the universe, and the bits
    /// past the universe are zero.
    fn word(&self, i: usize) -> u64;

    /// Word `i` of summary layer `level`, a superset hint for skipping empty regions: bit `j`
    /// of layer 0 word `i` must be set if [`word`](Bits::word)`(64 * i + j)` is non-zero; bit
    /// `j` of layer `l + 1` word `i` must be set if layer `l` word `64 * i + j` is non-zero.
    /// Setting more bits than needed is allowed (it only costs time).
    fn summary(&self, level: usize, i: usize) -> u64;

    /// Whether the set holds every index past its universe: a complement, or an expression
    /// whose value past the universes of its sets is a complement's (`a | !b`). Such a set is
    /// cut at its universe only where it is read whole ([`word`](Bits::word),
    /// [`summary`](Bits::summary) and everything built on them); inside an expression it
    /// holds every index past it, so that `a & !b` is `a.and_not(b)` whatever `b`'s universe.
    /// `false` for a [`BitSet`] and for any set that implements only the three reads.
    #[doc(hidden)]
    #[inline]
    fn cofinite(&self) -> bool {
        false
    }

    /// Word `i` over every index, not cut at the universe: for a
    /// [`cofinite`](Bits::cofinite) set, the words past it are all ones. What expressions
    /// combine.
    #[doc(hidden)]
    #[inline]
    fn raw_word(&self, i: usize) -> u64 {
        self.word(i)
    }

    /// Summary word `i` of layer `level` over every index, a superset hint of the non-zero
    /// [`raw_word`](Bits::raw_word)s: all ones for a [`cofinite`](Bits::cofinite) set.
    #[doc(hidden)]
    #[inline]
    fn raw_summary(&self, level: usize, i: usize) -> u64 {
        self.summary(level, i)
    }

    /// Whether [`raw_summary`](Bits::raw_summary) may have bits past the universe: a
    /// complement's all-ones summary takes part in it, so a read whole cuts it.
    #[doc(hidden)]
    #[inline]
    fn loose(&self) -> bool {
        false
    }

    /// The indices in ascending order.
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = [1, 2, 3].into_iter().collect();
    /// let b: BitSet = [2].into_iter().collect();
    /// assert_eq!(a.and_not(&b).iter().collect::<Vec<_>>(), [1, 3]);
    /// ```
    #[inline]
    fn iter(self) -> Iter<Self>
    where
        Self: Sized,
    {
        Iter::new(self)
    }

    /// The indices `>= from` in ascending order.
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = [1, 200, 300].into_iter().collect();
    /// let b: BitSet = [200, 300].into_iter().collect();
    /// assert_eq!(a.and(&b).iter_from(201).collect::<Vec<_>>(), [300]);
    /// ```
    #[inline]
    fn iter_from(self, from: u32) -> Iter<Self>
    where
        Self: Sized,
    {
        Iter::from(self, from)
    }

    /// The non-zero words as `(base, word)`.
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = [1, 3, 64].into_iter().collect();
    /// let b: BitSet = [3, 64].into_iter().collect();
    /// assert_eq!(a.and(&b).blocks().collect::<Vec<_>>(), [(0, 0b1000), (64, 1)]);
    /// ```
    #[inline]
    fn blocks(self) -> Blocks<Self>
    where
        Self: Sized,
    {
        Blocks::new(self)
    }

    /// Calls `f` with every index, ascending.
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = [5, 6].into_iter().collect();
    /// let mut seen = Vec::new();
    /// a.not().for_each(|i| seen.push(i));
    /// assert_eq!(seen, [0, 1, 2, 3, 4]);
    /// ```
    #[inline]
    fn for_each(self, mut f: impl FnMut(u32))
    where
        Self: Sized,
    {
        self.blocks().fold_indices((), |(), i| f(i))
    }

    /// The number of indices. O(non-empty words), for a set as for an expression.
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = (0..100).collect();
    /// let b: BitSet = (50..200).collect();
    /// assert_eq!(a.xor(&b).count(), 150);
    /// ```
    #[inline]
    fn count(self) -> usize
    where
        Self: Sized,
    {
        self.blocks()
            .fold_words(0, |n, _, w| n + w.count_ones() as usize)
    }

    /// Whether no index is in the set: exact, it stops at the first non-zero word.
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = [1, 2].into_iter().collect();
    /// let b: BitSet = [3].into_iter().collect();
    /// assert!(a.and(&b).is_empty());
    /// assert!(!a.or(&b).is_empty());
    /// ```
    // Expressions are small `Copy` views, taken by value like iterators.
    #[allow(clippy::wrong_self_convention)]
    #[inline]
    fn is_empty(self) -> bool
    where
        Self: Sized,
    {
        self.blocks().next().is_none()
    }

    /// Whether `index` is in the set. O(1) per operand.
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = [1, 2].into_iter().collect();
    /// assert!(a.not().contains(0));
    /// assert!(!a.not().contains(2));
    /// assert!(!a.not().contains(3)); // past the universe
    /// ```
    #[inline]
    fn contains(self, index: u32) -> bool
    where
        Self: Sized,
    {
        let index = index as usize;
        index < self.universe() && self.word(index >> 6) & (1 << (index & 63)) != 0
    }

    /// Whether every index of the set is in `other` (`BTreeSet::is_subset`). Both sets are
    /// read whole, as iteration reads them: a complement counts only the indices below its
    /// universe. Exact: walks the words of the difference where the set's summary has a bit,
    /// and stops at the first non-zero one. O(non-empty words).
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = [1, 2].into_iter().collect();
    /// let b: BitSet = [2, 3].into_iter().collect();
    /// let c: BitSet = [1, 2, 3, 4].into_iter().collect();
    /// assert!(a.or(&b).is_subset(&c));
    /// assert!(!c.is_subset(a.or(&b)));
    /// assert!(a.and(&b).is_subset(&b));
    /// ```
    #[allow(clippy::wrong_self_convention)]
    #[inline]
    fn is_subset<B: Bits>(self, other: B) -> bool
    where
        Self: Sized,
    {
        Whole(self).and_not(Whole(other)).is_empty()
    }

    /// Whether every index of `other` is in the set (`BTreeSet::is_superset`): `other`
    /// [`is_subset`](Bits::is_subset) of the set, both read whole. O(non-empty words of
    /// `other`).
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = [1, 2].into_iter().collect();
    /// let b: BitSet = [2, 3].into_iter().collect();
    /// assert!(a.or(&b).is_superset(&b));
    /// assert!(!a.and(&b).is_superset(&b));
    /// ```
    #[allow(clippy::wrong_self_convention)]
    #[inline]
    fn is_superset<B: Bits>(self, other: B) -> bool
    where
        Self: Sized,
    {
        Whole(other).and_not(Whole(self)).is_empty()
    }

    /// Whether the set and `other` have no index in common (`BTreeSet::is_disjoint`), both
    /// read whole. Exact: only words where both summaries have a bit are read. O(non-empty
    /// words).
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = [1, 2].into_iter().collect();
    /// let b: BitSet = [2, 3].into_iter().collect();
    /// assert!(a.and_not(&b).is_disjoint(&b));
    /// assert!(!a.or(&b).is_disjoint(&b));
    /// ```
    #[allow(clippy::wrong_self_convention)]
    #[inline]
    fn is_disjoint<B: Bits>(self, other: B) -> bool
    where
        Self: Sized,
    {
        Whole(self).and(Whole(other)).is_empty()
    }

    /// A parallel iterator over the indices (feature `rayon`). Work is split on the words of
    /// the first summary layer, 4 096 indices each, so that empty regions cost a word read;
    /// the order is not kept. Expressions of `&BitSet` are `Copy + Send + Sync`.
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// use rayon::prelude::*;
    /// let a: BitSet = (0..20_000).filter(|i| i % 3 == 0).collect();
    /// let b: BitSet = (0..20_000).filter(|i| i % 5 == 0).collect();
    /// let sum: u64 = a.and(&b).par_iter().map(u64::from).sum();
    /// assert_eq!(sum, a.and(&b).iter().map(u64::from).sum::<u64>());
    /// ```
    #[cfg(feature = "rayon")]
    #[inline]
    fn par_iter(self) -> impl rayon::iter::ParallelIterator<Item = u32>
    where
        Self: Sized + Copy + Send + Sync,
    {
        super::rayon::par_iter(self)
    }

    /// The set as a new [`BitSet`] with the same universe. O(n / 64). Bits a
    /// [`word`](Bits::word) of the user's sets past the universe are left out.
    ///
    /// # Panics
    ///
    /// If the universe is above 2³², the most indices a [`BitSet`] holds.
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = [1, 2].into_iter().collect();
    /// let b: BitSet = [2, 3].into_iter().collect();
    /// let u = a.or(&b).to_bitset();
    /// assert_eq!(u, [1, 2, 3].into_iter().collect());
    /// ```
    fn to_bitset(self) -> BitSet
    where
        Self: Sized,
    {
        let universe = self.universe();
        check_universe(universe);
        let mut words: Vec<u64> = (0..words_for(universe)).map(|i| self.word(i)).collect();
        if let (Some(last), r @ 1..) = (words.last_mut(), universe % 64) {
            *last &= (1u64 << r) - 1;
        }
        BitSet::from_words_unchecked(words, universe)
    }

    /// The lazy intersection.
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = [1, 2].into_iter().collect();
    /// let b: BitSet = [2, 3].into_iter().collect();
    /// let c: BitSet = [2].into_iter().collect();
    /// assert_eq!(a.or(&b).and(&c).iter().collect::<Vec<_>>(), [2]);
    /// ```
    #[inline]
    fn and<B: Bits>(self, other: B) -> And<Self, B>
    where
        Self: Sized,
    {
        And { a: self, b: other }
    }

    /// The lazy union.
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = [1].into_iter().collect();
    /// let b: BitSet = [2].into_iter().collect();
    /// let c: BitSet = [3].into_iter().collect();
    /// assert_eq!(a.or(&b).or(&c).count(), 3);
    /// ```
    #[inline]
    fn or<B: Bits>(self, other: B) -> Or<Self, B>
    where
        Self: Sized,
    {
        Or { a: self, b: other }
    }

    /// The lazy difference: indices of `self` not in `other`.
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = [1, 2, 3].into_iter().collect();
    /// let b: BitSet = [1].into_iter().collect();
    /// let c: BitSet = [3].into_iter().collect();
    /// assert_eq!(a.and_not(&b).and_not(&c).iter().collect::<Vec<_>>(), [2]);
    /// ```
    #[inline]
    fn and_not<B: Bits>(self, other: B) -> AndNot<Self, B>
    where
        Self: Sized,
    {
        AndNot { a: self, b: other }
    }

    /// The lazy symmetric difference.
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = [1, 2].into_iter().collect();
    /// let b: BitSet = [2].into_iter().collect();
    /// assert_eq!(a.xor(&b).xor(&b).count(), 2);
    /// ```
    #[inline]
    fn xor<B: Bits>(self, other: B) -> Xor<Self, B>
    where
        Self: Sized,
    {
        Xor { a: self, b: other }
    }

    /// The lazy complement: every index not in the set. Read whole (iterated, counted,
    /// tested with [`contains`](Bits::contains), made a [`BitSet`]) it stops at the set's
    /// [`universe`](Bits::universe); inside an expression it holds every index the set does
    /// not, so `a.and(mask.not())` (`&a & !&mask`) is `a.and_not(&mask)` whatever the
    /// universes, and `a.or(mask.not())` is cut at the larger universe of the two.
    ///
    /// ```
    /// use dod::{BitSet, Bits};
    /// let a: BitSet = [0, 1].into_iter().collect();
    /// let b = BitSet::with_universe(4);
    /// assert_eq!(a.or(&b).not().iter().collect::<Vec<_>>(), [2, 3]);
    ///
    /// let enemies: BitSet = (0..6).collect();
    /// let tanks: BitSet = [2].into_iter().collect(); // universe 3
    /// assert_eq!(tanks.not().iter().collect::<Vec<_>>(), [0, 1]);
    /// assert_eq!((&enemies & !&tanks).iter().collect::<Vec<_>>(), [0, 1, 3, 4, 5]);
    /// assert_eq!((&enemies & !&BitSet::new()).count(), 6);
    /// ```
    #[inline]
    fn not(self) -> Not<Self>
    where
        Self: Sized,
    {
        Not { a: self }
    }
}

/// The lazy intersection of two sets; made by [`Bits::and`]. Its universe is the larger one.
///
/// ```
/// use dod::{BitSet, Bits};
/// let a: BitSet = [1, 2].into_iter().collect();
/// let b: BitSet = [2, 3].into_iter().collect();
/// let both = a.and(&b);
/// assert_eq!(both.count(), 1);
/// for i in both {
///     assert_eq!(i, 2);
/// }
/// ```
#[derive(Clone, Copy, Debug)]
#[must_use = "an expression is lazy: iterate, count or test it"]
pub struct And<A, B> {
    a: A,
    b: B,
}

/// The lazy union of two sets; made by [`Bits::or`].
///
/// ```
/// use dod::{BitSet, Bits};
/// let a: BitSet = [1].into_iter().collect();
/// let b: BitSet = [2].into_iter().collect();
/// assert_eq!(a.or(&b).into_iter().collect::<Vec<_>>(), [1, 2]);
/// ```
#[derive(Clone, Copy, Debug)]
#[must_use = "an expression is lazy: iterate, count or test it"]
pub struct Or<A, B> {
    a: A,
    b: B,
}

/// The lazy difference of two sets; made by [`Bits::and_not`].
///
/// ```
/// use dod::{BitSet, Bits};
/// let a: BitSet = [1, 2].into_iter().collect();
/// let b: BitSet = [2].into_iter().collect();
/// assert_eq!(a.and_not(&b).into_iter().collect::<Vec<_>>(), [1]);
/// ```
#[derive(Clone, Copy, Debug)]
#[must_use = "an expression is lazy: iterate, count or test it"]
pub struct AndNot<A, B> {
    a: A,
    b: B,
}

/// The lazy symmetric difference of two sets; made by [`Bits::xor`].
///
/// ```
/// use dod::{BitSet, Bits};
/// let a: BitSet = [1, 2].into_iter().collect();
/// let b: BitSet = [2, 3].into_iter().collect();
/// assert_eq!(a.xor(&b).into_iter().collect::<Vec<_>>(), [1, 3]);
/// ```
#[derive(Clone, Copy, Debug)]
#[must_use = "an expression is lazy: iterate, count or test it"]
pub struct Xor<A, B> {
    a: A,
    b: B,
}

/// The lazy complement of a set; made by [`Bits::not`]. Read whole it stops at the set's
/// universe; inside an expression it holds every index past it too.
///
/// ```
/// use dod::{BitSet, Bits};
/// let a = BitSet::from_words(vec![0b10], 3).unwrap();
/// assert_eq!(a.not().into_iter().collect::<Vec<_>>(), [0, 2]);
/// let b: BitSet = (0..100).collect();
/// assert_eq!(b.and(a.not()).count(), 99);
/// ```
#[derive(Clone, Copy, Debug)]
#[must_use = "an expression is lazy: iterate, count or test it"]
pub struct Not<A> {
    a: A,
}

/// A set read whole, as one operand of a comparison: its words cut at its universe, so that
/// a complement in it holds nothing past the universe (comparisons agree with iteration).
#[derive(Clone, Copy)]
struct Whole<A>(A);

impl<A: Bits> Bits for Whole<A> {
    #[inline]
    fn universe(&self) -> usize {
        self.0.universe()
    }

    #[inline]
    fn word(&self, i: usize) -> u64 {
        self.0.word(i)
    }

    #[inline]
    fn summary(&self, level: usize, i: usize) -> u64 {
        self.0.summary(level, i)
    }
}

/// Word `i` of a set of universe `universe` whose raw word is `w`: cut at the universe.
#[inline]
fn cut(universe: usize, i: usize, w: u64) -> u64 {
    let n = words_for(universe);
    if i >= n {
        0
    } else if i + 1 == n && universe % 64 != 0 {
        w & ((1u64 << (universe % 64)) - 1)
    } else {
        w
    }
}

/// Summary word `i` of layer `level` with every bit set that stands for a word below
/// `universe`: the summary of a set that may hold any index below it.
#[inline]
fn within(universe: usize, level: usize, i: usize) -> u64 {
    let words = words_for(universe);
    let mut items = words;
    for _ in 0..level {
        items = items.div_ceil(64);
    }
    if level >= summary_levels(words) {
        return u64::from(i == 0 && items > 0);
    }
    let first = i.saturating_mul(64);
    if first >= items {
        0
    } else if items - first >= 64 {
        u64::MAX
    } else {
        (1u64 << (items - first)) - 1
    }
}

macro_rules! binary {
    ($name:ident, |$x:ident, $y:ident| $word:expr, |$sa:ident, $sb:ident| $summary:expr,
     |$ca:ident, $cb:ident| $cofinite:expr) => {
        impl<A: Bits, B: Bits> Bits for $name<A, B> {
            #[inline]
            fn universe(&self) -> usize {
                self.a.universe().max(self.b.universe())
            }

            #[inline]
            fn word(&self, i: usize) -> u64 {
                let w = self.raw_word(i);
                if self.cofinite() {
                    cut(self.universe(), i, w)
                } else {
                    // Every word past the universe is zero: no operand holds an index there
                    // unless a complement does, and then the expression is cofinite.
                    w
                }
            }

            #[inline]
            fn summary(&self, level: usize, i: usize) -> u64 {
                let s = self.raw_summary(level, i);
                // A complement's raw summary is all ones: cut it at the universe wherever one
                // takes part (a finite `!a - !b` too), so that reading whole skips what lies
                // past it. With sets alone (known when compiled) it is exact already.
                if self.loose() {
                    s & within(self.universe(), level, i)
                } else {
                    s
                }
            }

            #[inline]
            fn cofinite(&self) -> bool {
                let $ca = self.a.cofinite();
                let $cb = self.b.cofinite();
                $cofinite
            }

            #[inline]
            fn loose(&self) -> bool {
                self.cofinite() || self.a.loose() || self.b.loose()
            }

            #[inline]
            fn raw_word(&self, i: usize) -> u64 {
                let $x = self.a.raw_word(i);
                let $y = self.b.raw_word(i);
                $word
            }

            #[inline]
            fn raw_summary(&self, level: usize, i: usize) -> u64 {
                let $sa = || self.a.raw_summary(level, i);
                let $sb = || self.b.raw_summary(level, i);
                $summary
            }
        }

        impl<A: Bits, B: Bits> IntoIterator for $name<A, B> {
            type Item = u32;
            type IntoIter = Iter<Self>;

            #[inline]
            fn into_iter(self) -> Iter<Self> {
                Iter::new(self)
            }
        }
    };
}

// The summaries stay supersets with cofinite operands: a cofinite set's raw summary is all
// ones, and so is that of every cofinite expression (each formula below keeps all ones when
// the result is cofinite).
binary!(And, |x, y| x & y, |sa, sb| sa() & sb(), |ca, cb| ca & cb);
binary!(Or, |x, y| x | y, |sa, sb| sa() | sb(), |ca, cb| ca | cb);
binary!(AndNot, |x, y| x & !y, |sa, _sb| sa(), |ca, cb| ca & !cb);
binary!(Xor, |x, y| x ^ y, |sa, sb| sa() | sb(), |ca, cb| ca ^ cb);

impl<A: Bits> Bits for Not<A> {
    #[inline]
    fn universe(&self) -> usize {
        self.a.universe()
    }

    #[inline]
    fn word(&self, i: usize) -> u64 {
        cut(self.a.universe(), i, self.raw_word(i))
    }

    #[inline]
    fn summary(&self, level: usize, i: usize) -> u64 {
        // Every word below the universe may be non-zero.
        within(self.a.universe(), level, i)
    }

    #[inline]
    fn cofinite(&self) -> bool {
        !self.a.cofinite()
    }

    #[inline]
    fn loose(&self) -> bool {
        // The complement of a cofinite set has the tight summary of its universe.
        self.cofinite()
    }

    #[inline]
    fn raw_word(&self, i: usize) -> u64 {
        !self.a.raw_word(i)
    }

    #[inline]
    fn raw_summary(&self, level: usize, i: usize) -> u64 {
        if self.cofinite() {
            u64::MAX
        } else {
            // The complement of a cofinite set: nothing past the universe.
            within(self.a.universe(), level, i)
        }
    }
}

impl<A: Bits> IntoIterator for Not<A> {
    type Item = u32;
    type IntoIter = Iter<Self>;

    #[inline]
    fn into_iter(self) -> Iter<Self> {
        Iter::new(self)
    }
}

/// The operators of a set or an expression: the same lazy expressions as the methods.
macro_rules! operators {
    ($([$($generics:tt)*] $ty:ty;)*) => {$(
        /// `x & y` is [`x.and(y)`](Bits::and), lazy.
        impl<$($generics)* Rhs: Bits> ops::BitAnd<Rhs> for $ty {
            type Output = And<Self, Rhs>;

            #[inline]
            fn bitand(self, rhs: Rhs) -> And<Self, Rhs> {
                Bits::and(self, rhs)
            }
        }

        /// `x | y` is [`x.or(y)`](Bits::or), lazy.
        impl<$($generics)* Rhs: Bits> ops::BitOr<Rhs> for $ty {
            type Output = Or<Self, Rhs>;

            #[inline]
            fn bitor(self, rhs: Rhs) -> Or<Self, Rhs> {
                Bits::or(self, rhs)
            }
        }

        /// `x ^ y` is [`x.xor(y)`](Bits::xor), lazy.
        impl<$($generics)* Rhs: Bits> ops::BitXor<Rhs> for $ty {
            type Output = Xor<Self, Rhs>;

            #[inline]
            fn bitxor(self, rhs: Rhs) -> Xor<Self, Rhs> {
                Bits::xor(self, rhs)
            }
        }

        /// `x - y` is [`x.and_not(y)`](Bits::and_not), lazy.
        impl<$($generics)* Rhs: Bits> ops::Sub<Rhs> for $ty {
            type Output = AndNot<Self, Rhs>;

            #[inline]
            fn sub(self, rhs: Rhs) -> AndNot<Self, Rhs> {
                Bits::and_not(self, rhs)
            }
        }

        /// `!x` is [`x.not()`](Bits::not), lazy: the complement (`&a & !&b` is `a - b`).
        impl<$($generics)*> ops::Not for $ty {
            type Output = Not<Self>;

            #[inline]
            fn not(self) -> Not<Self> {
                Bits::not(self)
            }
        }
    )*};
}

operators! {
    ['a,] &'a BitSet;
    [A: Bits, B: Bits,] And<A, B>;
    [A: Bits, B: Bits,] Or<A, B>;
    [A: Bits, B: Bits,] AndNot<A, B>;
    [A: Bits, B: Bits,] Xor<A, B>;
    [A: Bits,] Not<A>;
}

/// `a &= b` is [`a.and_with(b)`](BitSet::and_with).
impl<B: Bits> ops::BitAndAssign<B> for BitSet {
    #[inline]
    fn bitand_assign(&mut self, rhs: B) {
        self.and_with(rhs);
    }
}

/// `a |= b` is [`a.or_with(b)`](BitSet::or_with): it grows the universe to cover `b`'s, and
/// panics past [`max_index`](BitSet::max_index).
impl<B: Bits> ops::BitOrAssign<B> for BitSet {
    #[inline]
    #[track_caller]
    fn bitor_assign(&mut self, rhs: B) {
        self.or_with(rhs);
    }
}

/// `a ^= b` is [`a.xor_with(b)`](BitSet::xor_with): it grows the universe to cover `b`'s,
/// and panics past [`max_index`](BitSet::max_index).
impl<B: Bits> ops::BitXorAssign<B> for BitSet {
    #[inline]
    #[track_caller]
    fn bitxor_assign(&mut self, rhs: B) {
        self.xor_with(rhs);
    }
}

/// `a -= b` is [`a.and_not_with(b)`](BitSet::and_not_with).
impl<B: Bits> ops::SubAssign<B> for BitSet {
    #[inline]
    fn sub_assign(&mut self, rhs: B) {
        self.and_not_with(rhs);
    }
}
