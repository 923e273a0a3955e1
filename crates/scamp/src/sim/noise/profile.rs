//! Noise profiles: the parameters of the analogue error model (docs/noise.md), read from YAML.
//!
//! Every field has a default of "off" (zero error), so a profile names only what it
//! models. Unknown keys and values out of range are errors that carry the position of
//! the offending value: range checks run inside deserialisation, where serde_yaml knows
//! the position (the approach of the filter specs, see [`crate::isa::yaml`]).

pub(crate) use super::saturation::Saturation;
use crate::isa::source::{self, SourceError};
use crate::isa::yaml;
use crate::isa::Pos;
use crate::sim::layer::BusKind;
use serde::{Deserialize, Deserializer, Serialize};
use std::path::Path;
use std::sync::Arc;

/// The built-in `ideal` profile: every error off, results exact.
pub(crate) const IDEAL_YAML: &str = include_str!("ideal.yaml");
/// The built-in `scamp5` profile, calibrated to the hardware measurements described in docs/noise.md.
pub(crate) const SCAMP5_YAML: &str = include_str!("scamp5.yaml");
/// Names of the built-in profiles.
pub const BUILTINS: &[&str] = &["ideal", "scamp5"];
/// The profile `run` and `check` use when none is named.
pub const DEFAULT_PROFILE: &str = "scamp5";

/// A complete noise profile.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Profile {
    /// Short name, for reports.
    pub name: String,
    /// Where the numbers come from.
    pub description: String,
    /// Systematic error, temporal noise and fixed-pattern scale of each bus kind.
    pub transfer: Transfers,
    /// Per-chip fixed pattern shared by all bus kinds.
    pub fixed_pattern: FixedPattern,
    /// Saturation of every written value (a soft knee or a hard clip); absent means
    /// none.
    pub saturation: Option<Saturation>,
    /// Relaxation of registers between writes; absent means none.
    pub(crate) decay: Option<Decay>,
    /// Extra error of transfers that read `IN` (the DAC load of `in()`).
    pub load: Injection,
    /// What the uncorrected load (`load_in`) adds on top of `load`: the error the
    /// vendor's correction of `in()` removes.
    pub load_uncorrected: UncorrectedLoad,
    /// Extra error of transfers that read `PIX` (`get_image`).
    pub(crate) capture: Injection,
    /// The ADC and readout path, applied when results are read out.
    pub readout: Readout,
    /// The parameters the measurements do not pin down, with their ranges (for
    /// `check --uncertainty`); absent means none described.
    pub(crate) uncertainty: Option<super::uncertainty::Uncertainty>,
}

/// The parameters of every [`BusKind`], under its [`BusKind::key`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Transfers {
    /// `bus(w)`: a reset to 0.
    pub(crate) bus_0: Transfer,
    /// `bus(w, r1)`.
    pub bus_1: Transfer,
    /// `bus(w, r1, r2)`.
    pub(crate) bus_2: Transfer,
    /// `bus(w, r1, r2, r3)`.
    pub(crate) bus_3: Transfer,
    /// `bus(w, r1, r2, r3, r4)`.
    pub(crate) bus_4: Transfer,
    /// `bus2(w1, w2, ...)`: division by two.
    pub bus2: Transfer,
    /// `bus3(w1, w2, w3, r1)`: division by three.
    pub(crate) bus3: Transfer,
}

impl Transfers {
    /// The parameters of bus kind `kind`.
    pub(crate) fn kind(&self, kind: BusKind) -> &Transfer {
        match kind {
            BusKind::Bus0 => &self.bus_0,
            BusKind::Bus1 => &self.bus_1,
            BusKind::Bus2 => &self.bus_2,
            BusKind::Bus3 => &self.bus_3,
            BusKind::Bus4 => &self.bus_4,
            BusKind::Half => &self.bus2,
            BusKind::Third => &self.bus3,
        }
    }

    /// Every kind with its parameters, in file order.
    pub(crate) fn all(&self) -> [(BusKind, &Transfer); BusKind::COUNT] {
        BusKind::ALL.map(|k| (k, self.kind(k)))
    }

    /// Mutable access to every kind, in file order.
    pub fn all_mut(&mut self) -> [(BusKind, &mut Transfer); BusKind::COUNT] {
        [
            (BusKind::Bus0, &mut self.bus_0),
            (BusKind::Bus1, &mut self.bus_1),
            (BusKind::Bus2, &mut self.bus_2),
            (BusKind::Bus3, &mut self.bus_3),
            (BusKind::Bus4, &mut self.bus_4),
            (BusKind::Half, &mut self.bus2),
            (BusKind::Third, &mut self.bus3),
        ]
    }
}

/// One bus kind: `v' = v (1 + gain + pattern G[pe]) + offset + pattern O[pe][reg] +
/// N(0, noise^2 + (noise_signal v)^2)`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Transfer {
    /// Systematic relative gain error `g_n` (-0.5..0.5).
    #[serde(deserialize_with = "gain")]
    pub gain: f64,
    /// Systematic offset `o_n`, in "in" units (-64..64).
    #[serde(deserialize_with = "offset")]
    pub offset: f64,
    /// Temporal noise `s_t`: standard deviation in "in" units (0..64).
    #[serde(deserialize_with = "spread")]
    pub noise: f64,
    /// Signal-dependent temporal noise `s_s`, relative to the value (0..1).
    #[serde(deserialize_with = "relative")]
    pub(crate) noise_signal: f64,
    /// How strongly this kind shows the chip's fixed pattern (0..100; 1 = as given in
    /// `fixed_pattern`).
    #[serde(deserialize_with = "factor")]
    pub pattern: f64,
}

/// The chip's fixed pattern, drawn once per chip seed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FixedPattern {
    /// Standard deviation of the per-PE gain error `G[pe]` (0..1).
    #[serde(deserialize_with = "relative")]
    pub gain: f64,
    /// Standard deviation of the per-PE, per-register offset `O[pe][reg]` (0..64).
    #[serde(deserialize_with = "spread")]
    pub offset: f64,
}

/// Where an invalid range was written: at the key the message names, `low` for an
/// empty `low..high` range (serde reports the end of the section, which can be the
/// next key of the file).
fn range_key_pos(text: &str, msg: &str) -> Option<Pos> {
    use crate::isa::yaml::Step;
    let (section, key) = ["saturation", "readout"].into_iter().find_map(|s| {
        let key = SECTION_KEYS
            .iter()
            .find(|k| msg.contains(&format!("{s}: {k} (")))?;
        Some((s, *key))
    })?;
    let path = [Step::Key(section), Step::Key(key)];
    Some(yaml::node_position(text, &path))
}

/// The keys a range error of a section can name (see [`range_key_pos`]).
const SECTION_KEYS: &[&str] = &["low", "knee_low", "knee_high"];

/// A `low..high` range must not be empty: clamping to an empty range panics (min
/// above max), and no value could be represented.
pub(super) fn ordered<E: serde::de::Error>(section: &str, low: f64, high: f64) -> Result<(), E> {
    if low >= high {
        return Err(E::custom(format!(
            "{section}: low ({low}) must be below high ({high})"
        )));
    }
    Ok(())
}

/// Relaxation of stored values while a register is not written:
/// `v(t) = toward + (v - toward) exp(-per_us t)`, t in microseconds of simulated time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct Decay {
    /// Rate per microsecond (0..1).
    #[serde(deserialize_with = "relative")]
    pub(crate) per_us: f64,
    /// The level values relax towards (-128..128).
    #[serde(deserialize_with = "level")]
    pub(crate) toward: f64,
}

/// Error added to a value written by a transfer that reads `IN` or `PIX`, on top of the
/// transfer's own: `v' = v (1 + gain + pattern_gain Gx[pe]) + offset +
/// pattern_offset Ox[pe] + N(0, noise^2 + (noise_signal v)^2)`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Injection {
    /// Systematic relative gain error (-0.5..0.5).
    #[serde(deserialize_with = "gain")]
    pub gain: f64,
    /// Systematic offset (-64..64).
    #[serde(deserialize_with = "offset")]
    pub(crate) offset: f64,
    /// Standard deviation of the per-PE gain error (0..1).
    #[serde(deserialize_with = "relative")]
    pub pattern_gain: f64,
    /// Standard deviation of the per-PE offset (0..64).
    #[serde(deserialize_with = "spread")]
    pub pattern_offset: f64,
    /// Temporal noise (0..64).
    #[serde(deserialize_with = "spread")]
    pub(crate) noise: f64,
    /// Signal-dependent temporal noise, relative (0..1).
    #[serde(deserialize_with = "relative")]
    pub(crate) noise_signal: f64,
}

/// The error of the vendor's uncorrected DAC load (`load_in`) beyond that of the
/// corrected one: a systematic offset, a deviate per load shared by every PE, and a
/// structured fixed pattern (columns, rows, the edge row, per PE) drawn from the chip
/// seed. Values and signs are as the loaded register shows them (the transfer that
/// reads `IN` carries them negated; `load_in`'s second transfer negates them back).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UncorrectedLoad {
    /// Systematic offset (-64..64).
    #[serde(deserialize_with = "offset")]
    pub offset: f64,
    /// Standard deviation of one deviate per load shared by every PE (0..64): frame
    /// to frame, the whole array moves together.
    #[serde(deserialize_with = "spread")]
    pub noise_common: f64,
    /// Standard deviation of a per-PE offset beyond `load.pattern_offset` (0..64).
    #[serde(deserialize_with = "spread")]
    pub(crate) pattern_offset: f64,
    /// The per-column part of the pattern.
    pub(crate) column: ColumnPattern,
    /// The per-row part of the pattern.
    pub(crate) row: RowPattern,
}

/// An offset per column: a smooth profile across the array plus scatter.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ColumnPattern {
    /// Root mean square over columns of a quadratic bow, centre above the edges when
    /// positive (-64..64); the same on every chip.
    #[serde(deserialize_with = "offset")]
    pub(crate) bow: f64,
    /// Standard deviation over chips of the root mean square of a linear tilt across
    /// the columns (0..64); each chip draws its own.
    #[serde(deserialize_with = "spread")]
    pub(crate) tilt: f64,
    /// Standard deviation of an independent offset per column (0..64).
    #[serde(deserialize_with = "spread")]
    pub(crate) scatter: f64,
}

/// An offset per row, and the edge row's own.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RowPattern {
    /// Standard deviation of an independent offset per row (0..64).
    #[serde(deserialize_with = "spread")]
    pub(crate) scatter: f64,
    /// Extra offset of row 0, the array's top edge (-64..64).
    #[serde(deserialize_with = "offset")]
    pub(crate) edge: f64,
}

/// The readout path: `out = clamp(round(v + pattern_offset R[pe] + N(0, noise^2)))`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Readout {
    /// Whether results are read through this path (otherwise the analogue values are
    /// reported exactly).
    pub(crate) enabled: bool,
    /// Round to integers (the 8-bit ADC).
    pub(crate) quantise: bool,
    /// Readout noise, standard deviation (0..64).
    #[serde(deserialize_with = "spread")]
    pub noise: f64,
    /// Standard deviation of the per-PE readout offset (0..64).
    #[serde(deserialize_with = "spread")]
    pub(crate) pattern_offset: f64,
    /// Lowest code of the ADC, in "in" units.
    #[serde(deserialize_with = "level")]
    pub(crate) low: f64,
    /// Highest code of the ADC.
    #[serde(deserialize_with = "level")]
    pub(crate) high: f64,
}

/// [`Readout`] as written, before the check that its range is not empty.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
struct ReadoutRaw {
    enabled: bool,
    quantise: bool,
    #[serde(deserialize_with = "spread")]
    noise: f64,
    #[serde(deserialize_with = "spread")]
    pattern_offset: f64,
    #[serde(deserialize_with = "level")]
    low: f64,
    #[serde(deserialize_with = "level")]
    high: f64,
}

impl Default for ReadoutRaw {
    fn default() -> Self {
        let r = Readout::default();
        ReadoutRaw {
            enabled: r.enabled,
            quantise: r.quantise,
            noise: r.noise,
            pattern_offset: r.pattern_offset,
            low: r.low,
            high: r.high,
        }
    }
}

impl<'de> Deserialize<'de> for Readout {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = ReadoutRaw::deserialize(d)?;
        ordered("readout", r.low, r.high)?;
        Ok(Readout {
            enabled: r.enabled,
            quantise: r.quantise,
            noise: r.noise,
            pattern_offset: r.pattern_offset,
            low: r.low,
            high: r.high,
        })
    }
}

impl Default for Readout {
    fn default() -> Self {
        Readout {
            enabled: false,
            quantise: false,
            noise: 0.0,
            pattern_offset: 0.0,
            low: -128.0,
            high: 127.0,
        }
    }
}

/// Accepts a number in `lo..=hi`. The check runs inside the visitor, while serde_yaml
/// still stands on the scalar, so the error carries the position of the value itself.
struct Ranged {
    lo: f64,
    hi: f64,
    what: &'static str,
}

impl Ranged {
    fn check<E: serde::de::Error>(&self, v: f64) -> Result<f64, E> {
        if !v.is_finite() || v < self.lo || v > self.hi {
            return Err(E::custom(format!(
                "{} must be a number in {}..{}, got {v}",
                self.what, self.lo, self.hi
            )));
        }
        Ok(v)
    }
}

impl serde::de::Visitor<'_> for Ranged {
    type Value = f64;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{} (a number in {}..{})", self.what, self.lo, self.hi)
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<f64, E> {
        self.check(v)
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<f64, E> {
        self.check(v as f64)
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<f64, E> {
        self.check(v as f64)
    }
}

pub(super) fn ranged<'de, D: Deserializer<'de>>(
    d: D,
    lo: f64,
    hi: f64,
    what: &'static str,
) -> Result<f64, D::Error> {
    d.deserialize_f64(Ranged { lo, hi, what })
}

fn gain<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    ranged(d, -0.5, 0.5, "a gain error")
}

fn offset<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    ranged(d, -64.0, 64.0, "an offset")
}

fn spread<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    ranged(d, 0.0, 64.0, "a standard deviation")
}

fn relative<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    ranged(d, 0.0, 1.0, "a relative amount")
}

fn factor<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    ranged(d, 0.0, 100.0, "a scale factor")
}

fn level<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    ranged(d, -1024.0, 1024.0, "a level")
}

/// A profile that could not be read, with the position of the problem.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{col}: {cause}")]
pub struct ProfileError {
    /// The file (or built-in name).
    pub file: String,
    /// 1-based line (1 when unknown).
    pub line: usize,
    /// 1-based column (1 when unknown).
    pub col: usize,
    /// What is wrong.
    pub cause: ProfileCause,
}

/// What is wrong with a profile.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ProfileCause {
    /// The text is not a profile: serde_yaml's error (not YAML, an unknown key, a value
    /// outside its range: the profile's own checks run inside deserialisation), shown
    /// without the position serde_yaml appends (the error's position goes in front).
    #[error("{}", crate::isa::yaml::serde_message(.0))]
    Yaml(Arc<serde_yaml::Error>),
    /// Neither a built-in profile nor an existing file.
    #[error("no such profile: not a built-in ({}) and no such file", BUILTINS.join(", "))]
    NoSuchProfile,
    /// The file's text is not UTF-8.
    #[error("the {what} is not UTF-8 text")]
    NotUtf8 {
        /// What the file was read as (`profile`).
        what: &'static str,
    },
    /// The file could not be read, or is larger than a profile may be.
    #[error(transparent)]
    Read(Arc<SourceError>),
}

/// Two causes are equal when they are of one kind and say the same (serde_yaml's and
/// the operating system's errors have no equality of their own).
impl PartialEq for ProfileCause {
    fn eq(&self, other: &ProfileCause) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl Eq for ProfileCause {}

impl Profile {
    /// Parses a profile from YAML text; `file` names it in errors.
    ///
    /// ```
    /// use scamp::Profile;
    /// let e = Profile::from_yaml("name: mine\ngian: 1\n", "mine.yaml").unwrap_err();
    /// assert_eq!((e.file.as_str(), e.line), ("mine.yaml", 2));
    /// ```
    pub fn from_yaml(text: &str, file: &str) -> Result<Profile, ProfileError> {
        let text = source::strip_bom(text);
        serde_yaml::from_str::<Profile>(text).map_err(|e| {
            let pos = yaml::position(&e);
            let cause = ProfileCause::Yaml(Arc::new(e));
            let pos = range_key_pos(text, &cause.to_string()).unwrap_or(pos);
            ProfileError {
                file: file.to_string(),
                line: pos.line as usize,
                col: pos.col as usize,
                cause,
            }
        })
    }

    /// A built-in profile by name.
    ///
    /// ```
    /// use scamp::Profile;
    /// assert!(Profile::builtin("ideal").unwrap().is_exact());
    /// assert!(!Profile::builtin("scamp5").unwrap().is_exact());
    /// assert!(Profile::builtin("no-such").is_none());
    /// ```
    pub fn builtin(name: &str) -> Option<Profile> {
        builtin_text(name).map(|t| {
            Profile::from_yaml(t, name).expect("built-in profiles are valid (checked by tests)")
        })
    }

    /// A built-in profile by name, or else a profile file by path.
    pub fn load(name_or_path: &str) -> Result<Profile, ProfileError> {
        if let Some(p) = Profile::builtin(name_or_path) {
            return Ok(p);
        }
        let path = Path::new(name_or_path);
        let text = source::read_text(path, source::MAX_PROFILE_BYTES, "profile").map_err(|e| {
            let pos = e.pos().unwrap_or(Pos { line: 1, col: 1 });
            ProfileError {
                file: name_or_path.to_string(),
                line: pos.line as usize,
                col: pos.col as usize,
                cause: match e {
                    SourceError::Io { .. } if !path.exists() => ProfileCause::NoSuchProfile,
                    SourceError::NotUtf8 { what, .. } => ProfileCause::NotUtf8 { what },
                    other => ProfileCause::Read(Arc::new(other)),
                },
            }
        })?;
        let mut p = Profile::from_yaml(&text, name_or_path)?;
        if p.name.is_empty() {
            p.name = path
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        }
        Ok(p)
    }

    /// The profile as YAML (without the comments of a built-in file).
    pub fn to_yaml(&self) -> String {
        serde_yaml::to_string(self).unwrap_or_default()
    }

    /// Whether the profile changes nothing: every error off and no readout path.
    pub fn is_exact(&self) -> bool {
        let t_exact = self.transfer.all().iter().all(|(_, t)| {
            t.gain == 0.0
                && t.offset == 0.0
                && t.noise == 0.0
                && t.noise_signal == 0.0
                && (t.pattern == 0.0
                    || (self.fixed_pattern.gain == 0.0 && self.fixed_pattern.offset == 0.0))
        });
        let inj_exact = |i: &Injection| *i == Injection::default();
        t_exact
            && self.saturation.is_none()
            && self.decay.as_ref().is_none_or(|d| d.per_us == 0.0)
            && inj_exact(&self.load)
            && self.load_uncorrected == UncorrectedLoad::default()
            && inj_exact(&self.capture)
            && !self.readout.enabled
    }
}

/// The YAML text of a built-in profile (with its comments).
pub fn builtin_text(name: &str) -> Option<&'static str> {
    match name {
        "ideal" => Some(IDEAL_YAML),
        "scamp5" => Some(SCAMP5_YAML),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse() {
        let ideal = Profile::builtin("ideal").unwrap();
        assert!(ideal.is_exact());
        let s = Profile::builtin("scamp5").unwrap();
        assert!(!s.is_exact());
        assert_eq!(s.name, "scamp5");
        assert!(s.readout.enabled);
        // Round trip through the YAML printer.
        assert_eq!(Profile::from_yaml(&s.to_yaml(), "x").unwrap(), s);
    }

    #[test]
    fn errors_carry_positions() {
        let e = Profile::from_yaml("transfer:\n  bus_1:\n    gian: 0.1\n", "p.yaml").unwrap_err();
        assert_eq!((e.line, e.col), (3, 5), "{e}");
        assert!(e.cause.to_string().contains("unknown field `gian`"), "{e}");
        let e = Profile::from_yaml("transfer:\n  bus2: {gain: 0.9}\n", "p.yaml").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(
            e.cause
                .to_string()
                .contains("gain error must be a number in -0.5..0.5"),
            "{e}"
        );
        let e = Profile::from_yaml("fixed_pattern:\n  offset: -1\n", "p.yaml").unwrap_err();
        assert_eq!((e.line, e.col), (2, 11), "{e}");
        assert!(
            e.cause
                .to_string()
                .contains("standard deviation must be a number in 0..64, got -1"),
            "{e}"
        );
        let e = Profile::from_yaml("saturation: {low: 5, high: 1}\n", "p.yaml").unwrap_err();
        assert_eq!((e.line, e.col), (1, 19), "{e}");
        let text = "saturation:\n  low: 5\n  high: 1\nname: x\n";
        let e = Profile::from_yaml(text, "p.yaml").unwrap_err();
        assert_eq!((e.line, e.col), (2, 8), "{e}");
        let e = Profile::from_yaml("readout:\n  low: 5\n  high: 1\n", "p.yaml").unwrap_err();
        assert_eq!((e.line, e.col), (2, 8), "{e}");
        assert!(
            e.cause
                .to_string()
                .contains("low (5) must be below high (1)"),
            "{e}"
        );
        let e = Profile::from_yaml("readout: {noise: .nan}\n", "p.yaml").unwrap_err();
        assert!(e.cause.to_string().contains("standard deviation"), "{e}");
        let e = Profile::from_yaml("decay: {per_us: x}\n", "p.yaml").unwrap_err();
        assert!(e.to_string().starts_with("p.yaml:1:"), "{e}");
    }

    #[test]
    fn missing_files_are_errors() {
        let e = Profile::load("no/such/profile.yaml").unwrap_err();
        assert!(e
            .to_string()
            .starts_with("no/such/profile.yaml:1:1: no such profile"));
    }
}
