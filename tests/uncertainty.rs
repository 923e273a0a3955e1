//! Error bars: the profile's uncertainty description, the ensemble drawn from it (each
//! member checked against both device experiments) and `check --uncertainty`.

mod common;
use common::{json, scamp, stderr, temp_file};

#[test]
fn gauss5x5_range_brackets_the_nominal_and_is_not_empty() {
    let args = [
        "check",
        "programs/gauss5x5.scamp",
        "--kernel",
        "programs/gauss5x5.yaml",
        "--uncertainty",
        "--json",
    ];
    let j = json(&scamp(&args));
    let u = &j["uncertainty"];
    assert!(u["accepted"].as_u64().unwrap() >= 5, "{u}");
    for k in j["kernels"].as_array().unwrap() {
        let t = &k["total"];
        for (fig, range) in [("rmse", "rmse_range"), ("bias", "bias_range")] {
            let nominal = t[fig].as_f64().unwrap();
            let r: Vec<f64> = t[range]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            assert!(r[0] <= nominal && nominal <= r[1], "{fig} {nominal} {r:?}");
            assert!(r[1] - r[0] > 0.05 * nominal.abs().max(1.0), "{fig} {r:?}");
        }
    }
    // The text output shows the range beside the nominal figures.
    let o = scamp(&args[..5]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("range RMSE") && text.contains("ensemble"),
        "{text}"
    );
}

#[test]
fn bad_uncertainty_ranges_are_positioned_errors() {
    let base = scamp5_text();
    for (bad, line_of, what) in [
        (
            "gain_ratio: {low: 3.0, high: 1.0}",
            "gain_ratio",
            "must not be above high",
        ),
        (
            "gain_ratio: {low: -1.0, high: 1.0}",
            "gain_ratio",
            "low must be a number in 0..10",
        ),
        (
            "gain_ratio: {low: 1.0, hi: 1.0}",
            "gain_ratio",
            "unknown field `hi`",
        ),
        (
            "gain_ratio: {low: 1.0}",
            "gain_ratio",
            "missing field `high`",
        ),
        (
            "gian_ratio: {low: 1.0, high: 2.0}",
            "gian_ratio",
            "unknown field `gian_ratio`",
        ),
        ("samples: 1000", "samples: 1000", "at most 64"),
    ] {
        let replaced = if bad.starts_with("samples") {
            "samples: 8"
        } else {
            "gain_ratio: {low: 1.0, high: 3.0}"
        };
        assert!(base.contains(replaced));
        let text = base.replace(replaced, bad);
        let line = text
            .lines()
            .position(|l| !l.trim_start().starts_with('#') && l.contains(line_of))
            .unwrap()
            + 1;
        let f = temp_file("uncertainty", "bad.yaml", &text);
        let o = scamp(&[
            "check",
            "programs/gauss3x3.scamp",
            "--kernel",
            "programs/gauss3x3.yaml",
            "--noise",
            f.to_str().unwrap(),
            "--uncertainty",
        ]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        let e = stderr(&o);
        let prefix = format!("error: {}:{line}:", f.display());
        assert!(e.starts_with(&prefix) && e.contains(what), "{bad}: {e}");
    }
    // A profile without an uncertainty description cannot give error bars.
    let o = scamp(&[
        "check",
        "programs/gauss3x3.scamp",
        "--kernel",
        "programs/gauss3x3.yaml",
        "--noise",
        "ideal",
        "--uncertainty",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("describes no uncertainty"),
        "{}",
        stderr(&o)
    );
}

fn scamp5_text() -> String {
    scamp::builtin_text("scamp5").unwrap().to_string()
}
