//! The compile-time input model is the bundled images' moments: the constants in
//! `verify::predict` are those of `images/`, and with them the predicted analogue error
//! of every bundled spec's program is within 25 % of what `check` measures.

use super::repo;
use crate::verify::{
    input_values, load_images, InputStats, IMAGE_BORDER, IMAGE_LAGS, IMAGE_MEAN, IMAGE_REACH,
};

#[test]
fn bundled_image_moments_are_the_images() {
    let dir = repo().join("images");
    let images = load_images(&dir).expect("images");
    let xs: Vec<_> = images.iter().map(|(_, g)| input_values(g)).collect();
    let s = InputStats::of_images(&xs, IMAGE_BORDER, IMAGE_REACH);
    let r = IMAGE_REACH as i32;
    let mut table = String::new();
    let mut lags = Vec::new();
    for dr in 0..=r {
        for dc in -r..=r {
            if dr == 0 && dc < 0 {
                continue;
            }
            let m = s.lags[&(dr, dc)];
            table += &format!("    ({dr}, {dc}, {m:.4}),\n");
            lags.push((dr, dc, m));
        }
    }
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-4 * b.abs().max(1.0);
    let same = close(s.mean, IMAGE_MEAN)
        && lags.len() == IMAGE_LAGS.len()
        && lags
            .iter()
            .zip(IMAGE_LAGS)
            .all(|(a, b)| a.0 == b.0 && a.1 == b.1 && close(a.2, b.2));
    assert!(same, "IMAGE_MEAN: {:.6}\nIMAGE_LAGS:\n{table}", s.mean);
}

/// Per bundled spec (`programs/NAME.yaml` with its program `programs/NAME.scamp`), the
/// compile-time prediction of each kernel's analogue RMSE (the default input model)
/// and what `check` measures under `scamp5` on the bundled images.
fn predicted_and_measured() -> Vec<(String, f64, f64)> {
    use crate::bank::Bank;
    use crate::isa::{parse_program, Device};
    use crate::sim::noise::Profile;
    use crate::verify::ProfileTestbed;
    use crate::CheckOptions;
    let root = repo();
    let images: Vec<_> = load_images(&root.join("images"))
        .expect("images")
        .into_iter()
        .map(|(_, g)| g)
        .collect();
    let profile = Profile::builtin("scamp5").expect("scamp5");
    let testbed = ProfileTestbed {
        profile: profile.clone(),
        chip_seed: 1,
        seed: 1,
    };
    let opts = CheckOptions::new("scamp5");
    let mut specs: Vec<_> = std::fs::read_dir(root.join("programs"))
        .expect("programs")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "yaml") && p.with_extension("scamp").exists()
        })
        .collect();
    specs.sort();
    let mut rows = Vec::new();
    for path in specs {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_string();
        let spec = crate::cain::parse_spec(&std::fs::read_to_string(&path).expect("spec"))
            .expect("a spec");
        let text = std::fs::read_to_string(path.with_extension("scamp")).expect("program");
        let program = parse_program(&text, Device::default()).expect("parses");
        let stats = crate::cain::input_stats(spec.input_range);
        let outs = spec.outputs();
        let predicted = crate::cain::predict_outputs(
            &program,
            crate::isa::Wiring::new(spec.input, spec.general_count()),
            &outs,
            &profile,
            &stats,
        )
        .expect("predicts");
        let bank = Bank::with_kernels(program, &text, spec).expect("bank");
        let report = bank.check(&images, &testbed, &opts).expect("checks").report;
        let v = serde_json::to_value(&report).expect("json");
        for (i, p) in predicted.iter().enumerate() {
            let measured = v["kernels"][i]["sources"]["analogue"]["rmse"]
                .as_f64()
                .expect("measured analogue rmse");
            rows.push((format!("{name}[{i}]"), p.rmse, measured));
        }
    }
    rows
}

#[test]
fn compile_time_prediction_is_within_a_quarter_of_the_measured_error() {
    let rows = predicted_and_measured();
    assert!(rows.len() >= 9, "{rows:?}");
    let table: String = rows
        .iter()
        .map(|(n, p, m)| {
            format!(
                "{n:20} predicted {p:8.3} measured {m:8.3} ratio {:.3}\n",
                p / m
            )
        })
        .collect();
    for (name, p, m) in &rows {
        assert!(*m > 0.0, "{name}: nothing measured\n{table}");
        assert!(
            (p / m - 1.0).abs() <= 0.25,
            "{name} off by more than 25 %\n{table}"
        );
    }
    println!("{table}");
}
