//! The instruction table: every statement a program may contain, its operand slots, its
//! exact expansion into machine-level instructions and the properties passes need (cycles,
//! which operands meet in one bus instruction, full-FLAG-only, code-generator use). Parser,
//! printer, simulator, warnings, cycle counter and code generator all read this one table.
//!
//! Each family of statements is declared in a module of its own (`arith`, `neighbour`,
//! `capture`, `flag`, `bus`, `digital`); properties that follow from an expansion
//! are computed from it here when the table is built, never written down a second time.

mod arith;
mod bus;
mod capture;
mod digital;
mod expand;
mod flag;
mod neighbour;

use super::op::BusOp;
use super::reg::{DReg, Dir, DirSet, Reg};
use std::sync::LazyLock;

/// An operand as written in a statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// An analogue register.
    Reg(Reg),
    /// A digital register.
    DReg(DReg),
    /// One direction.
    Dir(Dir),
    /// A set of directions (`north|west`).
    Dirs(DirSet),
    /// An integer constant.
    Int(i64),
}

impl std::fmt::Display for Operand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Operand::Reg(r) => r.fmt(f),
            Operand::DReg(r) => r.fmt(f),
            Operand::Dir(d) => d.fmt(f),
            Operand::Dirs(d) => d.fmt(f),
            Operand::Int(v) => v.fmt(f),
        }
    }
}

/// What an operand position accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// A general register written by a macro (`A`..`F`).
    Dst,
    /// A general register read by a macro, or `PIX` / `IN`.
    Src,
    /// A general register both read and written by a macro (`div`, `diva`).
    Acc,
    /// Receiver of a bus instruction: general, `NEWS` or a neighbour view.
    BusDst,
    /// Source of a bus instruction: general, `NEWS`, neighbour view, `PIX` or `IN`.
    BusSrc,
    /// A direction.
    Dir,
    /// A constant the DAC can load, -128..=127.
    Value,
    /// A written digital register `R0`..`R12`, excluding those listed.
    DDst(&'static [u8]),
    /// A read digital register `R0`..`R12` or `FLAG`, excluding those listed.
    DSrc(&'static [u8]),
    /// A set of directions.
    Dirs,
    /// 0 or 1.
    Bit,
}

impl Slot {
    /// Human description of what the slot accepts, for error messages.
    pub(crate) fn describe(self) -> String {
        let excl = |ex: &[u8]| {
            if ex.is_empty() {
                String::new()
            } else {
                let names: Vec<String> = ex.iter().map(|i| format!("R{i}")).collect();
                format!(" other than {} (used as scratch)", names.join(", "))
            }
        };
        match self {
            Slot::Dst | Slot::Acc => "a general register (A..F)".into(),
            Slot::Src => "a general register (A..F), PIX or IN".into(),
            Slot::BusDst => "a general register, NEWS or a neighbour view XN/XE/XS/XW".into(),
            Slot::BusSrc => "a general register, NEWS, XN/XE/XS/XW, PIX or IN".into(),
            Slot::Dir => "a direction (north, east, south, west)".into(),
            Slot::Value => "an integer in -128..127".into(),
            Slot::DDst(ex) => format!("a digital register R0..R12{}", excl(ex)),
            Slot::DSrc(ex) => format!("a digital register R0..R12 or FLAG{}", excl(ex)),
            Slot::Dirs => "directions such as north|west".into(),
            Slot::Bit => "0 or 1".into(),
        }
    }

    /// Whether the operand names an analogue register (so the once-per-bus rule covers it).
    pub(crate) fn is_register(self) -> bool {
        matches!(
            self,
            Slot::Dst | Slot::Src | Slot::Acc | Slot::BusDst | Slot::BusSrc
        )
    }

    /// A valid operand for this slot at operand position `i`: registers are distinct per
    /// position (general register `i`, or the `i`-th digital register the slot allows),
    /// so an expansion of placeholders shows which positions each instruction names.
    pub(crate) fn placeholder(self, i: usize) -> Operand {
        let digital = |ex: &[u8]| {
            let free: Vec<u8> = (0..DReg::COUNT as u8).filter(|r| !ex.contains(r)).collect();
            Operand::DReg(DReg::R(free[i % free.len()]))
        };
        match self {
            Slot::Dst | Slot::Src | Slot::Acc | Slot::BusDst | Slot::BusSrc => {
                Operand::Reg(Reg::Gen(i as u8))
            }
            Slot::Dir | Slot::Dirs => Operand::Dir(Dir::North),
            Slot::Value | Slot::Bit => Operand::Int(0),
            Slot::DDst(ex) | Slot::DSrc(ex) => digital(ex),
        }
    }

    /// Whether `op` fits this slot on a device with `general` general registers.
    pub(crate) fn accepts(self, op: &Operand, general: usize) -> bool {
        let gen_ok = |r: &Reg| matches!(r, Reg::Gen(i) if usize::from(*i) < general);
        match (self, op) {
            (Slot::Dst | Slot::Acc, Operand::Reg(r)) => gen_ok(r),
            (Slot::Src, Operand::Reg(r)) => gen_ok(r) || matches!(r, Reg::Pix | Reg::In),
            (Slot::BusDst, Operand::Reg(r)) => gen_ok(r) || matches!(r, Reg::News | Reg::X(_)),
            (Slot::BusSrc, Operand::Reg(r)) => !matches!(r, Reg::Gen(_)) || gen_ok(r),
            (Slot::Dir, Operand::Dir(_)) => true,
            (Slot::Value, Operand::Int(v)) => super::DAC.contains(v),
            (Slot::DDst(ex), Operand::DReg(DReg::R(i))) => !ex.contains(i),
            (Slot::DSrc(ex), Operand::DReg(d)) => match d {
                DReg::R(i) => !ex.contains(i),
                DReg::Flag => true,
            },
            (Slot::Dirs, Operand::Dirs(s)) => s.iter().next().is_some(),
            (Slot::Dirs, Operand::Dir(_)) => true,
            (Slot::Bit, Operand::Int(v)) => *v == 0 || *v == 1,
            _ => false,
        }
    }
}

/// Which part of the machine a statement drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Analogue macro of the vendor library.
    Macro,
    /// A machine-level bus instruction written directly.
    Bus,
    /// Digital register instruction.
    Digital,
}

/// The entries the code generator writes, named: passes refer to them by this typed id,
/// never by their text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Id {
    /// `res(y)`.
    Res,
    /// `mov(y, x)`.
    Mov,
    /// `movx(y, x, dir)`.
    Movx,
    /// `mov2x(y, x, dir, dir2)`.
    Mov2x,
    /// `add(y, a, b)`.
    Add2,
    /// `add(y, a, b, c)`.
    Add3,
    /// `addx(y, a, b, dir)`.
    Addx,
    /// `add2x(y, a, b, dir, dir2)`.
    Add2x,
    /// `sub(y, a, b)`.
    Sub,
    /// `subx(y, a, dir, b)`.
    Subx,
    /// `sub2x(y, a, dir, dir2, b)`.
    Sub2x,
    /// `neg(y, x)`.
    Neg,
    /// `divq(y, x)`.
    Divq,
    /// `div(y0, y1, y2)`.
    Div,
}

impl Id {
    /// Every id, in declaration order.
    pub(crate) const ALL: [Id; 14] = [
        Id::Res,
        Id::Mov,
        Id::Movx,
        Id::Mov2x,
        Id::Add2,
        Id::Add3,
        Id::Addx,
        Id::Add2x,
        Id::Sub,
        Id::Subx,
        Id::Sub2x,
        Id::Neg,
        Id::Divq,
        Id::Div,
    ];
}

/// How the code generator may use an entry. Its operands take the roles their slots say:
/// [`Slot::Dst`] operands are the results, in order; [`Slot::Src`] and [`Slot::Acc`]
/// operands the sources (an `Acc` register is read and left as it was); [`Slot::Dir`]
/// operands the directions of the neighbour move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Codegen {
    /// The entry's name for passes.
    pub(crate) id: Id,
    /// Whether the entry belongs to the basic instruction set (`ops: basic`, the one of
    /// the AUKE code generator) as well as to `ops: all`.
    pub(crate) basic: bool,
}

/// One entry of the instruction table.
pub struct Def {
    /// Name as written in programs.
    pub name: &'static str,
    /// Operand slots, in order.
    pub slots: Vec<Slot>,
    /// Which family the statement belongs to.
    pub family: Family,
    /// One line on what it computes.
    pub summary: &'static str,
    /// Expansion into machine-level instructions (operands already checked).
    pub(crate) expand: fn(&[Operand]) -> Vec<BusOp>,
    /// Whether the vendor documents the statement as valid only while FLAG is set in
    /// every PE (the run warns otherwise).
    pub(crate) full_flag_only: bool,
    /// How the code generator may use the entry; `None` if it never writes it.
    pub(crate) codegen: Option<Codegen>,
    /// Cycles of the expansion, counted from it when the table is built.
    cycles: u64,
    /// For each operand, a bit per operand it is named with in one bus instruction of
    /// the expansion (its own bit if the expansion names it twice in one).
    meets: Vec<u32>,
}

impl std::fmt::Debug for Def {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.name, self.slots.len())
    }
}

impl Def {
    /// An entry whose derived properties are read off its expansion of placeholders.
    fn new(
        name: &'static str,
        slots: &[Slot],
        family: Family,
        summary: &'static str,
        expand: fn(&[Operand]) -> Vec<BusOp>,
    ) -> Def {
        let args: Vec<Operand> = slots
            .iter()
            .enumerate()
            .map(|(i, s)| s.placeholder(i))
            .collect();
        let ops = expand(&args);
        let cycles = ops.iter().map(BusOp::cycles).sum();
        let mut meets = vec![0u32; slots.len()];
        for op in &ops {
            let named: Vec<usize> = op
                .analogue_regs()
                .iter()
                .filter_map(|r| {
                    (0..slots.len())
                        .find(|&p| slots[p].is_register() && args[p] == Operand::Reg(*r))
                })
                .collect();
            for (i, &p) in named.iter().enumerate() {
                for &q in &named[..i] {
                    meets[p] |= 1 << q;
                    meets[q] |= 1 << p;
                }
            }
        }
        Def {
            name,
            slots: slots.to_vec(),
            family,
            summary,
            expand,
            full_flag_only: false,
            codegen: None,
            cycles,
            meets,
        }
    }

    /// Marks the entry as one the code generator writes.
    fn for_codegen(&mut self, id: Id, basic: bool) -> &mut Def {
        self.codegen = Some(Codegen { id, basic });
        self
    }

    /// Marks the entry as valid only under a full FLAG.
    fn needs_full_flag(&mut self) -> &mut Def {
        self.full_flag_only = true;
        self
    }

    /// Number of operands.
    pub(crate) fn arity(&self) -> usize {
        self.slots.len()
    }

    /// Cycles the statement takes, whatever its operands (read off the expansion).
    pub(crate) fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Whether operands `a` and `b` (positions) are named in one bus instruction of the
    /// expansion, so that writing one register for both breaks the once-per-bus rule.
    pub(crate) fn shares_bus(&self, a: usize, b: usize) -> bool {
        self.meets.get(a).is_some_and(|m| b < 32 && m >> b & 1 == 1)
    }

    /// Positions of the result operands ([`Slot::Dst`]), in order.
    pub(crate) fn results(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.slots.len()).filter(|&i| self.slots[i] == Slot::Dst)
    }

    /// Positions of the source operands ([`Slot::Src`], [`Slot::Acc`]), in order.
    pub(crate) fn sources(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.slots.len()).filter(|&i| matches!(self.slots[i], Slot::Src | Slot::Acc))
    }

    /// Whether result `k` may be written into the register of source `i` (both counted
    /// in their own order): the two never meet in one bus instruction.
    pub(crate) fn may_overwrite(&self, k: usize, i: usize) -> bool {
        match (self.results().nth(k), self.sources().nth(i)) {
            (Some(y), Some(x)) => !self.shares_bus(y, x),
            _ => false,
        }
    }

    /// Whether sources `i` and `j` may be one register: they never meet in one bus
    /// instruction.
    pub(crate) fn may_repeat(&self, i: usize, j: usize) -> bool {
        match (self.sources().nth(i), self.sources().nth(j)) {
            (Some(a), Some(b)) => !self.shares_bus(a, b),
            _ => false,
        }
    }
}

/// The table under construction: each family adds its entries in turn.
struct Defs(Vec<Def>);

impl Defs {
    /// Adds an entry; the returned reference sets its declared properties.
    fn add(
        &mut self,
        name: &'static str,
        slots: &[Slot],
        family: Family,
        summary: &'static str,
        expand: fn(&[Operand]) -> Vec<BusOp>,
    ) -> &mut Def {
        self.0.push(Def::new(name, slots, family, summary, expand));
        let last = self.0.len() - 1;
        &mut self.0[last]
    }
}

/// The whole table, family by family. The order is the one listings and name hints see.
fn build() -> Vec<Def> {
    let mut t = Defs(Vec::new());
    arith::define(&mut t);
    neighbour::define(&mut t);
    capture::define(&mut t);
    flag::define(&mut t);
    bus::define(&mut t);
    digital::define(&mut t);
    t.0
}

static TABLE: LazyLock<Vec<Def>> = LazyLock::new(build);

/// The code generator's entries, indexed by [`Id`] (in [`Id::ALL`] order).
static BY_ID: LazyLock<Vec<&'static Def>> = LazyLock::new(|| {
    Id::ALL
        .iter()
        .map(|&id| {
            table()
                .iter()
                .find(|d| d.codegen.is_some_and(|c| c.id == id))
                .unwrap_or_else(|| unreachable!("no table entry declares {id:?}"))
        })
        .collect()
});

/// The whole instruction table.
pub fn table() -> &'static [Def] {
    &TABLE
}

/// The entry the code generator knows as `id`.
pub(crate) fn entry(id: Id) -> &'static Def {
    BY_ID[id as usize]
}

/// All entries with this name (one per arity).
pub(crate) fn lookup(name: &str) -> impl Iterator<Item = &'static Def> + '_ {
    table().iter().filter(move |d| d.name == name)
}

/// The entry with this name and arity.
#[cfg(test)]
pub(crate) fn find(name: &str, arity: usize) -> Option<&'static Def> {
    lookup(name).find(|d| d.arity() == arity)
}

/// Statements accepted and ignored (kernel delimiters of the vendor library).
pub(crate) const IGNORED: &[&str] = &["scamp5_kernel_begin", "scamp5_kernel_end"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_fit_their_slots() {
        for def in table() {
            for (i, slot) in def.slots.iter().enumerate() {
                let op = slot.placeholder(i);
                assert!(slot.accepts(&op, 6), "{def:?} operand {i}: {op}");
            }
        }
    }

    #[test]
    fn derived_properties_follow_the_expansions() {
        // sub(y, a, b) = bus(NEWS, a); bus(y, NEWS, b): y meets b only.
        let sub = entry(Id::Sub);
        assert_eq!(sub.cycles(), 2);
        assert!(sub.shares_bus(0, 2) && !sub.shares_bus(0, 1) && !sub.shares_bus(1, 2));
        assert!(sub.may_overwrite(0, 0) && !sub.may_overwrite(0, 1) && sub.may_repeat(0, 1));
        // div(y0, y1, y2): five transfers; bus2(y0, y1, y2) names all three.
        let div = entry(Id::Div);
        assert_eq!(div.cycles(), 5);
        assert_eq!(div.results().collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(div.sources().collect::<Vec<_>>(), vec![2]);
        assert!(!div.may_overwrite(0, 0) && !div.may_overwrite(1, 0));
        // add(y, a, b) reads both sources in one transfer.
        assert!(!entry(Id::Add2).may_repeat(0, 1) && entry(Id::Add2).may_overwrite(0, 1));
        // in(a, v): the DAC setting rides on the next word, so two cycles for three ops.
        let input = find("in", 2).expect("in/2");
        assert_eq!(input.cycles(), 2);
        let abs = find("abs", 2).expect("abs/2");
        assert_eq!((abs.cycles(), abs.codegen), (6, None));
        assert!(entry(Id::Mov2x).full_flag_only && !entry(Id::Movx).full_flag_only);
        assert!(entry(Id::Movx).codegen.is_some_and(|c| c.basic));
        assert!(entry(Id::Addx).codegen.is_some_and(|c| !c.basic));
    }
}
