//! Measuring and reporting. [`measure`] is the one way the report times anything: the
//! [`Contender`]s of one table column, round after round, each round timing every one once in a
//! rotating order after an uncounted warm-up round; a cell is the median of its rounds. Tables
//! hold each cell's rounds, and show beside the ratio to the column's best row the spread of
//! that ratio over the rounds; rendered as markdown and as JSON.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// What the command line asked for.
#[derive(Clone, Debug)]
pub struct Config {
    /// Element count for sections that take one (`--n`); `None` means the section's default.
    pub n: Option<usize>,
    /// Small sizes and few repetitions: a smoke run.
    pub quick: bool,
    /// Counted rounds of every [`measure`] call, at least; the median is reported.
    pub reps: usize,
    /// A column whose rounds, the warm-up one included, took less than this goes on with more
    /// past `reps` (see [`set_min_time`]).
    pub min_time: Duration,
    /// Seed of every random sequence, so runs are comparable.
    pub seed: u64,
}

impl Config {
    /// The element count a section uses: `--n`, else `full` (or `quick` with `--quick`).
    pub fn n_or(&self, full: usize, quick: usize) -> usize {
        self.n.unwrap_or(if self.quick { quick } else { full })
    }

    /// A fresh random generator for one workload, derived from the run's seed and a label.
    pub fn rng(&self, label: &str) -> Rng {
        let mut h = self.seed ^ 0x9E37_79B9_7F4A_7C15;
        for b in label.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3);
        }
        Rng::new(h)
    }
}

/// SplitMix64: a small, fast, fixed generator, so that sequences are the same on every machine
/// and every version of the report.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// A float in `[0, 1)`.
    #[allow(dead_code)]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }

    /// `0..n` in random order.
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        self.shuffle(&mut v);
        v
    }
}

/// A named contender of one workload (one cell of a table column): each [`sample`] does its own
/// set-up and returns the time of the work alone (see [`time`]).
///
/// `(name, closure)` is a contender, and so is a [`Boxed`] one, so that contenders of different
/// types can be measured together; [`contender`] makes one.
///
/// [`sample`]: Contender::sample
pub trait Contender {
    /// The row it fills.
    fn name(&self) -> &str;
    /// Runs the workload once and returns the time of the work alone.
    fn sample(&mut self) -> Duration;
}

impl<N: AsRef<str>, F: FnMut() -> Duration> Contender for (N, F) {
    fn name(&self) -> &str {
        self.0.as_ref()
    }
    fn sample(&mut self) -> Duration {
        (self.1)()
    }
}

impl<C: Contender + ?Sized> Contender for Box<C> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn sample(&mut self) -> Duration {
        (**self).sample()
    }
}

/// A contender of any type, so that different ones fit in one slice.
pub type Boxed<'a> = Box<dyn Contender + 'a>;

/// The contender `name` whose samples `sample` takes.
pub fn contender<'a>(name: impl Into<String>, sample: impl FnMut() -> Duration + 'a) -> Boxed<'a> {
    Box::new((name.into(), sample))
}

/// What [`measure`] found for one contender: its sample of every counted round, in round order,
/// and their median.
#[derive(Clone, Debug)]
pub struct Timing {
    /// The contender's name.
    pub name: String,
    /// The median of `rounds` (the upper one of an even count).
    pub median: Duration,
    /// One sample per counted round; round `r` of every contender of one [`measure`] call ran
    /// in the same rotation, so their ratios compare like with like.
    pub rounds: Vec<Duration>,
    /// The [`measure`] call it came from: rounds of one group line up.
    group: u64,
}

impl Timing {
    /// A table cell in the table's unit: `value` of the median and of every round. `value` must be
    /// proportional (ns per element, µs, ms), so that ratios of rounds are ratios of durations.
    pub fn cell(&self, value: impl Fn(Duration) -> f64) -> Cell {
        Cell {
            value: value(self.median),
            rounds: Some(Rounds {
                group: self.group,
                values: self.rounds.iter().map(|&d| value(d)).collect(),
            }),
        }
    }
}

/// The order in which round `round` times `n` contenders: each round starts one contender later
/// than the round before, so that drift on the machine falls on every contender alike.
pub fn rotation(round: usize, n: usize) -> impl Iterator<Item = usize> {
    (0..n).map(move |k| (round + k) % n)
}

/// The time, in nanoseconds, below which [`measure`] goes on adding rounds to a column; 0 (its
/// value until [`set_min_time`] is called, and what `--quick` sets) adds none.
static MIN_TIME_NS: AtomicU64 = AtomicU64::new(0);

/// A column runs at most this many times `reps` counted rounds, however quick they are.
pub const MAX_ROUNDS_FACTOR: usize = 5;

/// Makes every later [`measure`] call keep adding rounds, past its `reps`, until its rounds
/// (the warm-up one included) have taken `t` or it has run [`MAX_ROUNDS_FACTOR`] times `reps`
/// counted rounds. A quick column gets more rounds for little time, so that a few slow rounds
/// move its median less; a slow one keeps `reps`.
pub fn set_min_time(t: Duration) {
    MIN_TIME_NS.store(u64::try_from(t.as_nanos()).unwrap_or(u64::MAX), Relaxed);
}

/// The one way the report measures: one uncounted warm-up round (caches, allocator, lazy
/// set-up), then `reps` rounds (at least one), each timing every contender once in the
/// [`rotation`] of its round, and more rounds while the column is under the time that
/// [`set_min_time`] set (up to [`MAX_ROUNDS_FACTOR`] times `reps`). Every contender gets the same
/// rounds. Returns one [`Timing`] per contender, in the slice's order.
pub fn measure<C: Contender>(reps: usize, contenders: &mut [C]) -> Vec<Timing> {
    measure_for(
        reps,
        Duration::from_nanos(MIN_TIME_NS.load(Relaxed)),
        contenders,
    )
}

/// [`measure`] with the time to fill given here rather than by [`set_min_time`].
fn measure_for<C: Contender>(reps: usize, min_time: Duration, contenders: &mut [C]) -> Vec<Timing> {
    static GROUPS: AtomicU64 = AtomicU64::new(0);
    let group = GROUPS.fetch_add(1, Relaxed);
    let n = contenders.len();
    let reps = reps.max(1);
    let cap = reps.saturating_mul(MAX_ROUNDS_FACTOR);
    // Room for every round the column may run (within reason): no allocation between samples.
    let room = (if min_time.is_zero() { reps } else { cap }).min(1 << 16);
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(room); n];
    let start = Instant::now();
    let mut round = 0;
    loop {
        for i in rotation(round, n) {
            let d = contenders[i].sample();
            if round > 0 {
                samples[i].push(d);
            }
        }
        // `round` rounds counted so far.
        if round >= reps && (round >= cap || start.elapsed() >= min_time) {
            break;
        }
        round += 1;
    }
    contenders
        .iter()
        .zip(samples)
        .map(|(c, rounds)| Timing {
            name: c.name().to_string(),
            median: median_of(&rounds),
            rounds,
            group,
        })
        .collect()
}

/// The median of some durations (the upper one of an even count).
fn median_of(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2]
}

/// One contender's run of a workload, unnamed: the form `world` builds and names with
/// [`contender`].
pub type Sampler<'a> = Box<dyn FnMut() -> Duration + 'a>;

/// Times one call of `f`, keeping its result alive so the work is not optimised away.
pub fn time<R>(f: impl FnOnce() -> R) -> (Duration, R) {
    let start = Instant::now();
    let r = black_box(f());
    (start.elapsed(), r)
}

/// Nanoseconds per element.
pub fn per_elem(d: Duration, n: usize) -> f64 {
    d.as_secs_f64() * 1e9 / n.max(1) as f64
}

/// The samples behind one cell, in the cell's unit, one per round of a [`measure`] call.
#[derive(Clone, Debug, PartialEq)]
pub struct Rounds {
    group: u64,
    /// One value per counted round.
    pub values: Vec<f64>,
}

/// One cell of a table: its value and, if it was measured in a rotation, the rounds behind it.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// The value shown, lower is better.
    pub value: f64,
    /// The value of every round (`None`: measured outside a rotation, e.g. bytes).
    pub rounds: Option<Rounds>,
}

impl From<f64> for Cell {
    fn from(value: f64) -> Self {
        Cell {
            value,
            rounds: None,
        }
    }
}

/// One row of a table: a contender and its value per column (`None`: not applicable).
#[derive(Clone, Debug)]
pub struct Row {
    /// The contender's name.
    pub name: String,
    /// One value per column, lower is better.
    pub cells: Vec<Option<f64>>,
    /// The rounds behind each cell, where it was measured in a rotation.
    pub rounds: Vec<Option<Rounds>>,
}

/// The percentiles the spread of a ratio is reported at: its lowest and highest round. A ratio
/// of medians always lies between them (if every round's `a / b` is at most `r`, the median of
/// `a` is at most `r` times the median of `b`), which no narrower pair guarantees; and at the
/// default 7 rounds a 10th–90th percentile is nearly the same pair anyway.
pub const SPREAD_PERCENTILES: (f64, f64) = (0.0, 1.0);

/// How the report describes the spread beside each ratio.
pub const SPREAD_NOTE: &str = "after the ratio, its lowest and highest value over the rounds \
     (each round times every row of a column once, so a round's ratio compares like with like)";

/// The `p`-th quantile (`0..=1`) of sorted `v`, interpolating between neighbours.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    assert!(!sorted.is_empty(), "a percentile of nothing");
    let pos = p.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// The spread of the ratio `cell / best`, round by round: its [`SPREAD_PERCENTILES`]. `None`
/// unless both were measured in the same [`measure`] call.
pub fn ratio_spread(cell: &Rounds, best: &Rounds) -> Option<(f64, f64)> {
    if cell.group != best.group || cell.values.len() != best.values.len() {
        return None;
    }
    let mut r: Vec<f64> = cell
        .values
        .iter()
        .zip(&best.values)
        .filter(|(_, &b)| b > 0.0)
        .map(|(&c, &b)| c / b)
        .collect();
    if r.is_empty() {
        return None;
    }
    r.sort_by(f64::total_cmp);
    let (lo, hi) = SPREAD_PERCENTILES;
    Some((percentile(&r, lo), percentile(&r, hi)))
}

/// A table of measurements: rows are contenders, columns are workloads; lower is better.
#[derive(Clone, Debug)]
pub struct Table {
    /// The section that made it.
    pub section: &'static str,
    /// A short title.
    pub title: String,
    /// The unit of every cell, e.g. "ns per element".
    pub unit: String,
    /// Workload names.
    pub columns: Vec<String>,
    /// Contenders.
    pub rows: Vec<Row>,
    /// Remarks printed under the table (what a column means, projections, targets).
    pub notes: Vec<String>,
}

impl Table {
    /// An empty table.
    pub fn new(section: &'static str, title: impl Into<String>, unit: impl Into<String>) -> Self {
        Table {
            section,
            title: title.into(),
            unit: unit.into(),
            columns: Vec::new(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Sets the columns.
    pub fn columns(mut self, cols: &[&str]) -> Self {
        self.columns = cols.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Adds a row of plain values (no rounds behind them); one entry per column.
    pub fn row(&mut self, name: impl Into<String>, cells: Vec<Option<f64>>) {
        self.row_cells(name, cells.into_iter().map(|c| c.map(Cell::from)).collect());
    }

    /// Adds a row of cells; `cells` must have one entry per column.
    pub fn row_cells(&mut self, name: impl Into<String>, cells: Vec<Option<Cell>>) {
        assert_eq!(cells.len(), self.columns.len(), "one cell per column");
        let (cells, rounds) = cells
            .into_iter()
            .map(|c| match c {
                Some(c) => (Some(c.value), c.rounds),
                None => (None, None),
            })
            .unzip();
        self.rows.push(Row {
            name: name.into(),
            cells,
            rounds,
        });
    }

    /// Adds empty rows, so that the rows keep this order whichever column fills them first.
    pub fn empty_rows<S: Into<String>>(&mut self, names: impl IntoIterator<Item = S>) {
        for name in names {
            let width = self.columns.len();
            self.row_cells(name, vec![None; width]);
        }
    }

    /// Sets the cell of row `row` (added, empty, if there is none yet) in column `col`.
    pub fn set(&mut self, row: &str, col: usize, cell: Cell) {
        assert!(col < self.columns.len(), "no column {col}");
        let i = match self.rows.iter().position(|r| r.name == row) {
            Some(i) => i,
            None => {
                self.empty_rows([row]);
                self.rows.len() - 1
            }
        };
        self.rows[i].cells[col] = Some(cell.value);
        self.rows[i].rounds[col] = cell.rounds;
    }

    /// Fills column `col` from one [`measure`] call: each timing into the row of its name, as
    /// `value` of its duration (see [`Timing::cell`]).
    pub fn fill(&mut self, col: usize, timings: &[Timing], value: impl Fn(Duration) -> f64) {
        for t in timings {
            self.set(&t.name, col, t.cell(&value));
        }
    }

    /// Adds a remark.
    pub fn note(&mut self, s: impl Into<String>) {
        self.notes.push(s.into());
    }

    /// Measures rows given row by row, column by column: `rows[r].1[c]` is row `r`'s sampler of
    /// column `c` (`None`: not applicable). The samplers of one column are measured together
    /// with [`measure`] and dropped before the next column; each cell is `value(c, duration)`.
    pub fn measure_rows<'a>(
        &mut self,
        reps: usize,
        rows: Vec<(String, Vec<Option<Sampler<'a>>>)>,
        value: impl Fn(usize, Duration) -> f64,
    ) {
        let (names, mut grid): (Vec<String>, Vec<Vec<Option<Sampler<'a>>>>) =
            rows.into_iter().unzip();
        for (name, row) in names.iter().zip(&grid) {
            assert_eq!(row.len(), self.columns.len(), "one sampler per column");
            if !self.rows.iter().any(|r| &r.name == name) {
                self.empty_rows([name.as_str()]);
            }
        }
        for c in 0..self.columns.len() {
            let mut cs: Vec<(&str, Sampler<'a>)> = names
                .iter()
                .zip(grid.iter_mut())
                .filter_map(|(name, row)| Some((name.as_str(), row[c].take()?)))
                .collect();
            if cs.is_empty() {
                continue;
            }
            let timings = measure(reps, &mut cs);
            drop(cs);
            self.fill(c, &timings, |d| value(c, d));
        }
    }

    /// The smallest value of column `col`.
    pub fn best(&self, c: usize) -> Option<f64> {
        self.best_row(c).and_then(|i| self.rows[i].cells[c])
    }

    /// The row holding the smallest value of column `c`.
    fn best_row(&self, c: usize) -> Option<usize> {
        self.rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Some((i, r.cells[c]?)))
            .filter(|(_, v)| v.is_finite())
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }

    /// The spread over the rounds of row `row`'s ratio to the best row in column `c` (see
    /// [`ratio_spread`]); `None` for the best row itself and for cells measured outside a
    /// rotation or in another one.
    pub fn spread(&self, row: usize, c: usize) -> Option<(f64, f64)> {
        let b = self.best_row(c)?;
        if b == row {
            return None;
        }
        ratio_spread(
            self.rows[row].rounds[c].as_ref()?,
            self.rows[b].rounds[c].as_ref()?,
        )
    }

    /// The value of `row` in column `col`, by names.
    pub fn get(&self, row: &str, col: &str) -> Option<f64> {
        let c = self.columns.iter().position(|x| x == col)?;
        self.rows.iter().find(|r| r.name == row)?.cells[c]
    }

    /// `row / of` in column `col`: the ratio a target is stated in.
    pub fn ratio(&self, row: &str, of: &str, col: &str) -> Option<f64> {
        Some(self.get(row, col)? / self.get(of, col)?)
    }

    /// Markdown: each cell is the value and, in parentheses, its ratio to the column's best and
    /// the spread of that ratio over the rounds.
    pub fn to_markdown(&self) -> String {
        let mut s = format!("### {}\n\n", self.title);
        let rotated = self
            .rows
            .iter()
            .any(|r| r.rounds.iter().any(Option::is_some));
        if rotated {
            s += &format!(
                "{}; in parentheses, the ratio to the best row of the column and, {SPREAD_NOTE}.\n\n",
                self.unit
            );
        } else {
            s += &format!(
                "{}; in parentheses, the ratio to the best row of the column.\n\n",
                self.unit
            );
        }
        s += "| |";
        for c in &self.columns {
            s += &format!(" {c} |");
        }
        s += "\n|---|";
        for _ in &self.columns {
            s += "---:|";
        }
        s += "\n";
        for (i, r) in self.rows.iter().enumerate() {
            s += &format!("| {} |", r.name);
            for (c, v) in r.cells.iter().enumerate() {
                match (v, self.best(c)) {
                    (Some(v), Some(b)) if b > 0.0 => {
                        let ratio = v / b;
                        if ratio <= 1.0 + 1e-9 {
                            s += &format!(" **{}** (1.00x) |", fmt_num(*v));
                        } else if let Some((lo, hi)) = self.spread(i, c) {
                            s += &format!(" {} ({ratio:.2}x, {lo:.2}–{hi:.2}) |", fmt_num(*v));
                        } else {
                            s += &format!(" {} ({ratio:.2}x) |", fmt_num(*v));
                        }
                    }
                    (Some(v), _) => s += &format!(" {} |", fmt_num(*v)),
                    (None, _) => s += " — |",
                }
            }
            s += "\n";
        }
        for n in &self.notes {
            s += &format!("\n{n}\n");
        }
        s
    }

    /// The table as JSON: per row the values, their ratios to the column's best and the spread
    /// of each ratio (`[low, high]`, or `null` where there is none).
    pub fn to_json(&self) -> serde_json::Value {
        let rows: Vec<serde_json::Value> = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let cols = 0..self.columns.len();
                let ratios: Vec<Option<f64>> = cols
                    .clone()
                    .map(|c| match (r.cells[c], self.best(c)) {
                        (Some(v), Some(b)) if b > 0.0 => Some(v / b),
                        _ => None,
                    })
                    .collect();
                let spreads: Vec<Option<[f64; 2]>> = cols
                    .map(|c| self.spread(i, c).map(|(lo, hi)| [lo, hi]))
                    .collect();
                serde_json::json!({
                    "name": r.name,
                    "cells": r.cells,
                    "ratios": ratios,
                    "spread": spreads,
                })
            })
            .collect();
        serde_json::json!({
            "section": self.section,
            "title": self.title,
            "unit": self.unit,
            "columns": self.columns,
            "rows": rows,
            "notes": self.notes,
        })
    }
}

/// A number with three significant digits or so.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// glibc serves a block of this size or more with its own fresh mapping; pinned, every block
/// the report allocates (at most a few MiB) comes from the heap instead. 32 MiB is the largest
/// value glibc accepts on 64-bit targets.
pub const PINNED_MMAP_THRESHOLD: usize = 32 << 20;

/// Pinned, glibc gives the top of its heap back to the system only past this much free memory.
pub const PINNED_TRIM_THRESHOLD: usize = 1 << 30;

/// Fixes the allocator's state for the whole run, unless `pin` is false, and says which state
/// the run uses (for the report's header).
///
/// glibc moves its mmap threshold (and with it the trim threshold) the first time a block it had
/// mapped is freed: before that, every block of 128 KiB or more is a fresh mapping and pays a
/// page fault per page on first touch; after it, such blocks come from the heap, already
/// faulted in. "Create from empty" then measures whichever state the process happens to be in
/// (the same create took 5 ns or 17 ns per item). Pinned, `mallopt` fixes both thresholds,
/// which also turns glibc's adjustment off, so every contender of every round allocates from
/// the same kind of memory.
pub fn pin_allocator(pin: bool) -> String {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if pin {
        // SAFETY: `mallopt` only sets glibc's allocation parameters; it is called before the
        // report starts other threads and takes its own lock.
        let ok = unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, PINNED_MMAP_THRESHOLD as libc::c_int) == 1
                && libc::mallopt(libc::M_TRIM_THRESHOLD, PINNED_TRIM_THRESHOLD as libc::c_int) == 1
        };
        return if ok {
            format!(
                "glibc pinned (mmap threshold {} MiB, trim threshold {} MiB; --unpinned turns \
                 it off)",
                PINNED_MMAP_THRESHOLD >> 20,
                PINNED_TRIM_THRESHOLD >> 20
            )
        } else {
            "glibc, unpinned (mallopt refused the thresholds)".to_string()
        };
    }
    if cfg!(all(target_os = "linux", target_env = "gnu")) {
        "glibc, unpinned (its thresholds move during the run)".to_string()
    } else {
        let _ = pin;
        "the system allocator as it comes (pinning is for glibc only)".to_string()
    }
}

/// Touches and frees one 16 MiB block before the first section, so that the first contender
/// of the run finds the allocator as the later ones do.
///
/// Pinned ([`pin_allocator`]), the block comes from the heap and stays mapped after it is freed
/// (it is under the trim threshold): the pages the first sections allocate from are already
/// faulted in, as they are for every later section. Unpinned, the block is a fresh mapping, and
/// freeing it makes glibc raise its mmap threshold to 16 MiB: from then on large blocks come
/// from the heap, which would otherwise happen in the middle of whichever section first freed a
/// large block, penalising the contenders measured before it.
pub fn warm_up_allocator() {
    let block = vec![1u8; 16 << 20];
    black_box(&block);
    drop(block);
}

/// The spinner on stderr (drawn only when stderr is a terminal).
pub fn spinner() -> &'static indicatif::ProgressBar {
    static BAR: std::sync::OnceLock<indicatif::ProgressBar> = std::sync::OnceLock::new();
    BAR.get_or_init(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} [{elapsed}] {prefix}: {msg}")
                .expect("a valid template"),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    })
}

/// Progress for a person watching: on stderr, so stdout stays the report.
pub fn progress(msg: impl AsRef<str>) {
    spinner().set_message(msg.as_ref().to_string());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_and_ratio() {
        let mut t = Table::new("t", "T", "ns").columns(&["a", "b"]);
        t.row("x", vec![Some(2.0), None]);
        t.row("y", vec![Some(4.0), Some(1.0)]);
        assert_eq!(t.best(0), Some(2.0));
        assert_eq!(t.best(1), Some(1.0));
        assert_eq!(t.ratio("y", "x", "a"), Some(2.0));
        let md = t.to_markdown();
        assert!(md.contains("**2.00** (1.00x)"), "{md}");
        assert!(md.contains("4.00 (2.00x)"), "{md}");
        assert!(md.contains(" — |"), "{md}");
        // Nothing measured in rounds: the header does not promise a spread.
        assert!(!md.contains("lowest and highest"), "{md}");
    }

    /// A contender whose samples are given durations (in ns), recording when it runs.
    fn fake<'a>(
        name: &'a str,
        log: &'a std::cell::RefCell<Vec<&'a str>>,
        ns: &'a [u64],
    ) -> Boxed<'a> {
        let mut next = ns.iter();
        contender(name, move || {
            log.borrow_mut().push(name);
            Duration::from_nanos(*next.next().expect("a sample per round"))
        })
    }

    #[test]
    fn measure_rotates_skips_the_warm_up_and_takes_medians() {
        let log = std::cell::RefCell::new(Vec::new());
        // Warm-up samples (first) are huge: counted, they would move every median.
        let (a, b, c) = (
            [1000, 5, 1, 9, 3],
            [1000, 20, 40, 30, 10],
            [1000, 7, 7, 7, 7],
        );
        let mut cs = vec![
            fake("a", &log, &a),
            fake("b", &log, &b),
            fake("c", &log, &c),
        ];
        let t = measure(4, &mut cs);
        drop(cs);
        let order = log.borrow().clone();
        assert_eq!(
            order,
            [
                "a", "b", "c", // warm-up
                "b", "c", "a", // round 1 starts one later
                "c", "a", "b", //
                "a", "b", "c", //
                "b", "c", "a",
            ]
        );
        let names: Vec<&str> = t.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        let ns = |v: &[u64]| {
            v.iter()
                .map(|&x| Duration::from_nanos(x))
                .collect::<Vec<_>>()
        };
        assert_eq!(t[0].rounds, ns(&[5, 1, 9, 3]));
        assert_eq!(t[1].rounds, ns(&[20, 40, 30, 10]));
        // Upper median of an even count.
        assert_eq!(t[0].median, Duration::from_nanos(5));
        assert_eq!(t[1].median, Duration::from_nanos(30));
        assert_eq!(t[2].median, Duration::from_nanos(7));
    }

    /// With time to fill that the rounds never reach, a column runs `MAX_ROUNDS_FACTOR` times
    /// `reps` rounds, every contender the same, in the rotation; with none, `reps` rounds.
    #[test]
    fn measure_adds_rounds_up_to_the_cap_while_there_is_time() {
        for (min_time, rounds) in [
            (Duration::ZERO, 3),
            (Duration::from_secs(3600), 3 * MAX_ROUNDS_FACTOR),
        ] {
            let log = std::cell::RefCell::new(Vec::new());
            let ns = [1u64; 64];
            let mut cs = vec![fake("a", &log, &ns), fake("b", &log, &ns)];
            let t = measure_for(3, min_time, &mut cs);
            drop(cs);
            assert!(t.iter().all(|t| t.rounds.len() == rounds));
            let order = log.borrow().clone();
            assert_eq!(order.len(), 2 * (rounds + 1));
            for (r, pair) in order.chunks(2).enumerate() {
                let want = if r % 2 == 0 { ["a", "b"] } else { ["b", "a"] };
                assert_eq!(pair, want, "round {r}");
            }
        }
    }

    #[test]
    fn measure_takes_tuples_and_at_least_one_round() {
        let mut calls = 0;
        let mut cs = [("only", || {
            calls += 1;
            Duration::from_nanos(calls)
        })];
        let t = measure(0, &mut cs);
        assert_eq!(t[0].rounds, [Duration::from_nanos(2)]);
        assert_eq!(t[0].median, Duration::from_nanos(2));
    }

    #[test]
    fn percentiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 1.0), 5.0);
        assert_eq!(percentile(&v, 0.5), 3.0);
        assert!((percentile(&v, 0.1) - 1.4).abs() < 1e-12);
        assert!((percentile(&v, 0.9) - 4.6).abs() < 1e-12);
        assert_eq!(percentile(&[7.0], 0.9), 7.0);
    }

    #[test]
    fn spread_is_the_ratio_round_by_round() {
        let log = std::cell::RefCell::new(Vec::new());
        // The machine slows down in rounds 3 and 4 for both: the per-round ratio stays 2,
        // while the ratio of the values spread over the rounds would say 1..8.
        let fast = [0, 10, 10, 40, 40, 10];
        let slow = [0, 20, 20, 80, 80, 20];
        let odd = [0, 10, 30, 40, 40, 10];
        let mut cs = vec![
            fake("fast", &log, &fast),
            fake("slow", &log, &slow),
            fake("odd", &log, &odd),
        ];
        let timings = measure(5, &mut cs);
        drop(cs);
        let mut t = Table::new("t", "T", "ns").columns(&["a", "bytes"]);
        t.empty_rows(["slow", "fast", "odd"]);
        t.fill(0, &timings, |d| d.as_nanos() as f64 / 10.0);
        t.set("fast", 1, Cell::from(100.0));
        t.set("slow", 1, Cell::from(300.0));
        assert_eq!(t.best(0), Some(1.0));
        let slow = t.spread(0, 0).unwrap();
        assert!((slow.0 - 2.0).abs() < 1e-12 && (slow.1 - 2.0).abs() < 1e-12);
        // The best row has no spread of its own.
        assert_eq!(t.spread(1, 0), None);
        // odd: ratios 1, 3, 1, 1, 1.
        let (lo, hi) = t.spread(2, 0).unwrap();
        assert!(
            (lo - 1.0).abs() < 1e-12 && (hi - 3.0).abs() < 1e-12,
            "{lo} {hi}"
        );
        // Bytes were not measured in a rotation.
        assert_eq!(t.spread(0, 1), None);
        let md = t.to_markdown();
        assert!(
            md.contains("| slow | 2.00 (2.00x, 2.00–2.00) | 300.0 (3.00x) |"),
            "{md}"
        );
        assert!(
            md.contains("| fast | **1.00** (1.00x) | **100.0** (1.00x) |"),
            "{md}"
        );
        assert!(md.contains("1.00–3.00"), "{md}");
        assert!(md.contains("lowest and highest"), "{md}");
        let json = t.to_json();
        assert_eq!(json["rows"][0]["spread"][0], serde_json::json!([2.0, 2.0]));
        assert_eq!(json["rows"][0]["spread"][1], serde_json::Value::Null);
        assert_eq!(json["rows"][0]["ratios"][1], serde_json::json!(3.0));
    }

    #[test]
    fn the_ratio_of_medians_lies_within_the_spread() {
        let mut rng = Rng::new(7);
        for _ in 0..200 {
            let rounds = 1 + rng.below(9);
            let a: Vec<u64> = (0..=rounds).map(|_| 1 + rng.below(1000) as u64).collect();
            let b: Vec<u64> = (0..=rounds).map(|_| 1 + rng.below(1000) as u64).collect();
            let log = std::cell::RefCell::new(Vec::new());
            let timings = measure(rounds, &mut [fake("a", &log, &a), fake("b", &log, &b)]);
            let mut t = Table::new("t", "T", "ns").columns(&["c"]);
            t.fill(0, &timings, |d| d.as_nanos() as f64);
            let (va, vb) = (t.get("a", "c").unwrap(), t.get("b", "c").unwrap());
            if va == vb {
                continue;
            }
            let (worse, ratio) = if va > vb { (0, va / vb) } else { (1, vb / va) };
            let (lo, hi) = t.spread(worse, 0).unwrap();
            assert!(
                lo <= ratio + 1e-12 && ratio <= hi + 1e-12,
                "{lo} {ratio} {hi}"
            );
        }
    }

    #[test]
    fn no_spread_across_measure_calls() {
        let log = std::cell::RefCell::new(Vec::new());
        let (x, y) = ([0, 1, 2, 3], [0, 2, 4, 6]);
        let tx = measure(3, &mut [fake("x", &log, &x)]);
        let ty = measure(3, &mut [fake("y", &log, &y)]);
        let mut t = Table::new("t", "T", "ns").columns(&["a"]);
        t.fill(0, &tx, |d| d.as_nanos() as f64);
        t.fill(0, &ty, |d| d.as_nanos() as f64);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.get("y", "a"), Some(4.0));
        assert_eq!(t.spread(1, 0), None);
    }

    #[test]
    fn unnamed_samplers_rotate_and_take_medians() {
        use std::cell::RefCell;
        let order = RefCell::new(Vec::new());
        let mut samplers: Vec<Sampler<'_>> = (0..3u64)
            .map(|i| {
                let order = &order;
                let mut calls = 0u64;
                Box::new(move || {
                    order.borrow_mut().push(i);
                    calls += 1;
                    Duration::from_nanos(10 * i + calls)
                }) as Sampler<'_>
            })
            .collect();
        let mut named: Vec<Boxed<'_>> = samplers.drain(..).map(|s| contender("", s)).collect();
        let medians: Vec<Duration> = measure(3, &mut named).iter().map(|t| t.median).collect();
        drop(named);
        drop(samplers);
        // Warm-up round, then rounds starting at 1, 2, 0.
        assert_eq!(order.into_inner(), [0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2]);
        // Counted calls 2, 3, 4: the median is the third call.
        let want: Vec<Duration> = (0..3).map(|i| Duration::from_nanos(10 * i + 3)).collect();
        assert_eq!(medians, want);
    }

    #[test]
    fn rng_is_deterministic_and_in_range() {
        let mut a = Rng::new(1);
        let mut b = Rng::new(1);
        for _ in 0..1000 {
            let x = a.below(10);
            assert_eq!(x, b.below(10));
            assert!(x < 10);
        }
        let mut p = a.permutation(100);
        p.sort();
        assert_eq!(p, (0..100).collect::<Vec<_>>());
    }
}
