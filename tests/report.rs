//! The HTML pages without a browser: what the step-through page embeds (every bus
//! instruction, planes that decode to the simulated values, both runs) and what the
//! check report contains, for passing and failing proofs.

mod common;

use base64::Engine;
use common::{scamp, stderr, temp_dir};
use scamp::{isa::parse_program, isa::Device};
use scamp::{Array, EdgeMode};
use scamp::{NoiseModel, Profile};
use scamp_cli::report::planes::{quantise_analogue, TRACE_SIDE};
use scamp_cli::report::{trace_page, TraceInput};
use serde_json::Value;

/// The JSON the step-through page embeds.
fn embedded(html: &str) -> Value {
    let open = "<script id=\"trace-data\" type=\"application/json\">";
    let start = html.find(open).expect("embedded data") + open.len();
    let end = html[start..].find("</script>").unwrap() + start;
    serde_json::from_str(&html[start..end]).expect("valid JSON")
}

/// The bytes of `plane` at `step` in one run: its latest key frame at or before it.
fn frame_at(run: &Value, plane: &str, step: u64) -> Vec<u8> {
    let frames = run["planes"][plane].as_array().unwrap();
    let f = frames
        .iter()
        .rfind(|f| f[0].as_u64().unwrap() <= step)
        .expect("a frame at step 0");
    match &f[1] {
        Value::Number(n) => vec![n.as_u64().unwrap() as u8; TRACE_SIDE * TRACE_SIDE],
        Value::String(s) => base64::engine::general_purpose::STANDARD.decode(s).unwrap(),
        v => panic!("unexpected frame {v}"),
    }
}

fn page_for(source: &str, noise: &str, pe: (usize, usize)) -> (String, Array) {
    let program = parse_program(source, Device::default()).unwrap();
    let fresh = || {
        let mut a = Array::new(6, EdgeMode::Zero);
        a.expose(&scamp::default_image().pixels);
        a
    };
    let mut noisy = fresh();
    let profile = Profile::builtin(noise).unwrap();
    noisy.set_layer(NoiseModel::new(&profile, 1, 1));
    let html = trace_page(TraceInput {
        title: "t.scamp",
        source,
        program: &program,
        ideal: fresh(),
        noisy,
        noise,
        pe,
        clock_hz: scamp::DEFAULT_CLOCK_HZ,
    })
    .unwrap();
    let mut reference = fresh();
    scamp::run(&mut reference, &program, 1, scamp::DEFAULT_CLOCK_HZ).unwrap();
    (html, reference)
}

#[test]
fn trace_page_embeds_every_bus_instruction_and_the_simulated_planes() {
    let source = "get_image(A, D);\nin(B, 42);\ndivq(C, B);\nmovx(E, A, east);\n";
    let (html, reference) = page_for(source, "scamp5", (3, 250));
    let d = embedded(&html);
    let steps = d["steps"].as_array().unwrap();
    // 6 + 3 (dac, two transfers) + 2 + 2 bus instructions, one step each.
    assert_eq!(steps.len(), 13);
    assert_eq!(steps.last().unwrap()[5].as_u64(), Some(12), "cycles so far");
    assert_eq!(steps[6][2], "dac(42)");
    assert_eq!(steps[7][0].as_u64(), Some(2), "line of in()");
    assert_eq!(d["lines"].as_array().unwrap().len(), 4);
    // The ideal run's planes at the last step are the simulated planes, quantised.
    let ideal = &d["runs"][0];
    for reg in ["A", "B", "C", "D", "E"] {
        let r = scamp::isa::Reg::parse(reg).unwrap();
        let want = quantise_analogue(reference.plane(r).unwrap(), TRACE_SIDE);
        assert_eq!(frame_at(ideal, reg, 13), want, "{reg}");
    }
    assert_eq!(frame_at(ideal, "C", 13)[0], 128 + 21);
    // Before the divq ran, C was still 0.
    assert!(frame_at(ideal, "C", 9).iter().all(|&v| v == 128));
    // The PE table is exact, and the noisy run differs from it.
    let last_pe = &ideal["pe"][13];
    assert_eq!(last_pe[2].as_f64(), Some(21.0));
    assert_eq!(last_pe[1].as_f64(), Some(42.0));
    let noisy_pe = &d["runs"][1]["pe"][13];
    assert_ne!(noisy_pe[2].as_f64(), Some(21.0));
    assert_ne!(frame_at(&d["runs"][1], "A", 13), frame_at(ideal, "A", 13));
    // The difference row is noisy minus ideal: C = 21 plus the error of two transfers
    // and a halving, a small offset, never the full value.
    let diff: Vec<u8> = {
        let frames = d["runs"][1]["diff"]["C"].as_array().unwrap();
        let f = frames
            .iter()
            .rfind(|f| f[0].as_u64().unwrap() <= 13)
            .unwrap();
        match &f[1] {
            Value::Number(n) => vec![n.as_u64().unwrap() as u8],
            Value::String(s) => base64::engine::general_purpose::STANDARD.decode(s).unwrap(),
            v => panic!("{v}"),
        }
    };
    assert!(
        diff.iter().all(|&v| (120..=136).contains(&v)),
        "{:?}",
        &diff[..8]
    );
    assert!(diff.iter().any(|&v| v != 128));
    // Writes through a view are marked as writes of NEWS.
    assert_eq!(steps[11][6], serde_json::json!(["NEWS"]));
}

#[test]
fn trace_page_under_ideal_shows_two_equal_runs() {
    let (html, _) = page_for("in(A, 5);\nneg(B, A);\n", "ideal", (0, 0));
    let d = embedded(&html);
    assert_eq!(d["runs"][0]["planes"], d["runs"][1]["planes"]);
    assert_eq!(d["runs"][1]["name"], "ideal");
    for frames in d["runs"][1]["diff"].as_object().unwrap().values() {
        assert_eq!(
            frames,
            &serde_json::json!([[0, 128]]),
            "no difference, ever"
        );
    }
    assert_eq!(frame_at(&d["runs"][0], "B", 5)[0], 128 - 5);
}

#[test]
fn trace_html_flag_writes_a_page_and_checks_its_options() {
    let dir = temp_dir("report-trace");
    let page = dir.join("p.html");
    let o = scamp(&[
        "trace",
        "programs/gauss3x3_hand.scamp",
        "--html",
        page.to_str().unwrap(),
        "--noise",
        "ideal",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let d = embedded(&std::fs::read_to_string(&page).unwrap());
    assert_eq!(d["pe"], serde_json::json!([128, 128]));
    assert_eq!(d["steps"].as_array().unwrap().len(), 26);
    let o = scamp(&[
        "trace",
        "programs/gauss3x3_hand.scamp",
        "--html",
        "x.html",
        "--input",
        "NEWS",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--input NEWS"), "{}", stderr(&o));
    let o = scamp(&["trace", "programs/gauss3x3_hand.scamp"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--pe"), "{}", stderr(&o));
}

#[test]
fn check_report_holds_proof_table_and_four_pictures_per_image() {
    let dir = temp_dir("report-check");
    let page = dir.join("c.html");
    let images = dir.join("images");
    std::fs::create_dir_all(&images).unwrap();
    for name in ["camera.png", "brick.png"] {
        std::fs::copy(format!("images/{name}"), images.join(name)).unwrap();
    }
    let o = scamp(&[
        "check",
        "programs/sobel_xy.scamp",
        "--kernel",
        "programs/sobel_xy.yaml",
        "--noise",
        "ideal",
        "--images",
        images.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("proof: exact"));
    // Two kernels, two images, four pictures each, all inline.
    assert_eq!(html.matches("<img ").count(), 2 * 2 * 4);
    assert_eq!(html.matches("src=\"data:image/png;base64,").count(), 16);
    assert!(!html.contains("http://") && !html.contains("https://"));
    // Exact arithmetic: every analogue error is zero.
    assert!(html.contains("<td>analogue</td><td class=\"num\">0.000</td>"));
    assert_eq!(html.matches("<table class=\"kernel-grid\">").count(), 2);

    let o = scamp(&[
        "check",
        "programs/gauss3x3_wrong.scamp",
        "--kernel",
        "programs/gauss3x3.yaml",
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("proof: FAILED"));
    assert!(html.contains("offset (row +0, col -1): expected 1/8, computed 1/4"));
    assert_eq!(html.matches("<img ").count(), 0);
}
