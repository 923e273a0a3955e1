//! Criterion benchmarks of the array: one macro on the full 256x256 array and whole
//! frames of the generated programs, each under the `ideal` and `scamp5` profiles, next
//! to the streaming roofline (plane copy and add with the same threads). `scamp bench`
//! prints the same figures with their roofline ratios.

use criterion::{criterion_group, criterion_main, Criterion};
use rayon::prelude::*;
use scamp::sim::{run, throughput, DEFAULT_CLOCK_HZ, PES};

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

fn programs(c: &mut Criterion, group: &str, list: &[(&str, &str)]) {
    for profile in throughput::PROFILES {
        let mut g = c.benchmark_group(format!("{group}_{profile}"));
        for (name, text) in list {
            let p = throughput::macro_program(text);
            let mut array = throughput::bench_array(profile);
            g.bench_function(*name, |b| {
                b.iter(|| run(&mut array, &p, 1, DEFAULT_CLOCK_HZ).map(|r| r.cycles))
            });
        }
        g.finish();
    }
}

fn macros(c: &mut Criterion) {
    programs(c, "macro", throughput::MACROS);
}

fn frames(c: &mut Criterion) {
    programs(c, "frame", throughput::FRAMES);
}

criterion_group!(benches, roofline, macros, frames);
criterion_main!(benches);
