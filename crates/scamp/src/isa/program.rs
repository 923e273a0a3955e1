//! Statements and programs: table entries with checked operands, their expansion, and
//! the rules every machine-level instruction must obey.

use super::op::BusOp;
use super::parse::{KERNEL_BEGIN, KERNEL_END};
use super::reg::{DReg, Reg};
use super::table::{self, Def, Operand, Slot};
use super::text::quote;
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
#[error("{pos}: {cause}")]
pub struct IsaError {
    /// Where the problem is.
    pub pos: Pos,
    /// What is wrong (boxed: errors travel inside other errors and results).
    pub cause: Box<IsaCause>,
    /// The operand the error is about (0-based), when it is about one: a parser that
    /// knows where each operand was written can point at it.
    pub(crate) operand: Option<usize>,
}

impl IsaError {
    /// An error at `pos`.
    pub(crate) fn new(pos: Pos, cause: IsaCause) -> Self {
        IsaError {
            pos,
            cause: Box::new(cause),
            operand: None,
        }
    }

    /// The same error, about operand `index` (0-based).
    pub(crate) fn at_operand(mut self, index: usize) -> Self {
        self.operand = Some(index);
        self
    }
}

/// What is wrong with program text or a statement, with the values involved. User text
/// is held whole and shortened ([`super::text::quote`]) only when shown.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IsaCause {
    /// A `/*` without its `*/`.
    #[error("unterminated block comment")]
    UnterminatedComment,
    /// A `/` that opens no comment.
    #[error("unexpected `/`")]
    UnexpectedSlash,
    /// Digits that do not make an `i64`.
    #[error("`{}` is not a valid integer", quote(text))]
    BadInteger {
        /// The digits as written.
        text: String,
    },
    /// A character no token starts with.
    #[error("unexpected character {found:?}")]
    UnexpectedChar {
        /// The character.
        found: char,
    },
    /// Text over [`super::source::MAX_PROGRAM_BYTES`].
    #[error("the program is larger than {limit} bytes, the most accepted")]
    TooLarge {
        /// The most accepted, in bytes.
        limit: u64,
    },
    /// `R<n>` past the digital registers.
    #[error(
        "unknown register `{}` (this device has R0..R{last} and FLAG)",
        quote(name)
    )]
    UnknownDigital {
        /// The name as written.
        name: String,
        /// The highest digital register's number.
        last: usize,
    },
    /// A word that names no operand.
    #[error("unknown operand `{}`{}", quote(name), did_you_mean(*suggestion))]
    UnknownOperand {
        /// The word as written.
        name: String,
        /// The closest known operand, if one is close.
        suggestion: Option<&'static str>,
    },
    /// A token where the grammar wants another.
    #[error("expected {expected}, found {}", found.as_deref().map_or("end of file".into(), |t| format!("`{}`", quote(t))))]
    Expected {
        /// What the grammar wants there.
        expected: &'static str,
        /// The token found (`None` at the end of the text).
        found: Option<String>,
    },
    /// A word before `|` or after it that is no direction.
    #[error("`{word}` is not a direction")]
    NotADirection {
        /// The word.
        word: String,
    },
    /// A kernel delimiter with operands.
    #[error("`{name}` takes no operands")]
    TakesNoOperands {
        /// The delimiter.
        name: String,
    },
    /// A kernel opened inside another.
    #[error("`{KERNEL_BEGIN}` inside the kernel opened at {opened}")]
    NestedKernel {
        /// Where the open kernel began.
        opened: Pos,
    },
    /// A kernel closed that was never opened.
    #[error("`{KERNEL_END}` without a `{KERNEL_BEGIN}` before it")]
    KernelEndAlone,
    /// A kernel still open at the end of the text.
    #[error("`{KERNEL_BEGIN}` is never closed by `{KERNEL_END}`")]
    KernelNotClosed,
    /// A name the instruction table does not have.
    #[error("unknown instruction `{}`{}", quote(name), did_you_mean(*suggestion))]
    UnknownInstruction {
        /// The name as written.
        name: String,
        /// The closest instruction, if one is close.
        suggestion: Option<&'static str>,
    },
    /// An instruction with the wrong number of operands.
    #[error("wrong number of operands: `{instruction}` takes {}, got {got}", takes.iter().map(ToString::to_string).collect::<Vec<_>>().join(" or "))]
    OperandCount {
        /// The instruction.
        instruction: String,
        /// The numbers of operands its forms take, ascending.
        takes: Vec<usize>,
        /// The number given.
        got: usize,
    },
    /// A general register the device does not have.
    #[error("operand {index} of `{instruction}`: unknown register `{register}` (this device has {}); expected {}", Device { general: *general }.general_range(), expected.describe())]
    UnknownGeneral {
        /// The operand's number (1-based).
        index: usize,
        /// The instruction.
        instruction: &'static str,
        /// The register.
        register: Reg,
        /// The device's number of general registers.
        general: usize,
        /// What the operand position accepts.
        expected: Slot,
    },
    /// An operand of the wrong kind for its position.
    #[error("operand {index} of `{instruction}`: `{operand}` is not allowed here; expected {}", expected.describe())]
    NotAllowed {
        /// The operand's number (1-based).
        index: usize,
        /// The instruction.
        instruction: &'static str,
        /// The operand.
        operand: Operand,
        /// What the position accepts.
        expected: Slot,
    },
    /// A bus instruction with two NEWS receivers.
    #[error("`{op}` writes NEWS through two receivers; at most one receiver may be NEWS or a neighbour view")]
    TwoNewsReceivers {
        /// The bus instruction, as printed.
        op: String,
    },
    /// A register used twice in one bus instruction.
    #[error("register {register} appears twice in `{op}`{}; a register may be used once per bus instruction", expansion_of.as_deref().map_or(String::new(), |s| format!(" (expansion of `{s}`)")))]
    RegisterTwice {
        /// The register.
        register: Reg,
        /// The bus instruction, as printed.
        op: String,
        /// The statement it expands, when it is part of an expansion.
        expansion_of: Option<String>,
    },
    /// The code generator built a statement without an operand it needs (a bug).
    #[error("internal: operand missing")]
    OperandMissing,
}

/// ` (did you mean `X`?)`, or nothing.
fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
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
    pub(crate) input: Reg,
    /// Number of general analogue registers.
    pub(crate) general: usize,
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

    /// Input plane `z` in `inputs[z]` (the first is the main input); `None` for no
    /// input or more than `1 + MAX_OTHER_INPUTS` of them.
    pub(crate) fn planes(inputs: &[Reg], general: usize) -> Option<Wiring> {
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
            let suggestion = table::table()
                .iter()
                .find(|d| d.name.eq_ignore_ascii_case(name))
                .map(|d| d.name)
                .or_else(|| super::text::closest(name, table::table().iter().map(|d| d.name)));
            return Err(IsaError::new(
                pos,
                IsaCause::UnknownInstruction {
                    name: name.to_string(),
                    suggestion,
                },
            ));
        }
        let Some(def) = defs.iter().copied().find(|d| d.arity() == args.len()) else {
            let mut arities: Vec<usize> = defs.iter().map(|d| d.arity()).collect();
            arities.sort_unstable();
            arities.dedup();
            return Err(IsaError::new(
                pos,
                IsaCause::OperandCount {
                    instruction: name.to_string(),
                    takes: arities,
                    got: args.len(),
                },
            ));
        };
        Stmt::of(def, args, device, pos)
    }

    /// Builds a statement of a known table entry, checking operand kinds and the
    /// once-per-bus-instruction rule.
    pub(crate) fn of(
        def: &'static Def,
        args: Vec<Operand>,
        device: Device,
        pos: Pos,
    ) -> Result<Stmt, IsaError> {
        let name = def.name;
        if args.len() != def.arity() {
            return Err(IsaError::new(
                pos,
                IsaCause::OperandCount {
                    instruction: name.to_string(),
                    takes: vec![def.arity()],
                    got: args.len(),
                },
            ));
        }
        for (i, (slot, op)) in def.slots.iter().zip(&args).enumerate() {
            if !slot.accepts(op, device.general) {
                let cause = match op {
                    Operand::Reg(register @ Reg::Gen(g)) if usize::from(*g) >= device.general => {
                        IsaCause::UnknownGeneral {
                            index: i + 1,
                            instruction: name,
                            register: *register,
                            general: device.general,
                            expected: *slot,
                        }
                    }
                    _ => IsaCause::NotAllowed {
                        index: i + 1,
                        instruction: name,
                        operand: *op,
                        expected: *slot,
                    },
                };
                return Err(IsaError::new(pos, cause).at_operand(i));
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
                        IsaCause::TwoNewsReceivers { op: op.to_string() },
                    ));
                }
            }
            let regs = op.analogue_regs();
            for (i, r) in regs.iter().enumerate() {
                if regs[..i].contains(r) {
                    let expansion_of = (self.ops.len() > 1 || op.to_string() != self.to_string())
                        .then(|| self.to_string());
                    return Err(IsaError::new(
                        self.pos,
                        IsaCause::RegisterTwice {
                            register: *r,
                            op: op.to_string(),
                            expansion_of,
                        },
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
