//! The parts of a network file beside the stages' specs: activations, decisions,
//! the readout, the input stage and the head's layers, each read from its YAML value
//! with the path of the node at fault, so that every refusal names `NET.yaml:LINE:COL`.

use super::problem::NetworkProblem;
use crate::isa::yaml::{Misplaced, Step};
use serde_yaml::Value;

pub(super) use crate::isa::DAC;

/// The largest `k` of a leaky ReLU's slope 2^-k: each halving is one `divq`, with its
/// own error, so deeper slopes cost more than they are worth.
pub(super) const MAX_LEAK_SHIFT: u32 = 8;

/// An on-sensor activation applied to each output of a stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Activation {
    /// max(x, 0).
    Relu,
    /// x where x > 0, else x / 2^shift.
    LeakyRelu {
        /// The slope is 2^-shift.
        shift: u32,
    },
}

/// What the chip decides after a stage.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Decision {
    /// Each output register's sign: bit = value > 0.
    Sign,
    /// bit = value > threshold: one threshold for every map, or one per map in kernel
    /// order. Integers the DAC can load as `-t`.
    Threshold(Vec<i64>),
    /// No decision: the analogue outputs feed the next stage only.
    None,
}

impl Decision {
    /// The threshold of the stage's `k`-th map (`None` for a sign or no decision).
    pub(crate) fn threshold(&self, k: usize) -> Option<i64> {
        match self {
            Decision::Threshold(t) if t.len() == 1 => Some(t[0]),
            Decision::Threshold(t) => t.get(k).copied(),
            _ => None,
        }
    }
}

/// A rectangle of a map whose set bits are counted: `[row, col, height, width]` in
/// image pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bin {
    /// Top row.
    pub(crate) row: usize,
    /// Left column.
    pub(crate) col: usize,
    /// Height.
    pub(crate) height: usize,
    /// Width.
    pub(crate) width: usize,
}

/// How the set bits of each binary map are grouped into features.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Grouping {
    /// Square blocks of this side tiling the map (the last row and column may be
    /// smaller).
    Pool(usize),
    /// Explicit rectangles, overlapping allowed.
    Bins(Vec<Bin>),
}

/// What leaves the chip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Readout {
    /// Blocks or bins.
    pub(crate) grouping: Grouping,
    /// At most this many events (set bits) read per map, in row-major scan order.
    pub cap: Option<usize>,
}

/// The input stage's binarisation: pixels above `level` become `value`, the others 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Binarise {
    /// A pixel value (1..=255): pixels brighter than it are set.
    pub(crate) level: i64,
    /// The analogue value of a set pixel (a DAC constant).
    pub(crate) value: i64,
}

type Found<T> = Result<T, Misplaced<NetworkProblem>>;

fn int_of(v: &Value, path: &[Step], what: &'static str) -> Found<i64> {
    match v {
        Value::Number(n) if n.as_i64().is_some() => Ok(n.as_i64().unwrap_or_default()),
        Value::Number(n)
            if n.as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f.abs() < 1e15) =>
        {
            Ok(n.as_f64().unwrap_or_default() as i64)
        }
        _ => Err(Misplaced::at(path, NetworkProblem::NotInteger { what })),
    }
}

/// `activation: relu` or `activation: {leaky_relu: 1/4}` (also `0.25`).
pub(super) fn activation(v: &Value, path: &[Step]) -> Found<Activation> {
    match v {
        Value::String(s) if s == "relu" => Ok(Activation::Relu),
        Value::String(s) => Err(Misplaced::at(
            path,
            NetworkProblem::UnknownActivation { name: s.clone() },
        )),
        Value::Mapping(m) if m.len() == 1 => {
            let Some(slope) = m.get("leaky_relu") else {
                return Err(Misplaced::at(path, NetworkProblem::UnknownActivationForm));
            };
            let mut here = path.to_vec();
            here.push(Step::Key("leaky_relu"));
            leak_shift(slope, &here).map(|shift| Activation::LeakyRelu { shift })
        }
        _ => Err(Misplaced::at(path, NetworkProblem::NotAnActivation)),
    }
}

/// The `k` of a slope 2^-k written `1/4`, `1/2^2` or `0.25`.
fn leak_shift(v: &Value, path: &[Step]) -> Found<u32> {
    let slope = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.split_once('/').and_then(|(a, b)| {
            let den = match b.trim().split_once('^') {
                Some((base, exp)) => base
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .zip(exp.trim().parse::<i32>().ok())
                    .map(|(base, exp)| base.powi(exp)),
                None => b.trim().parse::<f64>().ok(),
            };
            Some(a.trim().parse::<f64>().ok()? / den?)
        }),
        _ => None,
    };
    (1..=MAX_LEAK_SHIFT)
        .find(|&k| slope == Some(0.5f64.powi(k as i32)))
        .ok_or_else(|| Misplaced::at(path, NetworkProblem::LeakySlope))
}

/// The thresholds of `threshold: T` or `threshold: [t1, t2, ...]`: integers whose
/// negation the DAC loads.
pub(super) fn thresholds(v: &Value, path: &[Step]) -> Found<Vec<i64>> {
    let one = |v: &Value, path: &[Step]| {
        let refuse = |t: &dyn std::fmt::Display| {
            Misplaced::at(
                path,
                NetworkProblem::Threshold {
                    threshold: t.to_string(),
                },
            )
        };
        let shown =
            || serde_yaml::to_string(v).map_or_else(|_| "?".into(), |t| t.trim().to_string());
        match int_of(v, path, "a threshold") {
            Ok(t) if DAC.contains(&-t) => Ok(t),
            Ok(t) => Err(refuse(&t)),
            Err(_) => Err(refuse(&shown())),
        }
    };
    match v {
        Value::Sequence(items) if items.is_empty() => {
            Err(Misplaced::at(path, NetworkProblem::NoThresholds))
        }
        Value::Sequence(items) => items
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut here = path.to_vec();
                here.push(Step::Index(i));
                one(t, &here)
            })
            .collect(),
        t => one(t, path).map(|t| vec![t]),
    }
}

/// The rectangles of `bins: [[row, col, height, width], ...]`.
pub(super) fn bins(v: &[Vec<Value>], path: &[Step]) -> Found<Vec<Bin>> {
    if v.is_empty() {
        return Err(Misplaced::at(path, NetworkProblem::NoBins));
    }
    v.iter()
        .enumerate()
        .map(|(i, b)| {
            let mut here = path.to_vec();
            here.push(Step::Index(i));
            let bad = |problem: NetworkProblem| Misplaced::at(&here, problem);
            if b.len() != 4 {
                return Err(bad(NetworkProblem::BinShape));
            }
            let mut n = [0usize; 4];
            for (k, x) in b.iter().enumerate() {
                let x = int_of(x, &here, "a bin's row, col, height and width")?;
                n[k] = usize::try_from(x).map_err(|_| bad(NetworkProblem::BinNegative))?;
            }
            if n[2] == 0 || n[3] == 0 {
                return Err(bad(NetworkProblem::BinEmpty));
            }
            Ok(Bin {
                row: n[0],
                col: n[1],
                height: n[2],
                width: n[3],
            })
        })
        .collect()
}

/// `binarise: {level: L, value: V}` checked: L a pixel value 1..=255 (the DAC loads
/// `128 - L`), V a DAC constant.
pub(super) fn binarise(level: &Value, value: &Value, path: &[Step]) -> Found<Binarise> {
    let at = |k: &'static str| {
        let mut p = path.to_vec();
        p.push(Step::Key(k));
        p
    };
    let l = int_of(level, &at("level"), "level")?;
    if !(1..=255).contains(&l) {
        return Err(Misplaced::at(
            &at("level"),
            NetworkProblem::Level { level: l },
        ));
    }
    let v = int_of(value, &at("value"), "value")?;
    if !DAC.contains(&v) {
        return Err(Misplaced::at(
            &at("value"),
            NetworkProblem::Value { value: v },
        ));
    }
    Ok(Binarise { level: l, value: v })
}

/// The head's weight files: one name or a list of names.
pub(super) fn weight_files(v: &Value, path: &[Step]) -> Found<Vec<String>> {
    let bad = || Misplaced::at(path, NetworkProblem::WeightFiles);
    match v {
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Sequence(items) if !items.is_empty() => items
            .iter()
            .map(|i| i.as_str().map(str::to_string).ok_or_else(bad))
            .collect(),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(s: &str) -> Value {
        serde_yaml::from_str(s).expect("yaml")
    }

    #[test]
    fn slopes_are_powers_of_two_however_written() {
        for (s, k) in [("1/4", 2), ("1/2^3", 3), ("0.5", 1), ("1/256", 8)] {
            let v = yaml(&format!("{{leaky_relu: {s}}}"));
            assert_eq!(activation(&v, &[]), Ok(Activation::LeakyRelu { shift: k }));
        }
        for s in ["1/3", "0.3", "1", "1/512", "x"] {
            let v = yaml(&format!("{{leaky_relu: {s}}}"));
            assert!(activation(&v, &[]).is_err(), "{s}");
        }
        assert!(activation(&yaml("sigmoid"), &[]).is_err());
    }

    #[test]
    fn thresholds_must_be_loadable() {
        assert_eq!(
            thresholds(&yaml("[15, 25, -127]"), &[]),
            Ok(vec![15, 25, -127])
        );
        assert_eq!(thresholds(&yaml("128"), &[]), Ok(vec![128]));
        let e = thresholds(&yaml("[15, 129]"), &[]).unwrap_err();
        assert_eq!(e.path, vec![Step::Index(1)]);
        assert!(e.problem.to_string().contains("-127..128"), "{}", e.problem);
        assert!(thresholds(&yaml("2.5"), &[]).is_err());
        assert!(thresholds(&yaml("[]"), &[]).is_err());
    }
}
