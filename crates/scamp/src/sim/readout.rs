//! Reading results off the array: summary statistics and files (numpy and PNG).

pub(crate) mod npy;

use super::dims::N;
use ndarray::Array2;
use npy::NpyError;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Summary of one register over the array.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct PlaneStats {
    /// Mean value.
    pub(crate) mean: f64,
    /// Population standard deviation.
    pub(crate) std: f64,
    /// Smallest value.
    pub(crate) min: f64,
    /// Largest value.
    pub(crate) max: f64,
}

impl PlaneStats {
    /// Statistics of a plane.
    pub(crate) fn of(values: &[f32]) -> Self {
        let n = values.len().max(1) as f64;
        let mean = values.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
        let var = values
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / n;
        let (min, max) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(f64::from(v)), b.max(f64::from(v)))
            });
        // Adding 0.0 turns a negative zero into a plain zero for printing.
        PlaneStats {
            mean: mean + 0.0,
            std: var.sqrt(),
            min: min + 0.0,
            max: max + 0.0,
        }
    }
}

/// A plane as a 256x256 array.
pub(crate) fn to_array(values: &[f32]) -> Array2<f32> {
    Array2::from_shape_vec((N, N), values.to_vec()).expect("planes are 256x256")
}

/// Why a plane could not be written to or read from a file; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum PlaneFileError {
    /// A numpy file could not be written.
    #[error("{}: cannot write: {source}", path.display())]
    WriteNpy {
        /// The file.
        path: PathBuf,
        /// The writer's error.
        source: ndarray_npy::WriteNpyError,
    },
    /// An image could not be written.
    #[error("{}: cannot write: {source}", path.display())]
    WriteImage {
        /// The file.
        path: PathBuf,
        /// The encoder's error.
        source: image::ImageError,
    },
    /// A numpy file does not hold a 256x256 plane of float32 or float64.
    #[error("{}: {source}", path.display())]
    ReadNpy {
        /// The file.
        path: PathBuf,
        /// Why.
        source: NpyError,
    },
}

/// Writes a plane as a float32 256x256 numpy file.
pub fn save_npy(path: &Path, values: &[f32]) -> Result<(), PlaneFileError> {
    ndarray_npy::write_npy(path, &to_array(values)).map_err(|source| PlaneFileError::WriteNpy {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes a plane as an 8-bit grey PNG of `value + 128`, clamped to 0..255.
pub fn save_png(path: &Path, values: &[f32]) -> Result<(), PlaneFileError> {
    let bytes: Vec<u8> = values
        .iter()
        .map(|&v| (v + 128.0).round().clamp(0.0, 255.0) as u8)
        .collect();
    save_grey(path, &bytes)
}

/// Writes 256x256 grey levels as an 8-bit PNG.
fn save_grey(path: &Path, bytes: &[u8]) -> Result<(), PlaneFileError> {
    image::save_buffer(
        path,
        bytes,
        N as u32,
        N as u32,
        image::ExtendedColorType::L8,
    )
    .map_err(|source| PlaneFileError::WriteImage {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes a digital plane (0 or 1 per PE) as a uint8 256x256 numpy file.
pub fn save_bits_npy(path: &Path, bits: &[u8]) -> Result<(), PlaneFileError> {
    let arr = Array2::from_shape_vec((N, N), bits.to_vec()).expect("planes are 256x256");
    ndarray_npy::write_npy(path, &arr).map_err(|source| PlaneFileError::WriteNpy {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes a digital plane as an 8-bit grey PNG: 1 white, 0 black.
pub fn save_bits_png(path: &Path, bits: &[u8]) -> Result<(), PlaneFileError> {
    let bytes: Vec<u8> = bits.iter().map(|&b| if b != 0 { 255 } else { 0 }).collect();
    save_grey(path, &bytes)
}

/// Reads a 256x256 numpy array (float32 or float64), for preloading a register: the
/// header is checked before anything is allocated (see `npy`).
pub fn load_npy(path: &Path) -> Result<Vec<f32>, PlaneFileError> {
    npy::read_plane(path).map_err(|source| PlaneFileError::ReadNpy {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_exact_on_small_sets() {
        let s = PlaneStats::of(&[1.0, 3.0]);
        assert_eq!((s.mean, s.std, s.min, s.max), (2.0, 1.0, 1.0, 3.0));
    }
}
