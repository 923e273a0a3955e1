//! The bus semantics, written once for every value domain: a [`Machine`] says how its
//! registers are read, summed and written; [`step`] says what each machine-level
//! instruction does with them. The numeric array and the symbolic verifier both run
//! programs through this one dispatcher.

use crate::isa::{BusOp, DigitalOp, Reg};

/// A value a bus transfer can carry: summed, negated and split among receivers.
pub(crate) trait Linear: Clone {
    /// The additive identity.
    fn zero() -> Self;
    /// `self += other`.
    fn add_assign(&mut self, other: &Self);
    /// `self := -self / receivers`: what the bus hands each receiver.
    fn negate_split(&mut self, receivers: usize);
}

impl Linear for f32 {
    /// `-0.0`, the float sum's true identity (`-0.0 + x` is `x` for every `x`, while
    /// `+0.0 + -0.0` is `+0.0`): a sum started from it costs no add, and a source that
    /// is not there (a view beyond the edge) can stand as `-0.0` without changing a bit.
    #[inline(always)]
    fn zero() -> Self {
        -0.0
    }
    #[inline(always)]
    fn add_assign(&mut self, other: &Self) {
        *self += *other;
    }
    #[inline(always)]
    fn negate_split(&mut self, receivers: usize) {
        *self = -*self / receivers as f32;
    }
}

/// The value every receiver of a transfer gets: `-(sum of sources) / receivers`.
#[inline(always)]
pub(crate) fn bus_value<V: Linear>(sources: &[V], receivers: usize) -> V {
    let mut acc = V::zero();
    for s in sources {
        acc.add_assign(s);
    }
    acc.negate_split(receivers);
    acc
}

/// Why a machine cannot execute an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MachineError {
    /// An instruction reads a register the machine does not have.
    #[error("no register {0}")]
    NoRegister(Reg),
    /// A transfer writes a register that cannot receive one.
    #[error("{0} cannot receive a transfer")]
    CannotReceive(Reg),
    /// The symbolic verifier met a transfer under a FLAG that may be partial.
    #[error(
        "a transfer runs while FLAG may be partial (after `where`); the symbolic verifier \
         only proves FLAG-free linear programs"
    )]
    PartialFlag,
    /// The error predictor met an instruction that sets FLAG.
    #[error("the error predictor covers FLAG-free linear programs only")]
    FlagUnpredicted,
}

/// A register file that can execute machine-level instructions.
pub(crate) trait Machine {
    /// `bus`/`bus2`/`bus3`: every receiver gets [`bus_value`] of the sources, read
    /// before anything is written, in PEs whose FLAG is set.
    fn transfer(&mut self, dsts: &[Reg], srcs: &[Reg]) -> Result<(), MachineError>;
    /// FLAG := (sum of sources) > 0.
    fn flag_where(&mut self, srcs: &[Reg]) -> Result<(), MachineError>;
    /// FLAG := 1.
    fn flag_all(&mut self);
    /// Photodiode reset: `PIX` reads `level` until the next capture starts.
    fn reset_pix(&mut self, level: f32);
    /// The DAC now drives `IN` with `value`.
    fn set_dac(&mut self, value: i32);
    /// The DAC now drives `IN` with `value`, without the vendor's correction; a machine
    /// without an error model treats it as [`Machine::set_dac`].
    fn set_dac_uncorrected(&mut self, value: i32) {
        self.set_dac(value);
    }
    /// A native digital instruction.
    fn digital(&mut self, op: &DigitalOp) -> Result<(), MachineError>;
    /// A cycle passes with no instruction reaching the array (`nop`): nothing changes,
    /// but a machine that keeps time (decay, noise streams) moves on.
    fn idle(&mut self) {}
}

/// Executes one machine-level instruction on `m`.
pub(crate) fn step<M: Machine>(m: &mut M, op: &BusOp) -> Result<(), MachineError> {
    match op {
        BusOp::Transfer { dsts, srcs } => m.transfer(dsts, srcs),
        BusOp::Where(srcs) => m.flag_where(srcs),
        BusOp::All => {
            m.flag_all();
            Ok(())
        }
        BusOp::Rpix { level } => {
            m.reset_pix(*level);
            Ok(())
        }
        BusOp::Nop => {
            m.idle();
            Ok(())
        }
        BusOp::Dac(v) => {
            m.set_dac(*v);
            Ok(())
        }
        BusOp::DacUncorrected(v) => {
            m.set_dac_uncorrected(*v);
            Ok(())
        }
        BusOp::Digital(d) => m.digital(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_value_negates_and_splits() {
        assert_eq!(bus_value(&[3.0f32, 5.0], 1), -8.0);
        assert_eq!(bus_value(&[3.0f32], 2), -1.5);
        assert_eq!(bus_value::<f32>(&[], 1), 0.0);
        assert_eq!(bus_value(&[9.0f32], 3), -3.0);
    }
}
