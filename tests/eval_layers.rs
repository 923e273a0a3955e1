//! Network layers that read several maps (docs/eval.md, "Layers with several inputs"):
//! a full convolution over the previous layer's maps runs as one stage, its kernels
//! compiled by the generator with one input register per map, and is simulated under
//! `ideal` to exactly what a plain Rust reference computes from the pixels; layers that
//! cannot be placed are refused in one line, with their position in the network file
//! where they have one.

mod common;

use common::dataset::write_splits;
use common::{json, refused, scamp, temp_dir};
use ndarray::{Array2, Array4};
use scamp::isa::Reg;
use scamp::Profile;
use scamp::{
    eval, eval::extract_features, eval::BuildOptions, eval::Built, eval::Sample, eval::Split,
};
use std::path::{Path, PathBuf};

const ROWS: usize = 7;
const COLS: usize = 7;

/// One layer's weights `[out, in, 3, 3]` and bias `[out]`.
type Layer = (Array4<f64>, Vec<f64>);

/// Weights `[out, in, 3, 3]` in multiples of 1/4 (exact at depth 2), from `seed`.
fn weights(out: usize, inputs: usize, seed: usize) -> Array4<f64> {
    Array4::from_shape_fn((out, inputs, 3, 3), |(o, z, r, c)| {
        ((o * 31 + z * 17 + r * 7 + c * 3 + seed * 11) % 9) as f64 / 4.0 - 1.0
    })
}

/// `n` images of pseudo-random pixels.
fn images(n: usize) -> Split {
    common::dataset::noise_split(n, (ROWS, COLS), 777)
}

/// A folder holding `images(n)` as both the training and the test split.
fn dataset(purpose: &str, n: usize) -> PathBuf {
    let data = temp_dir(purpose);
    let split = images(n);
    write_splits(&data, (ROWS, COLS), &split.pixels, &split.labels);
    data
}

/// A folder holding the layers' arrays (`w1`, `b1`, `w2`, `b2`) and `net` as net.yaml.
fn folder(purpose: &str, net: &str, layers: &[Layer]) -> PathBuf {
    let dir = temp_dir(purpose);
    for (i, (w, b)) in layers.iter().enumerate() {
        ndarray_npy::write_npy(dir.join(format!("w{}.npy", i + 1)), w).unwrap();
        let b = ndarray::Array1::from(b.clone());
        ndarray_npy::write_npy(dir.join(format!("b{}.npy", i + 1)), &b).unwrap();
    }
    let p = dir.join("net.yaml");
    std::fs::write(&p, net).unwrap();
    p
}

/// A valid 3x3 correlation of `maps` (each output two smaller per side) with
/// `w[o, z]`, plus the bias, through ReLU.
fn layer(maps: &[Array2<f64>], w: &Array4<f64>, bias: &[f64]) -> Vec<Array2<f64>> {
    let (h, wd) = maps[0].dim();
    (0..w.dim().0)
        .map(|o| {
            Array2::from_shape_fn((h - 2, wd - 2), |(r, c)| {
                let mut v = bias[o];
                for (z, m) in maps.iter().enumerate() {
                    for dr in 0..3 {
                        for dc in 0..3 {
                            v += w[[o, z, dr, dc]] * m[[r + dr, c + dc]];
                        }
                    }
                }
                v.max(0.0)
            })
        })
        .collect()
}

/// The binary maps of one image through two layers: the capture (pixel - 128, the
/// background pixel 0 around the image) padded by two, then bit = output > 0.
fn reference(img: &[u8], layers: &[Layer]) -> Vec<u8> {
    let first = reference_maps(img, &layers[0]);
    let second = layer(&first, &layers[1].0, &layers[1].1);
    second
        .iter()
        .flat_map(|m| m.iter().map(|&v| u8::from(v > 0.0)).collect::<Vec<_>>())
        .collect()
}

/// What the simulator reads out for `split` under `ideal`.
fn simulated(net: &Path, split: &Split) -> Vec<u8> {
    let net = eval::load_path(Some(net)).expect("network loads");
    let built = Built::new(&net, ROWS, COLS, &BuildOptions::default()).expect("builds");
    let ideal = Profile::builtin("ideal").expect("ideal");
    let sample = Sample {
        profile: &ideal,
        chip_seed: 0,
        seed: 0,
    };
    extract_features(&built, split, sample, true)
        .expect("runs")
        .bits
}

/// `scamp eval --json` of `net` on `data` under `ideal` on two chips, with `extra`
/// arguments.
fn ideal_eval(net: &Path, data: &Path, extra: &[&str]) -> serde_json::Value {
    let (net, data) = (net.to_str().unwrap(), data.to_str().unwrap());
    let mut args = vec!["eval", net, "--dataset", data, "--noise", "ideal"];
    args.extend(["--chip-seeds", "2", "--json"]);
    args.extend(extra);
    json(&scamp(&args))
}

/// Two layers: `first` maps from the image, then `second` maps each reading all of
/// them, both with a bias and ReLU, the second decided by sign.
fn two_layers(first: usize, second: usize) -> (String, Vec<Layer>) {
    let net = "name: multi\nstages:\n  \
        - {weights: w1.npy, bias: b1.npy, depth: 2, activation: relu, decision: none}\n  \
        - {weights: w2.npy, bias: b2.npy, depth: 2, activation: relu}\nreadout: {pool: 4}\n";
    let b1: Vec<f64> = (0..first).map(|o| [-20.0, 35.0, 5.0][o % 3]).collect();
    let b2: Vec<f64> = (0..second).map(|o| [-60.0, 90.0, 0.0][o % 3]).collect();
    (
        net.to_string(),
        vec![(weights(first, 1, 1), b1), (weights(second, first, 2), b2)],
    )
}

#[test]
fn a_full_convolution_over_three_maps_runs_as_one_stage_and_matches_the_reference() {
    let (text, layers) = two_layers(3, 2);
    let net = folder("evallayers-full", &text, &layers);
    let loaded = eval::load_path(Some(&net)).expect("loads");
    let spec = &loaded.stages[1].spec;
    assert_eq!(spec.inputs(), vec![Reg::B, Reg::C, Reg::D]);
    assert_eq!(spec.outputs(), vec![Reg::A, Reg::E]);
    assert_eq!(
        loaded.stages.len(),
        2,
        "one stage for the multi-input layer"
    );
    let split = images(30);
    let want: Vec<u8> = (0..split.len())
        .flat_map(|i| reference(split.image(i), &layers))
        .collect();
    let got = simulated(&net, &split);
    assert_eq!(got, want);
    let ones = got.iter().filter(|&&b| b == 1).count();
    assert!(ones > got.len() / 10 && ones < got.len() * 9 / 10, "{ones}");
    // The maps are the inputs' sum: dropping the third input's weights changes them.
    let mut partial = layers.clone();
    partial[1].0.slice_mut(ndarray::s![.., 2, .., ..]).fill(0.0);
    let without: Vec<u8> = (0..split.len())
        .flat_map(|i| reference(split.image(i), &partial))
        .collect();
    assert_ne!(got, without);
}

#[test]
fn under_ideal_a_multi_input_network_loses_exactly_nothing() {
    let (text, layers) = two_layers(3, 2);
    let net = folder("evallayers-ideal", &text, &layers);
    let data = dataset("evallayers-ideal-data", 40);
    let v = ideal_eval(&net, &data, &[]);
    assert_eq!(v["accuracy"]["lost"].as_f64(), Some(0.0), "{v}");
    assert_eq!(v["flipped"].as_f64(), Some(0.0), "{v}");
    assert_eq!(v["stages"].as_u64(), Some(2), "{v}");
    assert_eq!(v["maps"].as_u64(), Some(2), "{v}");
}

#[test]
fn layers_that_cannot_be_placed_are_refused_with_their_position() {
    let (_, mut layers) = two_layers(3, 2);
    layers.push((weights(2, 2, 3), vec![0.0; 2]));
    let data = dataset("evallayers-bad-data", 10);
    let head =
        "name: bad\nstages:\n  - {weights: w1.npy, bias: b1.npy, depth: 2, decision: none}\n";
    let cases: &[(&str, &str)] = &[
        (
            "  - {weights: w2.npy, input: B, inputs: [B, C, D]}\n",
            "net.yaml:4:41: give `input` or `inputs`, not both",
        ),
        (
            "  - {weights: w2.npy, inputs: [B, C]}\n",
            "net.yaml:4:31: the weights read 3 input channel(s), 2 input register(s) are given",
        ),
        (
            "  - {weights: w2.npy, inputs: [B, C, F], registers: [A, B, C, D, E]}\n",
            "register F is not among the layer's registers",
        ),
        (
            "  - {weights: w2.npy, registers: [B, C, D, E]}\n",
            "net.yaml:4:15: the layer reads 3 map(s) and makes 2: the 1 register(s) besides its \
             inputs cannot hold the outputs",
        ),
        (
            "  - {weights: w3.npy}\n",
            "net.yaml:4:15: the weights read 2 input channels, the previous stage makes 3: \
             name them with `inputs: [...]`",
        ),
    ];
    for (i, (stage, want)) in cases.iter().enumerate() {
        let net = folder(
            &format!("evallayers-bad{i}"),
            &format!("{head}{stage}"),
            &layers,
        );
        let o = scamp(&[
            "eval",
            net.to_str().unwrap(),
            "--dataset",
            data.to_str().unwrap(),
        ]);
        refused(&o, &[want]);
        assert_eq!(common::stderr(&o).trim().lines().count(), 1);
    }
    // A first layer reading several maps.
    let net = folder(
        "evallayers-badfirst",
        "name: bad\nstages:\n  - {weights: w2.npy}\n",
        &layers,
    );
    let o = scamp(&[
        "eval",
        net.to_str().unwrap(),
        "--dataset",
        data.to_str().unwrap(),
    ]);
    refused(
        &o,
        &["net.yaml:3:15: the first stage reads the captured image (one channel); its weights read 3"],
    );
}

#[test]
fn a_layer_too_large_for_the_registers_is_refused_in_one_line() {
    // Three dense 3x3 kernels over three maps: the generator splits them into a bank
    // (its constructive program holds two at a time beside the three inputs).
    let (text, layers) = two_layers(3, 3);
    let net = folder("evallayers-toolarge", &text, &layers);
    let data = dataset("evallayers-toolarge-data", 10);
    let o = scamp(&[
        "eval",
        net.to_str().unwrap(),
        "--dataset",
        data.to_str().unwrap(),
    ]);
    refused(
        &o,
        &[
            "w2.npy: stage 2: its 3 kernels over 3 input maps need 2 programs (a bank)",
            "the layer does not fit the register file",
        ],
    );
    assert_eq!(common::stderr(&o).trim().lines().count(), 1);
}

#[test]
fn export_notes_a_prediction_per_stage() {
    let (text, layers) = two_layers(3, 2);
    let net = folder("evallayers-export", &text, &layers);
    let data = dataset("evallayers-export-data", 10);
    let out = temp_dir("evallayers-export-out").join("net.cpp");
    let o = scamp(&[
        "export",
        net.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--dataset",
        data.to_str().unwrap(),
        "--samples",
        "1",
        "--force",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let cpp = std::fs::read_to_string(&out).expect("written");
    let notes: Vec<&str> = cpp
        .lines()
        .filter_map(|l| {
            l.split_once("predicted error under scamp5: ")
                .map(|(_, r)| r)
        })
        .collect();
    // One note per stage; what they say (stage 2's over all three of its maps) is
    // pinned by the library's export/network.rs tests.
    assert_eq!(notes.len(), 2, "{cpp}");
}

/// The maps of one image through a first layer of `first.0.dim().0` maps and a
/// depthwise one (`second.0` is `[maps * k, 1, 3, 3]`: output o reads map o / k alone),
/// as [`reference`] pads them, after ReLU.
fn depthwise_maps(img: &[u8], first: &Layer, second: &Layer) -> Vec<Array2<f64>> {
    let wide = reference_maps(img, first);
    let k = second.0.dim().0 / wide.len();
    (0..second.0.dim().0)
        .map(|o| {
            let w = second.0.slice(ndarray::s![o..=o, .., .., ..]).to_owned();
            layer(&wide[o / k..=o / k], &w, &second.1[o..=o]).remove(0)
        })
        .collect()
}

/// The binary maps of [`depthwise_maps`]: map o's bit is output > `thresholds[o]`.
fn depthwise_reference(img: &[u8], first: &Layer, second: &Layer, thresholds: &[f64]) -> Vec<u8> {
    depthwise_maps(img, first, second)
        .iter()
        .zip(thresholds)
        .flat_map(|(m, &t)| m.iter().map(|&v| u8::from(v > t)).collect::<Vec<_>>())
        .collect()
}

/// The first layer's maps of one image over the capture padded by two (one larger
/// than the image on each side, for the 3x3 layer after it).
fn reference_maps(img: &[u8], first: &Layer) -> Vec<Array2<f64>> {
    let capture = Array2::from_shape_fn((ROWS + 4, COLS + 4), |(r, c)| {
        let inside = (2..ROWS + 2).contains(&r) && (2..COLS + 2).contains(&c);
        let p = if inside {
            img[(r - 2) * COLS + c - 2]
        } else {
            0
        };
        f64::from(p) - 128.0
    });
    layer(&[capture], &first.0, &first.1)
}

/// Asserts that stage k of `stages` reads the one map in `reads[k]` and writes the one
/// in `writes[k]`.
fn assert_one_map_each(stages: &[eval::StageDef], reads: &[Reg], writes: &[Reg]) {
    let placed: Vec<(Vec<Reg>, Vec<Reg>)> = stages
        .iter()
        .map(|s| (s.spec.inputs(), s.spec.outputs()))
        .collect();
    let want: Vec<(Vec<Reg>, Vec<Reg>)> = reads
        .iter()
        .zip(writes)
        .map(|(&r, &w)| (vec![r], vec![w]))
        .collect();
    assert_eq!(placed, want);
}

/// A network of one's own: four maps from the image, then a depthwise layer
/// (`groups: 4`) with a bias and ReLU, decided by sign.
fn depthwise_net(second: &str) -> (String, Vec<Layer>) {
    let net = format!(
        "name: depthwise\nstages:\n  \
         - {{weights: w1.npy, bias: b1.npy, depth: 2, activation: relu, decision: none}}\n  \
         - {{weights: w2.npy, bias: b2.npy, groups: 4, depth: 2, activation: relu{second}}}\n\
         readout: {{pool: 4}}\n"
    );
    let b1 = vec![-20.0, 35.0, 5.0, 12.0];
    let b2 = vec![-60.0, 90.0, 7.0, -3.0];
    (net, vec![(weights(4, 1, 1), b1), (weights(4, 1, 2), b2)])
}

#[test]
fn a_depthwise_layer_runs_one_stage_per_channel_and_matches_the_reference() {
    let (text, layers) = depthwise_net("");
    let net = folder("evallayers-depthwise", &text, &layers);
    let loaded = eval::load_path(Some(&net)).expect("loads");
    // The image's four maps go to B..E; channel k's stage writes where no later
    // channel is waiting: A each time, as its maps are decided when its stage ends.
    let [a, b, c, d, e] = [Reg::A, Reg::B, Reg::C, Reg::D, Reg::E];
    assert_one_map_each(&loaded.stages[1..], &[b, c, d, e], &[a, a, a, a]);
    assert!(
        !loaded.stages[1].spec.registers.contains(&c),
        "C is still to be read"
    );
    let split = images(30);
    let want: Vec<u8> = (0..split.len())
        .flat_map(|i| depthwise_reference(split.image(i), &layers[0], &layers[1], &[0.0; 4]))
        .collect();
    let got = simulated(&net, &split);
    assert_eq!(got, want);
    let ones = got.iter().filter(|&&b| b == 1).count();
    assert!(ones > got.len() / 10 && ones < got.len() * 9 / 10, "{ones}");
    // Each output reads its own channel only: the reference of a full convolution
    // over the four maps (the same weights for every channel) differs.
    let full = Array4::from_shape_fn((4, 4, 3, 3), |(o, _, r, c)| layers[1].0[[o, 0, r, c]]);
    let mixed = vec![layers[0].clone(), (full, layers[1].1.clone())];
    let other: Vec<u8> = (0..split.len())
        .flat_map(|i| reference(split.image(i), &mixed))
        .collect();
    assert_ne!(got, other);
    // Under `ideal` it loses exactly nothing; one threshold per map goes to its stage.
    let data = dataset("evallayers-depthwise-data", 40);
    let (text, layers) = depthwise_net(", threshold: [1, -2, 3, 4]");
    let net = folder("evallayers-depthwise-t", &text, &layers);
    let v = ideal_eval(&net, &data, &["--depths", "2"]);
    assert_eq!(v["accuracy"]["lost"].as_f64(), Some(0.0), "{v}");
    assert_eq!(
        (v["stages"].as_u64(), v["maps"].as_u64()),
        (Some(5), Some(4))
    );
    let t = [1.0, -2.0, 3.0, 4.0];
    let want: Vec<u8> = (0..split.len())
        .flat_map(|i| depthwise_reference(split.image(i), &layers[0], &layers[1], &t))
        .collect();
    assert_eq!(simulated(&net, &split), want);
}

#[test]
fn a_depthwise_layer_feeding_a_pointwise_one_keeps_every_map_for_it() {
    // Depthwise (outputs for the next stage), then a 1x1 layer over its four maps.
    let net = "name: separable\nstages:\n  \
        - {weights: w1.npy, bias: b1.npy, depth: 2, activation: relu, decision: none}\n  \
        - {weights: w2.npy, bias: b2.npy, groups: 4, depth: 2, activation: relu, decision: none}\n  \
        - {weights: w3.npy, bias: b3.npy, depth: 2, activation: relu}\n\
        readout: {pool: 4}\n";
    let (_, mut layers) = depthwise_net("");
    let pointwise = Array4::from_shape_fn((2, 4, 1, 1), |(o, z, _, _)| {
        [[0.5, -1.0, 0.75, 0.25], [-0.5, 1.0, 1.0, -0.75]][o][z]
    });
    layers.push((pointwise.clone(), vec![-10.0, 4.0]));
    let net = folder("evallayers-separable", net, &layers);
    let loaded = eval::load_path(Some(&net)).expect("loads");
    // Channel k's result is spared by the groups after it: A, B, C, D in turn.
    let [a, b, c, d, e] = [Reg::A, Reg::B, Reg::C, Reg::D, Reg::E];
    assert_one_map_each(&loaded.stages[1..5], &[b, c, d, e], &[a, b, c, d]);
    assert_eq!(loaded.stages[5].spec.inputs(), vec![a, b, c, d]);
    let split = images(30);
    let want: Vec<u8> = (0..split.len())
        .flat_map(|i| {
            let deep = depthwise_maps(split.image(i), &layers[0], &layers[1]);
            (0..2)
                .flat_map(|o| {
                    let sum = (0..4).fold(
                        Array2::from_elem(deep[0].dim(), layers[2].1[o]),
                        |acc, z| acc + &deep[z] * pointwise[[o, z, 0, 0]],
                    );
                    sum.iter()
                        .map(|&v| u8::from(v.max(0.0) > 0.0))
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(simulated(&net, &split), want);
}

#[test]
fn a_decided_depthwise_layer_with_two_outputs_per_channel_matches_the_reference() {
    // Three maps in B, C, D, then two outputs per map, decided by sign: a group's
    // outputs are binary maps once its stage ends, so the next group may overwrite
    // them, and six analogue outputs fit beside three maps.
    let net = "name: multiplier\nstages:\n  \
        - {weights: w1.npy, bias: b1.npy, depth: 2, activation: relu, decision: none}\n  \
        - {weights: w2.npy, bias: b2.npy, groups: 3, depth: 2, activation: relu}\n\
        readout: {pool: 4}\n";
    let layers = vec![
        (weights(3, 1, 1), vec![-20.0, 35.0, 5.0]),
        (weights(6, 1, 3), vec![-60.0, 90.0, 7.0, -3.0, 0.0, 40.0]),
    ];
    let net = folder("evallayers-multiplier", net, &layers);
    let loaded = eval::load_path(Some(&net)).expect("loads");
    assert_eq!(loaded.stages.len(), 4);
    let split = images(30);
    let want: Vec<u8> = (0..split.len())
        .flat_map(|i| depthwise_reference(split.image(i), &layers[0], &layers[1], &[0.0; 6]))
        .collect();
    let got = simulated(&net, &split);
    assert_eq!(got, want);
    let ones = got.iter().filter(|&&b| b == 1).count();
    assert!(ones > got.len() / 10 && ones < got.len() * 9 / 10, "{ones}");
}

#[test]
fn grouped_layers_that_cannot_be_placed_are_refused_with_their_position() {
    let data = dataset("evallayers-badgroups-data", 10);
    let cases: &[(&str, &str)] = &[
        (
            ", outputs: [A, B]",
            "net.yaml:4:85: 2 output register(s) are given for the layer's 4 outputs",
        ),
        (
            ", outputs: [C, A, F, E]",
            "net.yaml:4:85: group 1 of the layer would write C",
        ),
        ("", "w2.npy: cannot read: the bias has 3 values, the weights 4 outputs"),
        (
            ", registers: [C, D, E]",
            "net.yaml:4:15: group 1 of the layer makes 1 map(s), and only 0 register(s) can take them",
        ),
    ];
    for (i, (second, want)) in cases.iter().enumerate() {
        let (text, mut layers) = depthwise_net(second);
        if second.is_empty() {
            layers[1].1.pop();
        }
        let net = folder(&format!("evallayers-badgroups{i}"), &text, &layers);
        let o = scamp(&[
            "eval",
            net.to_str().unwrap(),
            "--dataset",
            data.to_str().unwrap(),
        ]);
        refused(&o, &[want]);
        assert_eq!(common::stderr(&o).trim().lines().count(), 1);
    }
}
