//! `scamp check` on programs written by hand: the proof accepts exactly the right ones,
//! the figures agree with what `--out` saved, and bad input exits 2.

mod common;

use approx::assert_abs_diff_eq;
use common::{json, scamp, temp_file};

fn tmp(name: &str) -> std::path::PathBuf {
    common::temp_dir(&format!("check-{name}"))
}

#[test]
fn hand_written_gaussian_is_proven_and_exact_under_ideal() {
    let o = scamp(&[
        "check",
        "programs/gauss3x3_hand.scamp",
        "--kernel",
        "programs/gauss3x3.yaml",
        "--noise",
        "ideal",
        "--json",
    ]);
    let v = json(&o);
    assert_eq!(v["verified"], true);
    assert_eq!(v["instructions"], 11);
    assert_eq!(v["cycles"], 26);
    assert_eq!(v["images"], 8);
    assert_eq!(v["border"], 2);
    let k = &v["kernels"][0];
    assert_eq!(k["out"], "A");
    assert_eq!(k["depth"], 4);
    assert_eq!(k["approx"]["rmse"], 0.0);
    // Every weight is a power of two: the f32 arithmetic is exact too.
    assert_eq!(k["analogue"]["max"], 0.0);
    assert_eq!(k["total"]["psnr"], serde_json::Value::Null);
}

#[test]
fn wrong_program_is_rejected_with_differing_offsets() {
    let o = scamp(&[
        "check",
        "programs/gauss3x3_wrong.scamp",
        "--kernel",
        "programs/gauss3x3.yaml",
        "--noise",
        "ideal",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("proof         FAILED"), "{out}");
    for want in [
        "offset (row -1, col -1): expected 1/16, computed 1/8",
        "offset (row +0, col -1): expected 1/8, computed 1/4",
        "offset (row +1, col -1): expected 1/16, computed 1/8",
    ] {
        assert!(out.contains(want), "{want} missing in {out}");
    }
    assert!(!out.contains("col +1): expected"), "{out}");
}

#[test]
fn saved_outputs_reproduce_the_reported_error() {
    // A [1 2 1] / 4.1 blur approximated at depth 2: the approximation error is known.
    let dir = tmp("out");
    let spec = dir.join("blur.yaml");
    std::fs::write(
        &spec,
        "name: blur\ninput: A\nregisters: [A, B, C, D, E, F]\nkernels:\n  - out: A\n    \
         scale: 0.24390243902439024\n    weights: [[1, 2, 1]]\napproximation: { max_depth: 2, max_error: 0.05 }\n",
    )
    .unwrap();
    let prog = dir.join("blur.scamp");
    std::fs::write(
        &prog,
        "divq(B, A); divq(C, B); movx(D, C, east); movx(E, C, west); add(A, B, D, E)\n",
    )
    .unwrap();
    let imgs = dir.join("imgs");
    std::fs::create_dir_all(&imgs).unwrap();
    std::fs::copy("images/gradient.png", imgs.join("gradient.png")).unwrap();
    let out = dir.join("res");
    let o = scamp(&[
        "check",
        prog.to_str().unwrap(),
        "--kernel",
        spec.to_str().unwrap(),
        "--images",
        imgs.to_str().unwrap(),
        "--noise",
        "ideal",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    let v = json(&o);
    let result: ndarray::Array2<f32> =
        ndarray_npy::read_npy(out.join("gradient_A.result.npy")).unwrap();
    // Gradient: x(r, c) = c - 128; interior result [1 2 1]/4 of a ramp is the ramp.
    assert_eq!(result[[10, 100]], -28.0);
    // Total error on a ramp: x * (1/4 + 1/2 + 1/4) * (4/4.1 - 1) summed = x * (4/4.1 - 1).
    let border = v["border"].as_u64().unwrap() as usize;
    assert_eq!(border, 1);
    let mut sq = 0.0f64;
    let mut n = 0.0f64;
    for r in border..256 - border {
        for c in border..256 - border {
            let x = c as f64 - 128.0;
            let e = f64::from(result[[r, c]]) - x * 4.0 / 4.1;
            sq += e * e;
            n += 1.0;
        }
    }
    let rmse = (sq / n).sqrt();
    let reported = v["kernels"][0]["total"]["rmse"].as_f64().unwrap();
    assert_abs_diff_eq!(rmse, reported, epsilon = 1e-9);
    for f in ["result.png", "ideal.png", "error.png", "ideal.npy"] {
        assert!(out.join(format!("gradient_A.{f}")).exists(), "{f}");
    }
}

#[test]
fn bad_input_exits_2() {
    let dir = tmp("bad");
    let bad_spec = dir.join("bad.yaml");
    std::fs::write(
        &bad_spec,
        "name: x\ninput: A\nregisters: [A, B]\nkernels:\n  - out: A\n    weights: [[1, 2], [3]]\n",
    )
    .unwrap();
    for args in [
        vec!["check", "programs/gauss3x3_hand.scamp", "--noise", "ideal"],
        vec![
            "check",
            "programs/gauss3x3_hand.scamp",
            "--kernel",
            bad_spec.to_str().unwrap(),
            "--noise",
            "ideal",
        ],
        vec![
            "check",
            "programs/gauss3x3.yaml",
            "--images",
            "no/such/dir",
            "--noise",
            "ideal",
        ],
        vec![
            "check",
            "programs/gauss3x3.yaml",
            "--runs",
            "0",
            "--noise",
            "ideal",
        ],
    ] {
        let o = scamp(&args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.starts_with("error: "), "{args:?}: {e}");
    }
    let o = scamp(&[
        "check",
        "programs/gauss3x3_hand.scamp",
        "--kernel",
        bad_spec.to_str().unwrap(),
        "--noise",
        "ideal",
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("bad.yaml:6:"), "positioned: {e}");
}

/// A 3x3 box (1/9) approximated at depth `max_depth` at most: 1/9 rounds to 0 up to
/// d = 2, to 1/8 at d = 3..5 and to 7/64 at d = 6.
fn box_spec(max_depth: u32) -> String {
    format!(
        "name: box3\ninput: A\nregisters: [A, B, C, D, E, F]\nkernels:\n  - out: A\n    \
         scale: 1/9\n    weights: [[1, 1, 1], [1, 1, 1], [1, 1, 1]]\n\
         approximation: {{ max_depth: {max_depth}, max_error: 0.0 }}\n"
    )
}

fn budget_check(spec: &std::path::Path, budget: &str) -> std::process::Output {
    scamp(&[
        "check",
        spec.to_str().unwrap(),
        "--noise",
        "ideal",
        "--max-total-rmse",
        budget,
        "--time-limit",
        "5",
        "--workers",
        "1",
        "--json",
    ])
}

#[test]
fn error_budget_picks_the_shortest_program_that_meets_it() {
    let spec = temp_file("budget", "box6.yaml", box_spec(6));
    let v = json(&budget_check(&spec, "3"));
    // Each distinct approximation is compiled once: d = 4 and 5 repeat d = 3's 1/8.
    let rows = v["budget"].as_array().unwrap();
    let depths: Vec<u64> = rows.iter().map(|r| r["depth"].as_u64().unwrap()).collect();
    assert_eq!(depths, [0, 3, 6]);
    let meets: Vec<bool> = rows.iter().map(|r| r["meets"].as_bool().unwrap()).collect();
    assert_eq!(meets, [false, false, true]);
    // Under `ideal` the total error is the approximation error alone: 1/8 instead of
    // 1/9 leaves 1/72 of every 3x3 sum, well above 3 on real images.
    assert!(rows[1]["total_rmse"].as_f64().unwrap() > 3.0);
    assert_eq!(v["budget_met"], true);
    assert_eq!(v["verified"], true);
    assert_eq!(v["kernels"][0]["depth"], 6);
    assert_eq!(v["instructions"], rows[2]["instructions"]);
    assert_eq!(
        v["kernels"][0]["total"]["rmse"].as_f64(),
        rows[2]["total_rmse"].as_f64()
    );
    assert_eq!(
        v["kernels"][0]["approximated"][0],
        serde_json::json!([7, 7, 7])
    );
}

#[test]
fn an_unmet_error_budget_reports_the_closest_program_and_fails() {
    let spec = temp_file("budget", "box3.yaml", box_spec(3));
    let o = budget_check(&spec, "3");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["budget_met"], false);
    let rows = v["budget"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r["meets"] == false));
    // The closest is the 1/8 box (d = 3), not the empty program of d = 0.
    assert_eq!(v["kernels"][0]["depth"], 3);
    assert_eq!(v["instructions"], rows[1]["instructions"]);
}

/// A bank of two kernels in two kernel blocks, each run from the input: B = x, A = 2x.
const BANK_SPEC: &str = "name: two_blocks\ninput: A\nregisters: [A, B]\nkernels:\n  - out: B\n    weights:\n      - [1]\n  - out: A\n    weights:\n      - [2]\n";
const BANK_PROGRAM: &str = "scamp5_kernel_begin();\nmov(B, A);\nscamp5_kernel_end();\nscamp5_kernel_begin();\nmov(B, A);\nadd(A, B, A);\nscamp5_kernel_end();\n";

#[test]
fn a_bank_in_kernel_blocks_gets_a_page_and_error_bars() {
    let spec = temp_file("check-bank", "bank.yaml", BANK_SPEC);
    let prog = temp_file("check-bank", "bank.scamp", BANK_PROGRAM);
    let page = tmp("bank").join("bank.html");
    let (spec, prog) = (spec.to_str().unwrap(), prog.to_str().unwrap());
    let o = scamp(&[
        "check",
        prog,
        "--kernel",
        spec,
        "--noise",
        "ideal",
        "--html",
        page.to_str().unwrap(),
        "--json",
    ]);
    let v = json(&o);
    assert_eq!(v["verified"], true);
    assert_eq!(v["instructions"], 3);
    let html = std::fs::read_to_string(&page).expect("page written");
    // One panel per kernel, each kernel's results from its own block.
    assert_eq!(html.matches("<h3>Kernel B</h3>").count(), 1);
    assert_eq!(html.matches("<h3>Kernel A</h3>").count(), 1);
    for k in v["kernels"].as_array().unwrap() {
        assert_eq!(k["analogue"]["rmse"], 0.0, "{k}");
    }
    let o = scamp(&["check", prog, "--kernel", spec, "--uncertainty", "--json"]);
    let v = json(&o);
    // Each block runs on its own: the clipped count is the sum of the blocks' (2x clips).
    let per_kernel: Vec<u64> = v["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["saturated"].as_u64().unwrap())
        .collect();
    assert!(per_kernel[1] > 0, "{per_kernel:?}");
    assert_eq!(v["saturated"].as_u64(), Some(per_kernel.iter().sum()));
    for k in v["kernels"].as_array().unwrap() {
        let [lo, hi] = [&k["total"]["rmse_range"][0], &k["total"]["rmse_range"][1]]
            .map(|x| x.as_f64().expect("range"));
        let nominal = k["total"]["rmse"].as_f64().unwrap();
        assert!(lo <= nominal && nominal <= hi && lo < hi, "{k}");
    }
}
