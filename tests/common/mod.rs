//! Helpers shared by the tests that drive the `scamp` binary.

#![allow(dead_code)] // each test crate uses its own subset

pub mod browser;
pub mod channels;
pub mod dataset;
pub mod network;
pub mod npy;

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs `scamp` with `args` from the crate root.
pub fn scamp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scamp"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the scamp binary runs")
}

/// A fresh folder for one test crate and purpose, unique per process.
pub fn temp_dir(purpose: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("scamp-{purpose}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Writes `contents` to a file named `name` in the folder for `purpose`.
pub fn temp_file(purpose: &str, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let p = temp_dir(purpose).join(name);
    std::fs::write(&p, contents).expect("temp file");
    p
}

/// The one JSON object a successful command printed (fails the test, showing stderr,
/// when the command did not succeed).
pub fn json(o: &Output) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("one JSON object on stdout")
}

/// What the command printed on stderr.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit code 2 and an `error:` message containing every one of `parts`.
pub fn refused(o: &Output, parts: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.starts_with("error:"), "{e}");
    for p in parts {
        assert!(e.contains(p), "`{p}` missing from: {e}");
    }
}
