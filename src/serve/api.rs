//! The JSON the playground's page and the server exchange: requests as the page sends
//! them, answers as the server serialises them.

use crate::report::check::ProofGrid;
use scamp::ErrorFigures;
use serde::{Deserialize, Serialize};

/// `POST /api/parse`: a program to check as it is typed.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParseRequest {
    /// Program text.
    pub program: String,
}

/// `POST /api/run`: run a program up to a step, under exact arithmetic and a noise
/// profile, and show the planes and one PE there.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// Program text.
    pub program: String,
    /// Preloads, `A = col, B = 1000, R5 = 1` (also `A = image`: the picture, p - 128).
    #[serde(default)]
    pub inputs: String,
    /// The picture `get_image` captures: a bundled image's name (default `camera`).
    #[serde(default)]
    pub image: Option<String>,
    /// A built-in noise profile for the second run (default `scamp5`).
    #[serde(default)]
    pub noise: Option<String>,
    /// Macros to run (default: all the playground runs).
    #[serde(default)]
    pub step: Option<usize>,
    /// The PE shown in numbers, `[row, col]` (default the centre).
    #[serde(default)]
    pub pe: Option<[usize; 2]>,
}

/// `POST /api/grade`: grade a program against an exercise.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GradeRequest {
    /// Exercise folder name, e.g. `02-gradient`.
    pub exercise: String,
    /// Program text.
    pub program: String,
}

/// A problem at a place in the program (line and column from 1).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diagnostic {
    /// Line, from 1 (0: the program as a whole).
    pub line: u32,
    /// Column, from 1.
    pub col: u32,
    /// What is wrong.
    pub msg: String,
}

/// Answer to `/api/parse`.
#[derive(Debug, Serialize)]
pub struct ParseReply {
    /// Problems found (empty when the program parses).
    pub errors: Vec<Diagnostic>,
    /// Macro instructions.
    pub instructions: usize,
    /// Bus instructions of one run.
    pub cycles: u64,
}

/// A neighbour transfer of a step: a value moves between the PE and its neighbour.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Arrow {
    /// `north`, `east`, `south` or `west`.
    pub dir: &'static str,
    /// Whether the value comes from that neighbour into the PE (else it goes out to it).
    pub inward: bool,
}

/// One step of the step-through: one macro.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// Source line.
    pub line: u32,
    /// Source column.
    pub col: u32,
    /// The macro as written, normalised.
    pub text: String,
    /// Its bus instructions.
    pub ops: Vec<String>,
    /// Registers it reads (planes by the names the page shows).
    pub reads: Vec<String>,
    /// Registers it writes.
    pub writes: Vec<String>,
    /// Neighbour transfers.
    pub arrows: Vec<Arrow>,
    /// Bus instructions executed once this step is done.
    pub cycles: u64,
}

/// One register plane at full resolution.
#[derive(Debug, Serialize)]
pub struct Plane {
    /// Register name.
    pub name: String,
    /// Value shown black.
    pub lo: f32,
    /// Value shown white.
    pub hi: f32,
    /// 256x256 bytes, row-major, base64: level `(v - lo) / (hi - lo) * 255`; empty
    /// when the plane holds one value everywhere (`lo`).
    pub data: String,
}

/// One register of one PE.
#[derive(Debug, Serialize)]
pub struct Value {
    /// Register name.
    pub name: String,
    /// Its value.
    pub value: f32,
}

/// A PE's registers.
#[derive(Debug, Serialize)]
pub struct PeView {
    /// `north`, `east`, `south`, `west`, or `self`.
    pub dir: &'static str,
    /// Row, or `None` beyond the array's edge.
    pub row: Option<usize>,
    /// Column.
    pub col: Option<usize>,
    /// Analogue registers, then the digital ones the program uses and FLAG.
    pub values: Vec<Value>,
}

/// One run's state after the step.
#[derive(Debug, Serialize)]
pub struct RunState {
    /// `ideal` or the noise profile's name.
    pub name: String,
    /// Analogue planes (A.., NEWS), then digital.
    pub planes: Vec<Plane>,
    /// The selected PE, then its four neighbours.
    pub pe: Vec<PeView>,
    /// PE-register pairs clipped so far.
    pub saturated: u64,
}

/// Answer to `/api/run`.
#[derive(Debug, Serialize)]
pub struct RunReply {
    /// Parse or run problems (with positions); the states stop where the run stopped.
    pub errors: Vec<Diagnostic>,
    /// Every step the playground runs.
    pub steps: Vec<Step>,
    /// The step shown (macros done).
    pub step: usize,
    /// Macro instructions of the whole program.
    pub instructions: usize,
    /// Bus instructions of the whole program.
    pub cycles: u64,
    /// Why the playground stopped short of the program's end, when it did.
    pub truncated: Option<String>,
    /// Warnings of the run so far.
    pub warnings: Vec<String>,
    /// The selected PE, `[row, col]`.
    pub pe: [usize; 2],
    /// Ideal run, then noisy run.
    pub runs: Vec<RunState>,
}

/// One exercise as the page lists it.
#[derive(Debug, Serialize)]
pub struct ExerciseInfo {
    /// Folder name.
    pub name: String,
    /// The starter program (its comments state the task).
    pub starter: String,
    /// The filter spec.
    pub spec: String,
}

/// One kernel's figures, as `scamp check` reports them.
#[derive(Debug, Serialize)]
pub struct KernelGrade {
    /// Output register.
    pub out: String,
    /// Approximation depth.
    pub depth: u32,
    /// Approximated kernel against the specified one (exact arithmetic).
    pub approx: ErrorFigures,
    /// Simulated run against the approximated kernel.
    pub analogue: ErrorFigures,
    /// Simulated run against the specified kernel.
    pub total: ErrorFigures,
}

/// Answer to `/api/grade`.
#[derive(Debug, Serialize)]
pub struct GradeReply {
    /// Exercise graded.
    pub exercise: String,
    /// Parse or run problems; when there are any nothing was graded.
    pub errors: Vec<Diagnostic>,
    /// Whether the proof holds: the program computes the kernels for every image.
    pub verified: bool,
    /// A failed proof drawn as expected and computed grids.
    pub grids: Vec<ProofGrid>,
    /// Explanation lines that are not grids.
    pub notes: Vec<String>,
    /// Figures per kernel (a verified program only).
    pub kernels: Vec<KernelGrade>,
    /// Macro instructions.
    pub instructions: usize,
    /// Bus instructions.
    pub cycles: u64,
    /// Noise profile of the figures.
    pub noise: String,
    /// Test images measured.
    pub images: usize,
    /// Border left out of the figures, pixels.
    pub border: usize,
}

/// A refused request: the status and why.
#[derive(Debug, Serialize)]
pub struct ErrorReply {
    /// Why the request was refused.
    pub error: String,
}
