//! `sparse`: `SparseSet` against its peers. The component-storage article's removal table
//! (every removal strategy, three orders, three sizes), add / iterate / random get at 100 % and
//! 10 % utilisation of the entity space, the page-size sweep behind `DEFAULT_PAGE_SIZE`, and
//! joins.

use crate::floors::SoaSet;
use crate::harness::{measure, per_elem, progress, time, Cell, Config, Rng, Sampler, Table};
use dod::sparse_set::DEFAULT_PAGE_SIZE;
use dod::{Handle, SparseSet};
use indexmap::IndexMap;
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::hint::black_box;
use std::time::Duration;

/// The component: 8 bytes, like the smallest row of the component-storage article's tables.
type V = u64;

/// The row of SparseSet's layout with nothing but swap-remove: the floor of its design.
const SOA_FLOOR: &str = "SparseSet's layout, stripped (floor)";

/// A removal cell whose estimate passes this many seconds is projected, not run.
const LIMIT_SECS: f64 = 10.0;

/// The section.
pub const SECTION: super::Section = super::Section {
    name: "sparse",
    about: "SparseSet: removal strategies x orders x sizes, add / iterate / get, page size, joins",
    run,
};

fn run(cfg: &Config) -> Vec<Table> {
    vec![removal(cfg), access(cfg), page_sizes(cfg), joins(cfg)]
}

#[derive(Clone, Copy, PartialEq)]
enum Order {
    Reverse,
    Linear,
    Random,
}

impl Order {
    const ALL: [Order; 3] = [Order::Reverse, Order::Linear, Order::Random];

    fn name(self) -> &'static str {
        match self {
            Order::Reverse => "Reverse",
            Order::Linear => "Linear",
            Order::Random => "Random",
        }
    }

    /// The entities `0..n` (inserted in ascending order) in this removal order.
    fn sequence(self, n: usize, rng: &mut Rng) -> Vec<u32> {
        let mut v: Vec<u32> = (0..n as u32).collect();
        match self {
            Order::Reverse => v.reverse(),
            Order::Linear => {}
            Order::Random => rng.shuffle(&mut v),
        }
        v
    }
}

fn dod_set(n: usize) -> SparseSet<V> {
    let mut s = SparseSet::with_capacity(n);
    for e in 0..n as u32 {
        s.insert(e, V::from(e));
    }
    s
}

fn fx_map(n: usize) -> FxHashMap<u32, V> {
    let mut m = FxHashMap::with_capacity_and_hasher(n, FxBuildHasher);
    for e in 0..n as u32 {
        m.insert(e, V::from(e));
    }
    m
}

fn index_map(n: usize) -> IndexMap<u32, V, FxBuildHasher> {
    let mut m = IndexMap::with_capacity_and_hasher(n, FxBuildHasher);
    for e in 0..n as u32 {
        m.insert(e, V::from(e));
    }
    m
}

fn peer_set(n: usize) -> sparseset::SparseSet<V> {
    let mut s = sparseset::SparseSet::with_capacity(n);
    for e in 0..n {
        s.insert(e, e as V);
    }
    s
}

/// One way of removing every entity, timed without its set-up.
struct Remover {
    name: &'static str,
    /// O(n) per removal in the worst orders: cells may be projected.
    quadratic: bool,
    run: fn(usize, &[u32]) -> Duration,
}

const REMOVERS: &[Remover] = &[
    Remover {
        name: "SparseSet::swap_remove",
        quadratic: false,
        run: |n, seq| {
            let mut s = dod_set(n);
            all_removed(time(|| {
                for &e in seq {
                    black_box(s.swap_remove(e));
                }
                s.len()
            }))
        },
    },
    Remover {
        name: SOA_FLOOR,
        quadratic: false,
        run: |n, seq| {
            let mut s = SoaSet::filled(n as u32, V::from);
            all_removed(time(|| {
                for &e in seq {
                    black_box(s.swap_remove(e));
                }
                s.len()
            }))
        },
    },
    Remover {
        name: "SparseSet::shift_remove",
        quadratic: true,
        run: |n, seq| {
            let mut s = dod_set(n);
            all_removed(time(|| {
                for &e in seq {
                    black_box(s.shift_remove(e));
                }
                s.len()
            }))
        },
    },
    Remover {
        name: "SparseSet::defer_remove + compact",
        quadratic: false,
        run: |n, seq| {
            let mut s = dod_set(n);
            all_removed(time(|| {
                for &e in seq {
                    black_box(s.defer_remove(e));
                }
                s.compact();
                s.len()
            }))
        },
    },
    Remover {
        name: "SparseSet::remove_many",
        quadratic: false,
        run: |n, seq| {
            let mut s = dod_set(n);
            let d = time(|| s.remove_many(seq)).0;
            all_removed((d, s.len()))
        },
    },
    Remover {
        name: "Vec<Option<T>> (holey linear)",
        quadratic: false,
        run: |n, seq| {
            let mut v: Vec<Option<V>> = (0..n as V).map(Some).collect();
            let d = time(|| {
                for &e in seq {
                    black_box(v[e as usize].take());
                }
            })
            .0;
            all_removed((d, v.iter().flatten().count()))
        },
    },
    Remover {
        name: "FxHashMap::remove",
        quadratic: false,
        run: |n, seq| {
            let mut m = fx_map(n);
            all_removed(time(|| {
                for &e in seq {
                    black_box(m.remove(&e));
                }
                m.len()
            }))
        },
    },
    Remover {
        name: "IndexMap::swap_remove",
        quadratic: false,
        run: |n, seq| {
            let mut m = index_map(n);
            all_removed(time(|| {
                for &e in seq {
                    black_box(m.swap_remove(&e));
                }
                m.len()
            }))
        },
    },
    Remover {
        name: "IndexMap::shift_remove",
        quadratic: true,
        run: |n, seq| {
            let mut m = index_map(n);
            all_removed(time(|| {
                for &e in seq {
                    black_box(m.shift_remove(&e));
                }
                m.len()
            }))
        },
    },
    Remover {
        name: "sparseset crate (swap remove)",
        quadratic: false,
        run: |n, seq| {
            let mut s = peer_set(n);
            all_removed(time(|| {
                for &e in seq {
                    black_box(s.remove(e as usize));
                }
                s.len()
            }))
        },
    },
];

/// The time of a removal run, after checking that it left no entity in its set.
fn all_removed((d, left): (Duration, usize)) -> Duration {
    assert_eq!(left, 0, "a removal strategy left entities in its set");
    d
}

/// The component-storage article's removal table: µs to remove all N entities, per strategy and
/// order.
fn removal(cfg: &Config) -> Table {
    let sizes: [usize; 3] = if cfg.quick {
        [1_000, 10_000, 25_000]
    } else {
        [10_000, 100_000, 250_000]
    };
    let mut columns = Vec::new();
    for &n in &sizes {
        for o in Order::ALL {
            columns.push(format!("{}k {}", n / 1000, o.name()));
        }
    }
    let cols: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut t = Table::new(
        "sparse",
        "SparseSet removal: remove all N entities (the component-storage article's table)",
        "µs to remove every entity",
    )
    .columns(&cols);
    let mut rng = cfg.rng("sparse-removal");
    let sequences: Vec<Vec<Vec<u32>>> = sizes
        .iter()
        .map(|&n| Order::ALL.iter().map(|o| o.sequence(n, &mut rng)).collect())
        .collect();
    let mut projections = Vec::new();
    let mut rows: Vec<Vec<Option<Cell>>> = vec![vec![None; cols.len()]; REMOVERS.len()];
    let mut projected: Vec<Vec<Option<f64>>> = vec![vec![None; cols.len()]; REMOVERS.len()];
    // (n, seconds) of the last measured size, per remover and order, for the projections.
    let mut last: Vec<Vec<Option<(usize, f64)>>> =
        vec![vec![None; Order::ALL.len()]; REMOVERS.len()];
    for (si, &n) in sizes.iter().enumerate() {
        for (o, _) in Order::ALL.iter().enumerate() {
            let col = si * Order::ALL.len() + o;
            progress(format!("removal: {}", cols[col]));
            let seq = &sequences[si][o];
            // Which removers run, and how often: a cell estimated past the limit is projected,
            // a long one runs once (its cell has no spread); the others are measured together
            // (in the same rounds, interleaved), so that every contender sees the same load on
            // the machine.
            let mut quick = Vec::new();
            let mut once = Vec::new();
            for (ri, r) in REMOVERS.iter().enumerate() {
                let estimate = last[ri][o].map(|(n0, s0)| s0 * (n as f64 / n0 as f64).powi(2));
                match estimate {
                    Some(est) if r.quadratic && est > LIMIT_SECS => {
                        let (n0, _) = last[ri][o].unwrap_or((n, 0.0));
                        projected[ri][col] = Some(est * 1e6);
                        projections.push(format!(
                            "{} {}: projected {:.1} s from the run at {}k, scaled by \
                             (N / {}k)^2 (each removal shifts O(N) entries).",
                            r.name,
                            cols[col],
                            est,
                            n0 / 1000,
                            n0 / 1000
                        ));
                    }
                    Some(est) if est > 0.3 => once.push(ri),
                    _ => quick.push(ri),
                }
            }
            let us = |d: Duration| d.as_secs_f64() * 1e6;
            let mut cs: Vec<_> = quick
                .iter()
                .map(|&ri| {
                    let r = &REMOVERS[ri];
                    (r.name, move || (r.run)(n, seq))
                })
                .collect();
            let timings = measure(cfg.reps, &mut cs);
            for (tm, &ri) in timings.iter().zip(&quick) {
                last[ri][o] = Some((n, tm.median.as_secs_f64()));
                rows[ri][col] = Some(tm.cell(us));
            }
            for &ri in &once {
                let d = (REMOVERS[ri].run)(n, seq);
                last[ri][o] = Some((n, d.as_secs_f64()));
                rows[ri][col] = Some(Cell::from(us(d)));
            }
        }
    }
    for (ri, r) in REMOVERS.iter().enumerate() {
        t.row_cells(r.name, rows[ri].clone());
        if projected[ri].iter().any(Option::is_some) {
            t.row(
                format!("{} (projected, not run)", r.name),
                projected[ri].clone(),
            );
        }
    }
    for p in projections {
        t.note(p);
    }
    // The targets.
    let peer = "sparseset crate (swap remove)";
    let mut worst: Option<(f64, String)> = None;
    for c in &cols {
        if let Some(x) = t.ratio("SparseSet::swap_remove", peer, c) {
            if worst.as_ref().is_none_or(|(w, _)| x > *w) {
                worst = Some((x, c.to_string()));
            }
        }
    }
    if let Some((w, c)) = worst {
        // The floor in the same column: the worst of a row of noisy ratios is biased upward,
        // so two rows' worsts from different columns do not compare.
        let floor = t.ratio(SOA_FLOOR, peer, &c).map_or(String::new(), |f| {
            format!(" The layout's floor in that column: {f:.2}x.")
        });
        t.note(format!(
            "Target: swap_remove <= 1.0x the sparseset crate in every order: worst ratio {w:.2}x \
             ({c}); {}.{floor}",
            if w <= 1.0 { "met" } else { "not met" }
        ));
    }
    let big = format!("{}k Linear", sizes[2] / 1000);
    for keep in [
        "SparseSet::defer_remove + compact",
        "SparseSet::remove_many",
    ] {
        if let Some(x) = t.ratio(keep, "SparseSet::swap_remove", &big) {
            t.note(format!(
                "Target: removing all {} in Linear order while keeping order <= 5x swap_remove: \
                 {keep} is {x:.2}x; {}.",
                sizes[2],
                if x <= 5.0 { "met" } else { "not met" }
            ));
        }
    }
    t.note(format!(
        "{SOA_FLOOR}: a flat array of sparse slots (dense position, tag), the dense entity \
         indices and values in two arrays, swap-remove with nothing else (no pages, tombstones \
         or keys); the sparseset crate keeps each entity beside its value in one array, which \
         makes its removal one move and its iteration a strided walk. The floor row is one more \
         measured row, with the same noise as the others: it shows how much of a gap the bare \
         layout accounts for in this run."
    ));
    t.note(
        "The component-storage article (C#, its machine): swap-back removal 42 / 295 / 692 µs and order-keeping removal 57 ms / 5.8 s \
         / 37 s for 10k / 100k / 250k in Linear order. Entities are inserted in ascending order, \
         so Linear removes the first dense entry each time.",
    );
    t
}

/// A contender of the access table: a map from entity to `V` behind one interface.
///
/// Every implementation marks its per-operation methods `#[inline(always)]` (see the
/// [sections' convention](super)).
trait Store {
    /// An empty store for `n` entities among `space` ids (pre-sized where the type needs it).
    fn new(space: usize, n: usize) -> Self;
    fn insert(&mut self, e: u32, v: V);
    /// Empties the store, keeping its memory.
    fn clear(&mut self);
    /// Sums the values in the store's own iteration order.
    fn sum(&self) -> V;
    fn get(&self, e: u32) -> V;
}

impl Store for SparseSet<V> {
    fn new(_: usize, n: usize) -> Self {
        SparseSet::with_capacity(n)
    }
    #[inline(always)]
    fn insert(&mut self, e: u32, v: V) {
        SparseSet::insert(self, e, v);
    }
    fn clear(&mut self) {
        SparseSet::clear(self);
    }
    fn sum(&self) -> V {
        self.values().iter().fold(0, |a, &v| a.wrapping_add(v))
    }
    #[inline(always)]
    fn get(&self, e: u32) -> V {
        SparseSet::get(self, e).copied().unwrap_or(0)
    }
}

/// `SparseSet` used with generational keys: every lookup checks the generation.
struct Keyed(SparseSet<V>);

fn key(e: u32) -> Handle {
    Handle::new(e, 1, 0).expect("an index below u32::MAX")
}

impl Store for Keyed {
    fn new(_: usize, n: usize) -> Self {
        Keyed(SparseSet::with_capacity(n))
    }
    #[inline(always)]
    fn insert(&mut self, e: u32, v: V) {
        self.0.insert(key(e), v);
    }
    fn clear(&mut self) {
        self.0.clear();
    }
    fn sum(&self) -> V {
        self.0
            .iter()
            .fold(0, |a, (e, &v)| a.wrapping_add(v ^ V::from(e)))
    }
    #[inline(always)]
    fn get(&self, e: u32) -> V {
        self.0.get(key(e)).copied().unwrap_or(0)
    }
}

impl Store for sparseset::SparseSet<V> {
    fn new(space: usize, _: usize) -> Self {
        sparseset::SparseSet::with_capacity(space)
    }
    #[inline(always)]
    fn insert(&mut self, e: u32, v: V) {
        sparseset::SparseSet::insert(self, e as usize, v);
    }
    fn clear(&mut self) {
        sparseset::SparseSet::clear(self);
    }
    fn sum(&self) -> V {
        self.iter().fold(0, |a, en| a.wrapping_add(en.value))
    }
    #[inline(always)]
    fn get(&self, e: u32) -> V {
        sparseset::SparseSet::get(self, e as usize)
            .copied()
            .unwrap_or(0)
    }
}

/// The dense baseline: no lookup by entity.
struct Dense(Vec<V>);

impl Store for Dense {
    fn new(_: usize, n: usize) -> Self {
        Dense(Vec::with_capacity(n))
    }
    #[inline(always)]
    fn insert(&mut self, _: u32, v: V) {
        self.0.push(v);
    }
    fn clear(&mut self) {
        self.0.clear();
    }
    fn sum(&self) -> V {
        self.0.iter().fold(0, |a, &v| a.wrapping_add(v))
    }
    #[inline(always)]
    fn get(&self, _: u32) -> V {
        unreachable!("not measured")
    }
}

/// Holey linear storage: a slot per entity index, `None` where it has no component.
struct Holey(Vec<Option<V>>);

impl Store for Holey {
    fn new(space: usize, _: usize) -> Self {
        Holey(vec![None; space])
    }
    #[inline(always)]
    fn insert(&mut self, e: u32, v: V) {
        self.0[e as usize] = Some(v);
    }
    fn clear(&mut self) {
        self.0.fill(None);
    }
    fn sum(&self) -> V {
        self.0.iter().flatten().fold(0, |a, &v| a.wrapping_add(v))
    }
    #[inline(always)]
    fn get(&self, e: u32) -> V {
        self.0[e as usize].unwrap_or(0)
    }
}

impl Store for FxHashMap<u32, V> {
    fn new(_: usize, n: usize) -> Self {
        FxHashMap::with_capacity_and_hasher(n, FxBuildHasher)
    }
    #[inline(always)]
    fn insert(&mut self, e: u32, v: V) {
        std::collections::HashMap::insert(self, e, v);
    }
    fn clear(&mut self) {
        std::collections::HashMap::clear(self);
    }
    fn sum(&self) -> V {
        self.values().fold(0, |a, &v| a.wrapping_add(v))
    }
    #[inline(always)]
    fn get(&self, e: u32) -> V {
        std::collections::HashMap::get(self, &e)
            .copied()
            .unwrap_or(0)
    }
}

impl Store for IndexMap<u32, V, FxBuildHasher> {
    fn new(_: usize, n: usize) -> Self {
        IndexMap::with_capacity_and_hasher(n, FxBuildHasher)
    }
    #[inline(always)]
    fn insert(&mut self, e: u32, v: V) {
        IndexMap::insert(self, e, v);
    }
    fn clear(&mut self) {
        IndexMap::clear(self);
    }
    fn sum(&self) -> V {
        self.values().fold(0, |a, &v| a.wrapping_add(v))
    }
    #[inline(always)]
    fn get(&self, e: u32) -> V {
        IndexMap::get(self, &e).copied().unwrap_or(0)
    }
}

/// One utilisation of the access table: the entities (ascending, as an allocator hands them
/// out), the lookup order (shuffled) and the size of the id space.
struct Case {
    space: usize,
    ents: Vec<u32>,
    gets: Vec<u32>,
}

/// Lookups and iteration are repeated inside one timing, so that each lasts a while.
const PASSES: usize = 5;

/// One contender on one case, ready to be timed one repetition at a time.
trait Bench {
    /// Times one fill of a store created inside the timing.
    fn add_new(&mut self) -> Duration;
    /// Times one fill of the kept store, emptied outside the timing.
    fn add_emptied(&mut self) -> Duration;
    /// Times `PASSES` sums over the store.
    fn iterate(&mut self) -> Duration;
    /// Whether the contender has lookups.
    fn lookups(&self) -> bool;
    /// Times `PASSES` rounds of random lookups.
    fn get(&mut self) -> Duration;
}

struct Runner<'a, S> {
    case: &'a Case,
    store: S,
    lookups: bool,
}

impl<'a, S: Store> Runner<'a, S> {
    fn boxed(case: &'a Case, lookups: bool) -> Box<dyn Bench + 'a>
    where
        S: 'a,
    {
        let mut store = S::new(case.space, case.ents.len());
        for &e in &case.ents {
            store.insert(e, V::from(e));
        }
        Box::new(Runner {
            case,
            store,
            lookups,
        })
    }
}

impl<S: Store> Bench for Runner<'_, S> {
    fn add_new(&mut self) -> Duration {
        let c = self.case;
        time(|| {
            let mut s = S::new(c.space, c.ents.len());
            for &e in &c.ents {
                s.insert(e, V::from(e));
            }
            s
        })
        .0
    }
    fn add_emptied(&mut self) -> Duration {
        self.store.clear();
        let (c, s) = (self.case, &mut self.store);
        time(|| {
            for &e in &c.ents {
                s.insert(e, V::from(e));
            }
        })
        .0
    }
    fn iterate(&mut self) -> Duration {
        let s = &self.store;
        time(|| (0..PASSES).fold(0, |a: V, _| a.wrapping_add(s.sum()))).0
    }
    fn lookups(&self) -> bool {
        self.lookups
    }
    fn get(&mut self) -> Duration {
        let (c, s) = (self.case, &self.store);
        time(|| {
            let mut sum: V = 0;
            for _ in 0..PASSES {
                for &e in &c.gets {
                    sum = sum.wrapping_add(s.get(e));
                }
            }
            sum
        })
        .0
    }
}

/// Add, iterate and random get at 100 % and 10 % utilisation of the entity space.
fn access(cfg: &Config) -> Table {
    let n = cfg.n_or(100_000, 10_000);
    let cols = [
        "add 100% (new)",
        "add 100% (emptied)",
        "iterate 100%",
        "get 100%",
        "add 10% (new)",
        "add 10% (emptied)",
        "iterate 10%",
        "get 10%",
    ];
    let mut t = Table::new(
        "sparse",
        format!("SparseSet add / iterate / random get, {n} entities"),
        "ns per element",
    )
    .columns(&cols);
    let mut rng = cfg.rng("sparse-access");
    let mut cases = Vec::new();
    for util in [1usize, 10] {
        let space = n * util;
        let mut ents: Vec<u32> = if util == 1 {
            (0..n as u32).collect()
        } else {
            let p = rng.permutation(space);
            p[..n].iter().map(|&e| e as u32).collect()
        };
        ents.sort_unstable();
        let mut gets = ents.clone();
        rng.shuffle(&mut gets);
        cases.push(Case { space, ents, gets });
    }
    const OURS: &str = "SparseSet (u32 entities; iterate: values())";
    const PEER: &str = "sparseset crate";
    const DENSE: &str = "Vec<T> (dense, no lookup by entity)";
    const HOLEY: &str = "Vec<Option<T>> (holey linear)";
    type Make = for<'a> fn(&'a Case) -> Box<dyn Bench + 'a>;
    let contenders: [(&str, Make); 7] = [
        (OURS, |c| Runner::<SparseSet<V>>::boxed(c, true)),
        (
            "SparseSet (Handle keys, generation checked; iterate: iter() pairs)",
            |c| Runner::<Keyed>::boxed(c, true),
        ),
        (PEER, |c| Runner::<sparseset::SparseSet<V>>::boxed(c, true)),
        (DENSE, |c| Runner::<Dense>::boxed(c, false)),
        (HOLEY, |c| Runner::<Holey>::boxed(c, true)),
        ("FxHashMap<u32, T>", |c| {
            Runner::<FxHashMap<u32, V>>::boxed(c, true)
        }),
        ("IndexMap<u32, T> (Fx hasher)", |c| {
            Runner::<IndexMap<u32, V, FxBuildHasher>>::boxed(c, true)
        }),
    ];
    t.empty_rows(contenders.iter().map(|(name, _)| *name));
    for (ci, case) in cases.iter().enumerate() {
        progress(format!(
            "access: {} entities among {} ids",
            case.ents.len(),
            case.space
        ));
        let m = case.ents.len();
        let mut benches: Vec<Box<dyn Bench + '_>> =
            contenders.iter().map(|(_, make)| make(case)).collect();
        // The contenders of a column are measured together: each round times every one in
        // turn, so that they share the machine's load.
        for k in 0..4 {
            let mut cs: Vec<_> = benches
                .iter_mut()
                .zip(&contenders)
                .filter(|(b, _)| k < 3 || b.lookups())
                .map(|(b, (name, _))| {
                    let sample = move || match k {
                        0 => b.add_new(),
                        1 => b.add_emptied(),
                        2 => b.iterate(),
                        _ => b.get(),
                    };
                    (*name, sample)
                })
                .collect();
            let timings = measure(cfg.reps, &mut cs);
            let per = if k < 2 { m } else { m * PASSES };
            t.fill(ci * 4 + k, &timings, |d| per_elem(d, per));
        }
    }
    let targets = [
        ("add 100% (new)", PEER, 1.0, "add into a new set"),
        ("add 100% (emptied)", PEER, 1.0, "add into an emptied set"),
        ("iterate 100%", DENSE, 1.1, "iterate"),
        ("get 100%", HOLEY, 1.2, "random get"),
    ];
    for (col, peer, limit, what) in targets {
        if let Some(x) = t.ratio(OURS, peer, col) {
            t.note(format!(
                "Target: {what} <= {limit:.1}x {peer} at 100 %: {x:.2}x; {}.",
                if x <= limit { "met" } else { "not met" }
            ));
        }
    }
    t.note(format!(
        "Entities are inserted in ascending order; at 10 % they are {n} random ids of {}; \
         lookups go in random order. \"new\": the store is created inside the timing (the \
         sparseset crate and Vec<Option<T>> allocate the whole id space up front; SparseSet \
         allocates pages as ids arrive, so this column also measures the allocator); \
         \"emptied\": the same store, cleared outside the timing, filled again. Each \
         repetition times every contender in turn; on a machine shared with other work the \
         random-access cells (get, and add at 10 %) move by several times between runs.",
        n * 10
    ));
    t
}

/// `n` ids out of `space`, in runs of 64 consecutive ids that start anywhere (not aligned to
/// pages), none overlapping: the clustered layout of the `memory` section.
pub(crate) fn clustered(space: usize, n: usize, rng: &mut Rng) -> Vec<u32> {
    const RUN: usize = 64;
    let slots = space / (2 * RUN);
    let runs = n.div_ceil(RUN);
    let mut starts = rng.permutation(slots);
    starts.truncate(runs.min(slots));
    let mut out = Vec::with_capacity(n);
    for s in starts {
        let base = s * 2 * RUN + (rng.unit() * RUN as f64) as usize;
        out.extend((base..base + RUN).map(|e| e as u32));
    }
    out.truncate(n);
    out.sort_unstable();
    out
}

/// A set of page size `P` holding `ents`.
fn page_set<const P: usize>(ents: &[u32]) -> SparseSet<V, P> {
    let mut s = SparseSet::<V, P>::with_capacity_paged(ents.len());
    for &e in ents {
        s.insert(e, V::from(e));
    }
    s
}

/// The page-size sweep's samplers for page size `P`: add (a new set filled), and `PASSES`
/// rounds of random gets (on a set filled now).
fn page_samplers<'a, const P: usize>(ents: &'a [u32], gets: &'a [u32]) -> [Sampler<'a>; 2] {
    let s = page_set::<P>(ents);
    [
        Box::new(move || {
            let (d, s) = time(|| page_set::<P>(ents));
            drop(s);
            d
        }),
        Box::new(move || {
            time(|| {
                let mut sum = 0u64;
                for _ in 0..PASSES {
                    for &e in gets {
                        sum = sum.wrapping_add(s.get(e).copied().unwrap_or(0));
                    }
                }
                sum
            })
            .0
        }),
    ]
}

/// KiB a set of page size `P` holds for `ids`.
fn page_kib<const P: usize>(ids: &[u32]) -> f64 {
    let mut c = SparseSet::<V, P>::with_capacity_paged(ids.len());
    for &e in ids {
        c.insert(e, V::from(e));
    }
    c.shrink_to_fit();
    c.memory_usage() as f64 / 1024.0
}

/// The page-size sweep behind `DEFAULT_PAGE_SIZE`.
fn page_sizes(cfg: &Config) -> Table {
    let n = cfg.n_or(100_000, 10_000);
    let space = 10 * n;
    let mut rng = cfg.rng("sparse-pages");
    let p = rng.permutation(space);
    let mut ents: Vec<u32> = p[..n].iter().map(|&e| e as u32).collect();
    ents.sort_unstable();
    let mut gets = ents.clone();
    rng.shuffle(&mut gets);
    let ids = if cfg.quick { 100_000 } else { 1_000_000 };
    let cluster = clustered(ids, ids / 10, &mut rng);
    let cols = [
        "add, 10% of ids",
        "random get, 10% of ids",
        "clustered 10%: KiB",
    ];
    let mut t = Table::new(
        "sparse",
        format!(
            "SparseSet page size: {n} entities among {space} ids; clustered: {} of {ids} ids \
             in runs of 64",
            ids / 10
        ),
        "ns per element (add, get); KiB held (clustered)",
    )
    .columns(&cols);
    progress("page sizes");
    type Samplers = for<'a> fn(&'a [u32], &'a [u32]) -> [Sampler<'a>; 2];
    type Kib = fn(&[u32]) -> f64;
    let sweep: [(usize, Samplers, Kib); 5] = [
        (64, page_samplers::<64>, page_kib::<64>),
        (128, page_samplers::<128>, page_kib::<128>),
        (256, page_samplers::<256>, page_kib::<256>),
        (1024, page_samplers::<1024>, page_kib::<1024>),
        (4096, page_samplers::<4096>, page_kib::<4096>),
    ];
    let name = |p: usize| {
        let default = if p == DEFAULT_PAGE_SIZE {
            " (default)"
        } else {
            ""
        };
        format!("PAGE = {p}{default}")
    };
    // The page sizes of a column are measured together, so that they share the machine's load.
    let rows = sweep
        .iter()
        .map(|&(p, samplers, _)| {
            let [add, get] = samplers(&ents, &gets);
            (name(p), vec![Some(add), Some(get), None])
        })
        .collect();
    let (adds, lookups) = (ents.len(), gets.len() * PASSES);
    t.measure_rows(cfg.reps, rows, |c, d| {
        per_elem(d, if c == 0 { adds } else { lookups })
    });
    for &(p, _, kib) in &sweep {
        t.set(&name(p), 2, Cell::from(kib(&cluster)));
    }
    t.note(
        "Smaller pages hold less memory for clustered ids but need a longer page table. A \
         lookup reads no page table in the pages held from index 0 up without a gap, and one \
         table entry past them, whatever the page size.",
    );
    t
}

/// Joins: driving from the smaller set against walking the mutable side.
fn joins(cfg: &Config) -> Table {
    let big = cfg.n_or(100_000, 10_000);
    let small = big / 100;
    let mut rng = cfg.rng("sparse-joins");
    let mut ids = rng.permutation(big);
    ids.truncate(small);
    let a_big: SparseSet<V> = (0..big as u32).map(|e| (e, V::from(e))).collect();
    let b_small: SparseSet<V> = ids.iter().map(|&e| (e as u32, 1)).collect();
    let cols = ["mutable side large", "mutable side small"];
    let mut t = Table::new(
        "sparse",
        format!("SparseSet joins: {big} and {small} entities, {small} shared"),
        "µs per pass",
    )
    .columns(&cols);
    progress("joins");
    let passes = 10;
    fn run<'a>(passes: usize, mut f: impl FnMut() -> u64 + 'a) -> Option<Sampler<'a>> {
        Some(Box::new(move || {
            time(|| (0..passes).map(|_| f()).fold(0, u64::wrapping_add)).0
        }))
    }
    // Large mutable side: `a_big` written, `b_small` read.
    let (mut a1, mut a2, mut a3) = (a_big.clone(), a_big.clone(), a_big.clone());
    let j_big = run(passes, || {
        let mut n = 0;
        for (_, a, b) in a1.join_mut(&b_small) {
            *a = a.wrapping_add(*b);
            n += 1;
        }
        n
    });
    let walk_big = run(passes, || {
        let mut n = 0;
        for (e, a) in a2.iter_mut() {
            if let Some(b) = b_small.get(e) {
                *a = a.wrapping_add(*b);
                n += 1;
            }
        }
        n
    });
    let shared_big = run(passes, || {
        let mut n = 0u64;
        for (_, a, b) in a3.join(&b_small) {
            n = n.wrapping_add(a ^ b);
        }
        n
    });
    // Small mutable side: `b_small` written, `a_big` read.
    let (mut b1, mut b2) = (b_small.clone(), b_small.clone());
    let j_small = run(passes, || {
        let mut n = 0;
        for (_, b, a) in b1.join_mut(&a_big) {
            *b = b.wrapping_add(*a);
            n += 1;
        }
        n
    });
    let walk_small = run(passes, || {
        let mut n = 0;
        for (e, b) in b2.iter_mut() {
            if let Some(a) = a_big.get(e) {
                *b = b.wrapping_add(*a);
                n += 1;
            }
        }
        n
    });
    // The rows of a column are measured together.
    let rows = vec![
        (
            "join_mut (drives from the smaller set)".to_string(),
            vec![j_big, j_small],
        ),
        (
            "iter_mut + get (drives from the mutable side)".to_string(),
            vec![walk_big, walk_small],
        ),
        (
            "join (shared, drives from the smaller set)".to_string(),
            vec![shared_big, None],
        ),
    ];
    t.measure_rows(cfg.reps, rows, |_, d| d.as_secs_f64() * 1e6 / passes as f64);
    black_box((&mut a3, &mut b2));
    t.note(
        "join_mut hands out &mut values by position when the other set drives: that is the one \
         unsafe block of SparseSet, and this table is what it buys.",
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value the census stores for entity `e`: not `e` itself, so that the keyed row's
    /// sum (each value xor its entity) depends on what it holds.
    fn value(e: u32) -> V {
        V::from(e) * 3 + 1
    }

    /// What a store answers to the access table's steps: its sum, its random gets, and both
    /// again after being emptied and filled.
    fn census<S: Store>(c: &Case, lookups: bool) -> Vec<V> {
        let fill = |s: &mut S| {
            for &e in &c.ents {
                s.insert(e, value(e));
            }
        };
        let gets = |s: &S| c.gets.iter().fold(0, |a: V, &e| a.wrapping_add(s.get(e)));
        let mut s = S::new(c.space, c.ents.len());
        fill(&mut s);
        let mut out = vec![s.sum(), if lookups { gets(&s) } else { 0 }];
        s.clear();
        out.push(s.sum());
        fill(&mut s);
        out.push(s.sum());
        out
    }

    #[test]
    fn every_store_answers_alike() {
        let mut rng = Rng::new(9);
        for (space, n) in [(500, 500), (5_000, 500)] {
            let mut ents: Vec<u32> = rng.permutation(space)[..n]
                .iter()
                .map(|&e| e as u32)
                .collect();
            ents.sort_unstable();
            let mut gets = ents.clone();
            rng.shuffle(&mut gets);
            let c = Case { space, ents, gets };
            let total: V = c.ents.iter().map(|&e| value(e)).sum();
            let want = vec![total, total, 0, total];
            assert_eq!(census::<SparseSet<V>>(&c, true), want);
            assert_eq!(census::<sparseset::SparseSet<V>>(&c, true), want);
            assert_eq!(census::<Holey>(&c, true), want);
            assert_eq!(census::<FxHashMap<u32, V>>(&c, true), want);
            assert_eq!(census::<IndexMap<u32, V, FxBuildHasher>>(&c, true), want);
            assert_eq!(census::<Dense>(&c, false), [total, 0, 0, total]);
            // The keyed row sums each value xor its entity: it reads both.
            let xored: V = c.ents.iter().map(|&e| value(e) ^ V::from(e)).sum();
            assert_eq!(census::<Keyed>(&c, true), [xored, total, 0, xored]);
        }
    }
}
