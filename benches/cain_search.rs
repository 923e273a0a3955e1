//! Search-power benchmark of the code generator on random kernel sets.
//!
//! `cargo bench --bench cain_search -- [--time S] [--workers N] [--work N]
//! [--objective length|error] [--only NAME] [SPEC...]` compiles every spec of
//! `benches/specs/` (or the ones named) and prints one row per spec: kernels,
//! instructions, cycles, the predicted RMSE under `scamp5` (root of the outputs' summed
//! mean squared errors), seconds to the best program, the search's nodes and the peak
//! resident memory of the process that compiled it (each spec runs in a child process of
//! this binary, so the peak is its own). `-- --write-specs DIR` regenerates the random
//! sets from their fixed seeds (3x3 kernels with weights in eighths, 1 to 4 per set, and
//! single 5x5 kernels); sets named `heldout_*` are kept out of tuning.

use scamp::Predicted;
use scamp::{CompileOptions, Objective, Stats};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The `scamp` command's allocator, so that the figures are the command's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The random sets: (name, seed, kernels, size).
const SETS: &[(&str, u64, usize, usize)] = &[
    ("r1a", 11, 1, 3),
    ("r1b", 12, 1, 3),
    ("r2a", 21, 2, 3),
    ("r2b", 22, 2, 3),
    ("r3a", 31, 3, 3),
    ("r3b", 32, 3, 3),
    ("r4a", 41, 4, 3),
    ("r5x5a", 51, 1, 5),
    ("heldout_r1", 111, 1, 3),
    ("heldout_r2", 121, 2, 3),
    ("heldout_r3", 131, 3, 3),
    ("heldout_r4", 141, 4, 3),
    ("heldout_r5x5", 151, 1, 5),
    ("h27_r1a", 271, 1, 3),
    ("h27_r1b", 272, 1, 3),
    ("h27_r1c", 273, 1, 3),
    ("h27_r1d", 274, 1, 3),
    ("h27_r2a", 275, 2, 3),
    ("h27_r2b", 276, 2, 3),
    ("h27_r2c", 277, 2, 3),
    ("h27_r2d", 278, 2, 3),
    ("h27_r3a", 279, 3, 3),
    ("h27_r4a", 280, 4, 3),
    ("h27_r5x5a", 281, 1, 5),
    ("h27_cnn1", 282, 3, 3),
    ("h27_cnn2", 283, 3, 3),
    ("h27b_r2a", 291, 2, 3),
    ("h27b_r2b", 292, 2, 3),
    ("h27b_r2c", 293, 2, 3),
    ("h27b_r2d", 294, 2, 3),
];

/// xorshift64*: the sets must not change when a dependency's generator does.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

/// A spec of `kernels` random `size`x`size` kernels, weights `k/8` with `k` in -8..=8
/// (about a third of them zero, as in trained first layers); sets named `*cnn*` are
/// CNN-like layers instead, integer weights in -4..=4 over 4 (most outputs beyond the
/// register range, as in trained convolutions).
fn random_spec(name: &str, seed: u64, kernels: usize, size: usize) -> String {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let regs = ["A", "B", "C", "D", "E", "F"];
    let cnn = name.contains("cnn");
    let (top, depth, what) = if cnn {
        (4, 2, "integer weights in -4..4 over 4 (CNN-like)")
    } else {
        (8, 3, "weights in eighths")
    };
    let mut s = format!(
        "# Random benchmark set (seed {seed}): {kernels} kernel(s) of {size}x{size}, {what}.\n\
         name: {name}\ninput: A\nregisters: [A, B, C, D, E, F]\nkernels:\n"
    );
    for out in regs.iter().take(kernels) {
        s += &format!("  - out: {out}\n    scale: 1/{top}\n    weights:\n");
        for _ in 0..size {
            let row: Vec<String> = (0..size)
                .map(|_| {
                    if rng.range(0, 2) == 0 {
                        0
                    } else {
                        let v = rng.range(1, top);
                        if rng.range(0, 1) == 0 {
                            v
                        } else {
                            -v
                        }
                    }
                })
                .map(|v| format!("{v:2}"))
                .collect();
            s += &format!("      - [{}]\n", row.join(", "));
        }
    }
    s += &format!("approximation: {{ max_depth: {depth}, max_error: 0.0 }}\n");
    s += "search: { time_limit: 10, workers: 2, ops: all }\n";
    s
}

struct Args {
    time: f64,
    workers: usize,
    work: Option<u64>,
    objective: Objective,
    seed: u64,
    specs: Vec<PathBuf>,
    child: bool,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        time: 10.0,
        workers: 2,
        work: None,
        objective: Objective::Length,
        seed: 0,
        specs: Vec::new(),
        child: false,
    };
    let mut it = args.iter();
    while let Some(x) = it.next() {
        let mut val = || it.next().cloned().ok_or(format!("{x} needs a value"));
        match x.as_str() {
            "--time" => a.time = val()?.parse().map_err(|e| format!("--time: {e}"))?,
            "--workers" => a.workers = val()?.parse().map_err(|e| format!("--workers: {e}"))?,
            "--work" => a.work = Some(val()?.parse().map_err(|e| format!("--work: {e}"))?),
            "--seed" => a.seed = val()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--objective" => {
                a.objective = val()?.parse().map_err(|e| format!("--objective: {e}"))?
            }
            "--child" => a.child = true,
            "--bench" => {}
            s if s.starts_with("--") => return Err(format!("unknown option {s}")),
            s => a.specs.push(PathBuf::from(s)),
        }
    }
    Ok(a)
}

/// Peak resident memory of this process in MiB (Linux; 0 elsewhere).
fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Compiles one spec here and prints its row.
fn child(a: &Args, spec: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(spec).map_err(|e| format!("{}: {e}", spec.display()))?;
    let s = scamp::parse_spec(&text).map_err(|e| format!("{}: {e}", spec.display()))?;
    let mut opts = CompileOptions::default()
        .with_time_limit(a.time)
        .with_workers(a.workers)
        .with_seed(a.seed)
        .with_objective(a.objective);
    opts.work = a.work;
    let name = spec.file_stem().map_or("?".into(), |n| n.to_string_lossy());
    match scamp::compile(&s, &opts, &Stats::default()) {
        Ok(c) => println!(
            "{name:14} {:>2} {:>5} {:>6} {:>9.2} {:>8.2} {:>10} {:>8} {:>8.1}",
            s.kernels.len(),
            c.program.instructions(),
            c.program.cycles(),
            Predicted::summed_mse(&c.predicted).sqrt(),
            c.search.seconds_to_best,
            c.search.nodes,
            c.search.source.name(),
            peak_mib()
        ),
        Err(e) => println!("{name:14} {:>2} failed: {e}", s.kernels.len()),
    }
    Ok(())
}

fn run() -> Result<(), String> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if raw.first().map(String::as_str) == Some("--write-specs") {
        let dir = PathBuf::from(raw.get(1).ok_or("--write-specs needs a directory")?);
        for &(name, seed, k, size) in SETS {
            let p = dir.join(format!("{name}.yaml"));
            std::fs::write(&p, random_spec(name, seed, k, size))
                .map_err(|e| format!("{}: {e}", p.display()))?;
        }
        return Ok(());
    }
    let mut a = parse(&raw)?;
    if a.child {
        for s in &a.specs {
            child(&a, s)?;
        }
        return Ok(());
    }
    if a.specs.is_empty() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/specs");
        let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        v.sort();
        a.specs = v;
    }
    println!(
        "# time {} s, workers {}, work {:?}, objective {:?}",
        a.time, a.workers, a.work, a.objective
    );
    println!("spec           k instr cycles predicted  to_best      nodes   source peak_MiB");
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    for s in &a.specs {
        let mut cmd = Command::new(&me);
        cmd.arg("--child")
            .args(["--time", &a.time.to_string()])
            .args(["--workers", &a.workers.to_string()])
            .args(["--seed", &a.seed.to_string()])
            .args([
                "--objective",
                match a.objective {
                    Objective::Length => "length",
                    Objective::Error => "error",
                },
            ]);
        if let Some(w) = a.work {
            cmd.args(["--work", &w.to_string()]);
        }
        let status = cmd.arg(s).status().map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("{}: child failed", s.display()));
        }
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}
