//! From float weights to a layer: the scale keeps every output within the register
//! range, the depth minimises the predicted error, and the chosen spec reads back as
//! YAML to the same spec.

use ndarray::Array4;
use scamp::isa::Reg;
use scamp::Profile;
use scamp::{choose_layer, spec_yaml, ApproxParams, ChooseError, ChooseOptions, LayerTarget};

/// A Sobel kernel and a 1/16 blur, `[2, 1, 3, 3]`.
const TWO: [f64; 18] = [
    -0.25, 0.0, 0.25, -0.5, 0.0, 0.5, -0.25, 0.0, 0.25, //
    0.0625, 0.125, 0.0625, 0.125, 0.25, 0.125, 0.0625, 0.125, 0.0625,
];

fn target() -> LayerTarget {
    LayerTarget {
        name: "chosen".into(),
        inputs: vec![Reg::A],
        outputs: vec![Reg::B, Reg::C],
        registers: (0..6).map(Reg::Gen).collect(),
        scale: 1.0,
        approximation: ApproxParams::default(),
    }
}

fn options(profile: &str) -> ChooseOptions {
    ChooseOptions::default().with_profile(Profile::builtin(profile).expect("a built-in profile"))
}

#[test]
fn without_noise_the_scale_fills_the_range_and_the_depth_is_exact() {
    let w = Array4::from_shape_vec((2, 1, 3, 3), TWO.to_vec()).expect("shape");
    // Exact arithmetic that saturates at +-128.
    let flat = Profile::from_yaml("name: flat\nsaturation: {low: -128, high: 128}\n", "flat")
        .expect("a profile");
    let opts = ChooseOptions::default().with_profile(flat);
    let c = choose_layer(w.view(), None, 1, &target(), &opts).expect("chosen");
    // Sobel's sum of |w| is 2: 128 / (128 * 2) = 1/2.
    assert_eq!((c.scale, c.exponent), (0.5, -1));
    assert_eq!(c.kernels[0].peak, 128.0);
    assert_eq!(c.kernels[1].peak, 64.0);
    // The blur at 1/2 is in 1/32s: depth 5 is exact, and nothing deeper is better.
    assert_eq!(c.depth, 5);
    assert_eq!(c.tried.len(), 9);
    assert_eq!(c.tried[5].mse, 0.0);
    assert!(c.tried[..5].iter().all(|t| t.mse > 0.0), "{:?}", c.tried);
    assert_eq!(
        (c.kernels[1].error, c.kernels[1].approximation_rmse),
        (0.0, 0.0)
    );
    assert_eq!(c.kernels[1].chip_rmse, 0.0);
}

#[test]
fn with_noise_the_depth_is_the_lowest_predicted_error() {
    let w = Array4::from_shape_vec(
        (2, 1, 3, 3),
        vec![
            0.31, -0.72, 0.05, 0.4, 1.1, -0.2, 0.0, 0.3, -0.15, 0.2, 0.2, 0.2, 0.2, 0.21, 0.2, 0.2,
            0.2, 0.2,
        ],
    )
    .expect("shape");
    let c = choose_layer(w.view(), None, 1, &target(), &options("scamp5")).expect("chosen");
    let least = c.tried.iter().map(|t| t.mse).fold(f64::INFINITY, f64::min);
    assert_eq!(c.tried[c.depth as usize].mse, least);
    assert!(c
        .kernels
        .iter()
        .all(|k| k.peak <= c.limit && k.chip_rmse > 0.0));
    // Doubling the scale would overflow: the first kernel's sum of |w| is 3.23.
    assert!(c.kernels[0].peak * 2.0 > c.limit, "{:?}", c.kernels);
    assert_eq!(c.layer.spec.approximation.max_depth, c.depth);
}

#[test]
fn the_chosen_spec_reads_back_from_its_yaml() {
    let w = Array4::from_shape_vec((2, 1, 3, 3), TWO.iter().map(|v| v * 0.37).collect())
        .expect("shape");
    let c = choose_layer(w.view(), None, 1, &target(), &options("scamp5")).expect("chosen");
    let text = spec_yaml(&c.layer.spec);
    let back = scamp::parse_spec(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back, c.layer.spec);
}

#[test]
fn zero_weights_and_bad_arrays_are_refused() {
    let zero = Array4::zeros((2, 1, 3, 3));
    let e = choose_layer(zero.view(), None, 1, &target(), &ChooseOptions::default());
    assert!(matches!(e, Err(ChooseError::AllZero)));
    let mut nan = Array4::from_shape_vec((2, 1, 3, 3), TWO.to_vec()).expect("shape");
    nan[[0, 0, 0, 0]] = f64::NAN;
    let e = choose_layer(nan.view(), None, 1, &target(), &ChooseOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "weight [0, 0, 0, 0] is NaN, not a finite number"
    );
}
