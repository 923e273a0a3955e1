//! Symbolic execution and proof over several input planes: a program whose registers
//! start with several inputs (the channels of a layer after the first, each in its own
//! register) computes, in each output register, one kernel per input plane. Cain's
//! atoms carry the channel as a coordinate; here a value carries one exact linear
//! combination per plane.
//!
//! Values the program makes from the photodiode or the DAC (`PIX`, `IN`) are constants
//! or the captured scene, and are held on plane 0, the first input: a multi-plane proof
//! is meant for programs that read their inputs from registers.

use super::proof::{unwritten_dependency, Target, UnwrittenDependency};
use super::symbolic::{run_program, LinComb, Span, Symbolic, SymbolicError, SymbolicPe};
use crate::isa::{Program, Reg};
use crate::sim::machine::Linear;

/// One exact linear combination per input plane (planes beyond the list are zero).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Planes(pub Vec<LinComb>);

impl Planes {
    /// Input plane `z` at this PE with coefficient 1.
    pub(crate) fn unit(z: usize) -> Planes {
        let mut planes = vec![LinComb::default(); z + 1];
        planes[z] = LinComb::input();
        Planes(planes)
    }

    /// Plane `z` (zero beyond the list).
    pub(crate) fn plane(&self, z: usize) -> LinComb {
        self.0.get(z).cloned().unwrap_or_default()
    }
}

impl Linear for Planes {
    fn zero() -> Self {
        Planes(Vec::new())
    }

    fn add_assign(&mut self, other: &Self) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), LinComb::default());
        }
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            a.add_assign(b);
        }
    }

    fn negate_split(&mut self, receivers: usize) {
        self.0.iter_mut().for_each(|p| p.negate_split(receivers));
    }
}

impl Symbolic for Planes {
    fn of_lin(lin: &LinComb) -> Self {
        Planes(vec![lin.clone()])
    }

    fn shifted(&self, dr: i32, dc: i32) -> Self {
        Planes(self.0.iter().map(|p| p.shifted(dr, dc)).collect())
    }

    fn span(&self) -> Option<Span> {
        Some(Span::of(
            self.0.iter().flat_map(|p| p.terms.keys().copied()),
        ))
    }
}

/// Runs `program` symbolically with input plane `z` in `inputs[z]` and every other
/// register zero, on a device of `general` general registers.
pub(crate) fn execute_planes(
    program: &Program,
    inputs: &[Reg],
    general: usize,
) -> Result<SymbolicPe<Planes>, SymbolicError> {
    let mut pe = SymbolicPe::<Planes>::new(general);
    for (z, &r) in inputs.iter().enumerate() {
        pe.set(r, Planes::unit(z));
    }
    run_program(&mut pe, program)?;
    Ok(pe)
}

/// A multi-plane kernel a program must compute: one [`Target`] per input plane, all
/// into the same register (each target's `out` is ignored but for messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PlanesTarget {
    /// Register that must hold the result at the end.
    pub(crate) out: Reg,
    /// Per input plane, its kernel.
    pub(crate) planes: Vec<Target>,
}

/// Why a multi-plane proof failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanesProofError {
    /// The program could not be executed symbolically.
    #[error(transparent)]
    Execute(#[from] SymbolicError),
    /// An output holds another kernel on some plane, or a constant.
    #[error("{out} does not hold its kernel on input plane {plane} ({input})")]
    Mismatch {
        /// The output register.
        out: Reg,
        /// The first plane that differs.
        plane: usize,
        /// That plane's input register.
        input: Reg,
    },
    /// As many kernel planes as inputs are needed.
    #[error("{out} has kernels for {planes} input planes, the program {inputs} inputs")]
    Planes {
        /// The output register.
        out: Reg,
        /// Its planes.
        planes: usize,
        /// The inputs.
        inputs: usize,
    },
    /// An output depends on a register nothing wrote (as the single-input proof says it).
    #[error(transparent)]
    Unwritten(#[from] UnwrittenDependency),
}

/// Proves that `program`, with input plane `z` in `inputs[z]`, leaves in every target's
/// register exactly the sum over planes of its kernels, with no constant, on a device of
/// `general` general registers, and that no output depends on a register read before
/// anything wrote it.
pub(crate) fn prove_planes(
    program: &Program,
    inputs: &[Reg],
    general: usize,
    targets: &[PlanesTarget],
) -> Result<(), PlanesProofError> {
    if let Some(t) = targets.iter().find(|t| t.planes.len() != inputs.len()) {
        return Err(PlanesProofError::Planes {
            out: t.out,
            planes: t.planes.len(),
            inputs: inputs.len(),
        });
    }
    let pe = execute_planes(program, inputs, general)?;
    for t in targets {
        let got = pe.value(t.out);
        for (z, (target, &input)) in t.planes.iter().zip(inputs).enumerate() {
            // `expected` has no constant: a constant left in the output differs too.
            if got.plane(z) != target.expected() {
                return Err(PlanesProofError::Mismatch {
                    out: t.out,
                    plane: z,
                    input,
                });
            }
        }
    }
    check_unwritten(program, inputs, general, targets)
}

/// No target may depend on a register read before anything wrote it (see
/// [`unwritten_dependency`]).
fn check_unwritten(
    program: &Program,
    inputs: &[Reg],
    general: usize,
    targets: &[PlanesTarget],
) -> Result<(), PlanesProofError> {
    let outs: Vec<Reg> = targets.iter().map(|t| t.out).collect();
    match unwritten_dependency(program, inputs, general, &outs)? {
        Some(u) => Err(u.into()),
        None => Ok(()),
    }
}
