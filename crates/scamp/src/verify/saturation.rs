//! Saturation counted per register: the share of a program's PE-writes that land past
//! the profile's knee (in the run as simulated) and past its limit (in the same run with
//! saturation lifted, where values travel on unchanged: how far the program would reach).

use crate::isa::{BusOp, Program, Reg};
use crate::sim::noise::Profile;
use crate::sim::run::RunReport;
use crate::sim::PES;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One register's share of PE-writes past the knee and past the limit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct RegisterSaturation {
    /// The stage: the group of a bank (0 for a single program); in `scamp eval`, the
    /// on-sensor stage, from 1.
    pub(crate) stage: usize,
    /// The register (`NEWS` for the neighbour views too).
    pub(crate) register: String,
    /// PE-writes of the program to it (bus writes times PEs times images).
    pub(crate) writes: u64,
    /// Of those, past a knee.
    pub(crate) beyond_knee: u64,
    /// `beyond_knee / writes`.
    pub(crate) knee_share: f64,
    /// Of those, past a limit without saturation (absent when the profile has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) beyond_limit: Option<u64>,
    /// `beyond_limit / writes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) limit_share: Option<f64>,
}

impl RegisterSaturation {
    /// The same counts, of stage `stage`.
    pub(crate) fn in_stage(self, stage: usize) -> RegisterSaturation {
        RegisterSaturation { stage, ..self }
    }
}

/// The register a receiver writes: a neighbour view writes `NEWS`.
fn plane_of(r: Reg) -> Option<Reg> {
    match r {
        Reg::Gen(_) | Reg::News => Some(r),
        Reg::X(_) => Some(Reg::News),
        Reg::Pix | Reg::In => None,
    }
}

/// Bus writes of one run of `program`, per register.
pub(crate) fn bus_writes(program: &Program) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for stmt in &program.stmts {
        for op in &stmt.ops {
            if let BusOp::Transfer { dsts, .. } = op {
                for r in dsts.iter().filter_map(|&d| plane_of(d)) {
                    *out.entry(r.to_string()).or_insert(0) += 1;
                }
            }
        }
    }
    out
}

/// `profile` with its saturation lifted and the writes past its limits counted (form
/// `none` with the knees at the limits): the run that shows how far a program would
/// reach. `None` when the profile does not saturate.
pub(crate) fn counting_limits(profile: &Profile) -> Option<Profile> {
    let saturation = profile.saturation.as_ref()?.counting_limits();
    Some(Profile {
        saturation: Some(saturation),
        ..profile.clone()
    })
}

/// Counts over the first run of every image.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    knee: BTreeMap<String, u64>,
    limit: Option<BTreeMap<String, u64>>,
    images: u64,
}

impl Tally {
    /// Adds one image's run as simulated.
    pub(crate) fn add_run(&mut self, r: &RunReport) {
        self.images += 1;
        for (reg, _, writes) in &r.saturation {
            *self.knee.entry(reg.to_string()).or_insert(0) += writes;
        }
    }

    /// Adds the same image's run without saturation, its limits counted.
    pub(crate) fn add_unsaturated(&mut self, r: &RunReport) {
        let limit = self.limit.get_or_insert_with(BTreeMap::new);
        for (reg, _, writes) in &r.saturation {
            *limit.entry(reg.to_string()).or_insert(0) += writes;
        }
    }

    /// The shares, per register `program` writes, in register order.
    pub(crate) fn shares(&self, program: &Program) -> Vec<RegisterSaturation> {
        bus_writes(program)
            .into_iter()
            .map(|(register, n)| {
                let writes = n * PES as u64 * self.images;
                let share = |c: u64| c as f64 / writes.max(1) as f64;
                let beyond_knee = self.knee.get(&register).copied().unwrap_or(0);
                let beyond_limit = self
                    .limit
                    .as_ref()
                    .map(|l| l.get(&register).copied().unwrap_or(0));
                RegisterSaturation {
                    stage: 0,
                    register,
                    writes,
                    beyond_knee,
                    knee_share: share(beyond_knee),
                    beyond_limit,
                    limit_share: beyond_limit.map(share),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{parse_program, Device};

    #[test]
    fn neighbour_views_count_as_news() {
        let p = parse_program("add(A, B, C); movx(B, A, east);", Device::default()).unwrap();
        let w = bus_writes(&p);
        assert_eq!(w.get("A"), Some(&1));
        assert_eq!(w.get("B"), Some(&1));
        assert_eq!(w.get("NEWS"), Some(&2));
    }
}
