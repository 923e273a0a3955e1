//! What the measurements leave open: a profile's uncertainty description (plain data of
//! the profile) and how each parameter moves a profile (docs/noise.md, "Error bars").
//! The ensemble drawn from it, checked against both device experiments, runs the
//! simulator and so lives above `sim`, in `crate::verify::ensemble`.
//!
//! Each parameter below moves the profile along a direction that the measurements do
//! not see (to first order), compensating where needed so that the measured
//! combination stays where the fit put it. Second-order effects are caught by running
//! both experiments on every member and rejecting those that leave the calibration
//! tolerance.

use super::profile::Profile;
use serde::{Deserialize, Deserializer, Serialize};

/// The uncertainty of a profile: the range of each parameter the data do not pin down,
/// and how many members to draw.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Uncertainty {
    /// Members drawn at random inside every range at once (besides the nominal
    /// profile and each range's two ends), 0..=64.
    #[serde(default = "default_samples", deserialize_with = "samples")]
    pub(crate) samples: u32,
    /// Seed of those draws (the ensemble is a pure function of the profile).
    #[serde(default)]
    pub(crate) seed: u64,
    /// The offset `c` of every plain `bus` transfer; `bus2` and `bus3` keep their
    /// measured excess over it (an offset common to every transfer cancels in both
    /// experiments).
    #[serde(default, deserialize_with = "offset_range")]
    pub(crate) plain_offset: Option<Range>,
    /// `bus2` gain over `bus` gain (`bus3`: its power log2 3); the `bus` gain follows
    /// so that the identity kernel's loss per pass stays the measured one.
    #[serde(default, deserialize_with = "ratio_range")]
    pub(crate) gain_ratio: Option<Range>,
    /// How much more fixed pattern and temporal noise a `bus2` receiver shows than a
    /// `bus` one (`bus3`: its power log2 3); both are rescaled so that the spread the
    /// identity kernel accumulates per pass stays the same.
    #[serde(default, deserialize_with = "ratio_range")]
    pub(crate) pattern_ratio: Option<Range>,
    /// A factor on the capture error (no measurement covers it).
    #[serde(default, deserialize_with = "ratio_range")]
    pub(crate) capture_scale: Option<Range>,
    /// Where saturation starts, as a magnitude (knees at `-v` and `v`); the limits
    /// stay (a knee no further out than the limit).
    #[serde(default, deserialize_with = "level_range")]
    pub(crate) saturation_knee: Option<Range>,
    /// The register limit, as a magnitude (limits at `-v` and `v`); the knees stay
    /// (moved in to the limit when it is below them).
    #[serde(default, deserialize_with = "level_range")]
    pub(crate) saturation_limit: Option<Range>,
}

fn default_samples() -> u32 {
    8
}

/// A closed range `low..=high` of one parameter.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct Range {
    /// Lowest value consistent with the measurements.
    pub(crate) low: f64,
    /// Highest value.
    pub(crate) high: f64,
}

/// Reads a range `{low, high}` whose ends lie in `lo..=hi`, `low <= high`. The checks
/// run inside the visitor of the range's own mapping, so that errors carry its position.
struct RangeVisitor {
    lo: f64,
    hi: f64,
}

impl<'de> serde::de::Visitor<'de> for RangeVisitor {
    type Value = Range;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "a range {{low: .., high: ..}} with ends in {}..{}",
            self.lo, self.hi
        )
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Range, A::Error> {
        use serde::de::Error;
        let (mut low, mut high) = (None, None);
        while let Some(key) = map.next_key::<String>()? {
            let slot = match key.as_str() {
                "low" => &mut low,
                "high" => &mut high,
                other => return Err(A::Error::unknown_field(other, &["low", "high"])),
            };
            let v: f64 = map.next_value()?;
            if !v.is_finite() || v < self.lo || v > self.hi {
                return Err(A::Error::custom(format!(
                    "uncertainty range: {key} must be a number in {}..{}, got {v}",
                    self.lo, self.hi
                )));
            }
            *slot = Some(v);
        }
        let low = low.ok_or_else(|| A::Error::missing_field("low"))?;
        let high = high.ok_or_else(|| A::Error::missing_field("high"))?;
        if low > high {
            return Err(A::Error::custom(format!(
                "uncertainty range: low ({low}) must not be above high ({high})"
            )));
        }
        Ok(Range { low, high })
    }
}

fn range<'de, D: Deserializer<'de>>(d: D, lo: f64, hi: f64) -> Result<Option<Range>, D::Error> {
    d.deserialize_map(RangeVisitor { lo, hi }).map(Some)
}

fn offset_range<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Range>, D::Error> {
    range(d, -64.0, 64.0)
}

fn ratio_range<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Range>, D::Error> {
    range(d, 0.0, 10.0)
}

fn level_range<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Range>, D::Error> {
    range(d, 0.0, super::saturation::MAX_LEVEL)
}

fn samples<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    use serde::de::Error;
    let n = u32::deserialize(d)?;
    if n > 64 {
        return Err(D::Error::custom(format!(
            "uncertainty samples must be at most 64, got {n}"
        )));
    }
    Ok(n)
}

/// The parameters, in the order of the profile file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parameter {
    /// [`Uncertainty::plain_offset`].
    PlainOffset,
    /// [`Uncertainty::gain_ratio`].
    GainRatio,
    /// [`Uncertainty::pattern_ratio`].
    PatternRatio,
    /// [`Uncertainty::capture_scale`].
    CaptureScale,
    /// [`Uncertainty::saturation_knee`].
    SaturationKnee,
    /// [`Uncertainty::saturation_limit`].
    SaturationLimit,
}

impl Parameter {
    /// Every parameter.
    pub(crate) const ALL: [Parameter; 6] = [
        Parameter::PlainOffset,
        Parameter::GainRatio,
        Parameter::PatternRatio,
        Parameter::CaptureScale,
        Parameter::SaturationKnee,
        Parameter::SaturationLimit,
    ];

    /// Whether the parameter describes the register range (reports show the spread
    /// these alone give apart from the rest).
    pub(crate) fn is_saturation(self) -> bool {
        matches!(self, Parameter::SaturationKnee | Parameter::SaturationLimit)
    }

    /// The key in the profile.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Parameter::PlainOffset => "plain_offset",
            Parameter::GainRatio => "gain_ratio",
            Parameter::PatternRatio => "pattern_ratio",
            Parameter::CaptureScale => "capture_scale",
            Parameter::SaturationKnee => "saturation_knee",
            Parameter::SaturationLimit => "saturation_limit",
        }
    }

    /// The parameter's value in `p` itself.
    pub(crate) fn nominal(self, p: &Profile) -> f64 {
        let t = &p.transfer;
        let ratio = |a: f64, b: f64| if b == 0.0 { 1.0 } else { a / b };
        match self {
            Parameter::PlainOffset => t.bus_1.offset,
            Parameter::GainRatio => ratio(t.bus2.gain, t.bus_1.gain),
            Parameter::PatternRatio => ratio(t.bus2.pattern, t.bus_1.pattern),
            Parameter::CaptureScale => 1.0,
            Parameter::SaturationKnee => p.saturation.as_ref().map_or(0.0, |s| s.knee()),
            Parameter::SaturationLimit => p.saturation.as_ref().map_or(0.0, |s| s.limit()),
        }
    }

    /// `p` with the parameter at `v` (and the compensation the module doc describes).
    pub(crate) fn apply(self, p: &Profile, v: f64) -> Profile {
        let mut q = p.clone();
        let nominal = self.nominal(p);
        // A kind with n receivers scales like n^log2(ratio): 1, ratio, ratio^log2(3).
        let power = |ratio: f64, n: usize| ratio.powf((n as f64).log2());
        match self {
            Parameter::PlainOffset => {
                for (_, t) in q.transfer.all_mut() {
                    t.offset += v - nominal;
                }
            }
            Parameter::GainRatio => {
                // The identity kernel's loss per pass is 5.5 g + h to first order
                // (g: bus gain, h: bus2 gain; docs/noise.md).
                let loss = 5.5 * p.transfer.bus_1.gain + p.transfer.bus2.gain;
                let g = loss / (5.5 + v);
                for (kind, t) in q.transfer.all_mut() {
                    t.gain = g * power(v, kind.receivers());
                }
            }
            Parameter::PatternRatio => {
                // Per pass the kernel's pattern and noise variance gathers 7 bus and 2
                // bus2 receivers' worth.
                let scale = ((7.0 + 2.0 * nominal * nominal) / (7.0 + 2.0 * v * v)).sqrt();
                let (pattern, noise) = (p.transfer.bus_1.pattern, p.transfer.bus_1.noise);
                for (kind, t) in q.transfer.all_mut() {
                    let k = power(v, kind.receivers());
                    t.pattern = pattern * k;
                    t.noise = noise * k * scale;
                }
                q.fixed_pattern.gain *= scale;
                q.fixed_pattern.offset *= scale;
            }
            Parameter::CaptureScale => {
                q.capture.pattern_gain *= v;
                q.capture.pattern_offset *= v;
                q.capture.noise *= v;
                q.capture.noise_signal *= v;
            }
            // A profile without saturation has no range to move.
            Parameter::SaturationKnee => {
                q.saturation = p.saturation.as_ref().map(|s| s.symmetric(v, s.limit()));
            }
            Parameter::SaturationLimit => {
                q.saturation = p.saturation.as_ref().map(|s| s.symmetric(s.knee(), v));
            }
        }
        q
    }
}

impl Uncertainty {
    /// The range of `p`, if the profile gives one.
    pub(crate) fn range(&self, p: Parameter) -> Option<Range> {
        match p {
            Parameter::PlainOffset => self.plain_offset,
            Parameter::GainRatio => self.gain_ratio,
            Parameter::PatternRatio => self.pattern_ratio,
            Parameter::CaptureScale => self.capture_scale,
            Parameter::SaturationKnee => self.saturation_knee,
            Parameter::SaturationLimit => self.saturation_limit,
        }
    }
}
