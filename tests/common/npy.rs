//! `.npy` files written from bytes, so that a test can make any header: other dtypes,
//! byte orders, or shapes the data does not hold.

/// A `.npy` file (format 1.0) of `descr` (`<f4`, `>f8`, ...) and `shape` (a Python
/// tuple, as `(2, 3)`), with `data` as its bytes after the header.
pub fn npy_bytes(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
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
