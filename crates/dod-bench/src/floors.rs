//! Reference rows for dod's own layouts: each container's layout with everything but its core
//! rule stripped away, so a report row shows what the bare layout costs on this machine, in
//! the same run as the container and its peers. A floor row is one more measured contender,
//! not a proven bound: it shows how much of a gap to a peer the layout itself accounts for,
//! and its cells carry the same run-to-run noise as every other cell.
//!
//! - [`FifoPool`]: `Pool`'s layout. Items stay in their slots, a slot holds its generation, an
//!   alive bit per slot in plain words, and freed slots are reused oldest first (FIFO) through
//!   a queue linked through the vacant slots. No summary layers, type ids, keep-N-free or
//!   retirement.
//! - [`ThreeArrays`]: `HandleMap`'s layout. Dense items, the dense-to-sparse index beside
//!   them, and sparse slots of (generation, dense position) with the FIFO queue of free slots
//!   linked through them. No type ids, keep-N-free or retirement.
//! - [`SoaSet`]: `SparseSet`'s layout. A flat array of sparse slots (dense position, tag),
//!   the dense entity indices and the dense values in two arrays. No pages, tombstones or
//!   keys.
//! - [`GroupedPair`]: an owning group's layout. Two [`SoaSet`]s whose first `len` entries are
//!   the entities that have both, in one order: an entity that gains its second component is
//!   swapped to position `len` in both, one that loses it is swapped to `len - 1` first. No
//!   world around it (no liveness check, erased storages or change stamps).
//! - [`SummedBits`]: `BitSet`'s layout. Words of bits with two summaries, each a stack of
//!   layers in which one bit stands for a word of the layer below: "any" (the word is not
//!   empty) and "free" (the word is not full). An insertion writes the word and the "any" bit
//!   over it, and goes further only when a summary word changes. No universe growth, bound,
//!   deferred word or expressions.
//!
//! [`FifoPool`] and [`ThreeArrays`] mark the same methods `#[inline(always)]` as `Pool` and
//! `HandleMap` do (both inserts, and `Pool`'s removal), so that a floor row is not left out of
//! line where its container is inlined: in this large binary an out-of-line `FifoPool::insert`
//! measured three times its inlined time.
//!
//! Keys are `(index, generation)` pairs; a slot's generation is odd while it is occupied and
//! even while it is free, so a stale key finds nothing, as in the containers.

/// A key: a slot's index and the generation it was handed out at.
pub type Key = (u32, u32);

/// No slot: the end of a FIFO queue.
const NONE: u32 = u32::MAX;

/// Queues slot `i` last in a FIFO queue whose links live in the slots: `link(t)` points the old
/// tail `t` at `i`.
#[inline]
fn enqueue(head: &mut u32, tail: &mut u32, i: u32, link: impl FnOnce(u32)) {
    match *tail {
        NONE => *head = i,
        t => link(t),
    }
    *tail = i;
}

/// Takes the first slot off a FIFO queue: `next` is the link it held.
#[inline]
fn dequeue(head: &mut u32, tail: &mut u32, next: u32) {
    *head = next;
    if next == NONE {
        *tail = NONE;
    }
}

/// A slot of [`FifoPool`]: the item (stale once the slot is vacant), the generation (odd while
/// occupied), and the next vacant slot in the queue.
#[derive(Clone, Copy)]
struct PoolSlot<T> {
    value: T,
    generation: u32,
    next: u32,
}

/// `Pool`'s layout, stripped: see the [module docs](self).
pub struct FifoPool<T> {
    slots: Vec<PoolSlot<T>>,
    alive: Vec<u64>,
    head: u32,
    tail: u32,
    len: usize,
}

impl<T: Copy> FifoPool<T> {
    /// An empty pool.
    pub fn new() -> Self {
        FifoPool {
            slots: Vec::new(),
            alive: Vec::new(),
            head: NONE,
            tail: NONE,
            len: 0,
        }
    }

    /// An empty pool with room for `n` items (and their alive bits) before it grows.
    pub fn with_capacity(n: usize) -> Self {
        FifoPool {
            slots: Vec::with_capacity(n),
            alive: Vec::with_capacity(n.div_ceil(64)),
            ..Self::new()
        }
    }

    /// Inserts `value` into the oldest vacant slot, or a new one.
    #[inline(always)]
    pub fn insert(&mut self, value: T) -> Key {
        let i = if self.head != NONE {
            let i = self.head;
            let slot = &mut self.slots[i as usize];
            dequeue(&mut self.head, &mut self.tail, slot.next);
            slot.value = value;
            slot.generation = slot.generation.wrapping_add(1);
            i
        } else {
            let i = self.slots.len() as u32;
            self.slots.push(PoolSlot {
                value,
                generation: 1,
                next: NONE,
            });
            if i.is_multiple_of(64) {
                self.alive.push(0);
            }
            i
        };
        self.alive[i as usize / 64] |= 1 << (i % 64);
        self.len += 1;
        (i, self.slots[i as usize].generation)
    }

    /// The item of `key`, if it is alive.
    #[inline]
    pub fn get(&self, (i, generation): Key) -> Option<&T> {
        let slot = self.slots.get(i as usize)?;
        (slot.generation == generation).then_some(&slot.value)
    }

    /// Removes the item of `key` and queues its slot last.
    #[inline(always)]
    pub fn remove(&mut self, (i, generation): Key) -> Option<T> {
        let slot = self.slots.get(i as usize)?;
        if slot.generation != generation {
            return None;
        }
        let value = slot.value;
        self.vacate(i);
        Some(value)
    }

    /// Clears slot `i`'s alive bit, moves it one generation on and queues it last.
    #[inline]
    fn vacate(&mut self, i: u32) {
        self.alive[i as usize / 64] &= !(1 << (i % 64));
        let slot = &mut self.slots[i as usize];
        slot.generation = slot.generation.wrapping_add(1);
        slot.next = NONE;
        let slots = &mut self.slots;
        enqueue(&mut self.head, &mut self.tail, i, |t| {
            slots[t as usize].next = i
        });
        self.len -= 1;
    }

    /// The number of items.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Visits every item, skipping vacant slots by their alive bits.
    pub fn for_each(&self, mut f: impl FnMut(&T)) {
        for (w, &word) in self.alive.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                f(&self.slots[w * 64 + bits.trailing_zeros() as usize].value);
                bits &= bits - 1;
            }
        }
    }

    /// Removes every item, queueing the slots in index order: one walk of the alive words
    /// with the queue's ends in locals (a full word's slots in a counted loop, without the
    /// bit walk), then the words zeroed at once (as `Pool::clear` does).
    pub fn clear(&mut self) {
        let (mut head, mut tail) = (self.head, self.tail);
        let slots = &mut self.slots;
        let mut take = |i: u32| {
            let slot = &mut slots[i as usize];
            slot.generation = slot.generation.wrapping_add(1);
            slot.next = NONE;
            enqueue(&mut head, &mut tail, i, |t| slots[t as usize].next = i);
        };
        for (w, &word) in self.alive.iter().enumerate() {
            let base = (w * 64) as u32;
            if word == u64::MAX {
                (base..base + 64).for_each(&mut take);
                continue;
            }
            let mut bits = word;
            while bits != 0 {
                take(base + bits.trailing_zeros());
                bits &= bits - 1;
            }
        }
        self.alive.fill(0);
        (self.head, self.tail, self.len) = (head, tail, 0);
    }
}

impl<T: Copy> Default for FifoPool<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// A sparse slot of [`ThreeArrays`]: the generation (odd while occupied), and the dense
/// position while occupied or the next free slot while free.
#[derive(Clone, Copy)]
struct MapSlot {
    generation: u32,
    link: u32,
}

/// `HandleMap`'s layout, stripped: see the [module docs](self).
pub struct ThreeArrays<T> {
    items: Vec<T>,
    owners: Vec<u32>,
    sparse: Vec<MapSlot>,
    head: u32,
    tail: u32,
}

impl<T> ThreeArrays<T> {
    /// An empty map.
    pub fn new() -> Self {
        ThreeArrays {
            items: Vec::new(),
            owners: Vec::new(),
            sparse: Vec::new(),
            head: NONE,
            tail: NONE,
        }
    }

    /// An empty map with room for `n` items in each of its arrays before they grow.
    pub fn with_capacity(n: usize) -> Self {
        ThreeArrays {
            items: Vec::with_capacity(n),
            owners: Vec::with_capacity(n),
            sparse: Vec::with_capacity(n),
            ..Self::new()
        }
    }

    /// Appends `value` and names it with the oldest free sparse slot, or a new one.
    #[inline(always)]
    pub fn insert(&mut self, value: T) -> Key {
        let pos = self.items.len() as u32;
        let i = if self.head != NONE {
            let i = self.head;
            let slot = &mut self.sparse[i as usize];
            dequeue(&mut self.head, &mut self.tail, slot.link);
            slot.generation = slot.generation.wrapping_add(1);
            slot.link = pos;
            i
        } else {
            let i = self.sparse.len() as u32;
            self.sparse.push(MapSlot {
                generation: 1,
                link: pos,
            });
            i
        };
        self.items.push(value);
        self.owners.push(i);
        (i, self.sparse[i as usize].generation)
    }

    /// The dense position of `key`, if it is alive.
    #[inline]
    fn position(&self, (i, generation): Key) -> Option<usize> {
        let slot = self.sparse.get(i as usize)?;
        (slot.generation == generation).then_some(slot.link as usize)
    }

    /// The item of `key`, if it is alive.
    #[inline]
    pub fn get(&self, key: Key) -> Option<&T> {
        self.items.get(self.position(key)?)
    }

    /// Removes the item of `key` (the last item moves into its place) and queues its sparse
    /// slot last, one generation on.
    #[inline]
    pub fn remove(&mut self, key: Key) -> Option<T> {
        let pos = self.position(key)?;
        let value = self.items.swap_remove(pos);
        self.owners.swap_remove(pos);
        if let Some(&moved) = self.owners.get(pos) {
            self.sparse[moved as usize].link = pos as u32;
        }
        self.free(key.0);
        Some(value)
    }

    /// Queues sparse slot `i` last, one generation on.
    #[inline]
    fn free(&mut self, i: u32) {
        let slot = &mut self.sparse[i as usize];
        slot.generation = slot.generation.wrapping_add(1);
        slot.link = NONE;
        let sparse = &mut self.sparse;
        enqueue(&mut self.head, &mut self.tail, i, |t| {
            sparse[t as usize].link = i
        });
    }

    /// The items, packed.
    pub fn values(&self) -> &[T] {
        &self.items
    }

    /// Removes every item, queueing their sparse slots in dense order.
    pub fn clear(&mut self) {
        self.items.clear();
        let mut owners = std::mem::take(&mut self.owners);
        for i in owners.drain(..) {
            self.free(i);
        }
        // The dense arrays keep their capacity, as HandleMap's do.
        self.owners = owners;
    }
}

impl<T> Default for ThreeArrays<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// `SparseSet`'s layout, stripped: see the [module docs](self). Holds the entities `0..n`.
pub struct SoaSet<T> {
    /// Per entity: its dense position + 1 (0 when absent), and a tag.
    slots: Vec<(u32, u32)>,
    entities: Vec<u32>,
    values: Vec<T>,
}

impl<T> SoaSet<T> {
    /// The set of entities `0..n`, entity `e` holding `value(e)`.
    pub fn filled(n: u32, value: impl Fn(u32) -> T) -> Self {
        SoaSet {
            slots: (0..n).map(|e| (e + 1, 0)).collect(),
            entities: (0..n).collect(),
            values: (0..n).map(value).collect(),
        }
    }

    /// Removes entity `e`; the last entry moves into its place.
    #[inline]
    pub fn swap_remove(&mut self, e: u32) -> Option<T> {
        let slot = self.slots.get_mut(e as usize)?;
        let pos = slot.0.checked_sub(1)? as usize;
        *slot = (0, 0);
        let moved = *self.entities.last()?;
        self.entities.swap_remove(pos);
        let value = self.values.swap_remove(pos);
        if pos < self.entities.len() {
            self.slots[moved as usize].0 = pos as u32 + 1;
        }
        Some(value)
    }

    /// The empty set of a universe of `n` entities.
    pub fn empty(n: u32) -> Self {
        SoaSet {
            slots: vec![(0, 0); n as usize],
            entities: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Adds entity `e` (below the universe) with `value`; `false` if it was there already.
    #[inline]
    pub fn insert(&mut self, e: u32, value: T) -> bool {
        let slot = &mut self.slots[e as usize];
        if slot.0 != 0 {
            return false;
        }
        slot.0 = self.entities.len() as u32 + 1;
        self.entities.push(e);
        self.values.push(value);
        true
    }

    /// The dense position of entity `e`.
    #[inline]
    pub fn position(&self, e: u32) -> Option<usize> {
        let pos = self.slots.get(e as usize)?.0.checked_sub(1)?;
        Some(pos as usize)
    }

    /// Swaps the entries at dense positions `a` and `b`.
    #[inline]
    pub fn swap_positions(&mut self, a: usize, b: usize) {
        if a == b {
            return;
        }
        self.entities.swap(a, b);
        self.values.swap(a, b);
        self.slots[self.entities[a] as usize].0 = a as u32 + 1;
        self.slots[self.entities[b] as usize].0 = b as u32 + 1;
    }

    /// The dense entity indices.
    #[cfg(test)]
    pub fn entities(&self) -> &[u32] {
        &self.entities
    }

    /// The value of entity `e`.
    #[cfg(test)]
    pub fn get(&self, e: u32) -> Option<&T> {
        let pos = self.slots.get(e as usize)?.0.checked_sub(1)?;
        self.values.get(pos as usize)
    }

    /// The number of entities held.
    pub fn len(&self) -> usize {
        self.entities.len()
    }
}

/// An owning group's layout, stripped: see the [module docs](self). `held` holds every entity
/// of its universe; `added` gains and loses them.
pub struct GroupedPair<T> {
    held: SoaSet<T>,
    added: SoaSet<T>,
    /// How many entities have both, packed at the front of both sets.
    len: usize,
}

impl<T: Copy> GroupedPair<T> {
    /// Entities `0..n`, each holding `value` in `held` and nothing in `added`.
    pub fn new(n: u32, value: T) -> Self {
        GroupedPair {
            held: SoaSet::filled(n, |_| value),
            added: SoaSet::empty(n),
            len: 0,
        }
    }

    /// Gives entity `e` its `added` value; it joins the group.
    #[inline]
    pub fn add(&mut self, e: u32, value: T) {
        if !self.added.insert(e, value) {
            return;
        }
        let at = self.len;
        let (Some(h), Some(a)) = (self.held.position(e), self.added.position(e)) else {
            return;
        };
        self.held.swap_positions(h, at);
        self.added.swap_positions(a, at);
        self.len += 1;
    }

    /// Takes entity `e`'s `added` value away; it leaves the group first.
    #[inline]
    pub fn remove(&mut self, e: u32) -> Option<T> {
        let (h, a) = (self.held.position(e)?, self.added.position(e)?);
        if h < self.len {
            let last = self.len - 1;
            self.held.swap_positions(h, last);
            // `added` ends with the group's last member when it holds only the group: its
            // swap-and-pop below moves that member into `a`, as the swap would.
            if self.added.len() != self.len {
                self.added.swap_positions(a, last);
            }
            self.len = last;
        }
        self.added.swap_remove(e)
    }

    /// How many entities have both.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }
}

/// `BitSet`'s layout, stripped: see the [module docs](self). Its universe is fixed at
/// `64 * words`.
#[derive(Clone)]
pub struct SummedBits {
    words: Vec<u64>,
    any: Summary,
    free: Summary,
}

/// A summary's layers in one vector, as `BitSet` keeps them: layer 0 (one bit per word) at
/// offset 0, each layer above right after the one below, up to a single word.
#[derive(Clone, PartialEq, Debug)]
struct Summary {
    bits: Vec<u64>,
    /// Where each layer starts in `bits`; `starts[l + 1] - starts[l]` is its length.
    starts: Vec<usize>,
}

impl Summary {
    /// The summary whose layer 0 bit `w` is `on(words[w])`.
    fn build(words: &[u64], on: impl Fn(u64) -> bool) -> Summary {
        let mut layer = vec![0u64; words.len().div_ceil(64).max(1)];
        for (w, &word) in words.iter().enumerate() {
            if on(word) {
                layer[w >> 6] |= 1 << (w & 63);
            }
        }
        let (mut bits, mut starts) = (Vec::new(), vec![0]);
        loop {
            bits.extend_from_slice(&layer);
            starts.push(bits.len());
            if layer.len() == 1 {
                return Summary { bits, starts };
            }
            let mut up = vec![0u64; layer.len().div_ceil(64)];
            for (i, &word) in layer.iter().enumerate() {
                if word != 0 {
                    up[i >> 6] |= 1 << (i & 63);
                }
            }
            layer = up;
        }
    }

    /// Sets bit `i` of layer `l` and, while the word it lands in was empty, the bit over
    /// that word in each layer above.
    fn set_from(&mut self, mut l: usize, mut i: usize) {
        while l + 1 < self.starts.len() {
            let word = &mut self.bits[self.starts[l] + (i >> 6)];
            let was = *word;
            *word |= 1 << (i & 63);
            if was != 0 {
                return;
            }
            l += 1;
            i >>= 6;
        }
    }

    /// Clears bit `i` of layer `l` and, while the word it is in becomes empty, the bit over
    /// that word in each layer above.
    fn clear_from(&mut self, mut l: usize, mut i: usize) {
        while l + 1 < self.starts.len() {
            let word = &mut self.bits[self.starts[l] + (i >> 6)];
            *word &= !(1 << (i & 63));
            if *word != 0 {
                return;
            }
            l += 1;
            i >>= 6;
        }
    }
}

impl SummedBits {
    /// The set whose words are `words`.
    pub fn from_words(words: Vec<u64>) -> Self {
        SummedBits {
            any: Summary::build(&words, |w| w != 0),
            free: Summary::build(&words, |w| w != u64::MAX),
            words,
        }
    }

    /// Adds index `i`; `true` if it was absent.
    ///
    /// # Panics
    ///
    /// If `i` is past the universe (`64 * words`): the one check, as `BitSet`'s universe
    /// check, before the unchecked reads.
    #[inline]
    #[allow(unsafe_code)]
    pub fn insert(&mut self, i: usize) -> bool {
        assert!(i < self.words.len() << 6, "index past the universe");
        let w = i >> 6;
        // SAFETY: `i < 64 * words.len()`, so `w < words.len()`.
        let word = unsafe { self.words.get_unchecked_mut(w) };
        let old = *word;
        let new = old | 1 << (i & 63);
        *word = new;
        // The "any" bit is written whatever it was: branching on it would wait on the word.
        // SAFETY: layer 0 starts at 0 and has `words.len().div_ceil(64)` words, more than
        // `w >> 6`.
        let over = unsafe { self.any.bits.get_unchecked_mut(w >> 6) };
        let any_old = *over;
        *over = any_old | 1 << (w & 63);
        if (any_old == 0) | (new == u64::MAX) {
            self.carry(w, any_old == 0, new == u64::MAX);
        }
        old != new
    }

    /// The summary updates past "any"'s layer 0: its word over `w` was empty (`any_up`),
    /// or word `w` is now full.
    #[inline(never)]
    fn carry(&mut self, w: usize, any_up: bool, full: bool) {
        if any_up {
            self.any.set_from(1, w >> 6);
        }
        if full {
            self.free.clear_from(0, w);
        }
    }

    /// Whether index `i` is in the set.
    #[cfg(test)]
    pub fn contains(&self, i: usize) -> bool {
        self.words[i >> 6] >> (i & 63) & 1 != 0
    }

    /// Panics unless both summaries are what the words make.
    #[cfg(test)]
    fn check(&self) {
        assert!(
            self.any == Summary::build(&self.words, |w| w != 0),
            "any summary"
        );
        assert!(
            self.free == Summary::build(&self.words, |w| w != u64::MAX),
            "free summary"
        );
    }

    /// Whether the 64 words under bit `b` of the free summary's layer 0 are all full.
    #[cfg(test)]
    fn free_word_is_empty(&self, b: usize) -> bool {
        self.free.bits[b] == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, VecDeque};

    /// A tiny deterministic generator for the operation sequences.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// `FifoPool::clear` over full words (slots 0..128, taken without a bit walk) and a mixed
    /// one (two holes in 128..200): every key goes stale and the slots are queued after the
    /// holes, in index order.
    #[test]
    fn fifo_pool_clear_takes_full_and_mixed_words() {
        let mut pool = FifoPool::new();
        let keys: Vec<Key> = (0..200u64).map(|v| pool.insert(v)).collect();
        for i in [150, 130] {
            assert_eq!(pool.remove(keys[i]), Some(i as u64));
        }
        pool.clear();
        assert_eq!(pool.len(), 0);
        assert!(keys.iter().all(|&k| pool.get(k).is_none()));
        let mut want: Vec<u32> = vec![150, 130];
        want.extend((0..200).filter(|i| ![130, 150].contains(i)));
        let again: Vec<u32> = (0..200u64).map(|v| pool.insert(v).0).collect();
        assert_eq!(
            again, want,
            "holes first, then the cleared slots in index order"
        );
        assert_eq!(pool.len(), 200);
    }

    /// A floor made with room for some items hands out the keys a new one does, past its
    /// capacity too, and reuses like it.
    #[test]
    fn keyed_floors_with_capacity_behave_as_new_ones() {
        let (mut p0, mut p1) = (FifoPool::new(), FifoPool::with_capacity(40));
        let (mut m0, mut m1) = (ThreeArrays::new(), ThreeArrays::with_capacity(40));
        assert!(p1.slots.capacity() >= 40 && p1.alive.capacity() >= 1);
        assert!(m1.items.capacity() >= 40 && m1.sparse.capacity() >= 40);
        let mut keys = Vec::new();
        for v in 0..100u64 {
            let (a, b, c, d) = (p0.insert(v), p1.insert(v), m0.insert(v), m1.insert(v));
            assert_eq!((a, c), (b, d));
            keys.push((a, c));
        }
        for &(pk, mk) in keys.iter().step_by(3) {
            assert_eq!(p0.remove(pk), p1.remove(pk));
            assert_eq!(m0.remove(mk), m1.remove(mk));
        }
        for v in 0..50u64 {
            assert_eq!(p0.insert(v), p1.insert(v));
            assert_eq!(m0.insert(v), m1.insert(v));
        }
        for &(pk, mk) in &keys {
            assert_eq!(p0.get(pk), p1.get(pk));
            assert_eq!(m0.get(mk), m1.get(mk));
        }
    }

    /// Both floors with keys against a `HashMap` of the live keys, after every operation:
    /// lookups of live and removed keys, FIFO reuse of the freed slots, the visited items.
    #[test]
    fn keyed_floors_follow_a_map_and_reuse_fifo() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut pool = FifoPool::new();
        let mut map = ThreeArrays::new();
        let mut model: HashMap<u32, u64> = HashMap::new();
        let mut keys: Vec<(Key, Key, u32)> = Vec::new();
        let mut dead: Vec<(Key, Key)> = Vec::new();
        let (mut pool_freed, mut map_freed) = (VecDeque::new(), VecDeque::new());
        for step in 0..4000u32 {
            match rng.below(7) {
                0..=3 => {
                    let v = u64::from(step) * 3;
                    let (pk, mk) = (pool.insert(v), map.insert(v));
                    if let Some(i) = pool_freed.pop_front() {
                        assert_eq!(pk.0, i, "the pool reuses its oldest vacant slot");
                    }
                    if let Some(i) = map_freed.pop_front() {
                        assert_eq!(mk.0, i, "the map reuses its oldest free slot");
                    }
                    model.insert(step, v);
                    keys.push((pk, mk, step));
                }
                4 if step % 50 == 0 => {
                    // Cleared slots are queued after the free ones: the pool's in index
                    // order, the map's in dense order.
                    let mut live: Vec<u32> = keys.iter().map(|k| k.0 .0).collect();
                    live.sort_unstable();
                    pool_freed.extend(live);
                    map_freed.extend(map.owners.iter().copied());
                    pool.clear();
                    map.clear();
                    for (pk, mk, _) in keys.drain(..) {
                        dead.push((pk, mk));
                    }
                    model.clear();
                }
                _ if !keys.is_empty() => {
                    let (pk, mk, id) = keys.swap_remove(rng.below(keys.len()));
                    let v = model.remove(&id);
                    assert_eq!(pool.remove(pk), v);
                    assert_eq!(map.remove(mk), v);
                    pool_freed.push_back(pk.0);
                    map_freed.push_back(mk.0);
                    dead.push((pk, mk));
                }
                _ => {}
            }
            for &(pk, mk, id) in &keys {
                assert_eq!(pool.get(pk), model.get(&id));
                assert_eq!(map.get(mk), model.get(&id));
            }
            for &(pk, mk) in dead.iter().rev().take(20) {
                assert_eq!(pool.get(pk), None, "a removed key finds nothing");
                assert_eq!(map.get(mk), None, "a removed key finds nothing");
            }
            assert_eq!(pool.len(), model.len());
            let mut seen = Vec::new();
            pool.for_each(|v| seen.push(*v));
            let mut expect: Vec<u64> = model.values().copied().collect();
            let mut packed = map.values().to_vec();
            seen.sort_unstable();
            expect.sort_unstable();
            packed.sort_unstable();
            assert_eq!(seen, expect);
            assert_eq!(packed, expect);
        }
    }

    /// The set against a `HashMap`, removing every entity in a shuffled order.
    #[test]
    fn soa_set_follows_a_map() {
        let n = 500u32;
        let mut set = SoaSet::filled(n, |e| u64::from(e) + 7);
        let mut model: HashMap<u32, u64> = (0..n).map(|e| (e, u64::from(e) + 7)).collect();
        let mut order: Vec<u32> = (0..n).collect();
        let mut rng = Rng(12345);
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        for e in order {
            assert_eq!(set.swap_remove(e), model.remove(&e));
            assert_eq!(set.swap_remove(e), None);
            assert_eq!(set.len(), model.len());
            for (k, v) in &model {
                assert_eq!(set.get(*k), Some(v));
            }
        }
    }

    /// The group floor against a map of the entities with both components, after every add
    /// and remove: the same entities packed at the front of both sets, in one order.
    #[test]
    fn grouped_pair_keeps_its_group_packed_in_one_order() {
        let n = 200u32;
        let mut pair = GroupedPair::new(n, 1u64);
        let mut model: HashMap<u32, u64> = HashMap::new();
        let mut rng = Rng(777);
        for step in 0..4000u64 {
            let e = rng.below(n as usize) as u32;
            if rng.below(2) == 0 {
                pair.add(e, step);
                model.entry(e).or_insert(step);
            } else {
                assert_eq!(pair.remove(e), model.remove(&e));
            }
            assert_eq!(pair.len(), model.len());
            let (held, added) = (pair.held.entities(), pair.added.entities());
            assert_eq!(held[..pair.len()], added[..pair.len()]);
            let mut members = added[..pair.len()].to_vec();
            let mut expect: Vec<u32> = model.keys().copied().collect();
            members.sort_unstable();
            expect.sort_unstable();
            assert_eq!(members, expect);
            for (k, v) in &model {
                assert_eq!(pair.added.get(*k), Some(v));
            }
            assert!((0..n).all(|e| pair.held.get(e) == Some(&1)));
        }
    }

    /// The bit floor against a `Vec<bool>` and its summaries against a rebuild, after every
    /// insertion: random indices over three summary layers, and runs that fill whole words
    /// and whole summary words.
    #[test]
    fn summed_bits_follow_a_model_and_keep_their_summaries() {
        let universe = 64 * 64 * 65;
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut words = vec![0u64; universe / 64];
        // Full words in the first third; the rest starts empty, so that insertions there
        // set summary bits from layer 0 up.
        let third = words.len() / 3;
        for w in words[..third].iter_mut().step_by(7) {
            *w = u64::MAX;
        }
        let mut model: Vec<bool> = (0..universe)
            .map(|i| words[i >> 6] >> (i & 63) & 1 != 0)
            .collect();
        let mut set = SummedBits::from_words(words);
        set.check();
        for step in 0..20_000 {
            let i = if step % 3 == 0 {
                // Fill consecutive indices from the middle: whole words, then the 64 words
                // under one summary bit.
                universe / 2 + step / 3
            } else {
                rng.below(universe)
            };
            assert_eq!(set.insert(i), !model[i]);
            model[i] = true;
            assert!(set.contains(i));
            if step % 97 == 0 || step < 200 {
                set.check();
            }
        }
        set.check();
        for (i, &m) in model.iter().enumerate() {
            assert_eq!(set.contains(i), m);
        }
        let block = universe / 2 / 4096;
        assert!(
            set.free_word_is_empty(block + 1),
            "the sequence fills the 64 words under one free bit"
        );
    }
}
