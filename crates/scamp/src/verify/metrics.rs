//! Error figures of docs/noise.md: RMSE, max absolute error, PSNR (peak 255) and mean bias over
//! the interior of the image.

use ndarray::{s, Array2};
use serde::Serialize;

/// The figures of one error image.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ErrorFigures {
    /// Root mean square error.
    pub rmse: f64,
    /// Largest absolute error.
    pub max: f64,
    /// Peak signal-to-noise ratio in dB for a peak of 255 (`None` when the error is zero).
    pub psnr: Option<f64>,
    /// Mean of the signed error (result - reference).
    pub bias: f64,
}

impl ErrorFigures {
    /// Figures of `result - reference` over the interior that excludes `border` pixels on
    /// every side.
    pub(crate) fn between(result: &Array2<f64>, reference: &Array2<f64>, border: usize) -> Self {
        let mut acc = ErrorAccumulator::default();
        acc.add(result, reference, border);
        acc.figures()
    }
}

/// Collects errors over several images before computing the figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ErrorAccumulator {
    sq: f64,
    sum: f64,
    max: f64,
    n: u64,
}

impl ErrorAccumulator {
    /// Adds the interior (excluding `border` pixels on every side) of `result - reference`.
    pub(crate) fn add(&mut self, result: &Array2<f64>, reference: &Array2<f64>, border: usize) {
        let (h, w) = result.dim();
        let b = border.min(h / 2).min(w / 2);
        let r = result.slice(s![b..h - b, b..w - b]);
        let f = reference.slice(s![b..h - b, b..w - b]);
        for (a, b) in r.iter().zip(f.iter()) {
            let e = a - b;
            self.sq += e * e;
            self.sum += e;
            self.max = self.max.max(e.abs());
        }
        self.n += r.len() as u64;
    }

    /// The figures of everything added.
    pub(crate) fn figures(&self) -> ErrorFigures {
        let n = self.n.max(1) as f64;
        let rmse = (self.sq / n).sqrt();
        ErrorFigures {
            rmse,
            max: self.max,
            psnr: (rmse > 0.0).then(|| 20.0 * (255.0 / rmse).log10()),
            bias: self.sum / n,
        }
    }
}

/// Mean and standard deviation of a set of figures (over run seeds).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (0 for a single value).
    pub std: f64,
}

impl Spread {
    /// Mean and sample standard deviation of `values`.
    #[cfg(test)]
    pub(crate) fn of(values: &[f64]) -> Self {
        let n = values.len().max(1) as f64;
        let mean = values.iter().sum::<f64>() / n;
        let std = if values.len() > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Spread { mean, std }
    }
}

/// [`Spread`] of values that arrive one at a time (Welford's update), so that a figure's
/// spread over any number of runs is kept in constant memory.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct SpreadAccumulator {
    n: u64,
    mean: f64,
    m2: f64,
}

impl SpreadAccumulator {
    /// Adds one value.
    pub(crate) fn add(&mut self, v: f64) {
        self.n += 1;
        let d = v - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (v - self.mean);
    }

    /// Mean and sample standard deviation of the values added (0 and 0 for none).
    pub(crate) fn spread(&self) -> Spread {
        let std = if self.n > 1 {
            (self.m2 / (self.n - 1) as f64).max(0.0).sqrt()
        } else {
            0.0
        };
        Spread {
            mean: self.mean,
            std,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_over_interior() {
        let mut a = Array2::<f64>::zeros((4, 4));
        let b = Array2::<f64>::zeros((4, 4));
        a[[0, 0]] = 100.0; // in the border: ignored
        a[[1, 1]] = 2.0;
        a[[2, 2]] = -2.0;
        let f = ErrorFigures::between(&a, &b, 1);
        // Interior errors 2, -2, 0, 0: mean square 2.
        assert_eq!(f.rmse, 2f64.sqrt());
        assert_eq!(f.max, 2.0);
        assert_eq!(f.bias, 0.0);
        assert!((f.psnr.unwrap() - 20.0 * (255.0 / 2f64.sqrt()).log10()).abs() < 1e-12);
        assert_eq!(ErrorFigures::between(&b, &b, 0).psnr, None);
        let s = Spread::of(&[1.0, 3.0]);
        assert_eq!((s.mean, s.std), (2.0, 2f64.sqrt()));
        let mut acc = SpreadAccumulator::default();
        for v in [1.0, 3.0] {
            acc.add(v);
        }
        assert_eq!(acc.spread(), s);
    }

    #[test]
    fn streamed_spread_matches_two_pass() {
        let values: Vec<f64> = (0..1000)
            .map(|i| ((i * 7919) % 113) as f64 * 0.37 - 9.0)
            .collect();
        let mut acc = SpreadAccumulator::default();
        values.iter().for_each(|&v| acc.add(v));
        let (a, b) = (acc.spread(), Spread::of(&values));
        assert!((a.mean - b.mean).abs() < 1e-12 && (a.std - b.std).abs() < 1e-12);
    }
}
