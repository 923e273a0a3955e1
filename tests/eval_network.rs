//! The network file's layers beyond v1 (docs/eval.md): on-sensor ReLU and leaky ReLU,
//! per-map thresholds, binned and capped readouts, a binarised input and an MLP head.
//! Each is simulated under `ideal` and compared with a plain Rust reference computed
//! from the images alone; every bad input is refused with its position.

mod common;

use common::dataset::write_splits;
use common::network::write_refs;
use common::{json, refused, scamp, temp_dir};
use scamp::Profile;
use scamp::{
    eval, eval::extract_features, eval::BuildOptions, eval::Built, eval::Extracted, eval::Sample,
    eval::Split,
};
use std::path::{Path, PathBuf};

const ROWS: usize = 6;
const COLS: usize = 6;

/// A folder with the spec, the program and `net` as net.yaml.
fn folder(purpose: &str, net: &str) -> PathBuf {
    let dir = temp_dir(purpose);
    write_refs(&dir);
    let p = dir.join("net.yaml");
    std::fs::write(&p, net).unwrap();
    p
}

/// A network on the refs stage (`common::network`) with `stage` keys added to its stage
/// and `rest` after it.
fn net_text(stage: &str, rest: &str) -> String {
    format!("name: t\n{rest}stages:\n  - spec: refs.yaml\n    program: refs.scamp\n{stage}")
}

/// `n` images of pseudo-random pixels (a fixed linear congruential sequence).
fn images(n: usize) -> Split {
    common::dataset::noise_split(n, (ROWS, COLS), 12345)
}

/// What the simulator reads out for `split` under `ideal`.
fn simulated(net: &Path, split: &Split) -> Extracted {
    let net = eval::load_path(Some(net)).expect("network loads");
    let built = Built::new(&net, ROWS, COLS, &BuildOptions::default()).expect("builds");
    let ideal = Profile::builtin("ideal").expect("ideal");
    let sample = Sample {
        profile: &ideal,
        chip_seed: 0,
        seed: 0,
    };
    extract_features(&built, split, sample, true).expect("runs")
}

/// How the reference treats each stage.
struct Reference {
    /// Pixels above the level become the value, the others 0.
    binarise: Option<(u8, f64)>,
    /// The activation.
    activation: fn(f64) -> f64,
    /// Per map, bit = activated value > threshold.
    thresholds: [f64; 2],
}

impl Reference {
    /// The two binary maps of one image, computed from the pixels (the background
    /// around the image is pixel 0).
    fn maps(&self, img: &[u8]) -> Vec<u8> {
        let value = |p: u8| match self.binarise {
            Some((level, v)) => {
                if p > level {
                    v
                } else {
                    0.0
                }
            }
            None => f64::from(p) - 128.0,
        };
        let at = |r: isize, c: isize| {
            let inside = (0..ROWS as isize).contains(&r) && (0..COLS as isize).contains(&c);
            value(if inside {
                img[r as usize * COLS + c as usize]
            } else {
                0
            })
        };
        let mut bits = vec![0u8; 2 * ROWS * COLS];
        for r in 0..ROWS as isize {
            for c in 0..COLS as isize {
                let b = at(r, c - 1) + at(r, c + 1) - at(r, c);
                let n = at(r - 1, c);
                for (m, v) in [b, n].into_iter().enumerate() {
                    let i = m * ROWS * COLS + r as usize * COLS + c as usize;
                    bits[i] = u8::from((self.activation)(v) > self.thresholds[m]);
                }
            }
        }
        bits
    }

    fn all_maps(&self, split: &Split) -> Vec<u8> {
        (0..split.len())
            .flat_map(|i| self.maps(split.image(i)))
            .collect()
    }
}

fn relu(x: f64) -> f64 {
    x.max(0.0)
}

fn leaky_quarter(x: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        x / 4.0
    }
}

fn identity(x: f64) -> f64 {
    x
}

#[test]
fn relu_and_per_map_thresholds_match_the_reference() {
    let net = folder(
        "evalnet-relu",
        &net_text("    activation: relu\n    threshold: [10, 40]\n", ""),
    );
    let split = images(50);
    let got = simulated(&net, &split);
    let want = Reference {
        binarise: None,
        activation: relu,
        thresholds: [10.0, 40.0],
    };
    assert_eq!(got.bits, want.all_maps(&split));
    // Not a trivial map: both values occur in both maps.
    assert!(got.bits.contains(&0) && got.bits.contains(&1));
}

#[test]
fn leaky_relu_matches_the_reference() {
    let net = folder(
        "evalnet-leaky",
        &net_text(
            "    activation: {leaky_relu: 1/4}\n    threshold: [-5, -20]\n",
            "",
        ),
    );
    let split = images(50);
    let got = simulated(&net, &split);
    let want = Reference {
        binarise: None,
        activation: leaky_quarter,
        thresholds: [-5.0, -20.0],
    };
    assert_eq!(got.bits, want.all_maps(&split));
    // The slope matters: a ReLU would set none of the bits that -20 < x/4 <= 0 sets.
    let relu_bits = Reference {
        activation: relu,
        ..want
    }
    .all_maps(&split);
    assert_ne!(got.bits, relu_bits);
}

#[test]
fn a_binarised_input_matches_the_reference() {
    let net = folder(
        "evalnet-binarise",
        &net_text("", "input:\n  binarise: {level: 100, value: 50}\n"),
    );
    let split = images(50);
    let got = simulated(&net, &split);
    let want = Reference {
        binarise: Some((100, 50.0)),
        activation: identity,
        thresholds: [0.0, 0.0],
    };
    assert_eq!(got.bits, want.all_maps(&split));
}

/// The features of `bits` (maps of ROWS x COLS) through `bins` with at most `cap`
/// events per map, scanned row by row.
fn binned(bits: &[u8], bins: &[[usize; 4]], cap: usize) -> Vec<f32> {
    let mut out = Vec::new();
    for map in bits.chunks(ROWS * COLS) {
        let mut read = vec![0u8; map.len()];
        let mut events = 0;
        for (i, &b) in map.iter().enumerate() {
            if b == 1 && events < cap {
                read[i] = 1;
                events += 1;
            }
        }
        for &[r0, c0, h, w] in bins {
            let mut n = 0;
            for r in r0..r0 + h {
                for c in c0..c0 + w {
                    n += u32::from(read[r * COLS + c]);
                }
            }
            out.push(n as f32 / (h * w) as f32);
        }
    }
    out
}

#[test]
fn overlapping_bins_with_a_cap_match_the_reference() {
    let bins = [[0, 0, 4, 4], [2, 2, 4, 4], [0, 3, 6, 3]];
    let net = folder(
        "evalnet-bins",
        &net_text("", "").replace(
            "name: t\n",
            "name: t\nreadout:\n  bins: [[0, 0, 4, 4], [2, 2, 4, 4], [0, 3, 6, 3]]\n  cap: 5\n",
        ),
    );
    let split = images(30);
    let got = simulated(&net, &split);
    let maps = Reference {
        binarise: None,
        activation: identity,
        thresholds: [0.0, 0.0],
    }
    .all_maps(&split);
    assert_eq!(got.bits, maps);
    assert_eq!(got.per_image, 2 * bins.len());
    let want: Vec<f32> = maps
        .chunks(2 * ROWS * COLS)
        .flat_map(|m| binned(m, &bins, 5))
        .collect();
    assert_eq!(got.features, want);
    // The cap bites: without it some bin counts more.
    let uncapped: Vec<f32> = maps
        .chunks(2 * ROWS * COLS)
        .flat_map(|m| binned(m, &bins, usize::MAX))
        .collect();
    assert_ne!(got.features, uncapped);
}

/// Writes IDX files of `split` as both the training and the test split.
fn dataset(purpose: &str, split: &Split) -> PathBuf {
    let dir = temp_dir(purpose);
    write_splits(&dir, (ROWS, COLS), &split.pixels, &split.labels);
    dir
}

/// `scamp eval --json` of `net` on `data` under `ideal` on one chip.
fn ideal_json(net: &Path, data: &Path) -> serde_json::Value {
    let (net, data) = (net.to_str().unwrap(), data.to_str().unwrap());
    json(&scamp(&[
        "eval",
        net,
        "--json",
        "--dataset",
        data,
        "--noise",
        "ideal",
        "--chip-seeds",
        "1",
    ]))
}

/// A plain MLP forward pass: ReLU between the layers, each `[out][in + 1]`.
fn mlp_class(layers: &[Vec<Vec<f32>>], x: &[f32]) -> u8 {
    let mut v = x.to_vec();
    for (i, l) in layers.iter().enumerate() {
        v = l
            .iter()
            .map(|row| {
                let s = row[..v.len()]
                    .iter()
                    .zip(&v)
                    .map(|(a, b)| a * b)
                    .sum::<f32>()
                    + row[v.len()];
                if i + 1 < layers.len() {
                    s.max(0.0)
                } else {
                    s
                }
            })
            .collect();
    }
    let mut best = 0;
    for k in 1..v.len() {
        if v[k] > v[best] {
            best = k;
        }
    }
    best as u8
}

#[test]
fn an_mlp_head_from_files_classifies_as_the_reference() {
    let split = images(60);
    let data = dataset("evalnet-mlpdata", &split);
    let net = folder(
        "evalnet-mlp",
        &net_text(
            "",
            "readout:\n  pool: 3\nhead:\n  weights: [h1.npy, h2.npy]\n",
        ),
    );
    // 2 maps of 2x2 blocks: 8 features -> 5 hidden -> 10 classes, fixed weights.
    let weight = |i: usize| ((i * 37 % 17) as f32 - 8.0) / 4.0;
    let h1: Vec<Vec<f32>> = (0..5)
        .map(|k| (0..9).map(|j| weight(k * 9 + j)).collect())
        .collect();
    let h2: Vec<Vec<f32>> = (0..10)
        .map(|k| (0..6).map(|j| weight(100 + k * 6 + j)).collect())
        .collect();
    for (name, w) in [("h1.npy", &h1), ("h2.npy", &h2)] {
        let a = ndarray::Array2::from_shape_fn((w.len(), w[0].len()), |(r, c)| w[r][c]);
        ndarray_npy::write_npy(net.parent().unwrap().join(name), &a).unwrap();
    }
    let maps = Reference {
        binarise: None,
        activation: identity,
        thresholds: [0.0, 0.0],
    }
    .all_maps(&split);
    let correct = maps
        .chunks(2 * ROWS * COLS)
        .zip(&split.labels)
        .filter(|(m, &label)| {
            let bins = [[0, 0, 3, 3], [0, 3, 3, 3], [3, 0, 3, 3], [3, 3, 3, 3]];
            mlp_class(&[h1.clone(), h2.clone()], &binned(m, &bins, usize::MAX)) == label
        })
        .count();
    let r = ideal_json(&net, &data);
    assert_eq!(r["features"], 8);
    // The chip sees one scene per frame: its images per second are its frames per second.
    assert_eq!(r["chip_images_per_second"], r["frames_per_second"]);
    assert_eq!(r["flipped_per_map"], serde_json::json!([0.0, 0.0]));
    assert_eq!(r["accuracy"]["ideal"].as_f64(), Some(correct as f64 / 60.0));
    assert_eq!(r["accuracy"]["lost"].as_f64(), Some(0.0));
}

#[test]
fn a_trained_mlp_head_is_the_same_on_any_thread_count() {
    let split = images(200);
    let data = dataset("evalnet-traindata", &split);
    let net = folder(
        "evalnet-train",
        &net_text(
            "    activation: relu\n",
            "readout:\n  pool: 2\nhead:\n  hidden: [12]\n  train: {epochs: 3, learning_rate: 0.05}\n",
        ),
    );
    let run = |threads: &str| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_scamp"));
        c.args(["eval", net.to_str().unwrap(), "--json", "--dataset"])
            .arg(&data)
            .args(["--chip-seeds", "2", "--train-noise", "scamp5"])
            .env("RAYON_NUM_THREADS", threads);
        let mut v = json(&c.output().expect("runs"));
        v.as_object_mut().unwrap().remove("images_per_second");
        for r in v["merge"]["rows"].as_array_mut().unwrap() {
            r.as_object_mut().unwrap().remove("noisy_seconds");
        }
        v
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    assert_eq!(one["features"], 2 * 9);
    assert_eq!(one["train_noise"], "scamp5");
}

#[test]
fn an_mlp_head_trains_with_its_own_default_step_size() {
    let split = images(120);
    let data = dataset("evalnet-mlpdefault-data", &split);
    let accuracy = |purpose: &str, head: &str| {
        let net = folder(
            purpose,
            &net_text("", &format!("readout:\n  pool: 2\nhead:\n{head}")),
        );
        let r = ideal_json(&net, &data);
        r["accuracy"]["ideal"].as_f64().expect("an accuracy")
    };
    // An MLP without `learning_rate` trains at 0.05, not at softmax regression's 0.5.
    let default = accuracy("evalnet-mlpdefault", "  hidden: [16]\n");
    let rate = |r: &str| format!("  hidden: [16]\n  train: {{learning_rate: {r}}}\n");
    assert_eq!(default, accuracy("evalnet-mlp005", &rate("0.05")));
    assert_ne!(default, accuracy("evalnet-mlp05", &rate("0.5")));
    // Softmax regression keeps 0.5.
    let softmax = accuracy("evalnet-softmaxdefault", "  train: {epochs: 15}\n");
    let explicit = accuracy("evalnet-softmax05", "  train: {learning_rate: 0.5}\n");
    assert_eq!(softmax, explicit);
}

#[test]
fn bad_layers_are_refused_with_their_position() {
    let split = images(10);
    let data = dataset("evalnet-baddata", &split);
    let d = data.to_str().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        ("    activation: tanh\n", "", "net.yaml:5:17: unknown activation `tanh`"),
        (
            "    activation: {leaky_relu: 1/3}\n",
            "",
            "net.yaml:5:30: a leaky ReLU's slope must be 1/2^k",
        ),
        (
            "    threshold: [10, 200]\n",
            "",
            "net.yaml:5:21: threshold 200 cannot be loaded: the DAC loads -t, so a threshold must be an integer in -127..128",
        ),
        ("    threshold: 2.5\n", "", "net.yaml:5:16: threshold 2.5 cannot be loaded"),
        (
            "    threshold: [1, 2, 3]\n",
            "",
            "net.yaml:5:16: 3 thresholds for the 2 maps of refs.yaml",
        ),
        ("", "readout:\n  bins: [[0, 0, 4]]\n", "net.yaml:3:10: a bin is [row, col, height, width]"),
        ("", "readout:\n  bins: [[0, 0, 0, 4]]\n", "net.yaml:3:10: a bin's height and width are at least 1"),
        ("", "readout:\n  pool: 2\n  bins: [[0, 0, 1, 1]]\n", "net.yaml:4:9: give `pool` or `bins`, not both"),
        ("", "readout:\n  cap: 0\n", "net.yaml:3:8: cap must be at least 1"),
        (
            "",
            "input:\n  binarise: {level: 0, value: 50}\n",
            "net.yaml:3:21: level 0: a pixel value in 1..255",
        ),
        (
            "",
            "input:\n  binarise: {level: 10, value: 300}\n",
            "net.yaml:3:32: value 300: the DAC loads -128..127",
        ),
        ("", "head:\n  hidden: [0]\n", "net.yaml:3:11: a hidden layer has 1..4096 units"),
        (
            "",
            "head:\n  hidden: [4]\n  weights: h.npy\n",
            "net.yaml:3:11: `hidden` is for a head scamp trains",
        ),
    ];
    for (i, (stage, rest, want)) in cases.iter().enumerate() {
        let p = folder(&format!("evalnet-bad{i}"), &net_text(stage, rest));
        let o = scamp(&["eval", p.to_str().unwrap(), "--dataset", d]);
        refused(&o, &[want]);
        assert_eq!(common::stderr(&o).trim().lines().count(), 1);
    }
    // A bin past the image is refused once the image size is known.
    let p = folder(
        "evalnet-badbin",
        &net_text("", "readout:\n  bins: [[0, 0, 2, 2], [4, 4, 3, 3]]\n"),
    );
    let o = scamp(&["eval", p.to_str().unwrap(), "--dataset", d]);
    refused(
        &o,
        &["readout bin 1 [4, 4, 3, 3] reaches past the 6x6 image"],
    );
    // A second head layer of the wrong shape names its file and layer.
    let p = folder(
        "evalnet-badlayer",
        &net_text(
            "",
            "readout:\n  pool: 3\nhead:\n  weights: [h1.npy, h2.npy]\n",
        ),
    );
    let dir = p.parent().unwrap();
    ndarray_npy::write_npy(dir.join("h1.npy"), &ndarray::Array2::<f32>::zeros((4, 9))).unwrap();
    ndarray_npy::write_npy(dir.join("h2.npy"), &ndarray::Array2::<f32>::zeros((10, 4))).unwrap();
    let o = scamp(&["eval", p.to_str().unwrap(), "--dataset", d]);
    refused(
        &o,
        &["h2.npy: head layer 2 is 10x4; it takes 4 inputs, so it must be 10x5"],
    );
}

/// A layer `[2, 1, 3, 3]` in PyTorch's layout (multiples of 1/4, exact at depth 2).
fn layer_weights() -> ndarray::Array4<f32> {
    ndarray::Array4::from_shape_fn((2, 1, 3, 3), |(o, _, r, c)| {
        (((o * 9 + r * 3 + c) * 5 % 9) as f32 - 4.0) / 4.0
    })
}

/// The reference of a layer from arrays: correlation of the capture (row 0 north),
/// plus the bias, through `activation`, bit = value > 0.
fn layer_reference(img: &[u8], bias: [f64; 2], activation: fn(f64) -> f64) -> Vec<u8> {
    let w = layer_weights();
    let at = |r: isize, c: isize| {
        let inside = (0..ROWS as isize).contains(&r) && (0..COLS as isize).contains(&c);
        f64::from(if inside {
            img[r as usize * COLS + c as usize]
        } else {
            0
        }) - 128.0
    };
    let mut bits = vec![0u8; 2 * ROWS * COLS];
    for o in 0..2 {
        for r in 0..ROWS {
            for c in 0..COLS {
                let mut v = bias[o];
                for dr in 0..3 {
                    for dc in 0..3 {
                        let x = at(r as isize + dr as isize - 1, c as isize + dc as isize - 1);
                        v += f64::from(w[[o, 0, dr, dc]]) * x;
                    }
                }
                bits[o * ROWS * COLS + r * COLS + c] = u8::from(activation(v) > 0.0);
            }
        }
    }
    bits
}

#[test]
fn a_layer_from_pytorch_arrays_with_a_bias_matches_the_reference() {
    let split = images(40);
    for (purpose, activation, f) in [
        ("evalnet-layer-fold", "", identity as fn(f64) -> f64),
        ("evalnet-layer-relu", "    activation: relu\n", relu),
    ] {
        let net = folder(
            purpose,
            &format!(
                "name: t\nstages:\n  - weights: w.npy\n    bias: b.npy\n    depth: 2\n{activation}"
            ),
        );
        let dir = net.parent().unwrap();
        ndarray_npy::write_npy(dir.join("w.npy"), &layer_weights()).unwrap();
        let bias = ndarray::arr1(&[-30.0f64, 45.0]);
        ndarray_npy::write_npy(dir.join("b.npy"), &bias).unwrap();
        let got = simulated(&net, &split);
        let want: Vec<u8> = (0..split.len())
            .flat_map(|i| layer_reference(split.image(i), [-30.0, 45.0], f))
            .collect();
        assert_eq!(got.bits, want, "{purpose}");
        let unbiased: Vec<u8> = (0..split.len())
            .flat_map(|i| layer_reference(split.image(i), [0.0, 0.0], f))
            .collect();
        assert_ne!(got.bits, unbiased, "{purpose}: the bias changes the maps");
    }
}
