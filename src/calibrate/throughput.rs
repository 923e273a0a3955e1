//! Measuring simulator throughput: time per macro on the full array, whole-frame
//! programs, and a streaming roofline (plain copy and add of planes with the same
//! threads) measured in the same process, so ratios are meaningful on any machine. The
//! profiles of one program are timed in alternation, sample after sample, so that a
//! machine whose load changes during the run shifts both alike and their ratio stays
//! fair. numpy's own plane add, when `python3` with numpy is at hand, is timed in the
//! same run as an outside reference.
//!
//! The roofline of a figure is the time the streaming add needs for the same number of
//! plane passes: every register plane a statement reads before writing it counts once,
//! every plane it writes counts once (what a perfectly fused pass over memory has to
//! move). The add moves three planes (two read, one written), so one plane pass costs a
//! third of it.

use rayon::prelude::*;
use scamp::{isa::parse_program, isa::BusOp, isa::Device, isa::Program, isa::Reg};
use scamp::{run, Array, EdgeMode, DEFAULT_CLOCK_HZ, PES};
use scamp::{NoiseModel, Profile};
use serde::Serialize;
use std::time::{Duration, Instant};

/// Plane elements per task of the roofline passes: 16 rows of 256.
const ROOF_BAND: usize = 256 * 16;

/// One timed figure.
#[derive(Clone, Debug, Serialize)]
pub struct Figure {
    /// What was timed.
    pub name: String,
    /// Noise profile (`ideal` or `scamp5`).
    pub profile: String,
    /// Median wall time of one execution, microseconds.
    pub us: f64,
    /// Bus instructions per execution.
    pub cycles: u64,
    /// Bus instructions per second.
    pub bus_per_second: f64,
    /// Register-plane passes a fully fused execution needs (see the module docs).
    pub plane_passes: u64,
    /// Roofline time for those passes, microseconds.
    pub roofline_us: f64,
    /// `us / roofline_us`.
    pub roofline_ratio: f64,
    /// `us` over the `ideal` profile's `us` for the same program, timed in alternation
    /// with it (`None` for `ideal` itself).
    pub ideal_ratio: Option<f64>,
}

/// The streaming roofline measured in this process.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Roofline {
    /// One 256x256 f32 plane copied, microseconds.
    pub copy_us: f64,
    /// Two planes added into a third, microseconds.
    pub add_us: f64,
}

impl Roofline {
    /// Measures both passes (median of `samples`).
    pub fn measure(samples: usize) -> Roofline {
        Roofline {
            copy_us: roofline_copy_us(samples),
            add_us: roofline_add_us(samples),
        }
    }

    /// Microseconds per plane pass (the add moves three planes).
    pub fn pass_us(&self) -> f64 {
        self.add_us / 3.0
    }
}

/// Median of repeated timings of `f`, each timing covering enough calls to last
/// about `min_batch`.
pub fn median_us(mut f: impl FnMut(), samples: usize, min_batch: Duration) -> f64 {
    medians_us(&mut [&mut f], samples, min_batch)[0]
}

/// [`median_us`] of each of `fs`, the samples taken in turn (one of the first, one of
/// the second, ...), so that every function sees the same changes of machine load.
pub fn medians_us(fs: &mut [&mut dyn FnMut()], samples: usize, min_batch: Duration) -> Vec<f64> {
    let calls: Vec<u32> = fs.iter_mut().map(|f| batch_calls(f, min_batch)).collect();
    let mut times = vec![Vec::new(); fs.len()];
    for _ in 0..samples.max(1) {
        for ((f, &n), times) in fs.iter_mut().zip(&calls).zip(&mut times) {
            let t = Instant::now();
            for _ in 0..n {
                f();
            }
            times.push(t.elapsed().as_secs_f64() * 1e6 / f64::from(n));
        }
    }
    times
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect()
}

/// How many calls of `f` make one timed batch of at least `min_batch`.
fn batch_calls(f: &mut dyn FnMut(), min_batch: Duration) -> u32 {
    let mut calls = 1u32;
    loop {
        let t = Instant::now();
        for _ in 0..calls {
            f();
        }
        if t.elapsed() >= min_batch || calls >= 1 << 20 {
            return calls;
        }
        calls *= 2;
    }
}

/// Streaming roofline: microseconds for one pass that reads two 256x256 f32 planes and
/// writes one (the traffic of a two-source bus instruction), with rayon over row bands.
pub fn roofline_add_us(samples: usize) -> f64 {
    let a = vec![1.0f32; PES];
    let b = vec![2.0f32; PES];
    let mut out = vec![0.0f32; PES];
    median_us(
        || {
            out.par_chunks_mut(ROOF_BAND)
                .zip(a.par_chunks(ROOF_BAND))
                .zip(b.par_chunks(ROOF_BAND))
                .for_each(|((o, x), y)| {
                    for ((o, x), y) in o.iter_mut().zip(x).zip(y) {
                        *o = x + y;
                    }
                });
            std::hint::black_box(&mut out);
        },
        samples,
        Duration::from_millis(20),
    )
}

/// Streaming roofline: microseconds to copy one plane.
pub fn roofline_copy_us(samples: usize) -> f64 {
    let a = vec![1.0f32; PES];
    let mut out = vec![0.0f32; PES];
    median_us(
        || {
            out.par_chunks_mut(ROOF_BAND)
                .zip(a.par_chunks(ROOF_BAND))
                .for_each(|(o, x)| o.copy_from_slice(x));
            std::hint::black_box(&mut out);
        },
        samples,
        Duration::from_millis(20),
    )
}

/// numpy's own plane add, timed in a `python3` subprocess in the same run: the outside
/// reference for the simulator's ideal `add`.
#[derive(Clone, Debug, Serialize)]
pub struct NumpyAdd {
    /// numpy's version.
    pub version: String,
    /// `a + b` of two 256x256 float32 arrays (a new array each time, numpy's own way),
    /// median microseconds.
    pub add_us: f64,
    /// `numpy.add(a, b, out=c)` into an existing array, median microseconds.
    pub add_into_us: f64,
}

/// The timing script: the same batching and median as [`median_us`], the two adds in
/// alternation; prints the version and both medians, or `missing` without numpy.
const NUMPY_SCRIPT: &str = r#"
import sys, time
try:
    import numpy as np
except Exception:
    print("missing")
    sys.exit(0)
samples = int(sys.argv[1])
a = np.arange(65536, dtype=np.float32).reshape(256, 256) % 200 - 100
b = a[::-1].copy()
c = np.empty_like(a)
def plain():
    a + b
def into():
    np.add(a, b, out=c)
def calls(f):
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            f()
        if time.perf_counter() - t >= 0.03 or n >= 1 << 20:
            return n
        n *= 2
fs = [(plain, calls(plain)), (into, calls(into))]
times = [[], []]
for _ in range(samples):
    for (f, n), ts in zip(fs, times):
        t = time.perf_counter()
        for _ in range(n):
            f()
        ts.append((time.perf_counter() - t) * 1e6 / n)
med = [sorted(ts)[len(ts) // 2] for ts in times]
print(np.__version__, med[0], med[1])
"#;

/// Times numpy's plane add (median of `samples`), or says why it cannot: no `python3`
/// on the path, no numpy in it, or output that does not parse.
pub fn numpy_add(samples: usize) -> Result<NumpyAdd, String> {
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(NUMPY_SCRIPT)
        .arg(samples.max(1).to_string())
        .stderr(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("python3 not runnable ({e})"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let fields: Vec<&str> = text.split_whitespace().collect();
    match fields[..] {
        ["missing"] => Err("python3 has no numpy".to_string()),
        [version, plain, into] => match (plain.parse(), into.parse()) {
            (Ok(add_us), Ok(add_into_us)) => Ok(NumpyAdd {
                version: version.to_string(),
                add_us,
                add_into_us,
            }),
            _ => Err(format!("unexpected output from python3: {}", text.trim())),
        },
        _ if !out.status.success() => Err(format!("python3 failed ({})", out.status)),
        _ => Err(format!("unexpected output from python3: {}", text.trim())),
    }
}

/// Register-plane passes of `program` when every statement is one pass over memory:
/// per statement, each plane read before it is written and each plane written.
pub fn plane_passes(program: &Program) -> u64 {
    let plane = |r: Reg| match r {
        Reg::X(_) | Reg::News => Some(Reg::News),
        Reg::In => None,
        r => Some(r),
    };
    let mut total = 0;
    for s in &program.stmts {
        let (mut read, mut written) = (Vec::new(), Vec::new());
        for op in &s.ops {
            let (dsts, srcs) = match op {
                BusOp::Transfer { dsts, srcs } => (dsts.as_slice(), srcs.as_slice()),
                BusOp::Where(srcs) => (&[][..], srcs.as_slice()),
                _ => continue,
            };
            for p in srcs.iter().filter_map(|&r| plane(r)) {
                if !written.contains(&p) && !read.contains(&p) {
                    read.push(p);
                }
            }
            for p in dsts.iter().filter_map(|&r| plane(r)) {
                if !written.contains(&p) {
                    written.push(p);
                }
            }
        }
        total += (read.len() + written.len()) as u64;
    }
    total
}

/// The noise profiles `scamp bench` times under (`ideal` first: the others' ratios are
/// taken to it).
pub const PROFILES: &[&str] = &["ideal", "scamp5"];

/// A fresh 6-register array under `profile` (chip and run seed 1, the fixed pattern
/// drawn up front), its general registers holding a deterministic picture-like pattern
/// in -60..60 (so no value drifts into subnormals, and sums of two sources stay clear
/// of saturation, as in a program that respects the register range).
pub fn bench_array(profile: &str) -> Array {
    let mut array = Array::new(6, EdgeMode::Zero);
    if profile != "ideal" {
        let p = Profile::load(profile).expect("built-in profile");
        let model = NoiseModel::new(&p, 1, 1);
        model.prepare(6);
        array.set_layer(model);
    }
    for g in 0..6u8 {
        let plane = array.plane_mut(Reg::Gen(g)).expect("general register");
        for (i, v) in plane.iter_mut().enumerate() {
            let h = mix64(i as u64 ^ (u64::from(g) << 32));
            *v = (h % 121) as f32 - 60.0;
        }
    }
    array
}

/// The splitmix64 finaliser (a bijective 64-bit mixer): spreads the bench planes'
/// values, the same as the simulator's generator mixes its keys with.
fn mix64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Times `program` under every profile of [`PROFILES`] (each on an array of its own,
/// run over and over, the profiles in alternation), one figure per profile: the time
/// of one execution, where one call of the simulator runs it `repeat` times in a row.
pub fn time_program(
    name: &str,
    program: &Program,
    repeat: u32,
    roof: &Roofline,
    samples: usize,
) -> Vec<Figure> {
    let repeat = repeat.max(1);
    let mut arrays: Vec<Array> = PROFILES.iter().map(|p| bench_array(p)).collect();
    // Errors cannot occur: the programs are parsed against the same device.
    let mut runs: Vec<_> = arrays
        .iter_mut()
        .map(|a| move || drop(run(a, program, repeat, DEFAULT_CLOCK_HZ)))
        .collect();
    let mut fs: Vec<&mut dyn FnMut()> = runs.iter_mut().map(|f| f as &mut dyn FnMut()).collect();
    let per_call = medians_us(&mut fs, samples, Duration::from_millis(30));
    let times: Vec<f64> = per_call.iter().map(|t| t / f64::from(repeat)).collect();
    let cycles = program.cycles();
    let plane_passes = plane_passes(program);
    let roofline_us = roof.pass_us() * plane_passes as f64;
    PROFILES
        .iter()
        .zip(&times)
        .map(|(profile, &us)| Figure {
            name: name.to_string(),
            profile: profile.to_string(),
            us,
            cycles,
            bus_per_second: cycles as f64 / (us * 1e-6),
            plane_passes,
            roofline_us,
            roofline_ratio: us / roofline_us,
            ideal_ratio: (*profile != "ideal").then(|| us / times[0]),
        })
        .collect()
}

/// The macros `scamp bench` times, with a statement each.
pub const MACROS: &[(&str, &str)] = &[
    ("add", "add(A, B, C)"),
    ("movx", "movx(A, B, east)"),
    ("divq", "divq(A, B)"),
    ("div", "div(A, B, C, D)"),
    ("add2x", "add2x(A, B, C, north, east)"),
];

/// The whole-frame programs `scamp bench` times (generated by `scamp compile`).
pub const FRAMES: &[(&str, &str)] = &[
    ("gauss3x3", include_str!("../../programs/gauss3x3.scamp")),
    (
        "analognet2",
        include_str!("../../programs/analognet2.scamp"),
    ),
];

/// Programs `scamp bench` times in long runs (name, text, executions per call): the
/// steady state of a long program, where consecutive instructions share band passes,
/// as in whole-process runs of long programs.
pub const LONG: &[(&str, &str, u32)] = &[
    ("add", "add(A, B, C)", 1000),
    ("add2x", "add2x(A, B, C, north, east)", 1000),
    (
        "gauss3x3",
        include_str!("../../programs/gauss3x3.scamp"),
        100,
    ),
];

/// Parses one of the benchmark programs.
pub fn macro_program(text: &str) -> Program {
    parse_program(text, Device::default()).expect("benchmark programs are valid")
}

/// Every figure of `scamp bench`: each macro, then each frame, each under every
/// profile; then the long runs ([`LONG`], named `NAME xK`, time per execution).
pub fn all_figures(roof: &Roofline, samples: usize) -> Vec<Figure> {
    let mut out = Vec::new();
    for (kind, list) in [("macro", MACROS), ("frame", FRAMES)] {
        for (name, text) in list {
            let p = macro_program(text);
            out.extend(time_program(
                &format!("{kind} {name}"),
                &p,
                1,
                roof,
                samples,
            ));
        }
    }
    for (name, text, repeat) in LONG {
        let p = macro_program(text);
        let label = format!("long {name} x{repeat}");
        out.extend(time_program(&label, &p, *repeat, roof, samples));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plane_passes_count_reads_before_writes_and_writes() {
        // add: reads B, C; writes NEWS, A.
        assert_eq!(plane_passes(&macro_program("add(A, B, C)")), 4);
        // movx: reads B; writes NEWS, A (NEWS read back after it is written).
        assert_eq!(plane_passes(&macro_program("movx(A, B, east)")), 3);
        // div(y0, y1, y2, x0): reads D; writes A, B, C, NEWS.
        assert_eq!(plane_passes(&macro_program("div(A, B, C, D)")), 5);
        for (_, text) in FRAMES {
            assert!(plane_passes(&macro_program(text)) > 0);
        }
    }
}
