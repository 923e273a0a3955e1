//! Weights from arrays: `.npy` files in PyTorch's layout read and checked, turned into
//! specs whose kernels are approximated as typed weights are, and `weights: FILE.npy` in
//! a spec file compiling to the same program as the same weights typed.

use ndarray::{array, Array1, Array4};
use scamp::isa::Reg;
use scamp::{ApproxParams, LayerError, LayerTarget};
use std::path::PathBuf;

mod common;
use common::npy::npy_bytes;
use common::{json, refused, scamp, temp_dir, temp_file};

/// `values` as a `.npy` of `descr` (float32 or float64, either byte order).
fn floats(descr: &str, shape: &str, values: &[f64]) -> Vec<u8> {
    let data: Vec<u8> = values
        .iter()
        .flat_map(|&v| match descr {
            "<f4" => (v as f32).to_le_bytes().to_vec(),
            ">f4" => (v as f32).to_be_bytes().to_vec(),
            "<f8" => v.to_le_bytes().to_vec(),
            ">f8" => v.to_be_bytes().to_vec(),
            _ => panic!("{descr}"),
        })
        .collect();
    npy_bytes(descr, shape, &data)
}

fn file(name: &str, bytes: &[u8]) -> PathBuf {
    temp_file("cain-layer", name, bytes)
}

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
fn weights_are_read_in_every_float_type_and_byte_order() {
    for descr in ["<f4", ">f4", "<f8", ">f8"] {
        let p = file(
            &format!("w{}.npy", &descr[1..]),
            &floats(descr, "(2, 1, 3, 3)", &TWO),
        );
        let w = scamp::read_weights(&p).unwrap_or_else(|e| panic!("{descr}: {e}"));
        assert_eq!(w.dim(), (2, 1, 3, 3), "{descr}");
        assert_eq!(w[[0, 0, 1, 2]], 0.5, "{descr}");
        assert_eq!(w[[1, 0, 1, 1]], 0.25, "{descr}");
        let b = file(
            &format!("b{}.npy", &descr[1..]),
            &floats(descr, "(2,)", &[1.5, -2.0]),
        );
        assert_eq!(scamp::read_bias(&b).expect("bias"), array![1.5, -2.0]);
    }
}

#[test]
fn bad_files_get_one_line_errors_naming_the_file() {
    let cases: [(&str, Vec<u8>, &str); 9] = [
        (
            "rank.npy",
            floats("<f4", "(2, 3, 3)", &TWO),
            "4-dimensional",
        ),
        (
            "zero.npy",
            floats("<f4", "(0, 1, 3, 3)", &[]),
            "out of bounds",
        ),
        (
            "huge.npy",
            floats("<f4", "(1000000000, 1, 3, 3)", &[]),
            "out of bounds",
        ),
        (
            "side.npy",
            floats("<f4", "(1, 1, 33, 3)", &[]),
            "out of bounds",
        ),
        (
            "int.npy",
            npy_bytes("<i8", "(2, 1, 3, 3)", &[0; 144]),
            "not float32",
        ),
        (
            "text.npy",
            b"weights: 1 2 3\n".to_vec(),
            "not a numpy .npy file",
        ),
        (
            "short.npy",
            floats("<f4", "(2, 1, 3, 3)", &TWO[..17]),
            "truncated",
        ),
        (
            "nan.npy",
            floats(
                "<f8",
                "(2, 1, 3, 3)",
                &[&TWO[..4], &[f64::NAN], &TWO[5..]].concat(),
            ),
            "weight [0, 0, 1, 1] is NaN",
        ),
        (
            "inf.npy",
            floats(
                "<f4",
                "(2, 1, 3, 3)",
                &[&TWO[..17], &[f64::INFINITY]].concat(),
            ),
            "weight [1, 0, 2, 2] is inf",
        ),
    ];
    for (name, bytes, part) in cases {
        let p = file(name, &bytes);
        let e = msg(scamp::read_weights(&p).expect_err(name));
        assert!(e.starts_with(&p.display().to_string()), "{name}: {e}");
        assert!(e.contains(part), "{name}: `{part}` missing from {e}");
        assert!(!e.contains('\n'), "{name}: {e}");
    }
    let missing = temp_dir("cain-layer").join("absent.npy");
    assert!(msg(scamp::read_weights(&missing).unwrap_err()).contains("absent.npy"));
    let e =
        msg(scamp::read_bias(&file("b2.npy", &floats("<f4", "(2, 1)", &[1.0, 2.0]))).unwrap_err());
    assert!(e.contains("1-dimensional array [out]"), "{e}");
}

#[test]
fn layers_that_do_not_fit_their_registers_are_refused() {
    let w = Array4::from_shape_vec((2, 1, 3, 3), TWO.to_vec()).expect("shape");
    let t = target(&[Reg::B, Reg::C]);
    let refuse = |w: &Array4<f64>, bias: Option<Array1<f64>>, groups: usize, t: &LayerTarget| {
        msg(scamp::layer_spec(w.view(), bias.as_ref().map(|b| b.view()), groups, t).unwrap_err())
    };
    let e = refuse(&w, Some(Array1::zeros(3)), 1, &t);
    assert_eq!(e, "the bias has 3 values, the weights 2 outputs");
    assert!(refuse(&w, None, 0, &t).contains("groups 0"));
    assert!(refuse(&w, None, 3, &t).contains("divide the 2 outputs"));
    let e = refuse(&w, None, 1, &target(&[Reg::B]));
    assert_eq!(
        e,
        "the weights have 2 outputs, 1 output registers are given"
    );
    let e = refuse(&w, None, 2, &t);
    assert!(e.contains("read 2 input channels"), "{e}");
    let mut two_in = t.clone();
    two_in.inputs = vec![Reg::A, Reg::D];
    // Depthwise over two inputs: each kernel reads its own input's plane only.
    let l = scamp::layer_spec(w.view(), None, 2, &two_in).expect("depthwise over two inputs");
    assert_eq!(l.spec.other_inputs, vec![Reg::D]);
    let zero = |p: &Vec<Vec<f64>>| p.iter().flatten().all(|&x| x == 0.0);
    assert!(zero(&l.spec.kernels[0].other_planes[0]));
    assert!(zero(&l.spec.kernels[1].weights));
    assert!(!zero(&l.spec.kernels[1].other_planes[0]));
    let mut few = t.clone();
    few.registers = vec![Reg::A, Reg::B];
    assert_eq!(
        refuse(&w, None, 1, &few),
        "register C is not among the layer's registers"
    );
    let mut nan = w.clone();
    nan[[1, 0, 2, 1]] = f64::NAN;
    assert_eq!(
        refuse(&nan, None, 1, &t),
        "weight [1, 0, 2, 1] is NaN, not a finite number"
    );
    let big = Array4::from_elem((1, 1, 1, 1), 1e30);
    assert!(refuse(&big, None, 1, &target(&[Reg::B])).contains("too large"));
}

/// The two kernels of [`TWO`] as a spec, with the weights typed or read from a file.
fn spec_text(first: &str, second: &str) -> String {
    format!(
        "name: two\nregisters: [A, B, C, D, E, F]\nkernels:\n  - out: B\n    weights: {first}\n  \
         - out: C\n    weights: {second}\nsearch: {{ work: 400, workers: 1 }}\n"
    )
}

#[test]
fn a_spec_reads_weights_from_npy_files_beside_it() {
    let dir = temp_dir("cain-layer-spec");
    std::fs::write(dir.join("sobel.npy"), floats("<f4", "(3, 3)", &TWO[..9])).expect("write");
    std::fs::write(dir.join("blur.npy"), floats(">f8", "(3, 3)", &TWO[9..])).expect("write");
    let from_files = dir.join("files.yaml");
    std::fs::write(&from_files, spec_text("sobel.npy", "blur.npy")).expect("write");
    let typed = dir.join("typed.yaml");
    let rows = |w: &[f64]| format!("[{:?}, {:?}, {:?}]", &w[..3], &w[3..6], &w[6..]);
    std::fs::write(&typed, spec_text(&rows(&TWO[..9]), &rows(&TWO[9..]))).expect("write");
    let a = json(&scamp(&["compile", from_files.to_str().unwrap(), "--json"]));
    let b = json(&scamp(&["compile", typed.to_str().unwrap(), "--json"]));
    assert_eq!(a["program"], b["program"]);
    assert_eq!(a["kernels"][1]["depth"], 4);
    let text = spec_text("sobel.npy", "blur.npy");
    let e = scamp::parse_spec(&text).unwrap_err();
    assert_eq!((e.pos.line, e.pos.col), (5, 14));
    let msg = e.cause.to_string();
    assert!(msg.contains("need the spec's folder"), "{msg}");
}

#[test]
fn bad_weight_files_in_a_spec_are_positioned_and_named() {
    let dir = temp_dir("cain-layer-bad");
    std::fs::write(dir.join("ok.npy"), floats("<f4", "(3, 3)", &TWO[..9])).expect("write");
    std::fs::write(
        dir.join("nan.npy"),
        floats("<f4", "(1, 2)", &[1.0, f64::NAN]),
    )
    .expect("write");
    std::fs::write(
        dir.join("cube.npy"),
        floats("<f4", "(1, 1, 2)", &[1.0, 2.0]),
    )
    .expect("write");
    std::fs::write(dir.join("text.npy"), "1 2 3\n").expect("write");
    for (name, part) in [
        ("nan.npy", "weight [0, 1] is NaN"),
        ("cube.npy", "2-dimensional array [kh, kw]"),
        ("text.npy", "not a numpy .npy file"),
        ("absent.npy", "cannot read"),
    ] {
        let spec = dir.join(format!("{name}.yaml"));
        std::fs::write(&spec, spec_text("ok.npy", name)).expect("write");
        let o = scamp(&["compile", spec.to_str().unwrap()]);
        let at = format!("{}:7:14: ", spec.display());
        refused(&o, &[&at, name, part]);
    }
}

/// A spec whose kernels are the layer of `weights` (a `.npy` file beside it).
fn layer_text(weights: &str, extra: &str) -> String {
    format!(
        "name: conv\ninput: A\nlayer:\n  weights: {weights}\n  outputs: [B, C]\n{extra}\
         search: {{ work: 400, workers: 1 }}\n"
    )
}

#[test]
fn a_layer_in_a_spec_compiles_as_its_kernels_typed() {
    let dir = temp_dir("cain-layer-block");
    std::fs::write(dir.join("conv.npy"), floats("<f4", "(2, 1, 3, 3)", &TWO)).expect("write");
    let layer = dir.join("layer.yaml");
    std::fs::write(&layer, layer_text("conv.npy", "")).expect("write");
    let rows = |w: &[f64]| format!("[{:?}, {:?}, {:?}]", &w[..3], &w[3..6], &w[6..]);
    let typed = dir.join("typed.yaml");
    std::fs::write(&typed, spec_text(&rows(&TWO[..9]), &rows(&TWO[9..]))).expect("write");
    let a = json(&scamp(&["compile", layer.to_str().unwrap(), "--json"]));
    let b = json(&scamp(&["compile", typed.to_str().unwrap(), "--json"]));
    assert_eq!(a["program"], b["program"]);
    assert_eq!(a["kernels"][0]["out"], "B");
    // A scale halves every weight: one more halving, the same integers.
    let half = dir.join("half.yaml");
    std::fs::write(
        &half,
        layer_text("conv.npy", "").replace("  outputs", "  scale: 1/2\n  outputs"),
    )
    .expect("write");
    let h = json(&scamp(&["compile", half.to_str().unwrap(), "--json"]));
    assert_eq!(h["kernels"][1]["depth"], 5);
    assert_eq!(
        h["kernels"][1]["approximated"],
        a["kernels"][1]["approximated"]
    );
}

#[test]
fn bad_layers_in_a_spec_are_positioned() {
    let dir = temp_dir("cain-layer-block-bad");
    std::fs::write(dir.join("conv.npy"), floats("<f4", "(2, 1, 3, 3)", &TWO)).expect("write");
    std::fs::write(
        dir.join("three.npy"),
        floats("<f4", "(3, 1, 3, 3)", &[0.5; 27]),
    )
    .expect("write");
    std::fs::write(
        dir.join("deep.npy"),
        floats("<f4", "(2, 2, 1, 1)", &[0.5; 4]),
    )
    .expect("write");
    std::fs::write(
        dir.join("odd.npy"),
        floats("<f4", "(2, 1, 1, 1)", &[0.3, 0.1]),
    )
    .expect("write");
    let cases = [
        (
            "three",
            layer_text("three.npy", ""),
            "5:12",
            "3 outputs, 2 output registers",
        ),
        (
            "deep",
            layer_text("deep.npy", ""),
            "4:12",
            "read 2 input channels (2 per group x 1 groups), 1 input registers",
        ),
        (
            "groups",
            layer_text("deep.npy", "").replace("  outputs", "  groups: 2\n  outputs"),
            "4:12",
            "read 4 input channels",
        ),
        (
            "zero",
            layer_text("conv.npy", "").replace("  outputs", "  groups: 0\n  outputs"),
            "5:11",
            "groups must be between 1 and 64",
        ),
        (
            "text",
            layer_text("text.yaml", ""),
            "4:12",
            "not a numpy .npy file",
        ),
        (
            "outside",
            layer_text("conv.npy", "registers: [A, B]\n"),
            "5:16",
            "not in `registers`",
        ),
        (
            "inexact",
            layer_text("odd.npy", "approximation: { max_depth: 2 }\n"),
            "4:12",
            "kernel 0 (output B): the approximation at max_depth 2",
        ),
        (
            "both",
            layer_text("conv.npy", "kernels: [{ out: A, weights: [[1]] }]\n"),
            "4:3",
            "`kernels` or a `layer`, not both",
        ),
        (
            "neither",
            "name: none\n".to_string(),
            "1:1",
            "missing field `kernels` (or a `layer`",
        ),
    ];
    for (name, text, at, part) in cases {
        let spec = dir.join(format!("{name}.yaml"));
        std::fs::write(&spec, text).expect("write");
        let o = scamp(&["compile", spec.to_str().unwrap()]);
        refused(&o, &[&format!("{}:{at}: ", spec.display()), part]);
    }
}
