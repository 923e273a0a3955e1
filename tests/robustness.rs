//! Regression tests for malformed and hostile input: every reproducer of a crash, hang,
//! memory blow-up or false answer found so far, driven through the `scamp` binary.
//! Bad input must end with exit 2 and one `error:` line naming the place.

mod common;

use common::npy::npy_bytes;
use common::{refused, scamp, stderr, temp_file};
use std::process::Output;

const ID_SPEC: &str = "kernels: [{out: A, scale: 1, weights: [[1]]}]\n";

fn tmp(name: &str, contents: impl AsRef<[u8]>) -> String {
    temp_file("robust", name, contents)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn doubling_beyond_any_fixed_width_does_not_prove_the_identity() {
    // x + 2^128 x: with 128-bit coefficients this wrapped to x and "proved" the identity.
    let text = format!(
        "mov(B, A);{}add(A, A, B);",
        "mov(C, B); add(B, B, C);".repeat(128)
    );
    let prog = tmp("doubling.scamp", text);
    let spec = tmp("id.yaml", ID_SPEC);
    let o = scamp(&["check", &prog, "--kernel", &spec, "--noise", "ideal"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("FAILED"), "{out}");
    // The exact coefficient 2^128 + 1 is reported, not a wrapped one.
    assert!(
        out.contains("340282366920938463463374607431768211457"),
        "{out}"
    );
}

#[test]
fn long_division_chains_are_exact() {
    let prog = tmp("divq.scamp", "divq(B, A); divq(A, B);\n".repeat(64));
    let spec = tmp(
        "box3.yaml",
        "kernels: [{out: A, weights: [[1, 1, 1], [1, 1, 1], [1, 1, 1]]}]\n",
    );
    let o = scamp(&["check", &prog, "--kernel", &spec, "--noise", "ideal"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("FAILED"));
}

#[test]
fn empty_readout_range_is_refused_at_load() {
    let p = tmp("readout.yaml", "readout: {low: 100, high: -100}\n");
    refused(
        &scamp(&["noise", "show", &p]),
        &[&format!("{p}:1:"), "low (100) must be below high (-100)"],
    );
    refused(
        &scamp(&["run", "programs/identity.scamp", "--noise", &p]),
        &["low (100)"],
    );
}

#[test]
fn time_limits_must_be_finite_and_positive() {
    for bad in ["nan", "inf", "-1", "0", "1e300"] {
        let flag = format!("--time-limit={bad}");
        refused(
            &scamp(&["check", "programs/gauss3x3.yaml", &flag]),
            &["--time-limit"],
        );
        refused(
            &scamp(&["compile", "programs/gauss3x3.yaml", &flag]),
            &["--time-limit"],
        );
    }
    let spec = tmp(
        "t.yaml",
        format!("{ID_SPEC}search: {{time_limit: 1e300}}\n"),
    );
    refused(&scamp(&["compile", &spec]), &[":2:", "time_limit"]);
}

#[test]
fn worker_counts_are_bounded_in_every_command() {
    for bad in ["0", "1025", "100000"] {
        refused(
            &scamp(&["compile", "programs/gauss3x3.yaml", "--workers", bad]),
            &["--workers", "between 1 and 1024"],
        );
        refused(
            &scamp(&["check", "programs/gauss3x3.yaml", "--workers", bad]),
            &["--workers", "between 1 and 1024"],
        );
    }
}

#[test]
fn objective_and_slack_are_checked_before_the_search() {
    for bad in ["-0.1", "11", "nan", "lots"] {
        refused(
            &scamp(&[
                "compile",
                "programs/gauss3x3.yaml",
                &format!("--slack={bad}"),
            ]),
            &["--slack"],
        );
    }
    refused(
        &scamp(&["compile", "programs/gauss3x3.yaml", "--objective", "speed"]),
        &["--objective", "length", "error"],
    );
}

#[test]
fn many_workers_still_find_the_program() {
    // More workers than cores take turns on the spec's work budget; the time limit caps
    // them all (issue 29: it took 8.6 s for 1 s), and a program is there at the end
    // (the shortest is 5 instructions; the constructive one at most 11).
    let o = scamp(&[
        "compile",
        "programs/sobel_x.yaml",
        "--objective",
        "length",
        "--workers",
        "1024",
        "--time-limit",
        "2",
        "--json",
    ]);
    let v = common::json(&o);
    let n = v["instructions"].as_u64().unwrap_or(0);
    assert!((5..=11).contains(&n), "{n}");
    assert_eq!(v["search"]["workers"], 1024);
    // The cap itself (within 10 % on an idle machine: 1.9 s measured) is a benchmark
    // figure; here only the runaway is ruled out, with room for a loaded machine.
    let seconds = v["search"]["seconds"].as_f64().unwrap_or(f64::INFINITY);
    assert!(seconds <= 4.0, "{seconds} s for a 2 s limit");
}

/// A float32 `.npy` claiming `shape`, with `data` zero bytes after its header.
fn npy(shape: &str, data: usize) -> Vec<u8> {
    npy_bytes("<f4", shape, &vec![0u8; data])
}

fn set_file(name: &str, bytes: Vec<u8>) -> Output {
    let f = tmp(name, bytes);
    scamp(&[
        "run",
        "programs/identity.scamp",
        "--set",
        &format!("A={f}"),
        "--noise",
        "ideal",
    ])
}

#[test]
fn npy_headers_are_checked_before_allocation() {
    refused(
        &set_file("huge.npy", npy("(1000000000, 1000000000)", 64)),
        &["huge.npy", "expected a 256x256 array", "1000000000"],
    );
    refused(
        &set_file("rank1.npy", npy("(65536,)", 65536 * 4)),
        &["rank1.npy", "got shape (65536)"],
    );
    refused(
        &set_file("short.npy", npy("(256, 256)", 1000)),
        &["short.npy", "truncated"],
    );
    let mut nan = npy("(256, 256)", 256 * 256 * 4);
    let at = nan.len() - 8;
    nan[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    refused(&set_file("nan.npy", nan), &["nan.npy", "NaN", "row 255"]);
    let mut inf = npy("(256, 256)", 256 * 256 * 4);
    let at = inf.len() - 4;
    inf[at..].copy_from_slice(&f32::INFINITY.to_le_bytes());
    refused(&set_file("inf.npy", inf), &["inf.npy", "inf"]);
    let ok = set_file("ok.npy", npy("(256, 256)", 256 * 256 * 4));
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
}

#[test]
fn set_values_are_within_the_register_range() {
    for v in ["1e30", "inf", "-inf", "nan", "1025"] {
        refused(
            &scamp(&["run", "programs/identity.scamp", "--set", &format!("A={v}")]),
            &["--set"],
        );
    }
    refused(
        &scamp(&["run", "programs/identity.scamp", "--set", "A=1e30"]),
        &["-1024..1024"],
    );
}

#[test]
fn oversized_files_are_refused_before_parsing() {
    let big = tmp("big.yaml", vec![b'#'; (1 << 20) + 1]);
    refused(&scamp(&["compile", &big]), &["big.yaml", "larger than"]);
    let prog = tmp("big.scamp", vec![b' '; (4 << 20) + 1]);
    refused(
        &scamp(&["run", &prog, "--noise", "ideal"]),
        &["big.scamp", "larger than"],
    );
    let prof = tmp("big_profile.yaml", vec![b'#'; (1 << 20) + 1]);
    refused(&scamp(&["noise", "show", &prof]), &["larger than"]);
}

#[test]
fn registers_beyond_the_device_are_refused_with_a_position() {
    let spec = tmp(
        "regs.yaml",
        "registers: [A, G, H, Z]\nkernels: [{out: A, weights: [[1]]}]\n",
    );
    refused(&scamp(&["compile", &spec]), &["regs.yaml:1:16", "A..F"]);
    refused(
        &scamp(&["check", "programs/identity.scamp", "--kernel", &spec]),
        &["regs.yaml:1:16"],
    );
}

#[test]
fn names_cannot_inject_instructions_into_the_header() {
    let spec = tmp(
        "inject.yaml",
        format!("name: \"blur\\nres(A); //\"\n{ID_SPEC}"),
    );
    refused(&scamp(&["compile", &spec]), &["inject.yaml:1:7", "control"]);
}

#[test]
fn byte_order_marks_are_accepted() {
    let prog = tmp("bom.scamp", "\u{feff}mov(B, A);\n");
    let spec = tmp("bom.yaml", format!("\u{feff}{ID_SPEC}"));
    let prof = tmp("bom_profile.yaml", "\u{feff}name: plain\n");
    let o = scamp(&["run", &prog, "--noise", &prof, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = scamp(&["compile", &spec, "--time-limit", "1", "--workers", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn errors_carry_line_and_column() {
    let spec = tmp(
        "weight.yaml",
        "kernels:\n  - out: A\n    weights: [[1, 1e12]]\n",
    );
    refused(
        &scamp(&["compile", &spec]),
        &["weight.yaml:3:19", "too large"],
    );
    let mut bytes = b"kernels:\n  - out: A\n    weights: [[1]] # ".to_vec();
    bytes.push(0xff);
    let spec = tmp("latin.yaml", bytes);
    refused(
        &scamp(&["compile", &spec]),
        &["latin.yaml:3:22", "not UTF-8"],
    );
    let mut bytes = b"mov(B, A);\n  mov(C, A); // ".to_vec();
    bytes.extend([0xe9, b'\n']);
    let prog = tmp("latin.scamp", bytes);
    refused(&scamp(&["run", &prog]), &["latin.scamp:2:17", "not UTF-8"]);
}

#[test]
fn no_program_found_exits_1_from_compile_and_check() {
    // One register cannot hold the input and its shifted copy: no program exists, and
    // the message says why instead of asking for more time.
    let spec = tmp(
        "none.yaml",
        "registers: [A]\nkernels: [{out: A, weights: [[1, 1]]}]\n",
    );
    for cmd in ["compile", "check"] {
        let o = scamp(&[cmd, &spec, "--time-limit", "0.5", "--workers", "1"]);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains(
                "none.yaml: no program can exist: a single register (A) can only hold \
                 +-2^k times one shifted input"
            ) && err.contains("the kernel of A combines 2 taps whose weights do not sum to 0")
                && !err.contains("time-limit"),
            "{err}"
        );
    }
}

#[test]
fn registers_that_cannot_hold_the_kernel_are_named_without_a_time_hint() {
    // `--registers A` on a spec that would otherwise compile.
    let spec = tmp("two.yaml", "kernels: [{out: A, weights: [[1, 1]]}]\n");
    let o = scamp(&["compile", &spec, "--registers", "A", "--time-limit", "0.5"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("combines 2 taps"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("time-limit"), "{}", stderr(&o));
    // One tap of 3: a single register only ever holds +-2^k of it.
    let three = tmp(
        "three.yaml",
        "registers: [A]\nkernels: [{out: A, weights: [[3]]}]\n",
    );
    let o = scamp(&["compile", &three, "--time-limit", "0.5"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the one weight of the kernel of A is not +-2^k"),
        "{}",
        stderr(&o)
    );
    // A difference might fit one register, but the search covers all it can reach
    // there and finds nothing: it says so, and that more time would not help.
    let diff = tmp(
        "diff.yaml",
        "registers: [A]\nkernels: [{out: A, weights: [[1, -1]]}]\n",
    );
    for cmd in ["compile", "check"] {
        let o = scamp(&[cmd, &diff, "--time-limit", "5", "--workers", "1"]);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("no program found: the search exhausted its whole space (")
                && err.contains("nodes) within the registers A; more time would not help")
                && !err.contains("time-limit"),
            "{err}"
        );
    }
}

#[test]
fn output_paths_are_checked_before_the_search() {
    // The search for this spec finds nothing (exit 1): exit 2 naming the path shows the
    // path was checked first.
    let spec = tmp(
        "none2.yaml",
        "registers: [A]\nkernels: [{out: A, weights: [[1, 1]]}]\n",
    );
    // Missing folders are created (as for --out and --html); under a plain file they
    // cannot be.
    let file = tmp("plain-file", "x");
    let under_file = format!("{file}/dir/x.scamp");
    let o = scamp(&["compile", &spec, "--time-limit", "0.5", "-o", &under_file]);
    refused(&o, &[&under_file, "cannot write"]);
    let o = scamp(&[
        "check",
        &spec,
        "--time-limit",
        "0.5",
        "--out",
        &format!("{file}/sub"),
    ]);
    refused(&o, &["cannot create"]);
}

#[test]
fn kernel_delimiters_must_pair_up() {
    let prog = tmp("open.scamp", "scamp5_kernel_begin();\nmov(B, A);\n");
    refused(&scamp(&["run", &prog]), &["open.scamp:1:1", "never closed"]);
    let prog = tmp(
        "args.scamp",
        "scamp5_kernel_begin(A);\nscamp5_kernel_end();\n",
    );
    refused(&scamp(&["run", &prog]), &["args.scamp:1:21", "no operands"]);
    let prog = tmp("end.scamp", "mov(B, A);\nscamp5_kernel_end();\n");
    refused(&scamp(&["trace", &prog, "--pe", "1,1"]), &["end.scamp:2:1"]);
}

#[test]
fn every_numeric_flag_answers_a_negative_number_with_its_range() {
    let spec = tmp("n_id.yaml", ID_SPEC);
    let prog = tmp("n_id.scamp", "mov(B, A);\n");
    let cases: Vec<Vec<&str>> = vec![
        vec!["check", &spec, "--runs", "-1"],
        vec!["check", &spec, "--work", "-1"],
        vec!["check", &spec, "--workers", "-1"],
        vec!["check", &spec, "--seed", "-1"],
        vec!["check", &spec, "--chip-seed", "-3"],
        vec!["compile", &spec, "--node-limit", "-1"],
        vec!["compile", &spec, "--memory-limit", "-1"],
        vec!["compile", &spec, "--seed", "-1"],
        vec!["run", &prog, "--repeat", "-1"],
        vec!["run", &prog, "--runs", "-2"],
        vec!["bench", "--samples", "-1"],
    ];
    for args in cases {
        let o = scamp(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains("must be between"), "{args:?}: {e}");
        assert!(!e.contains("unexpected argument"), "{args:?}: {e}");
    }
    // Floats: the range in the message too.
    for args in [
        vec!["check", &spec, "--time-limit", "-1"],
        vec!["check", &spec, "--max-total-rmse", "-1"],
        vec!["check", &spec, "--max-total-rmse", "nan"],
        vec!["check", &spec, "--max-total-rmse", "inf"],
        vec!["compile", &spec, "--slack", "-0.5"],
    ] {
        let o = scamp(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains("must be"), "{args:?}: {e}");
    }
}

#[test]
fn the_command_line_and_the_spec_share_one_rule_per_key() {
    let spec = tmp("k_id.yaml", ID_SPEC);
    for (flag, key, sentence) in [
        (
            "--node-limit",
            "node_limit",
            "node_limit must be between 1 and 18446744073709551615, got 0",
        ),
        (
            "--memory-limit",
            "memory_limit",
            "memory_limit (MiB) must be between 1 and 1099511627776, got 0",
        ),
    ] {
        let o = scamp(&["compile", &spec, flag, "0"]);
        let cli = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{cli}");
        let in_spec = tmp(
            &format!("k_{key}.yaml"),
            format!("{ID_SPEC}search: {{{key}: 0}}\n"),
        );
        let o = scamp(&["compile", &in_spec]);
        let yaml = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{yaml}");
        // The same sentence in both.
        assert!(cli.contains(sentence), "{cli}");
        assert!(yaml.contains(sentence), "{yaml}");
    }
    let o = scamp(&["bench", "--samples", "99999999999"]);
    refused(&o, &["--samples must be between 1 and 1000"]);
    // The time limit: the flag, the key and the library options (which Python's
    // `scamp.compile` checks) say the same sentence.
    let sentence = "must be more than 0 and at most 86400 seconds (one day), got -1";
    let o = scamp(&["compile", &spec, "--time-limit=-1"]);
    refused(&o, &["--time-limit", sentence]);
    let in_spec = tmp(
        "k_time.yaml",
        format!("{ID_SPEC}search: {{time_limit: -1}}\n"),
    );
    refused(
        &scamp(&["compile", &in_spec]),
        &[&format!("time_limit {sentence}")],
    );
    let opts = |f: &dyn Fn(&mut scamp::CompileOptions)| {
        let mut o = scamp::CompileOptions::default();
        f(&mut o);
        o.validate().map_err(|e| e.to_string())
    };
    assert_eq!(opts(&|_| ()), Ok(()));
    assert_eq!(
        opts(&|o| o.time_limit = Some(-1.0)),
        Err(format!("time_limit {sentence}"))
    );
    assert_eq!(
        opts(&|o| o.workers = Some(0)),
        Err("workers must be between 1 and 1024, got 0".into())
    );
    assert_eq!(
        opts(&|o| o.slack = Some(f64::NAN)),
        Err("slack must be a fraction between 0 and 10, got NaN".into())
    );
    assert_eq!(
        opts(&|o| o.node_limit = Some(0)),
        Err("node_limit must be between 1 and 18446744073709551615, got 0".into())
    );
}
