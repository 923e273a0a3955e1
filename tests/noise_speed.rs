//! Cost of one bus instruction on the full array, exact and under the `scamp5` noise
//! profile. Timing, not correctness: run with
//! `cargo test --release --test noise_speed -- --ignored --nocapture`.

use scamp::isa::{parse_program, Device};
use scamp::sim::noise::{NoiseModel, Profile};
use scamp::sim::{run, Array, EdgeMode, DEFAULT_CLOCK_HZ};
use std::time::{Duration, Instant};

/// CPU seconds this thread has used (utime + stime from /proc; Linux only, 0 elsewhere):
/// timings on a shared machine then count only our own work.
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

/// Single-thread CPU microseconds per call of `f`, over about one second.
fn cpu_us(mut f: impl FnMut()) -> f64 {
    let (t0, c0) = (Instant::now(), thread_cpu_s());
    let mut calls = 0u32;
    while t0.elapsed() < Duration::from_millis(1500) {
        f();
        calls += 1;
    }
    (thread_cpu_s() - c0) * 1e6 / f64::from(calls)
}

/// Fastest of many short timings of `f`, microseconds per call: on a shared machine the
/// minimum is the figure least disturbed by other work.
fn min_us(mut f: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..40 {
        let t = Instant::now();
        let mut calls = 0u32;
        while t.elapsed() < Duration::from_millis(10) {
            f();
            calls += 1;
        }
        best = best.min(t.elapsed().as_secs_f64() * 1e6 / f64::from(calls));
    }
    best
}

fn time_program(text: &str, noisy: bool, threads: usize) -> f64 {
    let prog = parse_program(text, Device::default()).unwrap();
    let mut a = Array::new(6, EdgeMode::Zero);
    if noisy {
        let m = NoiseModel::new(&Profile::builtin("scamp5").unwrap(), 1, 1);
        m.prepare(6);
        a.set_layer(Box::new(m));
    }
    a.plane_mut(scamp::isa::Reg::Gen(1)).unwrap().fill(10.0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        min_us(|| {
            run(&mut a, &prog, 1, DEFAULT_CLOCK_HZ).unwrap();
        })
    }) / prog.cycles() as f64
}

#[test]
#[ignore]
fn cost_of_a_noisy_bus_instruction() {
    for (name, text) in [
        (
            "mov(A, B) x8",
            "mov(A,B);mov(C,A);mov(D,C);mov(B,D);mov(A,B);mov(C,A);mov(D,C);mov(B,D);",
        ),
        ("divq(A, B) x4", "divq(A,B);divq(C,A);divq(D,C);divq(B,D);"),
        (
            "movx(A, B, east) x4",
            "movx(A,B,east);movx(C,A,west);movx(D,C,north);movx(B,D,south);",
        ),
    ] {
        for threads in [1, 2] {
            let ideal = time_program(text, false, threads);
            let noisy = time_program(text, true, threads);
            println!(
                "{name:<22} {threads} thread(s), per bus instruction: ideal {ideal:6.1} us, \
                 scamp5 {noisy:6.1} us; per macro: ideal {:6.1} us, scamp5 {:6.1} us",
                2.0 * ideal,
                2.0 * noisy
            );
        }
    }
}

#[test]
#[ignore]
fn cost_of_the_layer_alone() {
    use scamp::sim::layer::{WriteCtx, WriteLayer};
    let m = NoiseModel::new(&Profile::builtin("scamp5").unwrap(), 1, 1);
    m.prepare(6);
    let mut vals = [10f32; 256];
    let mask = [true; 256];
    let mut clipped = [false; 256];
    let mut seq = 0;
    for (name, receivers) in [("bus", 1), ("bus2", 2)] {
        let us = cpu_us(|| {
            seq += 1;
            let ctx = WriteCtx {
                seq,
                reg: scamp::isa::Reg::Gen(0),
                plane: 0,
                receivers,
                sources: 1,
                reads_in: false,
                reads_pix: false,
            };
            for r in 0..256 {
                m.perturb(&ctx, r, &mut vals, &mask, &mut clipped);
            }
        });
        println!("{name}: layer alone, one thread, full plane: {us:.1} us");
    }
    let mut out = [0f32; 256];
    let us = cpu_us(|| {
        for r in 0..256 {
            scamp::sim::noise::rng::fill_normals(r as u64 * 7 + seq, &mut out);
            std::hint::black_box(&out);
        }
        seq += 1;
    });
    println!("normals alone (portable), one thread, full plane: {us:.1} us");
}
