//! The `scamp` binary's contract for `run` and `trace`: exit codes, positioned errors,
//! JSON fields and output files.

mod common;

use common::{json, scamp, stderr};

fn temp_file(name: &str, contents: &[u8]) -> std::path::PathBuf {
    common::temp_file("cli-run", name, contents)
}

#[test]
fn run_json_has_contract_fields_and_exact_values() {
    let prog = temp_file("load.scamp", b"in(A, 100);\ndivq(B, A);\nneg(C, B)\n");
    let o = scamp(&["run", prog.to_str().unwrap(), "--noise", "ideal", "--json"]);
    let v = json(&o);
    assert_eq!(v["instructions"], 3);
    assert_eq!(v["cycles"], 6);
    assert_eq!(v["time_us"], 0.6);
    assert_eq!(v["saturated"], 0);
    assert_eq!(v["registers"]["A"]["mean"], 100.0);
    assert_eq!(v["registers"]["B"]["min"], 50.0);
    assert_eq!(v["registers"]["C"]["max"], -50.0);
    assert_eq!(v["registers"]["C"]["std"], 0.0);
}

#[test]
fn repeat_and_set_preload() {
    let prog = temp_file("half.scamp", b"divq(B, A); mov(A, B)\n");
    let o = scamp(&[
        "run",
        prog.to_str().unwrap(),
        "--noise",
        "ideal",
        "--set",
        "A=64",
        "--repeat",
        "3",
        "--json",
    ]);
    let v = json(&o);
    assert_eq!(v["registers"]["A"]["mean"], 8.0);
    assert_eq!(v["cycles"], 12);
    assert_eq!(v["instructions"], 6);
}

#[test]
fn out_writes_npy_and_png() {
    let prog = temp_file("out.scamp", b"in(B, -3)\n");
    let dir = std::env::temp_dir().join(format!("scamp-out-{}", std::process::id()));
    let o = scamp(&[
        "run",
        prog.to_str().unwrap(),
        "--noise",
        "ideal",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let a: ndarray::Array2<f32> = ndarray_npy::read_npy(dir.join("B.npy")).unwrap();
    assert_eq!(a.shape(), &[256, 256]);
    assert!(a.iter().all(|&v| v == -3.0));
    let png = image::open(dir.join("B.png")).unwrap().to_luma8();
    assert_eq!(png.get_pixel(7, 9)[0], 125);
}

#[test]
fn bad_programs_exit_2_with_position() {
    let cases: &[(&[u8], &str)] = &[
        (b"mov(A, B);\nfoo(A);\n", ":2:1: unknown instruction `foo`"),
        (b"add(A, B);\n", ":1:1: wrong number of operands"),
        (
            b"mov(A, G)\n",
            ":1:8: operand 2 of `mov`: unknown register `G`",
        ),
        (b"movx(A, B, up)\n", ":1:12: unknown operand `up`"),
        (b"divq(C, C)\n", ":1:1: register C appears twice"),
        (b"in(A, 200)\n", ":1:7: operand 2 of `in`"),
        (b"mov(NEWS, A)\n", ":1:5: operand 1 of `mov`"),
        (b"mov(A, B\n", "expected `,` or `)`"),
        (b"mov(A, B) \xff\n", ":1:11: the program is not UTF-8 text"),
    ];
    for (text, want) in cases {
        let p = temp_file("bad.scamp", text);
        let o = scamp(&["run", p.to_str().unwrap(), "--noise", "ideal"]);
        assert_eq!(o.status.code(), Some(2), "{want}");
        let e = stderr(&o);
        assert!(e.starts_with("error: "), "{e}");
        assert!(e.contains(want), "expected {want:?} in {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    }
}

#[test]
fn bad_options_exit_2() {
    let prog = temp_file("ok.scamp", b"mov(B, A)\n");
    let p = prog.to_str().unwrap();
    for args in [
        vec!["run", p, "--noise", "ideal", "--image", "Cargo.toml"],
        vec!["run", p, "--noise", "ideal", "--set", "Q=1"],
        vec!["run", p, "--noise", "ideal", "--set", "A=abc"],
        vec!["run", p, "--noise", "ideal", "--edge", "mirror"],
        vec!["run", "no/such/program.scamp", "--noise", "ideal"],
        vec!["trace", p, "--pe", "300,1"],
    ] {
        let o = scamp(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("error"), "{args:?}");
    }
}

#[test]
fn trace_shows_bus_instructions_and_pe_values() {
    let prog = temp_file("trace.scamp", b"in(A, 10);\nmovx(B, A, east)\n");
    let o = scamp(&["trace", prog.to_str().unwrap(), "--pe", "5,255"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("bus(XW, A)"), "{out}");
    assert!(out.contains("bus(B, NEWS)"), "{out}");
    // PE (5, 255) is on the east edge: no PE writes its NEWS through XW, so NEWS keeps
    // the -10 that in() left there and B = -(-10) = 10; XE (beyond the edge) reads 0.
    let last = out.lines().find(|l| l.contains("bus(B, NEWS)")).unwrap();
    let cells: Vec<&str> = last.split_whitespace().collect();
    assert_eq!(
        &cells[2..10],
        ["10", "10", "0", "0", "0", "0", "-10", "-10"],
        "{last}"
    );
    assert_eq!(cells[10], "0", "XE beyond the edge: {last}");
}
