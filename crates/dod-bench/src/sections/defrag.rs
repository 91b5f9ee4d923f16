//! Section `defrag`: reordering 100 000 items with every handle kept valid: the full sort, and
//! the incremental defragment with a budget of 1 000 moves per call (the handle_map article's
//! insertion sort took 32 538 ms on the shuffled set).

use std::time::{Duration, Instant};

use dod::HandleMap;

use crate::harness::{progress, time, Config, Sampler, Table};

#[derive(Clone, Copy, Debug)]
struct Item {
    _payload: u64,
    sort: u64,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The handle_map article's defragment: an insertion sort over the items (with its memmove
/// shortcut), here on a plain `Vec` with no handle bookkeeping at all, which only flatters it.
fn insertion_sort(v: &mut [Item]) {
    for i in 1..v.len() {
        let tmp = v[i];
        let mut j = i;
        while j > 0 && v[j - 1].sort > tmp.sort {
            j -= 1;
        }
        if j != i {
            v.copy_within(j..i, j + 1);
            v[j] = tmp;
        }
    }
}

fn run(cfg: &Config) -> Vec<Table> {
    let n = cfg.n_or(100_000, 10_000);
    let reps = cfg.reps;
    let mut rng = cfg.rng("defrag");
    let reversed: Vec<Item> = (0..n as u64)
        .rev()
        .map(|i| Item {
            _payload: 1,
            sort: i,
        })
        .collect();
    let mut shuffled = reversed.clone();
    rng.shuffle(&mut shuffled);
    let inputs = [("reversed", &reversed), ("shuffled", &shuffled)];
    fn by(a: &Item, b: &Item) -> std::cmp::Ordering {
        a.sort.cmp(&b.sort)
    }

    let mut t = Table::new(
        "defrag",
        format!("defrag: reorder {n} items of 16 bytes, handles kept valid"),
        "ms in total, median",
    )
    .columns(&["reversed", "shuffled"]);
    let mut calls_note = Vec::new();

    // Each row's sampler of each input; the rows of one input are measured together.
    let mut rows: Vec<(String, Vec<Option<Sampler<'_>>>)> = Vec::new();
    let mut row = |name: &str, f: fn(&[Item]) -> Duration| {
        let cells = inputs
            .iter()
            .map(|&(_, v)| Some(Box::new(move || f(v)) as Sampler<'_>))
            .collect();
        rows.push((name.to_string(), cells));
    };
    fn fill(v: &[Item]) -> HandleMap<Item> {
        let mut m = HandleMap::with_capacity(v.len());
        m.extend(v.iter().copied());
        m
    }
    row("HandleMap::sort_by", |v| {
        let mut m = fill(v);
        time(|| m.sort_by(by)).0
    });
    row("HandleMap::sort_unstable_by", |v| {
        let mut m = fill(v);
        time(|| m.sort_unstable_by(by)).0
    });
    row("HandleMap::defragment, 1 000 moves per call", |v| {
        let mut m = fill(v);
        let start = Instant::now();
        while m.is_fragmented() {
            m.defragment(by, 1000);
        }
        start.elapsed()
    });
    row("Vec<T>::sort_by (floor: no handles)", |v| {
        let mut v = v.to_vec();
        time(|| v.sort_by(by)).0
    });
    progress("defrag: sorts and defragment");
    t.measure_rows(reps, rows, |_, d| ms(d));

    for (name, v) in inputs {
        let mut m = fill(v);
        let (mut calls, mut longest, mut first) = (0, Duration::ZERO, Duration::ZERO);
        while m.is_fragmented() {
            let (d, _) = time(|| m.defragment(by, 1000));
            if calls == 0 {
                first = d;
            }
            longest = longest.max(d);
            calls += 1;
        }
        assert!(m.values().is_sorted_by(|a, b| a.sort <= b.sort));
        calls_note.push(format!(
            "- defragment on {name}: {calls} calls of at most 1 000 moves; first call (ranks the items) {:.3} ms, longest call {:.3} ms",
            first.as_secs_f64() * 1e3,
            longest.as_secs_f64() * 1e3
        ));
    }

    // The handle_map article's algorithm is quadratic: measure it on a tenth of the items and
    // project.
    let small = (n / 10).max(1);
    progress("insertion sort (the handle_map article's defragment)");
    let mut cells = Vec::new();
    for (_, v) in inputs {
        let mut part: Vec<Item> = v
            .iter()
            .copied()
            .filter(|it| (it.sort as usize) < small)
            .collect();
        let (d, _) = time(|| insertion_sort(&mut part));
        assert!(part.is_sorted_by(|a, b| a.sort <= b.sort));
        let scale = (n as f64 / small as f64).powi(2);
        cells.push(Some(d.as_secs_f64() * 1e3 * scale));
    }
    t.row(
        "insertion sort, the handle_map article's defragment (projected)",
        cells,
    );
    t.note(format!(
        "The insertion sort row is measured on {small} items and projected to {n} by n² (marked projected); the handle_map article measured 32 538 ms for its shuffled set."
    ));
    for line in calls_note {
        t.note(line);
    }
    if let Some(full) = t.get("HandleMap::sort_by", "reversed") {
        let verdict = if full <= 20.0 { "met" } else { "MISSED" };
        t.note(format!(
            "- target: full sort of {n} reversed items {full:.2} ms (≤ 20 ms): {verdict}"
        ));
    }
    vec![t]
}

/// The section.
pub const SECTION: super::Section = super::Section {
    name: "defrag",
    about: "sorting and incremental defragment of 100 000 items with handles kept valid",
    run,
};
