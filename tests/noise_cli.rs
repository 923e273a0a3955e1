//! The `scamp` binary's contract for noise: `--noise` profiles by name or path,
//! positioned profile errors (exit 2), `scamp noise show|calibrate`, `--runs` statistics
//! and seeds that reproduce results.

mod common;

use approx::assert_abs_diff_eq;
use common::{json, scamp, stderr};

fn temp_file(name: &str, contents: &str) -> std::path::PathBuf {
    common::temp_file("noise-cli", name, contents)
}

const PROG: &str = "in(A, 100);\ndivq(B, A);\nneg(C, B);\n";

#[test]
fn bad_profiles_are_rejected_with_positions() {
    let prog = temp_file("p.scamp", PROG);
    let cases = [
        (
            "unknown.yaml",
            "name: u\ntransfer:\n  bus_1: {gian: 0.1}\n",
            ":3:",
            "unknown field `gian`",
        ),
        (
            "range.yaml",
            "fixed_pattern:\n  gain: 0.001\n  offset: 99\n",
            ":3:",
            "0..64, got 99",
        ),
        ("syntax.yaml", "transfer: [1, 2\n", ":", ""),
    ];
    for (name, text, at, msg) in cases {
        let f = temp_file(name, text);
        let f = f.to_str().unwrap();
        for args in [
            vec!["run", prog.to_str().unwrap(), "--noise", f],
            vec!["noise", "show", f],
        ] {
            let o = scamp(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
            let e = stderr(&o);
            let want = format!("error: {f}{at}");
            assert!(e.starts_with(&want), "{e}");
            assert!(e.contains(msg), "{e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }
    let o = scamp(&["run", prog.to_str().unwrap(), "--noise", "no_such_profile"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("error: no_such_profile:1:1: no such profile"));
}

#[test]
fn show_prints_profiles_that_load_back() {
    for name in ["ideal", "scamp5"] {
        let o = scamp(&["noise", "show", name]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let text = String::from_utf8(o.stdout).unwrap();
        let copy = temp_file(&format!("{name}-copy.yaml"), &text);
        let p = scamp::Profile::load(copy.to_str().unwrap()).unwrap();
        assert_eq!(p, scamp::Profile::builtin(name).unwrap());
        // The copy runs as a profile file, with the same results as the built-in.
        let prog = temp_file("show.scamp", PROG);
        let a = scamp(&["run", prog.to_str().unwrap(), "--noise", name, "--json"]);
        let b = scamp(&[
            "run",
            prog.to_str().unwrap(),
            "--noise",
            copy.to_str().unwrap(),
            "--json",
        ]);
        assert_eq!(json(&a)["registers"], json(&b)["registers"]);
    }
}

#[test]
fn scamp5_is_the_default_and_seeds_reproduce() {
    let prog = temp_file("seeds.scamp", PROG);
    let p = prog.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", p, "--json", "--raw"];
        args.extend_from_slice(extra);
        json(&scamp(&args))
    };
    let default = run(&[]);
    assert_eq!(default["noise"]["profile"], "scamp5");
    assert_eq!(
        default,
        run(&["--noise", "scamp5", "--seed", "1", "--chip-seed", "1"])
    );
    assert_ne!(default["registers"], run(&["--seed", "2"])["registers"]);
    assert_ne!(
        default["registers"],
        run(&["--chip-seed", "2"])["registers"]
    );
    // Under noise, B = A/2 is near 50 but not exact.
    let b = default["registers"]["B"]["mean"].as_f64().unwrap();
    assert!((b - 50.0).abs() < 3.0 && b != 50.0, "{b}");
    assert!(default["registers"]["B"]["std"].as_f64().unwrap() > 0.0);
}

#[test]
fn runs_report_mean_and_spread() {
    let prog = temp_file("runs.scamp", PROG);
    let v = json(&scamp(&[
        "run",
        prog.to_str().unwrap(),
        "--runs",
        "4",
        "--json",
    ]));
    assert_eq!(v["run_count"], 4);
    assert_eq!(v["saturated_per_run"].as_array().map(Vec::len), Some(4));
    for reg in ["A", "B", "C"] {
        let r = &v["runs"][reg];
        assert_eq!(r["runs"], 4, "{v}");
        let mean = r["mean_of_mean"].as_f64().unwrap();
        let own = v["registers"][reg]["mean"].as_f64().unwrap();
        // The first run is one of the four; the runs differ only by temporal noise.
        assert_abs_diff_eq!(mean, own, epsilon = 0.5);
        assert!(r["std_of_mean"].as_f64().unwrap() < 0.5);
        assert!(r["pe_std"].as_f64().unwrap() > 0.0);
    }
    // The existing fields stay.
    for k in [
        "instructions",
        "cycles",
        "time_us",
        "saturated",
        "registers",
    ] {
        assert!(v.get(k).is_some(), "{k}");
    }
    // Read out through the 8-bit ADC: integers.
    assert_eq!(v["registers"]["A"]["min"].as_f64().unwrap().fract(), 0.0);
    let o = scamp(&["run", prog.to_str().unwrap(), "--runs", "0"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn calibrate_prints_measured_and_simulated() {
    let v = json(&scamp(&[
        "noise",
        "calibrate",
        "--reps",
        "1",
        "--k-max",
        "4",
        "--inputs",
        "0,-60",
        "--json",
    ]));
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 10);
    assert_eq!(rows[1]["measured"][0], 4.5);
    assert!(rows[6]["measured"].is_null());
    assert_abs_diff_eq!(rows[1]["bias"].as_f64().unwrap(), 4.5, epsilon = 2.5);
    let o = scamp(&["noise", "calibrate", "--k-max", "2", "--reps", "1"]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("measured bias"), "{text}");
}
