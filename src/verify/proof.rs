//! Proof that a program computes given kernels exactly: symbolic execution through the
//! simulator's own bus semantics, then a comparison of every output register with its
//! kernel, offset by offset, in exact arithmetic.

use super::convolution::centre_of;
use super::symbolic::{execute, Coef, LinComb, Offset};
use crate::isa::{Program, Reg};
use num_traits::Zero;
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
    pub fn expected(&self) -> LinComb {
        let h = self.weights.len();
        let w = self.weights.first().map_or(0, Vec::len);
        let (ci, cj) = centre_of(h, w);
        let den = 1i128 << self.depth.min(120);
        let mut terms = BTreeMap::new();
        for (i, row) in self.weights.iter().enumerate() {
            for (j, &q) in row.iter().enumerate() {
                if q != 0 {
                    let off = (i as i32 - ci as i32, j as i32 - cj as i32);
                    terms.insert(off, Coef::new(i128::from(q), den));
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
    pub out: Reg,
    /// Offsets that differ: (offset, expected, computed).
    pub offsets: Vec<(Offset, Coef, Coef)>,
    /// Constant part computed (should be 0).
    pub constant: Coef,
}

/// Why a proof failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProofError {
    /// The program could not be executed symbolically.
    Execution(String),
    /// Some outputs are wrong.
    Mismatch(Vec<Mismatch>),
    /// The program writes a register it may not use.
    Register(Reg),
}

impl fmt::Display for ProofError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProofError::Execution(e) => write!(f, "symbolic execution failed: {e}"),
            ProofError::Register(r) => {
                write!(f, "the program writes register {r}, which is not allowed")
            }
            ProofError::Mismatch(ms) => {
                let parts: Vec<String> = ms
                    .iter()
                    .map(|m| {
                        let offs: Vec<String> = m
                            .offsets
                            .iter()
                            .take(8)
                            .map(|((r, c), want, got)| {
                                format!("({r:+},{c:+}): want {want}, got {got}")
                            })
                            .collect();
                        let k = if m.constant.is_zero() {
                            String::new()
                        } else {
                            format!(" constant {}", m.constant)
                        };
                        format!("{}: {}{k}", m.out, offs.join("; "))
                    })
                    .collect();
                write!(f, "wrong kernel in {}", parts.join(" | "))
            }
        }
    }
}

impl std::error::Error for ProofError {}

/// Proves that `program`, with the image in `input` and `general` general registers,
/// leaves every target's kernel in its register, exactly. If `allowed` is given, the
/// program must not write any other register.
pub fn prove(
    program: &Program,
    input: Reg,
    general: usize,
    targets: &[Target],
    allowed: Option<&[Reg]>,
) -> Result<(), ProofError> {
    if let Some(allowed) = allowed {
        if let Some(r) = program
            .written_registers()
            .into_iter()
            .find(|r| !allowed.contains(r))
        {
            return Err(ProofError::Register(r));
        }
    }
    let pe = execute(program, input, general).map_err(|e| ProofError::Execution(e.to_string()))?;
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
                let w = *want.terms.get(&o).unwrap_or(&zero);
                let g = *got.terms.get(&o).unwrap_or(&zero);
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
        assert_eq!(prove(&p, Reg::A, 6, std::slice::from_ref(&t), None), Ok(()));
        let wrong = Target {
            weights: vec![vec![1, 2, 2]],
            ..t.clone()
        };
        match prove(&p, Reg::A, 6, &[wrong], None) {
            Err(ProofError::Mismatch(m)) => assert_eq!(m[0].offsets.len(), 1),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            prove(&p, Reg::A, 6, &[t], Some(&[Reg::A, Reg::B])),
            Err(ProofError::Register(Reg::C))
        );
    }
}
