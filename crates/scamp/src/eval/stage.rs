//! The chip side of a network: each stage's program (compiled by the embedded generator
//! or given and proven), the decisions into digital registers, and the whole frame
//! program: capture, stages and decisions one after another.

use super::network::{Activation, Binarise, Decision, Network, StageDef};
use crate::cain::{self, CompileOptions, KernelReport, Stats};
use crate::isa::{parse_program, DReg, Device, Program, Reg, Wiring};
use crate::verify::{self, planes, proof, KernelsProofError};
use std::path::{Path, PathBuf};

/// First digital register holding a binary map (R0 is left to the macros that
/// overwrite it, such as `MUX` and `CLR_IF`).
pub(crate) const FIRST_MAP: u8 = 1;

/// Digital registers available for binary maps (R1..R12).
pub(crate) const MAX_MAPS: usize = DReg::COUNT - FIRST_MAP as usize;

/// One stage ready to run.
#[derive(Clone, Debug)]
pub struct ChipStage {
    /// The stage's program.
    pub program: Program,
    /// Its kernels (output register and approximation).
    pub(crate) kernels: Vec<KernelReport>,
    /// The largest approximation depth of its kernels.
    pub depth: u32,
    /// How far (in PE steps) its outputs read.
    pub reach: usize,
}

/// One binary map the chip reads out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapInfo {
    /// The stage that made it (0-based).
    pub(crate) stage: usize,
    /// The analogue register that was decided.
    pub(crate) from: Reg,
    /// The digital register holding it.
    pub(crate) bit: DReg,
}

/// The whole on-sensor part of a network at one approximation depth.
#[derive(Clone, Debug)]
pub struct Chip {
    /// Capture, every stage and every decision.
    pub program: Program,
    /// The stages.
    pub stages: Vec<ChipStage>,
    /// The binary maps, in stage and kernel order.
    pub maps: Vec<MapInfo>,
    /// How far (in PE steps) the binary maps read, along the paths of stages stacked
    /// on one another: the gap tiles need.
    pub reach: usize,
    /// How far from the array's edge the tiles must stay: the farthest PE a value on
    /// the maps' paths passes through (a value moved past the edge is lost).
    pub(crate) margin: usize,
    /// General registers of the array.
    pub(crate) general: usize,
    /// The first line of each stage's statements in the frame program (the capture
    /// counts in the first stage, which starts at line 1).
    pub(crate) stage_lines: Vec<u32>,
}

impl Chip {
    /// The frame program cut into its stages (each with what follows it: bias,
    /// activation and decisions), in order; run one after another on one array they
    /// make the frame program.
    pub(crate) fn stage_programs(&self) -> Vec<Program> {
        let mut out = vec![Program { stmts: Vec::new() }; self.stage_lines.len().max(1)];
        for stmt in &self.program.stmts {
            let stage = self
                .stage_lines
                .iter()
                .filter(|&&l| l <= stmt.pos.line)
                .count()
                .max(1);
            out[stage - 1].stmts.push(stmt.clone());
        }
        out
    }
}

/// Why the chip part could not be built.
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    /// A program could not be parsed (positioned in its file).
    #[error("{}:{source}", file.display())]
    Program {
        /// The program file.
        file: PathBuf,
        /// The parser's error, with its position.
        source: crate::isa::IsaError,
    },
    /// A given program does not compute its spec's kernels.
    #[error("{}: stage {stage} does not compute the kernels of {}: {source}", file.display(), spec.display())]
    Proof {
        /// The program file.
        file: PathBuf,
        /// The spec.
        spec: PathBuf,
        /// 1-based stage number.
        stage: usize,
        /// The proof's complaint.
        source: StageProofFailure,
    },
    /// The generator could not compile a stage's spec.
    #[error("{}: {source}", file.display())]
    Compile {
        /// The spec file.
        file: PathBuf,
        /// Why (boxed: it is large, and rare).
        source: Box<cain::CompileError>,
    },
    /// Anything else about the network's structure.
    #[error("{}: {problem}", file.display())]
    Structure {
        /// The file concerned.
        file: PathBuf,
        /// What is wrong.
        problem: StructureProblem,
    },
}

/// Why a stage's given program does not compute its kernels.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StageProofFailure {
    /// The single-input proof failed (boxed: it is large, and rare).
    #[error(transparent)]
    Proof(Box<proof::ProofError>),
    /// The proof over every input plane of a multi-input layer failed.
    #[error(transparent)]
    Planes(Box<planes::PlanesProofError>),
    /// A multi-input stage's program writes a register outside its spec's list.
    #[error("it writes {0}, which is not among the stage's registers")]
    WritesOutside(Reg),
}

/// What is wrong with a network's structure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StructureProblem {
    /// A stage's kernels need several programs.
    #[error(
        "stage {stage} ({name}): its kernels need {programs} separate programs (a bank), and a \
         stage must be one program: split it into stages or give it fewer kernels"
    )]
    Bank {
        /// 1-based stage number.
        stage: usize,
        /// Its spec's name.
        name: String,
        /// The programs the generator needed.
        programs: usize,
    },
    /// A multi-input layer's kernels need several programs: it does not fit the register
    /// file.
    #[error(
        "stage {stage}: its {kernels} kernels over {inputs} input maps need {programs} programs \
         (a bank), and a stage must be one program: the layer does not fit the register file; \
         give it fewer output maps"
    )]
    LayerTooWide {
        /// 1-based stage number.
        stage: usize,
        /// Its kernels.
        kernels: usize,
        /// Its input maps.
        inputs: usize,
        /// The programs the generator needed.
        programs: usize,
    },
    /// The first stage's spec reads several inputs; it reads the captured image.
    #[error("the first stage reads the captured image, one input; its spec reads {0}")]
    FirstStageInputs(usize),
    /// The first stage has no register for the capture's scratch.
    #[error("the first stage needs a register besides its input (the capture's scratch)")]
    NoCaptureScratch,
    /// A constant the DAC cannot load.
    #[error("{what} {value} cannot be loaded: the DAC loads {}..{}", crate::isa::DAC.start(), crate::isa::DAC.end())]
    Dac {
        /// What the constant is (`bias`, ...).
        what: &'static str,
        /// Its value.
        value: f64,
    },
    /// A stage's input is not held from an earlier stage.
    #[error(
        "stage {stage}'s input {input} is not an output of an earlier stage that is still held \
         (a stage may overwrite every register of its spec's list)"
    )]
    InputNotHeld {
        /// 1-based stage number.
        stage: usize,
        /// Its input register.
        input: Reg,
    },
    /// A stage's program writes a register holding a binary map.
    #[error("stage {0}'s program writes a digital register that holds a binary map")]
    WritesMap(usize),
    /// A step after a stage needs a scratch register and has none.
    #[error("{0} needs a register that is not an output, as scratch")]
    NoScratch(&'static str),
    /// More binary maps than digital registers hold.
    #[error("more than {MAX_MAPS} binary maps (one per decided kernel output)")]
    TooManyMaps,
    /// The frame program made of the stages does not parse (a bug).
    #[error("internal error: the frame program does not parse: {0}")]
    FrameProgram(crate::isa::IsaError),
}

/// Options for building the chip part.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct BuildOptions {
    /// Approximation depth to compile the specs at (capped per spec at its own
    /// `max_depth`); `None` for each spec's own settings.
    pub depth: Option<u32>,
    /// Search options of the generator (work budget, workers, time limit).
    pub compile: CompileOptions,
}

with_methods!(BuildOptions {
    with_depth => depth: Option<u32>,
    with_compile => compile: CompileOptions,
});

/// Compiles a stage's `spec` with `opts`: where there is a work budget (the options'
/// or the spec's), on that work alone, so that the same `eval` gives the same programs
/// on any load. See [`stage_options`].
pub(crate) fn compile_stage(
    spec: &crate::cain::Spec,
    opts: &CompileOptions,
) -> Result<cain::Compiled, cain::CompileError> {
    cain::compile(spec, &stage_options(spec, opts), &Stats::default())
}

/// The compile options of a stage: with a work budget and no clock given (by the
/// options or the spec), a clock so large ([`cain::spec::MAX_TIME_LIMIT`]) that it
/// never strikes at the work, in place of the default clock, which caps the work on a
/// loaded machine (two runs of fashion3's stage at depth 1 at load 10 gave 132 and 129
/// instructions). A stage without a work budget searches its clock, as its spec says.
pub(crate) fn stage_options(spec: &crate::cain::Spec, opts: &CompileOptions) -> CompileOptions {
    let work = opts.work.or(spec.search.work);
    let clock = opts.time_limit.or(spec.search.time_limit);
    CompileOptions {
        time_limit: match (work, clock) {
            (Some(_), None) => Some(cain::spec::MAX_TIME_LIMIT),
            _ => opts.time_limit,
        },
        ..opts.clone()
    }
}

/// The program of one stage at the requested depth.
fn stage_program(
    def: &StageDef,
    index: usize,
    opts: &BuildOptions,
) -> Result<ChipStage, StageError> {
    let mut spec = def.spec.clone();
    if let Some(d) = opts.depth {
        spec.approximation.max_depth = spec.approximation.max_depth.min(d);
        // The sweep asks for coarser approximations on purpose: their error is what
        // it measures, so a depth that misses `max_error` is accepted, not refused.
        spec.approximation.accept = true;
    }
    let compile_err = |source| StageError::Compile {
        file: def.spec_file.clone(),
        source: Box::new(source),
    };
    let kernels = cain::approximate_spec(&spec).map_err(compile_err)?;
    let own = cain::approximate_spec(&def.spec).map_err(compile_err)?;
    let general = spec.general_count();
    let program = match &def.program {
        Some((file, text)) if kernels == own => {
            let program =
                parse_program(text, Device { general }).map_err(|source| StageError::Program {
                    file: file.clone(),
                    source,
                })?;
            prove_stage(&program, &spec, &kernels, general).map_err(|source| {
                StageError::Proof {
                    file: file.clone(),
                    spec: def.spec_file.clone(),
                    stage: index + 1,
                    source,
                }
            })?;
            program
        }
        _ => {
            let c = compile_stage(&spec, &opts.compile).map_err(compile_err)?;
            if c.groups.len() > 1 && !spec.other_inputs.is_empty() {
                return Err(structure(
                    &def.spec_file,
                    StructureProblem::LayerTooWide {
                        stage: index + 1,
                        kernels: c.kernels.len(),
                        inputs: spec.inputs().len(),
                        programs: c.groups.len(),
                    },
                ));
            }
            if c.groups.len() > 1 {
                return Err(structure(
                    &def.spec_file,
                    StructureProblem::Bank {
                        stage: index + 1,
                        name: spec.name.clone(),
                        programs: c.groups.len(),
                    },
                ));
            }
            c.program
        }
    };
    finish(program, kernels, general)
}

/// A stage's program with its kernels, depth and reach.
fn finish(
    program: Program,
    kernels: Vec<KernelReport>,
    general: usize,
) -> Result<ChipStage, StageError> {
    let outputs: Vec<Reg> = kernels.iter().map(|k| k.out).collect();
    let reach = super::reach::reach(&program, general, &outputs);
    Ok(ChipStage {
        depth: kernels.iter().map(|k| k.approx.depth).max().unwrap_or(0),
        program,
        kernels,
        reach,
    })
}

/// Proves that `program` computes `kernels` from the spec's inputs (on the one input
/// plane, or on every plane of a multi-input layer), writing only the spec's registers.
fn prove_stage(
    program: &Program,
    spec: &cain::Spec,
    kernels: &[KernelReport],
    general: usize,
) -> Result<(), StageProofFailure> {
    let targets: Vec<_> = kernels.iter().map(KernelReport::planes_target).collect();
    let wiring =
        Wiring::planes(&spec.inputs(), general).unwrap_or_else(|| Wiring::new(spec.input, general));
    verify::prove_kernels(program, wiring, &targets, Some(&spec.registers)).map_err(|e| match e {
        KernelsProofError::Input(e) => StageProofFailure::Proof(Box::new(e)),
        KernelsProofError::Planes(e) => StageProofFailure::Planes(Box::new(e)),
        KernelsProofError::WritesOutside(r) => StageProofFailure::WritesOutside(r),
    })
}

/// `v` as a DAC constant, or why it cannot be loaded (`what` names it).
fn dac(v: f64, what: &'static str, file: &Path) -> Result<i64, StageError> {
    let dac = crate::isa::DAC;
    if (*dac.start() as f64..=*dac.end() as f64).contains(&v) {
        Ok(v as i64)
    } else {
        Err(structure(file, StructureProblem::Dac { what, value: v }))
    }
}

/// The decision statements for `out` into `bit` (`scratch` holds a threshold `t`).
fn decision_text(threshold: Option<i64>, out: Reg, bit: DReg, scratch: Reg) -> String {
    match threshold {
        None => format!("where({out});\nMOV({bit}, FLAG);\nall();\n"),
        Some(t) => format!(
            "in({scratch}, {});\nwhere({out}, {scratch});\nMOV({bit}, FLAG);\nall();\n",
            -t
        ),
    }
}

/// The activation statements for `out` (`scratch` is free): where `out` < 0 (that is
/// -out > 0), ReLU clears it and a leaky ReLU halves it `shift` times with `divq`.
pub(crate) fn activation_text(a: Activation, out: Reg, scratch: Reg) -> String {
    let mut s = format!("neg({scratch}, {out});\nwhere({scratch});\n");
    match a {
        Activation::Relu => s.push_str(&format!("res({out});\n")),
        Activation::LeakyRelu { shift } => {
            // divq needs a destination apart from its source: halve back and forth.
            let mut at = out;
            for k in 0..shift {
                let to = if k % 2 == 0 { scratch } else { out };
                s.push_str(&format!("divq({to}, {at});\n"));
                at = to;
            }
            if at != out {
                s.push_str(&format!("mov({out}, {at});\n"));
            }
        }
    }
    s.push_str("all();\n");
    s
}

/// The input stage's binarisation of `x` (`scratch` is free): pixels above the level
/// (x = p - 128 > level - 128) become the value, the others 0. R0 holds the selection
/// for the moment between the test and the load.
pub(crate) fn binarise_text(b: Binarise, x: Reg, scratch: Reg) -> String {
    format!(
        "in({scratch}, {});\nwhere({x}, {scratch});\nMOV(R0, FLAG);\nall();\nres({x});\nWHERE(R0);\nin({x}, {});\nall();\n",
        128 - b.level,
        b.value
    )
}

/// The register the capture of the first stage uses besides its input.
fn capture_scratch(first: &StageDef) -> Result<Reg, StageError> {
    first
        .spec
        .registers
        .iter()
        .copied()
        .find(|&r| r != first.spec.input && r.is_general())
        .ok_or_else(|| structure(&first.spec_file, StructureProblem::NoCaptureScratch))
}

/// Builds the chip part of `net`: every stage at the requested depth, the
/// activations, the decisions and the frame program.
pub fn build(net: &Network, opts: &BuildOptions) -> Result<Chip, StageError> {
    let first = &net.stages[0];
    let general = net
        .stages
        .iter()
        .map(|s| s.spec.general_count())
        .max()
        .unwrap_or(0);
    let capture_scratch = capture_scratch(first)?;
    let mut text = format!("get_image({}, {capture_scratch});\n", first.spec.input);
    if let Some(b) = net.binarise {
        text.push_str(&binarise_text(b, first.spec.input, capture_scratch));
    }
    let mut stages = Vec::new();
    let mut maps = Vec::new();
    // Outputs of earlier stages that no later stage may have overwritten since.
    let mut live: Vec<Reg> = Vec::new();
    let mut stage_lines = Vec::new();
    for (i, def) in net.stages.iter().enumerate() {
        stage_lines.push(if i == 0 {
            1
        } else {
            u32::try_from(text.lines().count() + 1).unwrap_or(u32::MAX)
        });
        let inputs = def.spec.inputs();
        if i == 0 && inputs.len() > 1 {
            return Err(structure(
                &def.spec_file,
                StructureProblem::FirstStageInputs(inputs.len()),
            ));
        }
        if let Some(&r) = inputs.iter().find(|r| i > 0 && !live.contains(r)) {
            return Err(structure(
                &def.spec_file,
                StructureProblem::InputNotHeld {
                    stage: i + 1,
                    input: r,
                },
            ));
        }
        let stage = stage_program(def, i, opts)?;
        text.push_str(&stage.program.to_string());
        // A stage that leaves FLAG partly cleared would mask what follows (the
        // threshold's load, the next stage): FLAG is set everywhere again after it.
        if stage
            .program
            .written_digital_registers()
            .contains(&DReg::Flag)
        {
            text.push_str("all();\n");
        }
        let outputs: Vec<Reg> = stage.kernels.iter().map(|k| k.out).collect();
        text.push_str(&after_stage(def, i, &outputs, &mut maps)?);
        if stage
            .program
            .written_digital_registers()
            .iter()
            .any(|d| maps.iter().any(|m| m.bit == *d))
        {
            return Err(structure(
                &def.spec_file,
                StructureProblem::WritesMap(i + 1),
            ));
        }
        live.retain(|r| !def.spec.registers.contains(r));
        live.extend(outputs);
        stages.push(stage);
    }
    let program = parse_program(&text, Device { general })
        .map_err(|e| structure(&first.spec_file, StructureProblem::FrameProgram(e)))?;
    let bits: Vec<DReg> = maps.iter().map(|m| m.bit).collect();
    let (reach, margin) = super::reach::maps_reach(&program, general, &bits);
    Ok(Chip {
        reach,
        margin,
        program,
        stages,
        maps,
        general,
        stage_lines,
    })
}

fn structure(file: &Path, problem: StructureProblem) -> StageError {
    StageError::Structure {
        file: file.to_path_buf(),
        problem,
    }
}

/// The statements after stage `index`: the activation of each output, then its
/// decision into the next free digital register (recorded in `maps`).
fn after_stage(
    def: &StageDef,
    index: usize,
    outputs: &[Reg],
    maps: &mut Vec<MapInfo>,
) -> Result<String, StageError> {
    let scratch = def
        .spec
        .registers
        .iter()
        .copied()
        .find(|r| !outputs.contains(r) && r.is_general());
    let need_scratch = |what: &'static str| {
        scratch.ok_or_else(|| structure(&def.spec_file, StructureProblem::NoScratch(what)))
    };
    let mut text = String::new();
    // A bias before an activation or a next stage is loaded with `in`; before a
    // decision alone it moves the threshold instead (no instruction, no DAC noise).
    let fold = def.activation.is_none() && def.decision != Decision::None;
    if !def.bias.is_empty() && !fold {
        let s = need_scratch("a bias")?;
        for (&out, &b) in outputs.iter().zip(&def.bias) {
            let v = dac(b.round(), "bias", &def.spec_file)?;
            text.push_str(&format!("in({s}, {v});\nadd({out}, {out}, {s});\n"));
        }
    }
    if let Some(a) = def.activation {
        let s = need_scratch("an activation")?;
        for &out in outputs {
            text.push_str(&activation_text(a, out, s));
        }
    }
    if def.decision == Decision::None {
        return Ok(text);
    }
    for (k, &out) in outputs.iter().enumerate() {
        if maps.len() >= MAX_MAPS {
            return Err(structure(&def.spec_file, StructureProblem::TooManyMaps));
        }
        let bit = DReg::R(FIRST_MAP + maps.len() as u8);
        let threshold = match (def.decision.threshold(k), def.bias.get(k)) {
            (t, Some(&b)) if fold => Some(-dac(
                (b - t.unwrap_or(0) as f64).round(),
                "threshold less the bias",
                &def.spec_file,
            )?),
            (t, _) => t,
        };
        let scratch = match threshold {
            Some(_) => need_scratch("a threshold decision")?,
            None => scratch.unwrap_or(out),
        };
        text.push_str(&decision_text(threshold, out, bit, scratch));
        maps.push(MapInfo {
            stage: index,
            from: out,
            bit,
        });
    }
    Ok(text)
}
