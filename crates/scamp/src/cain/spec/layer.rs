//! Weights as they were trained: a convolution layer's float arrays (PyTorch's
//! `Conv2d.weight`, `[out, in/groups, kh, kw]`, and its bias, `[out]`) read from `.npy`
//! files and turned into a [`Spec`] whose kernels the generator approximates by
//! multiples of 2^-d, as it does typed weights.
//!
//! The program a spec compiles to is linear: it cannot add a constant, so the bias is
//! returned beside the spec ([`LayerSpec::bias`]) for the caller to apply (a decision's
//! threshold, the next layer's offset).

use crate::cain::spec::{approx, ApproxParams, KernelSpec, SearchParams, Spec};
use crate::cain::spec::{MAX_GENERAL, MAX_KERNELS, MAX_SIDE};
use crate::isa::Reg;
use crate::sim::readout::npy::{self, NpyError, MAX_NPY_HEADER};
use crate::verify::range::InputRange;
use ndarray::{Array1, Array2, Array4, ArrayView1, ArrayView4, Dimension, Ix1, Ix2, Ix4};
use std::path::{Path, PathBuf};

/// Largest weights file read: the fixed start, the largest header and the largest layer
/// a spec can hold ([`MAX_KERNELS`] kernels of [`MAX_GENERAL`] channels of
/// [`MAX_SIDE`] x [`MAX_SIDE`] float64 weights).
pub(crate) const MAX_LAYER_FILE: usize =
    12 + MAX_NPY_HEADER + MAX_KERNELS * MAX_GENERAL * MAX_SIDE * MAX_SIDE * 8;

/// Why a layer's arrays cannot become a spec.
#[derive(Debug, thiserror::Error)]
pub enum LayerError {
    /// A `.npy` file that cannot be read or holds the wrong shape or element type.
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        source: NpyError,
    },
    /// A value that is not a finite number, at its index (`[out, in, row, col]`).
    #[error("{}weight {} is {value}, not a finite number", file_prefix(.path), index_text(.index))]
    NotFinite {
        /// The file it came from, if any.
        path: Option<PathBuf>,
        /// Its index.
        index: Vec<usize>,
        /// The value.
        value: f64,
    },
    /// Arrays, groups and registers that do not fit together.
    #[error(transparent)]
    Mismatch(#[from] Mismatch),
    /// A kernel that cannot be approximated within the settings.
    #[error("kernel {kernel} (output {out}): {cause}")]
    Approximation {
        /// Its index in the layer.
        kernel: usize,
        /// Its output register.
        out: Reg,
        /// Why.
        cause: ApproxRefusal,
    },
}

/// How a layer's arrays, groups and registers do not fit together.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Mismatch {
    /// A weights shape (`[out, in/groups, kh, kw]`) with a size 0.
    #[error("the weights have shape {}: no size may be 0", shape_text(.0))]
    ZeroSize([usize; 4]),
    /// A weights shape with more outputs or larger sides than a spec holds.
    #[error(
        "the weights have shape {}: at most {MAX_KERNELS} outputs and sides of at most {MAX_SIDE}",
        shape_text(.0)
    )]
    TooLarge([usize; 4]),
    /// A group count that is 0 or does not divide the outputs.
    #[error("groups {groups} must be at least 1 and divide the {outputs} outputs")]
    Groups {
        /// The groups given.
        groups: usize,
        /// The weights' outputs.
        outputs: usize,
    },
    /// A bias of another length than the outputs.
    #[error("the bias has {bias} values, the weights {outputs} outputs")]
    Bias {
        /// The bias's values.
        bias: usize,
        /// The weights' outputs.
        outputs: usize,
    },
    /// Another number of input registers than the weights read.
    #[error(
        "the weights read {} input channels ({per_group} per group x {groups} groups), \
         {given} input registers are given",
        channels(.per_group, .groups)
    )]
    Inputs {
        /// Input channels per group.
        per_group: usize,
        /// Groups.
        groups: usize,
        /// Input registers given.
        given: usize,
    },
    /// Another number of output registers than the weights have outputs.
    #[error("the weights have {outputs} outputs, {given} output registers are given")]
    Outputs {
        /// The weights' outputs.
        outputs: usize,
        /// Output registers given.
        given: usize,
    },
    /// An input register listed twice.
    #[error("input register {0} is given twice")]
    InputTwice(Reg),
    /// An input or output register outside the layer's registers.
    #[error("register {0} is not among the layer's registers")]
    NotARegister(Reg),
    /// A scale that is 0 or not finite.
    #[error("the scale must be finite and not 0, got {0}")]
    Scale(f64),
}

impl Mismatch {
    /// Whether the mismatch is in the output registers (a spec's `outputs` key) rather
    /// than in the weights.
    pub(crate) fn is_in_outputs(&self) -> bool {
        matches!(self, Mismatch::Outputs { .. } | Mismatch::NotARegister(_))
    }
}

fn channels(per_group: &usize, groups: &usize) -> usize {
    per_group.saturating_mul(*groups)
}

fn shape_text(shape: &[usize; 4]) -> String {
    let [out, per_group, kh, kw] = shape;
    format!("({out}, {per_group}, {kh}, {kw})")
}

/// Why a kernel of a layer cannot be approximated.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ApproxRefusal {
    /// A scaled weight overflows.
    #[error(transparent)]
    Overflow(#[from] approx::ApproxError),
    /// The approximation misses `max_error` at `max_depth` (and `accept` is off).
    #[error(transparent)]
    Miss(#[from] approx::ApproxMiss),
}

fn file_prefix(path: &Option<PathBuf>) -> String {
    path.as_ref()
        .map_or_else(String::new, |p| format!("{}: ", p.display()))
}

fn index_text(index: &[usize]) -> String {
    let parts: Vec<String> = index.iter().map(ToString::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// Refuses a shape other than `rank` sizes each within `1..=most[i]`; `what` names the
/// layout in the message (`[out, in/groups, kh, kw]`).
fn shape_check(sizes: &[u64], most: &[usize], what: &'static str) -> Result<(), NpyError> {
    if sizes.len() != most.len() {
        return Err(NpyError::Rank {
            layout: what,
            most: most.to_vec(),
            got: sizes.to_vec(),
        });
    }
    for (&s, &m) in sizes.iter().zip(most) {
        if s == 0 || s > m as u64 {
            return Err(NpyError::OutOfBounds {
                layout: what,
                most: most.to_vec(),
                bound: m,
                got: sizes.to_vec(),
            });
        }
    }
    Ok(())
}

/// Reads a float32 or float64 array (either byte order) of `most.len()` dimensions, each
/// at most `most[i]`, and refuses NaN and infinities.
fn read_checked(
    path: &Path,
    most: &[usize],
    what: &'static str,
) -> Result<ndarray::ArrayD<f64>, LayerError> {
    let file = |source| LayerError::File {
        path: path.to_path_buf(),
        source,
    };
    let a = npy::read_floats(path, MAX_LAYER_FILE, |s| shape_check(s, most, what)).map_err(file)?;
    if let Some((index, &value)) = a.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(LayerError::NotFinite {
            path: Some(path.to_path_buf()),
            index: index.slice().to_vec(),
            value,
        });
    }
    Ok(a)
}

/// Reads a layer's weights from a `.npy` file: float32 or float64 (little or big
/// endian) of shape `[out, in/groups, kh, kw]` (PyTorch's `Conv2d.weight`), with at
/// most `MAX_KERNELS` outputs, `MAX_GENERAL` inputs per group and sides of at most
/// [`MAX_SIDE`]. The header's shape is checked before anything is allocated and at
/// most `MAX_LAYER_FILE` bytes are read; NaN and infinities are refused. Every error
/// names the file.
pub fn read_weights(path: &Path) -> Result<Array4<f64>, LayerError> {
    let most = [MAX_KERNELS, MAX_GENERAL, MAX_SIDE, MAX_SIDE];
    let a = read_checked(path, &most, "[out, in/groups, kh, kw]")?;
    Ok(a.into_dimensionality::<Ix4>()
        .expect("the shape was checked to have four sizes"))
}

/// Reads a layer's bias from a `.npy` file: float32 or float64 of shape `[out]` (at most
/// `MAX_KERNELS`), finite. Every error names the file.
pub fn read_bias(path: &Path) -> Result<Array1<f64>, LayerError> {
    let a = read_checked(path, &[MAX_KERNELS], "[out]")?;
    Ok(a.into_dimensionality::<Ix1>()
        .expect("the shape was checked to have one size"))
}

/// Reads one kernel's weights from a `.npy` file: float32 or float64 of shape `[kh, kw]`
/// (rows north to south), sides at most [`MAX_SIDE`], finite.
pub(crate) fn read_kernel(path: &Path) -> Result<Array2<f64>, LayerError> {
    let a = read_checked(path, &[MAX_SIDE, MAX_SIDE], "[kh, kw]")?;
    Ok(a.into_dimensionality::<Ix2>()
        .expect("the shape was checked to have two sizes"))
}

/// Reads one multi-input kernel's weights from a `.npy` file: float32 or float64 of
/// shape `[in, kh, kw]` (one plane per input, rows north to south), at most
/// [`MAX_GENERAL`] planes with sides of at most [`MAX_SIDE`], finite.
pub(crate) fn read_planes(path: &Path) -> Result<ndarray::Array3<f64>, LayerError> {
    let a = read_checked(path, &[MAX_GENERAL, MAX_SIDE, MAX_SIDE], "[in, kh, kw]")?;
    Ok(a.into_dimensionality::<ndarray::Ix3>()
        .expect("the shape was checked to have three sizes"))
}

/// Where a layer reads and writes on the chip, and what else the spec says.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerTarget {
    /// The spec's name.
    pub name: String,
    /// One register per input channel (the layer's `in`).
    pub inputs: Vec<Reg>,
    /// One register per output channel (the layer's `out`).
    pub outputs: Vec<Reg>,
    /// The registers the program may use (inputs and outputs among them).
    pub registers: Vec<Reg>,
    /// Factor applied to every weight (the weights are `scale * w`).
    pub scale: f64,
    /// How the weights are approximated.
    pub approximation: ApproxParams,
}

/// A layer as a spec, and the bias the program leaves to its caller.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerSpec {
    /// One kernel per output channel, in the order of the weights.
    pub spec: Spec,
    /// Per output channel, the bias times the target's scale (zeros without a bias): the
    /// output register holds `scale * (w * x)`, the layer's output is that plus this.
    pub bias: Vec<f64>,
}

/// Turns a convolution layer into a spec: `weights` of shape `[out, in/groups, kh, kw]`
/// (PyTorch's `Conv2d.weight`, a correlation: row 0 north, column 0 west), `bias` of
/// shape `[out]` (or none), `groups` as in `Conv2d` (1 for a full convolution, `in` for
/// a depthwise one), and `target` for the registers, the scale and the approximation.
///
/// Every kernel is approximated with `target.approximation` as typed weights are
/// (multiples of 2^-d with their summed error); a kernel that misses `max_error` at
/// `max_depth` is refused unless `accept` is set. Errors say which array, kernel or
/// register is at fault; nothing panics on any input.
///
/// With several input channels each kernel reads one plane per input register (the
/// channels outside its group have zero weights): `groups: 1` gives kernels over every
/// input, a depthwise layer kernels over one each. This is the entry point for a
/// multi-input [`Spec`] built from an `[out, in, kh, kw]` array.
pub fn layer_spec(
    weights: ArrayView4<f64>,
    bias: Option<ArrayView1<f64>>,
    groups: usize,
    target: &LayerTarget,
) -> Result<LayerSpec, LayerError> {
    let (out, per_group, kh, kw) = weights.dim();
    check_shapes(
        out,
        per_group,
        kh,
        kw,
        bias.map(|b| b.len()),
        groups,
        target,
    )?;
    if let Some((index, &value)) = weights.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(LayerError::NotFinite {
            path: None,
            index: vec![index.0, index.1, index.2, index.3],
            value,
        });
    }
    let bias: Vec<f64> = match bias {
        Some(b) => b.iter().map(|&v| v * target.scale).collect(),
        None => vec![0.0; out],
    };
    if let Some(i) = bias.iter().position(|v| !v.is_finite()) {
        return Err(LayerError::NotFinite {
            path: None,
            index: vec![i],
            value: bias[i],
        });
    }
    // Output o belongs to group o / (out / groups), which reads input channels
    // group * per_group .. (group + 1) * per_group.
    let per_out = out / groups;
    let plane = |o: usize, z: usize| -> Vec<Vec<f64>> {
        let first = (o / per_out) * per_group;
        (0..kh)
            .map(|r| {
                (0..kw)
                    .map(|c| {
                        z.checked_sub(first)
                            .filter(|&k| k < per_group)
                            .map_or(0.0, |k| weights[[o, k, r, c]])
                    })
                    .collect()
            })
            .collect()
    };
    let channels = per_group * groups;
    let kernels: Vec<KernelSpec> = (0..out)
        .map(|o| KernelSpec {
            out: target.outputs[o],
            scale: target.scale,
            weights: plane(o, 0),
            other_planes: (1..channels).map(|z| plane(o, z)).collect(),
        })
        .collect();
    for (i, k) in kernels.iter().enumerate() {
        check_approximation(i, k, &target.approximation)?;
    }
    let spec = Spec {
        name: target.name.clone(),
        input: target.inputs[0],
        other_inputs: target.inputs[1..].to_vec(),
        registers: target.registers.clone(),
        kernels,
        approximation: target.approximation,
        search: SearchParams::default(),
        input_range: InputRange::default(),
        fit: false,
    };
    Ok(LayerSpec { spec, bias })
}

/// The checks of [`layer_spec`] across the arrays' sizes, the groups and the registers.
fn check_shapes(
    out: usize,
    per_group: usize,
    kh: usize,
    kw: usize,
    bias: Option<usize>,
    groups: usize,
    t: &LayerTarget,
) -> Result<(), LayerError> {
    let bad = |m: Mismatch| Err(LayerError::Mismatch(m));
    let shape = [out, per_group, kh, kw];
    if out == 0 || per_group == 0 || kh == 0 || kw == 0 {
        return bad(Mismatch::ZeroSize(shape));
    }
    if out > MAX_KERNELS || kh > MAX_SIDE || kw > MAX_SIDE {
        return bad(Mismatch::TooLarge(shape));
    }
    if groups == 0 || !out.is_multiple_of(groups) {
        return bad(Mismatch::Groups {
            groups,
            outputs: out,
        });
    }
    if let Some(b) = bias.filter(|&b| b != out) {
        return bad(Mismatch::Bias {
            bias: b,
            outputs: out,
        });
    }
    let inputs = per_group.saturating_mul(groups);
    if t.inputs.len() != inputs {
        return bad(Mismatch::Inputs {
            per_group,
            groups,
            given: t.inputs.len(),
        });
    }
    if t.outputs.len() != out {
        return bad(Mismatch::Outputs {
            outputs: out,
            given: t.outputs.len(),
        });
    }
    if let Some(&r) = t
        .inputs
        .iter()
        .enumerate()
        .find_map(|(i, r)| t.inputs[..i].contains(r).then_some(r))
    {
        return bad(Mismatch::InputTwice(r));
    }
    if let Some(&r) = t
        .inputs
        .iter()
        .chain(&t.outputs)
        .find(|r| !t.registers.contains(r))
    {
        return bad(Mismatch::NotARegister(r));
    }
    if !t.scale.is_finite() || t.scale == 0.0 {
        return bad(Mismatch::Scale(t.scale));
    }
    Ok(())
}

/// Refuses kernel `i` when its weights overflow the approximation or miss `max_error`
/// at `max_depth` without `accept`.
fn check_approximation(i: usize, k: &KernelSpec, p: &ApproxParams) -> Result<(), LayerError> {
    let refuse = |cause: ApproxRefusal| LayerError::Approximation {
        kernel: i,
        out: k.out,
        cause,
    };
    let a = approx::approximate_planes(&k.planes(), k.scale, p.max_depth, p.max_error)
        .map_err(|e| refuse(e.into()))?;
    if p.accept {
        return Ok(());
    }
    approx::check_miss(&k.planes(), k.scale, &a, p.max_depth, p.max_error)
        .map_err(|e| refuse(e.into()))
}

/// A spec as YAML text that [`crate::cain::parse_spec`] reads back to the same spec:
/// its name, input, registers, kernels (weights written with every digit, so that they
/// read back exactly), approximation and input range. Search settings are left out.
pub fn spec_yaml(spec: &Spec) -> String {
    let list = |regs: &[Reg]| {
        let names: Vec<String> = regs.iter().map(ToString::to_string).collect();
        format!("[{}]", names.join(", "))
    };
    let name = serde_json::to_string(&spec.name).unwrap_or_else(|_| "\"filter\"".into());
    let inputs = if spec.other_inputs.is_empty() {
        format!("input: {}", spec.input)
    } else {
        format!("inputs: {}", list(&spec.inputs()))
    };
    let mut out = format!(
        "name: {name}\n{inputs}\nregisters: {}\nkernels:\n",
        list(&spec.registers)
    );
    let rows = |plane: &[Vec<f64>], indent: &str, out: &mut String| {
        for row in plane {
            let cells: Vec<String> = row.iter().map(ToString::to_string).collect();
            out.push_str(&format!("{indent}- [{}]\n", cells.join(", ")));
        }
    };
    for k in &spec.kernels {
        out.push_str(&format!(
            "  - out: {}\n    scale: {}\n    weights:\n",
            k.out, k.scale
        ));
        if spec.other_inputs.is_empty() {
            rows(&k.weights, "      ", &mut out);
        } else {
            for plane in k.planes() {
                out.push_str("      -\n");
                rows(plane, "        ", &mut out);
            }
        }
    }
    let a = &spec.approximation;
    out.push_str(&format!(
        "approximation: {{ max_depth: {}, max_error: {}, accept: {} }}\n",
        a.max_depth, a.max_error, a.accept
    ));
    if spec.input_range != InputRange::default() {
        let r = spec.input_range;
        out.push_str(&format!("input_range: [{}, {}]\n", r.lo, r.hi));
    }
    out
}
