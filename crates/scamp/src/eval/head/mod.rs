//! The host-side head: softmax regression, or an MLP with ReLU hidden layers, from
//! the readout's features to the classes. Trained here (modules `softmax` and `mlp`) by seeded
//! mini-batch gradient descent with momentum, in one thread and a fixed order, so the
//! same data and seed give the same weights bit for bit on any machine and thread
//! count; or read from `.npy` files, one per layer.

mod mlp;
mod rng;
mod softmax;

use super::dataset::CLASSES;
use super::network::TrainParams;
use crate::sim::readout::npy::{self, NpyError};
use ndarray::Array2;
use std::path::{Path, PathBuf};

/// One dense layer: `y = W x + b`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Dense {
    /// Inputs.
    pub(crate) inputs: usize,
    /// Outputs.
    pub(crate) outputs: usize,
    /// Row-major outputs x (inputs + 1); the last column is the bias.
    pub(crate) weights: Vec<f32>,
}

impl Dense {
    /// A layer of zeros.
    pub(crate) fn zeros(inputs: usize, outputs: usize) -> Dense {
        Dense {
            inputs,
            outputs,
            weights: vec![0.0; outputs * (inputs + 1)],
        }
    }

    /// Output `k` for input `x`.
    pub(crate) fn output(&self, k: usize, x: &[f32]) -> f32 {
        let w = self.inputs + 1;
        let row = &self.weights[k * w..(k + 1) * w];
        row[..self.inputs]
            .iter()
            .zip(x)
            .map(|(a, b)| a * b)
            .sum::<f32>()
            + row[self.inputs]
    }

    /// Every output for input `x`.
    pub(crate) fn apply(&self, x: &[f32]) -> Vec<f32> {
        (0..self.outputs).map(|k| self.output(k, x)).collect()
    }
}

/// A classifier: dense layers, ReLU between them, the class with the largest score.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Head {
    /// The layers; the last has one output per class.
    pub(crate) layers: Vec<Dense>,
}

/// Why head files could not be used.
#[derive(Debug, thiserror::Error)]
pub enum HeadError {
    /// The file could not be read as a 2-D float array.
    #[error("{}: cannot read head weights: {cause}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        cause: WeightsUnread,
    },
    /// The array has the wrong shape.
    #[error("{}: head layer {layer} is {rows}x{cols}; it takes {inputs} inputs, so it must be {}x{} (outputs x inputs + 1, the last column the bias){}", file.display(), if *last { CLASSES.to_string() } else { "N".into() }, inputs + 1, if *last { ", the last layer one row per class" } else { "" })]
    Shape {
        /// The file.
        file: PathBuf,
        /// 1-based layer number.
        layer: usize,
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
        /// Inputs of the layer (the network's features for the first).
        inputs: usize,
        /// Whether it is the last layer.
        last: bool,
    },
}

/// Why a head layer's weights could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WeightsUnread {
    /// The `.npy` file.
    #[error(transparent)]
    Npy(#[from] npy::NpyError),
    /// An array that is not 2-D.
    #[error(transparent)]
    Dims(#[from] ndarray::ShapeError),
    /// A weight that is not a finite number.
    #[error("the weights must be finite")]
    NotFinite,
}

impl Head {
    /// The scores of one image.
    pub(crate) fn scores(&self, x: &[f32]) -> Vec<f32> {
        let mut v = x.to_vec();
        for (i, l) in self.layers.iter().enumerate() {
            v = l.apply(&v);
            if i + 1 < self.layers.len() {
                v.iter_mut().for_each(|a| *a = a.max(0.0));
            }
        }
        v
    }

    /// Whether every weight is a finite number (training that diverged leaves some
    /// infinite or NaN).
    pub(crate) fn is_finite(&self) -> bool {
        self.layers
            .iter()
            .all(|l| l.weights.iter().all(|w| w.is_finite()))
    }

    /// The predicted class (the first of equal scores).
    pub(crate) fn predict(&self, x: &[f32]) -> u8 {
        let s = self.scores(x);
        let mut best = 0;
        for k in 1..s.len() {
            if s[k] > s[best] {
                best = k;
            }
        }
        best as u8
    }

    /// Trains on `x` (row-major, `features` per image) and labels `y`, with ReLU layers
    /// of `hidden` units before the class scores (none: softmax regression).
    pub(crate) fn train(
        x: &[f32],
        y: &[u8],
        features: usize,
        hidden: &[usize],
        p: &TrainParams,
    ) -> Head {
        if hidden.is_empty() {
            Head {
                layers: vec![softmax::train(x, y, features, p)],
            }
        } else {
            mlp::train(x, y, features, hidden, p)
        }
    }

    /// Reads one layer per file (float32 or float64 `.npy`, outputs x (inputs + 1)),
    /// the first taking `features` inputs, the last giving the class scores.
    pub(crate) fn load(files: &[PathBuf], features: usize) -> Result<Head, HeadError> {
        let mut layers = Vec::new();
        let mut inputs = features;
        for (i, file) in files.iter().enumerate() {
            let last = i + 1 == files.len();
            let shape_error = |rows, cols| HeadError::Shape {
                file: file.clone(),
                layer: i + 1,
                rows,
                cols,
                inputs,
                last,
            };
            let a = read_matrix(file, inputs, last).map_err(|e| match e {
                Found::Shape(rows, cols) => shape_error(rows, cols),
                Found::Error(e) => e,
            })?;
            let rows = a.nrows();
            layers.push(Dense {
                inputs,
                outputs: rows,
                weights: a.iter().copied().collect(),
            });
            inputs = rows;
        }
        Ok(Head { layers })
    }
}

/// Largest layer a head file may hold, in units: the header's shape is checked against
/// it before anything of its size is read.
pub(crate) const MAX_UNITS: usize = 4096;

/// Why a head layer's file was not read.
enum Found {
    /// A 2-D array of another shape (rows, columns).
    Shape(usize, usize),
    /// Anything else.
    Error(HeadError),
}

/// A finite 2-D float array of `inputs + 1` columns from a `.npy` file (10 rows for
/// the last layer, at most [`MAX_UNITS`] for another), its shape checked on the header
/// before the data is read.
fn read_matrix(file: &Path, inputs: usize, last: bool) -> Result<Array2<f32>, Found> {
    let read = |cause: WeightsUnread| {
        Found::Error(HeadError::Read {
            file: file.to_path_buf(),
            cause,
        })
    };
    let max_rows = if last { CLASSES } else { MAX_UNITS };
    let max_file = 12 + npy::MAX_NPY_HEADER + max_rows * (inputs + 1) * 8;
    let ok = |sizes: &[u64]| -> Result<(), NpyError> {
        let fits = sizes.len() == 2
            && sizes[1] == inputs as u64 + 1
            && (1..=max_rows as u64).contains(&sizes[0])
            && (!last || sizes[0] == CLASSES as u64);
        if fits {
            Ok(())
        } else {
            Err(NpyError::Shape {
                want: [max_rows, inputs + 1],
                got: sizes.to_vec(),
            })
        }
    };
    let a = match npy::read_floats(file, max_file, ok) {
        Ok(a) => a,
        Err(NpyError::Shape { got, .. }) if got.len() == 2 => {
            let size = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
            return Err(Found::Shape(size(got[0]), size(got[1])));
        }
        Err(e) => return Err(read(e.into())),
    };
    let a = a
        .into_dimensionality::<ndarray::Ix2>()
        .map_err(|e| read(e.into()))?
        .mapv(|v| v as f32);
    if a.iter().any(|v| !v.is_finite()) {
        return Err(read(WeightsUnread::NotFinite));
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Class k has feature k set (and a little of feature (k + 1) % 10).
    fn separable(n: usize) -> (Vec<f32>, Vec<u8>) {
        let mut x = vec![0.0f32; n * CLASSES];
        let y: Vec<u8> = (0..n).map(|i| (i % CLASSES) as u8).collect();
        for i in 0..n {
            x[i * CLASSES + i % CLASSES] = 1.0;
            x[i * CLASSES + (i + 1) % CLASSES] = 0.2;
        }
        (x, y)
    }

    #[test]
    fn learns_a_separable_problem_the_same_way_twice() {
        let (x, y) = separable(200);
        for (hidden, lr) in [(vec![], 0.5), (vec![16], 0.05)] {
            let p = TrainParams {
                learning_rate: lr,
                ..TrainParams::default()
            };
            let h = Head::train(&x, &y, CLASSES, &hidden, &p);
            let correct = (0..y.len())
                .filter(|&i| h.predict(&x[i * CLASSES..(i + 1) * CLASSES]) == y[i])
                .count();
            assert_eq!(correct, y.len(), "hidden {hidden:?}");
            assert_eq!(h, Head::train(&x, &y, CLASSES, &hidden, &p));
        }
    }

    #[test]
    fn an_mlp_computes_relu_between_its_layers() {
        let h = Head {
            layers: vec![
                Dense {
                    inputs: 2,
                    outputs: 2,
                    weights: vec![1.0, -1.0, 0.5, -1.0, 1.0, 0.0],
                },
                Dense {
                    inputs: 2,
                    outputs: 2,
                    weights: vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.25],
                },
            ],
        };
        // Hidden: relu(x0 - x1 + 0.5), relu(x1 - x0).
        assert_eq!(h.scores(&[2.0, 1.0]), vec![1.5, 0.25]);
        assert_eq!(h.scores(&[0.0, 3.0]), vec![0.0, 3.25]);
        assert_eq!(h.predict(&[0.0, 3.0]), 1);
    }
}
