//! What one frame on the device runs, block by block: the capture, each proven block
//! of statements and the readout after it. The C++ emitter, the golden outputs and the
//! energy figures all read a frame through this plan, so that they describe the same
//! instructions.

use super::{ExportError, Internal};
use crate::bank::Bank;
use crate::cain::assemble::report::{planes_text, predicted_text};
use crate::cain::{self, KernelReport, Spec};
use crate::energy::FrameEnergy;
use crate::isa::{parse_program, AnyReg, DReg, Device, Operand, Program, Reg, Stmt};
use crate::sim::noise::Profile;
use crate::verify::predict::{InputStats, Predicted};

/// General registers of the device (`A..F`): a program using more cannot run on it.
pub(crate) const DEVICE_GENERAL: usize = 6;

/// A register the host reads back after a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Readout {
    /// An analogue register read as an 8-bit image (`scamp5_output_image`).
    Image(Reg),
    /// A digital register read as a binary image (`scamp5_output_image`).
    Bits(DReg),
    /// A digital register read as events inside a window (`scamp5_scan_events`).
    Events(DReg),
}

impl Readout {
    /// The register read.
    pub(crate) fn register(&self) -> AnyReg {
        match *self {
            Readout::Image(r) => AnyReg::Analogue(r),
            Readout::Bits(d) | Readout::Events(d) => AnyReg::Digital(d),
        }
    }
}

/// One block of the frame: the statements the proof covers, run from the capture (or
/// from the previous block), and what the host reads after it.
#[derive(Clone, Debug)]
pub(crate) struct Block {
    /// One line naming the block.
    pub(crate) title: String,
    /// Comment lines: approximation, proof and predicted error.
    pub(crate) notes: Vec<String>,
    /// The capture that precedes the block, when its program starts from an image in
    /// a register rather than capturing it itself.
    pub(crate) capture: Option<Program>,
    /// The proven statements.
    pub(crate) program: Program,
    /// What the host reads after the block.
    pub(crate) readout: Vec<Readout>,
    /// The registers the golden outputs hold after the block (its results).
    pub(crate) watch: Vec<AnyReg>,
}

/// One frame on the device.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The spec, program or network name.
    pub(crate) name: String,
    /// Comment lines for the top of the file.
    pub(crate) notes: Vec<String>,
    /// The blocks, in order.
    pub(crate) blocks: Vec<Block>,
}

impl Plan {
    /// Every statement one frame runs, captures included, in order.
    pub(crate) fn frame_program(&self) -> Program {
        let stmts = self
            .blocks
            .iter()
            .flat_map(|b| b.capture.iter().chain(std::iter::once(&b.program)))
            .flat_map(|p| p.stmts.iter().cloned())
            .collect();
        Program { stmts }
    }

    /// The energy model's figures for one frame.
    pub(crate) fn energy(&self) -> FrameEnergy {
        let readouts = self.blocks.iter().map(|b| b.readout.len() as u64).sum();
        FrameEnergy::of(&self.frame_program(), readouts)
    }
}

/// Refuses a program that names a general register the device does not have.
pub(crate) fn check_device(program: &Program, what: &str) -> Result<(), ExportError> {
    for s in &program.stmts {
        for a in &s.args {
            if let Operand::Reg(Reg::Gen(i)) = a {
                if usize::from(*i) >= DEVICE_GENERAL {
                    return Err(ExportError::Register {
                        what: what.to_string(),
                        pos: s.pos,
                        statement: s.to_string(),
                        register: Reg::Gen(*i),
                    });
                }
            }
        }
    }
    Ok(())
}

/// `get_image(input, scratch)`: the capture a block computing from `input` starts
/// with; `res(scratch)` after it when the block reads `scratch` before writing it (the
/// proof takes every register but the inputs to start at 0); then `mov(other, input)`
/// for each further input, so that every input holds the scene, as `scamp check` gives
/// every input its one image. A copy, not a second capture: on the device a second
/// `get_image` in the same frame reads the short exposure since the first one's reset.
pub(crate) fn capture(
    input: Reg,
    others: &[Reg],
    scratch: Reg,
    reset: bool,
) -> Result<Program, ExportError> {
    let mut text = format!("get_image({input}, {scratch});");
    if reset {
        text += &format!(" res({scratch});");
    }
    for o in others {
        text += &format!(" mov({o}, {input});");
    }
    parse_program(&text, Device::default()).map_err(|e| Internal::Capture(e).into())
}

/// Whether `r` is a general register of the device.
fn on_device(r: Reg) -> bool {
    matches!(r, Reg::Gen(i) if usize::from(i) < DEVICE_GENERAL)
}

/// The capture's scratch register and whether it needs a reset: another input (its
/// copy overwrites the capture's by-product), else one the block writes before it reads
/// it (the by-product never reaches the result), else the last general one, reset.
fn scratch_for(program: &Program, inputs: &[Reg], registers: &[Reg]) -> Option<(Reg, bool)> {
    let (&input, others) = inputs.split_first()?;
    if let Some(&other) = others.first().filter(|r| on_device(**r)) {
        return Some((other, false));
    }
    let unwritten = crate::isa::unwritten_reads(program, &[AnyReg::Analogue(input)]);
    let general: Vec<Reg> = registers
        .iter()
        .copied()
        .filter(|r| *r != input && on_device(*r))
        .collect();
    general
        .iter()
        .find(|r| !unwritten.iter().any(|u| u.reg == AnyReg::Analogue(**r)))
        .map(|r| (*r, false))
        .or_else(|| general.last().map(|r| (*r, true)))
}

/// The capture a group of a bank with `spec` needs before it (none when the group
/// captures the image itself). A group of several inputs that captures the image
/// itself is refused: its other inputs would never be loaded on the device.
pub(crate) fn capture_of(program: &Program, spec: &Spec) -> Result<Option<Program>, ExportError> {
    if captures_itself(program) {
        if spec.other_inputs.is_empty() {
            return Ok(None);
        }
        return Err(ExportError::CapturedInputs {
            bank: None,
            inputs: spec.inputs(),
        });
    }
    let (scratch, reset) =
        scratch_for(program, &spec.inputs(), &spec.registers).ok_or(ExportError::NoScratch {
            bank: None,
            input: spec.input,
        })?;
    capture(spec.input, &spec.other_inputs, scratch, reset).map(Some)
}

/// The energy model's figures for one frame of `bank` as it is exported: every group
/// with its capture, each output read once.
pub(crate) fn frame_energy(bank: &Bank) -> FrameEnergy {
    if bank.spec().is_none() {
        return bare(bank.program(), "").energy();
    }
    let mut stmts = Vec::new();
    for (program, _) in bank.groups() {
        if let Some(Ok(Some(c))) = bank.spec().map(|s| capture_of(program, s)) {
            stmts.extend(c.stmts);
        }
        stmts.extend(program.stmts.iter().cloned());
    }
    FrameEnergy::of(&Program { stmts }, bank.kernels().len() as u64)
}

fn captures_itself(program: &Program) -> bool {
    program
        .stmts
        .first()
        .is_some_and(|s: &Stmt| s.def.name == "get_image")
}

/// `A = [1 2 1; 2 4 2] / 2^4 (depth 4, approximation error 0)` for kernel `k` (a
/// kernel of several inputs shows every plane, `([...] + [...])`).
pub(crate) fn kernel_line(k: &KernelReport) -> String {
    format!(
        "{} = {} / 2^{} (depth {}, approximation error {})",
        k.out,
        planes_text(&k.approx),
        k.approx.depth,
        k.approx.depth,
        k.approx.error
    )
}

/// The notes under a block's kernels: the proof of `program` and the predicted error
/// of each output of `outs` under the profile named `profile`.
pub(crate) fn proof_notes(
    program: &Program,
    profile: &str,
    outs: &[Reg],
    predicted: &[Predicted],
) -> [String; 2] {
    [
        format!(
            "proof: every output above is computed exactly (symbolic execution, {} instructions, {} cycles)",
            program.instructions(),
            program.cycles()
        ),
        format!(
            "predicted error under {profile}: {}",
            predicted_text(outs, predicted)
        ),
    ]
}

/// The plan of a bank: with kernels, proven first (an unproven bank is refused), one
/// block per group with the capture before it and its outputs read after it; a bare
/// program is one block reading every register it writes.
pub fn of_bank(bank: &Bank, name: &str, profile: (&str, &Profile)) -> Result<Plan, ExportError> {
    check_device(&bank.program(), name)?;
    let Some(spec) = bank.spec() else {
        return Ok(bare(bank.program(), name));
    };
    let proof = bank.prove().map_err(|e| Internal::Proof(Box::new(e)))?;
    if !proof.verified {
        return Err(ExportError::Unproven {
            name: name.to_string(),
            spec: spec.name.clone(),
            mismatch: proof.mismatch,
        });
    }
    // Every input holds the one captured scene (see `capture_of`), so the planes are
    // the same picture, not independent images as `compile` assumes.
    let stats = InputStats::of_bundled_images(spec.input_range).one_scene(spec.inputs().len());
    let mut blocks = Vec::new();
    for (i, (program, members)) in bank.groups().iter().enumerate() {
        let kernels: Vec<&KernelReport> = members
            .iter()
            .filter_map(|&k| bank.kernels().get(k))
            .collect();
        let outs: Vec<Reg> = kernels.iter().map(|k| k.out).collect();
        let capture = capture_of(program, spec).map_err(|e| e.in_bank(name))?;
        let predicted = cain::predict_outputs(program, spec.wiring(), &outs, profile.1, &stats)
            .map_err(Internal::from)?;
        let mut notes: Vec<String> = kernels.iter().map(|k| kernel_line(k)).collect();
        notes.extend(proof_notes(program, profile.0, &outs, &predicted));
        blocks.push(Block {
            title: format!(
                "block {}: kernels {} into {}",
                i + 1,
                members
                    .iter()
                    .map(|k| (k + 1).to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                outs.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            notes,
            capture,
            program: program.clone(),
            watch: outs.iter().map(|r| AnyReg::Analogue(*r)).collect(),
            readout: outs.into_iter().map(Readout::Image).collect(),
        });
    }
    Ok(Plan {
        name: spec.name.clone(),
        notes: vec![
            format!(
                "spec: {}, kernels: {}, {}",
                spec.name,
                bank.kernels().len(),
                inputs_text(spec)
            ),
            format!("source: {name}"),
        ],
        blocks,
    })
}

/// Where the spec's inputs are: `input image in A`, or for several `inputs A, B, C,
/// each holding the camera's image (captured into A, copied into B, C)`.
fn inputs_text(spec: &Spec) -> String {
    if spec.other_inputs.is_empty() {
        format!("input image in {}", spec.input)
    } else {
        let names = |regs: &[Reg]| {
            regs.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "inputs {}, each holding the camera's image (captured into {}, copied into {})",
            names(&spec.inputs()),
            spec.input,
            names(&spec.other_inputs)
        )
    }
}

/// A program without kernels: one block, every register it writes read back.
fn bare(program: Program, name: &str) -> Plan {
    let mut readout: Vec<Readout> = program
        .written_registers()
        .into_iter()
        .map(Readout::Image)
        .collect();
    readout.extend(
        program
            .written_digital_registers()
            .into_iter()
            .filter(|d| *d != DReg::Flag)
            .map(Readout::Bits),
    );
    Plan {
        name: name.to_string(),
        notes: vec![
            format!("program: {name}"),
            "proof: none (a program without a spec has no kernels to prove; pass --kernel SPEC.yaml)".into(),
        ],
        blocks: vec![Block {
            title: "block 1: the whole program".into(),
            notes: vec![format!(
                "{} instructions, {} cycles",
                program.instructions(),
                program.cycles()
            )],
            capture: None,
            program,
            watch: readout.iter().map(Readout::register).collect(),
            readout,
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(registers: &str) -> Spec {
        cain::parse_spec(&format!(
            "name: t\ninput: A\nregisters: [{registers}]\nkernels:\n  - out: A\n    weights: [[1]]\n"
        ))
        .unwrap()
    }

    /// Inputs A, B and C, registers A..D.
    fn three_inputs() -> Spec {
        cain::parse_spec(
            "name: t\ninputs: [A, B, C]\nregisters: [A, B, C, D]\nkernels:\n  - out: D\n    weights: [[[1]], [[1]], [[1]]]\n",
        )
        .unwrap()
    }

    #[test]
    fn several_inputs_get_one_capture_copied_into_the_others() {
        let p = parse_program("add(D, A, B, C);", Device::default()).unwrap();
        assert_eq!(
            text(capture_of(&p, &three_inputs()).unwrap()),
            "get_image(A, B);\nmov(B, A);\nmov(C, A);\n"
        );
    }

    #[test]
    fn several_inputs_and_a_block_that_captures_itself_are_refused() {
        let p = parse_program("get_image(A, D); add(D, A, B, C);", Device::default()).unwrap();
        let e = capture_of(&p, &three_inputs())
            .unwrap_err()
            .in_bank("p.scamp");
        assert!(matches!(
            &e,
            ExportError::CapturedInputs { bank: Some(b), inputs } if b == "p.scamp" && inputs == &[Reg::A, Reg::B, Reg::C]
        ));
        assert!(e
            .to_string()
            .starts_with("p.scamp: the program captures the image itself into A, so its other inputs B, C would never be loaded"));
    }

    fn text(p: Option<Program>) -> String {
        p.map(|p| p.to_string()).unwrap_or_default()
    }

    #[test]
    fn the_capture_uses_a_register_the_block_writes_first() {
        let p = parse_program("mov(C, A); add(B, C, A); mov(A, C);", Device::default()).unwrap();
        assert_eq!(
            text(capture_of(&p, &spec("A, B, C")).unwrap()),
            "get_image(A, B);\n"
        );
    }

    #[test]
    fn a_scratch_the_block_reads_first_is_reset_after_the_capture() {
        let p = parse_program("add(A, A, B);", Device::default()).unwrap();
        assert_eq!(
            text(capture_of(&p, &spec("A, B")).unwrap()),
            "get_image(A, B);\nres(B);\n"
        );
    }

    #[test]
    fn a_block_that_captures_itself_gets_no_capture() {
        let p = parse_program("get_image(A, B); mov(C, A);", Device::default()).unwrap();
        assert!(capture_of(&p, &spec("A, B, C")).unwrap().is_none());
    }

    #[test]
    fn a_spec_with_the_input_alone_has_no_scratch() {
        let p = parse_program("mov(A, A);", Device::default()).unwrap();
        assert!(matches!(
            capture_of(&p, &spec("A")),
            Err(ExportError::NoScratch { bank: None, .. })
        ));
    }
}
