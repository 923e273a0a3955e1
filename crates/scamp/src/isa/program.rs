//! Statements and programs: table entries with checked operands, their expansion, and
//! the rules every machine-level instruction must obey.

use super::op::BusOp;
use super::reg::{DReg, Reg};
use super::table::{self, Def, Operand};
use std::fmt;

/// A source position, 1-based.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    /// Line number.
    pub line: u32,
    /// Column number (in characters).
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// Why a program or statement was rejected, with where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: {msg}")]
pub struct IsaError {
    /// Where the problem is.
    pub pos: Pos,
    /// What is wrong.
    pub msg: String,
    /// The operand the error is about (0-based), when it is about one: a parser that
    /// knows where each operand was written can point at it.
    pub operand: Option<usize>,
}

impl IsaError {
    /// An error at `pos`.
    pub fn new(pos: Pos, msg: impl Into<String>) -> Self {
        IsaError {
            pos,
            msg: msg.into(),
            operand: None,
        }
    }

    /// The same error, about operand `index` (0-based).
    pub(crate) fn at_operand(mut self, index: usize) -> Self {
        self.operand = Some(index);
        self
    }
}

/// What the target device offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Device {
    /// Number of general analogue registers (`A`, `B`, ...). SCAMP-5 has 6.
    pub general: usize,
}

impl Default for Device {
    fn default() -> Self {
        Device { general: 6 }
    }
}

impl Device {
    /// Names of the general registers, e.g. `A..F`.
    pub fn general_range(&self) -> String {
        format!("A..{}", Reg::general_name(self.general.saturating_sub(1)))
    }
}

/// Most further input planes a [`Wiring`] holds: every general register of the
/// largest device (26, `A..Z`) but the one the program computes in.
pub(crate) const MAX_OTHER_INPUTS: usize = 24;

/// How a program meets the device: the register the image is exposed into (and the
/// registers of further input planes, for a kernel set over several channels) and the
/// number of general registers. The proof, the range check, the predictor and the
/// measurements all read a program through it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wiring {
    /// The register the input image is exposed into (input plane 0).
    pub input: Reg,
    /// Number of general analogue registers.
    pub general: usize,
    /// Registers of input planes 1, 2, ... (the first `others_len`); kept inline so a
    /// wiring stays `Copy`.
    others: [Reg; MAX_OTHER_INPUTS],
    others_len: u8,
}

impl Wiring {
    /// The input in `input` on a device with `general` general registers.
    pub fn new(input: Reg, general: usize) -> Wiring {
        Wiring {
            input,
            general,
            others: [input; MAX_OTHER_INPUTS],
            others_len: 0,
        }
    }

    /// Input plane `z` in `inputs[z]` (the first is [`Wiring::input`]); `None` for no
    /// input or more than `1 + MAX_OTHER_INPUTS` of them.
    pub fn planes(inputs: &[Reg], general: usize) -> Option<Wiring> {
        let (&input, rest) = inputs.split_first()?;
        let mut w = Wiring::new(input, general);
        let slots = w.others.get_mut(..rest.len())?;
        slots.copy_from_slice(rest);
        w.others_len = u8::try_from(rest.len()).ok()?;
        Some(w)
    }

    /// The register of every input plane, plane 0 first.
    pub(crate) fn inputs(&self) -> Vec<Reg> {
        std::iter::once(self.input)
            .chain(self.others().iter().copied())
            .collect()
    }

    /// The registers of the input planes after the first.
    pub(crate) fn others(&self) -> &[Reg] {
        &self.others[..usize::from(self.others_len).min(MAX_OTHER_INPUTS)]
    }

    /// Whether the program reads more than one input plane.
    pub(crate) fn has_planes(&self) -> bool {
        self.others_len > 0
    }
}

/// One statement: a table entry, its operands, where it was written and its expansion.
#[derive(Clone, Debug)]
pub struct Stmt {
    /// The table entry.
    pub def: &'static Def,
    /// Checked operands.
    pub args: Vec<Operand>,
    /// Source position (default for generated code).
    pub pos: Pos,
    /// Machine-level expansion.
    pub ops: Vec<BusOp>,
}

impl Stmt {
    /// Builds a statement from a name and operands, checking arity, operand kinds and the
    /// once-per-bus-instruction rule.
    pub(crate) fn build(
        name: &str,
        args: Vec<Operand>,
        device: Device,
        pos: Pos,
    ) -> Result<Stmt, IsaError> {
        let defs: Vec<&Def> = table::lookup(name).collect();
        if defs.is_empty() {
            let hint = table::table()
                .iter()
                .find(|d| d.name.eq_ignore_ascii_case(name))
                .map(|d| d.name)
                .or_else(|| super::text::closest(name, table::table().iter().map(|d| d.name)))
                .map(|n| format!(" (did you mean `{n}`?)"))
                .unwrap_or_default();
            return Err(IsaError::new(
                pos,
                format!("unknown instruction `{}`{hint}", super::text::quote(name)),
            ));
        }
        let Some(def) = defs.iter().copied().find(|d| d.arity() == args.len()) else {
            let mut arities: Vec<usize> = defs.iter().map(|d| d.arity()).collect();
            arities.sort_unstable();
            arities.dedup();
            let list: Vec<String> = arities.iter().map(ToString::to_string).collect();
            return Err(IsaError::new(
                pos,
                format!(
                    "wrong number of operands: `{name}` takes {}, got {}",
                    list.join(" or "),
                    args.len()
                ),
            ));
        };
        Stmt::of(def, args, device, pos)
    }

    /// Builds a statement of a known table entry, checking operand kinds and the
    /// once-per-bus-instruction rule.
    pub fn of(
        def: &'static Def,
        args: Vec<Operand>,
        device: Device,
        pos: Pos,
    ) -> Result<Stmt, IsaError> {
        let name = def.name;
        if args.len() != def.arity() {
            return Err(IsaError::new(
                pos,
                format!(
                    "wrong number of operands: `{name}` takes {}, got {}",
                    def.arity(),
                    args.len()
                ),
            ));
        }
        for (i, (slot, op)) in def.slots.iter().zip(&args).enumerate() {
            if !slot.accepts(op, device.general) {
                let what = match op {
                    Operand::Reg(Reg::Gen(g)) if usize::from(*g) >= device.general => format!(
                        "unknown register `{op}` (this device has {})",
                        device.general_range()
                    ),
                    _ => format!("`{op}` is not allowed here"),
                };
                return Err(IsaError::new(
                    pos,
                    format!(
                        "operand {} of `{name}`: {what}; expected {}",
                        i + 1,
                        slot.describe()
                    ),
                )
                .at_operand(i));
            }
        }
        let ops = (def.expand)(&args);
        let stmt = Stmt {
            def,
            args,
            pos,
            ops,
        };
        stmt.check_once_per_bus()?;
        Ok(stmt)
    }

    fn check_once_per_bus(&self) -> Result<(), IsaError> {
        for op in &self.ops {
            if let BusOp::Transfer { dsts, .. } = op {
                // NEWS and the neighbour views are all NEWS cells: two such receivers
                // would drive some cell from two PEs at once.
                if dsts
                    .iter()
                    .filter(|d| matches!(d, Reg::News | Reg::X(_)))
                    .count()
                    > 1
                {
                    return Err(IsaError::new(
                        self.pos,
                        format!(
                            "`{op}` writes NEWS through two receivers; at most one receiver \
                             may be NEWS or a neighbour view"
                        ),
                    ));
                }
            }
            let regs = op.analogue_regs();
            for (i, r) in regs.iter().enumerate() {
                if regs[..i].contains(r) {
                    let within = if self.ops.len() > 1 || op.to_string() != self.to_string() {
                        format!(" (expansion of `{self}`)")
                    } else {
                        String::new()
                    };
                    return Err(IsaError::new(
                        self.pos,
                        format!(
                            "register {r} appears twice in `{op}`{within}; a register may be \
                             used once per bus instruction"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Cycles of the expansion.
    pub fn cycles(&self) -> u64 {
        self.ops.iter().map(BusOp::cycles).sum()
    }

    /// The general registers this statement writes (analogue receivers).
    pub(crate) fn written_registers(&self) -> Vec<Reg> {
        let mut out: Vec<Reg> = Vec::new();
        for op in &self.ops {
            if let BusOp::Transfer { dsts, .. } = op {
                for d in dsts {
                    if d.is_general() && !out.contains(d) {
                        out.push(*d);
                    }
                }
            }
        }
        out
    }
}

impl fmt::Display for Stmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let args: Vec<String> = self.args.iter().map(ToString::to_string).collect();
        write!(f, "{}({})", self.def.name, args.join(", "))
    }
}

/// A program: statements in order.
#[derive(Clone, Debug, Default)]
pub struct Program {
    /// The statements.
    pub stmts: Vec<Stmt>,
}

impl Program {
    /// Number of statements (macro instructions).
    pub fn instructions(&self) -> usize {
        self.stmts.len()
    }

    /// Total cycles (machine-level instructions) of one run.
    pub fn cycles(&self) -> u64 {
        self.stmts.iter().map(Stmt::cycles).sum()
    }

    /// General registers written anywhere in the program, in order of first write.
    pub fn written_registers(&self) -> Vec<Reg> {
        let mut out: Vec<Reg> = Vec::new();
        for r in self.stmts.iter().flat_map(Stmt::written_registers) {
            if !out.contains(&r) {
                out.push(r);
            }
        }
        out
    }

    /// Digital registers (`R0`..`R12`, `FLAG`) written anywhere in the program, in
    /// plane order; `where`/`all`/`WHERE`/`ALL` write `FLAG`, and the vendor macros'
    /// scratch and selection registers count as written.
    pub fn written_digital_registers(&self) -> Vec<DReg> {
        let mut out: Vec<DReg> = self.ops().flat_map(digital_writes).collect();
        out.sort();
        out.dedup();
        out
    }

    /// Digital registers the program reads or writes, in plane order.
    pub fn digital_registers(&self) -> Vec<DReg> {
        let mut out: Vec<DReg> = self
            .ops()
            .flat_map(|op| {
                let mut r = digital_writes(op);
                if let BusOp::Digital(d) = op {
                    r.extend(d.reads());
                }
                r
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn ops(&self) -> impl Iterator<Item = &BusOp> {
        self.stmts.iter().flat_map(|s| &s.ops)
    }

    /// For every general register at the end of the program, the largest number of
    /// neighbour steps any value in it has travelled. Near the array edge a value that
    /// travelled k steps may have read beyond the edge, so results within that many
    /// PEs of the border depend on the edge mode.
    pub(crate) fn edge_reach(&self, general: usize) -> Vec<usize> {
        let mut reach = vec![0usize; general + 1];
        let news = general;
        let index = |r: &Reg| match r {
            Reg::Gen(i) => Some(usize::from(*i)),
            Reg::News => Some(news),
            _ => None,
        };
        for op in self.stmts.iter().flat_map(|s| &s.ops) {
            if let BusOp::Transfer { dsts, srcs } = op {
                let v = srcs
                    .iter()
                    .map(|r| match r {
                        Reg::X(_) => reach[news] + 1,
                        other => index(other).map_or(0, |i| reach[i]),
                    })
                    .max()
                    .unwrap_or(0);
                for d in dsts {
                    match d {
                        Reg::X(_) => reach[news] = v + 1,
                        other => {
                            if let Some(i) = index(other) {
                                reach[i] = v;
                            }
                        }
                    }
                }
            }
        }
        reach.truncate(general);
        reach
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for s in &self.stmts {
            writeln!(f, "{s};")?;
        }
        Ok(())
    }
}

/// The digital registers one machine instruction writes.
fn digital_writes(op: &BusOp) -> Vec<DReg> {
    match op {
        BusOp::Where(_) | BusOp::All => vec![DReg::Flag],
        BusOp::Digital(d) => d.writes(),
        _ => Vec::new(),
    }
}
