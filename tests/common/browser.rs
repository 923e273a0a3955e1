//! Headless Chromium for the tests that render pages (`browser.rs`) and drive the
//! playground (`playground.rs`): finding it, and the flags every launch shares.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The browser binary, or `None` after saying on stderr what was skipped (`skipped`,
/// e.g. "the HTML pages were not rendered"); under CI a missing browser fails `test`.
pub fn find(test: &str, skipped: &str) -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Ok(out) = Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
        {
            let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if out.status.success() && !path.is_empty() {
                return Some(PathBuf::from(path));
            }
        }
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    assert!(!ci, "CI=true but no chromium on PATH: {test} cannot run");
    // Written to the process's stderr directly: the test harness captures eprintln!
    // of passing tests, and this message must be seen.
    let stars = "*".repeat(70);
    let _ = std::io::stderr().write_all(
        format!(
            "\n{stars}\nSKIPPED: no chromium on PATH, {skipped}.\nInstall it (apt-get \
             install -y chromium) to run the browser tests.\n{stars}\n"
        )
        .as_bytes(),
    );
    None
}

/// Headless Chromium at `bin` with its own profile folder and a `width` x `height`
/// window, quiet (no network of its own, no first-run pages); the caller adds what
/// to do.
pub fn command(bin: &Path, profile: &Path, (width, height): (u32, u32)) -> Command {
    let mut c = Command::new(bin);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--window-size={width},{height}"))
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}
