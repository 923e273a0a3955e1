//! `scamp bench`: every program timed under both profiles with the noisy/ideal ratio,
//! and numpy's plane add as an optional reference that is skipped with a plain line,
//! never an error, where numpy (or python3) is missing. Only the shape of the report is
//! checked here: speed belongs to the benchmark itself, not to tests.

mod common;

use std::process::Command;

fn bench(path: Option<&std::path::Path>, json: bool) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_scamp"));
    cmd.args(["bench", "--samples", "1"]);
    if json {
        cmd.arg("--json");
    }
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    cmd.output().expect("scamp runs")
}

#[test]
fn without_python_numpy_is_skipped_with_one_line() {
    let empty = common::temp_dir("bench-no-python");
    let out = bench(Some(&empty), false);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let skipped: Vec<&str> = text.lines().filter(|l| l.contains("numpy")).collect();
    assert_eq!(skipped.len(), 1, "{text}");
    assert!(skipped[0].starts_with("numpy not available (python3 not runnable"));
    assert!(skipped[0].ends_with("skipped"), "{}", skipped[0]);
}

#[test]
fn every_program_is_timed_under_both_profiles_with_its_ratio() {
    let out = bench(None, true);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let v = common::json(&out);
    let figures = v["figures"].as_array().expect("figures");
    let names: Vec<&str> = figures.iter().filter_map(|f| f["name"].as_str()).collect();
    for want in [
        "macro add",
        "frame gauss3x3",
        "long add x1000",
        "long gauss3x3 x100",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    for pair in figures.chunks(2) {
        let [ideal, noisy] = pair else {
            panic!("figures come in pairs: {pair:?}");
        };
        assert_eq!(ideal["name"], noisy["name"]);
        assert_eq!(
            (ideal["profile"].as_str(), noisy["profile"].as_str()),
            (Some("ideal"), Some("scamp5"))
        );
        assert!(ideal["ideal_ratio"].is_null());
        let (i, n) = (ideal["us"].as_f64().unwrap(), noisy["us"].as_f64().unwrap());
        assert!(i > 0.0 && n > 0.0);
        let ratio = noisy["ideal_ratio"].as_f64().expect("a ratio for scamp5");
        assert!(
            (ratio - n / i).abs() <= 1e-9 * ratio,
            "{ratio} vs {n} / {i}"
        );
    }
    // numpy is optional: either timed, with the ratio of the ideal add to it, or skipped
    // with the reason.
    match v["numpy"]["add_us"].as_f64() {
        Some(add) => {
            assert!(add > 0.0 && v["numpy"]["add_into_us"].as_f64().unwrap() > 0.0);
            assert!(v["numpy_skipped"].is_null());
            let one = figures[0]["us"].as_f64().unwrap();
            let r = v["ideal_add_over_numpy"].as_f64().expect("ratio");
            assert!((r - one / add).abs() <= 1e-9 * r);
        }
        None => {
            assert!(v["numpy"].is_null());
            assert!(v["numpy_skipped"].as_str().is_some_and(|s| !s.is_empty()));
            assert!(v["ideal_add_over_numpy"].is_null());
        }
    }
}
