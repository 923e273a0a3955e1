//! Emitting programs: allocated instructions become statements of the one instruction
//! table, so the generator can only write what the simulator executes.

use super::alloc::Instr;
use super::goal::Shift;
use super::step::Kind;
use crate::isa::{Device, IsaError, Operand, Pos, Program, Reg, Stmt};

fn r(x: Reg) -> Operand {
    Operand::Reg(x)
}

fn dirs(s: Shift) -> Vec<Operand> {
    let mut v = vec![Operand::Dir(s.d1)];
    if let Some(d2) = s.d2 {
        v.push(Operand::Dir(d2));
    }
    v
}

/// The statement for one allocated instruction.
pub fn statement(i: &Instr, device: Device) -> Result<Stmt, IsaError> {
    let d = |k: usize| i.dsts.get(k).copied().map(r);
    let s = |k: usize| i.srcs.get(k).copied().map(r);
    let missing = || IsaError::new(Pos::default(), "internal: operand missing");
    let need = |o: Option<Operand>| o.ok_or_else(missing);
    let (name, args): (&str, Vec<Operand>) = match i.kind {
        Kind::Res => ("res", vec![need(d(0))?]),
        Kind::Mov => ("mov", vec![need(d(0))?, need(s(0))?]),
        Kind::Shift(sh) => {
            let mut a = vec![need(d(0))?, need(s(0))?];
            a.extend(dirs(sh));
            (if sh.is_single() { "movx" } else { "mov2x" }, a)
        }
        Kind::Add2 => ("add", vec![need(d(0))?, need(s(0))?, need(s(1))?]),
        Kind::Add3 => (
            "add",
            vec![need(d(0))?, need(s(0))?, need(s(1))?, need(s(2))?],
        ),
        Kind::AddShift(sh) => {
            let mut a = vec![need(d(0))?, need(s(0))?, need(s(1))?];
            a.extend(dirs(sh));
            (if sh.is_single() { "addx" } else { "add2x" }, a)
        }
        Kind::Sub => ("sub", vec![need(d(0))?, need(s(0))?, need(s(1))?]),
        Kind::SubShift(sh) => {
            let mut a = vec![need(d(0))?, need(s(0))?];
            a.extend(dirs(sh));
            a.push(need(s(1))?);
            (if sh.is_single() { "subx" } else { "sub2x" }, a)
        }
        Kind::Neg => ("neg", vec![need(d(0))?, need(s(0))?]),
        Kind::Divq => ("divq", vec![need(d(0))?, need(s(0))?]),
        // div(y0, y1, y2): y0 := y2/2, y1 := -y2/2, y2 kept.
        Kind::Div => ("div", vec![need(d(0))?, need(d(1))?, need(s(0))?]),
    };
    Stmt::build(name, args, device, Pos::default())
}

/// The program for allocated instructions.
pub fn program(instrs: &[Instr], device: Device) -> Result<Program, IsaError> {
    let stmts = instrs
        .iter()
        .map(|i| statement(i, device))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Program { stmts })
}
