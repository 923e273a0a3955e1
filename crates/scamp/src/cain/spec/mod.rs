//! Filter specs: the YAML format of docs/spec-format.md, read into [`Spec`] with every rejection
//! positioned at the offending node.
//!
//! serde reads the document ([`crate::cain::spec::yaml::RawSpec`]) and checks single values; the checks
//! across values run here, on the raw document, and name the offending node by its path.

pub(crate) mod approx;
pub(crate) mod fit;
pub(crate) mod layer;
pub(crate) mod problem;
pub(crate) mod yaml;

use crate::isa::source::{strip_bom, MAX_SPEC_BYTES};
use crate::isa::yaml::{locate, Misplaced, Step, YamlError};
use crate::isa::{Reg, Wiring};
use crate::verify::range::InputRange;
pub use problem::SpecProblem;
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;
use yaml::{RawKernel, RawLayer, RawSpec, RawWeights, Weight};
use Step::{Index, Key};

/// Which instructions the generator may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ops {
    /// Every linear macro of docs/isa.md.
    #[default]
    All,
    /// AUKE's set: `mov`, `movx`, two-source `add`, `sub`, `neg`, `divq`, `res`.
    Basic,
}

impl std::str::FromStr for Ops {
    type Err = crate::ValueError;

    /// `all` or `basic`, as specs and the command line spell them.
    fn from_str(s: &str) -> Result<Ops, crate::ValueError> {
        match s {
            "all" => Ok(Ops::All),
            "basic" => Ok(Ops::Basic),
            _ => Err(crate::ValueError::Unknown {
                what: "instruction set",
                given: s.to_string(),
                expected: "all or basic",
            }),
        }
    }
}

/// One kernel of a spec.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelSpec {
    /// Register that must hold the result.
    pub out: Reg,
    /// Common factor applied to every weight.
    pub scale: f64,
    /// Rows north to south, columns west to east: the weights on the first input.
    pub weights: Vec<Vec<f64>>,
    /// The weights on each further input ([`Spec::other_inputs`], in order), each of
    /// the shape of `weights`; empty for a kernel of one input.
    pub other_planes: Vec<Vec<Vec<f64>>>,
}

impl KernelSpec {
    /// The weights on every input, the first input's first.
    pub(crate) fn planes(&self) -> Vec<&[Vec<f64>]> {
        std::iter::once(self.weights.as_slice())
            .chain(self.other_planes.iter().map(Vec::as_slice))
            .collect()
    }
}

/// `approximation:` settings.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApproxParams {
    /// Largest power-of-two denominator exponent tried.
    #[serde(deserialize_with = "yaml::max_depth")]
    pub max_depth: u32,
    /// Largest summed absolute error accepted per kernel.
    #[serde(deserialize_with = "yaml::max_error")]
    pub(crate) max_error: f64,
    /// Accepts an approximation that misses `max_error` at `max_depth` (otherwise
    /// refused: the program would compute another kernel than the one asked for).
    pub accept: bool,
}

impl Default for ApproxParams {
    fn default() -> Self {
        ApproxParams {
            max_depth: 8,
            max_error: 0.0,
            accept: false,
        }
    }
}

/// `search:` settings (each may be overridden on the command line).
#[derive(Clone, Copy, Debug, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchParams {
    /// Wall-clock budget in seconds.
    #[serde(deserialize_with = "yaml::time_limit")]
    pub(crate) time_limit: Option<f64>,
    /// Worker threads.
    #[serde(deserialize_with = "yaml::workers")]
    pub(crate) workers: Option<usize>,
    /// Instruction set.
    #[serde(deserialize_with = "yaml::ops")]
    pub(crate) ops: Option<Ops>,
    /// Largest number of search nodes.
    #[serde(deserialize_with = "yaml::node_limit")]
    pub(crate) node_limit: Option<u64>,
    /// Seed for ordering ties.
    #[serde(deserialize_with = "yaml::seed")]
    pub(crate) seed: Option<u64>,
    /// Memory cap in MiB.
    #[serde(rename = "memory_limit", deserialize_with = "yaml::memory_limit")]
    pub memory_limit_mb: Option<u64>,
    /// Work budget of the search (`search.work`, a positive integer).
    #[serde(deserialize_with = "yaml::work")]
    pub(crate) work: Option<u64>,
}

/// A filter spec.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// Name used in the program header.
    pub name: String,
    /// Register holding the captured image (the first input).
    pub input: Reg,
    /// Registers holding the further input channels of a multi-channel kernel set
    /// (`inputs: [A, B, C]` is `input: A` and these `[B, C]`); empty for one input.
    pub other_inputs: Vec<Reg>,
    /// Registers the program may use (may be more than six).
    pub registers: Vec<Reg>,
    /// Kernels to compute.
    pub kernels: Vec<KernelSpec>,
    /// Approximation settings.
    pub approximation: ApproxParams,
    /// Search settings.
    pub search: SearchParams,
    /// The values input pixels can take (`input_range: [lo, hi]`, default -128..127).
    pub input_range: InputRange,
    /// `fit: true`: rescale kernels whose outputs cannot fit the register range (see
    /// `crate::cain::spec::fit`).
    pub fit: bool,
}

impl Spec {
    /// Every input register, the first input's first.
    pub fn inputs(&self) -> Vec<Reg> {
        std::iter::once(self.input)
            .chain(self.other_inputs.iter().copied())
            .collect()
    }

    /// Every output register, in kernel order.
    pub fn outputs(&self) -> Vec<Reg> {
        self.kernels.iter().map(|k| k.out).collect()
    }

    /// Number of general registers the device needs so that every listed one exists.
    pub fn general_count(&self) -> usize {
        Reg::general_count(&self.registers)
    }

    /// How a program for this spec meets the device: the input registers (every
    /// input plane) and the general registers the spec's list needs.
    pub fn wiring(&self) -> Wiring {
        let general = self.general_count();
        Wiring::planes(&self.inputs(), general).unwrap_or_else(|| Wiring::new(self.input, general))
    }
}

/// Most kernels a spec may list: a bank larger than the register file is split into
/// groups that share the time limit, and beyond this each group's share is too small to
/// search.
pub(crate) const MAX_KERNELS: usize = 64;

/// Largest kernel side accepted (the search could not handle more anyway).
pub const MAX_SIDE: usize = crate::verify::symbolic::MAX_KERNEL_SIDE;

/// Largest search budget accepted, in seconds (one day). The budget is a timer the search
/// polls; a longer one is almost certainly a typo, and infinity would never stop.
pub(crate) const MAX_TIME_LIMIT: f64 = 86_400.0;

/// `search.time_limit`, `--time-limit` and Python's `time_limit=`: seconds, more than 0
/// and at most `MAX_TIME_LIMIT` (NaN and infinity refused).
///
/// ```
/// use scamp::{RangeError, check_time_limit};
/// assert_eq!(check_time_limit(2.5), Ok(2.5));
/// assert_eq!(check_time_limit(0.0), Err(RangeError::TimeLimit(0.0)));
/// assert!(check_time_limit(f64::NAN).is_err());
/// ```
pub fn check_time_limit(v: f64) -> Result<f64, RangeError> {
    if v > 0.0 && v <= MAX_TIME_LIMIT {
        Ok(v)
    } else {
        Err(RangeError::TimeLimit(v))
    }
}

/// Largest length slack of the error objective (`--slack`).
pub(crate) const MAX_SLACK: f64 = 10.0;

/// `--slack` and the library's `slack`: a fraction in 0..=`MAX_SLACK`.
pub fn check_slack(v: f64) -> Result<f64, RangeError> {
    if (0.0..=MAX_SLACK).contains(&v) {
        Ok(v)
    } else {
        Err(RangeError::Slack(v))
    }
}

/// A number outside the range its key, flag and keyword accept.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RangeError {
    /// A time limit (seconds) outside (0, `MAX_TIME_LIMIT`].
    #[error("must be more than 0 and at most {MAX_TIME_LIMIT} seconds (one day), got {0}")]
    TimeLimit(f64),
    /// A slack outside [0, `MAX_SLACK`].
    #[error("must be a fraction between 0 and {MAX_SLACK}, got {0}")]
    Slack(f64),
    /// A whole number outside its rule's range (the message names the key).
    #[error("{} must be between {} and {}, got {got}", rule.what, rule.lo, rule.hi)]
    Whole {
        /// The rule it broke.
        rule: Whole,
        /// The value given.
        got: i128,
    },
}

/// Largest number of search workers (workers beyond the cores take turns on them).
pub(crate) const MAX_WORKERS: usize = 1024;

/// The whole numbers a key accepts, shared by the spec and the command line: both refuse
/// the same values with the same message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Whole {
    /// The key's name in the spec.
    pub what: &'static str,
    /// Smallest value accepted.
    pub lo: u64,
    /// Largest value accepted.
    pub hi: u64,
}

impl Whole {
    /// The message for `v` outside the range.
    pub(crate) fn out_of_range(&self, v: impl std::fmt::Display) -> String {
        format!(
            "{} must be between {} and {}, got {v}",
            self.what, self.lo, self.hi
        )
    }

    /// `v` if in range.
    ///
    /// ```
    /// let workers = scamp::COMPILE_OPTIONS.iter().find_map(|d| d.whole.filter(|w| w.what == "workers")).unwrap();
    /// assert_eq!(workers.check(8), Ok(8));
    /// let e = workers.check(2000).unwrap_err();
    /// assert_eq!(e.to_string(), "workers must be between 1 and 1024, got 2000");
    /// ```
    pub fn check(&self, v: i128) -> Result<u64, RangeError> {
        u64::try_from(v)
            .ok()
            .filter(|u| (self.lo..=self.hi).contains(u))
            .ok_or(RangeError::Whole {
                rule: *self,
                got: v,
            })
    }

    /// Parses a command-line value: a whole number in range (a negative number or one
    /// too large for any range gets the range in its message).
    pub fn parse(&self, s: &str) -> Result<u64, crate::ValueError> {
        let t = s.trim();
        match t.parse::<i128>() {
            Ok(v) => Ok(self.check(v)?),
            Err(_)
                if !t.is_empty()
                    && t.trim_start_matches(['-', '+'])
                        .bytes()
                        .all(|b| b.is_ascii_digit()) =>
            {
                Err(crate::ValueError::TooLarge {
                    rule: *self,
                    given: t.to_string(),
                })
            }
            Err(_) => Err(crate::ValueError::NotWhole {
                rule: *self,
                given: t.to_string(),
            }),
        }
    }
}

/// `search.node_limit` / `--node-limit`.
pub(crate) const NODE_LIMIT: Whole = Whole {
    what: "node_limit",
    lo: 1,
    hi: u64::MAX,
};

/// `search.memory_limit` / `--memory-limit`, in MiB.
pub(crate) const MEMORY_LIMIT_MB: Whole = Whole {
    what: "memory_limit (MiB)",
    lo: 1,
    hi: 1 << 40,
};

/// `search.work` / `--work`.
pub(crate) const WORK: Whole = Whole {
    what: "work",
    lo: 1,
    hi: u64::MAX,
};

/// `search.seed` / `--seed`.
pub(crate) const SEED: Whole = Whole {
    what: "seed",
    lo: 0,
    hi: u64::MAX,
};

/// `search.workers` / `--workers`.
pub(crate) const WORKERS: Whole = Whole {
    what: "workers",
    lo: 1,
    hi: MAX_WORKERS as u64,
};

/// General registers of SCAMP-5 (`A..F`): what a spec may name unless it declares a
/// larger register file with `general_registers`.
pub(crate) const DEVICE_GENERAL: usize = 6;

/// Largest register file a spec may declare (`A..Z`).
pub(crate) const MAX_GENERAL: usize = 26;

type R<T> = Result<T, Misplaced<SpecProblem>>;

/// Parses `p/q`, `-p/q` or a plain decimal.
pub(crate) fn parse_fraction(s: &str) -> Option<f64> {
    let s = s.trim();
    match s.split_once('/') {
        Some((p, q)) => {
            let p: f64 = p.trim().parse().ok()?;
            let q: f64 = q.trim().parse().ok()?;
            (q != 0.0).then_some(p / q).filter(|v| v.is_finite())
        }
        None => s.parse().ok(),
    }
}

/// The register named `s` (at `path`), one of the first `general` general registers.
fn register(s: &str, path: &[Step], general: usize) -> R<Reg> {
    let last = Reg::general_name(general - 1);
    match Reg::parse(s) {
        Some(r @ Reg::Gen(i)) if usize::from(i) < general => Ok(r),
        Some(Reg::Gen(_)) if general == DEVICE_GENERAL => Err(Misplaced::at(
            path,
            SpecProblem::NotOnDevice {
                name: s.to_string(),
                last,
            },
        )),
        Some(Reg::Gen(_)) => Err(Misplaced::at(
            path,
            SpecProblem::BeyondRegisterFile {
                name: s.to_string(),
                last,
            },
        )),
        _ => Err(Misplaced::at(
            path,
            SpecProblem::NotGeneral {
                name: s.to_string(),
                last,
            },
        )),
    }
}

/// `registers:` (A..F when absent): not empty, no repeats, each within the register file.
fn register_list(names: Option<&[String]>, general: usize) -> R<Vec<Reg>> {
    let Some(names) = names else {
        return Ok((0..DEVICE_GENERAL as u8).map(Reg::Gen).collect());
    };
    if names.is_empty() {
        return Err(Misplaced::at(&[Key("registers")], SpecProblem::NoRegisters));
    }
    let mut regs = Vec::with_capacity(names.len());
    for (i, s) in names.iter().enumerate() {
        let path = [Key("registers"), Index(i)];
        let r = register(s, &path, general)?;
        if regs.contains(&r) {
            return Err(Misplaced::at(&path, SpecProblem::RegisterTwice(r)));
        }
        regs.push(r);
    }
    Ok(regs)
}

/// `input:` (the first listed register when absent), which must be listed.
fn input_register(name: Option<&str>, registers: &[Reg], general: usize) -> R<Reg> {
    let Some(s) = name else {
        return Ok(registers[0]);
    };
    let path = [Key("input")];
    let r = register(s, &path, general)?;
    if !registers.contains(&r) {
        return Err(Misplaced::at(&path, SpecProblem::InputNotListed(r)));
    }
    Ok(r)
}

/// `input:` or `inputs:` (exactly one may be given): every input register, each listed
/// in `registers`, no two alike, leaving at least one register to compute in.
fn input_registers(raw: &RawSpec, registers: &[Reg], general: usize) -> R<Vec<Reg>> {
    let Some(names) = raw.inputs.as_deref() else {
        return Ok(vec![input_register(
            raw.input.as_deref(),
            registers,
            general,
        )?]);
    };
    if raw.input.is_some() {
        return Err(Misplaced::at(&[Key("inputs")], SpecProblem::InputAndInputs));
    }
    if names.is_empty() {
        return Err(Misplaced::at(&[Key("inputs")], SpecProblem::NoInputs));
    }
    if names.len() >= registers.len() {
        return Err(Misplaced::at(
            &[Key("inputs")],
            SpecProblem::TooManyInputs {
                inputs: names.len(),
                registers: registers.len(),
            },
        ));
    }
    let mut regs = Vec::with_capacity(names.len());
    for (i, s) in names.iter().enumerate() {
        let path = [Key("inputs"), Index(i)];
        let r = register(s, &path, general)?;
        if !registers.contains(&r) {
            return Err(Misplaced::at(&path, SpecProblem::InputNotListed(r)));
        }
        if regs.contains(&r) {
            return Err(Misplaced::at(&path, SpecProblem::InputTwice(r)));
        }
        regs.push(r);
    }
    Ok(regs)
}

/// The path of kernel `k`'s key `key`.
fn kernel_path(k: usize, key: &'static str) -> [Step; 3] {
    [Key("kernels"), Index(k), Key(key)]
}

/// Kernel `k`'s weight rows: not empty, at most [`MAX_SIDE`] square, not ragged.
fn weight_rows(k: usize, rows: &[Vec<Weight>]) -> R<Vec<Vec<f64>>> {
    rows_at(&kernel_path(k, "weights"), rows)
}

/// Weight rows at `path`: not empty, at most [`MAX_SIDE`] square, not ragged.
fn rows_at(path: &[Step], rows: &[Vec<Weight>]) -> R<Vec<Vec<f64>>> {
    let path = path.to_vec();
    if rows.is_empty() {
        return Err(Misplaced::at(&path, SpecProblem::NoWeights));
    }
    if rows.len() > MAX_SIDE {
        return Err(Misplaced::at(&path, SpecProblem::TooManyRows));
    }
    for (i, cells) in rows.iter().enumerate() {
        let row = [&path[..], &[Index(i)]].concat();
        if cells.is_empty() {
            return Err(Misplaced::at(&row, SpecProblem::EmptyRow { row: i + 1 }));
        }
        if cells.len() > MAX_SIDE {
            return Err(Misplaced::at(&row, SpecProblem::TooManyColumns));
        }
        if cells.len() != rows[0].len() {
            return Err(Misplaced::at(
                &row,
                SpecProblem::Ragged {
                    row: i + 1,
                    entries: cells.len(),
                    first: rows[0].len(),
                },
            ));
        }
    }
    Ok(rows
        .iter()
        .map(|r| r.iter().map(|w| w.0).collect())
        .collect())
}

/// Kernel `k`'s weights on each of `inputs` input planes: rows as written (one input),
/// one array of rows per input, or read from the `.npy` file they name (relative to
/// `dir`, the spec's folder; a spec read from text has none), `[kh, kw]` for one input
/// and `[in, kh, kw]` for several.
fn weights_of(
    k: usize,
    raw: &RawWeights,
    inputs: usize,
    dir: Option<&Path>,
) -> R<Vec<Vec<Vec<f64>>>> {
    let path = kernel_path(k, "weights");
    let planes = match raw {
        RawWeights::Rows(rows) if inputs == 1 => return Ok(vec![weight_rows(k, rows)?]),
        RawWeights::Rows(_) => {
            return Err(Misplaced::at(&path, SpecProblem::RowsForInputs { inputs }))
        }
        RawWeights::Planes(planes) => planes,
        RawWeights::File(name) => return weights_file(k, name, inputs, dir),
    };
    if planes.len() != inputs {
        return Err(Misplaced::at(
            &path,
            SpecProblem::ArraysForInputs {
                arrays: planes.len(),
                inputs,
            },
        ));
    }
    let mut out: Vec<Vec<Vec<f64>>> = Vec::with_capacity(planes.len());
    for (z, rows) in planes.iter().enumerate() {
        let at = [&path[..], &[Index(z)]].concat();
        let plane = rows_at(&at, rows)?;
        if let Some(first) = out.first() {
            let (h, w) = (first.len(), first[0].len());
            if plane.len() != h || plane[0].len() != w {
                return Err(Misplaced::at(
                    &at,
                    SpecProblem::InputSize {
                        input: z + 1,
                        rows: plane.len(),
                        cols: plane[0].len(),
                        first_rows: h,
                        first_cols: w,
                    },
                ));
            }
        }
        out.push(plane);
    }
    Ok(out)
}

/// Kernel `k`'s weights read from the `.npy` file `name`.
fn weights_file(k: usize, name: &str, inputs: usize, dir: Option<&Path>) -> R<Vec<Vec<Vec<f64>>>> {
    let path = kernel_path(k, "weights");
    let Some(dir) = dir else {
        return Err(Misplaced::at(
            &path,
            SpecProblem::FileNeedsFolder {
                file: name.to_string(),
            },
        ));
    };
    let at = |e: layer::LayerError| Misplaced::at(&path, SpecProblem::WeightsFile(Arc::new(e)));
    if inputs == 1 {
        let a = layer::read_kernel(&dir.join(name)).map_err(at)?;
        return Ok(vec![a.rows().into_iter().map(|r| r.to_vec()).collect()]);
    }
    let a = layer::read_planes(&dir.join(name)).map_err(at)?;
    if a.dim().0 != inputs {
        return Err(Misplaced::at(
            &path,
            SpecProblem::FilePlanes {
                file: name.to_string(),
                planes: a.dim().0,
                inputs,
            },
        ));
    }
    Ok(a.outer_iter()
        .map(|p| p.rows().into_iter().map(|r| r.to_vec()).collect())
        .collect())
}

/// Kernel `k`, whose output must be a listed register.
fn kernel(
    k: usize,
    raw: &RawKernel,
    registers: &[Reg],
    general: usize,
    inputs: usize,
    dir: Option<&Path>,
) -> R<KernelSpec> {
    let path = kernel_path(k, "out");
    let out = register(&raw.out, &path, general)?;
    if !registers.contains(&out) {
        return Err(Misplaced::at(&path, SpecProblem::OutputNotListed(out)));
    }
    let mut planes = weights_of(k, &raw.weights, inputs, dir)?.into_iter();
    Ok(KernelSpec {
        out,
        scale: raw.scale,
        weights: planes.next().unwrap_or_default(),
        other_planes: planes.collect(),
    })
}

/// `kernels:`: not empty. Banks may have more kernels than registers, and kernels may
/// share an output register: the compiler splits them into groups (`cain::group`).
fn kernel_list(
    raw: &[RawKernel],
    registers: &[Reg],
    general: usize,
    inputs: usize,
    dir: Option<&Path>,
) -> R<Vec<KernelSpec>> {
    if raw.is_empty() {
        return Err(Misplaced::at(&[Key("kernels")], SpecProblem::NoKernels));
    }
    if raw.len() > MAX_KERNELS {
        return Err(Misplaced::at(
            &[Key("kernels"), Index(MAX_KERNELS)],
            SpecProblem::TooManyKernels { kernels: raw.len() },
        ));
    }
    let mut kernels: Vec<KernelSpec> = Vec::with_capacity(raw.len());
    for (i, rk) in raw.iter().enumerate() {
        let k = kernel(i, rk, registers, general, inputs, dir)?;
        kernels.push(k);
    }
    Ok(kernels)
}

/// `layer:`: the kernels of a convolution layer read from its `.npy` weights (relative
/// to `dir`), one per output register, approximated with `approximation`.
fn layer_kernels(
    raw: &RawLayer,
    inputs: &[Reg],
    registers: &[Reg],
    general: usize,
    approximation: ApproxParams,
    dir: Option<&Path>,
) -> R<Vec<KernelSpec>> {
    let at = |key: &'static str| [Key("layer"), Key(key)];
    let mut outputs = Vec::with_capacity(raw.outputs.len());
    for (i, name) in raw.outputs.iter().enumerate() {
        let path = [Key("layer"), Key("outputs"), Index(i)];
        let r = register(name, &path, general)?;
        if !registers.contains(&r) {
            return Err(Misplaced::at(&path, SpecProblem::OutputNotListed(r)));
        }
        outputs.push(r);
    }
    let Some(dir) = dir else {
        return Err(Misplaced::at(
            &at("weights"),
            SpecProblem::LayerNeedsFolder {
                file: raw.weights.clone(),
            },
        ));
    };
    let weights = layer::read_weights(&dir.join(&raw.weights))
        .map_err(|e| Misplaced::at(&at("weights"), SpecProblem::WeightsFile(Arc::new(e))))?;
    let target = layer::LayerTarget {
        name: String::new(),
        inputs: inputs.to_vec(),
        outputs,
        registers: registers.to_vec(),
        scale: raw.scale,
        approximation,
    };
    let l = layer::layer_spec(weights.view(), None, raw.groups, &target).map_err(|e| {
        let key = match e {
            layer::LayerError::Approximation { .. } => "weights",
            layer::LayerError::Mismatch(ref m) if m.is_in_outputs() => "outputs",
            _ => "weights",
        };
        Misplaced::at(
            &at(key),
            SpecProblem::Layer {
                file: raw.weights.clone(),
                error: Arc::new(e),
            },
        )
    })?;
    Ok(l.spec.kernels)
}

/// The kernels of `kernels:` or of `layer:` (exactly one of the two).
fn kernels_of(
    raw: &RawSpec,
    inputs: &[Reg],
    registers: &[Reg],
    general: usize,
    dir: Option<&Path>,
) -> R<Vec<KernelSpec>> {
    match (&raw.kernels, &raw.layer) {
        (Some(k), None) => kernel_list(k, registers, general, inputs.len(), dir),
        (None, Some(l)) => layer_kernels(l, inputs, registers, general, raw.approximation, dir),
        (Some(_), Some(_)) => Err(Misplaced::at(&[Key("layer")], SpecProblem::KernelsAndLayer)),
        (None, None) => Err(Misplaced::at(&[], SpecProblem::MissingKernels)),
    }
}

/// Rejects, at the offending weight, kernel `i` when it cannot be approximated with these
/// settings (a weight times the scale and 2^depth beyond [`approx::MAX_WEIGHT`]).
fn check_approximation(i: usize, k: &KernelSpec, params: &ApproxParams) -> R<()> {
    let Err(e) =
        approx::approximate_planes(&k.planes(), k.scale, params.max_depth, params.max_error)
    else {
        return Ok(());
    };
    let f = k.scale * f64::from(1u32 << e.depth.min(30));
    let several = k.planes().len() > 1;
    let cells = k.planes().into_iter().enumerate().flat_map(|(z, p)| {
        p.iter()
            .enumerate()
            .flat_map(move |(r, row)| row.iter().enumerate().map(move |(c, w)| (z, r, c, *w)))
    });
    for (z, r, c, w) in cells {
        {
            let x = w * f;
            if !x.is_finite() || x.abs() > approx::MAX_WEIGHT {
                let mut path = vec![Key("kernels"), Index(i), Key("weights")];
                if several {
                    path.push(Index(z));
                }
                path.extend([Index(r), Index(c)]);
                return Err(Misplaced::at(
                    &path,
                    SpecProblem::WeightTooLarge {
                        weight: w,
                        depth: e.depth,
                    },
                ));
            }
        }
    }
    Err(Misplaced::at(
        &kernel_path(i, "out"),
        SpecProblem::Approximation(e),
    ))
}

/// `input_range: [lo, hi]` (each end already within -128..128), with `lo < hi`.
fn input_range(bounds: Option<&[yaml::Bound]>) -> R<InputRange> {
    let Some(bounds) = bounds else {
        return Ok(InputRange::default());
    };
    let path = [Key("input_range")];
    let [lo, hi] = bounds else {
        return Err(Misplaced::at(
            &path,
            SpecProblem::InputRangeLength(bounds.len()),
        ));
    };
    let (lo, hi) = (lo.0, hi.0);
    if lo >= hi {
        return Err(Misplaced::at(
            &path,
            SpecProblem::InputRangeEmpty { lo, hi },
        ));
    }
    Ok(InputRange { lo, hi })
}

/// The checks across values of a deserialised spec.
fn build(raw: RawSpec, dir: Option<&Path>) -> R<Spec> {
    let general = raw.general_registers.unwrap_or(DEVICE_GENERAL);
    let registers = register_list(raw.registers.as_deref(), general)?;
    let inputs = input_registers(&raw, &registers, general)?;
    let kernels = kernels_of(&raw, &inputs, &registers, general, dir)?;
    for (i, k) in kernels.iter().enumerate() {
        check_approximation(i, k, &raw.approximation)?;
    }
    Ok(Spec {
        name: raw.name.unwrap_or_else(|| "filter".to_string()),
        input: inputs[0],
        other_inputs: inputs[1..].to_vec(),
        registers,
        kernels,
        approximation: raw.approximation,
        search: raw.search,
        input_range: input_range(raw.input_range.as_deref())?,
        fit: raw.fit,
    })
}

/// Reads a filter spec from YAML text. Errors carry the 1-based line and column of the
/// offending node.
/// Text longer than [`MAX_SPEC_BYTES`] is refused before parsing; a leading byte-order
/// mark is skipped.
///
/// ```
/// let spec = scamp::parse_spec(
///     "name: blur\ninput: A\nregisters: [A, B, C]\nkernels:\n  - out: A\n    scale: 1/4\n    weights: [[1, 2, 1]]\n",
/// )
/// .unwrap();
/// assert_eq!((spec.name.as_str(), spec.kernels.len(), spec.registers.len()), ("blur", 1, 3));
/// let e = scamp::parse_spec("kernels: 3\n").unwrap_err();
/// assert_eq!(e.pos.line, 1);
/// ```
pub fn parse_spec(text: &str) -> Result<Spec, YamlError> {
    parse_spec_in(text, None)
}

/// Reads a filter spec as [`parse_spec`] does, with `dir` the folder of the spec file:
/// `weights: FILE.npy` is read from there. Without a folder such a spec is refused at the
/// file's name.
pub fn parse_spec_in(text: &str, dir: Option<&Path>) -> Result<Spec, YamlError> {
    if text.len() as u64 > MAX_SPEC_BYTES {
        return Err(YamlError::at_start(SpecProblem::TooLarge));
    }
    let text = strip_bom(text);
    if text.trim().is_empty() {
        return Err(YamlError::at_start(SpecProblem::Empty));
    }
    let raw: RawSpec = serde_yaml::from_str(text).map_err(|e| {
        if !is_mapping(text) {
            return YamlError::at_start(SpecProblem::NotAMapping);
        }
        YamlError::of_serde(e, false)
    })?;
    build(raw, dir).map_err(|e| locate(text, e))
}

/// Whether `text` is a YAML mapping at the top (a program file is plain text or fails
/// to parse as YAML at all).
fn is_mapping(text: &str) -> bool {
    matches!(
        serde_yaml::from_str::<serde_yaml::Value>(text),
        Ok(serde_yaml::Value::Mapping(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Pos;

    const GAUSS: &str = "name: gauss3x3\ninput: A\nregisters: [A, B, C, D, E, F]\n\
        kernels:\n  - out: A\n    scale: 1/16\n    weights:\n      - [1, 2, 1]\n      \
        - [2, 4, 2]\n      - [1, 2, 1]\napproximation: { max_depth: 4, max_error: 0.0 }\n\
        search: { time_limit: 10, workers: 2, ops: all }\n";

    #[test]
    fn reads_the_example() {
        let s = parse_spec(GAUSS).unwrap();
        assert_eq!(s.name, "gauss3x3");
        assert_eq!(s.kernels[0].scale, 1.0 / 16.0);
        assert_eq!(s.kernels[0].weights[1], vec![2.0, 4.0, 2.0]);
        assert_eq!(s.approximation.max_depth, 4);
        assert_eq!(s.search.ops, Some(Ops::All));
        assert_eq!(s.general_count(), 6);
    }

    fn err(text: &str) -> (Pos, String) {
        let e = parse_spec(text).unwrap_err();
        (e.pos, e.cause.to_string())
    }

    #[test]
    fn registers_beyond_the_device_need_a_declaration() {
        let (pos, msg) = err(&GAUSS.replace("[A, B, C, D, E, F]", "[A, G, H, Z]"));
        assert_eq!(pos, Pos { line: 3, col: 16 });
        assert!(msg.contains("A..F"), "{msg}");
        let wide = GAUSS.replace("[A, B, C, D, E, F]", "[A, G, H]");
        let s = parse_spec(&format!("general_registers: 8\n{wide}")).unwrap();
        assert_eq!(s.general_count(), 8);
        let (pos, msg) = err(&format!("general_registers: 7\n{wide}"));
        assert_eq!(pos, Pos { line: 4, col: 19 });
        assert!(msg.contains("A..G"), "{msg}");
    }

    #[test]
    fn names_stay_on_one_line() {
        let (pos, msg) = err(&GAUSS.replace("name: gauss3x3", "name: \"blur\\nres(A); //\""));
        assert_eq!(pos, Pos { line: 1, col: 7 });
        assert!(msg.contains("control"), "{msg}");
        assert!(parse_spec(&GAUSS.replace("gauss3x3", "flou gaussien 3×3")).is_ok());
    }

    #[test]
    fn oversized_weights_are_positioned() {
        let (pos, msg) = err(&GAUSS.replace("[2, 4, 2]", "[2, 4e9, 2]"));
        assert_eq!(pos, Pos { line: 9, col: 13 });
        assert!(msg.contains("too large"), "{msg}");
        // Fine at depth 0, too large at the depth the approximation needs.
        let deep = "kernels:\n  - out: A\n    weights: [[500000.3, 1]]\n";
        let (pos, msg) = err(deep);
        assert_eq!(pos, Pos { line: 3, col: 16 });
        assert!(msg.contains("2^"), "{msg}");
    }

    #[test]
    fn byte_order_mark_and_size() {
        assert!(parse_spec(&format!("\u{feff}{GAUSS}")).is_ok());
        let big = format!("{GAUSS}#{}\n", "x".repeat(MAX_SPEC_BYTES as usize));
        assert!(err(&big).1.contains("larger than"));
    }

    #[test]
    fn rejections_are_positioned() {
        let ragged = GAUSS.replace("- [2, 4, 2]", "- [2, 4]");
        let (pos, msg) = err(&ragged);
        assert_eq!(pos, Pos { line: 9, col: 9 });
        assert!(msg.contains("ragged"), "{msg}");
        let (pos, msg) = err(&GAUSS.replace("out: A", "out: G"));
        assert_eq!(pos, Pos { line: 5, col: 10 });
        assert!(msg.contains("not a register of SCAMP-5"), "{msg}");
        let few = GAUSS.replace("[A, B, C, D, E, F]", "[A, B, C]");
        let (pos, msg) = err(&few.replace("out: A", "out: E"));
        assert_eq!(pos, Pos { line: 5, col: 10 });
        assert!(msg.contains("not in `registers`"), "{msg}");
        let (pos, _) = err(&GAUSS.replace("[1, 2, 1]\n      - [2", "[1, .nan, 1]\n      - [2"));
        assert_eq!(pos, Pos { line: 8, col: 13 });
        let (pos, msg) = err(&GAUSS.replace("input: A", "input: Q"));
        assert_eq!(pos, Pos { line: 2, col: 8 });
        assert!(msg.contains("`Q`"), "{msg}");
        let (pos, msg) = err(&few.replace("input: A", "input: D"));
        assert_eq!(pos, Pos { line: 2, col: 8 });
        assert!(msg.contains("input"), "{msg}");
        let (pos, _) = err(&GAUSS.replace(
            "weights:\n      - [1, 2, 1]\n      - [2, 4, 2]\n      - [1, 2, 1]",
            "weights: []",
        ));
        assert_eq!(pos.line, 7);
        // A bank: more kernels than registers, sharing output registers.
        let many = "registers: [A]\nkernels:\n  - { out: A, weights: [[1]] }\n  - { out: A, weights: [[2]] }\n";
        assert_eq!(parse_spec(many).map(|s| s.kernels.len()).ok(), Some(2));
        let (pos, _) = err("kernels: [\n");
        assert!(pos.line >= 1);
        let (pos, msg) = err("kernels:\n  - out: A\n    weights: [[1]]\n    wieghts: 2\n");
        assert_eq!(pos, Pos { line: 4, col: 5 });
        assert!(msg.contains("unknown field"), "{msg}");
    }

    #[test]
    fn work_budget_is_read_and_checked() {
        let with = |w: &str| GAUSS.replace("ops: all }", &format!("ops: all, work: {w} }}"));
        assert_eq!(parse_spec(&with("5000")).unwrap().search.work, Some(5000));
        assert_eq!(parse_spec(GAUSS).unwrap().search.work, None);
        for bad in ["0", "-3", "1.5", "lots"] {
            let (pos, msg) = err(&with(bad));
            assert_eq!(pos, Pos { line: 12, col: 55 }, "{bad}: {msg}");
            assert!(msg.contains("work"), "{bad}: {msg}");
        }
    }

    #[test]
    fn input_range_is_read_and_checked() {
        assert_eq!(
            parse_spec(GAUSS).unwrap().input_range,
            InputRange::default()
        );
        let half = format!("{GAUSS}input_range: [0, 127]\n");
        assert_eq!(
            parse_spec(&half).unwrap().input_range,
            InputRange { lo: 0.0, hi: 127.0 }
        );
        for bad in ["[5, -5]", "[3, 3]", "[]", "[0, 300]"] {
            let (pos, msg) = err(&format!("{GAUSS}input_range: {bad}\n"));
            assert_eq!(pos.line, 13, "{bad}: {msg}");
            assert!(msg.contains("input_range"), "{bad}: {msg}");
        }
    }
}
