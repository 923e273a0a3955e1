//! The one proof of a kernel set, whatever its inputs: the single-input proof for a
//! program reading one image, the proof over every input plane for one reading
//! several. The generator's judge, `scamp check`, banks and network stages all prove
//! through `prove_kernels`, so the choice between the two is made here alone.

use super::planes::{prove_planes, PlanesProofError, PlanesTarget};
use super::proof::{self, ProofError, Target};
use crate::isa::{Program, Reg, Wiring};

/// Why a program does not compute its kernels.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KernelsProofError {
    /// The proof on the one input failed.
    #[error(transparent)]
    Input(ProofError),
    /// The proof over every input plane failed.
    #[error(transparent)]
    Planes(PlanesProofError),
    /// A program over several inputs writes a register it may not use.
    #[error("it writes {0}, which is not among the allowed registers")]
    WritesOutside(Reg),
}

impl PlanesTarget {
    /// The target of a kernel of one input.
    #[cfg(test)]
    pub fn single(t: Target) -> PlanesTarget {
        PlanesTarget {
            out: t.out,
            planes: vec![t],
        }
    }
}

/// The single-input targets of `kernels` (each one's only plane), or the complaint
/// about the first kernel with another number of planes.
fn single_targets(kernels: &[PlanesTarget]) -> Result<Vec<Target>, PlanesProofError> {
    kernels
        .iter()
        .map(|t| match t.planes.as_slice() {
            [one] => Ok(Target {
                out: t.out,
                ..one.clone()
            }),
            planes => Err(PlanesProofError::Planes {
                out: t.out,
                planes: planes.len(),
                inputs: 1,
            }),
        })
        .collect()
}

/// Proves that `program`, with the inputs of `wiring`, leaves every kernel of
/// `kernels` (one plane per input) in its register exactly; if `allowed` is given, the
/// program must not write any other register.
///
/// One input: [`proof::prove`] (machine integers, then rationals where needed, and
/// no output depending on a register nothing wrote). Several: [`prove_planes`], every
/// plane of every output.
pub(crate) fn prove_kernels(
    program: &Program,
    wiring: Wiring,
    kernels: &[PlanesTarget],
    allowed: Option<&[Reg]>,
) -> Result<(), KernelsProofError> {
    if !wiring.has_planes() {
        let targets = single_targets(kernels).map_err(KernelsProofError::Planes)?;
        return proof::prove(program, wiring, &targets, allowed).map_err(KernelsProofError::Input);
    }
    prove_planes(program, &wiring.inputs(), wiring.general, kernels)
        .map_err(KernelsProofError::Planes)?;
    let outside = allowed.and_then(|a| {
        program
            .written_registers()
            .into_iter()
            .find(|r| !a.contains(r))
    });
    match outside {
        Some(r) => Err(KernelsProofError::WritesOutside(r)),
        None => Ok(()),
    }
}

/// Where `program` departs from `kernels`, one line each (empty when it computes
/// them): on one input, offset by offset ([`super::report::explain_mismatch`]); over
/// several, the first plane that differs.
pub(crate) fn mismatch_lines(
    program: &Program,
    wiring: Wiring,
    kernels: &[PlanesTarget],
) -> Vec<String> {
    match prove_kernels(program, wiring, kernels, None) {
        Ok(()) => Vec::new(),
        Err(KernelsProofError::Input(_)) => match single_targets(kernels) {
            Ok(ts) => super::report::explain_mismatch(program, wiring, &ts),
            Err(e) => vec![e.to_string()],
        },
        Err(e) => vec![e.to_string()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{parse_program, Device};
    use crate::verify::UnwrittenDependency;

    fn halve(out: Reg) -> Target {
        Target {
            out,
            depth: 1,
            weights: vec![vec![1]],
        }
    }

    #[test]
    fn one_input_and_several_take_their_own_proof() {
        let p = parse_program("divq(B, A); add(C, B, D);", Device::default()).unwrap();
        // One input in A: C holds A/2 (D is never written, and read as 0 by the proof,
        // so the single-input proof refuses it by name).
        let one = Wiring::new(Reg::A, 6);
        let e = prove_kernels(&p, one, &[PlanesTarget::single(halve(Reg::C))], None);
        assert!(
            matches!(
                e,
                Err(KernelsProofError::Input(ProofError::Unwritten(
                    UnwrittenDependency { reg: Reg::D, .. }
                )))
            ),
            "{e:?}"
        );
        // Inputs A and D: C holds A/2 + D on two planes.
        let two = Wiring::planes(&[Reg::A, Reg::D], 6).unwrap();
        let both = PlanesTarget {
            out: Reg::C,
            planes: vec![
                halve(Reg::C),
                Target {
                    out: Reg::C,
                    depth: 0,
                    weights: vec![vec![1]],
                },
            ],
        };
        assert_eq!(
            prove_kernels(&p, two, std::slice::from_ref(&both), None),
            Ok(())
        );
        assert_eq!(
            prove_kernels(
                &p,
                two,
                std::slice::from_ref(&both),
                Some(&[Reg::A, Reg::C, Reg::D])
            ),
            Err(KernelsProofError::WritesOutside(Reg::B))
        );
        // A one-plane target against two inputs names the count.
        let e = prove_kernels(&p, two, &[PlanesTarget::single(halve(Reg::C))], None);
        assert!(matches!(
            e,
            Err(KernelsProofError::Planes(PlanesProofError::Planes {
                planes: 1,
                inputs: 2,
                ..
            }))
        ));
        assert_eq!(mismatch_lines(&p, two, &[both]), Vec::<String>::new());
    }
}
