//! The proof passes only when the program is right: registers nothing wrote are unknowns,
//! values whose support explodes stop symbolic execution with a message, results lost in
//! 32-bit floats are named, and an approximation that misses its bound is refused.

use crate::cain::{self, CompileError, CompileOptions, Stats};
use crate::isa::{parse_program, unwritten_reads, AnyReg, Device, Program, Reg, Wiring};
use crate::verify::{
    check_precision, prove, CheckTarget, ProofError, SymbolicCause, Target, UnwrittenDependency,
};
use proptest::prelude::*;

fn program(text: &str) -> Program {
    parse_program(text, Device::default()).expect("valid program")
}

fn identity() -> Target {
    Target {
        out: Reg::A,
        depth: 0,
        weights: vec![vec![1]],
    }
}

#[test]
fn a_register_read_before_any_write_is_an_unknown() {
    // B holds whatever was there: `A + B` is not the identity.
    let p = program("add(A, A, B)");
    match prove(&p, Wiring::new(Reg::A, 6), &[identity()], None) {
        Err(ProofError::Unwritten(UnwrittenDependency { out, reg, pos })) => {
            assert_eq!((out, reg, pos.line, pos.col), (Reg::A, Reg::B, 1, 1));
        }
        other => panic!("{other:?}"),
    }
    // Its coefficient cancels: B - B is 0 whatever B holds.
    let p = program("mov(C, B);\nsub(D, C, B);\nadd(A, A, D)");
    assert_eq!(
        prove(&p, Wiring::new(Reg::A, 6), &[identity()], None),
        Ok(())
    );
    // A neighbour's NEWS nothing wrote is an unknown too.
    let p = program("bus(B, XE);\nbus(C, B);\nadd(A, A, C)");
    assert!(matches!(
        prove(&p, Wiring::new(Reg::A, 6), &[identity()], None),
        Err(ProofError::Unwritten(UnwrittenDependency {
            reg: Reg::News,
            ..
        }))
    ));
    // The listing names the register and where it is first read.
    let u = unwritten_reads(
        &program("mov(B, A);\nadd(A, A, C)"),
        &[AnyReg::Analogue(Reg::A)],
    );
    assert_eq!(u.len(), 1);
    assert_eq!(u[0].reg, AnyReg::Analogue(Reg::C));
    assert_eq!(u[0].pos.line, 2);
}

const REGS: [&str; 5] = ["A", "B", "C", "D", "E"];

/// A random statement over A..E (F is never written).
fn statement() -> impl Strategy<Value = String> {
    let r = || prop::sample::select(REGS.to_vec());
    let d = || prop::sample::select(vec!["north", "east", "south", "west"]);
    prop_oneof![
        (r(), r()).prop_map(|(a, b)| format!("mov({a}, {b})")),
        (r(), r(), r()).prop_map(|(a, b, c)| format!("add({a}, {b}, {c})")),
        (r(), r(), r()).prop_map(|(a, b, c)| format!("sub({a}, {b}, {c})")),
        (r(), r()).prop_map(|(a, b)| format!("divq({a}, {b})")),
        (r(), r(), d()).prop_map(|(a, b, x)| format!("movx({a}, {b}, {x})")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x29),
        ..ProptestConfig::default()
    })]

    /// Random programs over A..E end by adding the never-written F into the output:
    /// whatever kernel the rest computes, the proof fails on F.
    #[test]
    fn a_never_written_register_fails_the_proof(
        lines in prop::collection::vec(statement(), 0..12),
    ) {
        // B..E start as copies of the input: F is the only register nothing writes.
        let mut kept: Vec<String> = ["mov(B, A)", "mov(C, A)", "mov(D, A)", "mov(E, A)"]
            .map(String::from)
            .to_vec();
        kept.extend(lines.into_iter().filter(|l| parse_program(l, Device::default()).is_ok()));
        kept.push("mov(B, F)".into());
        kept.push("add(A, A, B)".into());
        let p = program(&kept.join(";\n"));
        // The kernel A holds with F at 0, from the rational executor itself.
        let pe = crate::verify::execute(&p, Wiring::new(Reg::A, 6)).expect("runs");
        let v = pe.value(Reg::A);
        let depth = 16u32;
        let mut weights = vec![vec![0i64; 41]; 41];
        for (&(r, c), k) in &v.terms {
            let n = k * crate::verify::coef_int(1 << depth);
            prop_assume!(n.is_integer() && r.abs() <= 20 && c.abs() <= 20);
            let n: i64 = num_traits::ToPrimitive::to_i64(&n.to_integer()).expect("small");
            weights[(r + 20) as usize][(c + 20) as usize] = n;
        }
        let t = Target { out: Reg::A, depth, weights };
        match prove(&p, Wiring::new(Reg::A, 6), &[t], None) {
            Err(ProofError::Unwritten(UnwrittenDependency { reg, .. })) => prop_assert_eq!(reg, Reg::F),
            other => prop_assert!(false, "{:?}\n{}", other, p),
        }
    }

    /// Random long walks (up to 2000 moves) prove their net shift, fast: a walk's value
    /// is one pixel, however far it went.
    #[test]
    fn long_walks_prove_their_shift(dirs in prop::collection::vec(0usize..4, 1..2000)) {
        let names = ["north", "east", "south", "west"];
        let steps = [(-1i32, 0i32), (0, 1), (1, 0), (0, -1)];
        let mut text = String::from("mov(B, A);\n");
        let (mut r, mut c) = (0i32, 0i32);
        for &d in &dirs {
            text += &format!("movx(C, B, {});\nmov(B, C);\n", names[d]);
            r += steps[d].0;
            c += steps[d].1;
        }
        text += "mov(A, B);\n";
        prop_assume!(r.abs().max(c.abs()) <= 60);
        let p = program(&text);
        let side = (2 * r.abs().max(c.abs()) + 1) as usize;
        let mid = side / 2;
        let mut weights = vec![vec![0i64; side]; side];
        weights[(mid as i32 + r) as usize][(mid as i32 + c) as usize] = 1;
        let t = Target { out: Reg::A, depth: 0, weights };
        prop_assert_eq!(prove(&p, Wiring::new(Reg::A, 6), &[t], None), Ok(()));
    }
}

#[test]
fn an_exploding_support_stops_symbolic_execution_with_a_message() {
    // 1,200 alternating `movx` and `add`: the binomial grows one column a pair.
    let text = "movx(B, A, east);\nadd(A, A, B);\n".repeat(600);
    let p = program(&text);
    match prove(&p, Wiring::new(Reg::A, 6), &[identity()], None) {
        Err(ProofError::Execution(e)) => {
            assert!(
                matches!(
                    e.cause,
                    SymbolicCause::TooWide {
                        rows: 1,
                        cols: 62,
                        ..
                    }
                ),
                "{e}"
            );
            assert!(e.to_string().contains("spans 1x62 offsets"), "{e}");
            assert!(e.to_string().contains("61x61"), "{e}");
            // Stops at the first statement past the bound: column 62 after 61 pairs.
            assert_eq!(e.pos.line, 122, "{e}");
        }
        other => panic!("{other:?}"),
    }
}

/// The identity as `check` measures it.
fn identity_check() -> CheckTarget {
    CheckTarget::new(Reg::A, &[vec![1.0]], &identity())
}

#[test]
fn a_result_lost_in_floats_is_named_precision_loss() {
    let img = crate::sim::default_image();
    // A + 2^40 A - 2^40 A and 160 halvings then 160 doublings: exact in rationals.
    let up = format!(
        "mov(B, A);\n{}add(C, A, B);\nsub(A, C, B);\n",
        "mov(C, B);\nadd(B, B, C);\n".repeat(40)
    );
    let down = format!(
        "mov(B, A);\n{}{}mov(A, B);\n",
        "divq(C, B);\nmov(B, C);\n".repeat(160),
        "mov(C, B);\nadd(B, B, C);\n".repeat(160)
    );
    for text in [up, down] {
        let p = program(&text);
        assert_eq!(
            prove(&p, Wiring::new(Reg::A, 6), &[identity()], None),
            Ok(())
        );
        let loss = check_precision(&p, Wiring::new(Reg::A, 6), &[identity_check()], &[&img])
            .expect("runs")
            .expect_err("precision loss");
        assert_eq!(loss.out, Reg::A);
        assert!(loss.rmse > 10.0, "{loss}");
        assert!(
            loss.to_string().starts_with("precision loss in A"),
            "{loss}"
        );
    }
    // 40 doublings and halvings of a value keep it: f32 scales exactly.
    let fine = format!(
        "mov(B, A);\n{}{}mov(A, B);\n",
        "mov(C, B);\nadd(B, B, C);\n".repeat(40),
        "divq(C, B);\nmov(B, C);\n".repeat(40)
    );
    let p = program(&fine);
    assert_eq!(
        check_precision(&p, Wiring::new(Reg::A, 6), &[identity_check()], &[&img]).expect("runs"),
        Ok(())
    );
}

fn spec(text: &str) -> cain::Spec {
    cain::parse_spec(text).expect("valid spec")
}

#[test]
fn an_approximation_that_misses_its_bound_is_refused_unless_accepted() {
    let row = format!("[{}]", vec!["1"; 31].join(", "));
    let rows = vec![row; 31].join(", ");
    let boxed = format!("kernels:\n  - out: A\n    scale: 1/961\n    weights: [{rows}]\n");
    let opts = CompileOptions::default().with_work(50).with_workers(1);
    match cain::compile(&spec(&boxed), &opts, &Stats::default()) {
        Err(CompileError::ApproxMiss { index, miss, .. }) => {
            assert_eq!(index, 1);
            assert!((miss.reached - 1.0).abs() < 1e-9, "{miss}");
            assert_eq!((miss.max_depth, miss.needed), (8, None));
        }
        other => panic!("{:?}", other.map(|c| c.program.to_string())),
    }
    // A Gaussian at depth 0 is all zeros: depth 4 would meet max_error 0.
    let gauss =
        "kernels:\n  - out: A\n    scale: 1/16\n    weights: [[1, 2, 1], [2, 4, 2], [1, 2, 1]]\n";
    let at0 = format!("{gauss}approximation: {{max_depth: 0, max_error: 0}}\n");
    match cain::approximate_spec(&spec(&at0)) {
        Err(CompileError::ApproxMiss { miss, .. }) => {
            assert_eq!(miss.needed, Some(4));
            assert!(
                miss.to_string()
                    .contains("raise approximation.max_depth to 4"),
                "{miss}"
            );
        }
        other => panic!("{other:?}"),
    }
    // Accepted explicitly, it compiles (to the zero kernel).
    let accepted = format!("{gauss}approximation: {{max_depth: 0, accept: true}}\n");
    let k = cain::approximate_spec(&spec(&accepted)).expect("accepted");
    assert_eq!(k[0].approx.weights, vec![vec![0i64; 3]; 3]);
}
