//! Multi-channel kernel sets: `inputs: [A, B, C]` with one 2-D array of weights per
//! input. The generator shares work across channels and kernels, every program is
//! proven on every input plane, a wrong program fails that proof, and bad specs are
//! refused at the offending node.

use super::{SIX, THREE};
use crate::cain::{self, CompileOptions, Objective, Stats};
use crate::isa::{Pos, Program, Reg};
use crate::verify::prove_planes;

/// A deterministic budget (a work budget, one worker).
fn work(n: u64) -> CompileOptions {
    CompileOptions::default()
        .with_work(n)
        .with_workers(1)
        .with_time_limit(600.0)
}

fn compile(text: &str, opts: &CompileOptions) -> cain::Compiled {
    let spec = cain::parse_spec(text).expect("valid spec");
    cain::compile(&spec, opts, &Stats::default()).expect("compiles")
}

/// Proves `program` again on every input plane, independently of the compiler.
fn prove(program: &Program, spec: &cain::Spec, c: &cain::Compiled) -> Result<(), String> {
    let targets: Vec<_> = c.kernels.iter().map(|k| k.planes_target()).collect();
    let general = Reg::general_count(&c.registers);
    prove_planes(program, &spec.inputs(), general, &targets).map_err(|e| e.to_string())
}

/// Proves every group of the bank `c` again on every input plane, against its own
/// kernels, independently of the compiler.
fn prove_groups(spec: &cain::Spec, c: &cain::Compiled) {
    let general = Reg::general_count(&c.registers);
    for g in &c.groups {
        let targets: Vec<_> = g
            .kernels
            .iter()
            .map(|&k| c.kernels[k].planes_target())
            .collect();
        prove_planes(&g.program, &spec.inputs(), general, &targets)
            .unwrap_or_else(|e| panic!("{e}\n{}", g.program));
    }
}

/// Asserts that no group of `c` holds a value beyond `bound` on any input plane.
fn assert_peak_within(spec: &cain::Spec, c: &cain::Compiled, bound: f64) {
    let general = Reg::general_count(&c.registers);
    for g in &c.groups {
        let peak =
            crate::verify::peak_planes(&g.program, &spec.inputs(), general, spec.input_range)
                .expect("runs");
        assert!(peak.magnitude <= bound, "{}", peak.magnitude);
    }
}

/// The spec of channel `z` of [`THREE`] alone: its plane of every kernel, read from
/// that channel's register.
fn channel_alone(z: usize) -> String {
    let spec = cain::parse_spec(THREE).expect("valid spec");
    let reg = spec.inputs()[z];
    let mut text = format!("input: {reg}\nregisters: [A, B, C, D, E, F]\nkernels:\n");
    for k in &spec.kernels {
        text += &format!("  - out: {}\n    scale: {}\n    weights:\n", k.out, k.scale);
        for row in k.planes()[z] {
            let cells: Vec<String> = row.iter().map(ToString::to_string).collect();
            text += &format!("      - [{}]\n", cells.join(", "));
        }
    }
    text
}

#[test]
fn three_channels_compile_prove_and_share_work() {
    let spec = cain::parse_spec(THREE).expect("valid spec");
    assert_eq!(spec.inputs(), vec![Reg::A, Reg::B, Reg::C]);
    // The channels together get half the work each channel alone gets: sharing must
    // win even against the better-searched separate programs.
    let c = compile(THREE, &work(1_000));
    prove(&c.program, &spec, &c).unwrap_or_else(|e| panic!("{e}\n{}", c.program));
    // Each channel alone, then one add per kernel and further channel.
    let alone: usize = (0..3)
        .map(|z| {
            compile(&channel_alone(z), &work(2_000))
                .program
                .instructions()
        })
        .sum();
    let adds = spec.kernels.len() * 2;
    let together = c.program.instructions();
    assert!(
        together < alone + adds,
        "together {together}, alone {alone} + {adds} adds"
    );
    // The figures docs/cain.md quotes (deterministic under the work budget).
    assert_eq!((together, alone + adds), (19, 33), "{}", c.program);
}

#[test]
fn a_wrong_program_fails_its_proof_on_the_plane_it_gets_wrong() {
    let spec = cain::parse_spec(THREE).expect("valid spec");
    let c = compile(THREE, &work(1_000));
    // Reading B where the program reads C: the result is wrong on some plane.
    let text = c.program.to_string();
    let mut wrong = None;
    for (i, line) in text.lines().enumerate() {
        if line.contains(", C") || line.contains("(C") {
            let mut lines: Vec<String> = text.lines().map(String::from).collect();
            lines[i] = line.replacen('C', "B", 1);
            wrong = Some(lines.join("\n"));
            break;
        }
    }
    let wrong = wrong.expect("the program reads C");
    let p = crate::isa::parse_program(&wrong, crate::isa::Device::default()).expect("parses");
    let e = prove(&p, &spec, &c).expect_err("a wrong program fails");
    assert!(e.contains("input plane"), "{e}");
    // Leaving out a plane's input register is refused too.
    let targets: Vec<_> = c.kernels.iter().map(|k| k.planes_target()).collect();
    assert!(prove_planes(&c.program, &[Reg::A, Reg::B], 6, &targets).is_err());
}

fn err(text: &str) -> (Pos, String) {
    let e = cain::parse_spec(text).expect_err("refused");
    (e.pos, e.cause.to_string())
}

#[test]
fn bad_multi_input_specs_are_refused_at_their_node() {
    let (pos, msg) = err(&THREE.replace("inputs: [A, B, C]", "inputs: [A, B, A]"));
    assert_eq!(pos, Pos { line: 2, col: 16 });
    assert!(msg.contains("listed twice"), "{msg}");
    let (pos, msg) = err(&THREE.replace("inputs: [A, B, C]", "inputs: [A, B, C, D, E, F]"));
    assert_eq!(pos.line, 2);
    assert!(
        msg.contains("6 inputs for the 6 registers") && msg.contains("at most 5 inputs"),
        "{msg}"
    );
    let (pos, msg) = err(&THREE.replace("inputs: [A, B, C]", "inputs: [A, B, Q]"));
    assert_eq!(pos, Pos { line: 2, col: 16 });
    assert!(msg.contains("`Q`"), "{msg}");
    let (pos, msg) = err(&THREE.replace("inputs: [A, B, C]", "input: A\ninputs: [A, B, C]"));
    assert_eq!(pos.line, 3);
    assert!(msg.contains("not both"), "{msg}");
    let few = THREE.replace("[A, B, C, D, E, F]", "[A, B, D, E]");
    let (pos, msg) = err(&few);
    assert_eq!(pos, Pos { line: 2, col: 16 });
    assert!(msg.contains("not in `registers`"), "{msg}");
    // Two planes for three inputs.
    let two = THREE.replacen("      - [[0, 0, 0], [0, 16, 0], [0, 0, 0]]\n", "", 1);
    let (pos, msg) = err(&two);
    assert_eq!(pos.line, 8);
    assert!(msg.contains("2 arrays of weights for 3 inputs"), "{msg}");
    // Rows of numbers where each input needs its own array.
    let flat = THREE.replacen(
        "      - [[1, 2, 1], [2, 4, 2], [1, 2, 1]]\n      - [[1, 2, 1], [2, 4, 2], [1, 2, 1]]\n      - [[0, 0, 0], [0, 16, 0], [0, 0, 0]]",
        "      - [1, 2, 1]\n      - [2, 4, 2]\n      - [1, 2, 1]",
        1,
    );
    let (pos, msg) = err(&flat);
    assert_eq!(pos.line, 8);
    assert!(msg.contains("[in][kh][kw]"), "{msg}");
    // A plane of another size than the first.
    let (pos, msg) = err(&THREE.replacen("[[0, 0, 0], [0, 16, 0], [0, 0, 0]]", "[[16]]", 1));
    assert_eq!(pos, Pos { line: 10, col: 9 });
    assert!(msg.contains("same size"), "{msg}");
    // Planes where one input takes rows.
    let (pos, msg) = err(&THREE.replace("inputs: [A, B, C]", "input: A"));
    assert_eq!(pos.line, 8);
    assert!(msg.contains("3 arrays of weights for 1 inputs"), "{msg}");
    // Numbers and arrays mixed.
    let (_, msg) = err(&THREE.replacen("[[0, 0, 0], [0, 16, 0], [0, 0, 0]]", "[0, 16, 0]", 1));
    assert!(msg.contains("mix"), "{msg}");
    // A weight too large is positioned at its plane, row and column.
    let (pos, msg) = err(&THREE.replacen("[0, 16, 0]", "[0, 4e9, 0]", 1));
    assert_eq!(pos, Pos { line: 10, col: 25 });
    assert!(msg.contains("too large"), "{msg}");
}

#[test]
fn a_node_budget_of_one_still_gives_a_proven_program() {
    let spec = cain::parse_spec(THREE).expect("valid spec");
    let opts = work(1).with_node_limit(1);
    let c = compile(THREE, &opts);
    prove(&c.program, &spec, &c).unwrap_or_else(|e| panic!("{e}\n{}", c.program));
}

#[test]
fn a_bank_whose_outputs_exceed_the_range_at_a_sixteenth_compiles_range_safe() {
    // Six kernels over three inputs at scale 1/16 whose outputs reach twice the
    // saturation limit: each group is held to its outputs' own magnitude (the sum of
    // every plane's interval), and the constructive program, one channel after
    // another into one accumulator, never exceeds it.
    let mut bank = String::from("inputs: [A, B, C]\nregisters: [A, B, C, D, E, F]\nkernels:\n");
    for (i, out) in ["D", "E", "F", "D", "E", "F"].iter().enumerate() {
        let w = 4 * (i % 3 + 1);
        bank += &format!(
            "  - out: {out}\n    scale: 1/16\n    weights:\n      - [[{w}, 0], [0, 4]]\n      \
             - [[0, 4], [4, 0]]\n      - [[4, 0], [0, -4]]\n"
        );
    }
    let spec = cain::parse_spec(&bank).expect("valid spec");
    let c = compile(&bank, &work(300));
    assert_eq!(c.groups.len(), 3);
    prove_groups(&spec, &c);
    // Kernels 3 and 6 reach (12 + 4 + 8 + 8) / 16 of the input's bound.
    assert_peak_within(&spec, &c, 255.75 + 1e-9);
    let constructive = compile(&bank, &work(1).with_node_limit(1));
    assert_peak_within(&spec, &constructive, 255.75 + 1e-9);
}

/// Five different 3x3 planes (blur, Sobel, Laplacian, diagonal, row blur) at 1/64.
const PLANES: [&str; 5] = [
    "[[1, 2, 1], [2, 4, 2], [1, 2, 1]]",
    "[[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]",
    "[[0, 1, 0], [1, -4, 1], [0, 1, 0]]",
    "[[1, 0, -1], [0, 0, 0], [-1, 0, 1]]",
    "[[0, 0, 0], [1, 2, 1], [0, 0, 0]]",
];

#[test]
fn five_inputs_in_six_registers_say_what_is_left_and_what_is_needed() {
    let mut text = "name: five\ninputs: [A, B, C, D, E]\nregisters: [A, B, C, D, E, F]\n\
                    kernels:\n  - out: F\n    scale: 1/64\n    weights:\n"
        .to_string();
    for p in PLANES {
        text += &format!("      - {p}\n");
    }
    let spec = cain::parse_spec(&text).expect("valid spec");
    let e = cain::compile(&spec, &work(300), &Stats::default()).expect_err("no program");
    assert!(
        matches!(
            e,
            cain::CompileError::Crowded {
                inputs: 5,
                registers: 6,
                needed: Some(7),
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.is_no_program() && !e.is_bug());
    let msg = e.to_string();
    assert!(
        msg.contains(
            "its 5 inputs hold 5 of the 6 registers from the first instruction, leaving 1 to \
             compute in, and the constructive program needs 7 registers"
        ),
        "{msg}"
    );
    // Each plane alone fits in two registers: its input's and one more.
    for p in PLANES {
        let one = format!(
            "name: one\ninput: A\nregisters: [A, F]\nkernels:\n  - out: F\n    scale: 1/64\n    \
             weights: {p}\n"
        );
        let c = compile(&one, &work(3_000));
        assert_eq!(c.registers, vec![Reg::A, Reg::F], "{p}");
    }
}

#[test]
fn the_error_objective_and_banks_take_several_inputs() {
    let spec = cain::parse_spec(THREE).expect("valid spec");
    let opts = work(1_000).with_objective(Objective::Error);
    let c = compile(THREE, &opts);
    prove(&c.program, &spec, &c).unwrap_or_else(|e| panic!("{e}\n{}", c.program));
    assert_eq!(c.predicted.len(), 2);
    // Six kernels over three inputs in six registers: a bank of several groups, each
    // its own program from the three inputs, each proven.
    let spec = cain::parse_spec(SIX).expect("valid spec");
    let c = compile(SIX, &work(1_000));
    assert!(c.groups.len() >= 2, "{} groups", c.groups.len());
    // The report says how: three groups of two whole kernels, each keeping the three
    // inputs (three kernels' constructive program does not fit beside them).
    let split = crate::bank::CompileReport::of(&spec, &c).split;
    let want = crate::bank::SplitJson {
        by: "kernel",
        groups: 3,
        inputs: 3,
        kernels_per_group: 2,
        registers: 6,
    };
    assert_eq!(split, want);
    assert_eq!(
        split.line().expect("a bank"),
        "split by kernel into 3 groups of at most 2 kernels: the fewest whose constructive \
         programs fit 6 registers, 3 of them holding the inputs"
    );
    prove_groups(&spec, &c);
}
