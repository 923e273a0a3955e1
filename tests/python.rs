//! The Python package (python/), as a user gets it: built once into an abi3 wheel with
//! maturin, installed from that wheel into a fresh virtual environment, its stub checked
//! against the installed module by mypy's `stubtest`, and its pytest suite
//! (python/tests/) run there, so that `cargo test --release` covers the bindings too.
//!
//! The build tools live in a venv kept under `target/python-venv` (maturin installed
//! only when missing; the wheel is rebuilt by cargo's incremental build in this
//! workspace's target directory). The test environment, `target/python-test-venv`, is
//! made afresh on every run and gets the wheel, pytest, mypy and onnx (the optional
//! extra `Network.from_onnx` needs, so that its tests run; pip's cache keeps that
//! quick after the first run). Without `python3` or its `venv` module the test says
//! SKIPPED loudly and passes, except under `CI=true`, where it fails: CI must run the
//! suite.

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

/// The interpreter of the venv at `dir`, made with `python3 -m venv` (`fresh`: emptied
/// first).
fn venv(dir: &Path, fresh: bool) -> PathBuf {
    let python = dir.join("bin").join("python");
    if fresh || !python.exists() {
        let mut cmd = Command::new("python3");
        cmd.args(["-m", "venv"]);
        if fresh {
            cmd.arg("--clear");
        }
        run(cmd.arg(dir), "python3 -m venv");
    }
    python
}

/// Installs `packages` into the venv of `python` unless `probe` imports already.
fn pip_install(python: &Path, probe: &str, packages: &[&str]) {
    let has = Command::new(python)
        .args(["-c", &format!("import {probe}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        run(
            Command::new(python)
                .args(["-m", "pip", "install", "--quiet"])
                .args(packages),
            &format!("pip install {}", packages.join(" ")),
        );
    }
}

/// Builds the abi3 wheel into `target/python-wheels` (emptied first, so exactly one
/// wheel is there) and returns its path.
fn build_wheel(tools: &Path) -> PathBuf {
    let out = root().join("target").join("python-wheels");
    let _ = std::fs::remove_dir_all(&out);
    run(
        Command::new(tools)
            .args(["-m", "maturin", "build", "--release", "--quiet", "-m"])
            .arg(root().join("python").join("Cargo.toml"))
            .arg("-o")
            .arg(&out),
        "maturin build",
    );
    let wheels: Vec<PathBuf> = std::fs::read_dir(&out)
        .expect("the wheel folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "one wheel: {wheels:?}");
    let name = wheels[0].display().to_string();
    // abi3-py39: one wheel for every CPython from 3.9.
    assert!(name.contains("-cp39-abi3-"), "{name}");
    wheels[0].clone()
}

/// Builds the source distribution into `target/python-sdist` and asserts it holds the
/// library's sources and every file the library embeds (its images and the default
/// network's files), so that it builds without the repository.
fn check_sdist(tools: &Path) {
    let out = root().join("target").join("python-sdist");
    let _ = std::fs::remove_dir_all(&out);
    run(
        Command::new(tools)
            .args(["-m", "maturin", "sdist", "-m"])
            .arg(root().join("python").join("Cargo.toml"))
            .arg("-o")
            .arg(&out),
        "maturin sdist",
    );
    let sdist = std::fs::read_dir(&out)
        .expect("the sdist folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .expect("one .tar.gz");
    let listing = run(
        Command::new(tools)
            .args([
                "-c",
                "import sys, tarfile; print('\\n'.join(tarfile.open(sys.argv[1]).getnames()))",
            ])
            .arg(&sdist),
        "list the sdist",
    );
    let names = String::from_utf8_lossy(&listing.stdout);
    let library = root().join("crates").join("scamp");
    let mut wanted = vec!["crates/scamp/src/lib.rs".to_string()];
    for folder in ["images", "programs"] {
        for e in std::fs::read_dir(library.join(folder))
            .expect("a library folder")
            .flatten()
        {
            wanted.push(format!(
                "crates/scamp/{folder}/{}",
                e.file_name().to_string_lossy()
            ));
        }
    }
    for file in wanted {
        assert!(
            names.lines().any(|n| n.ends_with(&format!("/{file}"))),
            "{file} not in the sdist: {names}"
        );
    }
}

#[test]
fn python_wheel_installs_in_a_fresh_venv_and_passes_stubtest_and_its_tests() {
    if !python_can_make_venvs() {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(
            !ci,
            "CI=true but python3 with its venv module is missing: .ci/run installs python3-venv"
        );
        shout(
            "\n*** SKIPPED python_wheel_installs_in_a_fresh_venv_and_passes_stubtest_and_its_tests: \
             python3 with the venv module is missing (apt-get install python3-venv) ***\n",
        );
        return;
    }
    let target = root().join("target");
    let tools = venv(&target.join("python-venv"), false);
    pip_install(&tools, "maturin", &["maturin>=1.16,<2"]);
    let wheel = build_wheel(&tools);
    check_sdist(&tools);
    let python = venv(&target.join("python-test-venv"), true);
    run(
        Command::new(&python)
            .args(["-m", "pip", "install", "--quiet"])
            .arg(&wheel)
            .args(["pytest", "mypy", "onnx"]),
        "pip install the wheel, pytest, mypy and onnx",
    );
    // From the target folder, so that `import scamp` finds the installed package only.
    let stubtest = run(
        Command::new(&python)
            .args(["-m", "mypy.stubtest", "scamp", "--mypy-config-file"])
            .arg(root().join("python").join("stubtest.ini"))
            .current_dir(&target),
        "stubtest scamp",
    );
    shout(&format!(
        "stubtest: {}",
        String::from_utf8_lossy(&stubtest.stdout).trim()
    ));
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
