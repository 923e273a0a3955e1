//! Machine-level instructions: what one instruction control word does (one cycle each,
//! except the DAC setting, which rides on the next word).

use super::reg::{DReg, DirSet, Reg};
use std::fmt;

/// One machine-level instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum BusOp {
    /// `bus`, `bus2`, `bus3`: the sources are summed, negated and divided equally among
    /// the receivers: every receiver gets `-(sum of srcs) / dsts.len()` (0 with no source).
    Transfer {
        /// Receiving locations (1..=3).
        dsts: Vec<Reg>,
        /// Source locations (0..=4).
        srcs: Vec<Reg>,
    },
    /// `where(a [, b [, c]])`: FLAG := (a + b + c) > 0.
    Where(Vec<Reg>),
    /// `all()`: FLAG := 1.
    All,
    /// `rpix()`: reset the photodiode; until the next capture `PIX` reads `level`.
    Rpix {
        /// The reset level `PIX` reads afterwards (see the README on capture).
        level: f32,
    },
    /// `nop()`.
    Nop,
    /// Sets the DAC so that `IN` reads `value`. Takes no cycle of its own: the value is part
    /// of the control word of the transfer that reads `IN`.
    Dac(i32),
    /// Sets the DAC like [`BusOp::Dac`], but without the vendor's correction
    /// (`load_in`): `IN` reads the same value, and the error model adds the error of
    /// the uncorrected load to the transfers that read it.
    DacUncorrected(i32),
    /// A native digital instruction.
    Digital(DigitalOp),
}

impl BusOp {
    /// Cycles this instruction takes on the array.
    pub fn cycles(&self) -> u64 {
        match self {
            BusOp::Dac(_) | BusOp::DacUncorrected(_) => 0,
            _ => 1,
        }
    }

    /// Every analogue register named by the instruction, sources and receivers.
    pub(crate) fn analogue_regs(&self) -> Vec<Reg> {
        match self {
            BusOp::Transfer { dsts, srcs } => dsts.iter().chain(srcs).copied().collect(),
            BusOp::Where(srcs) => srcs.clone(),
            _ => Vec::new(),
        }
    }

    /// Convenience constructor for a transfer.
    pub fn transfer(dsts: &[Reg], srcs: &[Reg]) -> BusOp {
        BusOp::Transfer {
            dsts: dsts.to_vec(),
            srcs: srcs.to_vec(),
        }
    }
}

fn join<T: fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for BusOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BusOp::Transfer { dsts, srcs } => {
                let name = match dsts.len() {
                    1 => "bus",
                    2 => "bus2",
                    _ => "bus3",
                };
                let all: Vec<Reg> = dsts.iter().chain(srcs).copied().collect();
                write!(f, "{name}({})", join(&all))
            }
            BusOp::Where(srcs) => write!(f, "where({})", join(srcs)),
            BusOp::All => f.write_str("all()"),
            BusOp::Rpix { .. } => f.write_str("rpix()"),
            BusOp::Nop => f.write_str("nop()"),
            BusOp::Dac(v) => write!(f, "dac({v})"),
            BusOp::DacUncorrected(v) => write!(f, "dac_uncorrected({v})"),
            BusOp::Digital(d) => d.fmt(f),
        }
    }
}

/// A native digital instruction on the 1-bit registers. Digital instructions are not
/// masked by FLAG (**choice**, see the README).
#[derive(Clone, Debug, PartialEq)]
pub enum DigitalOp {
    /// Each listed register := 1.
    Set(Vec<DReg>),
    /// Each listed register := 0.
    Clr(Vec<DReg>),
    /// `dst := src`.
    Mov(DReg, DReg),
    /// `dst := NOT src`.
    Not(DReg, DReg),
    /// `dst := OR of srcs`.
    Or(DReg, Vec<DReg>),
    /// `dst := NOR of srcs`.
    Nor(DReg, Vec<DReg>),
    /// The vendor's R0-conditioned move used inside `MUX`: `dst := src` where `R0` is 1.
    MovIfR0(DReg, DReg),
    /// Native neighbour OR: `dst := OR over d of src from direction d`, for the
    /// directions selected in this PE by `R3` (north), `R4` (east), `R1` (south) and
    /// `R2` (west); outside the array reads as `boundary`.
    DNews {
        /// Receiving register.
        dst: DReg,
        /// Register read from the neighbours.
        src: DReg,
        /// Value read outside the array.
        boundary: bool,
    },
}

impl DigitalOp {
    /// The registers this instruction writes.
    pub fn writes(&self) -> Vec<DReg> {
        match self {
            DigitalOp::Set(rs) | DigitalOp::Clr(rs) => rs.clone(),
            DigitalOp::Mov(d, _)
            | DigitalOp::Not(d, _)
            | DigitalOp::Or(d, _)
            | DigitalOp::Nor(d, _)
            | DigitalOp::MovIfR0(d, _)
            | DigitalOp::DNews { dst: d, .. } => vec![*d],
        }
    }

    /// The registers this instruction reads (a conditional move also reads its
    /// receiver, which keeps its value where `R0` is 0; `DNEWS` reads its selection
    /// registers).
    pub fn reads(&self) -> Vec<DReg> {
        match self {
            DigitalOp::Set(_) | DigitalOp::Clr(_) => Vec::new(),
            DigitalOp::Mov(_, s) | DigitalOp::Not(_, s) => vec![*s],
            DigitalOp::Or(_, s) | DigitalOp::Nor(_, s) => s.clone(),
            DigitalOp::MovIfR0(d, s) => vec![DReg::R(0), *d, *s],
            DigitalOp::DNews { src, .. } => {
                let mut r = vec![*src];
                r.extend(super::reg::Dir::ALL.map(dnews_select_reg));
                r
            }
        }
    }
}

impl fmt::Display for DigitalOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DigitalOp::Set(rs) => write!(f, "SET({})", join(rs)),
            DigitalOp::Clr(rs) => write!(f, "CLR({})", join(rs)),
            DigitalOp::Mov(d, s) => write!(f, "MOV({d}, {s})"),
            DigitalOp::Not(d, s) => write!(f, "NOT({d}, {s})"),
            DigitalOp::Or(d, s) => write!(f, "OR({d}, {})", join(s)),
            DigitalOp::Nor(d, s) => write!(f, "NOR({d}, {})", join(s)),
            DigitalOp::MovIfR0(d, s) => write!(f, "MOV({d}, {s}) [where R0]"),
            DigitalOp::DNews { dst, src, boundary } => {
                write!(f, "DNEWS{}({dst}, {src})", u8::from(*boundary))
            }
        }
    }
}

/// Which neighbour directions a `DNEWS` selection register stands for, in the order the
/// vendor sets them: `R1` south, `R2` west, `R3` north, `R4` east.
pub(crate) fn dnews_select_reg(d: super::reg::Dir) -> DReg {
    use super::reg::Dir;
    DReg::R(match d {
        Dir::South => 1,
        Dir::West => 2,
        Dir::North => 3,
        Dir::East => 4,
    })
}

/// Directions selected by a `DNEWS` set, as the selection registers to raise.
pub(crate) fn dnews_select_regs(dirs: DirSet) -> Vec<DReg> {
    dirs.iter().map(dnews_select_reg).collect()
}
