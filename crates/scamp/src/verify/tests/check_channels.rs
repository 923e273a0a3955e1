//! The library's check of kernel sets over several inputs: frame `j` puts bundled image
//! `(j + z) mod n` on input `z`, the reference is the sum over planes, and the
//! prediction takes noise and signal from every plane. What `scamp check` prints of
//! them is pinned by tests/check_channels.rs.

use crate::bank::{Bank, CheckOptions, CheckReport};
use crate::cain::{CompileOptions, Stats};
use crate::isa::{parse_program, Device, Reg, Wiring};
use crate::sim::noise::Profile;
use crate::sim::GreyImage;
use crate::verify::{
    analyse, analyse_planes, frame_indices, load_images, InputRange, InputStats, ProfileTestbed,
};

/// The two-kernel, three-input set of the cain tests, on a work budget.
fn three() -> String {
    let set = include_str!("../../cain/tests/three_channel.yaml");
    format!("{set}search: {{ work: 1000, workers: 1 }}\n")
}

fn images() -> Vec<GreyImage> {
    load_images(&super::repo().join("images"))
        .expect("bundled images")
        .into_iter()
        .map(|(_, g)| g)
        .collect()
}

fn bank() -> Bank {
    let spec = crate::cain::parse_spec(&three()).expect("valid spec");
    let opts = CompileOptions::default().with_time_limit(600.0);
    Bank::compile(spec, &opts, &Stats::default()).expect("compiles")
}

fn testbed(profile: &str) -> ProfileTestbed {
    ProfileTestbed {
        profile: Profile::builtin(profile).expect("built in"),
        chip_seed: 1,
        seed: 1,
    }
}

/// The library's check of the three-input set on the bundled images under `profile`
/// (chip seed 1, run seeds from 1), over `runs` runs.
fn checked(profile: &str, runs: u32) -> CheckReport {
    bank()
        .check(
            &images(),
            &testbed(profile),
            &CheckOptions::new(profile).with_runs(runs),
        )
        .expect("checks")
        .report
}

#[test]
fn frames_rotate_the_images_over_the_inputs() {
    assert_eq!(frame_indices(0, 8, 3), vec![0, 1, 2]);
    assert_eq!(frame_indices(7, 8, 3), vec![7, 0, 1]);
    // One image: every input sees it; one input: image j.
    assert_eq!(frame_indices(4, 1, 3), vec![0, 0, 0]);
    assert_eq!(frame_indices(5, 8, 1), vec![5]);
}

#[test]
fn a_correct_program_checks_exact_under_ideal() {
    let r = &checked("ideal", 1);
    assert!(r.verified, "{:?}", r.mismatch);
    assert_eq!((r.images, r.kernels.len()), (8, 2));
    for k in &r.kernels {
        // Exact weights (depth 6 and 5), exact arithmetic: every figure is 0.
        assert_eq!(k.approx.rmse, 0.0, "{}", k.out);
        assert_eq!(k.analogue.rmse, 0.0, "{}", k.out);
        assert_eq!(k.analogue.max, 0.0, "{}", k.out);
        assert_eq!(k.total.figures.rmse, 0.0, "{}", k.out);
        let p = k.predicted.expect("predicted");
        assert_eq!((p.rmse, p.bias), (0.0, 0.0));
    }
}

#[test]
fn the_prediction_over_every_plane_matches_the_measurement_under_scamp5() {
    let r = checked("scamp5", 4);
    assert!(r.verified);
    for k in &r.kernels {
        let measured = k.analogue_runs.rmse.mean;
        let p = k.predicted.expect("predicted");
        // Chip 1, run seeds 1..=4, 8 images: within 2 % of the measured RMSE and
        // within 0.1 of its bias.
        assert!(
            (p.rmse - measured).abs() < 0.02 * measured,
            "{}: predicted {} measured {measured}",
            k.out,
            p.rmse
        );
        assert!((p.bias - k.analogue.bias).abs() < 0.1, "{}: {p:?}", k.out);
        assert!(measured > 1.0, "{}: {measured}", k.out);
    }
}

#[test]
fn a_channel_other_than_the_first_changes_the_prediction() {
    let scamp5 = Profile::builtin("scamp5").expect("built in");
    let stats = InputStats::of_bundled_images(InputRange::default());
    let p = |text: &str| parse_program(text, Device::default()).expect("parses");
    // D := B, with B the second input: its gain error scales with B's signal.
    let from_b = analyse_planes(&p("mov(D, B)"), &[Reg::A, Reg::B], 6, &scamp5)
        .expect("predicts")
        .predict(Reg::D, &stats);
    // The same copy of the only input: every plane has the same moments.
    let from_a = analyse(&p("mov(D, A)"), Wiring::new(Reg::A, 6), &scamp5)
        .expect("predicts")
        .predict(Reg::D, &stats);
    assert_eq!(from_b, from_a);
    // Seen from the first input alone, B is zero: offsets only, a smaller error.
    let first_only = analyse(&p("mov(D, B)"), Wiring::new(Reg::A, 6), &scamp5)
        .expect("predicts")
        .predict(Reg::D, &stats);
    assert!(
        from_b.rmse > first_only.rmse + 0.1,
        "{from_b:?} {first_only:?}"
    );
    // A sum of two planes: independent planes (the compile's model) add their
    // variances; planes that are the same image (cross moments equal to the plane's
    // own) add their amplitudes, a larger signal and so a larger gain error.
    let sum = |stats: &InputStats| {
        analyse_planes(&p("add(D, A, B)"), &[Reg::A, Reg::B], 6, &scamp5)
            .expect("predicts")
            .predict(Reg::D, stats)
    };
    let mut same = stats.clone();
    same.cross = stats.lags.iter().map(|(&d, &m)| ((0, 1, d), m)).collect();
    assert!(
        sum(&stats).rmse > from_a.rmse,
        "{:?} {from_a:?}",
        sum(&stats)
    );
    assert!(sum(&same).rmse > sum(&stats).rmse + 0.1, "{:?}", sum(&same));
}

#[test]
fn the_error_objective_scores_every_plane() {
    let spec = crate::cain::parse_spec(&three()).expect("valid spec");
    let opts = CompileOptions::default().with_time_limit(600.0);
    let c = crate::cain::compile(&spec, &opts, &Stats::default()).expect("compiles");
    let profile = Profile::builtin(crate::sim::noise::DEFAULT_PROFILE).expect("built in");
    let stats = crate::cain::input_stats(spec.input_range);
    let outs: Vec<Reg> = c.kernels.iter().map(|k| k.out).collect();
    let inputs = crate::cain::InputPlanes {
        regs: &spec.inputs(),
        general: spec.general_count(),
    };
    let every = crate::cain::predict_outputs_planes(&c.program, inputs, &outs, &profile, &stats)
        .expect("predicts");
    assert_eq!(c.predicted, every);
    let first =
        crate::cain::predict_outputs(&c.program, Wiring::new(Reg::A, 6), &outs, &profile, &stats)
            .expect("predicts");
    // The first input alone predicts another error: the other planes count.
    assert_ne!(every, first);
}

/// Three inputs into D: a centre tap on A and on B, and `third` on C (moved with the
/// test below from tests/check_channels.rs, which exports and checks the same spec).
fn third_heavy(third: &str) -> String {
    format!(
        "name: third\ninputs: [A, B, C]\nregisters: [A, B, C, D, E, F]\nkernels:\n  - out: D\n    \
         scale: 1/16\n    weights:\n      - [[0, 0, 0], [0, 1, 0], [0, 0, 0]]\n      - [[0, 0, 0], \
         [0, 1, 0], [0, 0, 0]]\n      - {third}\nsearch: {{ work: 1000, workers: 1 }}\n"
    )
}

/// Under `ideal` the prediction over every plane is exact, whatever plane carries the
/// weight: the program `scamp compile --noise scamp5` makes of the spec (its text read
/// back) is predicted with no error at all.
#[test]
fn under_ideal_the_prediction_over_every_plane_has_no_error() {
    for third in [
        "[[1, 2, 1], [2, 4, 2], [1, 2, 1]]",
        "[[0, 0, 0], [0, 0, 0], [0, 0, 0]]",
    ] {
        let s = crate::cain::parse_spec(&third_heavy(third)).expect("valid spec");
        let opts =
            CompileOptions::default().with_profile(Profile::builtin("scamp5").expect("built in"));
        let bank = Bank::compile(s.clone(), &opts, &Stats::default()).expect("compiles");
        let parsed = parse_program(bank.text(), Device::default()).expect("parses");
        let stats = InputStats::of_bundled_images(s.input_range);
        let ideal = Profile::builtin("ideal").expect("built in");
        let p = crate::cain::predict_outputs(&parsed, s.wiring(), &[Reg::D], &ideal, &stats)
            .expect("predicts");
        assert_eq!((p[0].rmse, p[0].bias), (0.0, 0.0));
    }
}
