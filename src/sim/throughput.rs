//! Measuring simulator throughput: time per macro on the full array, whole-frame
//! programs, and a streaming roofline (plain copy and add of planes with the same
//! threads) measured in the same process, so ratios are meaningful on any machine.
//!
//! The roofline of a figure is the time the streaming add needs for the same number of
//! plane passes: every register plane a statement reads before writing it counts once,
//! every plane it writes counts once (what a perfectly fused pass over memory has to
//! move). The add moves three planes (two read, one written), so one plane pass costs a
//! third of it.

use super::array::{Array, PES};
use super::edge::EdgeMode;
use super::noise::{NoiseModel, Profile};
use super::run::{run, DEFAULT_CLOCK_HZ};
use crate::isa::{parse_program, BusOp, Device, Program, Reg};
use rayon::prelude::*;
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
    // Calibrate how many calls make one batch.
    let mut calls = 1u32;
    loop {
        let t = Instant::now();
        for _ in 0..calls {
            f();
        }
        if t.elapsed() >= min_batch || calls >= 1 << 20 {
            break;
        }
        calls *= 2;
    }
    let mut times: Vec<f64> = (0..samples.max(1))
        .map(|_| {
            let t = Instant::now();
            for _ in 0..calls {
                f();
            }
            t.elapsed().as_secs_f64() * 1e6 / f64::from(calls)
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
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

/// The noise profiles `scamp bench` times under.
pub const PROFILES: &[&str] = &["ideal", "scamp5"];

/// A fresh 6-register array under `profile` (chip and run seed 1, the fixed pattern
/// drawn up front), its general registers holding a deterministic picture-like pattern
/// in -100..100 (so no value drifts into subnormals or saturation).
pub fn bench_array(profile: &str) -> Array {
    let mut array = Array::new(6, EdgeMode::Zero);
    if profile != "ideal" {
        let p = Profile::load(profile).expect("built-in profile");
        let model = NoiseModel::new(&p, 1, 1);
        model.prepare(6);
        array.set_layer(Box::new(model));
    }
    for g in 0..6u8 {
        let plane = array.plane_mut(Reg::Gen(g)).expect("general register");
        for (i, v) in plane.iter_mut().enumerate() {
            let h = super::noise::rng::mix64(i as u64 ^ (u64::from(g) << 32));
            *v = (h % 200) as f32 - 100.0;
        }
    }
    array
}

/// Times `program` on `array` (run over and over), as one figure.
pub fn time_program(
    name: &str,
    profile: &str,
    program: &Program,
    array: &mut Array,
    roof: &Roofline,
    samples: usize,
) -> Figure {
    let cycles = program.cycles();
    let us = median_us(
        || {
            // Errors cannot occur: the programs are parsed against the same device.
            let _ = run(array, program, 1, DEFAULT_CLOCK_HZ);
        },
        samples,
        Duration::from_millis(30),
    );
    let plane_passes = plane_passes(program);
    let roofline_us = roof.pass_us() * plane_passes as f64;
    Figure {
        name: name.to_string(),
        profile: profile.to_string(),
        us,
        cycles,
        bus_per_second: cycles as f64 / (us * 1e-6),
        plane_passes,
        roofline_us,
        roofline_ratio: us / roofline_us,
    }
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

/// Parses one of the benchmark programs.
pub fn macro_program(text: &str) -> Program {
    parse_program(text, Device::default()).expect("benchmark programs are valid")
}

/// Every figure of `scamp bench`: each macro, then each frame, under each profile.
pub fn all_figures(roof: &Roofline, samples: usize) -> Vec<Figure> {
    let mut out = Vec::new();
    for (kind, list) in [("macro", MACROS), ("frame", FRAMES)] {
        for profile in PROFILES {
            for (name, text) in list {
                let p = macro_program(text);
                let mut array = bench_array(profile);
                let label = format!("{kind} {name}");
                out.push(time_program(&label, profile, &p, &mut array, roof, samples));
            }
        }
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
