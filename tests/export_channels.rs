//! `scamp export` of a spec over several inputs: the device captures the scene into
//! the first input and copies it into the others, as `scamp check` gives every input
//! its one image, so the golden outputs under `ideal` equal check's outputs and
//! `scamp run`'s bit for bit; a program that captures the image itself would leave the
//! other inputs unloaded and is refused.

mod common;

use common::channels::THREE;
use common::{json, refused, scamp, stderr, temp_dir};
use std::path::Path;

/// The three-input set on a work budget, and its compiled program, written into `dir`.
fn three_in(dir: &Path) -> (String, String) {
    let spec = dir.join("three.yaml");
    std::fs::write(
        &spec,
        format!("{THREE}search: {{ work: 1000, workers: 1 }}\n"),
    )
    .expect("written");
    let spec = spec.to_string_lossy().into_owned();
    let c = json(&scamp(&["compile", &spec, "--json"]));
    let program = dir.join("three.scamp");
    std::fs::write(&program, c["program"].as_str().expect("program")).expect("written");
    (spec, program.to_string_lossy().into_owned())
}

/// A folder holding one bundled picture, and the picture's name.
fn one_image(dir: &Path) -> (String, String) {
    let one = dir.join("one");
    std::fs::create_dir_all(&one).expect("folder");
    let name = "camera";
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("images/{name}.png")),
        one.join(format!("{name}.png")),
    )
    .expect("a bundled picture");
    (one.to_string_lossy().into_owned(), name.to_string())
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The float32 values of a version-1 `.npy` file.
fn values(path: &Path) -> Vec<f32> {
    let bytes = read(path);
    let header = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    bytes[10 + header..]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[test]
fn a_three_input_spec_exports_and_its_golden_outputs_equal_check_and_run() {
    let dir = temp_dir("export-channels");
    let (spec, program) = three_in(&dir);
    let (images, name) = one_image(&dir);
    let (cpp, gold) = (dir.join("three.cpp"), dir.join("gold"));
    let e = json(&scamp(&[
        "export",
        &program,
        "--kernel",
        &spec,
        "--images",
        &images,
        "-o",
        cpp.to_str().unwrap(),
        "--golden",
        gold.to_str().unwrap(),
        "--force",
        "--json",
    ]));
    assert_eq!(e["blocks"], 1);
    // One capture into A, copied into B and C, before the proven statements.
    let text = std::fs::read_to_string(&cpp).expect("written");
    let capture = text
        .split("// capture: the image the block starts from\n")
        .nth(1)
        .expect("a capture");
    let lines: Vec<&str> = capture.lines().map(str::trim).take(5).collect();
    assert_eq!(
        lines,
        [
            "scamp5_kernel_begin();",
            "get_image(A, B);",
            "mov(B, A);",
            "mov(C, A);",
            "scamp5_kernel_end();"
        ]
    );
    assert!(text.contains(
        "inputs A, B, C, each holding the camera's image (captured into A, copied into B, C)"
    ));
    // check on the same picture: every input sees it (frame_indices(0, 1, 3) = [0, 0, 0]).
    let out = dir.join("check-out");
    let o = scamp(&[
        "check",
        &program,
        "--kernel",
        &spec,
        "--images",
        &images,
        "--noise",
        "ideal",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let index: serde_json::Value =
        serde_json::from_slice(&read(&gold.join("index.json"))).expect("index");
    let sample = &index["samples"][0];
    assert_eq!(sample["name"], name.as_str());
    let block = &sample["blocks"][0];
    let frame = dir.join("frame.scamp");
    std::fs::write(&frame, block["program"].as_str().expect("program")).expect("written");
    let run = dir.join("run");
    let o = scamp(&[
        "run",
        frame.to_str().unwrap(),
        "--image",
        &format!("{images}/{name}.png"),
        "--noise",
        "ideal",
        "--out",
        run.to_str().unwrap(),
        "--save",
        "D,E",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for reg in ["D", "E"] {
        let golden = gold.join(block["planes"]["ideal"][reg].as_str().expect(reg));
        let read_back = gold.join(sample["readout"]["ideal"][reg].as_str().expect(reg));
        // The golden files are `scamp run` of the exported frame, bit for bit.
        assert!(
            read(&golden) == read(&run.join(format!("{reg}.npy"))),
            "{reg}: scamp run differs"
        );
        assert!(read(&golden) == read(&read_back), "{reg}: readout differs");
        // check preloads every input with p - 128 where the frame captures and copies
        // it: every value is the same (a zero may carry the other sign, -0 == 0).
        let checked = values(&out.join(format!("{name}_{reg}.result.npy")));
        let golden = values(&golden);
        assert_eq!(golden.len(), 256 * 256);
        assert!(
            golden == checked,
            "{reg}: golden plane and check's output differ"
        );
        assert!(golden.iter().any(|v| *v != 0.0), "{reg}: an empty plane");
    }
}

#[test]
fn a_spec_of_three_inputs_exports_with_one_capture_copied() {
    let dir = temp_dir("export-channels-spec");
    let spec = dir.join("three.yaml");
    std::fs::write(
        &spec,
        format!("{THREE}search: {{ work: 1000, workers: 1 }}\n"),
    )
    .expect("written");
    let cpp = dir.join("three.cpp");
    json(&scamp(&[
        "export",
        spec.to_str().unwrap(),
        "-o",
        cpp.to_str().unwrap(),
        "--force",
        "--json",
    ]));
    let text = std::fs::read_to_string(&cpp).expect("written");
    let at = |s: &str| {
        text.find(s)
            .unwrap_or_else(|| panic!("no `{s}` in:\n{text}"))
    };
    assert!(at("get_image(A, B);") < at("mov(B, A);"));
    assert!(at("mov(B, A);") < at("mov(C, A);"));
    assert_eq!(text.matches("get_image(").count(), 1);
}

#[test]
fn a_program_of_several_inputs_that_captures_itself_is_refused() {
    let dir = temp_dir("export-channels-captured");
    let spec = dir.join("two.yaml");
    std::fs::write(
        &spec,
        "name: two\ninputs: [A, B]\nregisters: [A, B, C, D]\nkernels:\n  - out: C\n    \
         weights:\n      - [[1]]\n      - [[1]]\n",
    )
    .expect("written");
    let program = dir.join("cap.scamp");
    std::fs::write(&program, "get_image(A, D);\nadd(C, A, B);\n").expect("written");
    let (cpp, gold) = (dir.join("cap.cpp"), dir.join("gold"));
    // It proves (the capture gives A plane 0's image), and check passes ...
    let o = scamp(&[
        "check",
        program.to_str().unwrap(),
        "--kernel",
        spec.to_str().unwrap(),
        "--noise",
        "ideal",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // ... but on the device B would never be loaded.
    let o = scamp(&[
        "export",
        program.to_str().unwrap(),
        "--kernel",
        spec.to_str().unwrap(),
        "-o",
        cpp.to_str().unwrap(),
        "--golden",
        gold.to_str().unwrap(),
    ]);
    refused(
        &o,
        &[
            "cap.scamp: the program captures the image itself into A, so its other inputs B \
             would never be loaded on the device",
            "export the network the layer belongs to",
        ],
    );
    assert_eq!(stderr(&o).trim().lines().count(), 1);
    assert!(!cpp.exists() && !gold.exists());
}
