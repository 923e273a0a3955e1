//! Load-resistant cost of each `scamp bench` figure: CPU time of one thread (what other
//! work on a shared machine disturbs least), and a fixed-count loop for instruction
//! counting under callgrind. Timing, not correctness, so ignored by default:
//!
//! `cargo test --release --test perf -- --ignored --nocapture cpu_per_figure`
//!
//! `SCAMP_PERF=macro_add/ideal SCAMP_PERF_ITERS=20 valgrind --tool=callgrind
//!  target/release/deps/perf-* --ignored --exact fixed_loop`

use scamp::sim::throughput::{self, bench_array};
use scamp::sim::{run, DEFAULT_CLOCK_HZ, PES};
use std::time::{Duration, Instant};

/// CPU seconds this thread has used (Linux; 0 elsewhere).
fn thread_cpu_s() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/thread-self/stat") else {
        return 0.0;
    };
    let Some(rest) = stat.rsplit(')').next() else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11).and_then(|u| u.parse().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|s| s.parse().ok()).unwrap_or(0.0);
    ticks / 100.0
}

/// Every figure of `scamp bench` as (`kind_name/profile`, program text).
fn figures() -> Vec<(String, &'static str, &'static str)> {
    let mut out = Vec::new();
    for (kind, list) in [("macro", throughput::MACROS), ("frame", throughput::FRAMES)] {
        for profile in throughput::PROFILES {
            for (name, text) in list {
                out.push((format!("{kind}_{name}/{profile}"), *profile, *text));
            }
        }
    }
    out
}

/// Median over 5 batches of the single-thread CPU microseconds per call of `f`, each
/// batch at least 0.3 s of CPU (the clock ticks at 10 ms: accurate to a few percent).
fn cpu_us(mut f: impl FnMut()) -> f64 {
    let mut batches: Vec<f64> = (0..5)
        .map(|_| {
            let (t0, c0) = (Instant::now(), thread_cpu_s());
            let mut calls = 0u32;
            while thread_cpu_s() - c0 < 0.3 && t0.elapsed() < Duration::from_secs(5) {
                f();
                calls += 1;
            }
            (thread_cpu_s() - c0) * 1e6 / f64::from(calls)
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[2]
}

fn one_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(f)
}

#[test]
#[ignore]
fn cpu_per_figure() {
    one_thread(|| {
        println!("{:<28} {:>12}", "figure (1 thread)", "cpu us");
        let x = vec![1.0f32; PES];
        let y = vec![2.0f32; PES];
        let mut out = vec![0.0f32; PES];
        let copy = cpu_us(|| {
            out.copy_from_slice(&x);
            std::hint::black_box(&mut out);
        });
        println!("{:<28} {copy:>12.2}", "roofline copy");
        let add = cpu_us(|| {
            for ((o, a), b) in out.iter_mut().zip(&x).zip(&y) {
                *o = a + b;
            }
            std::hint::black_box(&mut out);
        });
        println!("{:<28} {add:>12.2}", "roofline add");
        for (label, profile, text) in figures() {
            let p = throughput::macro_program(text);
            let mut a = bench_array(profile);
            let us = cpu_us(|| {
                run(&mut a, &p, 1, DEFAULT_CLOCK_HZ).unwrap();
            });
            println!("{label:<28} {us:>12.2}");
        }
    });
}

#[test]
#[ignore]
fn fixed_loop() {
    let want = std::env::var("SCAMP_PERF").unwrap_or_else(|_| "macro_add/ideal".into());
    let iters: u32 = std::env::var("SCAMP_PERF_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let (_, profile, text) = figures()
        .into_iter()
        .find(|(l, _, _)| *l == want)
        .expect("a figure name such as macro_add/ideal");
    one_thread(|| {
        let p = throughput::macro_program(text);
        let mut a = bench_array(profile);
        for _ in 0..iters {
            run(&mut a, &p, 1, DEFAULT_CLOCK_HZ).unwrap();
        }
    });
}

#[test]
#[ignore]
fn noise_row_cost() {
    use scamp::isa::Reg;
    use scamp::sim::layer::{WriteCtx, WriteLayer};
    use scamp::sim::noise::{NoiseModel, Profile};
    use scamp::sim::N;
    let m = NoiseModel::new(&Profile::load("scamp5").unwrap(), 1, 1);
    m.prepare(6);
    let mut plane = vec![3.0f32; PES];
    let all = [true; N];
    let mut hit = [false; N];
    let mut seq = 0;
    let us = cpu_us(|| {
        seq += 1;
        let ctx = WriteCtx {
            seq,
            reg: Reg::Gen(0),
            plane: 0,
            receivers: 1,
            sources: 2,
            reads_in: false,
            reads_pix: false,
        };
        for (r, row) in plane.chunks_exact_mut(N).enumerate() {
            m.perturb(&ctx, r, row, &all, &mut hit);
        }
    });
    println!("perturb one plane: {us:.2} cpu us");
}
