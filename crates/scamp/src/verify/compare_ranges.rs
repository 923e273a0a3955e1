//! `run --compare --uncertainty`: a comparison's figures under every member of the
//! profile's uncertainty ensemble that reproduces the device measurements
//! ([`crate::verify::ensemble`]), reduced to the range of each register's figures,
//! and to the range over the members that move only the register range (the saturation
//! share of the spread, docs/noise.md "Error bars"). Members run on the same chip and
//! run seeds as the nominal comparison, so the ranges show the open parameters, not
//! seed-to-seed scatter.

use super::compare::{
    compare, CompareError, CompareOptions, Comparison, Difference, MapSink, Watched,
};
use crate::isa::Program;
use crate::sim::capture::GreyImage;
use crate::sim::noise::Profile;
use crate::sim::Array;
use crate::verify::ensemble::{self, Member};
use serde::{Serialize, Serializer};

/// Lowest and highest of one figure.
pub(crate) type Bounds = [f64; 2];

fn widen(b: Option<Bounds>, v: f64) -> Option<Bounds> {
    Some(b.map_or([v, v], |[lo, hi]| [lo.min(v), hi.max(v)]))
}

/// The range of a register's figures over some members: RMSE and bias for an analogue
/// register, the flipped fraction for a digital one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct FigureBounds {
    /// RMSE of `noisy - ideal` (analogue registers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) rmse: Option<Bounds>,
    /// Mean of `noisy - ideal` (analogue registers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) bias: Option<Bounds>,
    /// Fraction of PEs whose bit flipped (digital registers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) flipped: Option<Bounds>,
}

impl FigureBounds {
    /// Widened to hold one member's figures of a register.
    fn widen(self, d: &Difference) -> FigureBounds {
        match d {
            Difference::Analogue(a) => FigureBounds {
                rmse: widen(self.rmse, a.rmse),
                bias: widen(self.bias, a.bias),
                flipped: None,
            },
            Difference::Digital(x) => FigureBounds {
                rmse: None,
                bias: None,
                flipped: widen(self.flipped, x.flipped),
            },
        }
    }
}

/// One register's ranges.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct RegisterRange {
    /// Over the accepted members, the nominal profile included.
    #[serde(flatten)]
    pub(crate) all: FigureBounds,
    /// Over the nominal profile and the members that move only the register range.
    pub(crate) saturation_range: FigureBounds,
}

/// The ensemble and the ranges it gives.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct CompareRanges {
    /// Members drawn (the nominal profile first).
    pub(crate) members: usize,
    /// Members that reproduce the device experiments.
    pub(crate) accepted: usize,
    /// Per compared register, in the comparison's order (a JSON object keyed by name).
    #[serde(serialize_with = "in_order")]
    pub(crate) registers: Vec<(Watched, RegisterRange)>,
}

fn in_order<S: Serializer>(regs: &[(Watched, RegisterRange)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(regs.iter().map(|(w, r)| (w.to_string(), r)))
}

/// The comparison of [`compare`], and with `opts.uncertainty` its figures' ranges over
/// the profile's ensemble ([`ranges`]) in `uncertainty`: what `run --compare` and
/// `scamp.compare` report.
pub(crate) fn compare_with_ranges(
    program: &Program,
    profile: &Profile,
    images: &[(String, GreyImage)],
    prepare: &(dyn Fn(&GreyImage) -> Array + Sync),
    opts: &CompareOptions,
    on_map: Option<MapSink>,
) -> Result<Comparison, CompareError> {
    let mut c = compare(program, profile, images, prepare, opts, on_map)?;
    if opts.uncertainty {
        c.uncertainty = Some(ranges(program, profile, images, prepare, opts, &c)?);
    }
    Ok(c)
}

/// The ranges of `nominal`'s figures (the comparison already made under `profile`) over
/// `profile`'s ensemble: every accepted member compares `program` as `nominal` did.
pub(crate) fn ranges(
    program: &Program,
    profile: &Profile,
    images: &[(String, GreyImage)],
    prepare: &(dyn Fn(&GreyImage) -> Array + Sync),
    opts: &CompareOptions,
    nominal: &Comparison,
) -> Result<CompareRanges, CompareError> {
    let members = ensemble::ensemble(profile)?;
    let kept: Vec<&Member> = members
        .iter()
        .skip(1)
        .filter(|m| m.rejected.is_none())
        .collect();
    let measured = crate::sim::batch::frames(kept.len(), |i| {
        compare(program, &kept[i].profile, images, prepare, opts, None)
    })?;
    let start = |d: &Difference| FigureBounds::default().widen(d);
    let mut registers: Vec<(Watched, RegisterRange)> = nominal
        .registers
        .iter()
        .map(|(w, d)| {
            let b = start(d);
            (
                *w,
                RegisterRange {
                    all: b,
                    saturation_range: b,
                },
            )
        })
        .collect();
    for (c, member) in measured.iter().zip(&kept) {
        let only_saturation = member.moves_only_saturation();
        for ((_, r), (_, d)) in registers.iter_mut().zip(&c.registers) {
            r.all = r.all.widen(d);
            if only_saturation {
                r.saturation_range = r.saturation_range.widen(d);
            }
        }
    }
    Ok(CompareRanges {
        members: members.len(),
        accepted: members.iter().filter(|m| m.rejected.is_none()).count(),
        registers,
    })
}
