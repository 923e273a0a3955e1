//! A classification dataset in IDX files: the training and test splits of MNIST-style
//! datasets (`train-images-idx3-ubyte`, `train-labels-idx1-ubyte`, `t10k-...`, each
//! optionally `.gz`), 8-bit grey images and labels 0..9.

use super::idx::{self, IdxError, Unfit};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Where Debian's `dataset-fashion-mnist` package installs its files.
pub const DEFAULT_DIR: &str = "/usr/share/datasets/fashion-mnist";

/// Number of classes (MNIST and Fashion-MNIST have ten).
pub const CLASSES: usize = 10;

/// Fashion-MNIST's class names, for reports.
pub const FASHION_NAMES: [&str; CLASSES] = [
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
];

/// One split: images of `rows` x `cols` pixels and their labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// Image height.
    pub rows: usize,
    /// Image width.
    pub cols: usize,
    /// The pixels, image after image, row-major.
    pub pixels: Vec<u8>,
    /// One label per image, each below `CLASSES`.
    pub labels: Vec<u8>,
}

impl Split {
    /// Number of images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no images.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The pixels of image `i` (empty when out of range).
    pub fn image(&self, i: usize) -> &[u8] {
        let n = self.rows * self.cols;
        self.pixels.get(i * n..(i + 1) * n).unwrap_or(&[])
    }

    /// The first `n` images (every image when `n` is `None` or not smaller than the
    /// split), copying only those, and only when they are not all of it.
    pub(crate) fn up_to(&self, n: Option<usize>) -> Cow<'_, Split> {
        match n {
            Some(n) if n < self.len() => Cow::Owned(Split {
                rows: self.rows,
                cols: self.cols,
                pixels: self.pixels[..n * self.rows * self.cols].to_vec(),
                labels: self.labels[..n].to_vec(),
            }),
            _ => Cow::Borrowed(self),
        }
    }

    /// The first `n` images only.
    pub fn truncated(mut self, n: usize) -> Split {
        let n = n.min(self.len());
        self.labels.truncate(n);
        self.pixels.truncate(n * self.rows * self.cols);
        self
    }
}

/// Both splits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset {
    /// The folder read.
    pub(crate) dir: PathBuf,
    /// Training split (the head learns from it).
    pub(crate) train: Split,
    /// Test split (the accuracy is measured on it).
    pub test: Split,
}

/// Why a dataset could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DatasetError {
    /// A file of the dataset is not in the folder.
    #[error("{}: no {what} file ({stem} or {stem}.gz){}", dir.display(), install_hint(dir))]
    Missing {
        /// The folder searched.
        dir: PathBuf,
        /// Which file.
        what: &'static str,
        /// Its name without `.gz`.
        stem: String,
    },
    /// The dataset folder is not there.
    #[error("{}: no such folder{}", dir.display(), install_hint(dir))]
    NoFolder {
        /// The folder.
        dir: PathBuf,
    },
    /// A file that is there but cannot be used.
    #[error("{}: {source}", file.display())]
    Idx {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        source: IdxError,
    },
    /// A label outside the classes.
    #[error("{}: label {label} of item {item} is out of range 0..{}", file.display(), CLASSES - 1)]
    Label {
        /// The labels file.
        file: PathBuf,
        /// The label.
        label: u8,
        /// Its 0-based item number.
        item: usize,
    },
    /// Training and test images of different sizes.
    #[error(
        "{}: training images are {}x{}, test images {}x{}",
        dir.display(), train.0, train.1, test.0, test.1
    )]
    Sizes {
        /// The dataset folder.
        dir: PathBuf,
        /// Rows and columns of the training images.
        train: (usize, usize),
        /// Rows and columns of the test images.
        test: (usize, usize),
    },
}

fn install_hint(dir: &Path) -> &'static str {
    if dir == Path::new(DEFAULT_DIR) {
        "; install Fashion-MNIST with `apt-get install dataset-fashion-mnist`, or give \
         --dataset DIR with MNIST-style IDX files"
    } else {
        "; --dataset needs a folder of MNIST-style IDX files"
    }
}

/// The file `{prefix}-{kind}-{idxN}-ubyte` (or the `.idxN-` spelling of some mirrors),
/// gzip'd or not.
fn find(
    dir: &Path,
    prefix: &str,
    kind: &str,
    idx: &str,
    what: &'static str,
) -> Result<PathBuf, DatasetError> {
    let stems = [
        format!("{prefix}-{kind}-{idx}-ubyte"),
        format!("{prefix}-{kind}.{idx}-ubyte"),
    ];
    for stem in &stems {
        for name in [format!("{stem}.gz"), stem.clone()] {
            let p = dir.join(name);
            // Whatever is there under the name is the file meant: a FIFO, a folder or a
            // symlink loop is reported by the reader as what it is.
            if std::fs::symlink_metadata(&p).is_ok() {
                return Ok(p);
            }
        }
    }
    Err(DatasetError::Missing {
        dir: dir.to_path_buf(),
        what,
        stem: stems[0].clone(),
    })
}

/// Whether images of dimensions `d` can be evaluated: a count, then rows and columns
/// that fit the array (checked on the header, before the pixels are read).
fn image_dims_fit(d: &[usize]) -> Result<(), Unfit> {
    let side = crate::sim::dims::N;
    match *d {
        [_, r, c] if r > 0 && c > 0 && r <= side && c <= side => Ok(()),
        [_, rows, cols] if rows > 0 && cols > 0 => Err(Unfit::ImagesTooLarge { rows, cols }),
        _ => Err(Unfit::ImageDims(d.to_vec())),
    }
}

/// Reads one split (`train` or `t10k`) from `dir`.
pub(crate) fn read_split(dir: &Path, prefix: &str) -> Result<Split, DatasetError> {
    let images_path = find(dir, prefix, "images", "idx3", "images")?;
    let labels_path = find(dir, prefix, "labels", "idx1", "labels")?;
    let load = |p: &Path, accept: &dyn Fn(&[usize]) -> Result<(), Unfit>| {
        idx::read(p, accept).map_err(|source| DatasetError::Idx {
            file: p.to_path_buf(),
            source,
        })
    };
    let images = load(&images_path, &image_dims_fit)?;
    let (count, rows, cols) = (images.dims[0], images.dims[1], images.dims[2]);
    let labels = load(&labels_path, &|d: &[usize]| match d {
        [n] if *n == count => Ok(()),
        [n] => Err(Unfit::LabelCount {
            labels: *n,
            images: count,
            file: images_path.clone(),
        }),
        _ => Err(Unfit::LabelDims(d.to_vec())),
    })?;
    if let Some((i, &l)) = labels
        .data
        .iter()
        .enumerate()
        .find(|(_, &l)| usize::from(l) >= CLASSES)
    {
        return Err(DatasetError::Label {
            file: labels_path,
            label: l,
            item: i,
        });
    }
    Ok(Split {
        rows,
        cols,
        pixels: images.data,
        labels: labels.data,
    })
}

/// Reads the training and test splits from `dir`; both must have the same image size.
pub fn read(dir: &Path) -> Result<Dataset, DatasetError> {
    if !dir.is_dir() {
        return Err(DatasetError::NoFolder {
            dir: dir.to_path_buf(),
        });
    }
    let train = read_split(dir, "train")?;
    let test = read_split(dir, "t10k")?;
    if (train.rows, train.cols) != (test.rows, test.cols) {
        return Err(DatasetError::Sizes {
            dir: dir.to_path_buf(),
            train: (train.rows, train.cols),
            test: (test.rows, test.cols),
        });
    }
    Ok(Dataset {
        dir: dir.to_path_buf(),
        train,
        test,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn up_to_copies_only_a_shorter_prefix() {
        let split = Split {
            rows: 2,
            cols: 1,
            pixels: vec![1, 2, 3, 4, 5, 6],
            labels: vec![7, 8, 9],
        };
        let first = split.up_to(Some(2));
        assert!(matches!(first, Cow::Owned(_)));
        assert_eq!(first.pixels, [1, 2, 3, 4]);
        assert_eq!(first.labels, [7, 8]);
        assert_eq!(*first, split.clone().truncated(2));
        for n in [None, Some(3), Some(10)] {
            assert!(matches!(split.up_to(n), Cow::Borrowed(s) if std::ptr::eq(s, &split)));
        }
        assert!(split.up_to(Some(0)).is_empty());
    }
}
