//! What a register holds before a program runs: a constant, or each PE's own column or
//! row number (the ramps the tutorial's `// given: A = col` lines use). `scamp run
//! --set` and the playground of `scamp serve` both preload through this.

use super::{Array, N, PES};
use crate::isa::{DReg, Reg};
use crate::ValueError;

/// Largest magnitude a preloaded value may have: the level range of a noise profile.
pub const MAX_VALUE: f32 = 1024.0;

/// A plane filled with each PE's own coordinate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ramp {
    /// Each PE holds its column number (0 west .. 255 east).
    Col,
    /// Each PE holds its row number (0 north .. 255 south).
    Row,
}

/// The 256x256 plane of a ramp, row-major.
pub(crate) fn ramp(r: Ramp) -> Vec<f32> {
    (0..PES)
        .map(|i| match r {
            Ramp::Col => (i % N) as f32,
            Ramp::Row => (i / N) as f32,
        })
        .collect()
}

/// What an analogue register is filled with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fill {
    /// The same value everywhere.
    Const(f32),
    /// A coordinate ramp.
    Ramp(Ramp),
}

impl Fill {
    /// Parses `col`, `row` or a number within ±[`MAX_VALUE`].
    pub(crate) fn parse(value: &str) -> Result<Fill, ValueError> {
        match value.trim() {
            "col" => return Ok(Fill::Ramp(Ramp::Col)),
            "row" => return Ok(Fill::Ramp(Ramp::Row)),
            _ => {}
        }
        let v: f32 = value.trim().parse().map_err(|_| ValueError::NotFill {
            given: value.to_string(),
        })?;
        if !(v.is_finite() && v.abs() <= MAX_VALUE) {
            return Err(ValueError::OutsideRegister { value: v });
        }
        Ok(Fill::Const(v))
    }

    /// The plane this fill gives.
    pub(crate) fn plane(self) -> Vec<f32> {
        match self {
            Fill::Const(v) => vec![v; PES],
            Fill::Ramp(r) => ramp(r),
        }
    }
}

/// One register's preload: `A=col`, `B=-3.5`, `NEWS=7`, `R5=1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Preload {
    /// An analogue register and its fill.
    Analogue(Reg, Fill),
    /// A digital register set to 0 or 1 everywhere.
    Digital(DReg, u8),
}

impl Preload {
    /// Parses `name` and `value` for a device with `general` general registers.
    pub fn parse(name: &str, value: &str, general: usize) -> Result<Preload, ValueError> {
        let name = name.trim();
        if let Some(d) = DReg::parse(name) {
            return match value.trim() {
                "0" => Ok(Preload::Digital(d, 0)),
                "1" => Ok(Preload::Digital(d, 1)),
                _ => Err(ValueError::NotBit),
            };
        }
        let reg = Reg::parse(name)
            .filter(|r| matches!(r, Reg::Gen(i) if usize::from(*i) < general) || *r == Reg::News)
            .ok_or_else(|| ValueError::UnknownRegister {
                name: name.to_string(),
                last: Reg::general_name(general.max(1) - 1),
            })?;
        Ok(Preload::Analogue(reg, Fill::parse(value)?))
    }

    /// Writes the preload into `array`.
    pub fn apply(self, array: &mut Array) {
        match self {
            Preload::Analogue(reg, fill) => {
                if let Some(plane) = array.plane_mut(reg) {
                    plane.copy_from_slice(&fill.plane());
                }
            }
            Preload::Digital(d, bit) => {
                array.bits_mut(d).fill(bit);
                array.refresh_flag();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramps_hold_each_pes_coordinate() {
        let c = ramp(Ramp::Col);
        let r = ramp(Ramp::Row);
        assert_eq!((c[0], c[255], c[256 + 7]), (0.0, 255.0, 7.0));
        assert_eq!((r[0], r[255], r[256 * 9 + 3]), (0.0, 0.0, 9.0));
    }

    #[test]
    fn parses_numbers_ramps_and_digital_bits() {
        assert_eq!(Fill::parse("col"), Ok(Fill::Ramp(Ramp::Col)));
        assert_eq!(Fill::parse(" -2.5"), Ok(Fill::Const(-2.5)));
        assert!(Fill::parse("1025").is_err());
        assert!(Fill::parse("nan").is_err());
        assert!(Fill::parse("column").is_err());
        assert_eq!(
            Preload::parse("R5", "1", 6),
            Ok(Preload::Digital(DReg::R(5), 1))
        );
        assert!(Preload::parse("R5", "col", 6).is_err());
        assert!(Preload::parse("G", "1", 6)
            .unwrap_err()
            .to_string()
            .contains("A..F"));
        let mut a = Array::new(6, crate::sim::EdgeMode::Zero);
        Preload::parse("B", "row", 6).unwrap().apply(&mut a);
        assert_eq!(a.read(Reg::B, 17, 3), 17.0);
    }
}
