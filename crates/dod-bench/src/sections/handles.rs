//! Section `handles`: HandleMap against the containers a game programmer would otherwise reach
//! for, on the workloads of the handle_map and Bitsquid articles. 16-byte items.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use dod::{Handle32, HandleMap};
use rustc_hash::FxHashMap;

use crate::harness::{median, per_elem, progress, time, Config, Table};

/// The 16-byte item every contender stores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Item(pub [u64; 2]);

impl Item {
    fn new(i: usize) -> Self {
        Item([i as u64, !(i as u64)])
    }
}

/// What a contender must do. `remove` is `None` for the floor rows that cannot remove by key.
pub trait Contender {
    /// Its key.
    type H: Copy;
    /// The row name.
    const NAME: &'static str;
    /// Whether it removes by key (the `Vec` floors do not).
    const REMOVES: bool = true;
    /// How many items it can hold at most.
    const MAX_ITEMS: usize = usize::MAX;
    /// An empty container.
    fn new() -> Self;
    /// Inserts, returning the key.
    fn insert(&mut self, v: Item) -> Self::H;
    /// Looks up.
    fn get(&self, h: Self::H) -> Option<&Item>;
    /// Removes.
    fn remove(&mut self, h: Self::H) -> Option<Item>;
    /// Visits every item (the dense walk where there is one).
    fn sum(&self) -> u64;
    /// Removes everything.
    fn clear(&mut self);
}

macro_rules! slot_like {
    ($ty:ty, $name:expr, $key:ty, $iter:ident) => {
        slot_like!($ty, $name, $key, $iter, usize::MAX);
    };
    ($ty:ty, $name:expr, $key:ty, $iter:ident, $max:expr) => {
        impl Contender for $ty {
            type H = $key;
            const NAME: &'static str = $name;
            const MAX_ITEMS: usize = $max;
            fn new() -> Self {
                <$ty>::default()
            }
            #[inline]
            fn insert(&mut self, v: Item) -> $key {
                <$ty>::insert(self, v)
            }
            #[inline]
            fn get(&self, h: $key) -> Option<&Item> {
                <$ty>::get(self, h)
            }
            #[inline]
            fn remove(&mut self, h: $key) -> Option<Item> {
                <$ty>::remove(self, h)
            }
            fn sum(&self) -> u64 {
                self.$iter().fold(0u64, |s, v| s.wrapping_add(v.0[0]))
            }
            fn clear(&mut self) {
                <$ty>::clear(self)
            }
        }
    };
}

slot_like!(HandleMap<Item>, "dod::HandleMap", dod::Handle, dod_values);
slot_like!(
    HandleMap<Item, Handle32>,
    "dod::HandleMap<_, Handle32>",
    Handle32,
    dod_values,
    65_535
);
slot_like!(slotmap::SlotMap<slotmap::DefaultKey, Item>, "slotmap::SlotMap", slotmap::DefaultKey, values);
#[allow(deprecated)]
mod hop {
    use super::*;
    slot_like!(slotmap::HopSlotMap<slotmap::DefaultKey, Item>, "slotmap::HopSlotMap", slotmap::DefaultKey, values);
}
slot_like!(slotmap::DenseSlotMap<slotmap::DefaultKey, Item>, "slotmap::DenseSlotMap", slotmap::DefaultKey, values);

/// `values()` as an iterator, so the macro can call HandleMap's dense slice like the others.
trait DodValues {
    fn dod_values(&self) -> std::slice::Iter<'_, Item>;
}

impl<K: dod::Key> DodValues for HandleMap<Item, K> {
    fn dod_values(&self) -> std::slice::Iter<'_, Item> {
        self.values().iter()
    }
}

impl Contender for thunderdome::Arena<Item> {
    type H = thunderdome::Index;
    const NAME: &'static str = "thunderdome::Arena";
    fn new() -> Self {
        thunderdome::Arena::new()
    }
    fn insert(&mut self, v: Item) -> Self::H {
        thunderdome::Arena::insert(self, v)
    }
    fn get(&self, h: Self::H) -> Option<&Item> {
        thunderdome::Arena::get(self, h)
    }
    fn remove(&mut self, h: Self::H) -> Option<Item> {
        thunderdome::Arena::remove(self, h)
    }
    fn sum(&self) -> u64 {
        self.iter().fold(0u64, |s, (_, v)| s.wrapping_add(v.0[0]))
    }
    fn clear(&mut self) {
        thunderdome::Arena::clear(self)
    }
}

impl Contender for generational_arena::Arena<Item> {
    type H = generational_arena::Index;
    const NAME: &'static str = "generational_arena::Arena";
    fn new() -> Self {
        generational_arena::Arena::new()
    }
    fn insert(&mut self, v: Item) -> Self::H {
        generational_arena::Arena::insert(self, v)
    }
    fn get(&self, h: Self::H) -> Option<&Item> {
        generational_arena::Arena::get(self, h)
    }
    fn remove(&mut self, h: Self::H) -> Option<Item> {
        generational_arena::Arena::remove(self, h)
    }
    fn sum(&self) -> u64 {
        self.iter().fold(0u64, |s, (_, v)| s.wrapping_add(v.0[0]))
    }
    fn clear(&mut self) {
        generational_arena::Arena::clear(self)
    }
}

impl Contender for slab::Slab<Item> {
    type H = usize;
    const NAME: &'static str = "slab::Slab";
    fn new() -> Self {
        slab::Slab::new()
    }
    fn insert(&mut self, v: Item) -> usize {
        slab::Slab::insert(self, v)
    }
    fn get(&self, h: usize) -> Option<&Item> {
        slab::Slab::get(self, h)
    }
    fn remove(&mut self, h: usize) -> Option<Item> {
        self.try_remove(h)
    }
    fn sum(&self) -> u64 {
        self.iter().fold(0u64, |s, (_, v)| s.wrapping_add(v.0[0]))
    }
    fn clear(&mut self) {
        slab::Slab::clear(self)
    }
}

/// `Vec<T>`: the floor. Keys are positions; it cannot remove by key.
impl Contender for Vec<Item> {
    type H = usize;
    const NAME: &'static str = "Vec<T> (floor)";
    const REMOVES: bool = false;
    fn new() -> Self {
        Vec::new()
    }
    fn insert(&mut self, v: Item) -> usize {
        self.push(v);
        self.len() - 1
    }
    fn get(&self, h: usize) -> Option<&Item> {
        self.as_slice().get(h)
    }
    fn remove(&mut self, _: usize) -> Option<Item> {
        None
    }
    fn sum(&self) -> u64 {
        self.iter().fold(0u64, |s, v| s.wrapping_add(v.0[0]))
    }
    fn clear(&mut self) {
        Vec::clear(self)
    }
}

/// `Vec<Box<T>>`: the handle_map article's baseline, a vector of heap-allocated items.
impl Contender for Vec<Box<Item>> {
    type H = usize;
    const NAME: &'static str = "Vec<Box<T>>";
    const REMOVES: bool = false;
    fn new() -> Self {
        Vec::new()
    }
    fn insert(&mut self, v: Item) -> usize {
        self.push(Box::new(v));
        self.len() - 1
    }
    fn get(&self, h: usize) -> Option<&Item> {
        self.as_slice().get(h).map(|b| &**b)
    }
    fn remove(&mut self, _: usize) -> Option<Item> {
        None
    }
    fn sum(&self) -> u64 {
        self.iter().fold(0u64, |s, v| s.wrapping_add(v.0[0]))
    }
    fn clear(&mut self) {
        Vec::clear(self)
    }
}

/// A hash map from a counter: what a program without handles does.
macro_rules! counter_map {
    ($ty:ty, $name:expr, $key:ty, $val:ty, $wrap:expr, $unwrap:expr) => {
        impl Contender for ($ty, $key) {
            type H = $key;
            const NAME: &'static str = $name;
            fn new() -> Self {
                (<$ty>::default(), 0)
            }
            #[inline]
            fn insert(&mut self, v: Item) -> $key {
                let k = self.1;
                self.1 += 1;
                self.0.insert(k, $wrap(v));
                k
            }
            #[inline]
            fn get(&self, h: $key) -> Option<&Item> {
                self.0.get(&h).map($unwrap)
            }
            #[inline]
            fn remove(&mut self, h: $key) -> Option<Item> {
                self.0.remove(&h).map(|v: $val| *$unwrap(&v))
            }
            fn sum(&self) -> u64 {
                self.0
                    .values()
                    .fold(0u64, |s, v| s.wrapping_add($unwrap(v).0[0]))
            }
            fn clear(&mut self) {
                self.0.clear()
            }
        }
    };
}

fn same(v: Item) -> Item {
    v
}
fn id(v: &Item) -> &Item {
    v
}
#[allow(clippy::borrowed_box)] // it must take what BTreeMap<u32, Box<Item>> hands out
fn unbox(v: &Box<Item>) -> &Item {
    v
}

counter_map!(HashMap<u64, Item>, "std HashMap<u64, T>", u64, Item, same, id);
counter_map!(FxHashMap<u64, Item>, "FxHashMap<u64, T>", u64, Item, same, id);
counter_map!(BTreeMap<u32, Box<Item>>, "BTreeMap<u32, Box<T>>", u32, Box<Item>, Box::new, unbox);

/// The columns of the table, in order.
pub const COLUMNS: [&str; 8] = [
    "create",
    "iterate",
    "lookup (insertion order)",
    "lookup (random order)",
    "remove all (random order)",
    "churn",
    "iterate after churn (50 % removed)",
    "clear",
];

/// The random sequences every contender replays, so all do the same work.
pub struct Workload {
    /// Items per container.
    pub n: usize,
    lookup_order: Vec<usize>,
    remove_order: Vec<usize>,
    churn_picks: Vec<usize>,
    half: Vec<usize>,
}

impl Workload {
    /// The sequences for `n` items.
    pub fn new(cfg: &Config, n: usize) -> Self {
        let mut rng = cfg.rng("handles");
        Workload {
            n,
            lookup_order: rng.permutation(n),
            remove_order: rng.permutation(n),
            churn_picks: (0..n).map(|_| rng.below(n)).collect(),
            half: rng.permutation(n),
        }
    }
}

fn filled<C: Contender>(n: usize) -> (C, Vec<C::H>) {
    let mut c = C::new();
    let hs = (0..n).map(|i| c.insert(Item::new(i))).collect();
    (c, hs)
}

/// Runs `n` churn rounds: remove the item at a random live position, insert one in its place.
fn churn<C: Contender>(c: &mut C, hs: &mut [C::H], picks: &[usize]) {
    for (r, &p) in picks.iter().enumerate() {
        c.remove(hs[p]);
        hs[p] = c.insert(Item::new(r));
    }
}

/// One row: every column for contender `C`, ns per element.
pub fn measure<C: Contender>(cfg: &Config, w: &Workload) -> Vec<Option<f64>> {
    progress(C::NAME);
    let n = w.n;
    let reps = cfg.reps;
    let ns = |d: Duration| Some(per_elem(d, n));
    let create = median(reps, || {
        let mut c = C::new();
        let (d, _) = time(|| {
            for i in 0..n {
                c.insert(Item::new(i));
            }
        });
        d
    });
    let (c, hs) = filled::<C>(n);
    let iterate = median(reps, || time(|| c.sum()).0);
    let lookup = |order: &mut dyn Iterator<Item = C::H>| {
        let mut s = 0u64;
        for h in order {
            s = s.wrapping_add(c.get(h).map_or(0, |v| v.0[1]));
        }
        s
    };
    let lookup_seq = median(reps, || time(|| lookup(&mut hs.iter().copied())).0);
    let random: Vec<C::H> = w.lookup_order.iter().map(|&i| hs[i]).collect();
    let lookup_rand = median(reps, || time(|| lookup(&mut random.iter().copied())).0);
    drop(c);
    let clear = median(reps, || {
        let (mut c, _) = filled::<C>(n);
        time(|| c.clear()).0
    });
    let mut row = vec![ns(create), ns(iterate), ns(lookup_seq), ns(lookup_rand)];
    if C::REMOVES {
        let remove = median(reps, || {
            let (mut c, hs) = filled::<C>(n);
            let order: Vec<C::H> = w.remove_order.iter().map(|&i| hs[i]).collect();
            time(|| {
                for &h in &order {
                    c.remove(h);
                }
            })
            .0
        });
        let churned = median(reps, || {
            let (mut c, mut hs) = filled::<C>(n);
            time(|| churn(&mut c, &mut hs, &w.churn_picks)).0
        });
        let after = median(reps, || {
            let (mut c, mut hs) = filled::<C>(n);
            churn(&mut c, &mut hs, &w.churn_picks);
            for &i in &w.half[..n / 2] {
                c.remove(hs[i]);
            }
            time(|| c.sum()).0
        });
        row.extend([ns(remove), ns(churned), Some(per_elem(after, n - n / 2))]);
    } else {
        row.extend([None, None, None]);
    }
    row.push(ns(clear));
    row
}

/// Adds one line per target: the measured ratio and whether it holds.
pub fn target(t: &mut Table, what: &str, row: &str, of: &str, col: &str, max: f64) {
    match t.ratio(row, of, col) {
        Some(r) => {
            let verdict = if r <= max { "met" } else { "MISSED" };
            t.note(format!(
                "- target {what}: {row} / {of} on {col} = {r:.2} (≤ {max}): {verdict}"
            ));
        }
        None => t.note(format!("- target {what}: not measured")),
    }
}

fn run(cfg: &Config) -> Vec<Table> {
    let n = cfg.n_or(100_000, 10_000);
    let w = Workload::new(cfg, n);
    let mut t = Table::new(
        "handles",
        format!("handles: {n} items of 16 bytes"),
        "ns per element, median",
    )
    .columns(&COLUMNS);
    t.row(<HandleMap<Item>>::NAME, measure::<HandleMap<Item>>(cfg, &w));
    // Handle32 addresses 65 535 slots: past that, its row is measured at its limit.
    type Small = HandleMap<Item, Handle32>;
    if n <= Small::MAX_ITEMS {
        t.row(Small::NAME, measure::<Small>(cfg, &w));
    } else {
        let small = Workload::new(cfg, Small::MAX_ITEMS);
        t.row(
            format!("{} ({} items: its limit)", Small::NAME, Small::MAX_ITEMS),
            measure::<Small>(cfg, &small),
        );
    }
    t.row(<Vec<Item>>::NAME, measure::<Vec<Item>>(cfg, &w));
    t.row(<Vec<Box<Item>>>::NAME, measure::<Vec<Box<Item>>>(cfg, &w));
    t.row(
        <(HashMap<u64, Item>, u64)>::NAME,
        measure::<(HashMap<u64, Item>, u64)>(cfg, &w),
    );
    t.row(
        <(BTreeMap<u32, Box<Item>>, u32)>::NAME,
        measure::<(BTreeMap<u32, Box<Item>>, u32)>(cfg, &w),
    );
    t.row(
        <(FxHashMap<u64, Item>, u64)>::NAME,
        measure::<(FxHashMap<u64, Item>, u64)>(cfg, &w),
    );
    type Sm = slotmap::SlotMap<slotmap::DefaultKey, Item>;
    #[allow(deprecated)]
    type Hop = slotmap::HopSlotMap<slotmap::DefaultKey, Item>;
    type Dense = slotmap::DenseSlotMap<slotmap::DefaultKey, Item>;
    t.row(Sm::NAME, measure::<Sm>(cfg, &w));
    t.row(Hop::NAME, measure::<Hop>(cfg, &w));
    t.row(Dense::NAME, measure::<Dense>(cfg, &w));
    t.row(
        <thunderdome::Arena<Item>>::NAME,
        measure::<thunderdome::Arena<Item>>(cfg, &w),
    );
    t.row(
        <generational_arena::Arena<Item>>::NAME,
        measure::<generational_arena::Arena<Item>>(cfg, &w),
    );
    t.row(
        <slab::Slab<Item>>::NAME,
        measure::<slab::Slab<Item>>(cfg, &w),
    );
    t.note("Targets (ratios in this run):");
    let hm = <HandleMap<Item>>::NAME;
    let (dense, sm, floor) = (Dense::NAME, Sm::NAME, <Vec<Item>>::NAME);
    target(&mut t, "iterate", hm, floor, "iterate", 1.1);
    target(&mut t, "create", hm, dense, "create", 0.8);
    target(&mut t, "create", hm, sm, "create", 1.5);
    target(
        &mut t,
        "random lookup",
        hm,
        dense,
        "lookup (random order)",
        1.0,
    );
    target(
        &mut t,
        "random remove",
        hm,
        dense,
        "remove all (random order)",
        0.8,
    );
    target(&mut t, "churn", hm, dense, "churn", 0.6);
    vec![t]
}

/// The section.
pub const SECTION: super::Section = super::Section {
    name: "handles",
    about: "HandleMap vs slotmap, arenas, slab, hash maps and Vec: create, iterate, lookup, remove, churn, clear",
    run,
};
