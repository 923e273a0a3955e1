//! What lies beyond the array edge.

use std::str::FromStr;

/// How neighbour views behave at the array edge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EdgeMode {
    /// Reads from outside give 0; writes that would land outside are lost (default).
    #[default]
    Zero,
    /// The edge PE stands in for the missing neighbour.
    Replicate,
    /// The array is a torus.
    Wrap,
}

impl EdgeMode {
    /// Index of the cell `step` away from `i` along an axis of length `n`, or `None` when
    /// nothing is there.
    #[inline(always)]
    pub(crate) fn neighbour(self, i: usize, step: i32, n: usize) -> Option<usize> {
        let j = i as i64 + i64::from(step);
        if (0..n as i64).contains(&j) {
            return Some(j as usize);
        }
        match self {
            EdgeMode::Zero => None,
            EdgeMode::Replicate => Some(j.clamp(0, n as i64 - 1) as usize),
            EdgeMode::Wrap => Some(j.rem_euclid(n as i64) as usize),
        }
    }

    /// Name as given on the command line.
    pub fn name(self) -> &'static str {
        match self {
            EdgeMode::Zero => "zero",
            EdgeMode::Replicate => "replicate",
            EdgeMode::Wrap => "wrap",
        }
    }
}

impl FromStr for EdgeMode {
    type Err = crate::ValueError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "zero" => Ok(EdgeMode::Zero),
            "replicate" => Ok(EdgeMode::Replicate),
            "wrap" => Ok(EdgeMode::Wrap),
            _ => Err(crate::ValueError::UnknownEdgeMode {
                given: s.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::EdgeMode::*;

    #[test]
    fn neighbours_at_the_edge() {
        assert_eq!(Zero.neighbour(0, -1, 256), None);
        assert_eq!(Zero.neighbour(5, 1, 256), Some(6));
        assert_eq!(Replicate.neighbour(255, 1, 256), Some(255));
        assert_eq!(Wrap.neighbour(0, -1, 256), Some(255));
        assert_eq!(Wrap.neighbour(255, 1, 256), Some(0));
    }
}
