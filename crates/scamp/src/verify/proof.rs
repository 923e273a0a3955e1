//! Proof that a program computes given kernels exactly: symbolic execution through the
//! simulator's own bus semantics, then a comparison of every output register with its
//! kernel, offset by offset, in exact arithmetic.

use super::convolution::centre_of;
use super::dyadic::Dyadic;
use super::symbolic::{execute, execute_as, execute_from, Coef, LinComb, Offset, SymbolicError};
use crate::isa::{unwritten_reads, AnyReg, Pos, Program, Reg, Wiring};
use num_bigint::BigInt;
use num_traits::{One, Zero};
use std::collections::BTreeMap;
use std::fmt;

/// A kernel a program must compute: `out(r, c) = sum weights[i][j] / 2^depth *
/// in(r + i - ci, c + j - cj)` with `ci = (rows - 1) div 2`, `cj = (cols - 1) div 2`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// Register that must hold the result at the end.
    pub out: Reg,
    /// Exponent of the common denominator.
    pub depth: u32,
    /// Integer weights, rows north to south, columns west to east.
    pub weights: Vec<Vec<i64>>,
}

impl Target {
    /// The exact linear combination the target stands for.
    pub(crate) fn expected(&self) -> LinComb {
        let h = self.weights.len();
        let w = self.weights.first().map_or(0, Vec::len);
        let (ci, cj) = centre_of(h, w);
        let den = BigInt::one() << self.depth;
        let mut terms = BTreeMap::new();
        for (i, row) in self.weights.iter().enumerate() {
            for (j, &q) in row.iter().enumerate() {
                if q != 0 {
                    let off = (i as i32 - ci as i32, j as i32 - cj as i32);
                    terms.insert(off, Coef::new(BigInt::from(q), den.clone()));
                }
            }
        }
        LinComb {
            terms,
            constant: Coef::zero(),
        }
    }
}

/// One register that does not hold its kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The output register.
    pub(crate) out: Reg,
    /// Offsets that differ: (offset, expected, computed).
    pub(crate) offsets: Vec<(Offset, Coef, Coef)>,
    /// Constant part computed (should be 0).
    pub(crate) constant: Coef,
}

/// Why a proof failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    /// The program could not be executed symbolically.
    #[error("symbolic execution failed: {0}")]
    Execution(#[from] SymbolicError),
    /// Some outputs are wrong.
    #[error("wrong kernel in {}", Mismatches(.0))]
    Mismatch(Vec<Mismatch>),
    /// The program writes a register it may not use.
    #[error("the program writes register {0}, which is not allowed")]
    Register(Reg),
    /// An output depends on a register nothing wrote.
    #[error(transparent)]
    Unwritten(#[from] UnwrittenDependency),
}

/// An output that depends on a register nothing wrote (0 in the simulator, whatever
/// was there on the chip): how the single-input and the multi-plane proofs refuse it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{out} depends on {reg}, read at {pos} before anything writes it (the simulator \
     starts it at 0; on the chip it holds whatever was there)"
)]
pub struct UnwrittenDependency {
    /// The output register whose kernel depends on it.
    pub(crate) out: Reg,
    /// The register read before any write.
    pub(crate) reg: Reg,
    /// Where it is first read.
    pub(crate) pos: Pos,
}

/// The mismatches of a failed proof, shown briefly: at most eight offsets per register.
struct Mismatches<'a>(&'a [Mismatch]);

impl fmt::Display for Mismatches<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, m) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{}: ", m.out)?;
            for (k, ((r, c), want, got)) in m.offsets.iter().take(8).enumerate() {
                if k > 0 {
                    f.write_str("; ")?;
                }
                write!(f, "({r:+},{c:+}): want {want}, got {got}")?;
            }
            if !m.constant.is_zero() {
                write!(f, " constant {}", m.constant)?;
            }
        }
        Ok(())
    }
}

/// Proves that `program`, with the image in `input` and `general` general registers,
/// leaves every target's kernel in its register, exactly. If `allowed` is given, the
/// program must not write any other register.
///
/// Runs on machine integers first (`Dyadic`: thousands of instructions in
/// milliseconds); only where that cannot show the kernels exactly does the rational
/// executor (`prove_rational`) run, and its answer is the answer.
pub fn prove(
    program: &Program,
    wiring: Wiring,
    targets: &[Target],
    allowed: Option<&[Reg]>,
) -> Result<(), ProofError> {
    check_registers(program, allowed)?;
    if !proven_fast(program, wiring, targets) {
        kernels_rational(program, wiring, targets)?;
    }
    check_unwritten(program, wiring, targets)
}

/// [`prove`] on arbitrary-precision rationals alone: the reference the fast path is
/// held to, and what decides (and explains) every proof the fast path does not pass.
pub(crate) fn prove_rational(
    program: &Program,
    wiring: Wiring,
    targets: &[Target],
    allowed: Option<&[Reg]>,
) -> Result<(), ProofError> {
    check_registers(program, allowed)?;
    kernels_rational(program, wiring, targets)?;
    check_unwritten(program, wiring, targets)
}

/// Every register read before a write is an unknown: run once per such register with
/// the image there and nothing in `input`, every target must be free of it (its
/// coefficients cancel).
fn check_unwritten(
    program: &Program,
    wiring: Wiring,
    targets: &[Target],
) -> Result<(), ProofError> {
    let outs: Vec<Reg> = targets.iter().map(|t| t.out).collect();
    match unwritten_dependency(program, &[wiring.input], wiring.general, &outs)? {
        Some(u) => Err(u.into()),
        None => Ok(()),
    }
}

/// The first of `outs` that depends on a register `program` reads before anything (or
/// the preloaded `inputs`) wrote it, with that register and where it is first read:
/// each such register is run alone with the image in it, and an output free of it has
/// no term of it (its coefficients cancel). Shared by the single-input and the
/// multi-plane proofs.
pub(crate) fn unwritten_dependency(
    program: &Program,
    inputs: &[Reg],
    general: usize,
    outs: &[Reg],
) -> Result<Option<UnwrittenDependency>, SymbolicError> {
    let preset: Vec<AnyReg> = inputs.iter().map(|&r| AnyReg::Analogue(r)).collect();
    for u in unwritten_reads(program, &preset) {
        let AnyReg::Analogue(reg) = u.reg else {
            // Digital registers reach analogue values only through FLAG, which the
            // symbolic executor refuses to follow when it may be partial.
            continue;
        };
        let pe = execute_from(program, &[(reg, LinComb::input())], general)?;
        if let Some(&out) = outs.iter().find(|&&o| !pe.value(o).terms.is_empty()) {
            return Ok(Some(UnwrittenDependency {
                out,
                reg,
                pos: u.pos,
            }));
        }
    }
    Ok(None)
}

/// Compares every target with what the rational executor computes, unknowns at 0.
fn kernels_rational(
    program: &Program,
    wiring: Wiring,
    targets: &[Target],
) -> Result<(), ProofError> {
    let pe = execute(program, wiring)?;
    let mut bad = Vec::new();
    for t in targets {
        let want = t.expected();
        let got = pe.value(t.out);
        if got == want {
            continue;
        }
        let mut offs: Vec<Offset> = want.terms.keys().chain(got.terms.keys()).copied().collect();
        offs.sort_unstable();
        offs.dedup();
        let zero = Coef::zero();
        let offsets = offs
            .into_iter()
            .filter_map(|o| {
                let w = want.terms.get(&o).unwrap_or(&zero).clone();
                let g = got.terms.get(&o).unwrap_or(&zero).clone();
                (w != g).then_some((o, w, g))
            })
            .collect();
        bad.push(Mismatch {
            out: t.out,
            offsets,
            constant: got.constant,
        });
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(ProofError::Mismatch(bad))
    }
}

/// Refuses a program that writes a register outside `allowed`.
fn check_registers(program: &Program, allowed: Option<&[Reg]>) -> Result<(), ProofError> {
    if let Some(allowed) = allowed {
        if let Some(r) = program
            .written_registers()
            .into_iter()
            .find(|r| !allowed.contains(r))
        {
            return Err(ProofError::Register(r));
        }
    }
    Ok(())
}

/// Whether the machine-integer executor (`Dyadic`) shows every target computed
/// exactly. `false` says nothing: the rational executor then decides, and explains a
/// failure. Only equal exact values pass (an inexact one equals nothing), so a lost
/// step can cost time, never a wrong proof.
fn proven_fast(program: &Program, wiring: Wiring, targets: &[Target]) -> bool {
    let Ok(pe) = execute_as::<Dyadic>(program, wiring, |_, _, _| ()) else {
        return false;
    };
    targets.iter().all(|t| {
        let h = t.weights.len();
        let w = t.weights.first().map_or(0, Vec::len);
        pe.value(t.out) == Dyadic::of_weights(&t.weights, centre_of(h, w), t.depth)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{parse_program, Device};

    #[test]
    fn proves_and_refutes() {
        let p = parse_program(
            "divq(B, A); divq(C, B); movx(D, C, east); movx(E, C, west); add(A, B, D, E)",
            Device::default(),
        )
        .unwrap();
        let t = Target {
            out: Reg::A,
            depth: 2,
            weights: vec![vec![1, 2, 1]],
        };
        assert_eq!(
            prove(&p, Wiring::new(Reg::A, 6), std::slice::from_ref(&t), None),
            Ok(())
        );
        let wrong = Target {
            weights: vec![vec![1, 2, 2]],
            ..t.clone()
        };
        match prove(&p, Wiring::new(Reg::A, 6), &[wrong], None) {
            Err(ProofError::Mismatch(m)) => assert_eq!(m[0].offsets.len(), 1),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            prove(&p, Wiring::new(Reg::A, 6), &[t], Some(&[Reg::A, Reg::B])),
            Err(ProofError::Register(Reg::C))
        );
    }
}
