//! Tiny datasets for `scamp eval`: IDX files written from bytes, the same images as the
//! training and the test split.

use std::io::Write;
use std::path::{Path, PathBuf};

/// An IDX file of unsigned bytes with dimensions `dims`.
pub fn idx_bytes(dims: &[u32], data: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 0, 8, dims.len() as u8];
    for d in dims {
        b.extend_from_slice(&d.to_be_bytes());
    }
    b.extend_from_slice(data);
    b
}

/// Writes an IDX file of unsigned bytes to `path`.
pub fn write_idx(path: &Path, dims: &[u32], data: &[u8]) {
    std::fs::write(path, idx_bytes(dims, data)).expect("IDX file written");
}

/// Writes `images` (`rows x cols` each, one after another) and `labels` as both the
/// training and the test split into `dir`, under the names `scamp eval` reads.
pub fn write_splits(dir: &Path, (rows, cols): (usize, usize), images: &[u8], labels: &[u8]) {
    let n = labels.len() as u32;
    for split in ["train", "t10k"] {
        write_idx(
            &dir.join(format!("{split}-images-idx3-ubyte")),
            &[n, rows as u32, cols as u32],
            images,
        );
        write_idx(
            &dir.join(format!("{split}-labels-idx1-ubyte")),
            &[n],
            labels,
        );
    }
}

/// `n` 28x28 images and labels 0..9: a 6x8 square of pixel value `level` placed by the
/// class on a black ground.
pub fn squares(n: u32, level: u8) -> (Vec<u8>, Vec<u8>) {
    let mut pixels = vec![0u8; n as usize * 784];
    let labels: Vec<u8> = (0..n).map(|i| (i % 10) as u8).collect();
    for (i, &l) in labels.iter().enumerate() {
        let (r0, c0) = (2 + 2 * usize::from(l), 4 + usize::from(l));
        for r in r0..r0 + 6 {
            for c in c0..c0 + 8 {
                pixels[i * 784 + r * 28 + c] = level;
            }
        }
    }
    (pixels, labels)
}

/// A fresh folder for `purpose` holding [`squares`] of `level` as both splits.
pub fn squares_dataset(purpose: &str, n: u32, level: u8) -> PathBuf {
    let dir = super::temp_dir(purpose);
    let (images, labels) = squares(n, level);
    write_splits(&dir, (28, 28), &images, &labels);
    dir
}

/// Where Debian's `dataset-fashion-mnist` puts Fashion-MNIST.
pub const FASHION: &str = "/usr/share/datasets/fashion-mnist";

/// Whether Fashion-MNIST is installed. Without it, `what` (the tests that need it) is
/// said to be SKIPPED, except under `CI=true`, where the test fails: CI must run them.
pub fn fashion(what: &str) -> bool {
    if Path::new(FASHION)
        .join("t10k-images-idx3-ubyte.gz")
        .is_file()
    {
        return true;
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    assert!(!ci, "CI=true but {FASHION} is missing: {what} cannot run");
    let _ = writeln!(
        std::io::stderr(),
        "\n*** SKIPPED {what}: no Fashion-MNIST in {FASHION} \
         (apt-get install -y dataset-fashion-mnist) ***"
    );
    false
}

/// `n` images of `rows` x `cols` pseudo-random pixels (a linear congruential sequence
/// from `seed`), labelled 0..9 in turn.
pub fn noise_split(n: usize, (rows, cols): (usize, usize), seed: u32) -> scamp::eval::Split {
    let mut x = seed;
    let pixels = (0..n * rows * cols)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (x >> 16) as u8
        })
        .collect();
    scamp::eval::Split {
        rows,
        cols,
        pixels,
        labels: (0..n).map(|i| (i % 10) as u8).collect(),
    }
}
