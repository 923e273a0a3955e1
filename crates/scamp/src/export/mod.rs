//! `scamp export`: from a proven program, a compiled spec or a network to a complete,
//! self-contained C++17 source for the SCAMP-5d host API, with golden outputs to
//! compare the device against and the energy model's figures (docs/export.md).
//!
//! A frame is first laid out as a [`Plan`] (the capture, each proven block, the
//! readouts); the C++ (`cpp`), the golden outputs (`golden`) and the energy
//! ([`crate::energy`]) are all read off that plan. Nothing is exported that was not
//! proven: an unproven program is refused before any file is written.

pub(crate) mod cpp;
pub(crate) mod golden;
pub(crate) mod head;
pub(crate) mod network;
pub(crate) mod plan;

// Plumbing of `scamp export`: the C++ text and the golden outputs.
pub use cpp::source as cpp_source;
pub use golden::{write as write_golden, Sample as GoldenSample};
pub use head::NetworkHost;
pub use network::{of_network, HeadOptions};
pub use plan::{of_bank, Plan};

use crate::energy::FrameEnergy;
use serde::Serialize;

/// Why an export was refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// A stage of the network cannot be built: its spec, its program, or its proof
    /// (bad input: nothing is exported).
    #[error(transparent)]
    Stage(#[from] crate::eval::stage::StageError),
    /// The network's head weights cannot be read.
    #[error(transparent)]
    Head(#[from] crate::eval::head::HeadError),
    /// The dataset's images do not tile the array.
    #[error(transparent)]
    Tiling(#[from] crate::eval::tiling::NoTiling),
    /// A readout bin reaches past the images.
    #[error(transparent)]
    Layout(#[from] crate::eval::readout::BinOutside),
    /// The images do not fit the array with row and column 0 kept out of the window.
    #[error(
        "{rows}x{cols} images do not fit the array with row and column 0 kept out of the window"
    )]
    Window {
        /// Image height.
        rows: usize,
        /// Image width.
        cols: usize,
    },
    /// The program does not compute its kernels (bad input: nothing is exported).
    #[error("{name}: the program does not compute the kernels of {spec}: {}", mismatch.join("; "))]
    Unproven {
        /// The target's name.
        name: String,
        /// The spec's name.
        spec: String,
        /// Each kernel the program misses, as the proof says it.
        mismatch: Vec<String>,
    },
    /// A statement names a general register the device does not have.
    #[error("{what}: {pos}: `{statement}` uses register {register}; SCAMP-5 has A..F")]
    Register {
        /// The program's name.
        what: String,
        /// Where the statement is.
        pos: crate::isa::Pos,
        /// The statement.
        statement: String,
        /// The register.
        register: crate::isa::Reg,
    },
    /// A block's capture has no register to use besides the input.
    #[error(
        "{}the capture needs a register besides the input {input}",
        bank.as_ref().map_or(String::new(), |b| format!("{b}: "))
    )]
    NoScratch {
        /// The bank's name, when known.
        bank: Option<String>,
        /// The input register.
        input: crate::isa::Reg,
    },
    /// A program of several inputs captures the image itself: its other inputs would
    /// never be loaded on the device (bad input: nothing is exported).
    #[error("{}", captured_text(bank.as_deref(), inputs))]
    CapturedInputs {
        /// The bank's name, when known.
        bank: Option<String>,
        /// Every input register, the captured one first (at least two).
        inputs: Vec<crate::isa::Reg>,
    },
    /// An output could not be written.
    #[error(transparent)]
    Write(#[from] WriteFailure),
    /// Something the library should never do.
    #[error("internal error: {0}")]
    Internal(#[from] Internal),
}

/// The line of [`ExportError::CapturedInputs`].
fn captured_text(bank: Option<&str>, inputs: &[crate::isa::Reg]) -> String {
    let names = |regs: &[crate::isa::Reg]| {
        regs.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (first, others) = inputs
        .split_first()
        .map_or((String::new(), String::new()), |(f, o)| {
            (f.to_string(), names(o))
        });
    format!(
        "{}the program captures the image itself into {first}, so its other inputs {others} \
         would never be loaded on the device (a second capture in the same frame reads a \
         fresh, nearly dark exposure); remove its get_image so that export captures the \
         scene into every input, or export the network the layer belongs to",
        bank.map_or(String::new(), |b| format!("{b}: "))
    )
}

impl ExportError {
    /// The error with the bank's name `name`, where it names a bank not yet known.
    pub(crate) fn in_bank(self, name: &str) -> ExportError {
        match self {
            ExportError::NoScratch { bank: None, input } => ExportError::NoScratch {
                bank: Some(name.to_string()),
                input,
            },
            ExportError::CapturedInputs { bank: None, inputs } => ExportError::CapturedInputs {
                bank: Some(name.to_string()),
                inputs,
            },
            other => other,
        }
    }
}

/// Why an output file could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteFailure {
    /// A folder or file.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A plane's picture or array.
    #[error(transparent)]
    Plane(#[from] crate::sim::readout::PlaneFileError),
    /// An array of features.
    #[error(transparent)]
    Npy(#[from] ndarray_npy::WriteNpyError),
    /// The index.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// A failure that means a bug in the library, not bad input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Internal {
    /// A stage's program is not found in the frame program it is part of.
    #[error("stage {0} is not in the frame program")]
    StageMissing(usize),
    /// A proven block's error cannot be predicted.
    #[error("prediction: {0}")]
    Prediction(#[from] crate::verify::predict::PredictError),
    /// A proven frame program stopped.
    #[error("a frame stopped: {0}")]
    Frame(crate::sim::run::RunError),
    /// A golden run stopped.
    #[error("a golden run stopped: {0}")]
    Golden(crate::sim::run::RunError),
    /// The capture written by the exporter does not parse.
    #[error("capture does not parse: {0}")]
    Capture(#[from] crate::isa::IsaError),
    /// The proof could not run.
    #[error("{0}")]
    Proof(Box<crate::bank::BankError>),
    /// The features do not make an array of their shape.
    #[error("{0}")]
    Shape(#[from] ndarray::ShapeError),
}

/// What `scamp export --json` prints.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct ExportReport {
    /// The spec, program or network name.
    pub(crate) name: String,
    /// The C++ file written.
    pub output: String,
    /// Blocks of one frame.
    pub blocks: usize,
    /// Macro instructions of one frame, captures included.
    pub instructions: usize,
    /// Cycles of one frame.
    pub cycles: u64,
    /// The energy model's figure for one frame, in microjoules (a model from published
    /// power figures, not a measurement: docs/export.md).
    pub energy_uj_per_frame: f64,
    /// The cycles per instruction class behind it.
    pub(crate) energy: FrameEnergy,
    /// The golden outputs' folder, when written.
    pub(crate) golden: Option<String>,
}

impl ExportReport {
    /// The report of `plan` written to `output`.
    pub fn of(plan: &Plan, output: &str, golden: Option<String>) -> ExportReport {
        let frame = plan.frame_program();
        let energy = plan.energy();
        ExportReport {
            name: plan.name.clone(),
            output: output.to_string(),
            blocks: plan.blocks.len(),
            instructions: frame.instructions(),
            cycles: frame.cycles(),
            energy_uj_per_frame: energy.energy_uj_per_frame,
            energy,
            golden,
        }
    }
}
