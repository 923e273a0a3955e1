//! The command's side of the proof's gaps: `check` exits 1 on a register read before
//! anything writes it, `run` warns once per such register, and `compile` and `check`
//! refuse an approximation that misses its bound unless accepted. The proof's own tests
//! are in the library (`crates/scamp/src/verify/tests/proof_gaps.rs`).

mod common;

use std::path::Path;
use std::process::Output;

/// `scamp check PROGRAM --kernel SPEC` on the bundled images, with `extra` flags.
fn check(program: &Path, spec: &Path, extra: &[&str]) -> Output {
    let images = format!("{}/images", env!("CARGO_MANIFEST_DIR"));
    let mut args = vec![
        "check",
        program.to_str().expect("utf-8"),
        "--kernel",
        spec.to_str().expect("utf-8"),
        "--images",
        &images,
    ];
    args.extend(extra);
    common::scamp(&args)
}

#[test]
fn check_exits_1_on_a_register_read_before_anything_writes_it() {
    let dir = common::temp_dir("proof_gaps");
    let id = dir.join("id.yaml");
    std::fs::write(&id, "kernels:\n  - out: A\n    weights: [[1]]\n").expect("write");
    let add = dir.join("add.scamp");
    std::fs::write(&add, "add(A, A, B);\n").expect("write");
    let o = check(&add, &id, &["--noise", "ideal"]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("A depends on B, read at 1:1 before anything writes it"),
        "{out}"
    );
}

#[test]
fn run_warns_once_per_register_read_before_anything_writes_it() {
    let dir = common::temp_dir("proof_gaps");
    // `run` warns once per register, naming it and its line.
    let twice = dir.join("twice.scamp");
    std::fs::write(&twice, "add(A, A, B);\nadd(A, A, B);\nMOV(R1, R5);\n").expect("write");
    let o = common::scamp(&[
        "run",
        twice.to_str().expect("utf-8"),
        "--noise",
        "ideal",
        "--input",
        "A",
    ]);
    let err = common::stderr(&o);
    assert_eq!(err.matches("warning:").count(), 2, "{err}");
    assert!(
        err.contains("twice.scamp:1:1: B is read before anything writes it"),
        "{err}"
    );
    assert!(err.contains("twice.scamp:3:1: R5 is read before"), "{err}");
    // --set counts as a write.
    let o = common::scamp(&[
        "run",
        twice.to_str().expect("utf-8"),
        "--noise",
        "ideal",
        "--input",
        "A",
        "--set",
        "B=1",
        "--set",
        "R5=1",
    ]);
    assert!(
        !common::stderr(&o).contains("warning:"),
        "{}",
        common::stderr(&o)
    );
}

#[test]
fn compile_and_check_exit_1_on_an_approximation_that_misses_unless_accepted() {
    let dir = common::temp_dir("proof_gaps");
    // A spec whose approximation misses: compile and check exit 1.
    let spec = dir.join("gauss0.yaml");
    std::fs::write(
        &spec,
        "kernels:\n  - out: A\n    scale: 1/16\n    weights: [[1, 2, 1], [2, 4, 2], [1, 2, 1]]\n\
         approximation: {max_depth: 0}\n",
    )
    .expect("write");
    let o = common::scamp(&["compile", spec.to_str().expect("utf-8"), "--work", "10"]);
    assert_eq!(o.status.code(), Some(1), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("has error 1 (sum of |weight differences|)"));
    let res = dir.join("res.scamp");
    std::fs::write(&res, "res(A);\n").expect("write");
    let o = check(&res, &spec, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("depth 4 meets it"));
    assert!(common::stderr(&o).contains("--accept-approximation"));
    // The flag accepts it as the spec key does: both commands pass.
    let o = check(&res, &spec, &["--accept-approximation"]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let o = common::scamp(&[
        "compile",
        spec.to_str().expect("utf-8"),
        "--work",
        "10",
        "--accept-approximation",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.starts_with("//") && !l.trim().is_empty())
            .collect::<Vec<_>>(),
        vec!["res(A);"]
    );
}
