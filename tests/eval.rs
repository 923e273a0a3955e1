//! `scamp eval`: accuracy on Fashion-MNIST (when Debian's `dataset-fashion-mnist` is
//! installed; otherwise those tests say SKIPPED and pass, except under `CI=true`), and
//! every bad input on tiny synthetic IDX datasets written into temporary folders.

mod common;

use common::dataset::{fashion, squares_dataset, write_idx};
use common::{json, scamp, stderr, temp_dir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The subset the accuracy tests use: enough to train a head well above chance, small
/// enough for seconds of CI time.
const SUBSET: [&str; 6] = [
    "--train-images",
    "6000",
    "--test-images",
    "600",
    "--depths",
    "2",
];

fn eval(extra: &[&str]) -> Output {
    let mut args = vec!["eval", "--json"];
    args.extend(SUBSET);
    args.extend(extra);
    scamp(&args)
}

/// The report without its wall-clock figures (which differ from run to run).
fn figures(mut v: Value) -> Value {
    let o = v.as_object_mut().expect("an object");
    o.remove("images_per_second");
    if let Some(rows) = o
        .get_mut("merge")
        .and_then(|m| m.get_mut("rows"))
        .and_then(Value::as_array_mut)
    {
        for r in rows {
            r.as_object_mut().expect("a row").remove("noisy_seconds");
        }
    }
    v
}

fn f(v: &Value, path: &[&str]) -> f64 {
    path.iter()
        .fold(v, |v, k| &v[*k])
        .as_f64()
        .unwrap_or_else(|| panic!("no number at {path:?} in {v}"))
}

#[test]
fn default_network_beats_chance_and_runs_agree_on_any_thread_count() {
    if !fashion("the eval tests") {
        return;
    }
    let run = |threads: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_scamp"))
            .args(["eval", "--json"])
            .args(SUBSET)
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .expect("runs");
        json(&o)
    };
    let one = run("1");
    let two = run("2");
    assert_eq!(figures(one.clone()), figures(two.clone()));
    let ideal = f(&one, &["accuracy", "ideal"]);
    assert!(ideal >= 0.70, "ideal accuracy {ideal}");
    let noisy = f(&one, &["accuracy", "noisy", "mean"]);
    assert!((0.0..=1.0).contains(&noisy));
    assert!((f(&one, &["accuracy", "lost"]) - (ideal - noisy)).abs() < 1e-12);
    assert_eq!(one["stages"], 1);
    assert_eq!(one["images"], 600);
    assert_eq!(one["chip_seeds"].as_array().map(Vec::len), Some(3));
    let confusion: u64 = one["confusion"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()))
        .sum();
    assert_eq!(confusion, 600 * 3);
    let flipped = f(&one, &["flipped"]);
    assert!(flipped > 0.0 && flipped < 0.05, "scamp5 flips {flipped}");
    assert_eq!(one["depths"][0]["depth"], 2);
    assert_eq!(one["depths"][0]["instructions"], one["instructions"]);
    assert!(f(&one, &["images_per_second"]) > 0.0);
}

#[test]
fn ideal_noise_loses_nothing_and_a_loud_profile_loses_clearly_more() {
    if !fashion("the eval tests") {
        return;
    }
    let ideal = json(&eval(&["--noise", "ideal", "--chip-seeds", "2"]));
    assert_eq!(f(&ideal, &["accuracy", "lost"]), 0.0);
    assert_eq!(f(&ideal, &["flipped"]), 0.0);
    assert_eq!(f(&ideal, &["changed"]), 0.0);
    assert_eq!(ideal["confusion"], {
        // Summed over 2 chips: twice the ideal counts.
        let m: Vec<Vec<u64>> = serde_json::from_value(ideal["confusion_ideal"].clone()).unwrap();
        serde_json::to_value(
            m.iter()
                .map(|r| r.iter().map(|v| 2 * v).collect::<Vec<_>>())
                .collect::<Vec<_>>(),
        )
        .unwrap()
    });
    let scamp5 = json(&eval(&[]));
    let loud = temp_dir("eval-loud").join("loud.yaml");
    std::fs::write(&loud, LOUD).unwrap();
    let loud = json(&eval(&["--noise", loud.to_str().unwrap()]));
    assert_eq!(
        f(&loud, &["accuracy", "ideal"]),
        f(&scamp5, &["accuracy", "ideal"])
    );
    let (l5, ll) = (
        f(&scamp5, &["accuracy", "lost"]),
        f(&loud, &["accuracy", "lost"]),
    );
    assert!(ll > l5 + 0.05, "loud loses {ll}, scamp5 {l5}");
    assert!(f(&loud, &["flipped"]) > 2.0 * f(&scamp5, &["flipped"]));
}

#[test]
fn the_seed_draws_other_temporal_noise_on_the_same_chips() {
    if !fashion("the eval tests") {
        return;
    }
    let loud = temp_dir("eval-seed").join("loud.yaml");
    std::fs::write(&loud, LOUD).unwrap();
    let loud = ["--noise", loud.to_str().unwrap()];
    let unseeded = json(&eval(&loud));
    let zero = json(&eval(&[&loud[..], &["--seed", "0"]].concat()));
    let seven = json(&eval(&[&loud[..], &["--seed", "7"]].concat()));
    // Seed 0 is the draw without the flag; another seed keeps the ideal run and the
    // chips and draws other temporal noise.
    assert_eq!(figures(unseeded.clone()), figures(zero));
    assert_eq!((&unseeded["seed"], &seven["seed"]), (&0.into(), &7.into()));
    assert_eq!(seven["confusion_ideal"], unseeded["confusion_ideal"]);
    assert_eq!(seven["chip_seeds"], unseeded["chip_seeds"]);
    assert_ne!(seven["confusion"], unseeded["confusion"]);
}

/// A profile much noisier than scamp5: temporal noise 3 per transfer, fixed-pattern
/// offsets of 2.
const LOUD: &str = r"name: loud
description: loud
transfer:
  bus_0: {gain: 0.0, offset: 0.0, noise: 10.0, pattern: 1}
  bus_1: {gain: 0.0, offset: 0.0, noise: 10.0, pattern: 1}
  bus_2: {gain: 0.0, offset: 0.0, noise: 10.0, pattern: 1}
  bus_3: {gain: 0.0, offset: 0.0, noise: 10.0, pattern: 1}
  bus_4: {gain: 0.0, offset: 0.0, noise: 10.0, pattern: 1}
  bus2: {gain: 0.0, offset: 0.0, noise: 10.0, pattern: 2}
  bus3: {gain: 0.0, offset: 0.0, noise: 10.0, pattern: 3}
fixed_pattern: {gain: 0.01, offset: 6.0}
";

#[test]
fn shards_merge_into_the_unsharded_figures() {
    if !fashion("the eval tests") {
        return;
    }
    let dir = temp_dir("eval-shards");
    let whole = json(&eval(&["--chip-seeds", "2"]));
    let mut files = Vec::new();
    for k in 1..=3 {
        let o = eval(&["--chip-seeds", "2", "--shard", &format!("{k}/3")]);
        let part = json(&o);
        assert_eq!(part["merge"]["shard"], serde_json::json!([k, 3]));
        let p = dir.join(format!("s{k}.json"));
        std::fs::write(&p, &o.stdout).unwrap();
        files.push(p.to_str().unwrap().to_string());
    }
    let mut args = vec!["eval", "--json", "--merge"];
    args.extend(files.iter().map(String::as_str));
    let merged = json(&scamp(&args));
    let strip = |v: Value| {
        let mut v = figures(v);
        v["merge"]["shard"] = Value::Null;
        v
    };
    assert_eq!(strip(merged), strip(whole.clone()));
    // A shard of another evaluation (other chip seeds) is refused.
    let other = eval(&["--chip-seeds", "3", "--shard", "3/3"]);
    let p = dir.join("other.json");
    std::fs::write(&p, &other.stdout).unwrap();
    let bad = scamp(&["eval", "--merge", &files[0], &files[1], p.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    let msg = stderr(&bad);
    assert!(msg.contains("not the same evaluation"), "{msg}");
    assert_eq!(msg.trim().lines().count(), 1, "{msg}");
}

#[test]
fn the_two_stage_network_runs_and_reports_each_depth() {
    if !fashion("the eval tests") {
        return;
    }
    let o = scamp(&[
        "eval",
        "programs/deep_net.yaml",
        "--json",
        "--train-images",
        "3000",
        "--test-images",
        "300",
        "--chip-seeds",
        "2",
        "--work",
        "2000",
    ]);
    let r = json(&o);
    assert_eq!(r["stages"], 2);
    assert_eq!(r["maps"], 5);
    assert_eq!(r["gap"], 2);
    assert_eq!(r["images_per_frame"], 64);
    let depths: Vec<u64> = r["depths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["depth"].as_u64().unwrap())
        .collect();
    assert_eq!(depths, vec![0, 1, 2]);
    assert!(f(&r, &["accuracy", "ideal"]) > 0.5);
}

// ---- bad input, on synthetic datasets ----

/// Runs `scamp eval` and expects exit 2 with one line on stderr containing `want`.
fn refused(args: &[&str], want: &str) {
    let mut all = vec!["eval"];
    all.extend(args);
    let o = scamp(&all);
    let msg = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {msg}");
    assert!(msg.contains(want), "{args:?}: expected `{want}` in {msg}");
    assert_eq!(msg.trim().lines().count(), 1, "{msg}");
    assert!(msg.starts_with("error: "), "{msg}");
}

#[test]
fn a_tiny_synthetic_dataset_is_classified_exactly_under_ideal() {
    let dir = squares_dataset("eval-tiny", 40, 200);
    let r = json(&scamp(&[
        "eval",
        "--json",
        "--dataset",
        dir.to_str().unwrap(),
        "--noise",
        "ideal",
        "--depths",
        "2",
    ]));
    assert_eq!(r["images"], 40);
    assert_eq!(f(&r, &["accuracy", "ideal"]), 1.0);
    assert_eq!(f(&r, &["accuracy", "lost"]), 0.0);
    assert_eq!(r["images_per_frame"], 64);
    assert_eq!(r["gap"], 1);
}

#[test]
fn a_missing_dataset_says_how_to_get_one() {
    refused(&["--dataset", "/nonexistent/fashion"], "no such folder");
    let empty = temp_dir("eval-empty");
    refused(&["--dataset", empty.to_str().unwrap()], "no images file");
}

#[test]
fn broken_idx_files_are_refused() {
    let dir = squares_dataset("eval-magic", 10, 200);
    let f = dir.join("t10k-images-idx3-ubyte");
    let mut b = std::fs::read(&f).unwrap();
    b[2] = 0x0d;
    std::fs::write(&f, &b).unwrap();
    refused(&["--dataset", dir.to_str().unwrap()], "not an IDX file");
    b[2] = 8;
    b.truncate(b.len() - 5);
    std::fs::write(&f, &b).unwrap();
    refused(&["--dataset", dir.to_str().unwrap()], "truncated");
    let dir = squares_dataset("eval-labels", 10, 200);
    write_idx(
        &dir.join("train-labels-idx1-ubyte"),
        &[10],
        &[0, 1, 2, 3, 4, 5, 6, 7, 8, 12],
    );
    refused(
        &["--dataset", dir.to_str().unwrap()],
        "label 12 of item 9 is out of range 0..9",
    );
    let dir = squares_dataset("eval-count", 10, 200);
    write_idx(&dir.join("train-labels-idx1-ubyte"), &[9], &[0; 9]);
    refused(
        &["--dataset", dir.to_str().unwrap()],
        "9 labels for 10 images",
    );
}

/// A network folder holding the AnalogNet2 spec and program and `net` as net.yaml.
fn network(purpose: &str, net: &str) -> PathBuf {
    let dir = temp_dir(purpose);
    for f in [
        "analognet2.yaml",
        "analognet2.scamp",
        "gauss3x3.yaml",
        "gauss3x3_wrong.scamp",
    ] {
        std::fs::copy(Path::new("programs").join(f), dir.join(f)).unwrap();
    }
    let p = dir.join("net.yaml");
    std::fs::write(&p, net).unwrap();
    p
}

#[test]
fn bad_networks_are_refused_with_their_position() {
    let data = squares_dataset("eval-netdata", 10, 200);
    let d = data.to_str().unwrap();
    let p = network(
        "eval-unknown",
        "name: x\nstages:\n  - spec: analognet2.yaml\n    colour: red\n",
    );
    refused(
        &[p.to_str().unwrap(), "--dataset", d],
        "net.yaml:4:5: stages[0]: unknown field `colour`",
    );
    let p = network(
        "eval-decision",
        "name: x\nstages:\n  - spec: analognet2.yaml\n    decision: maybe\n",
    );
    refused(
        &[p.to_str().unwrap(), "--dataset", d],
        "net.yaml:4:15: unknown decision `maybe`",
    );
    let p = network(
        "eval-wrong",
        "name: x\nstages:\n  - spec: gauss3x3.yaml\n    program: gauss3x3_wrong.scamp\n",
    );
    refused(
        &[p.to_str().unwrap(), "--dataset", d],
        "stage 1 does not compute the kernels of",
    );
}

#[test]
fn head_weights_of_the_wrong_shape_are_refused() {
    let data = squares_dataset("eval-headdata", 10, 200);
    let p = network(
        "eval-head",
        "name: x\nstages:\n  - spec: analognet2.yaml\n    program: analognet2.scamp\nhead:\n  weights: w.npy\n",
    );
    let w = ndarray::Array2::<f32>::zeros((10, 5));
    ndarray_npy::write_npy(p.parent().unwrap().join("w.npy"), &w).unwrap();
    refused(
        &[
            p.to_str().unwrap(),
            "--dataset",
            data.to_str().unwrap(),
            "--depths",
            "2",
        ],
        "head layer 1 is 10x5; it takes 147 inputs, so it must be 10x148",
    );
    // The right shape runs: all-zero weights predict class 0 for every image.
    let w = ndarray::Array2::<f32>::zeros((10, 148));
    ndarray_npy::write_npy(p.parent().unwrap().join("w.npy"), &w).unwrap();
    let r = json(&scamp(&[
        "eval",
        p.to_str().unwrap(),
        "--json",
        "--dataset",
        data.to_str().unwrap(),
        "--depths",
        "2",
    ]));
    assert_eq!(f(&r, &["accuracy", "ideal"]), 0.1);
}

#[test]
fn bad_shards_and_merges_are_refused() {
    let o = scamp(&["eval", "--shard", "0/3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("expected K/N with 1 <= K <= N"));
    let o = scamp(&["eval", "--shard", "4/3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("expected K/N with 1 <= K <= N"));
    let data = squares_dataset("eval-mergedata", 200, 200);
    let d = data.to_str().unwrap();
    let dir = temp_dir("eval-merge");
    let shard = |name: &str, extra: &[&str]| {
        let mut args = vec![
            "eval",
            "--json",
            "--dataset",
            d,
            "--depths",
            "2",
            "--noise",
            "ideal",
        ];
        args.extend(extra);
        let o = scamp(&args);
        json(&o);
        let p = dir.join(name);
        std::fs::write(&p, &o.stdout).unwrap();
        p.to_str().unwrap().to_string()
    };
    let a = shard("a.json", &["--shard", "1/2"]);
    let b = shard("b.json", &["--shard", "2/2", "--chip-seeds", "2"]);
    refused(&["--merge", &a, &b], "not the same evaluation");
    refused(&["--merge", &a, &a], "is given twice");
    refused(&["--merge", &a], "are missing");
    let whole = shard("w.json", &[]);
    refused(&["--merge", &whole], "a whole run, not a shard");
}

#[test]
fn the_html_report_is_self_contained_and_shows_changed_images() {
    let data = squares_dataset("eval-html", 40, 200);
    let dir = temp_dir("eval-html-out");
    let loud = dir.join("loud.yaml");
    std::fs::write(&loud, LOUD.replace("noise: 10.0", "noise: 60.0")).unwrap();
    let page = dir.join("r.html");
    let o = scamp(&[
        "eval",
        "--json",
        "--dataset",
        data.to_str().unwrap(),
        "--depths",
        "2",
        "--noise",
        loud.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    let r = json(&o);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<table class=\"confusion\">").count(), 2);
    // Side by side in a container that sizes them to their content: in the fixed image
    // grid of the check page they overflowed each other.
    assert!(html.contains("<div class=\"matrices\"><div class=\"panel\"><h3>ideal</h3>"));
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
    // Each changed image once, with its maps on the three chips side by side.
    let shown = html.matches("<div class=\"example\">").count();
    let changed = (f(&r, &["changed"]) * 40.0 * 3.0).round() as usize;
    assert!(shown > 0, "the loud profile changed no class");
    assert!(shown <= changed.min(12) && (changed >= 12 || shown * 3 >= changed));
    assert_eq!(html.matches("alt=\"map 2 ideal\"").count(), shown);
    assert_eq!(html.matches("alt=\"map 2 chip ").count(), 3 * shown);
    // The two charts: accuracy against depth, flip rate per map (one bar each).
    assert_eq!(html.matches("<svg class=\"plot\"").count(), 2);
    assert_eq!(html.matches("<rect ").count(), 3);
}
