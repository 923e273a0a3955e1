//! A filter spec's YAML document as serde reads it (docs/spec-format.md).
//!
//! Unknown keys are denied, and every check on a single value runs inside its visitor,
//! while serde_yaml stands on the value, so the error carries the value's position (the
//! approach of the noise profiles). Checks across values (registers listed elsewhere,
//! ragged rows, a weight too large for the approximation settings) run afterwards in
//! [`crate::cain::spec`] and are positioned with [`crate::isa::yaml::locate`].

use crate::cain::spec::{parse_fraction, ApproxParams, SearchParams};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

/// A spec as written, before the checks across values.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename = "spec")]
pub(crate) struct RawSpec {
    /// `name:`, text or an integer.
    #[serde(default, deserialize_with = "name")]
    pub(crate) name: Option<String>,
    /// `input:`, a register name.
    #[serde(default, deserialize_with = "some")]
    pub(crate) input: Option<String>,
    /// `inputs:`, one register name per input channel (instead of `input`).
    #[serde(default, deserialize_with = "some")]
    pub(crate) inputs: Option<Vec<String>>,
    /// `registers:`, register names.
    #[serde(default, deserialize_with = "some")]
    pub(crate) registers: Option<Vec<String>>,
    /// `kernels:` (or a `layer:` instead).
    #[serde(default, deserialize_with = "some")]
    pub(crate) kernels: Option<Vec<RawKernel>>,
    /// `layer:`, a convolution layer's weights from a `.npy` file.
    #[serde(default, deserialize_with = "some")]
    pub(crate) layer: Option<RawLayer>,
    /// `approximation:`.
    #[serde(default)]
    pub(crate) approximation: ApproxParams,
    /// `search:`.
    #[serde(default)]
    pub(crate) search: SearchParams,
    /// `general_registers:`, the size of the register file.
    #[serde(default, deserialize_with = "general_registers")]
    pub(crate) general_registers: Option<usize>,
    /// `input_range: [lo, hi]`.
    #[serde(default, deserialize_with = "some")]
    pub(crate) input_range: Option<Vec<Bound>>,
    /// `fit: true|false`.
    #[serde(default)]
    pub(crate) fit: bool,
}

/// A layer as written: `.npy` weights in PyTorch's layout and the registers of its
/// outputs.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename = "layer")]
pub(crate) struct RawLayer {
    /// `weights:`, a `.npy` file of shape `[out, in/groups, kh, kw]`.
    pub(crate) weights: String,
    /// `groups:`, as in PyTorch's `Conv2d`.
    #[serde(default = "one_group", deserialize_with = "groups")]
    pub(crate) groups: usize,
    /// `outputs:`, one register per output channel.
    pub(crate) outputs: Vec<String>,
    /// `scale:`, 1 when absent.
    #[serde(default = "one", deserialize_with = "scale")]
    pub(crate) scale: f64,
}

fn one_group() -> usize {
    1
}

fn groups<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let most = crate::cain::spec::MAX_KERNELS as u64;
    integer(d, "groups", 1, most).map(|n| n as usize)
}

/// One kernel as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename = "kernel")]
pub(crate) struct RawKernel {
    /// `out:`, a register name.
    pub(crate) out: String,
    /// `scale:`, 1 when absent.
    #[serde(default = "one", deserialize_with = "scale")]
    pub(crate) scale: f64,
    /// `weights:`, rows of numbers or a `.npy` file.
    pub(crate) weights: RawWeights,
}

/// A kernel's `weights:` as written: rows of numbers, or the name of a `.npy` file
/// (relative to the spec's folder) holding them.
#[derive(Debug)]
pub(crate) enum RawWeights {
    /// Rows north to south of numbers west to east.
    Rows(Vec<Vec<Weight>>),
    /// One array of rows per input (`[in][kh][kw]`).
    Planes(Vec<Vec<Vec<Weight>>>),
    /// A `.npy` file of shape `[kh, kw]`.
    File(String),
}

impl<'de> Deserialize<'de> for RawWeights {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(WeightsVisitor)
    }
}

/// Reads rows element by element, so that a bad weight keeps its own position.
struct WeightsVisitor;

impl<'de> Visitor<'de> for WeightsVisitor {
    type Value = RawWeights;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("rows of weights, or the name of a .npy file")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<RawWeights, E> {
        Ok(RawWeights::File(s.to_string()))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<RawWeights, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Vec<Cell>>()? {
            items.push(item);
        }
        let numbers = |v: &[Cell]| v.iter().all(|c| matches!(c, Cell::One(_)));
        let arrays = |v: &[Cell]| v.iter().all(|c| matches!(c, Cell::Row(_)));
        if items.iter().all(|v| numbers(v)) {
            let rows = items
                .into_iter()
                .map(|v| v.into_iter().filter_map(Cell::number).collect())
                .collect();
            Ok(RawWeights::Rows(rows))
        } else if items.iter().all(|v| arrays(v)) {
            let planes = items
                .into_iter()
                .map(|v| v.into_iter().filter_map(Cell::row).collect())
                .collect();
            Ok(RawWeights::Planes(planes))
        } else {
            Err(de::Error::custom(
                "weights mix numbers and arrays: give rows of numbers ([kh][kw]) or one \
                 array of rows per input ([in][kh][kw])",
            ))
        }
    }
}

/// One entry of a weights row: a number (of a 2-D kernel) or a row (of a plane of a
/// multi-input kernel).
enum Cell {
    One(Weight),
    Row(Vec<Weight>),
}

impl Cell {
    fn number(self) -> Option<Weight> {
        match self {
            Cell::One(w) => Some(w),
            Cell::Row(_) => None,
        }
    }

    fn row(self) -> Option<Vec<Weight>> {
        match self {
            Cell::Row(r) => Some(r),
            Cell::One(_) => None,
        }
    }
}

impl<'de> Deserialize<'de> for Cell {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CellVisitor)
    }
}

struct CellVisitor;

impl CellVisitor {
    const WEIGHT: Number = Number {
        what: "a weight",
        check: |_| Ok(()),
    };
}

impl<'de> Visitor<'de> for CellVisitor {
    type Value = Cell;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a weight (a number or a fraction such as 1/16), or a row of weights")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Cell, E> {
        Self::WEIGHT.visit_i64(v).map(|w| Cell::One(Weight(w)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Cell, E> {
        Self::WEIGHT.visit_u64(v).map(|w| Cell::One(Weight(w)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Cell, E> {
        Self::WEIGHT.visit_f64(v).map(|w| Cell::One(Weight(w)))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Cell, E> {
        Self::WEIGHT.visit_str(s).map(|w| Cell::One(Weight(w)))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Cell, A::Error> {
        let mut row = Vec::new();
        while let Some(w) = seq.next_element::<Weight>()? {
            row.push(w);
        }
        Ok(Cell::Row(row))
    }
}

/// A finite weight (a number or a fraction such as `1/16`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Weight(pub f64);

/// One end of `input_range`, within the capture's -128..128.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bound(pub f64);

impl<'de> Deserialize<'de> for Weight {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        number(d, "a weight", |_| Ok(())).map(Weight)
    }
}

impl<'de> Deserialize<'de> for Bound {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        number(d, "input_range", |v| {
            if (-128.0..=128.0).contains(&v) {
                Ok(())
            } else {
                Err(format!(
                    "input_range: {v} is outside the capture's -128..128"
                ))
            }
        })
        .map(Bound)
    }
}

fn one() -> f64 {
    1.0
}

/// A value that, when present, must not be null.
fn some<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A finite number, written as an integer, a decimal or a fraction string, that passes
/// `check` (which returns the message of a rejection).
struct Number {
    what: &'static str,
    check: fn(f64) -> Result<(), String>,
}

impl Number {
    fn accept<E: de::Error>(&self, v: f64) -> Result<f64, E> {
        if !v.is_finite() {
            return Err(E::custom(format!("{} must be finite, got {v}", self.what)));
        }
        (self.check)(v).map_err(E::custom)?;
        Ok(v)
    }
}

impl Visitor<'_> for Number {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} (a number or a fraction such as 1/16)", self.what)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        self.accept(v as f64)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        self.accept(v as f64)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        self.accept(v)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<f64, E> {
        let v = parse_fraction(s).ok_or_else(|| {
            E::custom(format!(
                "{}: `{s}` is not a number or a fraction",
                self.what
            ))
        })?;
        self.accept(v)
    }
}

fn number<'de, D: Deserializer<'de>>(
    d: D,
    what: &'static str,
    check: fn(f64) -> Result<(), String>,
) -> Result<f64, D::Error> {
    d.deserialize_any(Number { what, check })
}

/// An integer in `lo..=hi`.
struct Integer {
    what: &'static str,
    lo: u64,
    hi: u64,
}

impl Integer {
    fn out_of_range<E: de::Error>(&self, v: impl fmt::Display) -> E {
        E::custom(
            crate::cain::spec::Whole {
                what: self.what,
                lo: self.lo,
                hi: self.hi,
            }
            .out_of_range(v),
        )
    }
}

impl Visitor<'_> for Integer {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} (an integer in {}..{})", self.what, self.lo, self.hi)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        if (self.lo..=self.hi).contains(&v) {
            Ok(v)
        } else {
            Err(self.out_of_range(v))
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        match u64::try_from(v) {
            Ok(u) => self.visit_u64(u),
            Err(_) => Err(self.out_of_range(v)),
        }
    }
}

/// A key whose range the command line shares.
fn whole<'de, D: Deserializer<'de>>(d: D, w: crate::cain::spec::Whole) -> Result<u64, D::Error> {
    integer(d, w.what, w.lo, w.hi)
}

fn integer<'de, D: Deserializer<'de>>(
    d: D,
    what: &'static str,
    lo: u64,
    hi: u64,
) -> Result<u64, D::Error> {
    d.deserialize_any(Integer { what, lo, hi })
}

/// A name: one line of text (an integer is taken as its digits).
struct Name;

impl Visitor<'_> for Name {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a name (text)")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<String, E> {
        // The name goes into the program header, a comment line.
        match s.chars().find(|c| c.is_control()) {
            Some(c) => Err(E::custom(format!(
                "name must be one line of text without control characters, found {}",
                c.escape_default()
            ))),
            None => Ok(s.to_string()),
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        Ok(v.to_string())
    }
}

fn name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    d.deserialize_any(Name).map(Some)
}

fn scale<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    number(d, "scale", |_| Ok(()))
}

fn general_registers<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    let most = crate::cain::spec::MAX_GENERAL as u64;
    integer(d, "general_registers", 1, most).map(|n| Some(n as usize))
}

/// `approximation.max_depth`: 0..=[`crate::cain::spec::approx::DEEPEST`].
pub(crate) fn max_depth<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    integer(
        d,
        "max_depth",
        0,
        u64::from(crate::cain::spec::approx::DEEPEST),
    )
    .map(|n| n as u32)
}

/// `approximation.max_error`: not negative.
pub(crate) fn max_error<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    number(d, "max_error", |v| {
        if v < 0.0 {
            Err("max_error must not be negative".into())
        } else {
            Ok(())
        }
    })
}

/// `search.time_limit`: seconds, positive and at most a day.
pub(crate) fn time_limit<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    number(d, "time_limit", |v| {
        crate::cain::spec::check_time_limit(v)
            .map(|_| ())
            .map_err(|m| format!("time_limit {m}"))
    })
    .map(Some)
}

/// `search.workers`.
pub(crate) fn workers<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    whole(d, crate::cain::spec::WORKERS).map(|n| Some(n as usize))
}

/// `search.node_limit`.
pub(crate) fn node_limit<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    whole(d, crate::cain::spec::NODE_LIMIT).map(Some)
}

/// `search.seed`.
pub(crate) fn seed<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    whole(d, crate::cain::spec::SEED).map(Some)
}

/// `search.memory_limit`, in MiB.
pub(crate) fn memory_limit<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    whole(d, crate::cain::spec::MEMORY_LIMIT_MB).map(Some)
}

/// `search.work`, a positive work budget.
pub(crate) fn work<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    whole(d, crate::cain::spec::WORK).map(Some)
}

/// `search.ops`.
pub(crate) fn ops<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<crate::cain::spec::Ops>, D::Error> {
    crate::cain::spec::Ops::deserialize(d).map(Some)
}
