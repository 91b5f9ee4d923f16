//! `alive`: the alive-flags article's cache-miss table, measured. 100 000 objects of 64 bytes
//! (a 4x4 `f32` matrix); visiting the alive ones with the flag inside each object, against
//! Pool's flags in a separate bit set.

use std::hint::black_box;

use dod::Pool;

use crate::harness::{contender, measure, per_elem, progress, time, Config, Table};

type Matrix = [f32; 16];

/// The object-oriented layout: the flag is part of the object, 68 bytes apart.
#[derive(Clone, Copy)]
struct Obj {
    alive: bool,
    m: Matrix,
}

const FRACTIONS: [f64; 5] = [0.0, 0.01, 0.1, 0.5, 1.0];

/// What a visit does with an object: reads its matrix (the trace).
#[inline]
fn visit(acc: f32, m: &Matrix) -> f32 {
    acc + m[0] + m[5] + m[10] + m[15]
}

/// The section.
pub const SECTION: super::Section = super::Section {
    name: "alive",
    about: "alive flags inside 64-byte objects vs Pool's separate flags",
    run,
};

fn run(cfg: &Config) -> Vec<Table> {
    let n = cfg.n_or(100_000, 10_000);
    let cols: Vec<String> = FRACTIONS
        .iter()
        .map(|f| format!("{} % alive", f * 100.0))
        .collect();
    let col_refs: Vec<&str> = cols.iter().map(String::as_str).collect();
    let mut t = Table::new(
        "alive",
        format!("Visiting the alive ones of {n} objects of 64 bytes"),
        "ns per object in the array (median)",
    )
    .columns(&col_refs);

    const ROW_IN: &str = "flag inside the object: Vec<Obj { alive: bool, m: [f32; 16] }>";
    const ROW_POOL: &str = "dod::Pool<[f32; 16]> (flags in a BitSet)";
    t.empty_rows([ROW_IN, ROW_POOL]);
    for (col, &f) in FRACTIONS.iter().enumerate() {
        progress(format!("alive: {} %", f * 100.0));
        let mut rng = cfg.rng(&format!("alive {f}"));
        let alive: Vec<bool> = (0..n).map(|_| rng.unit() < f).collect();
        let matrix = |i: usize| -> Matrix { core::array::from_fn(|j| (i * 16 + j) as f32) };

        let objs: Vec<Obj> = (0..n)
            .map(|i| Obj {
                alive: alive[i],
                m: matrix(i),
            })
            .collect();
        let mut pool: Pool<Matrix> = Pool::with_capacity(n);
        let keys: Vec<_> = (0..n).map(|i| pool.insert(matrix(i))).collect();
        for (k, &a) in keys.iter().zip(&alive) {
            if !a {
                pool.remove(*k);
            }
        }

        let timings = measure(
            cfg.reps,
            &mut [
                contender(ROW_IN, || {
                    time(|| {
                        objs.iter()
                            .filter(|o| o.alive)
                            .fold(0.0f32, |acc, o| visit(acc, &o.m))
                    })
                    .0
                }),
                contender(ROW_POOL, || time(|| pool.values().fold(0.0f32, visit)).0),
            ],
        );
        t.fill(col, &timings, |d| per_elem(d, n));
        black_box(&pool);
    }

    let (row_in, row_pool) = (ROW_IN, ROW_POOL);
    if let Some(r) = t.ratio(row_in, row_pool, &cols[1]) {
        let verdict = if r >= 5.0 { "met" } else { "not met" };
        t.note(format!(
            "1 % alive: Pool is {r:.1}x faster than the in-object flag (target >= 5x: {verdict})"
        ));
    }
    if let Some(r) = t.ratio(row_pool, row_in, &cols[4]) {
        let verdict = if r <= 1.1 { "met" } else { "not met" };
        t.note(format!(
            "100 % alive: Pool / in-object = {r:.2}x (target <= 1.1x: {verdict})"
        ));
    }
    t.note(
        "Each visit reads the matrix's diagonal. With the flag inside the object every object \
         is fetched to read one bit; Pool reads 1 bit per object and fetches only the alive \
         ones. Targets: Pool at 1 % alive at least 5x faster than the in-object flag; at \
         100 % alive within 1.1x.",
    );
    vec![t]
}
