//! Emitting programs: allocated instructions become statements of the one instruction
//! table, so the generator can only write what the simulator executes. The operands are
//! placed by the entry's slots (results, sources, directions; see
//! [`crate::isa::table::Codegen`]), never by a layout written down here.

use crate::cain::assemble::alloc::Instr;
use crate::isa::{Device, IsaCause, IsaError, Operand, Pos, Program, Slot, Stmt};

/// The statement for one allocated instruction.
pub(crate) fn statement(i: &Instr, device: Device) -> Result<Stmt, IsaError> {
    let def = i.kind.def();
    let shift = i.kind.shift();
    let dirs: Vec<_> = shift
        .iter()
        .flat_map(|s| std::iter::once(s.d1).chain(s.d2))
        .collect();
    let (mut dsts, mut srcs, mut dirs) = (i.dsts.iter(), i.srcs.iter(), dirs.into_iter());
    let args = def
        .slots
        .iter()
        .map(|slot| match slot {
            Slot::Dst => dsts.next().copied().map(Operand::Reg),
            Slot::Src | Slot::Acc => srcs.next().copied().map(Operand::Reg),
            Slot::Dir => dirs.next().map(Operand::Dir),
            _ => None,
        })
        .collect::<Option<Vec<Operand>>>()
        .ok_or_else(|| IsaError::new(Pos::default(), IsaCause::OperandMissing))?;
    Stmt::of(def, args, device, Pos::default())
}

/// The program for allocated instructions.
pub(crate) fn program(instrs: &[Instr], device: Device) -> Result<Program, IsaError> {
    let stmts = instrs
        .iter()
        .map(|i| statement(i, device))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Program { stmts })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cain::moves::step::Kind;
    use crate::isa::Reg;

    #[test]
    fn missing_operands_are_an_error_not_a_panic() {
        let short = Instr {
            kind: Kind::Div,
            dsts: vec![Reg::A],
            srcs: vec![Reg::C],
        };
        assert!(statement(&short, Device::default()).is_err());
        let whole = Instr {
            dsts: vec![Reg::A, Reg::B],
            ..short
        };
        let s = statement(&whole, Device::default()).expect("all operands");
        assert_eq!(s.to_string(), "div(A, B, C)");
    }
}
