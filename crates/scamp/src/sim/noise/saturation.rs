//! The register range of a profile: a compression that starts at a knee and approaches
//! a limit on each side (docs/noise.md, "Saturation"), the hard clip being the setting
//! whose knees are its limits.

use super::profile::{ordered, ranged};
use crate::sim::layer::saturate::{Form, Saturate};
use serde::{Deserialize, Deserializer, Serialize};

/// The shape of the compression beyond a knee.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum KneeForm {
    /// `knee + room tanh(excess / room)`: approaches the limit exponentially.
    #[default]
    Tanh,
    /// `knee + room excess / (excess + room)`: approaches the limit like `1/excess`.
    Rational,
    /// No compression at all: values pass unchanged and the writes beyond a knee are
    /// only counted (how far a program reaches, as under no saturation).
    None,
}

/// Saturation of every written value, in "in" units: values between the knees are
/// stored as they are; beyond a knee they are compressed towards that side's limit,
/// with slope 1 at the knee.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Saturation {
    /// Lowest value a register holds (approached, never passed).
    pub(crate) low: f64,
    /// Highest value a register holds.
    pub(crate) high: f64,
    /// Where the compression starts below (`low` itself: a hard clip).
    pub(crate) knee_low: f64,
    /// Where the compression starts above (`high` itself: a hard clip).
    pub(crate) knee_high: f64,
    /// The shape beyond the knees.
    pub(crate) form: KneeForm,
}

/// Largest magnitude of a limit or knee: well past the values deep networks reach on
/// the device (docs/noise.md).
pub const MAX_LEVEL: f64 = 8192.0;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SaturationRaw {
    #[serde(deserialize_with = "sat_level")]
    low: f64,
    #[serde(deserialize_with = "sat_level")]
    high: f64,
    #[serde(default, deserialize_with = "some_sat_level")]
    knee_low: Option<f64>,
    #[serde(default, deserialize_with = "some_sat_level")]
    knee_high: Option<f64>,
    #[serde(default)]
    form: KneeForm,
}

fn sat_level<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    ranged(d, -MAX_LEVEL, MAX_LEVEL, "a saturation level")
}

fn some_sat_level<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    sat_level(d).map(Some)
}

impl<'de> Deserialize<'de> for Saturation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let r = SaturationRaw::deserialize(d)?;
        ordered("saturation", r.low, r.high)?;
        let knee_low = r.knee_low.unwrap_or(r.low);
        let knee_high = r.knee_high.unwrap_or(r.high);
        if !(r.low..=r.high).contains(&knee_low) || knee_low >= knee_high {
            return Err(D::Error::custom(format!(
                "saturation: knee_low ({knee_low}) must lie in low..high ({}..{}) and below \
                 knee_high ({knee_high})",
                r.low, r.high
            )));
        }
        if knee_high > r.high {
            return Err(D::Error::custom(format!(
                "saturation: knee_high ({knee_high}) must not be above high ({})",
                r.high
            )));
        }
        Ok(Saturation {
            low: r.low,
            high: r.high,
            knee_low,
            knee_high,
            form: r.form,
        })
    }
}

impl Saturation {
    /// A hard clip to `low..=high`.
    pub fn hard(low: f64, high: f64) -> Saturation {
        Saturation {
            low,
            high,
            knee_low: low,
            knee_high: high,
            form: KneeForm::default(),
        }
    }

    /// Whether values are clipped at the limits rather than compressed.
    #[cfg(test)]
    pub(crate) fn is_hard(&self) -> bool {
        self.form != KneeForm::None && self.knee_low == self.low && self.knee_high == self.high
    }

    /// The same limits, values passing unchanged and the writes beyond the limits
    /// counted (form `none` with the knees at the limits).
    pub(crate) fn counting_limits(&self) -> Saturation {
        Saturation {
            knee_low: self.low,
            knee_high: self.high,
            form: KneeForm::None,
            ..self.clone()
        }
    }

    /// The nearer knee as one magnitude: values up to it are stored unchanged.
    pub fn knee(&self) -> f64 {
        self.knee_low.abs().min(self.knee_high.abs())
    }

    /// The nearer limit as one magnitude.
    pub fn limit(&self) -> f64 {
        self.low.abs().min(self.high.abs())
    }

    /// The same shape with knees at `-knee, knee` and limits at `-limit, limit`
    /// (the knee no further out than the limit).
    pub fn symmetric(&self, knee: f64, limit: f64) -> Saturation {
        let knee = knee.min(limit);
        Saturation {
            low: -limit,
            high: limit,
            knee_low: -knee,
            knee_high: knee,
            form: self.form,
        }
    }

    /// `v` through the compression, in f64 (the tests' reference).
    #[cfg(test)]
    pub(crate) fn apply(&self, v: f64) -> f64 {
        if self.form == KneeForm::None {
            return v;
        }
        let room = |r: f64| r.max(0.0);
        let soft = |excess: f64, room: f64| {
            if room == 0.0 {
                return 0.0;
            }
            let t = excess / room;
            room * match self.form {
                KneeForm::Tanh => t.tanh(),
                KneeForm::Rational => 1.0 - 1.0 / (1.0 + t),
                KneeForm::None => t,
            }
        };
        if v > self.knee_high {
            self.knee_high + soft(v - self.knee_high, room(self.high - self.knee_high))
        } else if v < self.knee_low {
            self.knee_low - soft(self.knee_low - v, room(self.knee_low - self.low))
        } else {
            v
        }
    }

    /// The f32 form the simulator's write loop applies.
    pub(crate) fn resolve(&self) -> Saturate {
        let form = match self.form {
            KneeForm::Tanh => Form::Tanh,
            KneeForm::Rational => Form::Rational,
            KneeForm::None => Form::Count,
        };
        let (lo, hi) = (self.low as f32, self.high as f32);
        Saturate::knees(lo, hi, self.knee_low as f32, self.knee_high as f32, form).resolve_plain()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::noise::Profile;

    fn parse(text: &str) -> Result<Saturation, crate::sim::noise::ProfileError> {
        Profile::from_yaml(text, "p.yaml").map(|p| p.saturation.expect("a saturation"))
    }

    #[test]
    fn knees_default_to_the_limits() {
        let s = parse("saturation: {low: -128, high: 128}\n").unwrap();
        assert!(s.is_hard());
        assert_eq!(
            (s.apply(200.0), s.apply(-300.0), s.apply(5.5)),
            (128.0, -128.0, 5.5)
        );
    }

    #[test]
    fn soft_forms_start_at_the_knee_and_approach_the_limit() {
        for form in ["tanh", "rational"] {
            let text = format!(
                "saturation: {{low: -1000, high: 1000, knee_low: -200, knee_high: 100, form: {form}}}\n"
            );
            let s = parse(&text).unwrap();
            assert!(!s.is_hard());
            assert_eq!(s.apply(100.0), 100.0);
            assert_eq!(s.apply(-200.0), -200.0);
            // Slope 1 at the knee, then below the line, never past the limit.
            assert!((s.apply(101.0) - 101.0).abs() < 1e-2, "{form}");
            let far = s.apply(1e6);
            assert!(far <= 1000.0 && far > 990.0, "{form}: {far}");
            assert!(s.apply(500.0) < 500.0 && s.apply(500.0) > 100.0);
            assert!(s.apply(-5000.0) >= -1000.0 && s.apply(-5000.0) < -200.0);
        }
        let t = parse("saturation: {low: -1000, high: 1000, knee_high: 100}\n").unwrap();
        // tanh(1) of the room of 900 past the knee.
        assert!((t.apply(1000.0) - (100.0 + 900.0 * 1f64.tanh())).abs() < 1e-9);
    }

    #[test]
    fn bad_values_are_positioned_errors() {
        let e = parse("saturation: {low: -10, high: 10, knee_high: 20}\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(
            e.cause
                .to_string()
                .contains("knee_high (20) must not be above high (10)"),
            "{e}"
        );
        let text = "saturation:\n  low: -10\n  high: 10\n  knee_low: 5\n  knee_high: 2\n";
        let e = parse(text).unwrap_err();
        assert_eq!((e.line, e.col), (4, 13), "{e}");
        assert!(
            e.cause
                .to_string()
                .contains("knee_low (5) must lie in low..high"),
            "{e}"
        );
        let e = parse("saturation: {low: -10, high: 10, knee_low: -11}\n").unwrap_err();
        assert!(e.cause.to_string().contains("knee_low (-11)"), "{e}");
        let e = parse("saturation: {low: -10, high: 10, form: cubic}\n").unwrap_err();
        assert_eq!((e.line, e.col), (1, 40), "{e}");
        assert!(
            e.cause.to_string().contains("unknown variant `cubic`"),
            "{e}"
        );
        let e = parse("saturation: {low: -9000, high: 10}\n").unwrap_err();
        assert_eq!((e.line, e.col), (1, 19), "{e}");
        assert!(
            e.cause
                .to_string()
                .contains("saturation level must be a number in -8192..8192"),
            "{e}"
        );
    }
}
