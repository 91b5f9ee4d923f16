//! `bits`: dod's BitSet against `Vec<bool>`, a hand-written `Vec<u64>` walk (the floor),
//! fixedbitset, hibitset, roaring and bitvec, on a 2^20 universe at densities from 0.01 % to
//! 90 %, and the claim of free slots in a 90 %-full set.

use std::cell::Cell;
use std::hint::black_box;
use std::time::Duration;

use bitvec::vec::BitVec;
use dod::{BitSet, Bits};
use fixedbitset::FixedBitSet;
use hibitset::{BitSetAnd, BitSetLike, BitSetNot};
use roaring::RoaringBitmap;

use crate::floors::SummedBits;
use crate::harness::{progress, time, Config, Rng, Sampler, Table};

const DENSITIES: [f64; 6] = [0.0001, 0.001, 0.01, 0.1, 0.5, 0.9];
const COLUMNS: [&str; 6] = [
    "iterate A",
    "iterate A AND B",
    "iterate A AND NOT B",
    "contains (random)",
    "insert (random)",
    "extend (random)",
];

/// Every representation of one set, built from the same indices.
struct Sets {
    bitset: BitSet,
    bools: Vec<bool>,
    words: Vec<u64>,
    fixed: FixedBitSet,
    hi: hibitset::BitSet,
    roaring: RoaringBitmap,
    bitvec: BitVec<u64>,
    /// `BitSet`'s layout, stripped.
    summed: SummedBits,
}

impl Sets {
    fn new(universe: usize, density: f64, rng: &mut Rng) -> Sets {
        let idx: Vec<usize> = (0..universe).filter(|_| rng.unit() < density).collect();
        let mut s = Sets {
            bitset: BitSet::with_universe(universe),
            bools: vec![false; universe],
            words: vec![0; universe.div_ceil(64)],
            fixed: FixedBitSet::with_capacity(universe),
            hi: hibitset::BitSet::with_capacity(universe as u32),
            roaring: RoaringBitmap::new(),
            bitvec: BitVec::repeat(false, universe),
            summed: SummedBits::from_words(Vec::new()),
        };
        for &i in &idx {
            s.bitset.insert(i as u32);
            s.bools[i] = true;
            s.words[i >> 6] |= 1 << (i & 63);
            s.fixed.insert(i);
            s.hi.add(i as u32);
            s.roaring.insert(i as u32);
            s.bitvec.set(i, true);
        }
        s.summed = SummedBits::from_words(s.words.clone());
        s
    }
}

const ROWS: [&str; 8] = [
    "dod::BitSet",
    "Vec<bool>",
    "Vec<u64> walk (floor)",
    "fixedbitset",
    "hibitset",
    "roaring",
    "bitvec",
    FLOOR,
];

/// The row of [`SummedBits`].
const FLOOR: &str = "BitSet's layout, stripped (floor)";

fn fold(acc: usize, i: usize) -> usize {
    acc.wrapping_add(i)
}

/// [`fold`] over `u32` indices, as `dod::BitSet` yields them.
fn fold32(acc: usize, i: u32) -> usize {
    acc.wrapping_add(i as usize)
}

/// The hand-written floor: every word, trailing zeros, clear lowest bit.
fn walk_words(words: impl Iterator<Item = u64>) -> usize {
    let mut acc = 0usize;
    for (w, mut bits) in words.enumerate() {
        while bits != 0 {
            acc = fold(acc, (w << 6) | bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
    }
    acc
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// A sampler of `work` on a fresh clone of `init` (cloned outside the timing).
fn timed_mut<'a, S: Clone, R>(
    init: &'a S,
    mut work: impl FnMut(&mut S) -> R + 'a,
) -> Option<Sampler<'a>> {
    Some(Box::new(move || {
        let mut s = init.clone();
        let (d, r) = time(|| work(&mut s));
        black_box(r);
        black_box(&s);
        d
    }))
}

/// A sampler of `work`, whose answer must be every row's answer in its column: the first row
/// to run records it in `expect`, and every later sample of every row is checked against it
/// (outside the timing), so that a contender that skips work or is used wrongly stops the
/// report instead of winning.
fn checked<'a>(
    expect: &'a Cell<Option<usize>>,
    row: &'static str,
    col: &'static str,
    mut work: impl FnMut() -> usize + 'a,
) -> Option<Sampler<'a>> {
    Some(Box::new(move || {
        let (d, got) = time(&mut work);
        match expect.get() {
            None => expect.set(Some(got)),
            Some(want) => assert_eq!(got, want, "bits: {row} answers {col:?} unlike the others"),
        }
        d
    }))
}

fn density_table(cfg: &Config, universe: usize, density: f64) -> Table {
    let b_density = if density >= 0.9 { 0.9 } else { 0.5 };
    let mut rng = cfg.rng(&format!("bits {density}"));
    let a = Sets::new(universe, density, &mut rng);
    let b = Sets::new(universe, b_density, &mut rng);
    let probes: Vec<usize> = (0..100_000.min(universe))
        .map(|_| rng.below(universe))
        .collect();
    let reps = cfg.reps;

    let mut t = Table::new(
        "bits",
        format!("BitSet, universe {universe}, A at density {density}, B at {b_density}"),
        "µs per workload (median)",
    )
    .columns(&COLUMNS);

    let probes = &probes;
    // The answers of the read-only columns, which every row must agree on.
    let expect: [Cell<Option<usize>>; 4] = Default::default();
    let expect = &expect;
    let mut rows: Vec<(String, Vec<Option<Sampler<'_>>>)> = Vec::new();
    // dod::BitSet
    rows.push((
        ROWS[0].to_string(),
        vec![
            checked(&expect[0], ROWS[0], COLUMNS[0], || {
                a.bitset.iter().fold(0, fold32)
            }),
            checked(&expect[1], ROWS[0], COLUMNS[1], || {
                a.bitset.and(&b.bitset).iter().fold(0, fold32)
            }),
            checked(&expect[2], ROWS[0], COLUMNS[2], || {
                a.bitset.and_not(&b.bitset).iter().fold(0, fold32)
            }),
            checked(&expect[3], ROWS[0], COLUMNS[3], || {
                probes
                    .iter()
                    .filter(|&&i| a.bitset.contains(i as u32))
                    .count()
            }),
            timed_mut(&a.bitset, |s| {
                probes.iter().for_each(|&i| {
                    s.insert(i as u32);
                })
            }),
            timed_mut(&a.bitset, |s| s.extend(probes.iter().map(|&i| i as u32))),
        ],
    ));
    // Vec<bool>
    rows.push((
        ROWS[1].to_string(),
        vec![
            checked(&expect[0], ROWS[1], COLUMNS[0], || {
                a.bools
                    .iter()
                    .enumerate()
                    .filter(|(_, &x)| x)
                    .map(|(i, _)| i)
                    .fold(0, fold)
            }),
            checked(&expect[1], ROWS[1], COLUMNS[1], || {
                a.bools
                    .iter()
                    .zip(&b.bools)
                    .enumerate()
                    .filter(|(_, (&x, &y))| x & y)
                    .map(|(i, _)| i)
                    .fold(0, fold)
            }),
            checked(&expect[2], ROWS[1], COLUMNS[2], || {
                a.bools
                    .iter()
                    .zip(&b.bools)
                    .enumerate()
                    .filter(|(_, (&x, &y))| x & !y)
                    .map(|(i, _)| i)
                    .fold(0, fold)
            }),
            checked(&expect[3], ROWS[1], COLUMNS[3], || {
                probes.iter().filter(|&&i| a.bools[i]).count()
            }),
            timed_mut(&a.bools, |s| probes.iter().for_each(|&i| s[i] = true)),
            timed_mut(&a.bools, |s| probes.iter().for_each(|&i| s[i] = true)),
        ],
    ));
    // Hand-written Vec<u64>
    rows.push((
        ROWS[2].to_string(),
        vec![
            checked(&expect[0], ROWS[2], COLUMNS[0], || {
                walk_words(a.words.iter().copied())
            }),
            checked(&expect[1], ROWS[2], COLUMNS[1], || {
                walk_words(a.words.iter().zip(&b.words).map(|(x, y)| x & y))
            }),
            checked(&expect[2], ROWS[2], COLUMNS[2], || {
                walk_words(a.words.iter().zip(&b.words).map(|(x, y)| x & !y))
            }),
            checked(&expect[3], ROWS[2], COLUMNS[3], || {
                probes
                    .iter()
                    .filter(|&&i| a.words[i >> 6] >> (i & 63) & 1 != 0)
                    .count()
            }),
            timed_mut(&a.words, |s| {
                probes.iter().for_each(|&i| s[i >> 6] |= 1 << (i & 63))
            }),
            timed_mut(&a.words, |s| {
                probes.iter().for_each(|&i| s[i >> 6] |= 1 << (i & 63))
            }),
        ],
    ));
    // fixedbitset
    rows.push((
        ROWS[3].to_string(),
        vec![
            checked(&expect[0], ROWS[3], COLUMNS[0], || {
                a.fixed.ones().fold(0, fold)
            }),
            checked(&expect[1], ROWS[3], COLUMNS[1], || {
                a.fixed.intersection(&b.fixed).fold(0, fold)
            }),
            checked(&expect[2], ROWS[3], COLUMNS[2], || {
                a.fixed.difference(&b.fixed).fold(0, fold)
            }),
            checked(&expect[3], ROWS[3], COLUMNS[3], || {
                probes.iter().filter(|&&i| a.fixed.contains(i)).count()
            }),
            timed_mut(&a.fixed, |s| probes.iter().for_each(|&i| s.insert(i))),
            timed_mut(&a.fixed, |s| s.extend(probes.iter().copied())),
        ],
    ));
    // hibitset
    rows.push((
        ROWS[4].to_string(),
        vec![
            checked(&expect[0], ROWS[4], COLUMNS[0], || {
                (&a.hi).iter().map(|i| i as usize).fold(0, fold)
            }),
            checked(&expect[1], ROWS[4], COLUMNS[1], || {
                BitSetAnd(&a.hi, &b.hi)
                    .iter()
                    .map(|i| i as usize)
                    .fold(0, fold)
            }),
            checked(&expect[2], ROWS[4], COLUMNS[2], || {
                BitSetAnd(&a.hi, BitSetNot(&b.hi))
                    .iter()
                    .map(|i| i as usize)
                    .fold(0, fold)
            }),
            checked(&expect[3], ROWS[4], COLUMNS[3], || {
                probes.iter().filter(|&&i| a.hi.contains(i as u32)).count()
            }),
            timed_mut(&a.hi, |s| {
                probes.iter().for_each(|&i| {
                    s.add(i as u32);
                })
            }),
            timed_mut(&a.hi, |s| s.extend(probes.iter().map(|&i| i as u32))),
        ],
    ));
    // roaring: no lazy AND, so the idiomatic `&a & &b` builds the result.
    rows.push((
        ROWS[5].to_string(),
        vec![
            checked(&expect[0], ROWS[5], COLUMNS[0], || {
                a.roaring.iter().map(|i| i as usize).fold(0, fold)
            }),
            checked(&expect[1], ROWS[5], COLUMNS[1], || {
                (&a.roaring & &b.roaring)
                    .iter()
                    .map(|i| i as usize)
                    .fold(0, fold)
            }),
            checked(&expect[2], ROWS[5], COLUMNS[2], || {
                (&a.roaring - &b.roaring)
                    .iter()
                    .map(|i| i as usize)
                    .fold(0, fold)
            }),
            checked(&expect[3], ROWS[5], COLUMNS[3], || {
                probes
                    .iter()
                    .filter(|&&i| a.roaring.contains(i as u32))
                    .count()
            }),
            timed_mut(&a.roaring, |s| {
                probes.iter().for_each(|&i| {
                    s.insert(i as u32);
                })
            }),
            timed_mut(&a.roaring, |s| s.extend(probes.iter().map(|&i| i as u32))),
        ],
    ));
    // bitvec
    rows.push((
        ROWS[6].to_string(),
        vec![
            checked(&expect[0], ROWS[6], COLUMNS[0], || {
                a.bitvec.iter_ones().fold(0, fold)
            }),
            checked(&expect[1], ROWS[6], COLUMNS[1], || {
                a.bitvec.iter_ones().filter(|&i| b.bitvec[i]).fold(0, fold)
            }),
            checked(&expect[2], ROWS[6], COLUMNS[2], || {
                a.bitvec.iter_ones().filter(|&i| !b.bitvec[i]).fold(0, fold)
            }),
            checked(&expect[3], ROWS[6], COLUMNS[3], || {
                probes.iter().filter(|&&i| a.bitvec[i]).count()
            }),
            timed_mut(&a.bitvec, |s| probes.iter().for_each(|&i| s.set(i, true))),
            timed_mut(&a.bitvec, |s| probes.iter().for_each(|&i| s.set(i, true))),
        ],
    ));
    // BitSet's layout, stripped: the insertion alone, the column its summaries cost in.
    rows.push((
        ROWS[7].to_string(),
        vec![
            None,
            None,
            None,
            None,
            timed_mut(&a.summed, |s| {
                probes.iter().for_each(|&i| {
                    s.insert(i);
                })
            }),
            None,
        ],
    ));
    t.measure_rows(reps, rows, |_, d| us(d));
    let worst = (0..COLUMNS.len())
        .filter_map(|c| Some((c, t.rows[0].cells[c]? / t.best(c)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((c, r)) = worst {
        let verdict = if r <= 1.1 { "met" } else { "not met" };
        t.note(format!(
            "dod::BitSet's largest ratio to the best row: {r:.2}x ({}; target <= 1.1x: {verdict})",
            COLUMNS[c]
        ));
    }
    // The per-index and the batch insert, each against the best row of its own column.
    for c in [4, 5] {
        if let (Some(d), Some(best)) = (t.rows[0].cells[c], t.best(c)) {
            let r = d / best;
            let verdict = if r <= 1.1 { "met" } else { "not met" };
            let floor = match t.rows[7].cells[c] {
                Some(f) => format!("; the layout's floor: {:.2}x", f / best),
                None => String::new(),
            };
            t.note(format!(
                "{}: dod::BitSet / best row = {r:.2}x (target <= 1.1x: {verdict}{floor})",
                COLUMNS[c]
            ));
        }
    }
    t.note(format!(
        "A holds {} indices, B {}. Each column is one whole workload: a full iteration summing \
         the indices, or {} random probes / inserts (insertion starts from a copy of A). \
         insert: one call per index; extend: the whole batch through `Extend` where the crate \
         implements it (dod::BitSet, fixedbitset, hibitset, roaring), the same loop as insert \
         where it does not. {FLOOR}: words with the two summaries BitSet keeps (\"any\": a \
         word is not empty; \"free\": it is not full), each a stack of layers up to one word, \
         and nothing else (no universe growth, bound or deferred word); an insertion writes the \
         word and its \"any\" bit and goes further only when a summary word changes. It is \
         one more measured row, with the same noise as the others, not a proven bound: it \
         shows what keeping the summaries exact costs a random insertion in this run. \
         Target: dod::BitSet within 1.1x of the best row in every column.",
        a.bitset.count(),
        b.bitset.count(),
        probes.len()
    ));
    t
}

/// Claiming free slots in a set that starts 90 % full: each claim finds the first zero and
/// sets it, so a linear scan walks further and further.
fn claim_table(cfg: &Config, universe: usize) -> Table {
    let mut rng = cfg.rng("bits claim");
    let full = Sets::new(universe, 0.9, &mut rng);
    let claims = (universe as f64 * 0.0954) as usize; // 100 000 for 2^20
                                                      // The linear scans are quadratic; three repetitions are plenty to see the gap.
    let slow_reps = cfg.reps.min(3);
    let mut t = Table::new(
        "bits",
        format!("Claiming {claims} free slots in a 90 %-full set of {universe}"),
        "µs per workload (median)",
    )
    .columns(&["claim first zero, set it"]);
    let mut rows: Vec<(String, Vec<Option<Sampler<'_>>>)> = Vec::new();
    rows.push((
        "dod::BitSet (any-clear summary)".to_string(),
        vec![timed_mut(&full.bitset, |s| {
            (0..claims).map(|_| s.claim()).fold(0, fold32)
        })],
    ));
    rows.push((
        "Vec<u64> linear scan".to_string(),
        vec![timed_mut(&full.words, |s| {
            (0..claims)
                .map(|_| {
                    let w = s
                        .iter()
                        .position(|&w| w != u64::MAX)
                        .expect("a zero remains");
                    let b = (!s[w]).trailing_zeros() as usize;
                    s[w] |= 1 << b;
                    (w << 6) | b
                })
                .fold(0, fold)
        })],
    ));
    rows.push((
        "fixedbitset (zeroes().next())".to_string(),
        vec![timed_mut(&full.fixed, |s| {
            (0..claims)
                .map(|_| {
                    let i = s.zeroes().next().expect("a zero remains");
                    s.insert(i);
                    i
                })
                .fold(0, fold)
        })],
    ));
    rows.push((
        "bitvec (first_zero)".to_string(),
        vec![timed_mut(&full.bitvec, |s| {
            (0..claims)
                .map(|_| {
                    let i = s.first_zero().expect("a zero remains");
                    s.set(i, true);
                    i
                })
                .fold(0, fold)
        })],
    ));
    // Every row runs as often as the slowest may.
    t.measure_rows(slow_reps, rows, |_, d| us(d));
    if let Some(r) = t.ratio(
        "Vec<u64> linear scan",
        "dod::BitSet (any-clear summary)",
        "claim first zero, set it",
    ) {
        let verdict = if r >= 10.0 { "met" } else { "not met" };
        t.note(format!(
            "dod::BitSet is {r:.0}x faster than the linear scan (target >= 10x: {verdict})"
        ));
    }
    t.note(
        "hibitset, roaring and Vec<bool> have no first-zero search better than a scan of \
         every index. Target: dod::BitSet at least 10x faster than the Vec<u64> linear scan.",
    );
    t
}

/// The section.
pub const SECTION: super::Section = super::Section {
    name: "bits",
    about: "BitSet vs Vec<bool>, a Vec<u64> walk, fixedbitset, hibitset, roaring, bitvec",
    run,
};

fn run(cfg: &Config) -> Vec<Table> {
    let universe = cfg.n_or(1 << 20, 1 << 16);
    let mut tables = Vec::new();
    for d in DENSITIES {
        progress(format!("bits: density {d}"));
        tables.push(density_table(cfg, universe, d));
    }
    progress("bits: claiming free slots");
    tables.push(claim_table(cfg, universe));
    tables
}
