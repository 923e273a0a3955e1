//! Range and error in code generation: the static peak of compiled programs stays within
//! the profile's saturation, the analytic error prediction agrees with the simulated
//! measurement on the bundled images, the error objective beats the length objective on
//! predicted error, and bad ranges and profiles are rejected.

mod common;

use common::{json, scamp, stderr, temp_file};
use std::path::Path;

/// Every spec in `programs/` that has a committed program of the same name.
fn bundled() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).expect("programs/").flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "yaml") {
            let prog = p.with_extension("scamp");
            if prog.exists() {
                let rel =
                    |q: &Path| format!("programs/{}", q.file_name().unwrap().to_string_lossy());
                out.push((rel(&prog), rel(&p)));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn predicted_rmse_is_within_a_quarter_of_the_measured_analogue_rmse() {
    let specs = bundled();
    assert!(specs.len() >= 7, "{specs:?}");
    for (prog, spec) in specs {
        let v = json(&scamp(&["check", &prog, "--kernel", &spec, "--json"]));
        for k in v["kernels"].as_array().unwrap() {
            let predicted = k["predicted"]["rmse"].as_f64().unwrap();
            let measured = k["sources"]["analogue"]["rmse"].as_f64().unwrap();
            assert!(
                (predicted - measured).abs() <= 0.25 * measured,
                "{prog} {}: predicted {predicted}, measured {measured}",
                k["out"]
            );
            let (pb, mb) = (
                k["predicted"]["bias"].as_f64().unwrap(),
                k["sources"]["analogue"]["bias"].as_f64().unwrap(),
            );
            assert!(
                (pb - mb).abs() <= 0.25 * measured + 0.5,
                "{prog}: bias {pb} vs {mb}"
            );
        }
    }
}

#[test]
fn the_error_split_adds_up_and_names_readout_clipping() {
    let v = json(&scamp(&[
        "check",
        "programs/sobel_x.scamp",
        "--kernel",
        "programs/sobel_x.yaml",
        "--json",
    ]));
    let k = &v["kernels"][0];
    let s = &k["sources"];
    let total = k["total"]["rmse"].as_f64().unwrap();
    let readout = s["readout_clipping"]["rmse"].as_f64().unwrap();
    // Sobel's output leaves the 8-bit range: almost all of its error is that clipping.
    assert!(readout > 0.9 * total, "readout {readout} of total {total}");
    assert!(s["clipped_share"].as_f64().unwrap() > 0.01);
    // The bias of the four stages adds up to the total bias (means are linear).
    let sum: f64 = [
        "approximation",
        "readout_clipping",
        "analogue",
        "saturation",
    ]
    .iter()
    .map(|n| s[n]["bias"].as_f64().unwrap())
    .sum();
    let bias = k["total"]["bias"].as_f64().unwrap();
    assert!((sum - bias).abs() < 1e-6, "{sum} vs {bias}");
}

fn compile_json(spec: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["compile", spec, "--json", "--workers", "1", "--node-limit"];
    args.push("20000");
    args.extend_from_slice(extra);
    json(&scamp(&args))
}

#[test]
fn compiled_gaussian_stays_in_range_and_error_objective_predicts_less_error() {
    let by_length = compile_json("programs/gauss3x3.yaml", &["--objective", "length"]);
    let by_error = compile_json("programs/gauss3x3.yaml", &["--objective", "error"]);
    for v in [&by_length, &by_error] {
        let k = &v["kernels"][0];
        assert!(k["peak"].as_f64().unwrap() <= 128.0, "{v}");
        assert_eq!(k["fits"], true);
        assert!(k["predicted"]["rmse"].as_f64().unwrap() > 0.0);
    }
    let (nl, ne) = (
        by_length["instructions"].as_u64().unwrap(),
        by_error["instructions"].as_u64().unwrap(),
    );
    assert!(ne as f64 <= (nl as f64 * 1.25).floor(), "{nl} vs {ne}");
    let rmse = |v: &serde_json::Value| v["kernels"][0]["predicted"]["rmse"].as_f64().unwrap();
    assert!(
        rmse(&by_error) <= rmse(&by_length),
        "{by_error} vs {by_length}"
    );
}

#[test]
fn an_output_beyond_the_limit_is_reported_with_the_largest_scale_that_fits() {
    let v = compile_json("programs/sobel_x.yaml", &[]);
    let k = &v["kernels"][0];
    assert_eq!(k["fits"], false);
    // Four weights of +-1 or +-2 on each side: 4 x 127 + 4 x 128 at most.
    assert_eq!(k["output_peak"], 1020.0);
    let fit = k["largest_fitting_scale"].as_f64().unwrap();
    assert!((fit - 128.0 / 1020.0).abs() < 1e-12, "{fit}");
    let o = scamp(&["compile", "programs/sobel_x.yaml", "--node-limit", "20000"]);
    assert_eq!(o.status.code(), Some(0));
    let err = stderr(&o);
    assert!(err.contains("largest scale that fits is 0.125490"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("// note: A's exact output reaches +-1020"),
        "{out}"
    );
}

#[test]
fn a_half_range_input_lowers_the_peak() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/box7x7.yaml"))
            .unwrap();
    let half = temp_file(
        "range",
        "box_half.yaml",
        format!("{text}input_range: [0, 127]\n"),
    );
    let v = compile_json(half.to_str().unwrap(), &[]);
    assert_eq!(v["range"]["input_range"], serde_json::json!([0.0, 127.0]));
    let peak = v["kernels"][0]["peak"].as_f64().unwrap();
    assert!(peak <= 128.0, "{peak}");
    assert_eq!(v["kernels"][0]["fits"], true);
}

#[test]
fn bad_ranges_and_profiles_exit_2_with_a_position() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/gauss3x3.yaml"),
    )
    .unwrap();
    let lines = text.lines().count() + 1;
    for bad in ["[10, -10]", "[4, 4]", "[]"] {
        let p = temp_file("range", "bad.yaml", format!("{text}input_range: {bad}\n"));
        let o = scamp(&["compile", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        let want = format!("bad.yaml:{lines}:");
        assert!(stderr(&o).contains(&want), "{bad}: {}", stderr(&o));
        assert!(stderr(&o).contains("input_range"), "{}", stderr(&o));
    }
    let profile = temp_file(
        "range",
        "nosat.yaml",
        "name: nosat\ntransfer:\n  bus_1: {gain: -0.01}\n",
    );
    let o = scamp(&[
        "compile",
        "programs/gauss3x3.yaml",
        "--noise",
        profile.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("nosat.yaml:1:1"), "{}", stderr(&o));
    assert!(stderr(&o).contains("saturation"), "{}", stderr(&o));
}
