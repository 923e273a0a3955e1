//! `scamp export`: the exported C++ of every bundled program, spec and network compiles
//! with `g++ -std=c++17 -Wall -Werror` against the test header tests/export/scamp5_mock.hpp
//! (ours, written from the vendor API's public names), and running it replays exactly
//! the proven program, block by block; the exported head classifies the golden features
//! as `scamp eval` does; golden outputs equal `scamp run`; bad input is refused before
//! anything is written. `.ci/run` installs `g++` when it is missing.

mod common;

use common::dataset::write_idx;
use common::network::write_refs;
use common::{json, refused, scamp, stderr, temp_dir};
use scamp::Bank;
use scamp::{isa::parse_program, isa::Device, isa::Operand, isa::Program, isa::Reg, isa::Stmt};
use scamp::{CompileOptions, Stats};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Compiles `cpp` against the mock header into an executable next to it.
fn compile(cpp: &Path) -> PathBuf {
    let dir = cpp.parent().unwrap();
    let header = root().join("tests/export/scamp5_mock.hpp");
    std::fs::write(
        dir.join("scamp5.hpp"),
        format!("#include \"{}\"\n", header.display()),
    )
    .unwrap();
    let exe = cpp.with_extension("bin");
    let o = Command::new("g++")
        .args(["-std=c++17", "-Wall", "-Werror", "-ffp-contract=off", "-I"])
        .arg(dir)
        .arg(cpp)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("g++ runs (.ci/run installs it: apt-get install -y g++)");
    assert!(
        o.status.success(),
        "{}: {}",
        cpp.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    exe
}

/// Runs the exported program for `frames` frames and returns the mock's log.
fn replay(exe: &Path, frames: u32, golden: Option<&Path>) -> String {
    replay_scanning(exe, frames, golden, "rows")
}

/// [`replay`] with the mock's event scan order (`rows` or `reverse`).
fn replay_scanning(exe: &Path, frames: u32, golden: Option<&Path>, scan: &str) -> String {
    let log = exe.with_extension("log");
    let mut c = Command::new(exe);
    c.env("SCAMP5_MOCK_LOG", &log)
        .env("SCAMP5_MOCK_FRAMES", frames.to_string())
        .env("SCAMP5_MOCK_SCAN", scan);
    if let Some(g) = golden {
        c.env("SCAMP5_MOCK_GOLDEN", g);
    }
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "{}: {}",
        exe.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::read_to_string(log).unwrap()
}

/// One frame of the log: its statements (parsed by scamp's own parser), the statement
/// counts at which a kernel block ended, and the readouts with the count before them.
struct Frame {
    program: Program,
    kernel_ends: Vec<usize>,
    outputs: Vec<(usize, String)>,
    text: Vec<String>,
}

fn frames(log: &str) -> Vec<Frame> {
    let mut out = Vec::new();
    for chunk in log.split("// host: frame ").skip(1) {
        let body: String = chunk.lines().skip(1).map(|l| format!("{l}\n")).collect();
        let program = parse_program(&body, Device::default()).expect("the log parses");
        let (mut n, mut kernel_ends, mut outputs, mut text) =
            (0, Vec::new(), Vec::new(), Vec::new());
        for l in body.lines() {
            if l == "scamp5_kernel_end();" {
                kernel_ends.push(n);
            } else if let Some(r) = l.strip_prefix("// host: output ") {
                outputs.push((n, r.split(' ').next().unwrap().to_string()));
            } else if let Some(t) = l.strip_prefix("// text: ") {
                text.push(t.to_string());
            } else if !l.starts_with("//") && l != "scamp5_kernel_begin();" {
                n += 1;
            }
        }
        out.push(Frame {
            program,
            kernel_ends,
            outputs,
            text,
        });
    }
    out
}

/// Same instruction: the same expansion into bus instructions and the same operands
/// (`scamp5_in(A, 5)` on the host is `in(A, 5)` in the program).
fn same(a: &Stmt, b: &Stmt) -> bool {
    a.ops == b.ops
        && a.args
            .iter()
            .map(ToString::to_string)
            .eq(b.args.iter().map(ToString::to_string))
}

/// Asserts that each frame of `log` replays `groups` block by block: the capture before
/// a group that does not capture itself, the group's statements exactly, a kernel block
/// ending with the group, and the group's outputs read back right after it.
fn assert_replays(what: &str, log: &str, groups: &[(Program, Vec<Reg>)], input: Option<Reg>) {
    let fs = frames(log);
    assert_eq!(fs.len(), 2, "{what}: two frames");
    for f in &fs {
        let got = &f.program.stmts;
        let mut at = 0;
        for (g, (program, outs)) in groups.iter().enumerate() {
            let captures = program
                .stmts
                .first()
                .is_some_and(|s| s.def.name == "get_image");
            if let (false, Some(input)) = (captures, input) {
                let c = &got[at];
                assert_eq!(
                    c.def.name,
                    "get_image",
                    "{what}: capture of group {}",
                    g + 1
                );
                assert_eq!(
                    c.args[0],
                    Operand::Reg(input),
                    "{what}: capture into the input"
                );
                // The capture is its own kernel block: `get_image(input, scratch)`, and
                // `res(scratch)` when the group reads the scratch before writing it.
                let end = *f.kernel_ends.iter().find(|&&e| e > at).unwrap();
                if end == at + 2 {
                    let reset = format!("res({})", c.args[1]);
                    assert_eq!(got[at + 1].to_string(), reset, "{what}");
                } else {
                    assert_eq!(end, at + 1, "{what}: the capture is its own block");
                }
                at = end;
            }
            let n = program.stmts.len();
            assert!(got.len() >= at + n, "{what}: group {} is cut short", g + 1);
            for (i, (a, b)) in got[at..at + n].iter().zip(&program.stmts).enumerate() {
                assert!(
                    same(a, b),
                    "{what}: group {}, statement {}: `{a}` is not `{b}`",
                    g + 1,
                    i + 1
                );
            }
            at += n;
            assert!(
                f.kernel_ends.contains(&at),
                "{what}: a kernel block ends with group {}",
                g + 1
            );
            for r in outs {
                assert!(
                    f.outputs.contains(&(at, r.to_string())),
                    "{what}: {r} is read back after group {}: {:?}",
                    g + 1,
                    f.outputs
                );
            }
        }
        assert_eq!(at, got.len(), "{what}: nothing beyond the proven program");
    }
}

fn export(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["export", "--json"];
    all.extend(args);
    json(&scamp(&all))
}

fn spec(path: &Path) -> scamp::Spec {
    scamp::parse_spec(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn groups_of(bank: &Bank) -> Vec<(Program, Vec<Reg>)> {
    bank.groups()
        .iter()
        .map(|(p, m)| {
            (
                p.clone(),
                m.iter().map(|&k| bank.kernels()[k].out).collect(),
            )
        })
        .collect()
}

fn bundled(ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("programs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

fn export_and_replay(dir: &Path, target: &Path, extra: &[&str]) -> String {
    let out = dir.join(format!(
        "{}.cpp",
        target.file_stem().unwrap().to_string_lossy()
    ));
    let mut args = vec![
        target.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--force",
    ];
    args.extend(extra);
    let r = export(&args);
    let e = &r["energy"];
    assert_eq!(
        r["cycles"],
        e["analogue_cycles"].as_u64().unwrap()
            + e["digital_cycles"].as_u64().unwrap()
            + e["control_cycles"].as_u64().unwrap()
    );
    replay(&compile(&out), 2, None)
}

#[test]
fn every_bundled_program_replays_exactly() {
    let dir = temp_dir("export-programs");
    for p in bundled("scamp") {
        if p.ends_with("gauss3x3_wrong.scamp") {
            continue;
        }
        let log = export_and_replay(&dir, &p, &[]);
        let program =
            parse_program(&std::fs::read_to_string(&p).unwrap(), Device::default()).unwrap();
        let outs = program.written_registers();
        assert_replays(&p.display().to_string(), &log, &[(program, outs)], None);
    }
}

#[test]
fn every_bundled_spec_compiles_and_replays_its_proven_program() {
    let dir = temp_dir("export-specs");
    for s in bundled("yaml")
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with("_net.yaml"))
    {
        // A small deterministic budget: the same program in the command and here.
        let log = export_and_replay(&dir, &s, &["--work", "500"]);
        let sp = spec(&s);
        let opts = CompileOptions::default().with_work(500);
        let bank = Bank::compile(sp.clone(), &opts, &Stats::default()).unwrap();
        assert!(bank.prove().unwrap().verified);
        assert_replays(
            &s.display().to_string(),
            &log,
            &groups_of(&bank),
            Some(sp.input),
        );
    }
}

#[test]
fn every_bundled_program_with_its_spec_is_proven_and_replays() {
    let dir = temp_dir("export-pairs");
    for s in bundled("yaml")
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with("_net.yaml"))
    {
        let p = s.with_extension("scamp");
        if !p.exists() {
            continue;
        }
        let log = export_and_replay(&dir, &p, &["--kernel", s.to_str().unwrap()]);
        let sp = spec(&s);
        let source = std::fs::read_to_string(&p).unwrap();
        let program = parse_program(
            &source,
            Device {
                general: sp.general_count(),
            },
        )
        .unwrap();
        let bank = Bank::with_kernels(program, &source, sp.clone()).unwrap();
        assert!(bank.prove().unwrap().verified, "{}", p.display());
        assert_replays(
            &p.display().to_string(),
            &log,
            &groups_of(&bank),
            Some(sp.input),
        );
    }
}

#[test]
fn the_energy_figure_is_the_cycles_at_the_published_pj_per_op() {
    let out = temp_dir("export-energy").join("g.cpp");
    let r = export(&[
        "programs/gauss3x3.yaml",
        "-o",
        out.to_str().unwrap(),
        "--force",
    ]);
    let cycles = r["cycles"].as_f64().unwrap();
    // 65,536 PEs x 1.9 pJ/OP (Carey et al. 2013) per bus instruction, in microjoules.
    let want = cycles * 65536.0 * 1.9e-12 * 1e6;
    assert!(
        (r["energy_uj_per_frame"].as_f64().unwrap() - want).abs() < 1e-9,
        "{r}"
    );
    assert_eq!(r["energy"]["readouts"], 1);
}

#[test]
fn check_reports_the_energy_of_the_exported_frame() {
    let dir = temp_dir("export-check-energy");
    let (out, page) = (dir.join("g.cpp"), dir.join("g.html"));
    let (prog, kernel) = ("programs/gauss3x3.scamp", "programs/gauss3x3.yaml");
    let o = out.to_str().unwrap();
    let r = export(&[prog, "--kernel", kernel, "-o", o, "--force"]);
    let p = page.to_str().unwrap();
    let c = json(&scamp(&[
        "check", prog, "--kernel", kernel, "--noise", "ideal", "--json", "--html", p,
    ]));
    // The check measures the program from its input; the frame adds the capture.
    assert_eq!(
        r["cycles"].as_u64().unwrap(),
        c["cycles"].as_u64().unwrap() + 6
    );
    assert_eq!(c["energy_uj_per_frame"], r["energy_uj_per_frame"]);
    let html = std::fs::read_to_string(&page).unwrap();
    let shown = format!(
        "{:.2} &micro;J per frame",
        r["energy_uj_per_frame"].as_f64().unwrap()
    );
    assert!(html.contains(&shown), "{shown}");
    let text = scamp(&["check", prog, "--kernel", kernel, "--noise", "ideal"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("uJ per frame"));
}

// ---- refusals: nothing is written ----

#[test]
fn an_unproven_program_is_refused_before_anything_is_written() {
    let dir = temp_dir("export-unproven");
    let out = dir.join("wrong.cpp");
    let gold = dir.join("gold");
    let o = scamp(&[
        "export",
        "programs/gauss3x3_wrong.scamp",
        "--kernel",
        "programs/gauss3x3.yaml",
        "-o",
        out.to_str().unwrap(),
        "--golden",
        gold.to_str().unwrap(),
    ]);
    refused(
        &o,
        &[
            "gauss3x3_wrong.scamp",
            "does not compute the kernels of gauss3x3",
        ],
    );
    assert_eq!(stderr(&o).trim().lines().count(), 1);
    assert!(!out.exists() && !gold.exists());
}

#[test]
fn a_malformed_program_or_spec_is_refused_with_its_position() {
    let dir = temp_dir("export-malformed");
    let out = dir.join("x.cpp");
    let bad = dir.join("bad.scamp");
    std::fs::write(&bad, "mov(A, B);\nmovx(A, Q, east);\n").unwrap();
    let o = scamp(&["export", bad.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    refused(&o, &["bad.scamp:2:"]);
    let spec = dir.join("bad.yaml");
    std::fs::write(&spec, "name: x\ninput: A\nkernels: 3\n").unwrap();
    let o = scamp(&[
        "export",
        spec.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    refused(&o, &["bad.yaml:"]);
    let o = scamp(&[
        "export",
        "programs/no-such.scamp",
        "-o",
        out.to_str().unwrap(),
    ]);
    refused(&o, &["no-such.scamp"]);
    assert!(!out.exists());
}

#[test]
fn a_register_the_device_lacks_is_refused() {
    let dir = temp_dir("export-device");
    let spec = dir.join("wide.yaml");
    std::fs::write(
        &spec,
        "name: wide\ninput: A\nregisters: [A, B, C, D, E, F, G]\ngeneral_registers: 7\nkernels:\n  - out: G\n    weights: [[1]]\n",
    )
    .unwrap();
    let prog = dir.join("wide.scamp");
    std::fs::write(&prog, "mov(G, A);\n").unwrap();
    let out = dir.join("wide.cpp");
    let o = scamp(&[
        "export",
        prog.to_str().unwrap(),
        "--kernel",
        spec.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    refused(&o, &["uses register G", "SCAMP-5 has A..F"]);
    assert!(!out.exists());
}

#[test]
fn an_existing_output_is_kept_without_force() {
    let dir = temp_dir("export-force");
    let out = dir.join("kept.cpp");
    std::fs::write(&out, "// mine\n").unwrap();
    let o = scamp(&[
        "export",
        "programs/identity.scamp",
        "-o",
        out.to_str().unwrap(),
    ]);
    refused(&o, &["exists", "--force"]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "// mine\n");
    let gold = dir.join("gold");
    std::fs::create_dir_all(&gold).unwrap();
    std::fs::write(gold.join("x"), "x").unwrap();
    let fresh = dir.join("fresh.cpp");
    let o = scamp(&[
        "export",
        "programs/identity.scamp",
        "-o",
        fresh.to_str().unwrap(),
        "--golden",
        gold.to_str().unwrap(),
    ]);
    refused(&o, &["not empty", "--force"]);
    assert!(!fresh.exists());
    export(&[
        "programs/identity.scamp",
        "-o",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("scamp5_kernel_begin();"));
}

// ---- networks and golden outputs ----

/// A small dataset: `n` 28x28 images per split, a bright bar whose place and length
/// depend on the class, and a few noisy pixels, labels 0..9 in turn.
fn dataset(purpose: &str, n: u32) -> PathBuf {
    let dir = temp_dir(purpose);
    for (split, salt) in [("train", 7usize), ("t10k", 13)] {
        let mut pixels = vec![0u8; n as usize * 784];
        let labels: Vec<u8> = (0..n).map(|i| ((i * 7 + i / 10) % 10) as u8).collect();
        for (i, &l) in labels.iter().enumerate() {
            let l = usize::from(l);
            for r in 3 + l..9 + l {
                for c in 2 + (i % 3)..12 + l {
                    pixels[i * 784 + r * 28 + c] = 150 + (l * 10) as u8;
                }
            }
            pixels[i * 784 + (i * salt) % 784] = 255;
        }
        write_idx(
            &dir.join(format!("{split}-images-idx3-ubyte")),
            &[n, 28, 28],
            &pixels,
        );
        write_idx(
            &dir.join(format!("{split}-labels-idx1-ubyte")),
            &[n],
            &labels,
        );
    }
    dir
}

/// Replays every golden sample listed in `gold`'s index (2 frames each, events scanned
/// in `scan` order): each frame runs `chip` statement for statement and the exported
/// head prints the golden ideal class. Returns how many samples there were and their
/// confusion matrix (true label by class), as `scamp eval` reports it.
fn golden_confusion(exe: &Path, gold: &Path, chip: &Program, scan: &str) -> (usize, Vec<Vec<u64>>) {
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(gold.join("index.json")).unwrap()).unwrap();
    let samples = index["samples"].as_array().unwrap();
    let mut confusion = vec![vec![0u64; 10]; 10];
    for s in samples {
        let name = s["name"].as_str().unwrap();
        let log = replay_scanning(exe, 2, Some(&gold.join(name).join("ideal")), scan);
        let fs = frames(&log);
        for f in &fs {
            assert_eq!(f.program.stmts.len(), chip.stmts.len(), "{name}");
            assert!(
                f.program
                    .stmts
                    .iter()
                    .zip(&chip.stmts)
                    .all(|(a, b)| same(a, b)),
                "{name}"
            );
        }
        let class: u64 = fs[0].text[0]
            .strip_prefix("class ")
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(class, s["classes"]["ideal"].as_u64().unwrap(), "{name}");
        let label: usize = name.rsplit("label").next().unwrap().parse().unwrap();
        confusion[label][class as usize] += 1;
    }
    (samples.len(), confusion)
}

#[test]
fn an_exported_network_replays_its_chip_and_classifies_as_eval() {
    let data = dataset("export-net-data", 60);
    let dir = temp_dir("export-net");
    let (out, gold) = (dir.join("net.cpp"), dir.join("gold"));
    let d = data.to_str().unwrap();
    let args = ["--dataset", d, "--train-images", "60"];
    let mut all = vec![
        "programs/analognet2_net.yaml",
        "-o",
        out.to_str().unwrap(),
        "--force",
        "--samples",
        "20",
    ];
    all.extend(["--golden", gold.to_str().unwrap()]);
    all.extend(args);
    let r = export(&all);
    assert_eq!(r["blocks"], 1);
    // The figures docs/export.md quotes for the bundled AnalogNet2 network.
    assert_eq!(r["cycles"], 54);
    assert_eq!(
        format!("{:.2}", r["energy_uj_per_frame"].as_f64().unwrap()),
        "6.72"
    );
    let exe = compile(&out);
    // The chip part the library proves and evaluates, statement for statement.
    let net = scamp::eval::load_path(Some(&root().join("programs/analognet2_net.yaml"))).unwrap();
    let chip = scamp::eval::build_stage(&net, &Default::default()).unwrap();
    let (samples, confusion) = golden_confusion(&exe, &gold, &chip.program, "rows");
    assert_eq!(samples, 20);
    // `scamp eval` on the same 20 test images, with the head trained the same way.
    let e = json(&scamp(&[
        "eval",
        "--json",
        "--noise",
        "ideal",
        "--test-images",
        "20",
        "--depths",
        "2",
        "--chip-seeds",
        "1",
        "--dataset",
        d,
        "--train-images",
        "60",
        "--html",
        dir.join("eval.html").to_str().unwrap(),
        "programs/analognet2_net.yaml",
    ]));
    let eval_confusion: Vec<Vec<u64>> =
        serde_json::from_value(e["confusion_ideal"].clone()).unwrap();
    assert_eq!(confusion, eval_confusion);
    // The same frame program in both reports, so the same energy.
    assert_eq!(e["cycles"], r["cycles"]);
    assert_eq!(e["energy_uj_per_frame"], r["energy_uj_per_frame"]);
    assert_eq!(e["energy_uj_per_image"], r["energy_uj_per_frame"]);
    let page = std::fs::read_to_string(dir.join("eval.html")).unwrap();
    assert!(page.contains("Energy 6.72 &micro;J per frame, 6.72 &micro;J per image"));
}

#[test]
fn golden_outputs_equal_scamp_run_bit_for_bit() {
    let dir = temp_dir("export-golden");
    let (out, gold) = (dir.join("a.cpp"), dir.join("gold"));
    export(&[
        "programs/analognet2.scamp",
        "--kernel",
        "programs/analognet2.yaml",
        "-o",
        out.to_str().unwrap(),
        "--golden",
        gold.to_str().unwrap(),
        "--force",
    ]);
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(gold.join("index.json")).unwrap()).unwrap();
    assert_eq!(index["profiles"], serde_json::json!(["ideal", "scamp5"]));
    for s in index["samples"].as_array().unwrap().iter().take(3) {
        let block = &s["blocks"][0];
        let prog = dir.join("block1.scamp");
        std::fs::write(&prog, block["program"].as_str().unwrap()).unwrap();
        let scene = gold.join(s["scene"].as_str().unwrap());
        for profile in ["ideal", "scamp5"] {
            let run = dir.join(format!("run-{profile}"));
            let o = scamp(&[
                "run",
                prog.to_str().unwrap(),
                "--image",
                scene.to_str().unwrap(),
                "--noise",
                profile,
                "--out",
                run.to_str().unwrap(),
                "--save",
                "A,B,C",
            ]);
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            for reg in ["A", "B", "C"] {
                let golden =
                    std::fs::read(gold.join(block["planes"][profile][reg].as_str().unwrap()))
                        .unwrap();
                let ran = std::fs::read(run.join(format!("{reg}.npy"))).unwrap();
                assert!(golden == ran, "{profile} {reg} of {}", s["name"]);
            }
        }
    }
}

const BANK_SPEC: &str = "name: two_blocks\ninput: A\nregisters: [A, B]\nkernels:\n  - out: B\n    weights:\n      - [1]\n  - out: A\n    weights:\n      - [2]\n";
const BANK_PROGRAM: &str = "scamp5_kernel_begin();\nmov(B, A);\nscamp5_kernel_end();\nscamp5_kernel_begin();\nmov(B, A);\nadd(A, B, A);\nscamp5_kernel_end();\n";

#[test]
fn a_bank_in_kernel_blocks_replays_block_by_block() {
    let dir = temp_dir("export-bank");
    let (spec_file, prog) = (dir.join("bank.yaml"), dir.join("bank.scamp"));
    std::fs::write(&spec_file, BANK_SPEC).unwrap();
    std::fs::write(&prog, BANK_PROGRAM).unwrap();
    let gold = dir.join("gold");
    let log = export_and_replay(
        &dir,
        &prog,
        &[
            "--kernel",
            spec_file.to_str().unwrap(),
            "--golden",
            gold.to_str().unwrap(),
        ],
    );
    let sp = spec(&spec_file);
    let program = parse_program(BANK_PROGRAM, Device::default()).unwrap();
    let bank = Bank::with_kernels(program, BANK_PROGRAM, sp.clone()).unwrap();
    let groups = groups_of(&bank);
    assert_eq!(groups.len(), 2);
    assert_replays("bank", &log, &groups, Some(sp.input));
    // Golden planes per block: block 1 holds B = x, block 2 A = 2x, on every sample.
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(gold.join("index.json")).unwrap()).unwrap();
    let s = &index["samples"][0];
    assert_eq!(s["blocks"].as_array().unwrap().len(), 2);
    for (b, reg) in [(0, "B"), (1, "A")] {
        assert!(gold
            .join(s["blocks"][b]["planes"]["ideal"][reg].as_str().unwrap())
            .exists());
    }
}

#[test]
fn every_bundled_network_replays_its_chip() {
    let data = dataset("export-nets-data", 30);
    let d = data.to_str().unwrap();
    let dir = temp_dir("export-nets");
    for name in ["analognet2_net", "deep_net"] {
        let (out, gold) = (dir.join(format!("{name}.cpp")), dir.join(name));
        let target = format!("programs/{name}.yaml");
        let (o, g) = (out.to_str().unwrap(), gold.to_str().unwrap());
        export(&[
            &target,
            "-o",
            o,
            "--force",
            "--samples",
            "3",
            "--golden",
            g,
            "--dataset",
            d,
        ]);
        let exe = compile(&out);
        let net = scamp::eval::load_path(Some(&root().join(&target))).unwrap();
        let chip = scamp::eval::build_stage(&net, &Default::default()).unwrap();
        let index: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(gold.join("index.json")).unwrap())
                .unwrap();
        for s in index["samples"].as_array().unwrap() {
            let sample = s["name"].as_str().unwrap();
            let fs = frames(&replay(&exe, 2, Some(&gold.join(sample).join("ideal"))));
            for f in &fs {
                assert_eq!(f.program.stmts.len(), chip.program.stmts.len(), "{name}");
                assert!(f
                    .program
                    .stmts
                    .iter()
                    .zip(&chip.program.stmts)
                    .all(|(a, b)| same(a, b)));
                assert_eq!(
                    f.text[0],
                    format!("class {}", s["classes"]["ideal"]),
                    "{name}"
                );
            }
            // One block per stage, each with its planes under both profiles.
            assert_eq!(s["blocks"].as_array().unwrap().len(), net.stages.len());
        }
        assert!(
            gold.join("features_ideal.npy").exists() && gold.join("features_scamp5.npy").exists()
        );
    }
}

#[test]
fn a_network_with_an_unproven_stage_is_refused() {
    let dir = temp_dir("export-net-unproven");
    for f in ["gauss3x3.yaml", "gauss3x3_wrong.scamp"] {
        std::fs::copy(root().join("programs").join(f), dir.join(f)).unwrap();
    }
    let net = dir.join("net.yaml");
    std::fs::write(
        &net,
        "name: wrong\nstages:\n  - spec: gauss3x3.yaml\n    program: gauss3x3_wrong.scamp\n    decision: sign\n",
    )
    .unwrap();
    let data = dataset("export-net-unproven-data", 10);
    let out = dir.join("net.cpp");
    let o = scamp(&[
        "export",
        net.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--dataset",
        data.to_str().unwrap(),
    ]);
    refused(
        &o,
        &["gauss3x3_wrong.scamp", "does not compute the kernels"],
    );
    assert!(!out.exists());
}

/// Every layer of the network format at once: a binarised input, a leaky ReLU, one
/// threshold per map, overlapping bins with a cap and a trained MLP head.
const FULL_NET: &str = "name: full
input:
  binarise: {level: 100, value: 50}
readout:
  bins: [[0, 0, 14, 14], [7, 7, 14, 14], [14, 0, 14, 28], [0, 14, 28, 14], [3, 2, 12, 20]]
  cap: 30
head:
  hidden: [12]
  train: {epochs: 5, learning_rate: 0.05}
stages:
  - spec: refs.yaml
    program: refs.scamp
    activation: {leaky_relu: 1/4}
    threshold: [10, -3]
";

/// The ideal features of the first `n` test images of `data` under `net`, with its cap
/// or without.
fn ideal_features(net: &scamp::eval::Network, data: &Path, n: usize) -> Vec<f32> {
    use scamp::{eval::extract_features, eval::Built, eval::Sample};
    let d = scamp::eval::read_dataset(data).unwrap();
    let test = d.test.truncated(n);
    let built = Built::new(net, test.rows, test.cols, &Default::default()).unwrap();
    let ideal = scamp::Profile::builtin("ideal").unwrap();
    let sample = Sample {
        profile: &ideal,
        chip_seed: 1,
        seed: 0,
    };
    extract_features(&built, &test, sample, false)
        .unwrap()
        .features
}

#[test]
fn a_network_with_bins_a_cap_and_an_mlp_replays_and_classifies_as_eval() {
    let data = dataset("export-full-data", 60);
    let d = data.to_str().unwrap();
    let dir = temp_dir("export-full");
    write_refs(&dir);
    let target = dir.join("net.yaml");
    std::fs::write(&target, FULL_NET).unwrap();
    let t = target.to_str().unwrap();
    let (out, gold) = (dir.join("net.cpp"), dir.join("gold"));
    let (o, g) = (out.to_str().unwrap(), gold.to_str().unwrap());
    let all = [
        t,
        "-o",
        o,
        "--samples",
        "20",
        "--golden",
        g,
        "--dataset",
        d,
        "--train-images",
        "60",
    ];
    export(&all);
    let cpp = std::fs::read_to_string(&out).unwrap();
    assert!(cpp.contains("MAP_CAP = 30") && cpp.contains("GROUPS = 5"));
    assert!(cpp.contains("static const float LAYER2[10 * 13]"));
    let mut net = scamp::eval::load_path(Some(&target)).unwrap();
    let chip = scamp::eval::build_stage(&net, &Default::default()).unwrap();
    // The binarisation, the leaky ReLU and the per-map thresholds are instructions.
    let text = chip.program.to_string();
    for s in [
        "MOV(R0, FLAG)",
        "in(A, 50)",
        "divq(",
        "in(A, -10)",
        "in(A, 3)",
    ] {
        assert!(text.contains(s), "{s} in\n{text}");
    }
    // The cap bites on these images: without it the features differ.
    let capped = ideal_features(&net, &data, 20);
    net.readout.cap = None;
    assert_ne!(capped, ideal_features(&net, &data, 20));
    let exe = compile(&out);
    // The device's scan order is not the cap's: the host applies the documented one.
    let (_, confusion) = golden_confusion(&exe, &gold, &chip.program, "reverse");
    let e = json(&scamp(&[
        "eval",
        "--json",
        "--noise",
        "ideal",
        "--test-images",
        "20",
        "--depths",
        "0",
        "--chip-seeds",
        "1",
        "--dataset",
        d,
        "--train-images",
        "60",
        t,
    ]));
    let eval_confusion: Vec<Vec<u64>> =
        serde_json::from_value(e["confusion_ideal"].clone()).unwrap();
    assert_eq!(confusion, eval_confusion);
    // Not a degenerate head: it tells some classes apart.
    assert!(confusion.iter().flatten().filter(|&&n| n > 0).count() > 2);
}
