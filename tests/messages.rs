//! Messages and positions that read as the user needs them, whatever the input: the
//! cases a hostile new user found (issue 29), each through the `scamp` binary.

mod common;

use common::{refused, scamp, stderr, temp_dir, temp_file};

fn tmp(name: &str, contents: impl AsRef<[u8]>) -> String {
    temp_file("messages", name, contents)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn compile_of_a_program_says_compile_takes_a_spec() {
    let prog = tmp("prog.scamp", "// Hand-written identity\nmov(B, A);\n");
    let o = scamp(&["compile", &prog]);
    refused(&o, &["is it a program? `compile` takes a spec"]);
}

#[test]
fn program_positions_and_names_read_well() {
    let cr = tmp("cr.scamp", "mov(B, A);\rmov(C, B);\rfoo(A)\r");
    refused(
        &scamp(&["run", &cr, "--noise", "ideal"]),
        &["cr.scamp:3:1:"],
    );
    let set = tmp("set.scamp", "SET(R13)\n");
    refused(
        &scamp(&["run", &set, "--noise", "ideal"]),
        &["unknown register `R13` (this device has R0..R12 and FLAG)"],
    );
    let slip = tmp("slip.scamp", "movx(B, A, esat)\n");
    refused(
        &scamp(&["run", &slip, "--noise", "ideal"]),
        &["did you mean `east`?"],
    );
    let long = tmp("long.scamp", format!("{}(A)\n", "x".repeat(1 << 20)));
    let o = scamp(&["run", &long, "--noise", "ideal"]);
    refused(&o, &["unknown instruction"]);
    assert!(
        stderr(&o).len() < 400,
        "{} bytes of stderr",
        stderr(&o).len()
    );
}

#[test]
fn huge_weights_are_printed_short() {
    let spec = tmp(
        "huge.yaml",
        "kernels:\n  - out: A\n    weights: [[1e300]]\napproximation: {max_depth: 0}\n",
    );
    let o = scamp(&["compile", &spec]);
    refused(&o, &["weight 1e300 too large"]);
    assert!(stderr(&o).len() < 300, "{}", stderr(&o));
}

#[test]
fn too_many_kernels_are_refused_at_the_first_one_past_the_limit() {
    let mut text = String::from("kernels:\n");
    for _ in 0..200 {
        text += "  - {out: A, weights: [[1]]}\n";
    }
    let spec = tmp("many.yaml", text);
    refused(
        &scamp(&["compile", &spec]),
        &["many.yaml:66:", "200 kernels, more than the 64"],
    );
}

#[test]
fn an_empty_profile_range_points_at_its_key() {
    let profile = tmp(
        "range.yaml",
        "name: broken\nsaturation:\n  low: 5\n  high: 1\ndescription: x\n",
    );
    let prog = tmp("id.scamp", "mov(B, A);\n");
    refused(
        &scamp(&["run", &prog, "--noise", &profile]),
        &["range.yaml:3:8:", "low (5) must be below high (1)"],
    );
}

#[test]
fn output_files_create_missing_folders_alike() {
    let dir = temp_dir("messages_out");
    let prog = tmp("trace.scamp", "mov(B, A);\n");
    let page = dir.join("new").join("deeper").join("page.html");
    let o = scamp(&[
        "trace",
        &prog,
        "--html",
        page.to_str().expect("utf-8"),
        "--noise",
        "ideal",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(page.is_file());
    let spec = tmp("id.yaml", "kernels: [{out: A, weights: [[1]]}]\n");
    let out = dir.join("other").join("id.scamp");
    let o = scamp(&[
        "compile",
        &spec,
        "-o",
        out.to_str().expect("utf-8"),
        "--work",
        "20",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.is_file());
}

#[test]
fn uncertainty_under_a_profile_without_it_fails_before_compiling() {
    let spec = tmp("u.yaml", "kernels: [{out: A, weights: [[1]]}]\n");
    let o = scamp(&["check", &spec, "--uncertainty", "--noise", "ideal"]);
    refused(&o, &["profile `ideal` describes no uncertainty"]);
    assert!(!stderr(&o).contains("compiled"), "{}", stderr(&o));
}

#[test]
fn a_clock_raced_compile_says_how_to_reproduce_it() {
    let spec = tmp("race.yaml", "kernels: [{out: A, weights: [[1]]}]\n");
    let o = scamp(&["compile", &spec, "--time-limit", "0.2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("`--work N`"), "{}", stderr(&o));
    let o = scamp(&["compile", &spec, "--work", "20"]);
    assert!(!stderr(&o).contains("raced the clock"), "{}", stderr(&o));
    // A work budget the clock cuts short is no longer reproducible either.
    let o = scamp(&[
        "compile",
        "programs/gauss3x3.yaml",
        "--work",
        "100000000",
        "--time-limit",
        "0.5",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the time limit struck before the work budget was spent"),
        "{}",
        stderr(&o)
    );
}
