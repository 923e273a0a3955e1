//! Files the commands read and write beyond programs and specs: `.npy` register values
//! (read by the library, [`scamp::load_npy`], and checked to lie in the
//! register range) and output paths (checked before a long search, not after).

use super::CliError;
use scamp::N;
use std::path::Path;

/// Largest magnitude a preloaded register value may have. Register values are analogue
/// levels; no profile describes levels beyond ±1024 (its `level` range).
pub use scamp::MAX_SET_VALUE;

/// Whether `v` may be preloaded into a register (finite, within ±[`MAX_SET_VALUE`]).
pub fn in_register_range(v: f32) -> bool {
    v.is_finite() && v.abs() <= MAX_SET_VALUE
}

/// The values of a 256x256 `.npy` file for `--set` (read by [`scamp::load_npy`],
/// which checks the header before anything is allocated): every value must be finite
/// and within ±[`MAX_SET_VALUE`].
pub fn load_values(path: &Path) -> Result<Vec<f32>, CliError> {
    let at = |m: String| CliError::msg(format!("{}: {m}", path.display()));
    let values = scamp::load_npy(path)?;
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

/// Fails when `out` is one of `inputs` (the same file under any name or link): an
/// output never overwrites what the command reads.
pub fn check_not_an_input(out: &Path, inputs: &[std::path::PathBuf]) -> Result<(), CliError> {
    use std::os::unix::fs::MetadataExt;
    // A file not there yet is no input.
    let Ok(o) = std::fs::metadata(out) else {
        return Ok(());
    };
    let same = |i: &std::path::PathBuf| {
        std::fs::metadata(i).is_ok_and(|m| (m.dev(), m.ino()) == (o.dev(), o.ino()))
    };
    match inputs.iter().find(|i| same(i)) {
        Some(i) => Err(CliError::msg(format!(
            "{}: cannot write: it is an input of this command ({}); choose another file",
            out.display(),
            i.display()
        ))),
        None => Ok(()),
    }
}

/// Creates the directory `dir` if needed and fails unless files can be written in it.
pub fn prepare_dir(dir: &Path) -> Result<(), CliError> {
    let fail = |m: String| CliError::msg(format!("{}: cannot create: {m}", dir.display()));
    std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
    check_writable_file(&dir.join(format!(".scamp-write-test-{}", std::process::id())))
}
