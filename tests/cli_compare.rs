//! `scamp run PROGRAM --compare`: the noise impact of any program, measured against an
//! ideal run of the same program on the same input.

mod common;

use common::{json, scamp, stderr};
use serde_json::Value;

/// `run PROGRAM --compare` with `extra` arguments, as JSON.
fn compare(program: &str, extra: &[&str]) -> Value {
    let mut args = vec!["run", program, "--compare", "--json"];
    args.extend_from_slice(extra);
    json(&scamp(&args))
}

/// Every number anywhere inside `v`.
fn numbers(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Number(n) => out.push(n.as_f64().unwrap_or(f64::NAN)),
        Value::Array(a) => a.iter().for_each(|x| numbers(x, out)),
        Value::Object(o) => o.values().for_each(|x| numbers(x, out)),
        _ => {}
    }
}

fn flipped(v: &Value, reg: &str) -> f64 {
    v["compare"]["registers"][reg]["flipped"]
        .as_f64()
        .unwrap_or_else(|| panic!("no flip fraction for {reg}: {v}"))
}

fn figure(v: &Value, reg: &str, name: &str) -> f64 {
    v["compare"]["registers"][reg][name]
        .as_f64()
        .unwrap_or_else(|| panic!("no {name} for {reg}: {v}"))
}

#[test]
fn compare_under_ideal_is_exactly_zero() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "programs/threshold.scamp",
            &[],
            &["A", "B", "C", "D", "R5", "FLAG"],
        ),
        (
            "programs/analognet2_layer.scamp",
            &[],
            &["A", "B", "C", "D", "E", "F", "R5", "R6", "R7", "FLAG"],
        ),
        (
            "programs/dnews.scamp",
            &[],
            &["A", "B", "C", "D", "R1", "R4", "R5", "R6", "R7", "FLAG"],
        ),
        (
            "programs/gauss3x3.scamp",
            &["--input", "A"],
            &["A", "B", "C", "D"],
        ),
    ];
    for (program, extra, regs) in cases {
        let mut args = vec!["--noise", "ideal", "--images", "images", "--runs", "2"];
        args.extend_from_slice(extra);
        let v = compare(program, &args);
        let c = &v["compare"];
        assert_eq!(c["images"], 8, "{program}");
        assert_eq!(c["runs"], 2, "{program}");
        for r in *regs {
            assert!(c["registers"][r].is_object(), "{program}: {r} missing: {c}");
        }
        let mut all = Vec::new();
        numbers(&c["registers"], &mut all);
        numbers(&c["saturated"], &mut all);
        assert!(all.len() > 10, "{program}");
        assert!(
            all.iter().all(|&x| x == 0.0),
            "{program}: not all zero: {c}"
        );
    }
}

#[test]
fn flip_fractions_lie_strictly_between_0_and_half_and_repeat_with_the_seeds() {
    let cases: &[(&str, &[&str])] = &[
        ("programs/threshold.scamp", &["R5"]),
        ("programs/analognet2_layer.scamp", &["R5", "R6", "R7"]),
    ];
    let seeds = [
        "--images",
        "images",
        "--runs",
        "3",
        "--seed",
        "11",
        "--chip-seed",
        "5",
    ];
    for (program, regs) in cases {
        let v = compare(program, &seeds);
        for r in *regs {
            let f = flipped(&v, r);
            assert!(f > 0.0 && f < 0.5, "{program} {r}: flipped {f}");
            // The spread over three run seeds is there and small next to the mean.
            let s = &v["compare"]["registers"][r]["runs"]["flipped"];
            assert_eq!(s["mean"].as_f64(), Some(f));
            let std = s["std"].as_f64().unwrap_or(f64::NAN);
            assert!(std > 0.0 && std < f / 2.0, "{program} {r}: {s}");
        }
        // FLAG is restored by all() in both runs.
        assert_eq!(flipped(&v, "FLAG"), 0.0);
        // Same seeds, same figures; another run seed, other figures.
        assert_eq!(
            compare(program, &seeds)["compare"],
            v["compare"],
            "{program}"
        );
        let mut other = seeds.to_vec();
        other[5] = "12";
        let w = compare(program, &other);
        assert!(
            regs.iter().any(|r| flipped(&w, r) != flipped(&v, r)),
            "{program}: the run seed changed nothing"
        );
    }
}

#[test]
fn flips_and_difference_maps_match_the_registers_of_two_plain_runs() {
    let dir = common::temp_dir("compare-maps");
    let (noisy, ideal, maps) = (dir.join("noisy"), dir.join("ideal"), dir.join("maps"));
    let prog = "programs/threshold.scamp";
    let plain = |noise: &str, out: &std::path::Path| {
        let o = scamp(&[
            "run",
            prog,
            "--noise",
            noise,
            "--seed",
            "4",
            "--save",
            "A,R5",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    };
    plain("scamp5", &noisy);
    plain("ideal", &ideal);
    let v = compare(
        prog,
        &[
            "--seed",
            "4",
            "--save",
            "A,R5",
            "--out",
            maps.to_str().unwrap(),
        ],
    );
    let bits = |d: &std::path::Path, f: &str| -> ndarray::Array2<u8> {
        ndarray_npy::read_npy(d.join(f)).unwrap()
    };
    let (n5, i5) = (bits(&noisy, "R5.npy"), bits(&ideal, "R5.npy"));
    let xor = ndarray::Zip::from(&n5).and(&i5).map_collect(|a, b| a ^ b);
    let count = xor.iter().filter(|&&b| b == 1).count();
    assert!(count > 0);
    assert_eq!(flipped(&v, "R5"), count as f64 / 65536.0);
    assert_eq!(bits(&maps, "camera_R5.flipped.npy"), xor);
    let png = image::open(maps.join("camera_R5.flipped.png"))
        .unwrap()
        .to_luma8();
    assert!(png.pixels().zip(xor.iter()).all(|(p, &b)| p[0] == 255 * b));
    let vals = |d: &std::path::Path, f: &str| -> ndarray::Array2<f32> {
        ndarray_npy::read_npy(d.join(f)).unwrap()
    };
    let diff = &vals(&noisy, "A.npy") - &vals(&ideal, "A.npy");
    assert_eq!(vals(&maps, "camera_A.diff.npy"), diff);
    let max = diff.iter().fold(0.0f32, |m, d| m.max(d.abs()));
    assert_eq!(figure(&v, "A", "max"), f64::from(max));
    let mean = diff.iter().map(|&d| f64::from(d)).sum::<f64>() / 65536.0;
    assert!((figure(&v, "A", "bias") - mean).abs() < 1e-9);
    assert!(maps.join("camera_A.diff.png").exists());
}

#[test]
fn beyond_counts_pes_over_the_tolerance() {
    let prog = "programs/analognet2_layer.scamp";
    let at = |tol: Option<&str>| {
        let mut args = vec!["--save", "E"];
        if let Some(t) = tol {
            args.extend(["--tolerance", t]);
        }
        let v = compare(prog, &args);
        (
            v["compare"]["tolerance"].as_f64(),
            figure(&v, "E", "beyond"),
        )
    };
    // The default is one step of the scamp5 readout range, -128..127 over 255 steps.
    let (tol, default) = at(None);
    assert_eq!(tol, Some(1.0));
    assert_eq!(at(Some("1")).1, default);
    let (zero, ten, huge) = (at(Some("0")).1, at(Some("10")).1, at(Some("1000")).1);
    assert!(
        zero > default && default > ten && ten > 0.0,
        "{zero} {default} {ten}"
    );
    assert_eq!(huge, 0.0);
}

#[test]
fn analogue_figures_agree_with_check() {
    // Both commands run the same program on the same images with the same chip and run
    // seeds and the same noise streams, and read the result through the same readout
    // path; given check's border, both pool over the same interior. What differs is
    // the reference: check compares against the exact convolution (float64), compare
    // against the ideal run (float32). For these kernels (weights multiples of 1/16 and
    // 1/4 on integer pixels) the float32 ideal run is exact, so the figures agree to
    // the rounding of the sums: 1e-9 relative.
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "programs/gauss3x3_hand.scamp",
            "programs/gauss3x3.yaml",
            &[],
        ),
        (
            "programs/gauss3x3.scamp",
            "programs/gauss3x3.yaml",
            &["--input", "A"],
        ),
        (
            "programs/analognet2.scamp",
            "programs/analognet2.yaml",
            &["--input", "A"],
        ),
    ];
    for (program, spec, extra) in cases {
        let c = json(&scamp(&[
            "check", program, "--kernel", spec, "--runs", "3", "--json",
        ]));
        let border = c["border"].as_u64().unwrap().to_string();
        let mut args = vec!["--images", "images", "--runs", "3", "--border", &border];
        args.extend_from_slice(extra);
        let v = compare(program, &args);
        let kernels = c["kernels"].as_array().unwrap();
        assert!(!kernels.is_empty());
        for k in kernels {
            let out = k["out"].as_str().unwrap();
            for f in ["rmse", "bias", "max"] {
                let want = k["analogue_runs"][f]["mean"].as_f64().unwrap();
                let got = figure(&v, out, f);
                assert!(
                    (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                    "{program} {out} {f}: compare {got}, check {want}"
                );
                let spread = &v["compare"]["registers"][out]["runs"][f]["std"];
                let want = k["analogue_runs"][f]["std"].as_f64().unwrap();
                let got = spread.as_f64().unwrap();
                assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0));
            }
            assert!(figure(&v, out, "rmse") > 0.1, "{program} {out}");
        }
    }
}

#[test]
fn bad_compare_inputs_exit_2() {
    let prog = "programs/threshold.scamp";
    let cases: &[(&[&str], &str)] = &[
        (&["--compare", "--tolerance", "-1"], "--tolerance"),
        (
            &["--compare", "--tolerance", "NaN"],
            "not a finite number >= 0",
        ),
        (
            &["--compare", "--tolerance", "inf"],
            "not a finite number >= 0",
        ),
        (&["--compare", "--tolerance", "x"], "not a number"),
        (&["--tolerance", "1"], "--compare"),
        (&["--images", "images"], "--compare"),
        (
            &[
                "--compare",
                "--images",
                "images",
                "--image",
                "images/camera.png",
            ],
            "cannot be used with",
        ),
        (
            &["--compare", "--images", "no-such-folder"],
            "no-such-folder",
        ),
        (
            &["--compare", "--save", "A,R13"],
            "--save: unknown register `R13`",
        ),
        (&["--save", "G"], "--save: unknown register `G`"),
        (
            &["--compare", "--save", "XN"],
            "--save: unknown register `XN`",
        ),
        (
            &["--compare", "--input", "NEWS"],
            "--input: `NEWS` is not a general register",
        ),
    ];
    for (extra, msg) in cases {
        let mut args = vec!["run", prog];
        args.extend_from_slice(extra);
        let o = scamp(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(msg), "{extra:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{extra:?}");
    }
}

#[test]
fn text_report_lists_every_register_with_its_spread() {
    let o = scamp(&[
        "run",
        "programs/threshold.scamp",
        "--compare",
        "--runs",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let row = |reg: &str| {
        out.lines()
            .rev()
            .find(|l| l.split_whitespace().next() == Some(reg))
            .unwrap_or_else(|| panic!("no row for {reg}:\n{out}"))
            .to_string()
    };
    // Analogue rows carry four figures with their spreads, digital rows one.
    for reg in ["A", "B", "C", "D"] {
        assert_eq!(row(reg).matches("+-").count(), 4, "{}", row(reg));
    }
    for reg in ["R5", "FLAG"] {
        assert_eq!(row(reg).matches("+-").count(), 1, "{}", row(reg));
    }
    assert!(out.contains("beyond") && out.contains("flipped"), "{out}");
}

#[test]
fn input_preloads_the_full_range_image() {
    let prog = common::temp_file("compare-input", "copy.scamp", "mov(B, A)\n");
    let dir = common::temp_dir("compare-input").join("out");
    let o = scamp(&[
        "run",
        prog.to_str().unwrap(),
        "--noise",
        "ideal",
        "--input",
        "A",
        "--image",
        "images/coffee.png",
        "--save",
        "B",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let b: ndarray::Array2<f32> = ndarray_npy::read_npy(dir.join("B.npy")).unwrap();
    let img = image::open("images/coffee.png").unwrap().to_luma8();
    assert_eq!(img.dimensions(), (256, 256));
    for ((r, c), v) in b.indexed_iter() {
        assert_eq!(*v, f32::from(img.get_pixel(c as u32, r as u32)[0]) - 128.0);
    }
}
