//! Criterion benchmarks of the array: one macro on the full 256x256 array, and whole
//! frames of the bundled programs. `scamp bench` prints the same figures next to a
//! roofline measured in the same run.

use criterion::{criterion_group, criterion_main, Criterion};
use scamp::isa::{parse_program, Device};
use scamp::sim::{run, throughput, Array, EdgeMode, DEFAULT_CLOCK_HZ};

fn macros(c: &mut Criterion) {
    let mut g = c.benchmark_group("macro_ideal");
    for (name, text) in throughput::MACROS {
        let p = throughput::macro_program(text);
        let mut array = Array::new(6, EdgeMode::Zero);
        g.bench_function(*name, |b| {
            b.iter(|| run(&mut array, &p, 1, DEFAULT_CLOCK_HZ).map(|r| r.cycles))
        });
    }
    g.finish();
}

fn frames(c: &mut Criterion) {
    let mut g = c.benchmark_group("frame_ideal");
    for name in ["gauss3x3_hand", "box3x3", "sobel"] {
        let path = format!("{}/programs/{name}.scamp", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).expect("bundled program");
        let p = parse_program(&text, Device::default()).expect("bundled program parses");
        let mut array = Array::new(6, EdgeMode::Zero);
        g.bench_function(name, |b| {
            b.iter(|| run(&mut array, &p, 1, DEFAULT_CLOCK_HZ).map(|r| r.cycles))
        });
    }
    g.finish();
}

criterion_group!(benches, macros, frames);
criterion_main!(benches);
