//! Statistics over repeated runs (Monte Carlo over run seeds): per register, the mean
//! and spread of the per-run figures, and the temporal spread of each PE.

use crate::sim::readout::PlaneStats;
use serde::Serialize;
use std::collections::BTreeMap;

/// How one register's result varies over runs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct RegisterRuns {
    /// Runs accumulated.
    pub(crate) runs: u64,
    /// Mean over runs of the register's spatial mean.
    pub(crate) mean_of_mean: f64,
    /// Standard deviation over runs of the spatial mean.
    pub(crate) std_of_mean: f64,
    /// Mean over runs of the register's spatial standard deviation.
    pub(crate) mean_of_std: f64,
    /// Standard deviation over runs of the spatial standard deviation.
    pub(crate) std_of_std: f64,
    /// Smallest value seen in any run.
    pub(crate) min: f64,
    /// Largest value seen in any run.
    pub(crate) max: f64,
    /// Temporal spread: root mean square over PEs of each PE's standard deviation over
    /// runs (0 when the only randomness is the chip's fixed pattern).
    pub(crate) pe_std: f64,
}

/// Population mean and spread of values arriving one at a time (Welford's update).
#[derive(Clone, Copy, Debug, Default)]
struct Running {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Running {
    fn add(&mut self, v: f64) {
        self.n += 1;
        let d = v - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (v - self.mean);
    }

    fn mean_std(&self) -> (f64, f64) {
        (self.mean, (self.m2 / self.n.max(1) as f64).max(0.0).sqrt())
    }
}

#[derive(Clone, Debug)]
struct Acc {
    runs: u64,
    mean: Running,
    std: Running,
    min: f64,
    max: f64,
    sum: Vec<f64>,
    sum2: Vec<f64>,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            runs: 0,
            mean: Running::default(),
            std: Running::default(),
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            sum: Vec::new(),
            sum2: Vec::new(),
        }
    }
}

/// Accumulates register planes run after run, in memory that does not grow with the
/// number of runs (one running sum per PE and a few figures per register).
#[derive(Clone, Debug, Default)]
pub(crate) struct RunsAccumulator {
    regs: BTreeMap<String, Acc>,
}

impl RunsAccumulator {
    /// An empty accumulator.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Adds one run's values of register `name`.
    pub(crate) fn add(&mut self, name: &str, values: &[f32]) {
        let acc = self.regs.entry(name.to_string()).or_default();
        if acc.sum.len() != values.len() {
            acc.sum = vec![0.0; values.len()];
            acc.sum2 = vec![0.0; values.len()];
        }
        for ((s, s2), &v) in acc.sum.iter_mut().zip(&mut acc.sum2).zip(values) {
            let v = f64::from(v);
            *s += v;
            *s2 += v * v;
        }
        let stats = PlaneStats::of(values);
        acc.runs += 1;
        acc.mean.add(stats.mean);
        acc.std.add(stats.std);
        acc.min = acc.min.min(stats.min);
        acc.max = acc.max.max(stats.max);
    }

    /// The figures per register.
    pub(crate) fn finish(&self) -> BTreeMap<String, RegisterRuns> {
        self.regs
            .iter()
            .map(|(name, a)| {
                let n = a.runs.max(1) as f64;
                let (mean_of_mean, std_of_mean) = a.mean.mean_std();
                let (mean_of_std, std_of_std) = a.std.mean_std();
                let pe_var = a
                    .sum
                    .iter()
                    .zip(&a.sum2)
                    .map(|(s, s2)| (s2 / n - (s / n).powi(2)).max(0.0))
                    .sum::<f64>()
                    / a.sum.len().max(1) as f64;
                (
                    name.clone(),
                    RegisterRuns {
                        runs: a.runs,
                        mean_of_mean,
                        std_of_mean,
                        mean_of_std,
                        std_of_std,
                        min: a.min,
                        max: a.max,
                        pe_std: pe_var.sqrt(),
                    },
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_over_runs() {
        let mut acc = RunsAccumulator::new();
        acc.add("A", &[1.0, 3.0]);
        acc.add("A", &[3.0, 5.0]);
        let r = acc.finish()["A"];
        assert_eq!(r.runs, 2);
        assert_eq!((r.mean_of_mean, r.std_of_mean), (3.0, 1.0));
        assert_eq!((r.mean_of_std, r.std_of_std), (1.0, 0.0));
        assert_eq!((r.min, r.max), (1.0, 5.0));
        assert_eq!(r.pe_std, 1.0);
    }
}
