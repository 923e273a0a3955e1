//! Error bars: the profile's uncertainty description, the ensemble drawn from it (each
//! member checked against both device experiments) and `check --uncertainty`.

mod common;
use common::{json, scamp, stderr, temp_file};
use scamp::{BusKind, Parameter, Profile};

use scamp::{identity, identity::Setup};

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
fn the_ensemble_is_deterministic_and_keeps_the_measured_combinations() {
    let p = Profile::builtin("scamp5").unwrap();
    let a = scamp::ensemble(&p).unwrap();
    let b = scamp::ensemble(&p).unwrap();
    assert_eq!(a, b);
    let u = p.uncertainty.as_ref().unwrap();
    assert_eq!(a.len(), 1 + 2 * 6 + u.samples as usize);
    assert!(a[0].values.is_empty() && a[0].profile == p && a[0].rejected.is_none());
    for m in &a {
        for (key, v) in &m.values {
            let k = Parameter::ALL.iter().find(|k| k.key() == *key).unwrap();
            let r = u.range(*k).unwrap();
            assert!(r.low <= *v && *v <= r.high);
        }
        let t = &m.profile.transfer;
        // bus2's offset excess over bus and the kernel's first-order loss are kept.
        let excess = t.bus2.offset - t.bus_1.offset;
        assert!((excess - p.transfer.bus2.offset).abs() < 1e-9);
        let loss = 5.5 * t.bus_1.gain + t.bus2.gain;
        assert!((loss - (5.5 * p.transfer.bus_1.gain + p.transfer.bus2.gain)).abs() < 1e-12);
        // An accepted member reproduces the identity-kernel measurement.
        if m.rejected.is_none() {
            let rows = identity::compare(&m.profile, &[0, 120], 32, Setup::default()).unwrap();
            assert!(identity::holds(&rows));
        }
    }
}

#[test]
fn parameters_move_the_profile_as_documented() {
    let p = Profile::builtin("scamp5").unwrap();
    let q = Parameter::PlainOffset.apply(&p, -1.0);
    assert_eq!(q.transfer.bus_1.offset, -1.0);
    assert!((q.transfer.bus2.offset - (p.transfer.bus2.offset - 1.0)).abs() < 1e-12);
    let q = Parameter::GainRatio.apply(&p, 1.0);
    assert_eq!(q.transfer.kind(BusKind::Half).gain, q.transfer.bus_1.gain);
    let q = Parameter::CaptureScale.apply(&p, 0.0);
    assert_eq!(q.capture, Default::default());
    // The nominal values reproduce the profile.
    for k in Parameter::ALL {
        let q = k.apply(&p, k.nominal(&p));
        for ((_, a), (_, b)) in q.transfer.all().iter().zip(p.transfer.all().iter()) {
            assert!((a.gain - b.gain).abs() < 1e-12 && (a.offset - b.offset).abs() < 1e-12);
            assert!((a.noise - b.noise).abs() < 1e-12 && (a.pattern - b.pattern).abs() < 1e-12);
        }
    }
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
