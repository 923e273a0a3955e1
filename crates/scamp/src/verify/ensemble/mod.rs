//! The uncertainty ensemble of a profile: the nominal profile, each described range's
//! two ends and random draws inside every range (the description is plain data of the
//! profile, [`crate::sim::noise::uncertainty`]), each member checked against both
//! device experiments ([`identity`], [`background`]) and rejected when it leaves the
//! calibration tolerance (docs/noise.md, "Error bars").
//!
//! The ensemble is part of the error model: the ranges `check --uncertainty`, `run
//! --compare --uncertainty` and `eval --uncertainty` report are taken over it. The two
//! experiments are here because every member is held against them; the fits that made
//! the profile and the reports of `scamp noise` are the command's.

pub mod background;
pub mod identity;

use crate::sim::layer::rng;
use crate::sim::noise::uncertainty::{Parameter, Range};
use crate::sim::noise::Profile;
use identity::Setup;
use serde::Serialize;
use std::collections::BTreeMap;

/// One member of the ensemble.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Member {
    /// The parameters that differ from the nominal profile, by key.
    pub(crate) values: BTreeMap<&'static str, f64>,
    /// The member's profile.
    #[serde(skip)]
    pub(crate) profile: Profile,
    /// Why the member does not reproduce the measurements (`None`: it does).
    pub(crate) rejected: Option<String>,
}

impl Member {
    /// Whether the member moves only the register range (the nominal profile, which
    /// moves nothing, included): the members that give the saturation share of a
    /// spread.
    pub(crate) fn moves_only_saturation(&self) -> bool {
        self.values.keys().all(|k| {
            Parameter::ALL
                .iter()
                .any(|p| p.key() == *k && p.is_saturation())
        })
    }
}

/// Why no ensemble can be drawn.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UncertaintyError {
    /// The profile has no `uncertainty` section.
    #[error("profile `{profile}` describes no uncertainty (add an `uncertainty` section; see docs/noise-profile.md)")]
    Undescribed {
        /// The profile's name.
        profile: String,
    },
    /// The identity-kernel experiment could not run.
    #[error(transparent)]
    Identity(#[from] identity::CalibrationError),
    /// The background experiment could not run.
    #[error(transparent)]
    Background(#[from] background::BackgroundError),
}

/// Fails when `p` describes no uncertainty, so that a request for error bars can be
/// refused before any work (compiling, measuring) is done.
pub fn described(p: &Profile) -> Result<(), UncertaintyError> {
    match p.uncertainty {
        Some(_) => Ok(()),
        None => Err(UncertaintyError::Undescribed {
            profile: p.name.clone(),
        }),
    }
}

/// The ensemble of `p`: the nominal profile first, then each parameter at each end of
/// its range (the others nominal), then `samples` members with every parameter drawn
/// uniformly inside its range. Deterministic: a pure function of the profile. Every
/// member is checked against both experiments (`consistent`).
pub fn ensemble(p: &Profile) -> Result<Vec<Member>, UncertaintyError> {
    let u = p
        .uncertainty
        .as_ref()
        .ok_or_else(|| UncertaintyError::Undescribed {
            profile: p.name.clone(),
        })?;
    let ranged: Vec<(Parameter, Range)> = Parameter::ALL
        .iter()
        .filter_map(|&k| u.range(k).map(|r| (k, r)))
        .collect();
    let mut points: Vec<Vec<(Parameter, f64)>> = vec![Vec::new()];
    for &(k, r) in &ranged {
        points.push(vec![(k, r.low)]);
        points.push(vec![(k, r.high)]);
    }
    for s in 0..u.samples {
        points.push(
            ranged
                .iter()
                .enumerate()
                .map(|(i, &(k, r))| {
                    let h = rng::mix64(rng::row_key(u.seed, 0, u64::from(s), i as u64, 0));
                    let t = (h >> 11) as f64 / (1u64 << 53) as f64;
                    (k, r.low + t * (r.high - r.low))
                })
                .collect(),
        );
    }
    crate::sim::batch::frames(points.len(), |i| {
        let point = &points[i];
        let profile = point.iter().fold(p.clone(), |q, &(k, v)| k.apply(&q, v));
        let rejected = consistent(&profile)?.err();
        Ok(Member {
            values: point.iter().map(|&(k, v)| (k.key(), v)).collect(),
            profile,
            rejected,
        })
    })
}

/// Whether `p` reproduces both device experiments within the calibration tolerance:
/// `Ok(Err(why))` when it does not.
pub(crate) fn consistent(p: &Profile) -> Result<Result<(), String>, UncertaintyError> {
    let rows = identity::compare(p, &[0, 120], 32, Setup::default())?;
    if !identity::holds(&rows) {
        return Ok(Err(format!(
            "identity kernel outside the tolerance (misfit {:.2})",
            identity::misfit(&rows)
        )));
    }
    let figures = background::figures(p, Setup::default().chip_seed, 1, 16)?;
    if let Some(f) = figures.iter().find(|f| !f.holds()) {
        return Ok(Err(format!(
            "load_in background: {} {:.2} (device {:.2})",
            f.name, f.simulated, f.device
        )));
    }
    Ok(Ok(()))
}
