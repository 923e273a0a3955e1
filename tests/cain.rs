//! `scamp compile` and `scamp check` on specs: malformed specs are refused with positions
//! and exit 2, the JSON report has the contract fields, and the committed smooth filters
//! barely saturate on the bundled images. The generator's own tests (proofs of what it
//! makes, its search) are in the library (`crates/scamp/src/cain/tests/`).

mod common;

use common::{json, scamp, stderr};

#[test]
fn cli_rejects_malformed_specs_with_positions() {
    let dir = std::env::temp_dir().join(format!("scamp-cain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cases = [
        (
            "ragged.yaml",
            "kernels:\n  - out: A\n    weights:\n      - [1, 2]\n      - [3]\n",
            ":5:9: ragged",
        ),
        (
            "reg.yaml",
            "registers: [A, B]\nkernels:\n  - { out: C, weights: [[1]] }\n",
            ":3:12: output register C",
        ),
        ("syntax.yaml", "kernels: [\n", ":"),
        (
            "nan.yaml",
            "kernels:\n  - { out: A, weights: [[1, .inf]] }\n",
            ":2:29: a weight must be finite",
        ),
    ];
    for (file, text, want) in cases {
        let path = dir.join(file);
        std::fs::write(&path, text).expect("write");
        let out = scamp(&[
            "compile",
            path.to_str().unwrap_or_default(),
            "--time-limit",
            "1",
        ]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{file}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(want),
            "{file}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_json_has_the_contract_fields() {
    let out = scamp(&[
        "compile",
        "programs/sobel_x.yaml",
        // The spec's work budget ends the search in well under a second; the generous
        // limit only keeps a busy machine from cutting it short.
        "--time-limit",
        "60",
        "--workers",
        "1",
        "--objective",
        "length",
        "--json",
    ]);
    let v = json(&out);
    assert_eq!(v["instructions"], 5);
    assert!(v["cycles"].as_u64().is_some());
    assert!(v["program"].as_str().is_some_and(|p| p.contains("subx")));
    assert_eq!(v["kernels"][0]["out"], "A");
    assert_eq!(v["kernels"][0]["depth"], 0);
    assert_eq!(
        v["kernels"][0]["approximated"][1],
        serde_json::json!([-2, 0, 2])
    );
    // Within the spec's deterministic work budget (nodes per worker) the search covers
    // its whole space: 5 is the shortest this generator can make.
    assert_eq!(v["search"]["stopped_by"], "exhausted");
    assert_eq!(v["search"]["work"], 20000);
    for k in ["nodes", "seconds_to_best", "seconds", "plans_found"] {
        assert!(v["search"][k].is_number(), "search.{k}");
    }
    // Children taken per generator rule, by the rules' names: the library's counts for
    // the same compile, whose keys the library's own tests hold to the rules' names
    // (cain/tests/rules.rs); Sobel's differences are made by folds (G = P - moved P).
    let rules = v["search"]["rules"].as_object().expect("search.rules");
    let spec = scamp::parse_spec(&std::fs::read_to_string("programs/sobel_x.yaml").unwrap())
        .expect("valid spec");
    let opts = scamp::CompileOptions::default()
        .with_time_limit(60.0)
        .with_workers(1)
        .with_objective(scamp::Objective::Length);
    let c = scamp::compile(&spec, &opts, &scamp::Stats::default()).expect("compiles");
    assert_eq!(
        v["search"]["rules"],
        serde_json::to_value(&c.search.rules).unwrap()
    );
    for (name, n) in rules {
        assert!(n.as_u64().is_some_and(|n| n > 0), "{name}: {n}");
    }
    assert!(rules.contains_key("fold_difference"), "{rules:?}");
}

#[test]
fn committed_smooth_filters_barely_saturate_on_the_images() {
    // The error objective keeps intermediates in range: under `scamp5`, on the bundled
    // images, at most 0.5 % of PE-images clip while these programs run (values that sit
    // at the limit may still be pushed over it by noise).
    for name in [
        "gauss3x3",
        "gauss3x3_basic",
        "gauss5x5",
        "gauss5x5_3x3",
        "box7x7",
    ] {
        let out = scamp(&[
            "check",
            &format!("programs/{name}.scamp"),
            "--kernel",
            &format!("programs/{name}.yaml"),
            "--json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let v = json(&out);
        let share = v["saturated_share"].as_f64().expect("saturated_share");
        assert!(share <= 0.005, "{name}: {:.3} % saturated", 100.0 * share);
    }
}
