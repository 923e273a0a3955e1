//! Criterion benchmarks of the array: one macro on the full 256x256 array, whole frames
//! of the generated programs and long runs (a macro or frame repeated in one call, the
//! steady state of a long program), each under the `ideal` and `scamp5` profiles, next
//! to the streaming roofline (plane copy and add with the same threads). `scamp bench`
//! prints the same figures with their roofline and noisy/ideal ratios.

use criterion::{criterion_group, criterion_main, Criterion};
use rayon::prelude::*;
use scamp::{run, DEFAULT_CLOCK_HZ, PES};
use scamp_cli::calibrate::throughput;

fn roofline(c: &mut Criterion) {
    let mut g = c.benchmark_group("roofline");
    let a = vec![1.0f32; PES];
    let b = vec![2.0f32; PES];
    let mut out = vec![0.0f32; PES];
    const BAND: usize = 256 * 16;
    g.bench_function("copy", |bch| {
        bch.iter(|| {
            out.par_chunks_mut(BAND)
                .zip(a.par_chunks(BAND))
                .for_each(|(o, x)| o.copy_from_slice(x))
        })
    });
    g.bench_function("add", |bch| {
        bch.iter(|| {
            out.par_chunks_mut(BAND)
                .zip(a.par_chunks(BAND))
                .zip(b.par_chunks(BAND))
                .for_each(|((o, x), y)| {
                    o.iter_mut()
                        .zip(x)
                        .zip(y)
                        .for_each(|((o, x), y)| *o = x + y)
                })
        })
    });
    g.finish();
}

/// Each program of `list` (name, text, executions per call) under each profile.
fn programs(c: &mut Criterion, group: &str, list: &[(&str, &str, u32)]) {
    for profile in throughput::PROFILES {
        let mut g = c.benchmark_group(format!("{group}_{profile}"));
        for (name, text, repeat) in list {
            let p = throughput::macro_program(text);
            let mut array = throughput::bench_array(profile);
            g.bench_function(*name, |b| {
                b.iter(|| run(&mut array, &p, *repeat, DEFAULT_CLOCK_HZ).map(|r| r.cycles))
            });
        }
        g.finish();
    }
}

/// A list of programs run once per call.
fn once<'a>(list: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str, u32)> {
    list.iter().map(|&(n, t)| (n, t, 1)).collect()
}

fn macros(c: &mut Criterion) {
    programs(c, "macro", &once(throughput::MACROS));
}

fn frames(c: &mut Criterion) {
    programs(c, "frame", &once(throughput::FRAMES));
}

fn long_runs(c: &mut Criterion) {
    programs(c, "long", throughput::LONG);
}

criterion_group!(benches, roofline, macros, frames, long_runs);
criterion_main!(benches);
