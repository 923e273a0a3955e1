//! The host-side dense head: softmax regression from the pooled features to the
//! classes. Trained here by seeded mini-batch gradient descent with momentum, in one
//! thread and a fixed order, so the same data and seed give the same weights bit for
//! bit on any machine and thread count; or read from a `.npy` file.

use super::dataset::CLASSES;
use super::network::TrainParams;
use crate::sim::readout::npy::{self, NpyError};
use ndarray::Array2;
use std::path::Path;

/// A linear classifier: `scores = weights * features + bias`.
#[derive(Clone, Debug, PartialEq)]
pub struct Head {
    /// Features per image.
    pub features: usize,
    /// Row-major CLASSES x (features + 1); the last column is the bias.
    pub weights: Vec<f32>,
}

/// Why a head file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum HeadError {
    /// The file could not be read as a 2-D float array.
    #[error("{}: cannot read head weights: {msg}", file.display())]
    Read {
        /// The file.
        file: std::path::PathBuf,
        /// Why.
        msg: String,
    },
    /// The array has the wrong shape.
    #[error("{}: head weights are {rows}x{cols}; this network has {features} features, so they must be {CLASSES}x{} (the last column the bias)", file.display(), features + 1)]
    Shape {
        /// The file.
        file: std::path::PathBuf,
        /// Its rows.
        rows: u64,
        /// Its columns.
        cols: u64,
        /// Features of the network.
        features: usize,
    },
}

/// A small seeded generator (SplitMix64) for the shuffling: no dependency, and the
/// same sequence everywhere.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn shuffle(&mut self, v: &mut [usize]) {
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

impl Head {
    /// The scores of one image.
    pub fn scores(&self, x: &[f32]) -> [f32; CLASSES] {
        let w = self.features + 1;
        std::array::from_fn(|k| {
            let row = &self.weights[k * w..(k + 1) * w];
            row[..self.features]
                .iter()
                .zip(x)
                .map(|(a, b)| a * b)
                .sum::<f32>()
                + row[self.features]
        })
    }

    /// The predicted class (the first of equal scores).
    pub fn predict(&self, x: &[f32]) -> u8 {
        let s = self.scores(x);
        let mut best = 0;
        for k in 1..CLASSES {
            if s[k] > s[best] {
                best = k;
            }
        }
        best as u8
    }

    /// Trains on `x` (row-major, `features` per image) and labels `y`.
    pub fn train(x: &[f32], y: &[u8], features: usize, p: &TrainParams) -> Head {
        let w = features + 1;
        let mut head = Head {
            features,
            weights: vec![0.0; CLASSES * w],
        };
        let mut velocity = vec![0.0f32; CLASSES * w];
        let mut grad = vec![0.0f32; CLASSES * w];
        let mut order: Vec<usize> = (0..y.len()).collect();
        let mut rng = SplitMix(p.seed);
        for epoch in 0..p.epochs {
            rng.shuffle(&mut order);
            // A step size that shrinks over the epochs settles the weights.
            let lr = (p.learning_rate / (1.0 + f64::from(epoch) * 0.3)) as f32;
            for batch in order.chunks(p.batch) {
                grad.fill(0.0);
                for &i in batch {
                    let xi = &x[i * features..(i + 1) * features];
                    let s = head.scores(xi);
                    let m = s.iter().copied().fold(f32::MIN, f32::max);
                    let e: Vec<f32> = s.iter().map(|v| (v - m).exp()).collect();
                    let z: f32 = e.iter().sum();
                    for k in 0..CLASSES {
                        let d = e[k] / z - f32::from(u8::from(usize::from(y[i]) == k));
                        let g = &mut grad[k * w..(k + 1) * w];
                        for (gj, xj) in g.iter_mut().zip(xi) {
                            *gj += d * xj;
                        }
                        g[features] += d;
                    }
                }
                let scale = 1.0 / batch.len() as f32;
                let l2 = p.l2 as f32;
                for ((wv, v), g) in head.weights.iter_mut().zip(&mut velocity).zip(&grad) {
                    *v = 0.9 * *v - lr * (g * scale + l2 * *wv);
                    *wv += *v;
                }
            }
        }
        head
    }

    /// Reads weights of shape CLASSES x (features + 1) from a `.npy` file (float32 or
    /// float64).
    pub fn load(file: &Path, features: usize) -> Result<Head, HeadError> {
        let read = |msg: String| HeadError::Read {
            file: file.to_path_buf(),
            msg,
        };
        // The shape is checked on the header, before anything of its size is read.
        let a = match npy::read_matrix(file, [CLASSES, features + 1]) {
            Ok(a) => a,
            Err(NpyError::Shape { got, .. }) if got.len() == 2 => {
                return Err(HeadError::Shape {
                    file: file.to_path_buf(),
                    rows: got[0],
                    cols: got[1],
                    features,
                })
            }
            Err(e) => return Err(read(e.to_string())),
        };
        if a.iter().any(|v| !v.is_finite()) {
            return Err(read("the weights must be finite".into()));
        }
        Ok(Head {
            features,
            weights: a.iter().copied().collect(),
        })
    }

    /// Whether every weight is a finite number (training that diverged leaves some
    /// infinite or NaN).
    pub fn is_finite(&self) -> bool {
        self.weights.iter().all(|w| w.is_finite())
    }

    /// The weights as a CLASSES x (features + 1) array (to save with `.npy`).
    pub fn to_array(&self) -> Array2<f32> {
        Array2::from_shape_vec((CLASSES, self.features + 1), self.weights.clone())
            .unwrap_or_else(|_| Array2::zeros((CLASSES, self.features + 1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_a_separable_problem_the_same_way_twice() {
        // Class k has feature k set (and a little of feature (k + 1) % 10).
        let n = 200;
        let mut x = vec![0.0f32; n * CLASSES];
        let y: Vec<u8> = (0..n).map(|i| (i % CLASSES) as u8).collect();
        for i in 0..n {
            x[i * CLASSES + i % CLASSES] = 1.0;
            x[i * CLASSES + (i + 1) % CLASSES] = 0.2;
        }
        let p = TrainParams::default();
        let h = Head::train(&x, &y, CLASSES, &p);
        let correct = (0..n)
            .filter(|&i| h.predict(&x[i * CLASSES..(i + 1) * CLASSES]) == y[i])
            .count();
        assert_eq!(correct, n);
        assert_eq!(h, Head::train(&x, &y, CLASSES, &p));
    }
}
