//! Measuring and reporting: medians of repeated runs, tables of ns per element with the ratio to
//! the best row of each column, rendered as markdown and as JSON.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// What the command line asked for.
#[derive(Clone, Debug)]
pub struct Config {
    /// Element count for sections that take one (`--n`); `None` means the section's default.
    pub n: Option<usize>,
    /// Small sizes and few repetitions: a smoke run.
    pub quick: bool,
    /// Repetitions per cell; the median is reported.
    pub reps: usize,
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

/// Runs `f` once to warm caches and the allocator, then `reps` times, and returns the median of
/// the durations it reports. `f` does its own set-up and times only the work (see [`time`]).
pub fn median(reps: usize, mut f: impl FnMut() -> Duration) -> Duration {
    f();
    let mut v: Vec<Duration> = (0..reps.max(1)).map(|_| f()).collect();
    v.sort();
    v[v.len() / 2]
}

/// One contender's run of a workload: each call does its own set-up and returns the time of
/// the work alone (see [`time`]).
pub type Sampler<'a> = Box<dyn FnMut() -> Duration + 'a>;

/// Times every sampler once per repetition, in turns, and returns each one's median. A first
/// round warms caches and allocators and is not counted; each repetition starts one sampler
/// later than the one before, so that drift on the machine falls on every contender alike.
pub fn interleaved(reps: usize, samplers: &mut [Sampler<'_>]) -> Vec<Duration> {
    let n = samplers.len();
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(reps); n];
    for round in 0..=reps.max(1) {
        for k in 0..n {
            let i = (round + k) % n;
            let d = samplers[i]();
            if round > 0 {
                samples[i].push(d);
            }
        }
    }
    samples
        .into_iter()
        .map(|mut v| {
            v.sort();
            v[v.len() / 2]
        })
        .collect()
}

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

/// One row of a table: a contender and its value per column (`None`: not applicable).
#[derive(Clone, Debug)]
pub struct Row {
    /// The contender's name.
    pub name: String,
    /// One value per column, lower is better.
    pub cells: Vec<Option<f64>>,
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

    /// Adds a row; `cells` must have one entry per column.
    pub fn row(&mut self, name: impl Into<String>, cells: Vec<Option<f64>>) {
        assert_eq!(cells.len(), self.columns.len(), "one cell per column");
        self.rows.push(Row {
            name: name.into(),
            cells,
        });
    }

    /// Adds a remark.
    pub fn note(&mut self, s: impl Into<String>) {
        self.notes.push(s.into());
    }

    /// The smallest value of column `c`.
    pub fn best(&self, c: usize) -> Option<f64> {
        self.rows
            .iter()
            .filter_map(|r| r.cells[c])
            .filter(|v| v.is_finite())
            .min_by(|a, b| a.total_cmp(b))
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

    /// Markdown: each cell is the value and, in parentheses, its ratio to the column's best.
    pub fn to_markdown(&self) -> String {
        let mut s = format!("### {}\n\n", self.title);
        s += &format!(
            "{}; in parentheses, the ratio to the best row of the column.\n\n",
            self.unit
        );
        s += "| |";
        for c in &self.columns {
            s += &format!(" {c} |");
        }
        s += "\n|---|";
        for _ in &self.columns {
            s += "---:|";
        }
        s += "\n";
        for r in &self.rows {
            s += &format!("| {} |", r.name);
            for (c, v) in r.cells.iter().enumerate() {
                match (v, self.best(c)) {
                    (Some(v), Some(b)) if b > 0.0 => {
                        let ratio = v / b;
                        if ratio <= 1.0 + 1e-9 {
                            s += &format!(" **{}** (1.00x) |", fmt_num(*v));
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

    /// The table as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "section": self.section,
            "title": self.title,
            "unit": self.unit,
            "columns": self.columns,
            "rows": self.rows.iter().map(|r| serde_json::json!({
                "name": r.name,
                "cells": r.cells,
            })).collect::<Vec<_>>(),
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

/// Puts the allocator in the state it reaches after a while in a real program: glibc serves
/// large blocks with fresh mappings (a page fault per page, every time) until a large block has
/// been freed once, which would otherwise penalise whichever contender happens to run first.
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
    }

    #[test]
    fn interleaved_rotates_and_takes_medians() {
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
        let medians = interleaved(3, &mut samplers);
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
