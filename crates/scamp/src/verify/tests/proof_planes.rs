//! Symbolic execution and proof over several input planes: a program reading three
//! input registers is proven against one kernel per plane, a wrong one fails on the
//! plane it gets wrong, and one input gives exactly the single-input executor's values.

use crate::isa::{parse_program, Device, Reg, Wiring};
use crate::verify::planes::execute_planes;
use crate::verify::{
    execute, prove_planes, PlanesProofError, PlanesTarget, Target, UnwrittenDependency,
};

const INPUTS: [Reg; 3] = [Reg::A, Reg::B, Reg::C];

/// `A := A + B - (C from the east) / 2`.
const THREE: &str = "add(D, A, B)\nmovx(E, C, east)\ndivq(F, E)\nsub(A, D, F)\n";

fn program(text: &str) -> crate::isa::Program {
    parse_program(text, Device { general: 6 }).expect("a program")
}

fn plane(depth: u32, weights: Vec<Vec<i64>>) -> Target {
    Target {
        out: Reg::A,
        depth,
        weights,
    }
}

fn target(east: Vec<Vec<i64>>) -> PlanesTarget {
    PlanesTarget {
        out: Reg::A,
        planes: vec![
            plane(0, vec![vec![1]]),
            plane(0, vec![vec![1]]),
            plane(1, east),
        ],
    }
}

#[test]
fn a_three_plane_program_is_proven_plane_by_plane() {
    let p = program(THREE);
    assert_eq!(
        prove_planes(&p, &INPUTS, 6, &[target(vec![vec![0, 0, -1]])]),
        Ok(())
    );
    // The same kernel written at a finer depth is the same kernel.
    let mut finer = target(vec![vec![0, 0, -2]]);
    finer.planes[2].depth = 2;
    assert_eq!(prove_planes(&p, &INPUTS, 6, &[finer]), Ok(()));
}

#[test]
fn a_wrong_program_fails_on_the_plane_it_gets_wrong() {
    let west = target(vec![vec![-1, 0, 0]]);
    let e = prove_planes(&program(THREE), &INPUTS, 6, &[west]).unwrap_err();
    assert_eq!(
        e,
        PlanesProofError::Mismatch {
            out: Reg::A,
            plane: 2,
            input: Reg::C
        }
    );
    assert_eq!(
        e.to_string(),
        "A does not hold its kernel on input plane 2 (C)"
    );
    // C read instead of A: plane 0 is missing.
    let twice = program(&THREE.replace("add(D, A, B)", "add(D, B, C)"));
    let e = prove_planes(&twice, &INPUTS, 6, &[target(vec![vec![0, 0, -1]])]).unwrap_err();
    assert!(
        matches!(e, PlanesProofError::Mismatch { plane: 0, .. }),
        "{e}"
    );
    // A constant from the DAC is not a kernel.
    let offset = program(&format!("{THREE}in(F, 3)\nadd(A, A, F)\n"));
    let e = prove_planes(&offset, &INPUTS, 6, &[target(vec![vec![0, 0, -1]])]).unwrap_err();
    assert!(
        matches!(e, PlanesProofError::Mismatch { plane: 0, .. }),
        "{e}"
    );
}

#[test]
fn kernels_need_one_plane_per_input() {
    let mut two = target(vec![vec![0, 0, -1]]);
    two.planes.pop();
    let e = prove_planes(&program(THREE), &INPUTS, 6, &[two]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "A has kernels for 2 input planes, the program 3 inputs"
    );
}

#[test]
fn one_input_gives_the_single_input_values() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../programs/gauss3x3.scamp"
    ))
    .expect("bundled program");
    let p = program(&text);
    let one = execute_planes(&p, &[Reg::A], 6).expect("runs");
    let single = execute(&p, Wiring::new(Reg::A, 6)).expect("runs");
    for r in 0..6 {
        assert_eq!(
            one.value(Reg::Gen(r)).plane(0),
            single.value(Reg::Gen(r)),
            "register {r}"
        );
    }
}

#[test]
fn an_output_that_reads_a_register_nothing_wrote_fails() {
    // E is added in before `movx` first writes it: the simulator starts E at 0, so every
    // plane matches, but on the chip A would carry whatever E held.
    let reads_e = "add(F, A, B)\nadd(D, F, E)\nmovx(E, C, east)\ndivq(F, E)\nsub(A, D, F)\n";
    let e = prove_planes(
        &program(reads_e),
        &INPUTS,
        6,
        &[target(vec![vec![0, 0, -1]])],
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            PlanesProofError::Unwritten(UnwrittenDependency {
                out: Reg::A,
                reg: Reg::E,
                ..
            })
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().starts_with("A depends on E, read at 2:"),
        "{e}"
    );
}
