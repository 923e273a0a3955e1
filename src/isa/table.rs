//! The instruction table: every statement a program may contain, its operand slots and
//! its exact expansion into machine-level instructions. Parser, printer, simulator,
//! cycle counter and code generator all read this one table.

use super::op::{dnews_select_regs, BusOp, DigitalOp};
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
    pub fn describe(self) -> String {
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

    /// Whether `op` fits this slot on a device with `general` general registers.
    pub fn accepts(self, op: &Operand, general: usize) -> bool {
        let gen_ok = |r: &Reg| matches!(r, Reg::Gen(i) if usize::from(*i) < general);
        match (self, op) {
            (Slot::Dst | Slot::Acc, Operand::Reg(r)) => gen_ok(r),
            (Slot::Src, Operand::Reg(r)) => gen_ok(r) || matches!(r, Reg::Pix | Reg::In),
            (Slot::BusDst, Operand::Reg(r)) => gen_ok(r) || matches!(r, Reg::News | Reg::X(_)),
            (Slot::BusSrc, Operand::Reg(r)) => !matches!(r, Reg::Gen(_)) || gen_ok(r),
            (Slot::Dir, Operand::Dir(_)) => true,
            (Slot::Value, Operand::Int(v)) => (-128..=127).contains(v),
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
    pub expand: fn(&[Operand]) -> Vec<BusOp>,
}

impl std::fmt::Debug for Def {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.name, self.slots.len())
    }
}

impl Def {
    /// Number of operands.
    pub fn arity(&self) -> usize {
        self.slots.len()
    }
}

const T: Reg = Reg::News;

fn r(ops: &[Operand], i: usize) -> Reg {
    match ops[i] {
        Operand::Reg(r) => r,
        ref o => unreachable!("slot {i} checked to be a register, got {o}"),
    }
}

fn d(ops: &[Operand], i: usize) -> Dir {
    match ops[i] {
        Operand::Dir(d) => d,
        ref o => unreachable!("slot {i} checked to be a direction, got {o}"),
    }
}

fn dr(ops: &[Operand], i: usize) -> DReg {
    match ops[i] {
        Operand::DReg(d) => d,
        ref o => unreachable!("slot {i} checked to be a digital register, got {o}"),
    }
}

fn int(ops: &[Operand], i: usize) -> i64 {
    match ops[i] {
        Operand::Int(v) => v,
        ref o => unreachable!("slot {i} checked to be an integer, got {o}"),
    }
}

fn dirs(ops: &[Operand], i: usize) -> DirSet {
    match ops[i] {
        Operand::Dirs(s) => s,
        Operand::Dir(d) => {
            let mut s = DirSet::default();
            s.0[d.index()] = true;
            s
        }
        ref o => unreachable!("slot {i} checked to be directions, got {o}"),
    }
}

fn regs(ops: &[Operand]) -> Vec<Reg> {
    (0..ops.len()).map(|i| r(ops, i)).collect()
}

fn dregs(ops: &[Operand]) -> Vec<DReg> {
    (0..ops.len()).map(|i| dr(ops, i)).collect()
}

fn bus(dsts: &[Reg], srcs: &[Reg]) -> BusOp {
    BusOp::transfer(dsts, srcs)
}

/// `X~dir`: the neighbour view written so that the receiver gets the value *from* `dir`.
fn toward(dir: Dir) -> Reg {
    Reg::X(dir.opposite())
}

fn dig(op: DigitalOp) -> BusOp {
    BusOp::Digital(op)
}

/// Digital scratch registers the vendor's logic macros overwrite.
const SCRATCH: &[u8] = &[0, 12];
/// Digital registers `DNEWS` uses to select directions.
const DNEWS_SEL: &[u8] = &[1, 2, 3, 4];

/// The reset level `PIX` reads after `rpix()` in a half-range capture.
pub const PIX_RESET_HALF: f32 = 0.0;
/// The reset level `PIX` reads after `rpix()` in a full-range capture (see README).
pub const PIX_RESET_FULL: f32 = 128.0;

fn rpix(level: f32) -> BusOp {
    BusOp::Rpix { level }
}

fn build() -> Vec<Def> {
    use Family::*;
    use Slot::*;
    let mut t: Vec<Def> = Vec::new();
    let mut add = |name, slots: &[Slot], family, summary, expand| {
        t.push(Def {
            name,
            slots: slots.to_vec(),
            family,
            summary,
            expand,
        })
    };

    // Analogue macros (isa.md).
    add("res", &[Dst], Macro, "a := 0", |o| {
        vec![bus(&[T], &[]), bus(&[r(o, 0)], &[T])]
    });
    add("res", &[Dst, Dst], Macro, "a := 0, b := 0", |o| {
        vec![bus(&[T], &[]), bus(&[r(o, 0)], &[T]), bus(&[r(o, 1)], &[T])]
    });
    add("mov", &[Dst, Src], Macro, "y := x0", |o| {
        vec![bus(&[T], &[r(o, 1)]), bus(&[r(o, 0)], &[T])]
    });
    add("add", &[Dst, Src, Src], Macro, "y := x0 + x1", |o| {
        vec![bus(&[T], &[r(o, 1), r(o, 2)]), bus(&[r(o, 0)], &[T])]
    });
    add(
        "add",
        &[Dst, Src, Src, Src],
        Macro,
        "y := x0 + x1 + x2",
        |o| {
            vec![
                bus(&[T], &[r(o, 1), r(o, 2), r(o, 3)]),
                bus(&[r(o, 0)], &[T]),
            ]
        },
    );
    add("sub", &[Dst, Src, Src], Macro, "y := x0 - x1", |o| {
        vec![bus(&[T], &[r(o, 1)]), bus(&[r(o, 0)], &[T, r(o, 2)])]
    });
    add("neg", &[Dst, Src], Macro, "y := -x0", |o| {
        vec![bus(&[T], &[]), bus(&[r(o, 0)], &[T, r(o, 1)])]
    });
    add("abs", &[Dst, Src], Macro, "y := |x0|", |o| {
        let (y, x) = (r(o, 0), r(o, 1));
        vec![
            bus(&[T], &[]),
            bus(&[y], &[T, x]),
            bus(&[T], &[x]),
            BusOp::Where(vec![x]),
            bus(&[y], &[T]),
            BusOp::All,
        ]
    });
    add("divq", &[Dst, Src], Macro, "y0 := x0 / 2", |o| {
        let (y, x) = (r(o, 0), r(o, 1));
        vec![bus(&[y, T], &[x]), bus(&[y], &[T])]
    });
    add(
        "div",
        &[Dst, Dst, Acc],
        Macro,
        "y0 := y2 / 2, y1 := -y2 / 2, y2 kept",
        |o| {
            let (y0, y1, y2) = (r(o, 0), r(o, 1), r(o, 2));
            vec![
                bus(&[y0, y1], &[y2]),
                bus(&[T], &[y2, y1]),
                bus(&[y2], &[T, y0]),
                bus(&[y0, y1], &[y2]),
                bus(&[y0], &[y1]),
            ]
        },
    );
    add(
        "div",
        &[Dst, Dst, Dst, Src],
        Macro,
        "y0 := x0 / 2, y1 := -x0 / 2, y2 := x0",
        |o| {
            let (y0, y1, y2, x) = (r(o, 0), r(o, 1), r(o, 2), r(o, 3));
            vec![
                bus(&[y0, y1], &[x]),
                bus(&[T], &[x, y1]),
                bus(&[y2], &[T, y0]),
                bus(&[y0, y1], &[y2]),
                bus(&[y0], &[y1]),
            ]
        },
    );
    add(
        "diva",
        &[Acc, Dst, Dst],
        Macro,
        "y0 := y0 / 2, y1 := y2 := -y0 / 2",
        |o| {
            let (y0, y1, y2) = (r(o, 0), r(o, 1), r(o, 2));
            vec![
                bus(&[y1, y2], &[y0]),
                bus(&[T], &[y1, y0]),
                bus(&[y0], &[T, y2]),
                bus(&[y1, y2], &[y0]),
                bus(&[y0], &[y1]),
            ]
        },
    );
    add("movx", &[Dst, Src, Dir], Macro, "y := x0 from dir", |o| {
        vec![bus(&[toward(d(o, 2))], &[r(o, 1)]), bus(&[r(o, 0)], &[T])]
    });
    add(
        "mov2x",
        &[Dst, Src, Dir, Dir],
        Macro,
        "y := x0 from dir, then dir2",
        |o| {
            vec![
                bus(&[toward(d(o, 2))], &[r(o, 1)]),
                bus(&[r(o, 0)], &[Reg::X(d(o, 3))]),
            ]
        },
    );
    add(
        "addx",
        &[Dst, Src, Src, Dir],
        Macro,
        "y := (x0 + x1) from dir",
        |o| {
            vec![
                bus(&[toward(d(o, 3))], &[r(o, 1), r(o, 2)]),
                bus(&[r(o, 0)], &[T]),
            ]
        },
    );
    add(
        "add2x",
        &[Dst, Src, Src, Dir, Dir],
        Macro,
        "y := (x0 + x1) from dir, then dir2",
        |o| {
            vec![
                bus(&[toward(d(o, 3))], &[r(o, 1), r(o, 2)]),
                bus(&[r(o, 0)], &[Reg::X(d(o, 4))]),
            ]
        },
    );
    add(
        "subx",
        &[Dst, Src, Dir, Src],
        Macro,
        "y := x0 from dir - x1",
        |o| {
            vec![
                bus(&[toward(d(o, 2))], &[r(o, 1)]),
                bus(&[r(o, 0)], &[T, r(o, 3)]),
            ]
        },
    );
    add(
        "sub2x",
        &[Dst, Src, Dir, Dir, Src],
        Macro,
        "y := x0 from dir, then dir2, - x1",
        |o| {
            vec![
                bus(&[toward(d(o, 2))], &[r(o, 1)]),
                bus(&[r(o, 0)], &[Reg::X(d(o, 3)), r(o, 4)]),
            ]
        },
    );
    add(
        "get_image",
        &[Dst],
        Macro,
        "y := half-range image, reset PIX",
        |o| {
            vec![
                bus(&[T], &[Reg::Pix]),
                rpix(PIX_RESET_HALF),
                rpix(PIX_RESET_HALF),
                BusOp::Nop,
                bus(&[r(o, 0)], &[T, Reg::Pix]),
            ]
        },
    );
    add(
        "get_image",
        &[Dst, Dst],
        Macro,
        "y := full-range image, h := -half-range image",
        |o| {
            let (y, h) = (r(o, 0), r(o, 1));
            vec![
                bus(&[T], &[Reg::Pix]),
                bus(&[h], &[Reg::Pix]),
                rpix(PIX_RESET_FULL),
                rpix(PIX_RESET_FULL),
                BusOp::Nop,
                bus(&[y], &[h, T, Reg::Pix]),
            ]
        },
    );
    for name in ["in", "scamp5_in"] {
        add(
            name,
            &[Dst, Value],
            Macro,
            "a := v (DAC constant) where FLAG is set",
            |o| {
                vec![
                    BusOp::Dac(int(o, 1) as i32),
                    bus(&[T], &[Reg::In]),
                    bus(&[r(o, 0)], &[T]),
                ]
            },
        );
    }
    for n in 1..=3 {
        add(
            "where",
            &[Src; 3][..n],
            Macro,
            "FLAG := (a [+ b [+ c]]) > 0",
            |o| vec![BusOp::Where(regs(o))],
        );
    }
    add("all", &[], Macro, "FLAG := 1", |_| vec![BusOp::All]);
    add("rpix", &[], Bus, "reset PIX (exposure restarts)", |_| {
        vec![rpix(PIX_RESET_HALF)]
    });
    add("nop", &[], Bus, "nothing", |_| vec![BusOp::Nop]);

    // Bus instructions written directly.
    for k in 0..=4 {
        let mut slots = vec![BusDst];
        slots.extend(std::iter::repeat_n(BusSrc, k));
        add("bus", &slots, Bus, "w := -(r1 + .. + rk)", |o| {
            let all = regs(o);
            vec![bus(&all[..1], &all[1..])]
        });
    }
    for k in [0, 1, 2] {
        let mut slots = vec![BusDst, BusDst];
        slots.extend(std::iter::repeat_n(BusSrc, k));
        add("bus2", &slots, Bus, "w1 := w2 := -(r1 [+ r2]) / 2", |o| {
            let all = regs(o);
            vec![bus(&all[..2], &all[2..])]
        });
    }
    add(
        "bus3",
        &[BusDst, BusDst, BusDst, BusSrc],
        Bus,
        "w1 := w2 := w3 := -r1 / 3",
        |o| {
            let all = regs(o);
            vec![bus(&all[..3], &all[3..])]
        },
    );

    // Digital register instructions.
    for k in 1..=4 {
        add(
            "SET",
            &[DDst(&[]); 4][..k],
            Digital,
            "registers := 1",
            |o| vec![dig(DigitalOp::Set(dregs(o)))],
        );
        add(
            "CLR",
            &[DDst(&[]); 4][..k],
            Digital,
            "registers := 0",
            |o| vec![dig(DigitalOp::Clr(dregs(o)))],
        );
    }
    add("MOV", &[DDst(&[]), DSrc(&[])], Digital, "Rl := Rx", |o| {
        vec![dig(DigitalOp::Mov(dr(o, 0), dr(o, 1)))]
    });
    add(
        "NOT",
        &[DDst(&[]), DSrc(&[])],
        Digital,
        "Rl := NOT Rx",
        |o| vec![dig(DigitalOp::Not(dr(o, 0), dr(o, 1)))],
    );
    for k in 2..=4 {
        let mut slots = vec![DDst(&[])];
        slots.extend(std::iter::repeat_n(DSrc(&[]), k));
        add("OR", &slots, Digital, "Rl := Rx OR Ry ...", |o| {
            vec![dig(DigitalOp::Or(dr(o, 0), dregs(&o[1..])))]
        });
        add("NOR", &slots, Digital, "Rl := NOT (Rx OR Ry ...)", |o| {
            vec![dig(DigitalOp::Nor(dr(o, 0), dregs(&o[1..])))]
        });
    }
    add(
        "AND",
        &[DDst(SCRATCH), DSrc(SCRATCH), DSrc(SCRATCH)],
        Digital,
        "Rl := Rx AND Ry (R0, R12 overwritten)",
        |o| {
            let (l, x, y) = (dr(o, 0), dr(o, 1), dr(o, 2));
            vec![
                dig(DigitalOp::Set(vec![DReg::R(0)])),
                dig(DigitalOp::Not(DReg::R(12), x)),
                dig(DigitalOp::Not(DReg::R(0), y)),
                dig(DigitalOp::Nor(l, vec![DReg::R(0), DReg::R(12)])),
            ]
        },
    );
    add(
        "NAND",
        &[DDst(SCRATCH), DSrc(SCRATCH), DSrc(SCRATCH)],
        Digital,
        "Rl := NOT (Rx AND Ry) (R0, R12 overwritten)",
        |o| {
            let (l, x, y) = (dr(o, 0), dr(o, 1), dr(o, 2));
            vec![
                dig(DigitalOp::Set(vec![DReg::R(0)])),
                dig(DigitalOp::Not(DReg::R(12), x)),
                dig(DigitalOp::Not(DReg::R(0), y)),
                dig(DigitalOp::Or(l, vec![DReg::R(0), DReg::R(12)])),
            ]
        },
    );
    add(
        "XOR",
        &[DDst(SCRATCH), DSrc(SCRATCH), DSrc(SCRATCH)],
        Digital,
        "Rl := Rx XOR Ry (R0, R12 overwritten)",
        |o| {
            let (l, x, y) = (dr(o, 0), dr(o, 1), dr(o, 2));
            let (r0, r12) = (DReg::R(0), DReg::R(12));
            vec![
                dig(DigitalOp::Not(r0, y)),
                dig(DigitalOp::Nor(r12, vec![x, r0])),
                dig(DigitalOp::Not(r0, x)),
                dig(DigitalOp::Nor(r0, vec![y, r0])),
                dig(DigitalOp::Or(l, vec![r12, r0])),
            ]
        },
    );
    add(
        "MUX",
        &[DDst(SCRATCH), DSrc(SCRATCH), DSrc(SCRATCH), DSrc(SCRATCH)],
        Digital,
        "Rl := Ry where Rx = 1, Rz where Rx = 0 (R0, R12 overwritten)",
        |o| {
            let (l, x, y, z) = (dr(o, 0), dr(o, 1), dr(o, 2), dr(o, 3));
            let (r0, r12) = (DReg::R(0), DReg::R(12));
            vec![
                dig(DigitalOp::Set(vec![r0])),
                dig(DigitalOp::Mov(r12, z)),
                dig(DigitalOp::Mov(r0, x)),
                dig(DigitalOp::MovIfR0(r12, y)),
                dig(DigitalOp::Mov(l, r12)),
            ]
        },
    );
    add(
        "CLR_IF",
        &[DDst(SCRATCH), DSrc(SCRATCH)],
        Digital,
        "Rl := 0 where Rx = 1 (R0 overwritten)",
        |o| {
            let (l, x) = (dr(o, 0), dr(o, 1));
            vec![
                dig(DigitalOp::Not(DReg::R(0), l)),
                dig(DigitalOp::Nor(l, vec![DReg::R(0), x])),
            ]
        },
    );
    for k in 1..=3 {
        add(
            "WHERE",
            &[DSrc(&[]); 3][..k],
            Digital,
            "FLAG := Rx [OR Ry [OR Rz]]",
            |o| {
                let srcs = dregs(o);
                vec![dig(if srcs.len() == 1 {
                    DigitalOp::Mov(DReg::Flag, srcs[0])
                } else {
                    DigitalOp::Or(DReg::Flag, srcs)
                })]
            },
        );
    }
    add("ALL", &[], Digital, "FLAG := 1", |_| vec![BusOp::All]);
    add(
        "DNEWS",
        &[DDst(DNEWS_SEL), DSrc(DNEWS_SEL), Dirs],
        Digital,
        "Ra := OR of Rx from the given directions (R1..R4 overwritten)",
        |o| dnews_expand(o, false),
    );
    add(
        "DNEWS",
        &[DDst(DNEWS_SEL), DSrc(DNEWS_SEL), Dirs, Bit],
        Digital,
        "Ra := OR of Rx from the given directions, outside reads as boundary",
        |o| dnews_expand(o, int(o, 3) == 1),
    );
    t
}

fn dnews_expand(o: &[Operand], boundary: bool) -> Vec<BusOp> {
    vec![
        dig(DigitalOp::Clr((1..=4).map(DReg::R).collect())),
        dig(DigitalOp::Set(dnews_select_regs(dirs(o, 2)))),
        dig(DigitalOp::DNews {
            dst: dr(o, 0),
            src: dr(o, 1),
            boundary,
        }),
    ]
}

static TABLE: LazyLock<Vec<Def>> = LazyLock::new(build);

/// The whole instruction table.
pub fn table() -> &'static [Def] {
    &TABLE
}

/// All entries with this name (one per arity).
pub fn lookup(name: &str) -> impl Iterator<Item = &'static Def> + '_ {
    table().iter().filter(move |d| d.name == name)
}

/// The entry with this name and arity.
pub fn find(name: &str, arity: usize) -> Option<&'static Def> {
    lookup(name).find(|d| d.arity() == arity)
}

/// Statements accepted and ignored (kernel delimiters of the vendor library).
pub const IGNORED: &[&str] = &["scamp5_kernel_begin", "scamp5_kernel_end"];
