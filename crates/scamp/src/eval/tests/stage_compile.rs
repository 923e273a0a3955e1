//! A stage the generator compiles (no `program:`, or a depth the network file does not
//! give) is compiled on its work alone: the same `eval` gives the same programs on any
//! load.

use crate::cain::{CompileOptions, StopReason};
use crate::eval::network::load_path;
use crate::eval::stage::{compile_stage, stage_options};
use ndarray::Array4;

/// A one-stage network of two 3x3 kernels in sixteenths, from arrays (as a trained
/// network's stages are), written to a directory of its own.
fn tiny_network() -> crate::eval::network::Network {
    let dir = std::env::temp_dir().join(format!("scamp-stage-compile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let w: Vec<f32> = [
        [3, -5, 2, 7, 1, -6, -2, 9, 4],
        [-4, 0, 6, 1, -8, 3, 0, 5, -1],
    ]
    .iter()
    .flatten()
    .map(|&v| v as f32 / 16.0)
    .collect();
    let w = Array4::from_shape_vec((2, 1, 3, 3), w).expect("shape");
    ndarray_npy::write_npy(dir.join("w.npy"), &w).expect("weights written");
    let net = "name: tiny\n\
        stages:\n  - {weights: w.npy, depth: 2, decision: sign}\n\
        readout: {pool: 4}\n\
        head: {train: {epochs: 1, learning_rate: 0.5, l2: 0.00001, batch: 64, seed: 1}}\n";
    std::fs::write(dir.join("net.yaml"), net).expect("network written");
    let loaded = load_path(Some(&dir.join("net.yaml"))).expect("the network loads");
    let _ = std::fs::remove_dir_all(&dir);
    loaded
}

#[test]
fn a_stage_compiled_twice_gives_the_same_program_on_its_work_alone() {
    let net = tiny_network();
    let mut spec = net.stages[0].spec.clone();
    // At depth 1, as eval's sweep asks for a depth the network file does not give.
    spec.approximation.max_depth = 1;
    spec.approximation.accept = true;
    // A stage from arrays has a work budget and no clock: the default clock, which
    // capped the work on a loaded machine, is replaced by one that never strikes.
    assert!(spec.search.work.is_some() && spec.search.time_limit.is_none());
    // A smaller work than the default's 3000, to keep the test fast.
    spec.search.work = Some(400);
    let given = CompileOptions::default().with_workers(2);
    let opts = stage_options(&spec, &given);
    assert_eq!(opts.time_limit, Some(crate::cain::spec::MAX_TIME_LIMIT));
    assert_eq!((opts.work, opts.workers), (None, Some(2)));
    // A clock the options give, or a stage without a work budget, keeps its clock.
    let clocked = given.clone().with_time_limit(3.0);
    assert_eq!(stage_options(&spec, &clocked).time_limit, Some(3.0));
    let mut unbudgeted = spec.clone();
    unbudgeted.search.work = None;
    assert_eq!(stage_options(&unbudgeted, &given).time_limit, None);
    // Twice the same program, stopped by its work, never by the clock.
    let first = compile_stage(&spec, &given).expect("compiles");
    let second = compile_stage(&spec, &given).expect("compiles");
    assert_eq!(first.program.to_string(), second.program.to_string());
    assert_ne!(first.search.stop, StopReason::Time);
    assert_eq!(first.search.work, Some(400));
    assert!(first.program.instructions() > 0);
}
