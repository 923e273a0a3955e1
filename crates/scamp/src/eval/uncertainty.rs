//! `eval --uncertainty`: the network's noisy accuracy under every member of the noise
//! profile's uncertainty ensemble that reproduces the device measurements
//! ([`crate::verify::ensemble`]), reduced to its range, and to the range over the
//! members that move only the register range (docs/noise.md, "Error bars"). Every member
//! runs on the same chips and images as the nominal evaluation, at the network's own
//! depth, with the head trained as the nominal one is.

use super::dataset::Dataset;
use super::evaluate::{evaluate, Options};
use super::network::Network;
use super::{report, EvalError};
use crate::verify::ensemble;
use serde::{Deserialize, Serialize};

/// The accuracy's range over the ensemble.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AccuracyRanges {
    /// Members drawn (the nominal profile first).
    pub(crate) members: usize,
    /// Members that reproduce the device experiments.
    pub(crate) accepted: usize,
    /// Lowest and highest mean noisy accuracy over the accepted members, the nominal
    /// profile included.
    pub(crate) accuracy_range: [f64; 2],
    /// The same over the nominal profile and the members that move only the register
    /// range (knee and limit): the saturation share of the spread.
    pub(crate) saturation_range: [f64; 2],
}

/// The ranges of `net`'s noisy accuracy under `opts`'s profile's ensemble; `nominal` is
/// the accuracy of the nominal evaluation already run.
pub fn ranges(
    net: &Network,
    data: &Dataset,
    opts: &Options,
    nominal: f64,
) -> Result<AccuracyRanges, EvalError> {
    let members = ensemble::ensemble(&opts.noise.1)?;
    let widen = |r: [f64; 2], a: f64| [r[0].min(a), r[1].max(a)];
    let (mut all, mut saturation) = ([nominal; 2], [nominal; 2]);
    for m in members.iter().skip(1).filter(|m| m.rejected.is_none()) {
        let member = Options {
            noise: (opts.noise.0.clone(), m.profile.clone()),
            chip_seeds: opts.chip_seeds,
            seed: opts.seed,
            train_noise: opts.train_noise.clone(),
            train_images: opts.train_images,
            test_images: opts.test_images,
            shard: opts.shard,
            // The network's own depth only.
            depths: Some(Vec::new()),
            compile: opts.compile.clone(),
            examples: 0,
            progress: opts.progress,
            // Only the accuracy of a member is reported.
            count_saturation: false,
        };
        let e = evaluate(net, data, &member)?;
        let a = report(&e.merge).accuracy.noisy.mean;
        all = widen(all, a);
        if m.moves_only_saturation() {
            saturation = widen(saturation, a);
        }
    }
    Ok(AccuracyRanges {
        members: members.len(),
        accepted: members.iter().filter(|m| m.rejected.is_none()).count(),
        accuracy_range: all,
        saturation_range: saturation,
    })
}
