//! Reading a 256x256 plane from a `.npy` file. `ndarray-npy` reads it from memory, but
//! its reader allocates whatever shape a header claims before it reads any data, so the
//! file is first read into a buffer of bounded size (at most the fixed start, the
//! largest header and the data a plane can hold, plus one byte), and the header's claims (its length, element type and shape) are checked
//! against the plane and the bytes actually there before the reader is called. The
//! header's dict is parsed by `py_literal`, the parser `ndarray-npy` uses itself, so
//! the two read the same shape.

use crate::sim::dims::N;
use ndarray::{Array2, ArrayD, Ix2};
use ndarray_npy::{ReadNpyError, ReadNpyExt};
use py_literal::Value;
use std::io::Read;
use std::path::Path;

/// Largest `.npy` header accepted, in bytes (a real one is under 200).
pub(crate) const MAX_NPY_HEADER: usize = 1 << 16;

/// Why a `.npy` file does not hold a 256x256 plane of float32 or float64.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    /// The file could not be read.
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    /// The file does not start like a `.npy` file.
    #[error("not a numpy .npy file")]
    NotNpy,
    /// A format version other than 1, 2 or 3.
    #[error("unsupported .npy version {0}")]
    Version(u8),
    /// A header longer than [`MAX_NPY_HEADER`].
    #[error("the header claims {0} bytes")]
    HeaderTooLong(usize),
    /// The file is shorter than its header says.
    #[error("the file ends inside its header")]
    EndsInHeader,
    /// The header is not UTF-8.
    #[error("the header is not text")]
    NotText,
    /// The header's dict has no such key.
    #[error("the header has no `{0}`")]
    Missing(&'static str),
    /// An element type other than float32 or float64.
    #[error("element type `{descr}` is not float32 or float64")]
    ElementType {
        /// The header's `descr`, as written.
        descr: String,
    },
    /// A shape that is not a tuple.
    #[error("the shape `{shape}` is not a tuple")]
    ShapeNotTuple {
        /// The header's `shape`, as written.
        shape: String,
    },
    /// A shape tuple with an entry that is not a size.
    #[error("the shape `{shape}` is not a tuple of sizes")]
    ShapeNotSizes {
        /// The header's `shape`, as written.
        shape: String,
    },
    /// Another shape than the one wanted.
    #[error("expected a {}x{} array, got shape ({})", .want[0], .want[1], join(.got))]
    Shape {
        /// Rows and columns wanted.
        want: [usize; 2],
        /// The header's shape.
        got: Vec<u64>,
    },
    /// Another number of dimensions than the caller of `read_floats` reads.
    #[error("expected a {}-dimensional array {layout}, got shape ({})", .most.len(), join(.got))]
    Rank {
        /// The axes the caller reads, as `[out, kh, kw]`.
        layout: &'static str,
        /// The largest size of each axis.
        most: Vec<usize>,
        /// The header's shape.
        got: Vec<u64>,
    },
    /// A size 0 or larger than the caller of `read_floats` accepts.
    #[error(
        "shape ({}) {layout} is out of bounds: each size must be 1..={bound} here ({})",
        join(.got),
        join_most(.most)
    )]
    OutOfBounds {
        /// The axes the caller reads.
        layout: &'static str,
        /// The largest size of each axis.
        most: Vec<usize>,
        /// The bound of the first axis out of bounds.
        bound: usize,
        /// The header's shape.
        got: Vec<u64>,
    },
    /// An array whose dimensions disagree with the shape its header gave.
    #[error(transparent)]
    Dimensions(#[from] ndarray::ShapeError),
    /// Fewer data bytes than the array needs.
    #[error("truncated: {have} bytes of data, a {shape} array of float{bits} needs {need}")]
    Truncated {
        /// The shape the header gives, as `2x3`.
        shape: String,
        /// Data bytes in the file.
        have: usize,
        /// Bits per element.
        bits: usize,
        /// Data bytes the array needs.
        need: usize,
    },
    /// The reader refused the file (for float64, the second attempt's error).
    #[error("cannot read numpy array: {0}")]
    Read(#[from] ReadNpyError),
}

/// Sizes as a tuple's inside: `256, 256`.
fn join(sizes: &[u64]) -> String {
    let dims: Vec<String> = sizes.iter().map(ToString::to_string).collect();
    dims.join(", ")
}

fn join_most(most: &[usize]) -> String {
    let dims: Vec<String> = most.iter().map(ToString::to_string).collect();
    dims.join(", ")
}

/// The values of the 256x256 float32 or float64 `.npy` file at `path`, row after row.
pub(crate) fn read_plane(path: &Path) -> Result<Vec<f32>, NpyError> {
    Ok(read_matrix(path, [N, N])?.iter().copied().collect())
}

/// The float32 or float64 `.npy` file at `path` holding a matrix of shape `want`,
/// read within a memory bound set by `want`, whatever the file's size or header.
pub(crate) fn read_matrix(path: &Path, want: [usize; 2]) -> Result<Array2<f32>, NpyError> {
    let data_max = want[0].saturating_mul(want[1]).saturating_mul(8);
    let limit = (12 + MAX_NPY_HEADER).saturating_add(data_max);
    let a = read_floats(path, limit, |sizes| {
        if sizes == [want[0] as u64, want[1] as u64] {
            Ok(())
        } else {
            Err(NpyError::Shape {
                want,
                got: sizes.to_vec(),
            })
        }
    })?;
    let a = a
        .into_dimensionality::<Ix2>()
        .map_err(NpyError::Dimensions)?;
    Ok(a.mapv(|v| v as f32))
}

/// The float32 or float64 array (either byte order) of the `.npy` file at `path`, read
/// as float64. At most `max_file` bytes are read, and `shape_ok` judges the header's
/// shape before anything it claims is allocated: its error is returned as it is.
pub(crate) fn read_floats(
    path: &Path,
    max_file: usize,
    shape_ok: impl FnOnce(&[u64]) -> Result<(), NpyError>,
) -> Result<ArrayD<f64>, NpyError> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(max_file as u64 + 1)
        .read_to_end(&mut bytes)?;
    let (dict_at, header_len) = frame(&bytes)?;
    let data_at = dict_at + header_len;
    let header = bytes.get(dict_at..data_at).ok_or(NpyError::EndsInHeader)?;
    if let Some((item, sizes)) = check_header(header)? {
        shape_ok(&sizes)?;
        let count = sizes
            .iter()
            .try_fold(1usize, |n, &s| n.checked_mul(s as usize));
        let (have, need) = (
            bytes.len() - data_at,
            count.and_then(|n| n.checked_mul(item)),
        );
        if need.is_none_or(|need| have < need) {
            return Err(NpyError::Truncated {
                shape: sizes
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join("x"),
                have,
                bits: item * 8,
                need: need.unwrap_or(usize::MAX),
            });
        }
    }
    // Reached with an accepted shape, or with a dict `py_literal` cannot parse, which
    // the reader (parsing the same text) refuses before it allocates.
    match ArrayD::<f32>::read_npy(bytes.as_slice()) {
        Ok(a) => Ok(a.mapv(f64::from)),
        Err(_) => Ok(ArrayD::<f64>::read_npy(bytes.as_slice())?),
    }
}

/// Where the header's dict starts and its length, from the magic, the version and the
/// length field.
fn frame(bytes: &[u8]) -> Result<(usize, usize), NpyError> {
    if bytes.len() < 10 || !bytes.starts_with(b"\x93NUMPY") {
        return Err(NpyError::NotNpy);
    }
    match (bytes[6], bytes.get(8..12)) {
        (1, _) => Ok((10, usize::from(u16::from_le_bytes([bytes[8], bytes[9]])))),
        (2 | 3, Some(&[a, b, c, d])) => {
            let len = u32::from_le_bytes([a, b, c, d]) as usize;
            if len > MAX_NPY_HEADER {
                return Err(NpyError::HeaderTooLong(len));
            }
            Ok((12, len))
        }
        (v, _) => Err(NpyError::Version(v)),
    }
}

/// Checks the element type the header's dict gives; returns the element size and the
/// shape, or `None` when the dict does not parse (left to the reader to refuse).
fn check_header(header: &[u8]) -> Result<Option<(usize, Vec<u64>)>, NpyError> {
    let text = std::str::from_utf8(header).map_err(|_| NpyError::NotText)?;
    let Ok(Value::Dict(entries)) = text.strip_suffix('\n').unwrap_or(text).parse() else {
        return Ok(None);
    };
    // The last entry of a key wins, as in the reader.
    let field = |key: &'static str| {
        entries
            .iter()
            .rev()
            .find(|(k, _)| k.as_string().is_some_and(|k| k == key))
            .map(|(_, v)| v)
            .ok_or(NpyError::Missing(key))
    };
    let descr = field("descr")?;
    let item = match descr.as_string().map(String::as_str) {
        Some("<f4" | ">f4" | "=f4") => 4,
        Some("<f8" | ">f8" | "=f8") => 8,
        Some(other) => {
            return Err(NpyError::ElementType {
                descr: other.to_string(),
            })
        }
        None => {
            return Err(NpyError::ElementType {
                descr: descr.to_string(),
            })
        }
    };
    let shape = field("shape")?;
    let sizes = shape
        .as_tuple()
        .ok_or_else(|| NpyError::ShapeNotTuple {
            shape: shape.to_string(),
        })?
        .iter()
        .map(|v| v.as_integer().and_then(|i| u64::try_from(i).ok()))
        .collect::<Option<Vec<u64>>>()
        .ok_or_else(|| NpyError::ShapeNotSizes {
            shape: shape.to_string(),
        })?;
    Ok(Some((item, sizes)))
}

/// A `.npy` file (format 1.0) of `descr` and `shape` (a Python tuple, as `(2, 3)`), with
/// `data` as its bytes after the header: any header, whatever the data holds.
#[cfg(test)]
pub(crate) fn npy_bytes(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // The magic (6 bytes), the version (2), the length (2) and the dict with its
    // newline fill a multiple of 64 bytes.
    while !(10 + dict.len() + 1).is_multiple_of(64) {
        dict.push(' ');
    }
    dict.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend((dict.len() as u16).to_le_bytes());
    b.extend(dict.bytes());
    b.extend_from_slice(data);
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::dims::PES;

    fn npy(descr: &str, shape: &str, data: usize) -> Vec<u8> {
        npy_bytes(descr, shape, &vec![0u8; data])
    }

    fn read(bytes: &[u8]) -> Result<Vec<f32>, String> {
        let dir = std::env::temp_dir().join(format!("scamp-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join(format!("{}.npy", bytes.len()));
        std::fs::write(&f, bytes).unwrap();
        let r = read_plane(&f).map_err(|e| e.to_string());
        std::fs::remove_file(&f).unwrap();
        r
    }

    #[test]
    fn headers_are_checked_before_reading() {
        assert_eq!(read(&npy("<f4", "(256, 256)", PES * 4)), Ok(vec![0.0; PES]));
        assert_eq!(read(&npy("<f8", "(256, 256)", PES * 8)), Ok(vec![0.0; PES]));
        let e = read(&npy("<f4", "(1000000000, 1000000000)", 16)).unwrap_err();
        assert_eq!(
            e,
            "expected a 256x256 array, got shape (1000000000, 1000000000)"
        );
        let e = read(&npy("<f4", "(65536,)", PES * 4)).unwrap_err();
        assert_eq!(e, "expected a 256x256 array, got shape (65536)");
        let e = read(&npy("<f4", "(256, 256)", PES * 4 - 1)).unwrap_err();
        assert_eq!(
            e,
            "truncated: 262143 bytes of data, a 256x256 array of float32 needs 262144"
        );
        let e = read(&npy("<i8", "(256, 256)", PES * 8)).unwrap_err();
        assert_eq!(e, "element type `<i8` is not float32 or float64");
        let e = read(&npy("<f4", "'abc'", PES * 4)).unwrap_err();
        assert_eq!(e, "the shape `'abc'` is not a tuple");
        let e = read(&npy("<f4", "(256, -1)", PES * 4)).unwrap_err();
        assert_eq!(e, "the shape `(256, -1)` is not a tuple of sizes");
        let full = npy("<f4", "(256, 256)", 0);
        assert_eq!(
            read(&full[..40]).unwrap_err(),
            "the file ends inside its header"
        );
        assert_eq!(read(b"hello").unwrap_err(), "not a numpy .npy file");
        let mut long = b"\x93NUMPY\x02\x00".to_vec();
        long.extend(100_000u32.to_le_bytes());
        assert_eq!(read(&long).unwrap_err(), "the header claims 100000 bytes");
        let mut v9 = full.clone();
        v9[6] = 9;
        assert_eq!(read(&v9).unwrap_err(), "unsupported .npy version 9");
    }

    #[test]
    fn a_dict_the_parser_refuses_is_the_reader_s_error() {
        let mut b = npy("<f4", "(256, 256)", PES * 4);
        b[11] = b'[';
        let e = read(&b).unwrap_err();
        assert!(
            e.starts_with("cannot read numpy array: error parsing header"),
            "{e}"
        );
    }
}
