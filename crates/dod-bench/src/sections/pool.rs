//! `pool`: dod's Pool against dod's HandleMap, slotmap's three maps, a `Vec<T>` floor and
//! Pool's own layout stripped of everything but FIFO reuse (the floor of its design), on the
//! handle-map workloads: N items of 16 bytes created (from empty, and into reserved capacity),
//! iterated, looked up in insertion and random order, removed in random order, churned,
//! iterated with half removed, cleared.
//!
//! Each contender is a small [`Contender`] implementation, so a row is added by implementing
//! the trait and listing it in [`run`].

// HopSlotMap is deprecated upstream but still a peer people use: it keeps its row.
#![allow(deprecated)]

use std::hint::black_box;

use dod::{Handle, Handle32, HandleMap, Pool};
use slotmap::{DefaultKey, DenseSlotMap, HopSlotMap, SlotMap};

use crate::floors::FifoPool;
use crate::harness::{contender, measure, per_elem, progress, time, Boxed, Config, Table};

/// The item: 16 bytes.
pub(crate) type Item = [u64; 2];

const COLUMNS: [&str; 9] = [
    "create",
    "iterate",
    "lookup (insertion order)",
    "lookup (random order)",
    "remove all (random order)",
    "churn",
    "iterate (50 % removed)",
    "clear",
    "create (capacity reserved)",
];

/// One row of the table: a container of [`Item`]s addressed by keys.
///
/// Every implementation marks its per-operation methods `#[inline(always)]` (see the
/// [sections' convention](super)).
pub(crate) trait Contender {
    /// The row's name.
    const NAME: &'static str;
    /// Whether items can be removed (the `Vec<T>` floor cannot).
    const REMOVES: bool = true;
    /// The largest item count it can hold.
    const MAX: usize = usize::MAX;
    /// Its key.
    type Key: Copy;

    fn new() -> Self;
    /// An empty container with room for `n` items before it grows.
    fn with_capacity(n: usize) -> Self;
    fn insert(&mut self, v: Item) -> Self::Key;
    fn get(&self, k: Self::Key) -> Option<&Item>;
    fn remove(&mut self, k: Self::Key) -> Option<Item>;
    /// Visits every item.
    fn sum(&self) -> u64;
    fn clear(&mut self);
}

impl<K: dod::Key> Contender for Pool<Item, K> {
    const NAME: &'static str = if K::MAX_SLOTS == u16::MAX as u32 {
        "dod::Pool<_, Handle32>"
    } else {
        "dod::Pool"
    };
    const MAX: usize = K::MAX_SLOTS as usize;
    type Key = K;

    fn new() -> Self {
        Pool::with_key()
    }
    fn with_capacity(n: usize) -> Self {
        Pool::with_capacity_and_key(n)
    }
    #[inline(always)]
    fn insert(&mut self, v: Item) -> K {
        Pool::insert(self, v)
    }
    #[inline(always)]
    fn get(&self, k: K) -> Option<&Item> {
        Pool::get(self, k)
    }
    #[inline(always)]
    fn remove(&mut self, k: K) -> Option<Item> {
        Pool::remove(self, k)
    }
    fn sum(&self) -> u64 {
        self.values().fold(0, |a, v| a.wrapping_add(v[0]))
    }
    fn clear(&mut self) {
        Pool::clear(self)
    }
}

/// dod's dense map, for comparison: items packed, removal moves the last one.
impl Contender for HandleMap<Item> {
    const NAME: &'static str = "dod::HandleMap";
    type Key = Handle;

    fn new() -> Self {
        HandleMap::new()
    }
    fn with_capacity(n: usize) -> Self {
        HandleMap::with_capacity(n)
    }
    #[inline(always)]
    fn insert(&mut self, v: Item) -> Handle {
        HandleMap::insert(self, v)
    }
    #[inline(always)]
    fn get(&self, k: Handle) -> Option<&Item> {
        HandleMap::get(self, k)
    }
    #[inline(always)]
    fn remove(&mut self, k: Handle) -> Option<Item> {
        HandleMap::remove(self, k)
    }
    fn sum(&self) -> u64 {
        self.values().iter().fold(0, |a, v| a.wrapping_add(v[0]))
    }
    fn clear(&mut self) {
        HandleMap::clear(self)
    }
}

/// The floor: a plain vector indexed by position; it cannot remove.
impl Contender for Vec<Item> {
    const NAME: &'static str = "Vec<T> (floor)";
    const REMOVES: bool = false;
    type Key = usize;

    fn new() -> Self {
        Vec::new()
    }
    fn with_capacity(n: usize) -> Self {
        Vec::with_capacity(n)
    }
    #[inline(always)]
    fn insert(&mut self, v: Item) -> usize {
        self.push(v);
        self.len() - 1
    }
    #[inline(always)]
    fn get(&self, k: usize) -> Option<&Item> {
        self.as_slice().get(k)
    }
    #[inline(always)]
    fn remove(&mut self, _: usize) -> Option<Item> {
        None
    }
    fn sum(&self) -> u64 {
        self.iter().fold(0, |a, v| a.wrapping_add(v[0]))
    }
    fn clear(&mut self) {
        Vec::clear(self)
    }
}

/// Pool's layout with nothing but FIFO reuse and the alive bits: the floor of its design.
impl Contender for FifoPool<Item> {
    const NAME: &'static str = FIFO_FLOOR;
    type Key = (u32, u32);

    fn new() -> Self {
        FifoPool::new()
    }
    fn with_capacity(n: usize) -> Self {
        FifoPool::with_capacity(n)
    }
    #[inline(always)]
    fn insert(&mut self, v: Item) -> (u32, u32) {
        FifoPool::insert(self, v)
    }
    #[inline(always)]
    fn get(&self, k: (u32, u32)) -> Option<&Item> {
        FifoPool::get(self, k)
    }
    #[inline(always)]
    fn remove(&mut self, k: (u32, u32)) -> Option<Item> {
        FifoPool::remove(self, k)
    }
    fn sum(&self) -> u64 {
        let mut a = 0u64;
        self.for_each(|v| a = a.wrapping_add(v[0]));
        a
    }
    fn clear(&mut self) {
        FifoPool::clear(self)
    }
}

/// The name of the [`FifoPool`] row.
const FIFO_FLOOR: &str = "Pool's layout, stripped (floor)";

macro_rules! slotmap_contender {
    ($ty:ident, $name:literal) => {
        impl Contender for $ty<DefaultKey, Item> {
            const NAME: &'static str = $name;
            type Key = DefaultKey;

            fn new() -> Self {
                $ty::with_key()
            }
            fn with_capacity(n: usize) -> Self {
                $ty::with_capacity_and_key(n)
            }
            #[inline(always)]
            fn insert(&mut self, v: Item) -> DefaultKey {
                $ty::insert(self, v)
            }
            #[inline(always)]
            fn get(&self, k: DefaultKey) -> Option<&Item> {
                $ty::get(self, k)
            }
            #[inline(always)]
            fn remove(&mut self, k: DefaultKey) -> Option<Item> {
                $ty::remove(self, k)
            }
            fn sum(&self) -> u64 {
                self.values().fold(0, |a, v| a.wrapping_add(v[0]))
            }
            fn clear(&mut self) {
                $ty::clear(self)
            }
        }
    };
}

slotmap_contender!(SlotMap, "slotmap::SlotMap");
slotmap_contender!(HopSlotMap, "slotmap::HopSlotMap");
slotmap_contender!(DenseSlotMap, "slotmap::DenseSlotMap");

/// Inserts `n` items into `c` and pushes their keys onto `keys`.
fn fill<C: Contender>(c: &mut C, keys: &mut Vec<C::Key>, n: usize) {
    keys.extend((0..n).map(|i| c.insert([i as u64, !(i as u64)])));
}

fn filled<C: Contender>(n: usize) -> (C, Vec<C::Key>) {
    let (mut c, mut keys) = (C::new(), Vec::new());
    fill(&mut c, &mut keys, n);
    (c, keys)
}

/// The random sequences every contender replays.
struct Orders {
    n: usize,
    order: Vec<usize>,
    churn: Vec<usize>,
}

fn lookup<C: Contender>(c: &C, keys: &[C::Key]) -> u64 {
    keys.iter()
        .fold(0u64, |a, &k| a.wrapping_add(c.get(k).map_or(0, |v| v[1])))
}

/// Removes the item of every key in `keys`; the sum of their first words.
#[inline(always)]
fn remove_all<C: Contender>(c: &mut C, keys: &[C::Key]) -> u64 {
    keys.iter().fold(0u64, |a, &k| {
        a.wrapping_add(c.remove(k).map_or(0, |v| v[0]))
    })
}

/// Churn: for each pick `j`, removes the item of `keys[j]` and inserts a new one in its place.
#[inline(always)]
fn churn<C: Contender>(c: &mut C, keys: &mut [C::Key], picks: &[usize]) {
    for (r, &j) in picks.iter().enumerate() {
        c.remove(keys[j]);
        keys[j] = c.insert([r as u64, 0]);
    }
}

/// Contender `C` on column `col` of [`COLUMNS`]: it sets up now what every sample reuses, and
/// each sample times one run. `None` where it does not apply.
fn sampler<C: Contender + 'static>(col: usize, o: &Orders) -> Option<Boxed<'_>> {
    let n = o.n;
    if n > C::MAX || (!C::REMOVES && (4..=6).contains(&col)) {
        return None;
    }
    let name = C::NAME;
    Some(match col {
        0 => contender(name, move || {
            let (d, c) = time(|| filled::<C>(n));
            drop(c);
            d
        }),
        1 => {
            let (c, _) = filled::<C>(n);
            contender(name, move || time(|| c.sum()).0)
        }
        2 => {
            let (c, keys) = filled::<C>(n);
            contender(name, move || time(|| lookup(&c, &keys)).0)
        }
        3 => {
            let (c, keys) = filled::<C>(n);
            let shuffled: Vec<C::Key> = o.order.iter().map(|&i| keys[i]).collect();
            contender(name, move || time(|| lookup(&c, &shuffled)).0)
        }
        4 => contender(name, move || {
            let (mut c, keys) = filled::<C>(n);
            let shuffled: Vec<C::Key> = o.order.iter().map(|&i| keys[i]).collect();
            let d = time(|| remove_all(&mut c, &shuffled)).0;
            black_box(&c);
            d
        }),
        // churn: N rounds of removing a random live item and inserting one
        5 => contender(name, move || {
            let (mut c, mut keys) = filled::<C>(n);
            let d = time(|| churn(&mut c, &mut keys, &o.churn)).0;
            black_box(&c);
            d
        }),
        // iterate with half the items removed (random half)
        6 => {
            let (mut c, keys) = filled::<C>(n);
            for &i in &o.order[..n / 2] {
                c.remove(keys[i]);
            }
            contender(name, move || time(|| c.sum()).0)
        }
        7 => contender(name, move || {
            let (mut c, _) = filled::<C>(n);
            let d = time(|| c.clear()).0;
            black_box(&c);
            d
        }),
        // create into reserved capacity, the keys too: nothing grows inside the timed loop
        _ => contender(name, move || {
            let (mut c, mut keys) = (C::with_capacity(n), Vec::with_capacity(n));
            let d = time(|| fill(&mut c, &mut keys, n)).0;
            black_box((&c, &keys));
            d
        }),
    })
}

type Sampler = for<'a> fn(usize, &'a Orders) -> Option<Boxed<'a>>;

/// Every row, in table order.
const ROWS: [(&str, Sampler); 8] = [
    (<Pool<Item, Handle>>::NAME, sampler::<Pool<Item, Handle>>),
    (
        <Pool<Item, Handle32>>::NAME,
        sampler::<Pool<Item, Handle32>>,
    ),
    (<HandleMap<Item>>::NAME, sampler::<HandleMap<Item>>),
    (<Vec<Item>>::NAME, sampler::<Vec<Item>>),
    (FIFO_FLOOR, sampler::<FifoPool<Item>>),
    (
        <SlotMap<DefaultKey, Item>>::NAME,
        sampler::<SlotMap<DefaultKey, Item>>,
    ),
    (
        <HopSlotMap<DefaultKey, Item>>::NAME,
        sampler::<HopSlotMap<DefaultKey, Item>>,
    ),
    (
        <DenseSlotMap<DefaultKey, Item>>::NAME,
        sampler::<DenseSlotMap<DefaultKey, Item>>,
    ),
];

fn table(cfg: &Config, n: usize) -> Table {
    let mut t = Table::new(
        "pool",
        format!("Pool: {n} items of 16 bytes"),
        "ns per item (median)",
    )
    .columns(&COLUMNS);
    let mut rng = cfg.rng("pool order");
    let order = rng.permutation(n);
    let churn: Vec<usize> = (0..n).map(|_| rng.below(n)).collect();
    let o = Orders { n, order, churn };
    t.empty_rows(ROWS.iter().map(|(name, _)| *name));
    for (col, col_name) in COLUMNS.iter().enumerate() {
        progress(format!("pool: {col_name} at N = {n}"));
        let mut cs: Vec<Boxed<'_>> = ROWS.iter().filter_map(|(_, s)| s(col, &o)).collect();
        let timings = measure(cfg.reps, &mut cs);
        drop(cs);
        // ns per remaining item with half removed, per item everywhere else.
        let per = if col == 6 { n - n / 2 } else { n };
        t.fill(col, &timings, |d| per_elem(d, per));
    }
    let verdict = |col: &str, limit: f64| match t.ratio("dod::Pool", "slotmap::SlotMap", col) {
        Some(r) => {
            let floor = t
                .ratio(FIFO_FLOOR, "slotmap::SlotMap", col)
                .map_or(String::new(), |f| format!("; the layout's floor: {f:.2}x"));
            format!(
                "{col}: Pool / SlotMap = {r:.2}x (target <= {limit}x: {}{floor})",
                if r <= limit { "met" } else { "not met" }
            )
        }
        None => format!("{col}: not measured"),
    };
    let verdicts = [
        verdict("create", 1.5),
        verdict("lookup (random order)", 1.1),
        verdict("remove all (random order)", 1.1),
        verdict("churn", 1.2),
        verdict("iterate (50 % removed)", 0.8),
        verdict("clear", 1.5),
    ];
    for v in verdicts {
        t.note(v);
    }
    let reserved = "create (capacity reserved)";
    if let (Some(r), Some(f)) = (
        t.ratio("dod::Pool", "slotmap::SlotMap", reserved),
        t.ratio(FIFO_FLOOR, "slotmap::SlotMap", reserved),
    ) {
        t.note(format!(
            "{reserved}: Pool / SlotMap = {r:.2}x (no target: the targets are on create from \
             empty; the layout's floor: {f:.2}x)"
        ));
    }
    t.note(
        "create: from a new, empty container, growing as it fills; create (capacity \
         reserved): into a container made with room for every item (made outside the timed \
         loop), so that the column times the insertions without the containers' growth. churn: N \
         rounds of removing a random live item and inserting a new one. \
         iterate (50 % removed): a random half of the items removed, ns per remaining item. \
         Pool<_, Handle32> holds at most 65 535 items (— above that). Pool's layout, \
         stripped (floor): slots that keep their items, a generation per slot, alive bits in \
         plain words and FIFO reuse through the vacant slots, with nothing else (no summary \
         layers, type ids, keep-N-free or retirement). It is one more measured row, with the \
         same noise as the others, not a proven bound: it shows how much of a gap to SlotMap \
         the bare layout accounts for in this run. Targets: Pool create and clear within 1.5x of \
         slotmap::SlotMap, random lookup and remove within 1.1x, churn within 1.2x, iterate \
         with 50 % removed at most 0.8x.",
    );
    t
}

/// The section.
pub const SECTION: super::Section = super::Section {
    name: "pool",
    about: "Pool vs HandleMap, slotmap's SlotMap, HopSlotMap, DenseSlotMap, a Vec floor and its layout's floor",
    run,
};

fn run(cfg: &Config) -> Vec<Table> {
    let n = cfg.n_or(100_000, 10_000);
    let mut tables = vec![table(cfg, n)];
    if n > <Handle32 as dod::Key>::MAX_SLOTS as usize {
        // A second size where the 32-bit handles fit.
        tables.push(table(cfg, 60_000));
    }
    tables
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `C` answers at each step of the workloads, in small: the sums its iteration and
    /// lookups make, and for a container that removes, what removal, churn and a half removed
    /// leave. Equal for every contender that does the same work.
    fn census<C: Contender>(o: &Orders) -> Vec<u64> {
        let n = o.n;
        let (mut c, mut keys) = filled::<C>(n);
        let shuffled: Vec<C::Key> = o.order.iter().map(|&i| keys[i]).collect();
        let mut out = vec![c.sum(), lookup(&c, &keys), lookup(&c, &shuffled)];
        if C::REMOVES {
            let mut all = C::new();
            let all_keys: Vec<C::Key> = (0..n).map(|i| all.insert([i as u64, 1])).collect();
            let shuffled: Vec<C::Key> = o.order.iter().map(|&i| all_keys[i]).collect();
            out.push(remove_all(&mut all, &shuffled));
            out.push(all.sum());
            out.push(u64::from(all.get(all_keys[0]).is_some()));
            churn(&mut c, &mut keys, &o.churn);
            out.push(c.sum());
            out.push(lookup(&c, &keys));
            for &i in &o.order[..n / 2] {
                c.remove(keys[i]);
            }
            out.push(c.sum());
        }
        c.clear();
        out.push(c.sum());
        let (mut r, mut rk) = (C::with_capacity(n), Vec::new());
        fill(&mut r, &mut rk, n);
        out.push(lookup(&r, &rk));
        out
    }

    #[test]
    fn every_contender_answers_alike() {
        let cfg = Config {
            n: Some(700),
            quick: true,
            reps: 1,
            min_time: std::time::Duration::ZERO,
            seed: 4,
        };
        let n = 700;
        let mut rng = cfg.rng("pool order");
        let order = rng.permutation(n);
        let churn: Vec<usize> = (0..n).map(|_| rng.below(n)).collect();
        let o = Orders { n, order, churn };
        let want = census::<SlotMap<DefaultKey, Item>>(&o);
        // The peer's own answers, checked against what the steps must give.
        let firsts: u64 = (0..n as u64).sum();
        let seconds = (0..n as u64).fold(0u64, |a, i| a.wrapping_add(!i));
        assert_eq!(want[..6], [firsts, seconds, seconds, firsts, 0, 0]);
        assert_eq!(want[want.len() - 2..], [0, seconds]);
        let all: [(&str, Vec<u64>); 7] = [
            ("Pool", census::<Pool<Item, Handle>>(&o)),
            ("Pool<Handle32>", census::<Pool<Item, Handle32>>(&o)),
            ("HandleMap", census::<HandleMap<Item>>(&o)),
            (FIFO_FLOOR, census::<FifoPool<Item>>(&o)),
            ("HopSlotMap", census::<HopSlotMap<DefaultKey, Item>>(&o)),
            ("DenseSlotMap", census::<DenseSlotMap<DefaultKey, Item>>(&o)),
            ("Vec", census::<Vec<Item>>(&o)),
        ];
        for (name, got) in all {
            if name == "Vec" {
                // No removal: the sums of a full container, the clear and the refill.
                assert_eq!(got[..3], want[..3], "{name}");
                assert_eq!(got[3..], want[want.len() - 2..], "{name}");
            } else {
                assert_eq!(got, want, "{name}");
            }
        }
    }
}
