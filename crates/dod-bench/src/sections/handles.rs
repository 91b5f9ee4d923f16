//! Section `handles`: HandleMap against the containers a game programmer would otherwise reach
//! for, on the workloads of the handle_map and Bitsquid articles. 16-byte items.

use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;

use dod::{Handle32, HandleMap};
use rustc_hash::FxHashMap;

use crate::floors::ThreeArrays;
use crate::harness::{contender, measure, per_elem, progress, time, Boxed, Config, Table};

/// The 16-byte item every contender stores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Item(pub [u64; 2]);

impl Item {
    fn new(i: usize) -> Self {
        Item([i as u64, !(i as u64)])
    }
}

/// What a contender must do. `remove` is `None` for the floor rows that cannot remove by key.
///
/// Every implementation marks its per-operation methods `#[inline(always)]` (see the
/// [sections' convention](super)).
pub trait Contender {
    /// Its key.
    type H: Copy;
    /// The row name.
    const NAME: &'static str;
    /// Whether it removes by key (the `Vec` floors do not).
    const REMOVES: bool = true;
    /// How many items it can hold at most.
    const MAX_ITEMS: usize = usize::MAX;
    /// Whether it can reserve room for its items (a `BTreeMap` cannot).
    const RESERVES: bool = true;
    /// An empty container.
    fn new() -> Self;
    /// An empty container with room for `n` items before it grows (where it has no such
    /// thing, `RESERVES` is false and the column is not measured).
    fn with_capacity(n: usize) -> Self;
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
    ($ty:ty, $name:expr, $key:ty, $iter:ident, $cap:path) => {
        slot_like!($ty, $name, $key, $iter, $cap, usize::MAX);
    };
    ($ty:ty, $name:expr, $key:ty, $iter:ident, $cap:path, $max:expr) => {
        impl Contender for $ty {
            type H = $key;
            const NAME: &'static str = $name;
            const MAX_ITEMS: usize = $max;
            fn new() -> Self {
                <$ty>::default()
            }
            fn with_capacity(n: usize) -> Self {
                $cap(n)
            }
            #[inline(always)]
            fn insert(&mut self, v: Item) -> $key {
                <$ty>::insert(self, v)
            }
            #[inline(always)]
            fn get(&self, h: $key) -> Option<&Item> {
                <$ty>::get(self, h)
            }
            #[inline(always)]
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

slot_like!(
    HandleMap<Item>,
    "dod::HandleMap",
    dod::Handle,
    dod_values,
    HandleMap::with_capacity
);
slot_like!(
    HandleMap<Item, Handle32>,
    "dod::HandleMap<_, Handle32>",
    Handle32,
    dod_values,
    HandleMap::with_capacity_and_key,
    65_535
);
slot_like!(slotmap::SlotMap<slotmap::DefaultKey, Item>, "slotmap::SlotMap", slotmap::DefaultKey, values, slotmap::SlotMap::with_capacity_and_key);
#[allow(deprecated)]
mod hop {
    use super::*;
    slot_like!(slotmap::HopSlotMap<slotmap::DefaultKey, Item>, "slotmap::HopSlotMap", slotmap::DefaultKey, values, slotmap::HopSlotMap::with_capacity_and_key);
}
slot_like!(slotmap::DenseSlotMap<slotmap::DefaultKey, Item>, "slotmap::DenseSlotMap", slotmap::DefaultKey, values, slotmap::DenseSlotMap::with_capacity_and_key);

/// `values()` as an iterator, so the macro can call HandleMap's dense slice like the others.
trait DodValues {
    fn dod_values(&self) -> std::slice::Iter<'_, Item>;
}

impl<K: dod::Key> DodValues for HandleMap<Item, K> {
    fn dod_values(&self) -> std::slice::Iter<'_, Item> {
        self.values().iter()
    }
}

impl DodValues for ThreeArrays<Item> {
    fn dod_values(&self) -> std::slice::Iter<'_, Item> {
        self.values().iter()
    }
}

// HandleMap's layout with nothing but its three arrays and FIFO reuse: the floor of its design.
slot_like!(
    ThreeArrays<Item>,
    "HandleMap's layout, stripped (floor)",
    (u32, u32),
    dod_values,
    ThreeArrays::with_capacity
);

impl Contender for thunderdome::Arena<Item> {
    type H = thunderdome::Index;
    const NAME: &'static str = "thunderdome::Arena";
    fn new() -> Self {
        thunderdome::Arena::new()
    }
    fn with_capacity(n: usize) -> Self {
        thunderdome::Arena::with_capacity(n)
    }
    #[inline(always)]
    fn insert(&mut self, v: Item) -> Self::H {
        thunderdome::Arena::insert(self, v)
    }
    #[inline(always)]
    fn get(&self, h: Self::H) -> Option<&Item> {
        thunderdome::Arena::get(self, h)
    }
    #[inline(always)]
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
    fn with_capacity(n: usize) -> Self {
        generational_arena::Arena::with_capacity(n)
    }
    #[inline(always)]
    fn insert(&mut self, v: Item) -> Self::H {
        generational_arena::Arena::insert(self, v)
    }
    #[inline(always)]
    fn get(&self, h: Self::H) -> Option<&Item> {
        generational_arena::Arena::get(self, h)
    }
    #[inline(always)]
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
    fn with_capacity(n: usize) -> Self {
        slab::Slab::with_capacity(n)
    }
    #[inline(always)]
    fn insert(&mut self, v: Item) -> usize {
        slab::Slab::insert(self, v)
    }
    #[inline(always)]
    fn get(&self, h: usize) -> Option<&Item> {
        slab::Slab::get(self, h)
    }
    #[inline(always)]
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
    fn with_capacity(n: usize) -> Self {
        Vec::with_capacity(n)
    }
    #[inline(always)]
    fn insert(&mut self, v: Item) -> usize {
        self.push(v);
        self.len() - 1
    }
    #[inline(always)]
    fn get(&self, h: usize) -> Option<&Item> {
        self.as_slice().get(h)
    }
    #[inline(always)]
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
    fn with_capacity(n: usize) -> Self {
        Vec::with_capacity(n)
    }
    #[inline(always)]
    fn insert(&mut self, v: Item) -> usize {
        self.push(Box::new(v));
        self.len() - 1
    }
    #[inline(always)]
    fn get(&self, h: usize) -> Option<&Item> {
        self.as_slice().get(h).map(|b| &**b)
    }
    #[inline(always)]
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
    ($ty:ty, $name:expr, $key:ty, $val:ty, $wrap:expr, $unwrap:expr, $cap:expr) => {
        impl Contender for ($ty, $key) {
            type H = $key;
            const NAME: &'static str = $name;
            const RESERVES: bool = $cap.is_some();
            fn new() -> Self {
                (<$ty>::default(), 0)
            }
            fn with_capacity(n: usize) -> Self {
                match $cap {
                    Some(cap) => (cap(n), 0),
                    None => Self::new(),
                }
            }
            #[inline(always)]
            fn insert(&mut self, v: Item) -> $key {
                let k = self.1;
                self.1 += 1;
                self.0.insert(k, $wrap(v));
                k
            }
            #[inline(always)]
            fn get(&self, h: $key) -> Option<&Item> {
                self.0.get(&h).map($unwrap)
            }
            #[inline(always)]
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

counter_map!(HashMap<u64, Item>, "std HashMap<u64, T>", u64, Item, same, id, Some(HashMap::<u64, Item>::with_capacity));
counter_map!(FxHashMap<u64, Item>, "FxHashMap<u64, T>", u64, Item, same, id, Some(fx_with_capacity));
counter_map!(BTreeMap<u32, Box<Item>>, "BTreeMap<u32, Box<T>>", u32, Box<Item>, Box::new, unbox, None::<fn(usize) -> BTreeMap<u32, Box<Item>>>);

fn fx_with_capacity(n: usize) -> FxHashMap<u64, Item> {
    FxHashMap::with_capacity_and_hasher(n, Default::default())
}

/// The columns of the table, in order.
pub const COLUMNS: [&str; 9] = [
    "create",
    "iterate",
    "lookup (insertion order)",
    "lookup (random order)",
    "remove all (random order)",
    "churn",
    "iterate after churn (50 % removed)",
    "clear",
    "create (capacity reserved)",
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

/// The sum of the items `hs` name, looked up one by one.
fn lookup<C: Contender>(c: &C, hs: &[C::H]) -> u64 {
    let mut s = 0u64;
    for &h in hs {
        s = s.wrapping_add(c.get(h).map_or(0, |v| v.0[1]));
    }
    s
}

/// Contender `C` on column `col` of [`COLUMNS`] as row `name`: it sets up now what every sample
/// reuses, and each sample times one run. `None` where the column does not apply.
fn sampler<'w, C: Contender + 'static>(
    col: usize,
    name: String,
    w: &'w Workload,
) -> Option<Boxed<'w>> {
    let n = w.n;
    if !C::REMOVES && (4..=6).contains(&col) {
        return None;
    }
    if col == 8 && !C::RESERVES {
        return None;
    }
    Some(match col {
        // create, from empty (0) or into reserved capacity (8: nothing grows in the timed loop)
        0 | 8 => contender(name, move || {
            let mut c = if col == 0 {
                C::new()
            } else {
                C::with_capacity(n)
            };
            let (d, _) = time(|| {
                for i in 0..n {
                    c.insert(Item::new(i));
                }
            });
            // The container is read after the timed part, as in the pool section, so that no
            // write of the loop can be dropped as dead.
            black_box(&c);
            d
        }),
        1 => {
            let (c, _) = filled::<C>(n);
            contender(name, move || time(|| c.sum()).0)
        }
        2 => {
            let (c, hs) = filled::<C>(n);
            contender(name, move || time(|| lookup(&c, &hs)).0)
        }
        3 => {
            let (c, hs) = filled::<C>(n);
            let random: Vec<C::H> = w.lookup_order.iter().map(|&i| hs[i]).collect();
            contender(name, move || time(|| lookup(&c, &random)).0)
        }
        4 => contender(name, move || {
            let (mut c, hs) = filled::<C>(n);
            let order: Vec<C::H> = w.remove_order.iter().map(|&i| hs[i]).collect();
            let d = time(|| {
                for &h in &order {
                    c.remove(h);
                }
            })
            .0;
            black_box(&c);
            d
        }),
        5 => contender(name, move || {
            let (mut c, mut hs) = filled::<C>(n);
            let d = time(|| churn(&mut c, &mut hs, &w.churn_picks)).0;
            black_box((&c, &hs));
            d
        }),
        6 => contender(name, move || {
            let (mut c, mut hs) = filled::<C>(n);
            churn(&mut c, &mut hs, &w.churn_picks);
            for &i in &w.half[..n / 2] {
                c.remove(hs[i]);
            }
            time(|| c.sum()).0
        }),
        _ => contender(name, move || {
            let (mut c, _) = filled::<C>(n);
            let d = time(|| c.clear()).0;
            black_box(&c);
            d
        }),
    })
}

/// A row of the table: its name, the workload it runs (its size) and its samplers.
struct RowSpec<'w> {
    name: String,
    w: &'w Workload,
    sampler: for<'a> fn(usize, String, &'a Workload) -> Option<Boxed<'a>>,
}

fn spec<'w, C: Contender + 'static>(w: &'w Workload) -> RowSpec<'w> {
    RowSpec {
        name: C::NAME.to_string(),
        w,
        sampler: sampler::<C>,
    }
}

/// Fills `t` column by column: the rows of one column are measured together.
fn measure_rows(cfg: &Config, t: &mut Table, rows: &[RowSpec<'_>]) {
    t.empty_rows(rows.iter().map(|r| r.name.clone()));
    for (col, col_name) in COLUMNS.iter().enumerate() {
        progress(format!("handles: {col_name}"));
        let (mut cs, mut per) = (Vec::new(), Vec::new());
        for r in rows {
            if let Some(c) = (r.sampler)(col, r.name.clone(), r.w) {
                cs.push(c);
                // ns per remaining item after churn, per item everywhere else.
                per.push(if col == 6 { r.w.n - r.w.n / 2 } else { r.w.n });
            }
        }
        let timings = measure(cfg.reps, &mut cs);
        drop(cs);
        for (tm, per) in timings.iter().zip(per) {
            t.set(&tm.name, col, tm.cell(|d| per_elem(d, per)));
        }
    }
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

/// Adds the line under a target that gives HandleMap's stripped layout's ratio to the same peer.
fn layout_floor(t: &mut Table, of: &str, col: &str) {
    let floor = <ThreeArrays<Item>>::NAME;
    if let Some(r) = t.ratio(floor, of, col) {
        t.note(format!(
            "- the layout's floor on {col}: {floor} / {of} = {r:.2}"
        ));
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
    // Handle32 addresses 65 535 slots: past that, its row is measured at its limit.
    type Small = HandleMap<Item, Handle32>;
    let small = Workload::new(cfg, Small::MAX_ITEMS);
    let small_row = if n <= Small::MAX_ITEMS {
        spec::<Small>(&w)
    } else {
        RowSpec {
            name: format!("{} ({} items: its limit)", Small::NAME, Small::MAX_ITEMS),
            ..spec::<Small>(&small)
        }
    };
    type Sm = slotmap::SlotMap<slotmap::DefaultKey, Item>;
    #[allow(deprecated)]
    type Hop = slotmap::HopSlotMap<slotmap::DefaultKey, Item>;
    type Dense = slotmap::DenseSlotMap<slotmap::DefaultKey, Item>;
    let rows = [
        spec::<HandleMap<Item>>(&w),
        small_row,
        spec::<ThreeArrays<Item>>(&w),
        spec::<Vec<Item>>(&w),
        spec::<Vec<Box<Item>>>(&w),
        spec::<(HashMap<u64, Item>, u64)>(&w),
        spec::<(BTreeMap<u32, Box<Item>>, u32)>(&w),
        spec::<(FxHashMap<u64, Item>, u64)>(&w),
        spec::<Sm>(&w),
        spec::<Hop>(&w),
        spec::<Dense>(&w),
        spec::<thunderdome::Arena<Item>>(&w),
        spec::<generational_arena::Arena<Item>>(&w),
        spec::<slab::Slab<Item>>(&w),
    ];
    measure_rows(cfg, &mut t, &rows);
    t.note("Targets (ratios in this run):");
    let hm = <HandleMap<Item>>::NAME;
    let (dense, sm, floor) = (Dense::NAME, Sm::NAME, <Vec<Item>>::NAME);
    target(&mut t, "iterate", hm, floor, "iterate", 1.1);
    target(&mut t, "create", hm, dense, "create", 0.8);
    target(&mut t, "create", hm, sm, "create", 1.5);
    layout_floor(&mut t, sm, "create");
    target(
        &mut t,
        "random lookup",
        hm,
        dense,
        "lookup (random order)",
        1.0,
    );
    layout_floor(&mut t, dense, "lookup (random order)");
    target(
        &mut t,
        "random remove",
        hm,
        dense,
        "remove all (random order)",
        0.8,
    );
    layout_floor(&mut t, dense, "remove all (random order)");
    target(&mut t, "churn", hm, dense, "churn", 0.6);
    layout_floor(&mut t, dense, "churn");
    let reserved = "create (capacity reserved)";
    if let Some(r) = t.ratio(hm, sm, reserved) {
        t.note(format!(
            "- {reserved}, no target (the targets are on create from empty): {hm} / {sm} = \
             {r:.2}"
        ));
        layout_floor(&mut t, sm, reserved);
    }
    t.note(
        "create: from a new, empty container, growing as it fills; create (capacity reserved): \
         into one made with room for every item (made outside the timed loop), so that the \
         column times the insertions without the container's growth (BTreeMap has no capacity \
         to reserve; Vec<Box<T>> still allocates each item's box).",
    );
    t.note(
        "HandleMap's layout, stripped (floor): dense items, the dense-to-sparse index beside \
         them and sparse slots of (generation, position) with FIFO reuse linked through the \
         free ones, with nothing else (no type ids, keep-N-free or retirement). It is one more \
         measured row, with the same noise as the others, not a proven bound: it shows how much \
         of a gap the bare layout accounts for in this run.",
    );
    vec![t]
}

/// The section.
pub const SECTION: super::Section = super::Section {
    name: "handles",
    about: "HandleMap vs slotmap, arenas, slab, hash maps and Vec: create, iterate, lookup, remove, churn, clear",
    run,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// What `C` answers at each step of the workloads, in small: the sums its iteration,
    /// lookups and removals make. Equal for every contender that does the same work; the
    /// steps a contender does not run are left out.
    fn census<C: Contender>(w: &Workload) -> Vec<(&'static str, u64)> {
        let n = w.n;
        let (mut c, mut hs) = filled::<C>(n);
        let random: Vec<C::H> = w.lookup_order.iter().map(|&i| hs[i]).collect();
        let mut out = vec![
            ("iterate", c.sum()),
            ("lookup", lookup(&c, &hs)),
            ("lookup (random)", lookup(&c, &random)),
        ];
        if C::REMOVES {
            let (mut all, all_hs) = filled::<C>(n);
            let removed = w.remove_order.iter().fold(0u64, |a, &i| {
                a.wrapping_add(all.remove(all_hs[i]).map_or(0, |v| v.0[0]))
            });
            out.push(("removed", removed));
            out.push(("after removal", all.sum()));
            churn(&mut c, &mut hs, &w.churn_picks);
            out.push(("after churn", c.sum()));
            out.push(("lookup after churn", lookup(&c, &hs)));
            for &i in &w.half[..n / 2] {
                c.remove(hs[i]);
            }
            out.push(("half removed", c.sum()));
        }
        c.clear();
        out.push(("cleared", c.sum()));
        if C::RESERVES {
            let mut r = C::with_capacity(n);
            let rh: Vec<C::H> = (0..n).map(|i| r.insert(Item::new(i))).collect();
            out.push(("reserved", lookup(&r, &rh)));
        }
        out
    }

    #[test]
    fn every_contender_answers_alike() {
        let cfg = Config {
            n: Some(600),
            quick: true,
            reps: 1,
            min_time: std::time::Duration::ZERO,
            seed: 6,
        };
        let w = Workload::new(&cfg, 600);
        type Sm = slotmap::SlotMap<slotmap::DefaultKey, Item>;
        let want = census::<Sm>(&w);
        assert_eq!(want.len(), 10);
        let firsts = (0..600u64).sum::<u64>();
        assert_eq!(
            (want[0].1, want[3].1, want[4].1, want[8].1),
            (firsts, firsts, 0, 0)
        );
        #[allow(deprecated)]
        type Hop = slotmap::HopSlotMap<slotmap::DefaultKey, Item>;
        type Dense = slotmap::DenseSlotMap<slotmap::DefaultKey, Item>;
        let all = [
            (<HandleMap<Item>>::NAME, census::<HandleMap<Item>>(&w)),
            (
                "HandleMap<_, Handle32>",
                census::<HandleMap<Item, Handle32>>(&w),
            ),
            (<ThreeArrays<Item>>::NAME, census::<ThreeArrays<Item>>(&w)),
            (<Vec<Item>>::NAME, census::<Vec<Item>>(&w)),
            (<Vec<Box<Item>>>::NAME, census::<Vec<Box<Item>>>(&w)),
            ("HashMap", census::<(HashMap<u64, Item>, u64)>(&w)),
            ("BTreeMap", census::<(BTreeMap<u32, Box<Item>>, u32)>(&w)),
            ("FxHashMap", census::<(FxHashMap<u64, Item>, u64)>(&w)),
            ("HopSlotMap", census::<Hop>(&w)),
            ("DenseSlotMap", census::<Dense>(&w)),
            ("thunderdome", census::<thunderdome::Arena<Item>>(&w)),
            (
                "generational_arena",
                census::<generational_arena::Arena<Item>>(&w),
            ),
            ("slab", census::<slab::Slab<Item>>(&w)),
        ];
        for (name, got) in all {
            for (step, v) in &got {
                let expected = want.iter().find(|(s, _)| s == step).map(|&(_, v)| v);
                assert_eq!(Some(*v), expected, "{name}: {step}");
            }
            assert!(got.len() >= 5, "{name}: {got:?}");
        }
    }
}
