//! A layer's float weights become kernels approximated as typed weights are (moved from
//! the command's `tests/cain_layer.rs`: `approximate` is not the library's surface).

use crate::cain::{approximate, layer_spec, ApproxParams, LayerError, LayerTarget};
use crate::isa::Reg;
use ndarray::{Array1, Array4};

/// A Sobel-like 3x3 kernel and a blur, as float weights `[2, 1, 3, 3]`.
const TWO: [f64; 18] = [
    -0.25, 0.0, 0.25, -0.5, 0.0, 0.5, -0.25, 0.0, 0.25, //
    0.0625, 0.125, 0.0625, 0.125, 0.25, 0.125, 0.0625, 0.125, 0.0625,
];

fn target(outputs: &[Reg]) -> LayerTarget {
    LayerTarget {
        name: "layer".into(),
        inputs: vec![Reg::A],
        outputs: outputs.to_vec(),
        registers: (0..6).map(Reg::Gen).collect(),
        scale: 1.0,
        approximation: ApproxParams::default(),
    }
}

fn msg(e: LayerError) -> String {
    e.to_string()
}

#[test]
fn a_layer_becomes_kernels_approximated_as_typed_weights() {
    let w = Array4::from_shape_vec((2, 1, 3, 3), TWO.to_vec()).expect("shape");
    let bias = Array1::from(vec![0.5, -1.0]);
    let mut t = target(&[Reg::B, Reg::C]);
    t.scale = 2.0;
    let l = layer_spec(w.view(), Some(bias.view()), 1, &t).expect("a spec");
    assert_eq!(l.bias, vec![1.0, -2.0]);
    assert_eq!(l.spec.input, Reg::A);
    assert_eq!(l.spec.kernels.len(), 2);
    assert_eq!(l.spec.kernels[1].out, Reg::C);
    assert_eq!(l.spec.kernels[0].weights[1], vec![-0.5, 0.0, 0.5]);
    // 2 * [1 2 1; 2 4 2; 1 2 1] / 16 is exact at depth 3.
    let k = &l.spec.kernels[1];
    let a = approximate(&k.weights, k.scale, 8, 0.0).expect("fits");
    assert_eq!((a.depth, a.error), (3, 0.0));
    assert_eq!(a.weights, vec![vec![1, 2, 1], vec![2, 4, 2], vec![1, 2, 1]]);
}

#[test]
fn inexact_weights_need_an_error_bound_or_an_accept() {
    let w = Array4::from_shape_vec((1, 1, 1, 3), vec![0.3, 0.1, -0.2]).expect("shape");
    let mut t = target(&[Reg::B]);
    t.approximation.max_depth = 3;
    let e = msg(layer_spec(w.view(), None, 1, &t).unwrap_err());
    assert!(
        e.starts_with("kernel 0 (output B): the approximation at max_depth 3"),
        "{e}"
    );
    // At depth 3: 2/8, 1/8, -2/8, error 0.05 + 0.025 + 0.05.
    t.approximation.max_error = 0.13;
    let l = layer_spec(w.view(), None, 1, &t).expect("within the bound");
    let a = approximate(&l.spec.kernels[0].weights, 1.0, 3, 0.13).expect("fits");
    assert_eq!(a.weights, vec![vec![2, 1, -2]]);
    ::approx::assert_abs_diff_eq!(a.error, 0.125, epsilon = 1e-9);
    t.approximation = ApproxParams {
        max_depth: 3,
        max_error: 0.0,
        accept: true,
    };
    assert!(layer_spec(w.view(), None, 1, &t).is_ok());
}
