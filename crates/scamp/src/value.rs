//! Why a value given as text (a flag, a keyword, a preload, a playground field) was
//! refused: one typed error for every small parser of the library, so a front end can
//! tell the kinds apart without reading the message.

use crate::cain::spec::{RangeError, Whole};
use crate::isa::text::quote;
use crate::sim::preload::MAX_VALUE;

/// A value refused by one of the library's text parsers ([`crate::Ops`]'s,
/// [`crate::Objective`]'s and [`crate::EdgeMode`]'s `FromStr`, [`crate::parse_registers`],
/// [`crate::check_tolerance`], [`Whole::parse`], [`crate::RegisterFill::parse`]). Its
/// message is the one the command line prints after the flag's name.
///
/// ```
/// use scamp::{Ops, ValueError};
/// let e = "most".parse::<Ops>().unwrap_err();
/// assert_eq!(e, ValueError::Unknown { what: "instruction set", given: "most".into(), expected: "all or basic" });
/// assert_eq!(e.to_string(), "unknown instruction set \"most\" (all or basic)");
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// A name that is not one of a closed set's (an instruction set, an objective).
    #[error("unknown {what} {given:?} ({expected})")]
    Unknown {
        /// What was named (`instruction set`).
        what: &'static str,
        /// The text given.
        given: String,
        /// The names accepted, as the message lists them.
        expected: &'static str,
    },
    /// An edge mode other than `zero`, `replicate` and `wrap`.
    #[error("unknown edge mode `{given}` (expected zero, replicate or wrap)")]
    UnknownEdgeMode {
        /// The text given.
        given: String,
    },
    /// A register named twice in a register list.
    #[error("{name} listed twice")]
    RegisterTwice {
        /// The register.
        name: String,
    },
    /// A register list entry that is not a general register.
    #[error("`{name}` is not a general register (A, B, ...)")]
    NotGeneral {
        /// The entry.
        name: String,
    },
    /// An empty register list.
    #[error("no register given")]
    NoRegister,
    /// A tolerance that is negative, infinite or NaN.
    #[error("{value} is not a finite number >= 0")]
    NotNonNegative {
        /// The number given.
        value: f64,
    },
    /// Text that is not a whole number where `rule` takes one.
    #[error("`{}` is not a whole number ({} takes {}..={})", quote(given), rule.what, rule.lo, rule.hi)]
    NotWhole {
        /// The range the key takes.
        rule: Whole,
        /// The text given.
        given: String,
    },
    /// A whole number with too many digits for any range (its digits are kept as given).
    #[error("{} must be between {} and {}, got {}", rule.what, rule.lo, rule.hi, quote(given))]
    TooLarge {
        /// The range the key takes.
        rule: Whole,
        /// The digits given.
        given: String,
    },
    /// A number outside its range.
    #[error(transparent)]
    Range(#[from] RangeError),
    /// A register fill that is neither a number nor `col` or `row`.
    #[error("`{given}` is not a number, `col` or `row`")]
    NotFill {
        /// The text given.
        given: String,
    },
    /// A fill outside what an analogue register holds.
    #[error("{value} is outside the register range -{MAX_VALUE}..{MAX_VALUE}")]
    OutsideRegister {
        /// The value given.
        value: f32,
    },
    /// A digital register set to something other than 0 or 1.
    #[error("a digital register takes 0 or 1")]
    NotBit,
    /// A preload of a register the device does not have.
    #[error("unknown register `{name}` (expected A..{last}, NEWS, R0..R12 or FLAG)")]
    UnknownRegister {
        /// The name given.
        name: String,
        /// The device's last general register.
        last: String,
    },
}

#[cfg(test)]
mod tests {
    use super::ValueError;
    use crate::{check_tolerance, parse_registers, EdgeMode, Objective, RegisterFill, RUNS};

    /// Each parser's refusal: its kind, and the message the command line has always
    /// printed for it.
    #[test]
    fn each_refusal_has_its_kind_and_message() {
        let cases: Vec<(ValueError, &str)> = vec![
            (
                "fast".parse::<Objective>().unwrap_err(),
                "unknown objective \"fast\" (length or error)",
            ),
            (
                "mirror".parse::<EdgeMode>().unwrap_err(),
                "unknown edge mode `mirror` (expected zero, replicate or wrap)",
            ),
            (
                parse_registers(["A", "B", "A"]).unwrap_err(),
                "A listed twice",
            ),
            (
                parse_registers(["A", "NEWS"]).unwrap_err(),
                "`NEWS` is not a general register (A, B, ...)",
            ),
            (parse_registers([" ", ""]).unwrap_err(), "no register given"),
            (
                check_tolerance(f64::NAN).unwrap_err(),
                "NaN is not a finite number >= 0",
            ),
            (
                RUNS.parse("ten").unwrap_err(),
                "`ten` is not a whole number (runs takes 1..=100000)",
            ),
            (
                RUNS.parse("0").unwrap_err(),
                "runs must be between 1 and 100000, got 0",
            ),
            (
                RUNS.parse("99999999999999999999999999999999999999999").unwrap_err(),
                // Long text is shortened when shown, as everywhere.
                "runs must be between 1 and 100000, got 9999999999999999999999999999999999999999... (41 bytes)",
            ),
            (
                RegisterFill::parse("A", "colour", 6).unwrap_err(),
                "`colour` is not a number, `col` or `row`",
            ),
            (
                RegisterFill::parse("A", "2000", 6).unwrap_err(),
                "2000 is outside the register range -1024..1024",
            ),
            (
                RegisterFill::parse("R3", "2", 6).unwrap_err(),
                "a digital register takes 0 or 1",
            ),
            (
                RegisterFill::parse("G", "1", 6).unwrap_err(),
                "unknown register `G` (expected A..F, NEWS, R0..R12 or FLAG)",
            ),
        ];
        for (e, message) in &cases {
            assert_eq!(e.to_string(), *message, "{e:?}");
        }
        assert!(matches!(
            cases[0].0,
            ValueError::Unknown {
                what: "objective",
                ..
            }
        ));
        assert!(matches!(cases[1].0, ValueError::UnknownEdgeMode { .. }));
        assert!(matches!(cases[2].0, ValueError::RegisterTwice { .. }));
        assert!(matches!(cases[3].0, ValueError::NotGeneral { .. }));
        assert_eq!(cases[4].0, ValueError::NoRegister);
        assert!(matches!(cases[5].0, ValueError::NotNonNegative { .. }));
        assert!(matches!(cases[6].0, ValueError::NotWhole { .. }));
        assert!(matches!(cases[7].0, ValueError::Range(_)));
        assert!(matches!(cases[8].0, ValueError::TooLarge { .. }));
        assert!(matches!(cases[9].0, ValueError::NotFill { .. }));
        assert!(matches!(cases[10].0, ValueError::OutsideRegister { .. }));
        assert_eq!(cases[11].0, ValueError::NotBit);
        assert!(matches!(cases[12].0, ValueError::UnknownRegister { .. }));
    }
}
