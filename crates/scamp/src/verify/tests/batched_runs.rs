//! `check`'s runs batched over threads (moved from the command's `tests/noise.rs`:
//! `measure` is not the library's surface).

use crate::isa::{parse_program, Device, Reg, Wiring};
use crate::sim::capture::GreyImage;
use crate::sim::noise::Profile;
use crate::verify::check::{measure, ProfileTestbed, Target as CheckTarget};

const A: Reg = Reg::Gen(0);

/// A batch of frames (`check`'s runs of an image, side by side) gives the same figures
/// whatever the thread count, and each run its own noise.
#[test]
fn batched_runs_are_bit_identical_whatever_the_thread_count() {
    let program = parse_program(
        "divq(B, A); divq(C, B); movx(D, C, east); movx(E, C, west); add(A, B, D, E)",
        Device::default(),
    )
    .unwrap();
    let kernel = ndarray::array![[0.25, 0.5, 0.25]];
    let target = CheckTarget {
        out: A,
        exact: kernel.clone(),
        approx: kernel,
        centre: (0, 1),
        others: Vec::new(),
    };
    let image = GreyImage {
        pixels: (0..256 * 256)
            .map(|i| ((i * 7 + i / 256 * 3) % 256) as u8)
            .collect(),
        resized_from: None,
    };
    let testbed = ProfileTestbed {
        profile: Profile::builtin("scamp5").unwrap(),
        chip_seed: 2,
        seed: 5,
    };
    let figures = |threads: usize, runs: u32| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let m = measure(
                    &program,
                    Wiring::new(A, 6),
                    std::slice::from_ref(&target),
                    std::slice::from_ref(&image),
                    &testbed,
                    runs,
                );
                serde_json::to_string(&m.unwrap()).unwrap()
            })
    };
    let one = figures(1, 4);
    assert_eq!(one, figures(2, 4), "1 vs 2 threads differ");
    assert_eq!(one, figures(3, 4), "1 vs 3 threads differ");
    // The runs differ (a spread over runs), and run 0 is the same alone or in a batch.
    let m: serde_json::Value = serde_json::from_str(&one).unwrap();
    let spread = m["kernels"][0]["analogue_runs"]["rmse"]["std"]
        .as_f64()
        .unwrap();
    assert!(spread > 0.0, "runs share their noise: {one}");
    let alone: serde_json::Value = serde_json::from_str(&figures(2, 1)).unwrap();
    assert_eq!(alone["kernels"][0]["analogue"], m["kernels"][0]["analogue"]);
}
