//! Symbolic execution: one PE whose registers hold exact linear combinations of input
//! pixels at offsets, run through the simulator's own bus semantics
//! (`crate::sim::machine::step`). The result is the exact kernel each register computes.
//!
//! The PE is generic over how a value is held (`Symbolic`): [`LinComb`], with
//! arbitrary-precision rationals, holds anything; `super::dyadic::Dyadic` holds the
//! dyadic fractions of generated programs in machine integers and says when it cannot.

use crate::isa::{BusOp, DigitalOp, Pos, Program, Reg, Wiring};
use crate::sim::machine::{step, Linear, Machine, MachineError};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};
use std::collections::BTreeMap;
use std::fmt;

/// An exact coefficient of any size. Arbitrary precision, because a program can double a
/// value as often as it likes (and divide by 2 and 3 as often): a fixed-width ratio would
/// wrap, and a proof over wrapped numbers could claim a kernel the program does not compute.
pub(crate) type Coef = BigRational;

/// `n / d` as a coefficient (`d` must not be 0).
pub(crate) fn coef(n: i64, d: i64) -> Coef {
    Coef::new(BigInt::from(n), BigInt::from(d))
}

/// The integer `n` as a coefficient.
pub(crate) fn coef_int(n: i64) -> Coef {
    Coef::from_integer(BigInt::from(n))
}

/// A pixel offset relative to the PE: `(row, col)`, row + south, col + east.
pub(crate) type Offset = (i32, i32);

/// `constant + sum of coef * input(pe + offset)`, exactly.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct LinComb {
    /// Non-zero coefficients by offset.
    pub(crate) terms: BTreeMap<Offset, Coef>,
    /// The constant part (from DAC loads and photodiode reset levels).
    pub(crate) constant: Coef,
}

impl LinComb {
    /// The input pixel at this PE, with coefficient 1.
    pub(crate) fn input() -> Self {
        Self::pixel((0, 0), Coef::one())
    }

    /// `coef * input(pe + offset)`.
    pub(crate) fn pixel(offset: Offset, coef: Coef) -> Self {
        let mut terms = BTreeMap::new();
        if !coef.is_zero() {
            terms.insert(offset, coef);
        }
        LinComb {
            terms,
            constant: Coef::zero(),
        }
    }

    /// A constant.
    pub(crate) fn constant(c: Coef) -> Self {
        LinComb {
            terms: BTreeMap::new(),
            constant: c,
        }
    }

    /// The same expression as seen from a PE `(dr, dc)` away: what this PE reads when
    /// it looks at the register of the neighbour at `(dr, dc)`.
    pub(crate) fn shifted(&self, dr: i32, dc: i32) -> Self {
        LinComb {
            terms: self
                .terms
                .iter()
                .map(|(&(r, c), v)| ((r + dr, c + dc), v.clone()))
                .collect(),
            constant: self.constant.clone(),
        }
    }

    /// Multiplies every coefficient by `k`.
    pub(crate) fn scaled(&self, k: &Coef) -> Self {
        let mut out = LinComb::zero();
        for (o, v) in &self.terms {
            let p = v * k;
            if !p.is_zero() {
                out.terms.insert(*o, p);
            }
        }
        out.constant = &self.constant * k;
        out
    }
}

/// An exact linear combination in some representation, as the symbolic PE holds it.
pub(crate) trait Symbolic: Linear + fmt::Debug {
    /// `lin` in this representation (one that cannot hold it exactly says so in its
    /// own way: see `super::dyadic::Dyadic::is_exact`).
    fn of_lin(lin: &LinComb) -> Self;
    /// The same expression as seen from a PE `(dr, dc)` away.
    fn shifted(&self, dr: i32, dc: i32) -> Self;
    /// The rows and columns its offsets span (`None` when the value cannot say: see
    /// `super::dyadic::Dyadic::is_exact`).
    fn span(&self) -> Option<Span>;
}

/// How many rows and columns of offsets a value spans (0 x 0 for a constant).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    /// Rows from the northernmost to the southernmost offset.
    pub(crate) rows: u64,
    /// Columns from the westernmost to the easternmost offset.
    pub(crate) cols: u64,
}

impl Span {
    /// The span of `offsets`.
    pub(crate) fn of(offsets: impl Iterator<Item = Offset>) -> Span {
        let mut b: Option<(i32, i32, i32, i32)> = None;
        for (r, c) in offsets {
            b = Some(match b {
                None => (r, r, c, c),
                Some((r0, r1, c0, c1)) => (r0.min(r), r1.max(r), c0.min(c), c1.max(c)),
            });
        }
        b.map_or(Span::default(), |(r0, r1, c0, c1)| Span {
            rows: (i64::from(r1) - i64::from(r0) + 1).unsigned_abs(),
            cols: (i64::from(c1) - i64::from(c0) + 1).unsigned_abs(),
        })
    }
}

/// Widest span, in rows and in columns, the symbolic executor follows: twice the largest
/// kernel (31x31) less one, room for a partial sum moved across a whole kernel. A value
/// wider than that is in no kernel the tools handle, and following it costs time and
/// memory without bound (e.g. alternating `movx` and `add` grows it by one a macro).
pub(crate) const MAX_SPAN: u64 = 2 * MAX_KERNEL_SIDE as u64 - 1;

/// Largest kernel side any tool accepts: specs are held to it
/// (`crate::cain::spec::MAX_SIDE`), and the executor's span bound is made from it.
pub(crate) const MAX_KERNEL_SIDE: usize = 31;

impl Symbolic for LinComb {
    fn of_lin(lin: &LinComb) -> Self {
        lin.clone()
    }

    fn shifted(&self, dr: i32, dc: i32) -> Self {
        LinComb::shifted(self, dr, dc)
    }

    fn span(&self) -> Option<Span> {
        Some(Span::of(self.terms.keys().copied()))
    }
}

impl Linear for LinComb {
    fn zero() -> Self {
        LinComb::default()
    }

    fn add_assign(&mut self, other: &Self) {
        for (o, v) in &other.terms {
            let e = self.terms.entry(*o).or_insert_with(Coef::zero);
            *e += v;
            if e.is_zero() {
                self.terms.remove(o);
            }
        }
        self.constant += &other.constant;
    }

    fn negate_split(&mut self, receivers: usize) {
        // Receivers are 1..=4 (bus..bus3 and the NEWS views), so the cast is exact.
        if receivers == 1 {
            // The common case, without the gcd of a general multiplication.
            self.terms.values_mut().for_each(|v| *v = -&*v);
            self.constant = -&self.constant;
        } else {
            *self = self.scaled(&coef(-1, receivers as i64));
        }
    }
}

impl fmt::Display for LinComb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = self
            .terms
            .iter()
            .map(|(&(r, c), v)| format!("{v}*in[{r:+},{c:+}]"))
            .collect();
        if !self.constant.is_zero() || parts.is_empty() {
            parts.push(self.constant.to_string());
        }
        f.write_str(&parts.join(" + "))
    }
}

/// One symbolic PE (standing for every PE far from the array edge).
#[derive(Clone, Debug)]
pub(crate) struct SymbolicPe<V = LinComb> {
    general: Vec<V>,
    news: V,
    pix_reset: Option<f32>,
    dac: i32,
    flag_known_full: bool,
}

impl<V: Symbolic> SymbolicPe<V> {
    /// A PE with `general` registers, all zero, FLAG set everywhere.
    pub(crate) fn new(general: usize) -> Self {
        SymbolicPe {
            general: vec![V::zero(); general],
            news: V::zero(),
            pix_reset: None,
            dac: 0,
            flag_known_full: true,
        }
    }

    /// What `reg` holds (neighbour views are seen from this PE).
    pub(crate) fn value(&self, reg: Reg) -> V {
        match reg {
            Reg::Gen(i) => self.general[usize::from(i)].clone(),
            Reg::News => self.news.clone(),
            // The photodiode holds half the raw pixel p = x + 128 while exposed, where
            // the variable x is the full-range image (what a full-range capture yields).
            Reg::Pix => match self.pix_reset {
                None => {
                    let mut v = LinComb::pixel((0, 0), coef(1, 2));
                    v.constant = coef_int(64);
                    V::of_lin(&v)
                }
                Some(level) => V::of_lin(&LinComb::constant(coef_of_f32(level))),
            },
            Reg::In => V::of_lin(&LinComb::constant(coef_int(i64::from(self.dac)))),
            Reg::X(d) => {
                let (dr, dc) = d.step();
                self.news.shifted(dr, dc)
            }
        }
    }

    /// Overwrites a general register (e.g. to place the input image).
    pub(crate) fn set(&mut self, reg: Reg, v: V) {
        match reg {
            Reg::Gen(i) => self.general[usize::from(i)] = v,
            Reg::News => self.news = v,
            _ => {}
        }
    }
}

fn coef_of_f32(v: f32) -> Coef {
    // The exact value of the level the simulator uses (reset levels are finite).
    Coef::from_float(v).unwrap_or_else(Coef::zero)
}

impl<V: Symbolic> Machine for SymbolicPe<V> {
    fn transfer(&mut self, dsts: &[Reg], srcs: &[Reg]) -> Result<(), MachineError> {
        if !self.flag_known_full {
            return Err(MachineError::PartialFlag);
        }
        let vals: Vec<V> = srcs.iter().map(|r| self.value(*r)).collect();
        let v = crate::sim::machine::bus_value(&vals, dsts.len());
        for d in dsts {
            match d {
                Reg::X(dir) => {
                    // NEWS at q receives what the PE at q - dir computed.
                    let (dr, dc) = dir.step();
                    self.news = v.shifted(-dr, -dc);
                }
                Reg::Gen(_) | Reg::News => self.set(*d, v.clone()),
                other => return Err(MachineError::CannotReceive(*other)),
            }
        }
        if srcs.contains(&Reg::Pix) {
            // The reset level is read once; afterwards PIX shows a new exposure.
            self.pix_reset = None;
        }
        Ok(())
    }

    fn flag_where(&mut self, _srcs: &[Reg]) -> Result<(), MachineError> {
        self.flag_known_full = false;
        Ok(())
    }

    fn flag_all(&mut self) {
        self.flag_known_full = true;
    }

    fn reset_pix(&mut self, level: f32) {
        self.pix_reset = Some(level);
    }

    fn set_dac(&mut self, value: i32) {
        self.dac = value;
    }

    fn digital(&mut self, op: &DigitalOp) -> Result<(), MachineError> {
        // Digital registers do not reach the analogue values except through FLAG.
        let writes_flag = match op {
            DigitalOp::Mov(d, _)
            | DigitalOp::Not(d, _)
            | DigitalOp::Or(d, _)
            | DigitalOp::Nor(d, _)
            | DigitalOp::MovIfR0(d, _) => *d == crate::isa::DReg::Flag,
            DigitalOp::DNews { dst, .. } => *dst == crate::isa::DReg::Flag,
            DigitalOp::Set(_) | DigitalOp::Clr(_) => false,
        };
        if writes_flag {
            self.flag_known_full = false;
        }
        Ok(())
    }
}

/// Why symbolic execution stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: `{statement}`: {cause}")]
pub struct SymbolicError {
    /// Statement that could not be executed.
    pub(crate) pos: Pos,
    /// Its text.
    pub(crate) statement: String,
    /// Why.
    pub(crate) cause: SymbolicCause,
}

/// Why a statement could not be executed symbolically.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum SymbolicCause {
    /// The machine refused the instruction.
    #[error(transparent)]
    Machine(#[from] MachineError),
    /// A value grew wider than the verifier follows.
    #[error(
        "the value in {register} spans {rows}x{cols} offsets, more than the \
         {MAX_SPAN}x{MAX_SPAN} the verifier follows (twice the largest kernel, 31x31, less \
         one); symbolic execution stops here"
    )]
    TooWide {
        /// The register holding it.
        register: Reg,
        /// Rows of offsets it spans.
        rows: u64,
        /// Columns of offsets it spans.
        cols: u64,
    },
}

/// Runs `program` symbolically with the input image in `input` and every other register
/// zero. Returns the final state of the PE.
pub(crate) fn execute(program: &Program, wiring: Wiring) -> Result<SymbolicPe, SymbolicError> {
    execute_as(program, wiring, |_, _, _| ())
}

/// Runs `program` symbolically from the start values `initial` (every other register
/// zero): e.g. the input image in a register nothing writes, to see what of it reaches
/// the outputs.
pub(crate) fn execute_from(
    program: &Program,
    initial: &[(Reg, LinComb)],
    general: usize,
) -> Result<SymbolicPe, SymbolicError> {
    let mut pe = SymbolicPe::<LinComb>::new(general);
    for (r, v) in initial {
        pe.set(*r, v.clone());
    }
    run_on(&mut pe, program, |_, _, _| ())?;
    Ok(pe)
}

/// [`execute`] in the representation `V`, calling `written(pe, reg, pos)` after every
/// transfer for each receiver `reg` it names (a neighbour view `XE`.. wrote a
/// neighbour's `NEWS`, which holds the values of this PE's `NEWS`, moved).
pub(crate) fn execute_as<V: Symbolic>(
    program: &Program,
    wiring: Wiring,
    written: impl FnMut(&SymbolicPe<V>, Reg, Pos),
) -> Result<SymbolicPe<V>, SymbolicError> {
    let Wiring { input, general, .. } = wiring;
    let mut pe = SymbolicPe::<V>::new(general);
    pe.set(input, V::of_lin(&LinComb::input()));
    run_on(&mut pe, program, written)?;
    Ok(pe)
}

/// Runs every statement of `program` on `pe` from whatever it holds (see
/// [`crate::verify::planes`] for a start with several inputs), stopping where a value
/// grows wider than [`MAX_SPAN`].
pub(crate) fn run_program<V: Symbolic>(
    pe: &mut SymbolicPe<V>,
    program: &Program,
) -> Result<(), SymbolicError> {
    run_on(pe, program, |_, _, _| ())
}

/// Runs every statement of `program` on `pe` from whatever it holds, calling `written`
/// after each write (as `execute_as` does), stopping where a value grows wider than
/// [`MAX_SPAN`].
pub(crate) fn run_noting<V: Symbolic>(
    pe: &mut SymbolicPe<V>,
    program: &Program,
    written: impl FnMut(&SymbolicPe<V>, Reg, Pos),
) -> Result<(), SymbolicError> {
    run_on(pe, program, written)
}

/// Runs every statement of `program` on `pe`, stopping where a value grows wider than
/// [`MAX_SPAN`].
fn run_on<V: Symbolic>(
    pe: &mut SymbolicPe<V>,
    program: &Program,
    mut written: impl FnMut(&SymbolicPe<V>, Reg, Pos),
) -> Result<(), SymbolicError> {
    for s in &program.stmts {
        for op in &s.ops {
            step(pe, op).map_err(|e| SymbolicError {
                pos: s.pos,
                statement: s.to_string(),
                cause: e.into(),
            })?;
            if let BusOp::Transfer { dsts, .. } = op {
                for d in dsts {
                    check_span(pe, *d, s)?;
                    written(pe, *d, s.pos);
                }
            }
        }
    }
    Ok(())
}

/// Refuses a value in `reg` wider than [`MAX_SPAN`] after `stmt`.
fn check_span<V: Symbolic>(
    pe: &SymbolicPe<V>,
    reg: Reg,
    stmt: &crate::isa::Stmt,
) -> Result<(), SymbolicError> {
    let held = match reg {
        Reg::X(_) => Reg::News,
        other => other,
    };
    let Some(span) = pe.value(held).span() else {
        return Ok(());
    };
    if span.rows <= MAX_SPAN && span.cols <= MAX_SPAN {
        return Ok(());
    }
    Err(SymbolicError {
        pos: stmt.pos,
        statement: stmt.to_string(),
        cause: SymbolicCause::TooWide {
            register: held,
            rows: span.rows,
            cols: span.cols,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{parse_program, Device};

    fn run(text: &str) -> SymbolicPe {
        let p = parse_program(text, Device::default()).unwrap();
        execute(&p, Wiring::new(Reg::A, 6)).unwrap()
    }

    #[test]
    fn movx_reads_from_direction() {
        // B(r, c) = A(r, c + 1): the value from the east neighbour.
        let pe = run("movx(B, A, east)");
        assert_eq!(pe.value(Reg::B), LinComb::pixel((0, 1), Coef::one()));
        let pe = run("mov2x(B, A, north, west)");
        assert_eq!(pe.value(Reg::B), LinComb::pixel((-1, -1), Coef::one()));
    }

    #[test]
    fn identity_kernel_and_divisions() {
        let pe = run("diva(A, E, F); mov(F, A); add(A, A, F)");
        assert_eq!(pe.value(Reg::A), LinComb::input());
        let pe = run("div(B, C, D, A)");
        assert_eq!(pe.value(Reg::B), LinComb::pixel((0, 0), coef(1, 2)));
        assert_eq!(pe.value(Reg::C), LinComb::pixel((0, 0), coef(-1, 2)));
        assert_eq!(pe.value(Reg::D), LinComb::input());
        let pe = run("bus3(B, C, D, A)");
        assert_eq!(pe.value(Reg::D), LinComb::pixel((0, 0), coef(-1, 3)));
    }

    #[test]
    fn full_range_capture_is_the_input() {
        // x = p - 128: half-range y = p / 2 = x / 2 + 64; full-range y = x, h = -p / 2.
        let pe = run("get_image(B)");
        let mut half = LinComb::pixel((0, 0), coef(1, 2));
        half.constant = coef_int(64);
        assert_eq!(pe.value(Reg::B), half);
        let pe = run("get_image(B, C)");
        assert_eq!(pe.value(Reg::B), LinComb::input());
        let mut h = LinComb::pixel((0, 0), coef(-1, 2));
        h.constant = coef_int(-64);
        assert_eq!(pe.value(Reg::C), h);
    }

    #[test]
    fn where_blocks_proof() {
        let p = parse_program("abs(B, A)", Device::default()).unwrap();
        assert!(execute(&p, Wiring::new(Reg::A, 6)).is_err());
    }
}
