//! Measuring simulator throughput: time per macro on the full array, whole-frame
//! programs, and a streaming roofline (plain copy and add of planes with the same
//! threads) measured in the same process, so ratios are meaningful on any machine.

use super::array::{Array, PES};
use super::edge::EdgeMode;
use super::run::{run, DEFAULT_CLOCK_HZ};
use crate::isa::{parse_program, Device, Program};
use rayon::prelude::*;
use serde::Serialize;
use std::time::{Duration, Instant};

/// One timed figure.
#[derive(Clone, Debug, Serialize)]
pub struct Figure {
    /// What was timed.
    pub name: String,
    /// Median wall time of one execution, microseconds.
    pub us: f64,
    /// Bus instructions per execution.
    pub cycles: u64,
    /// Bus instructions per second.
    pub bus_per_second: f64,
    /// `us` divided by the roofline time for the same number of plane passes.
    pub roofline_ratio: f64,
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
            out.par_chunks_mut(256 * 16)
                .zip(a.par_chunks(256 * 16))
                .zip(b.par_chunks(256 * 16))
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
            out.par_chunks_mut(256 * 16)
                .zip(a.par_chunks(256 * 16))
                .for_each(|(o, x)| o.copy_from_slice(x));
            std::hint::black_box(&mut out);
        },
        samples,
        Duration::from_millis(20),
    )
}

/// Times `program` on a fresh array prepared by `prepare`, as one figure.
pub fn time_program(
    name: &str,
    program: &Program,
    prepare: &dyn Fn(&mut Array),
    roofline_pass_us: f64,
    samples: usize,
) -> Figure {
    let mut array = Array::new(6, EdgeMode::Zero);
    prepare(&mut array);
    let cycles = program.cycles();
    let us = median_us(
        || {
            // Errors cannot occur: the programs are parsed against the same device.
            let _ = run(&mut array, program, 1, DEFAULT_CLOCK_HZ);
        },
        samples,
        Duration::from_millis(50),
    );
    Figure {
        name: name.to_string(),
        us,
        cycles,
        bus_per_second: cycles as f64 / (us * 1e-6),
        roofline_ratio: us / (roofline_pass_us * cycles as f64),
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

/// Parses one of the benchmark statements.
pub fn macro_program(text: &str) -> Program {
    parse_program(text, Device::default()).expect("benchmark statements are valid")
}
