//! `scamp export`: from a proven program, a compiled spec or a network to a complete,
//! self-contained C++17 source for the SCAMP-5d host API, with golden outputs to
//! compare the device against and the energy model's figures (docs/export.md).
//!
//! A frame is first laid out as a [`Plan`] (the capture, each proven block, the
//! readouts); the C++ ([`cpp`]), the golden outputs ([`golden`]) and the energy
//! ([`crate::energy`]) are all read off that plan. Nothing is exported that was not
//! proven: an unproven program is refused before any file is written.

pub mod cpp;
pub mod golden;
pub mod head;
pub mod network;
pub mod plan;

pub use head::NetworkHost;
pub use network::{of_network, HeadOptions, NetworkExport};
pub use plan::{of_bank, Block, Plan, Readout};

use crate::energy::FrameEnergy;
use serde::Serialize;

/// Why an export was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The target or a file it names is malformed (bad input).
    #[error("{0}")]
    Input(String),
    /// The program does not compute its kernels (bad input: nothing is exported).
    #[error("{0}")]
    Unproven(String),
    /// The program needs more than the device has.
    #[error("{0}")]
    Device(String),
    /// An output could not be written.
    #[error("{0}")]
    Write(String),
    /// Something the library should never do.
    #[error("internal error: {0}")]
    Internal(String),
}

/// What `scamp export --json` prints.
#[derive(Clone, Debug, Serialize)]
pub struct ExportReport {
    /// The spec, program or network name.
    pub name: String,
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
    pub energy: FrameEnergy,
    /// The golden outputs' folder, when written.
    pub golden: Option<String>,
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
