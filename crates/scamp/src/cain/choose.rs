//! From float weights to a layer the chip can compute: the scale and the approximation
//! depth chosen for a trained convolution layer, with what was chosen and why.
//!
//! - **Scale**: the chip's input is the pixel minus 128, within the spec's input range
//!   (about +-128), and a register saturates at the profile's limit. Output `k` reaches
//!   at most `scale * bound * sum |w_k|`, so the scale is the largest power of two that
//!   keeps every output within the limit. A power of two, because it changes no
//!   weight relative to another: the integer weights are the same, with one halving
//!   more or less, and the factor folds exactly into the next layer or threshold.
//! - **Depth**: a deeper approximation is closer to the weights but takes more
//!   halvings, and each halving's transfer adds error on the chip. Every depth up to
//!   `max_depth` is scored by its predicted mean squared error summed over the
//!   outputs: the approximation's own error on the compile-time input model (the
//!   bundled images' moments), plus the error the profile predicts for the constructive
//!   program of each kernel at that depth (the program the search starts from and can
//!   only shorten). The lowest total wins; ties go to the shallower depth.

use crate::cain::drive::{race, setup::Setup};
use crate::cain::score::objective::input_stats;
use crate::cain::spec::layer::{layer_spec, LayerError, LayerSpec, LayerTarget};
use crate::cain::spec::{approx, ApproxParams, KernelSpec};
use crate::cain::{saturation_limit, CompileError, CompileOptions, Objective};
use crate::isa::Reg;
use crate::sim::noise::Profile;
use crate::verify::convolution::centre_of;
use crate::verify::predict::Affine;
use crate::verify::range::InputRange;
use ndarray::{ArrayView1, ArrayView4};
use serde::Serialize;
use std::time::Instant;

/// Most halvings or doublings the scale may apply (`2^-30..=2^30`).
pub(crate) const MAX_SCALE_EXPONENT: i32 = 30;

/// Why no scale or depth could be chosen.
#[derive(Debug, thiserror::Error)]
pub enum ChooseError {
    /// The arrays do not make a layer (see [`layer_spec`]).
    #[error(transparent)]
    Layer(#[from] LayerError),
    /// The profile or the registers refuse the layer.
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// Every weight is zero: no scale is better than another.
    #[error("every weight of the layer is zero")]
    AllZero,
}

/// What the chooser may use.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ChooseOptions {
    /// Deepest approximation tried (at most [`approx::DEEPEST`]).
    pub max_depth: u32,
    /// The profile whose saturation limit and transfers are predicted.
    pub profile: Profile,
    /// The values input pixels take.
    pub input_range: InputRange,
}

impl Default for ChooseOptions {
    fn default() -> Self {
        ChooseOptions {
            max_depth: 8,
            profile: Profile::builtin(crate::sim::noise::DEFAULT_PROFILE).unwrap_or_default(),
            input_range: InputRange::default(),
        }
    }
}

with_methods!(ChooseOptions {
    with_max_depth => max_depth: u32,
    with_profile => profile: Profile,
    with_input_range => input_range: InputRange,
});

/// One depth's predicted error.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DepthScore {
    /// The depth.
    pub(crate) depth: u32,
    /// Predicted mean squared error summed over the outputs.
    pub mse: f64,
}

/// What was chosen for one output.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelChoice {
    /// Its register.
    #[serde(serialize_with = "register_name")]
    pub(crate) out: Reg,
    /// Summed absolute weight error of the approximation (scale included).
    pub error: f64,
    /// Predicted RMSE of the approximation on the input model.
    pub approximation_rmse: f64,
    /// Predicted RMSE of the constructive program on the chip.
    pub chip_rmse: f64,
    /// The largest magnitude the scaled output reaches.
    pub peak: f64,
}

/// A register by its name (`B`), as the reports write it.
fn register_name<S: serde::Serializer>(r: &Reg, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(r)
}

/// The layer with its chosen scale and depth.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Chosen {
    /// The spec (approximated at exactly `depth`) and the scaled bias.
    #[serde(skip)]
    pub layer: LayerSpec,
    /// The scale, `2^exponent`.
    pub scale: f64,
    /// Its exponent.
    pub exponent: i32,
    /// The approximation depth.
    pub depth: u32,
    /// The saturation limit the outputs were held to.
    pub limit: f64,
    /// Per output.
    pub kernels: Vec<KernelChoice>,
    /// Every depth tried, shallowest first.
    pub tried: Vec<DepthScore>,
}

/// Chooses the scale and the approximation depth of a convolution layer (`weights`
/// `[out, in/groups, kh, kw]`, `bias` `[out]`, `groups`, as [`layer_spec`] takes them)
/// and returns its spec with the choice and the predicted errors behind it.
/// `target.scale` and `target.approximation` are ignored: they are what is chosen.
pub fn choose_layer(
    weights: ArrayView4<f64>,
    bias: Option<ArrayView1<f64>>,
    groups: usize,
    target: &LayerTarget,
    opts: &ChooseOptions,
) -> Result<Chosen, ChooseError> {
    let limit = saturation_limit(&opts.profile).ok_or_else(|| CompileError::NoSaturation {
        profile: opts.profile.name.clone(),
    })?;
    // The arrays checked before anything is computed from them.
    layer_spec(weights, bias, groups, &at(target, 1.0, 0))?;
    let widest = weights
        .outer_iter()
        .map(|k| k.iter().map(|w| w.abs()).sum::<f64>())
        .fold(0.0, f64::max);
    if widest == 0.0 {
        return Err(ChooseError::AllZero);
    }
    let bound = opts.input_range.bound();
    let exponent = ((limit / (bound * widest)).log2().floor() as i32)
        .clamp(-MAX_SCALE_EXPONENT, MAX_SCALE_EXPONENT);
    let scale = 2f64.powi(exponent);
    let mut tried = Vec::new();
    let mut best: Option<(f64, u32, Vec<KernelChoice>)> = None;
    for depth in 0..=opts.max_depth.min(approx::DEEPEST) {
        let layer = layer_spec(weights, bias, groups, &at(target, scale, depth))?;
        let kernels = score_depth(&layer, opts, bound)?;
        let mse = kernels
            .iter()
            .map(|k| k.approximation_rmse.powi(2) + k.chip_rmse.powi(2))
            .sum::<f64>();
        tried.push(DepthScore { depth, mse });
        if best.as_ref().is_none_or(|b| mse < b.0) {
            best = Some((mse, depth, kernels));
        }
    }
    let (_, depth, kernels) = best.expect("depth 0 is always tried");
    Ok(Chosen {
        layer: layer_spec(weights, bias, groups, &at(target, scale, depth))?,
        scale,
        exponent,
        depth,
        limit,
        kernels,
        tried,
    })
}

/// `target` with `scale` and an approximation at exactly `depth` (accepted whatever its
/// error: the chooser weighs that error itself).
fn at(target: &LayerTarget, scale: f64, depth: u32) -> LayerTarget {
    LayerTarget {
        scale,
        approximation: ApproxParams {
            max_depth: depth,
            max_error: 0.0,
            accept: true,
        },
        ..target.clone()
    }
}

/// Each output's predicted errors at the layer's depth: the approximation's, and the
/// constructive program's on the chip.
fn score_depth(
    layer: &LayerSpec,
    opts: &ChooseOptions,
    bound: f64,
) -> Result<Vec<KernelChoice>, ChooseError> {
    let mut spec = layer.spec.clone();
    spec.input_range = opts.input_range;
    let compile = CompileOptions {
        objective: Some(Objective::Error),
        profile: Some(opts.profile.clone()),
        workers: Some(1),
        ..CompileOptions::default()
    };
    let setup = Setup::new(&spec, &compile)?;
    let stats = input_stats(opts.input_range);
    let mut out = Vec::with_capacity(spec.kernels.len());
    for (i, (k, report)) in spec.kernels.iter().zip(&setup.kernels).enumerate() {
        let prepared = race::prepare(&setup, &[i], Instant::now())?;
        let chip_rmse = prepared
            .constructive_predicted()
            .and_then(|p| p.first())
            .map_or(f64::INFINITY, |p| p.rmse);
        let diff = difference(k, &report.approx);
        let peak = k.weights.iter().flatten().map(|w| w.abs()).sum::<f64>() * k.scale * bound;
        out.push(KernelChoice {
            out: k.out,
            error: report.approx.error,
            approximation_rmse: stats.expect_square(&diff).sqrt(),
            chip_rmse,
            peak,
        });
    }
    Ok(out)
}

/// The approximated kernel less the exact one, by tap: every input plane, by offset
/// from the centre.
fn difference(k: &KernelSpec, a: &approx::Approx) -> Affine {
    let (h, w) = (k.weights.len(), k.weights.first().map_or(0, Vec::len));
    let (ci, cj) = centre_of(h, w);
    let unit = 2f64.powi(a.depth as i32);
    let approx = std::iter::once(&a.weights).chain(&a.other_planes);
    let mut terms = Vec::with_capacity(h * w);
    for (z, (plane, qplane)) in k.planes().into_iter().zip(approx).enumerate() {
        let Ok(z) = u16::try_from(z) else { continue };
        for (i, (row, qrow)) in plane.iter().zip(qplane).enumerate() {
            for (j, (&wt, &q)) in row.iter().zip(qrow).enumerate() {
                let offset = (z, i as i32 - ci as i32, j as i32 - cj as i32);
                terms.push((offset, q as f64 / unit - wt * k.scale));
            }
        }
    }
    terms.sort_by_key(|t| t.0);
    Affine {
        terms,
        constant: 0.0,
    }
}
