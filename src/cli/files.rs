//! Files the commands read and write beyond programs and specs: `.npy` register values
//! (checked from their header before anything is allocated) and output paths (checked
//! before a long search, not after).

use super::CliError;
use crate::sim::{readout, N, PES};
use std::io::Read;
use std::path::Path;

/// Largest magnitude a preloaded register value may have. Register values are analogue
/// levels; no profile describes levels beyond ±1024 (its `level` range).
pub const MAX_SET_VALUE: f32 = 1024.0;

/// Whether `v` may be preloaded into a register (finite, within ±[`MAX_SET_VALUE`]).
pub fn in_register_range(v: f32) -> bool {
    v.is_finite() && v.abs() <= MAX_SET_VALUE
}

/// Largest `.npy` header accepted, in bytes (a real one is under 200).
const MAX_NPY_HEADER: usize = 1 << 16;

/// What the header of a `.npy` file says.
#[derive(Debug, PartialEq, Eq)]
struct NpyHeader {
    /// Bytes per element (4 or 8: float32 or float64).
    item: u64,
    /// Dimensions.
    shape: Vec<u64>,
    /// Where the data starts.
    data_at: u64,
}

/// `'key': value` of a `.npy` header dict, as text up to the next `,` or `}` (or the
/// closing `)` of a tuple).
fn header_field<'a>(dict: &'a str, key: &str) -> Option<&'a str> {
    let at = dict.find(&format!("'{key}'"))? + key.len() + 2;
    let rest = dict[at..].trim_start().strip_prefix(':')?.trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')')? + 1
    } else {
        rest.find([',', '}'])?
    };
    Some(rest[..end].trim())
}

fn parse_header(bytes: &[u8], dict_at: usize) -> Result<NpyHeader, String> {
    let dict =
        std::str::from_utf8(&bytes[dict_at..]).map_err(|_| "the header is not text".to_string())?;
    let descr = header_field(dict, "descr")
        .ok_or("the header has no `descr`")?
        .trim_matches(['\'', '"']);
    let item = match descr {
        "<f4" | ">f4" | "=f4" => 4,
        "<f8" | ">f8" | "=f8" => 8,
        other => return Err(format!("element type `{other}` is not float32 or float64")),
    };
    let shape_text = header_field(dict, "shape").ok_or("the header has no `shape`")?;
    let inner = shape_text
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| format!("the shape `{shape_text}` is not a tuple"))?;
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<u64>()
                .map_err(|_| format!("the shape `{shape_text}` is not a tuple of sizes"))
        })
        .collect::<Result<Vec<u64>, String>>()?;
    Ok(NpyHeader {
        item,
        shape,
        data_at: bytes.len() as u64,
    })
}

/// Reads and checks the header of the `.npy` file at `path`: float32 or float64, shape
/// 256x256, and as many data bytes as that needs.
fn check_npy(path: &Path) -> Result<(), String> {
    let mut file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let len = file
        .metadata()
        .map_err(|e| format!("cannot read: {e}"))?
        .len();
    let mut start = [0u8; 12];
    let got = file
        .read(&mut start)
        .map_err(|e| format!("cannot read: {e}"))?;
    if got < 10 || &start[..6] != b"\x93NUMPY" {
        return Err("not a numpy .npy file".into());
    }
    let (len_bytes, dict_at) = match start[6] {
        1 => (2, 10),
        2 | 3 if got >= 12 => (4, 12),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let mut n = [0u8; 4];
    n[..len_bytes].copy_from_slice(&start[8..8 + len_bytes]);
    let header_len = u32::from_le_bytes(n) as usize;
    if header_len > MAX_NPY_HEADER {
        return Err(format!("the header claims {header_len} bytes"));
    }
    let mut bytes = start[..got].to_vec();
    bytes.resize(dict_at + header_len, 0);
    if got < bytes.len() {
        file.read_exact(&mut bytes[got..])
            .map_err(|_| "the file ends inside its header".to_string())?;
    }
    let h = parse_header(&bytes, dict_at)?;
    if h.shape != [N as u64, N as u64] {
        let dims: Vec<String> = h.shape.iter().map(ToString::to_string).collect();
        return Err(format!(
            "expected a {N}x{N} array, got shape ({})",
            dims.join(", ")
        ));
    }
    let need = PES as u64 * h.item;
    let have = len.saturating_sub(h.data_at);
    if have < need {
        return Err(format!(
            "truncated: {have} bytes of data, a {N}x{N} array of float{} needs {need}",
            h.item * 8
        ));
    }
    Ok(())
}

/// The values of a 256x256 `.npy` file for `--set`: the header is checked before
/// anything is allocated, and every value must be finite and within
/// ±[`MAX_SET_VALUE`].
pub fn load_values(path: &Path) -> Result<Vec<f32>, CliError> {
    let at = |m: String| CliError::msg(format!("{}: {m}", path.display()));
    check_npy(path).map_err(at)?;
    let values = readout::load_npy(path)?;
    if let Some((i, v)) = values
        .iter()
        .enumerate()
        .find(|(_, v)| !in_register_range(**v))
    {
        return Err(at(format!(
            "value {v} at row {}, column {} is outside -{MAX_SET_VALUE}..{MAX_SET_VALUE}",
            i / N,
            i % N
        )));
    }
    Ok(values)
}

/// Fails unless a file can be written at `path` (checked before work whose result would
/// go there). Missing parent folders are created, as `--out` creates its folder (every
/// output flag, `-o`, `--out`, `--html`, treats them the same way). Leaves an existing
/// file as it is and creates no file.
pub fn check_writable_file(path: &Path) -> Result<(), CliError> {
    let fail = |m: String| CliError::msg(format!("{}: cannot write: {m}", path.display()));
    if path.is_dir() {
        return Err(fail("it is a directory".into()));
    }
    if path.exists() {
        return std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
            .map_err(|e| fail(e.to_string()));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        std::fs::create_dir_all(parent)
            .map_err(|e| fail(format!("cannot create {}: {e}", parent.display())))?;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| fail(e.to_string()))?;
    std::fs::remove_file(path).map_err(|e| fail(e.to_string()))
}

/// Creates the directory `dir` if needed and fails unless files can be written in it.
pub fn prepare_dir(dir: &Path) -> Result<(), CliError> {
    let fail = |m: String| CliError::msg(format!("{}: cannot create: {m}", dir.display()));
    std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
    check_writable_file(&dir.join(format!(".scamp-write-test-{}", std::process::id())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy(descr: &str, shape: &str, data: usize) -> Vec<u8> {
        let mut dict =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        while !(10 + dict.len() + 1).is_multiple_of(64) {
            dict.push(' ');
        }
        dict.push('\n');
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend((dict.len() as u16).to_le_bytes());
        b.extend(dict.bytes());
        b.extend(vec![0u8; data]);
        b
    }

    fn check(bytes: &[u8]) -> Result<(), String> {
        let dir = std::env::temp_dir().join(format!("scamp-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join(format!("{}.npy", bytes.len()));
        std::fs::write(&f, bytes).unwrap();
        let r = check_npy(&f);
        std::fs::remove_file(&f).unwrap();
        r
    }

    #[test]
    fn headers_are_checked_before_reading() {
        assert_eq!(check(&npy("<f4", "(256, 256)", PES * 4)), Ok(()));
        assert_eq!(check(&npy("<f8", "(256, 256)", PES * 8)), Ok(()));
        let e = check(&npy("<f4", "(1000000000, 1000000000)", 16)).unwrap_err();
        assert!(e.contains("got shape (1000000000, 1000000000)"), "{e}");
        let e = check(&npy("<f4", "(65536,)", PES * 4)).unwrap_err();
        assert!(e.contains("got shape (65536)"), "{e}");
        let e = check(&npy("<f4", "(256, 256)", PES * 4 - 1)).unwrap_err();
        assert!(e.contains("truncated"), "{e}");
        let e = check(&npy("<i8", "(256, 256)", PES * 8)).unwrap_err();
        assert!(e.contains("not float32"), "{e}");
        let full = npy("<f4", "(256, 256)", 0);
        assert!(check(&full[..40])
            .unwrap_err()
            .contains("inside its header"));
        assert!(check(b"hello").unwrap_err().contains("not a numpy"));
    }
}
