//! `dod-bench`: the comparison report. Every contender of a table runs in the same process; the
//! contenders of a column are timed in turns, round after round (see [`harness::measure`]); each
//! cell is the median of its rounds, shown with its ratio to the best row and that ratio's
//! spread over the rounds.
//!
//! ```text
//! cargo run --release -p dod-bench -- [SECTION|all]... [--n N] [--quick] [--reps R] [--min-time MS] [--seed S] [--out DIR] [--unpinned]
//! ```

mod alloc_counter;
mod chart;
mod floors;
mod harness;
mod sections;

#[global_allocator]
static ALLOC: alloc_counter::Counting = alloc_counter::Counting;

use harness::{Config, Table};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage: dod-bench [SECTION|all]... [--n N] [--quick] [--reps R] [--min-time MS] [--seed S] [--out DIR] [--unpinned] [--list]

Prints markdown tables to stdout and writes report.md, results.json and an SVG chart
per table to DIR
(default: target/dod-report/ of the workspace). Progress goes to stderr.
  --n N      element count for the sections that take one
  --quick    small sizes, 3 repetitions: a smoke run
  --reps R   rounds per column after one warm-up round; each round times every contender
             of the column once; the median is reported (default 7, quick 3)
  --min-time MS
             a column whose rounds (warm-up included) took less than MS goes on with more,
             up to five times as many counted rounds (default 250, quick 0)
  --seed S   seed of every random sequence (default 1)
  --unpinned leave glibc's mmap and trim thresholds to move as they do by default
             (by default the report fixes them, so that every contender allocates alike)
  --list     list the sections";

struct Args {
    sections: Vec<&'static sections::Section>,
    config: Config,
    out: PathBuf,
    unpinned: bool,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut names = Vec::new();
    let (mut n, mut quick, mut reps, mut seed, mut out) = (None, false, None, 1u64, None);
    let mut min_time = None;
    let mut unpinned = false;
    fn value<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, String> {
        let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
        v.parse().map_err(|_| format!("{flag}: cannot read {v:?}"))
    }
    while let Some(a) = args.next() {
        match a.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(None);
            }
            "--list" => {
                for s in sections::SECTIONS {
                    println!("{:10} {}", s.name, s.about);
                }
                return Ok(None);
            }
            "--quick" => quick = true,
            "--unpinned" => unpinned = true,
            "--n" => n = Some(value::<usize>("--n", args.next())?),
            "--reps" => reps = Some(value::<usize>("--reps", args.next())?),
            "--min-time" => min_time = Some(value::<u64>("--min-time", args.next())?),
            "--seed" => seed = value::<u64>("--seed", args.next())?,
            "--out" => out = Some(PathBuf::from(value::<String>("--out", args.next())?)),
            s if s.starts_with('-') => return Err(format!("unknown option {s}\n\n{USAGE}")),
            s => names.push(s.to_string()),
        }
    }
    let mut chosen = Vec::new();
    if names.is_empty() || names.iter().any(|s| s == "all") {
        chosen.extend(sections::SECTIONS.iter());
    } else {
        for name in &names {
            let s = sections::SECTIONS
                .iter()
                .find(|s| s.name == name)
                .ok_or_else(|| format!("no section {name:?}; --list shows them"))?;
            chosen.push(s);
        }
    }
    if n == Some(0) || reps == Some(0) {
        return Err("--n and --reps must be at least 1".into());
    }
    let config = Config {
        n,
        quick,
        reps: reps.unwrap_or(if quick { 3 } else { 7 }),
        min_time: std::time::Duration::from_millis(min_time.unwrap_or(if quick { 0 } else { 250 })),
        seed,
    };
    let out = out.unwrap_or_else(|| {
        PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/dod-report"
        ))
    });
    Ok(Some(Args {
        sections: chosen,
        config,
        out,
        unpinned,
    }))
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{cpu}, {cores} cores, {}", std::env::consts::OS)
}

/// Today's date (UTC) as `YYYY-MM-DD`, from the system clock.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn write_report(
    out: &PathBuf,
    header: &str,
    tables: &[Table],
    config: &Config,
    allocator: &str,
) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    let mut md = String::from(header);
    for (i, t) in tables.iter().enumerate() {
        md += "\n";
        md += &t.to_markdown();
        let file = format!("{:02}-{}.svg", i + 1, t.section);
        match chart::write(t, &out.join(&file)) {
            Ok(()) => md += &format!("\n![{}]({file})\n", t.title),
            Err(e) => eprintln!("dod-bench: no chart for {:?}: {e}", t.title),
        }
    }
    std::fs::write(out.join("report.md"), md)?;
    let json = serde_json::json!({
        "machine": machine(),
        "quick": config.quick,
        "reps": config.reps,
        "min_time_ms": config.min_time.as_millis() as u64,
        "max_rounds_factor": harness::MAX_ROUNDS_FACTOR,
        "seed": config.seed,
        "n": config.n,
        "allocator": allocator,
        "spread": "per cell, the lowest and highest over the rounds of its ratio to the column's best row in the same round",
        "unix_time": std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        "tables": tables.iter().map(Table::to_json).collect::<Vec<_>>(),
    });
    std::fs::write(
        out.join("results.json"),
        serde_json::to_string_pretty(&json).expect("tables are valid JSON"),
    )
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(a)) => a,
        Ok(None) => return ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dod-bench: {e}");
            return ExitCode::from(2);
        }
    };
    let allocator = harness::pin_allocator(!args.unpinned);
    if cfg!(debug_assertions) {
        eprintln!("dod-bench: this is a debug build; run with --release for meaningful numbers");
    }
    let header = format!(
        "# dod comparison report\n\nMachine: {}. Date: {}. Rounds per cell: {} after one \
         uncounted warm-up round{}; every round times each contender of a column once, in \
         turns; the median is reported. Spread: the lowest and highest over the rounds of a \
         cell's ratio to its column's best row in the same round. Allocator: {}. Seed: {}.{}\n",
        machine(),
        today(),
        args.config.reps,
        if args.config.min_time.is_zero() {
            String::new()
        } else {
            format!(
                ", and more (up to {} times as many) while a column's rounds have taken less \
                 than {} ms",
                harness::MAX_ROUNDS_FACTOR,
                args.config.min_time.as_millis()
            )
        },
        allocator,
        args.config.seed,
        if args.config.quick {
            " Quick run: small sizes, numbers are only a smoke test."
        } else {
            ""
        }
    );
    println!("{header}");
    harness::set_min_time(args.config.min_time);
    harness::warm_up_allocator();
    let mut tables = Vec::new();
    let bar = harness::spinner();
    for s in &args.sections {
        if bar.is_hidden() {
            eprintln!("section {}: {}", s.name, s.about);
        }
        bar.set_prefix(s.name);
        let ts = (s.run)(&args.config);
        for t in &ts {
            println!("{}", t.to_markdown());
        }
        tables.extend(ts);
    }
    bar.finish_and_clear();
    if let Err(e) = write_report(&args.out, &header, &tables, &args.config, &allocator) {
        eprintln!(
            "dod-bench: cannot write the report to {}: {e}",
            args.out.display()
        );
        return ExitCode::FAILURE;
    }
    eprintln!("report written to {}", args.out.display());
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Option<Args>, String> {
        parse_args(s.split_whitespace().map(String::from))
    }

    #[test]
    fn dates_from_day_counts() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_513), (2026, 3, 1));
        assert_eq!(civil_from_days(20_779), (2026, 11, 22));
    }

    #[test]
    fn flags_are_read() {
        let a = parse("--quick --n 50 --reps 2 --seed 9 --out /tmp/x")
            .unwrap()
            .unwrap();
        assert!(a.config.quick);
        assert_eq!(a.config.n, Some(50));
        assert_eq!(a.config.reps, 2);
        assert_eq!(a.config.seed, 9);
        assert_eq!(a.out, PathBuf::from("/tmp/x"));
        assert!(!a.unpinned);
        assert!(parse("pool --unpinned").unwrap().unwrap().unpinned);
        assert_eq!(a.sections.len(), sections::SECTIONS.len());
        // Quick runs add no rounds; full ones fill 250 ms unless told otherwise.
        assert!(a.config.min_time.is_zero());
        let full = parse("pool").unwrap().unwrap();
        assert_eq!(full.config.min_time, std::time::Duration::from_millis(250));
        let told = parse("pool --min-time 40").unwrap().unwrap();
        assert_eq!(told.config.min_time, std::time::Duration::from_millis(40));
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(parse("--n").is_err());
        assert!(parse("--n x").is_err());
        assert!(parse("--n 0").is_err());
        assert!(parse("--bogus").is_err());
        assert!(parse("nosuchsection").is_err());
    }
}
