//! What is wrong with a filter spec, found by the checks across its values (those that
//! run after deserialising; a value's own check runs inside serde and is serde_yaml's
//! error). Each cause carries the values involved; its text is the message the command
//! prints after the position.

use super::approx::ApproxError;
use super::layer::LayerError;
use super::{MAX_KERNELS, MAX_SIDE};
use crate::isa::source::MAX_SPEC_BYTES;
use crate::isa::text::number;
use crate::isa::Reg;
use std::sync::Arc;

/// A spec's problem: the node it is at goes with it ([`crate::isa::YamlError`]).
#[derive(Clone, Debug, thiserror::Error)]
pub enum SpecProblem {
    /// The text is longer than a spec may be.
    #[error("the spec is larger than {MAX_SPEC_BYTES} bytes, the most accepted")]
    TooLarge,
    /// Nothing but white space.
    #[error("the document is empty")]
    Empty,
    /// The YAML is not a mapping at the top (a program, perhaps).
    #[error(
        "a filter spec is a YAML mapping (`kernels:` and the keys of docs/spec-format.md), \
         and this is not one: is it a program? `compile` takes a spec; `scamp check PROGRAM \
         --kernel SPEC` checks a program"
    )]
    NotAMapping,
    /// A register beyond SCAMP-5's six, in a spec that does not declare a larger file.
    #[error(
        "`{name}` is not a register of SCAMP-5 (A..{last}); a spec for a larger register \
         file declares it with `general_registers: N`"
    )]
    NotOnDevice {
        /// The register as written.
        name: String,
        /// The last register of the file.
        last: String,
    },
    /// A register beyond the declared `general_registers`.
    #[error("`{name}` is beyond the declared register file (A..{last})")]
    BeyondRegisterFile {
        /// The register as written.
        name: String,
        /// The last register of the file.
        last: String,
    },
    /// Not the name of a general register.
    #[error("`{name}` is not a general register (A..{last})")]
    NotGeneral {
        /// The name as written.
        name: String,
        /// The last register of the file.
        last: String,
    },
    /// `registers: []`.
    #[error("the register list is empty")]
    NoRegisters,
    /// A register listed twice in `registers`.
    #[error("register {0} listed twice")]
    RegisterTwice(Reg),
    /// An input register missing from `registers`.
    #[error("input register {0} is not in `registers`")]
    InputNotListed(Reg),
    /// Both `input` and `inputs`.
    #[error("a spec gives `input` or `inputs`, not both")]
    InputAndInputs,
    /// `inputs: []`.
    #[error("the input list is empty")]
    NoInputs,
    /// So many inputs that no register is left to compute in.
    #[error(
        "{inputs} inputs for the {registers} registers in `registers`: each input holds its \
         own register from the first instruction, leaving none to compute in (no split, by \
         kernel or by channel, frees one before it): at most {} inputs",
        .registers - 1
    )]
    TooManyInputs {
        /// The inputs listed.
        inputs: usize,
        /// The registers listed.
        registers: usize,
    },
    /// An input listed twice.
    #[error("input register {0} listed twice")]
    InputTwice(Reg),
    /// `weights: []`.
    #[error("weights are empty")]
    NoWeights,
    /// More rows than a kernel may have.
    #[error("at most {MAX_SIDE} rows of weights are supported")]
    TooManyRows,
    /// An empty row of weights.
    #[error("row {row} of weights is empty")]
    EmptyRow {
        /// The row (1-based).
        row: usize,
    },
    /// More columns than a kernel may have.
    #[error("at most {MAX_SIDE} columns of weights are supported")]
    TooManyColumns,
    /// Rows of different lengths.
    #[error("ragged weights: row {row} has {entries} entries, row 1 has {first}")]
    Ragged {
        /// The row (1-based).
        row: usize,
        /// Its entries.
        entries: usize,
        /// The first row's entries.
        first: usize,
    },
    /// Rows of numbers in a spec of several inputs.
    #[error(
        "the spec has {inputs} inputs: weights are one array of rows per input \
         ([in][kh][kw]), got rows of numbers"
    )]
    RowsForInputs {
        /// The spec's inputs.
        inputs: usize,
    },
    /// Not one array of weights per input.
    #[error("{arrays} arrays of weights for {inputs} inputs: give one per input")]
    ArraysForInputs {
        /// The arrays given.
        arrays: usize,
        /// The spec's inputs.
        inputs: usize,
    },
    /// One input's weights of another size than the first's.
    #[error(
        "input {input} has weights of {rows}x{cols}, input 1 of {first_rows}x{first_cols}: \
         every input's are the same size"
    )]
    InputSize {
        /// The input (1-based).
        input: usize,
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
        /// The first input's rows.
        first_rows: usize,
        /// The first input's columns.
        first_cols: usize,
    },
    /// Weights from a file in a spec read from text (no folder to read it from).
    #[error(
        "weights from the file `{file}` need the spec's folder: read the spec from a file, \
         or give the weights as rows"
    )]
    FileNeedsFolder {
        /// The file named.
        file: String,
    },
    /// A kernel's or a layer's `.npy` weights could not be read.
    #[error(transparent)]
    WeightsFile(Arc<LayerError>),
    /// A `.npy` file of another number of planes than the spec's inputs.
    #[error("{file}: {planes} planes of weights for {inputs} inputs: the array is [in, kh, kw]")]
    FilePlanes {
        /// The file named.
        file: String,
        /// Its planes.
        planes: usize,
        /// The spec's inputs.
        inputs: usize,
    },
    /// An output register missing from `registers`.
    #[error("output register {0} is not in `registers`")]
    OutputNotListed(Reg),
    /// `kernels: []`.
    #[error("the kernel list is empty")]
    NoKernels,
    /// More kernels than a spec may list.
    #[error(
        "{kernels} kernels, more than the {MAX_KERNELS} a spec may list (each group of a \
         bank gets its share of the time limit)"
    )]
    TooManyKernels {
        /// The kernels listed.
        kernels: usize,
    },
    /// A layer's weights in a spec read from text.
    #[error("weights from the file `{file}` need the spec's folder: read the spec from a file")]
    LayerNeedsFolder {
        /// The file named.
        file: String,
    },
    /// A layer's weights that do not make a spec.
    #[error("{file}: {error}")]
    Layer {
        /// The weights' file.
        file: String,
        /// Why.
        error: Arc<LayerError>,
    },
    /// Both `kernels` and `layer`.
    #[error("a spec gives `kernels` or a `layer`, not both")]
    KernelsAndLayer,
    /// Neither `kernels` nor `layer`.
    #[error("missing field `kernels` (or a `layer` of weights from a .npy file)")]
    MissingKernels,
    /// A weight too large for the approximation's integers.
    #[error(
        "weight {} too large: |weight x scale x 2^{depth}| must be at most 2^20",
        number(*.weight)
    )]
    WeightTooLarge {
        /// The weight as written.
        weight: f64,
        /// The depth at which it overflows.
        depth: u32,
    },
    /// A kernel that cannot be approximated with these settings.
    #[error(transparent)]
    Approximation(#[from] ApproxError),
    /// `input_range` of other than two values.
    #[error("input_range must be [lo, hi], got {0} value(s)")]
    InputRangeLength(usize),
    /// `input_range: [lo, hi]` with `lo >= hi`.
    #[error("input_range [{lo}, {hi}] is empty or reversed (lo must be below hi)")]
    InputRangeEmpty {
        /// The low end.
        lo: f64,
        /// The high end.
        hi: f64,
    },
}
