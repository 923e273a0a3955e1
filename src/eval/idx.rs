//! IDX files (the format of MNIST and Fashion-MNIST): a big-endian header (magic with
//! the element type and the number of dimensions, then each dimension) followed by the
//! elements. Only unsigned bytes are read (images and labels); gzip'd files (as Debian
//! ships them) are inflated on the fly, recognised by their own magic, not by the name.

use flate2::read::GzDecoder;
use std::io::Read;
use std::path::Path;

/// Largest IDX file accepted after inflating (Fashion-MNIST's training images are 47 MB).
pub const MAX_IDX_BYTES: u64 = 1 << 30;

/// An IDX array of unsigned bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Idx {
    /// The dimensions, outermost first (images: count, rows, columns; labels: count).
    pub dims: Vec<usize>,
    /// The elements, row-major.
    pub data: Vec<u8>,
}

/// Why an IDX file could not be read (the caller names the file).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdxError {
    /// The file could not be opened or read (or inflated).
    #[error("cannot read: {0}")]
    Io(String),
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
    /// More dimensions or elements than are accepted.
    #[error("too large: {0}")]
    TooLarge(String),
}

/// Reads an IDX file of unsigned bytes, gzip'd or not.
pub fn read(path: &Path) -> Result<Idx, IdxError> {
    let file = std::fs::File::open(path).map_err(|e| IdxError::Io(e.to_string()))?;
    let mut raw = Vec::new();
    file.take(MAX_IDX_BYTES + 1)
        .read_to_end(&mut raw)
        .map_err(|e| IdxError::Io(e.to_string()))?;
    let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        GzDecoder::new(raw.as_slice())
            .take(MAX_IDX_BYTES + 1)
            .read_to_end(&mut out)
            .map_err(|e| IdxError::Io(format!("gzip: {e}")))?;
        out
    } else {
        raw
    };
    if bytes.len() as u64 > MAX_IDX_BYTES {
        return Err(IdxError::TooLarge(format!(
            "more than {MAX_IDX_BYTES} bytes"
        )));
    }
    parse(&bytes)
}

/// Parses the bytes of an (inflated) IDX file of unsigned bytes.
pub fn parse(bytes: &[u8]) -> Result<Idx, IdxError> {
    let truncated = |expected: u64| IdxError::Truncated {
        expected,
        found: bytes.len() as u64,
    };
    let magic: [u8; 4] = match bytes.get(..4) {
        Some(m) => [m[0], m[1], m[2], m[3]],
        None => return Err(truncated(4)),
    };
    if magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 || magic[3] == 0 || magic[3] > 4 {
        return Err(IdxError::Magic(magic));
    }
    let ndims = usize::from(magic[3]);
    let header = 4 + 4 * ndims;
    let head = bytes.get(4..header).ok_or(truncated(header as u64))?;
    let dims: Vec<usize> = head
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize)
        .collect();
    let count = dims
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64))
        .filter(|&n| n <= MAX_IDX_BYTES)
        .ok_or_else(|| IdxError::TooLarge(format!("dimensions {dims:?}")))?;
    let expected = header as u64 + count;
    let data = bytes
        .get(header..header + count as usize)
        .ok_or(truncated(expected))?
        .to_vec();
    Ok(Idx { dims, data })
}

/// The bytes of an IDX file holding `data` with dimensions `dims` (for tests and tools
/// that write small datasets).
pub fn encode(dims: &[usize], data: &[u8]) -> Vec<u8> {
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
        assert!(matches!(
            parse(&bytes[..6]),
            Err(IdxError::Truncated { .. })
        ));
    }
}
