//! IDX files (the format of MNIST and Fashion-MNIST): a big-endian header (magic with
//! the element type and the number of dimensions, then each dimension) followed by the
//! elements. Only unsigned bytes are read (images and labels); gzip'd files (as Debian
//! ships them, one member or several) are inflated on the fly, recognised by their own
//! magic, not by the name. The header is read and checked first (by the caller too, so
//! an image that cannot be used is refused before anything is inflated), then exactly
//! the elements it announces are streamed in: memory follows the content actually
//! there, never what a header claims nor what a gzip bomb would inflate to.

use flate2::read::MultiGzDecoder;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Largest IDX file accepted after inflating (Fashion-MNIST's training images are 47 MB).
pub(crate) const MAX_IDX_BYTES: u64 = 1 << 30;

/// What is reserved up front for the elements; more grows as they arrive, so a header
/// that claims more than the file holds costs no more than the file.
const FIRST_RESERVE: u64 = 1 << 20;

/// An IDX array of unsigned bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Idx {
    /// The dimensions, outermost first (images: count, rows, columns; labels: count).
    pub(crate) dims: Vec<usize>,
    /// The elements, row-major.
    pub(crate) data: Vec<u8>,
}

/// Why an IDX file could not be read (the caller names the file).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdxError {
    /// The file could not be opened or read (or inflated).
    #[error("cannot read: {}{cause}", if *gzip { "gzip: " } else { "" })]
    Io {
        /// Whether it failed while inflating a gzip'd file.
        gzip: bool,
        /// What failed.
        cause: ReadFailure,
    },
    /// The first bytes are not an IDX magic of unsigned bytes.
    #[error("not an IDX file of unsigned bytes (magic {0:02x?}; expected 00 00 08 and the dimension count)")]
    Magic([u8; 4]),
    /// The file ends before the header or the elements it announces.
    #[error("truncated: the header announces {expected} bytes, the file holds {found}")]
    Truncated {
        /// Bytes the header announces (header included).
        expected: u64,
        /// Bytes the file holds.
        found: u64,
    },
    /// More elements than are accepted.
    #[error("too large: dimensions {0:?} (at most {MAX_IDX_BYTES} elements)")]
    TooLarge(Vec<usize>),
    /// Dimensions the caller cannot use (checked before the elements are read).
    #[error(transparent)]
    Unfit(#[from] Unfit),
}

/// Why a file could not be opened or read.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadFailure {
    /// The path names something else than a regular file (a folder, a FIFO, ...).
    #[error("not a regular file ({0})")]
    NotAFile(&'static str),
    /// The system's error (shared, so that the error can be cloned).
    #[error("{0}")]
    System(std::sync::Arc<std::io::Error>),
}

impl PartialEq for ReadFailure {
    /// System errors are equal when their kind and OS code are.
    fn eq(&self, other: &ReadFailure) -> bool {
        match (self, other) {
            (ReadFailure::NotAFile(a), ReadFailure::NotAFile(b)) => a == b,
            (ReadFailure::System(a), ReadFailure::System(b)) => {
                a.kind() == b.kind() && a.raw_os_error() == b.raw_os_error()
            }
            _ => false,
        }
    }
}

impl Eq for ReadFailure {}

impl From<std::io::Error> for ReadFailure {
    fn from(e: std::io::Error) -> ReadFailure {
        ReadFailure::System(std::sync::Arc::new(e))
    }
}

/// Dimensions a dataset cannot use, refused on the header before the elements are read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unfit {
    /// Images larger than the array.
    #[error("images of {rows}x{cols} pixels do not fit the {N}x{N} array")]
    ImagesTooLarge {
        /// Image height.
        rows: usize,
        /// Image width.
        cols: usize,
    },
    /// Images without the three dimensions count, rows and columns.
    #[error("images need 3 dimensions (count, rows, columns) of at least 1, found {0:?}")]
    ImageDims(Vec<usize>),
    /// Another number of labels than of images.
    #[error("{labels} labels for {images} images in {}", file.display())]
    LabelCount {
        /// Labels in the file.
        labels: usize,
        /// Images in the images file.
        images: usize,
        /// The images file.
        file: std::path::PathBuf,
    },
    /// Labels in more than one dimension.
    #[error("labels need 1 dimension, found {0:?}")]
    LabelDims(Vec<usize>),
}

const N: usize = crate::sim::dims::N;

/// Reads an IDX file of unsigned bytes, gzip'd or not, after `accept` has passed its
/// dimensions.
pub(crate) fn read(
    path: &Path,
    accept: &dyn Fn(&[usize]) -> Result<(), Unfit>,
) -> Result<Idx, IdxError> {
    let io = |e: std::io::Error| io_error(e.into());
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(io_error(ReadFailure::NotAFile(kind_of(&meta))));
    }
    let mut file = BufReader::new(std::fs::File::open(path).map_err(io)?);
    if file.fill_buf().map_err(io)?.starts_with(&[0x1f, 0x8b]) {
        let mut gz = MultiGzDecoder::new(file);
        read_from(&mut gz, accept).map_err(|e| match e {
            IdxError::Io { cause, .. } => IdxError::Io { gzip: true, cause },
            e => e,
        })
    } else {
        read_from(&mut file, accept)
    }
}

/// A file that could not be read, outside a gzip stream.
fn io_error(cause: ReadFailure) -> IdxError {
    IdxError::Io { gzip: false, cause }
}

/// What a file that is not a regular one is, for the message.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "not a file"
    }
}

/// Parses the bytes of an (inflated) IDX file of unsigned bytes.
#[cfg(test)]
fn parse(bytes: &[u8]) -> Result<Idx, IdxError> {
    read_from(&mut &bytes[..], &|_| Ok(()))
}

/// Reads `want` bytes or up to the end, whichever comes first.
fn read_up_to(r: &mut dyn Read, want: u64, out: &mut Vec<u8>) -> Result<(), IdxError> {
    out.reserve(want.min(FIRST_RESERVE) as usize);
    r.take(want)
        .read_to_end(out)
        .map(drop)
        .map_err(|e| io_error(e.into()))
}

/// The header, checked, then the elements it announces.
fn read_from(
    r: &mut dyn Read,
    accept: &dyn Fn(&[usize]) -> Result<(), Unfit>,
) -> Result<Idx, IdxError> {
    let mut head = Vec::new();
    read_up_to(r, 4, &mut head)?;
    let truncated = |expected: u64, found: usize| IdxError::Truncated {
        expected,
        found: found as u64,
    };
    let [a, b, c, n] = head[..] else {
        return Err(truncated(4, head.len()));
    };
    if a != 0 || b != 0 || c != 0x08 || n == 0 || n > 4 {
        return Err(IdxError::Magic([a, b, c, n]));
    }
    let header = 4 + 4 * u64::from(n);
    read_up_to(r, header - 4, &mut head)?;
    if (head.len() as u64) < header {
        return Err(truncated(header, head.len()));
    }
    let dims: Vec<usize> = head[4..]
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize)
        .collect();
    let count = dims
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64))
        .filter(|&n| n <= MAX_IDX_BYTES)
        .ok_or_else(|| IdxError::TooLarge(dims.clone()))?;
    accept(&dims)?;
    let mut data = Vec::new();
    read_up_to(r, count, &mut data)?;
    if (data.len() as u64) < count {
        return Err(truncated(header + count, head.len() + data.len()));
    }
    Ok(Idx { dims, data })
}

/// The bytes of an IDX file holding `data` with dimensions `dims` (for tests and tools
/// that write small datasets).
#[cfg(test)]
pub(crate) fn encode(dims: &[usize], data: &[u8]) -> Vec<u8> {
    let mut out = vec![0, 0, 0x08, dims.len() as u8];
    for &d in dims {
        out.extend_from_slice(&(d as u32).to_be_bytes());
    }
    out.extend_from_slice(data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{write::GzEncoder, Compression};
    use std::io::Write;

    #[test]
    fn a_file_of_two_bytes_and_a_bad_magic() {
        // Magic 00 00 08, one dimension of 2, then the 2 elements.
        let idx = parse(&[0, 0, 8, 1, 0, 0, 0, 2, 5, 6]).unwrap();
        assert_eq!((idx.dims, idx.data), (vec![2], vec![5, 6]));
        assert_eq!(parse(&[0, 0, 9, 1]), Err(IdxError::Magic([0, 0, 9, 1])));
    }

    #[test]
    fn round_trip_and_errors() {
        let bytes = encode(&[2, 2, 3], &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        let idx = parse(&bytes).unwrap();
        assert_eq!(idx.dims, vec![2, 2, 3]);
        assert_eq!(idx.data[11], 12);
        assert_eq!(
            parse(&bytes[..bytes.len() - 1]),
            Err(IdxError::Truncated {
                expected: 28,
                found: 27
            })
        );
        let mut bad = bytes.clone();
        bad[2] = 0x0d;
        assert!(matches!(parse(&bad), Err(IdxError::Magic(_))));
        assert_eq!(
            parse(&bytes[..6]),
            Err(IdxError::Truncated {
                expected: 16,
                found: 6
            })
        );
        let huge = encode(&[u32::MAX as usize, u32::MAX as usize, 2], &[]);
        assert!(matches!(parse(&huge), Err(IdxError::TooLarge(_))));
    }

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    fn file_with(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("scamp-idx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join(name);
        std::fs::write(&f, bytes).unwrap();
        f
    }

    #[test]
    fn several_gzip_members_are_one_file() {
        let bytes = encode(&[3, 2, 2], &(0..12).collect::<Vec<u8>>());
        let mut two = gz(&bytes[..10]);
        two.extend(gz(&bytes[10..]));
        let f = file_with("two-members.gz", &two);
        assert_eq!(read(&f, &|_| Ok(())).unwrap(), parse(&bytes).unwrap());
    }

    #[test]
    fn the_header_is_checked_before_anything_is_inflated() {
        // A header claiming a 30000x30000 image, then 100 MB of zeros, gzip'd: refused
        // by the caller's check on the header alone.
        let mut bytes = encode(&[1, 30_000, 30_000], &[]);
        bytes.extend(vec![0u8; 100 << 20]);
        let f = file_with("big.gz", &gz(&bytes));
        let seen = std::cell::Cell::new(Vec::new());
        let e = read(&f, &|d| {
            seen.set(d.to_vec());
            Err(Unfit::LabelDims(d.to_vec()))
        })
        .unwrap_err();
        assert_eq!(
            e,
            IdxError::Unfit(Unfit::LabelDims(vec![1, 30_000, 30_000]))
        );
        assert_eq!(seen.take(), vec![1, 30_000, 30_000]);
        // A gzip bomb with a small header: only what the header announces is inflated.
        let mut bomb = encode(&[2, 2, 2], &[]);
        bomb.extend(vec![7u8; 100 << 20]);
        let f = file_with("bomb.gz", &gz(&bomb));
        let idx = read(&f, &|_| Ok(())).unwrap();
        assert_eq!(idx.data, vec![7u8; 8]);
    }

    #[test]
    fn folders_and_fifos_are_not_read() {
        let dir = std::env::temp_dir();
        let e = read(&dir, &|_| Ok(())).unwrap_err();
        assert_eq!(e, io_error(ReadFailure::NotAFile("a folder")));
        assert_eq!(e.to_string(), "cannot read: not a regular file (a folder)");
    }
}
