//! The Python package (python/): builds it into a virtual environment kept under
//! `target/python-venv` and runs its pytest suite (python/tests/), so that
//! `cargo test --release` covers the bindings too.
//!
//! The environment is made once (`python3 -m venv`); maturin, pytest, numpy and onnx
//! (the optional extra `Network.from_onnx` needs, so that its tests run) are
//! installed into it only when missing, and later runs only rebuild the extension
//! (cargo's own incremental build, in this workspace's target directory). Without
//! `python3` or its `venv` module the test says SKIPPED loudly and passes, except under
//! `CI=true`, where it fails: CI must run the suite.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Prints to the real stderr: the test harness captures `eprintln!` of passing tests.
fn shout(msg: &str) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}

fn run(cmd: &mut Command, what: &str) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    if !out.status.success() {
        panic!(
            "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

/// Whether `python3` can make virtual environments (Debian splits `venv`'s pip out
/// into `python3-venv`).
fn python_can_make_venvs() -> bool {
    Command::new("python3")
        .args(["-c", "import venv, ensurepip"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The environment's interpreter, after making the environment if needed and
/// installing the build and test tools it lacks.
fn venv_python() -> PathBuf {
    let venv = root().join("target").join("python-venv");
    let python = venv.join("bin").join("python");
    if !python.exists() {
        run(
            Command::new("python3").arg("-m").arg("venv").arg(&venv),
            "python3 -m venv",
        );
    }
    let has_tools = Command::new(&python)
        .args(["-c", "import maturin, pytest, numpy, onnx"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_tools {
        run(
            Command::new(&python).args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "maturin>=1.16,<2",
                "pytest",
                "numpy",
                "onnx",
            ]),
            "pip install maturin pytest numpy onnx",
        );
    }
    python
}

#[test]
fn python_package_builds_and_passes_its_tests() {
    if !python_can_make_venvs() {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(
            !ci,
            "CI=true but python3 with its venv module is missing: .ci/run installs python3-venv"
        );
        shout(
            "\n*** SKIPPED python_package_builds_and_passes_its_tests: python3 with the venv \
             module is missing (apt-get install python3-venv) ***\n",
        );
        return;
    }
    let python = venv_python();
    let bin = python.parent().map(Path::to_path_buf).unwrap_or_default();
    // maturin's build backend calls the `maturin` program: the environment's bin/ goes
    // first on PATH.
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH entries hold no separator");
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-build-isolation",
                "--no-deps",
                "--force-reinstall",
            ])
            .arg(root().join("python"))
            .env("PATH", &path),
        "pip install ./python",
    );
    let out = run(
        Command::new(&python)
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(root().join("python").join("tests"))
            .env("SCAMP_BIN", env!("CARGO_BIN_EXE_scamp"))
            .current_dir(root()),
        "pytest python/tests",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let summary = text.lines().last().unwrap_or_default();
    shout(&format!("python/tests: {summary}"));
    assert!(summary.contains("passed"), "{text}");
}
