//! Registers and directions of the SCAMP-5 processing element.

use std::fmt;

/// A compass direction on the array. Row 0 is north (top), column 0 is west (left).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dir {
    /// Row - 1.
    North,
    /// Column + 1.
    East,
    /// Row + 1.
    South,
    /// Column - 1.
    West,
}

impl Dir {
    /// All four directions, in N, E, S, W order.
    pub const ALL: [Dir; 4] = [Dir::North, Dir::East, Dir::South, Dir::West];

    /// The direction pointing the other way.
    pub(crate) fn opposite(self) -> Dir {
        match self {
            Dir::North => Dir::South,
            Dir::East => Dir::West,
            Dir::South => Dir::North,
            Dir::West => Dir::East,
        }
    }

    /// (row, column) step of one move in this direction.
    pub fn step(self) -> (i32, i32) {
        match self {
            Dir::North => (-1, 0),
            Dir::East => (0, 1),
            Dir::South => (1, 0),
            Dir::West => (0, -1),
        }
    }

    /// Lower-case name as written in programs.
    pub fn name(self) -> &'static str {
        match self {
            Dir::North => "north",
            Dir::East => "east",
            Dir::South => "south",
            Dir::West => "west",
        }
    }

    /// Parses a lower-case direction name.
    pub(crate) fn parse(s: &str) -> Option<Dir> {
        Dir::ALL.into_iter().find(|d| d.name() == s)
    }

    /// Index 0..4 in N, E, S, W order.
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of directions (for `DNEWS`), written `north|east`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct DirSet(pub [bool; 4]);

impl DirSet {
    /// Whether `d` is in the set.
    pub(crate) fn contains(self, d: Dir) -> bool {
        self.0[d.index()]
    }

    /// The directions in the set, N, E, S, W order.
    pub(crate) fn iter(self) -> impl Iterator<Item = Dir> {
        Dir::ALL.into_iter().filter(move |d| self.contains(*d))
    }
}

impl fmt::Display for DirSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Dir::name).collect();
        f.write_str(&names.join("|"))
    }
}

/// An analogue location a bus instruction can read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reg {
    /// General-purpose register: 0 = `A`, 1 = `B`, ... (SCAMP-5 has `A`..`F`).
    Gen(u8),
    /// The bus scratch / neighbour-exchange register (`T` in the vendor's macros).
    News,
    /// The photodiode.
    Pix,
    /// The DAC input.
    In,
    /// `XN`/`XE`/`XS`/`XW`: the `NEWS` register of the neighbour in that direction.
    X(Dir),
}

impl Reg {
    /// General register `A`.
    pub const A: Reg = Reg::Gen(0);
    /// General register `B`.
    pub const B: Reg = Reg::Gen(1);
    /// General register `C`.
    pub const C: Reg = Reg::Gen(2);
    /// General register `D`.
    pub const D: Reg = Reg::Gen(3);
    /// General register `E`.
    pub const E: Reg = Reg::Gen(4);
    /// General register `F`.
    pub const F: Reg = Reg::Gen(5);

    /// How many general registers a device needs to hold every one of `regs` (the
    /// highest general register's letter; 0 when there is none).
    pub(crate) fn general_count(regs: &[Reg]) -> usize {
        regs.iter()
            .map(|r| match r {
                Reg::Gen(i) => usize::from(*i) + 1,
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }

    /// Whether this is one of the general-purpose registers.
    pub(crate) fn is_general(self) -> bool {
        matches!(self, Reg::Gen(_))
    }

    /// Parses a register name. General registers are single letters `A`..`Z`; whether a
    /// letter exists on the device is checked by the caller.
    pub fn parse(s: &str) -> Option<Reg> {
        Some(match s {
            "NEWS" | "T" => Reg::News,
            "PIX" => Reg::Pix,
            "IN" => Reg::In,
            "XN" => Reg::X(Dir::North),
            "XE" => Reg::X(Dir::East),
            "XS" => Reg::X(Dir::South),
            "XW" => Reg::X(Dir::West),
            _ => {
                let b = s.as_bytes();
                if b.len() == 1 && b[0].is_ascii_uppercase() {
                    Reg::Gen(b[0] - b'A')
                } else {
                    return None;
                }
            }
        })
    }

    /// Name of general register `i` (`A`, `B`, ...).
    pub fn general_name(i: usize) -> String {
        char::from(b'A' + i as u8).to_string()
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reg::Gen(i) => write!(f, "{}", char::from(b'A' + i)),
            Reg::News => f.write_str("NEWS"),
            Reg::Pix => f.write_str("PIX"),
            Reg::In => f.write_str("IN"),
            Reg::X(d) => write!(f, "X{}", &d.name()[..1].to_uppercase()),
        }
    }
}

/// A one-bit digital register: `R0`..`R12` or `FLAG`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DReg {
    /// `R0`..`R12`.
    R(u8),
    /// The activity flag: analogue writes land only where it is 1.
    Flag,
}

impl DReg {
    /// Number of `R` registers.
    pub(crate) const COUNT: usize = 13;

    /// Parses `R0`..`R12` or `FLAG`.
    pub fn parse(s: &str) -> Option<DReg> {
        if s == "FLAG" {
            return Some(DReg::Flag);
        }
        let n: u8 = s.strip_prefix('R')?.parse().ok()?;
        if s.len() > 2 && s.as_bytes()[1] == b'0' {
            return None;
        }
        (usize::from(n) < Self::COUNT).then_some(DReg::R(n))
    }

    /// Plane index: `R0..R12` are 0..12, `FLAG` is 13.
    pub(crate) fn index(self) -> usize {
        match self {
            DReg::R(i) => usize::from(i),
            DReg::Flag => Self::COUNT,
        }
    }
}

impl fmt::Display for DReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DReg::R(i) => write!(f, "R{i}"),
            DReg::Flag => f.write_str("FLAG"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in ["A", "F", "NEWS", "PIX", "IN", "XN", "XE", "XS", "XW"] {
            assert_eq!(Reg::parse(s).map(|r| r.to_string()).as_deref(), Some(s));
        }
        assert_eq!(Reg::parse("T"), Some(Reg::News));
        assert_eq!(Reg::parse("a"), None);
        assert_eq!(DReg::parse("R12"), Some(DReg::R(12)));
        assert_eq!(DReg::parse("R13"), None);
        assert_eq!(DReg::parse("R01"), None);
        assert_eq!(Dir::East.opposite(), Dir::West);
    }
}
