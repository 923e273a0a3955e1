//! The register-range experiment (docs/noise.md, "Measuring the register range"): a
//! value loaded with `in()`, doubled k times (`mov(B, A); add(A, A, B)`: a register is
//! read once per bus instruction), halved back k times
//! (`diva(A, E, F)`) so that the ADC can read it, and read out per PE. Without
//! saturation the read-back stays near the input whatever k (the transfer errors move it
//! a little, and the profile models them); once `v 2^k` passes the knee the doubled value
//! is compressed and the read-back falls below the input. The simulator predicts the
//! read-back under a profile, and fits the profile's knee and limit to a device dataset.

use scamp::{identity::CalibrationError, identity::DataProblem, identity::Setup};
use scamp::{isa::parse_program, isa::Device, isa::Program, isa::Reg};
use scamp::{run, DEFAULT_CLOCK_HZ};
use scamp::{Array, EdgeMode};
use scamp::{NoiseModel, Profile, Saturation};
use serde::Serialize;

/// The device program for input `v` and `k` doublings.
pub fn device_program(v: i32, k: u32) -> String {
    let mut s = format!("in(A, {v});\n");
    for _ in 0..k {
        s.push_str("mov(B, A);\nadd(A, A, B);\n");
    }
    for _ in 0..k {
        s.push_str("diva(A, E, F);\n");
    }
    s
}

/// One point of the experiment: the mean read-back over the array.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Point {
    /// The loaded value.
    pub input: i32,
    /// Doublings (and halvings).
    pub k: u32,
    /// Mean read-back measured on the device, when the dataset has this point.
    pub measured: Option<f64>,
    /// Mean read-back the simulator predicts.
    pub simulated: f64,
}

/// A device dataset: per (input, k), the mean of the values read back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dataset {
    /// `(input, k, mean read-back, values averaged)`, in file order of first appearance.
    pub points: Vec<(i32, u32, f64, u64)>,
}

/// Largest dataset file read (a frame per point, one line per PE, fits many times).
pub const MAX_DATASET_BYTES: u64 = 64 << 20;

/// Largest number of doublings: `127 * 2^k` stays far inside f32 and the profile's levels.
pub const MAX_K: u32 = 16;

impl Dataset {
    /// Reads CSV text with a header `input,k,value`: one line per PE read back (or per
    /// mean of several). `file` names it in errors, which carry the line.
    ///
    /// ```
    /// use scamp::{identity::CalibrationError, identity::DataProblem};
    /// use scamp_cli::calibrate::saturation::Dataset;
    /// assert!(Dataset::parse("input,k,value\n10,2,9.5\n", "d.csv").is_ok());
    /// let e = Dataset::parse("input,k,value\n10,2\n", "d.csv").unwrap_err();
    /// assert_eq!(e.to_string(), "d.csv:2:1: expected 3 fields, got 2");
    /// assert!(matches!(e, CalibrationError::Data { problem: DataProblem::Fields(2), .. }));
    /// ```
    pub fn parse(text: &str, file: &str) -> Result<Dataset, CalibrationError> {
        let fail = |line: usize, col: usize, problem: DataProblem| CalibrationError::Data {
            file: file.to_string(),
            line,
            col,
            problem,
        };
        let mut lines = text.lines().enumerate();
        let header = lines.next().map(|(_, l)| l.trim()).unwrap_or_default();
        if header.replace(' ', "") != "input,k,value" {
            return Err(fail(1, 1, DataProblem::Header));
        }
        let mut ds = Dataset::default();
        for (i, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            if fields.len() != 3 {
                return Err(fail(i + 1, 1, DataProblem::Fields(fields.len())));
            }
            let col = |f: usize| 1 + fields[..f].iter().map(|s| s.len() + 1).sum::<usize>();
            let input: i32 = fields[0]
                .parse()
                .ok()
                .filter(|&v| scamp::isa::DAC.contains(&i64::from(v)))
                .ok_or_else(|| fail(i + 1, col(0), DataProblem::Input))?;
            let k: u32 = fields[1]
                .parse()
                .ok()
                .filter(|k| *k <= MAX_K)
                .ok_or_else(|| fail(i + 1, col(1), DataProblem::K { max: MAX_K }))?;
            let value: f64 = fields[2]
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| fail(i + 1, col(2), DataProblem::Value))?;
            match ds.points.iter_mut().find(|p| p.0 == input && p.1 == k) {
                Some(p) => {
                    p.2 += (value - p.2) / (p.3 + 1) as f64;
                    p.3 += 1;
                }
                None => ds.points.push((input, k, value, 1)),
            }
        }
        if ds.points.is_empty() {
            return Err(fail(2, 1, DataProblem::Empty));
        }
        Ok(ds)
    }
}

/// The simulated mean read-back for each `(input, k)` under `profile` (seeds of `setup`,
/// one repetition: a frame already averages 65,536 PEs).
pub fn simulate(
    profile: &Profile,
    points: &[(i32, u32)],
    setup: Setup,
) -> Result<Vec<f64>, CalibrationError> {
    let device = Device::default();
    scamp::frames(points.len(), |i| {
        let (v, k) = points[i];
        let program: Program = parse_program(&device_program(v, k), device)?;
        let mut array = Array::new(device.general, EdgeMode::Zero);
        array.set_layer(NoiseModel::new(profile, setup.chip_seed, setup.run_seed));
        run(&mut array, &program, 1, DEFAULT_CLOCK_HZ)?;
        array.settle();
        let out = array.read_out(Reg::Gen(0)).unwrap_or_default();
        Ok(out.iter().map(|&x| f64::from(x)).sum::<f64>() / out.len().max(1) as f64)
    })
}

/// The comparison of `data` with `profile`'s prediction.
pub fn compare(
    profile: &Profile,
    data: &Dataset,
    setup: Setup,
) -> Result<Vec<Point>, CalibrationError> {
    let points: Vec<(i32, u32)> = data.points.iter().map(|p| (p.0, p.1)).collect();
    let sim = simulate(profile, &points, setup)?;
    Ok(data
        .points
        .iter()
        .zip(sim)
        .map(|(p, s)| Point {
            input: p.0,
            k: p.1,
            measured: Some(p.2),
            simulated: s,
        })
        .collect())
}

/// The prediction for every input of `inputs` and k in `0..=k_max`.
pub fn predict(
    profile: &Profile,
    inputs: &[i32],
    k_max: u32,
    setup: Setup,
) -> Result<Vec<Point>, CalibrationError> {
    let points: Vec<(i32, u32)> = inputs
        .iter()
        .flat_map(|&v| (0..=k_max.min(MAX_K)).map(move |k| (v, k)))
        .collect();
    let sim = simulate(profile, &points, setup)?;
    Ok(points
        .iter()
        .zip(sim)
        .map(|(&(input, k), simulated)| Point {
            input,
            k,
            measured: None,
            simulated,
        })
        .collect())
}

/// Root mean square of measured - simulated over the points.
pub fn misfit(points: &[Point]) -> f64 {
    let n = points.len().max(1) as f64;
    let sum: f64 = points
        .iter()
        .filter_map(|p| p.measured.map(|m| (m - p.simulated).powi(2)))
        .sum();
    (sum / n).sqrt()
}

/// `base` with knees at `-knee, knee` and limits at `-limit, limit` (its form kept, the
/// tanh form when it has no saturation).
pub fn with_range(base: &Profile, knee: f64, limit: f64) -> Profile {
    let mut p = base.clone();
    let shape = base
        .saturation
        .clone()
        .unwrap_or_else(|| Saturation::hard(-limit, limit));
    p.saturation = Some(shape.symmetric(knee, limit));
    p
}

/// The fitted register range.
#[derive(Clone, Debug, Serialize)]
pub struct Fit {
    /// Knee magnitude.
    pub knee: f64,
    /// Limit magnitude.
    pub limit: f64,
    /// RMS misfit of the read-back at the fit.
    pub misfit: f64,
    /// The comparison at the fit.
    pub points: Vec<Point>,
}

/// The knee and limit magnitudes that make `base` reproduce `data` best (least squares
/// on the mean read-back, Nelder-Mead over the knee and the room above it, both in
/// 1..8192, from the profile's own or a knee of 128 and a limit of 1024).
pub fn fit(
    base: &Profile,
    data: &Dataset,
    setup: Setup,
    iterations: u32,
) -> Result<Fit, CalibrationError> {
    let max = scamp::MAX_LEVEL;
    let range = |x: &[f64]| {
        let knee = x[0].abs().clamp(1.0, max);
        (knee, (knee + x[1].abs()).min(max))
    };
    let eval = |x: &[f64]| -> Result<f64, CalibrationError> {
        let (knee, limit) = range(x);
        Ok(misfit(&compare(
            &with_range(base, knee, limit),
            data,
            setup,
        )?))
    };
    let (k0, l0) = base
        .saturation
        .as_ref()
        .map_or((128.0, 1024.0), |s| (s.knee(), s.limit()));
    let x0 = vec![k0, (l0 - k0).max(k0)];
    let best = super::simplex::minimise(&x0, iterations, eval)?;
    let (knee, limit) = range(&best);
    let points = compare(&with_range(base, knee, limit), data, setup)?;
    Ok(Fit {
        knee,
        limit,
        misfit: misfit(&points),
        points,
    })
}

/// What `noise calibrate --saturation` (or `--saturation-predict`) prints.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The profile as given.
    pub profile: String,
    /// Knee and limit of that profile (magnitudes; `None`: no saturation).
    pub knee: Option<f64>,
    /// Its limit.
    pub limit: Option<f64>,
    /// The experiment under the profile as given (with the measurements, if any).
    pub points: Vec<Point>,
    /// The fitted range, when a dataset was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<Fit>,
}

impl Report {
    fn of(p: &Profile, given: &str, points: Vec<Point>, fit: Option<Fit>) -> Report {
        Report {
            profile: given.to_string(),
            knee: p.saturation.as_ref().map(Saturation::knee),
            limit: p.saturation.as_ref().map(Saturation::limit),
            points,
            fit,
        }
    }

    /// The prediction under `p` for `inputs` and k up to `k_max`.
    pub fn predict(
        p: &Profile,
        given: &str,
        inputs: &[i32],
        k_max: u32,
        setup: Setup,
    ) -> Result<Report, CalibrationError> {
        if let Some(v) = inputs
            .iter()
            .find(|&&v| !scamp::isa::DAC.contains(&i64::from(v)))
        {
            return Err(CalibrationError::Input(*v));
        }
        Ok(Report::of(
            p,
            given,
            predict(p, inputs, k_max, setup)?,
            None,
        ))
    }

    /// The fit of `p`'s knee and limit to `data`.
    pub fn fit(
        p: &Profile,
        given: &str,
        data: &Dataset,
        setup: Setup,
        iterations: u32,
    ) -> Result<Report, CalibrationError> {
        let points = compare(p, data, setup)?;
        let fitted = fit(p, data, setup, iterations)?;
        Ok(Report::of(p, given, points, Some(fitted)))
    }

    /// The text the terminal shows.
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let range = |k: Option<f64>, l: Option<f64>| match (k, l) {
            (Some(k), Some(l)) => format!("knee {k:.1}, limit {l:.1}"),
            _ => "no saturation".to_string(),
        };
        let mut s = format!(
            "register range: `in(A, v)`, k x `mov(B, A); add(A, A, B)`, k x `diva(A, E, F)`, mean read-back\n\
             profile {} ({})\n",
            self.profile,
            range(self.knee, self.limit)
        );
        if let Some(f) = &self.fit {
            let _ = writeln!(
                s,
                "fitted  knee {:.1}, limit {:.1} (rms misfit {:.3})",
                f.knee, f.limit, f.misfit
            );
        }
        let _ = writeln!(
            s,
            "\n{:>6} {:>3} {:>10} {:>10} {:>10}",
            "input", "k", "measured", "profile", "fitted"
        );
        for (i, p) in self.points.iter().enumerate() {
            let cell = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
            let fitted = self
                .fit
                .as_ref()
                .and_then(|f| f.points.get(i))
                .map(|q| q.simulated);
            let _ = writeln!(
                s,
                "{:>6} {:>3} {:>10} {:>10.2} {:>10}",
                p.input,
                p.k,
                cell(p.measured),
                p.simulated,
                cell(fitted)
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datasets_average_per_point_and_reject_bad_lines() {
        let d = Dataset::parse("input,k,value\n60,0,59\n60,0,61\n60,2,50.5\n", "d.csv").unwrap();
        assert_eq!(d.points, vec![(60, 0, 60.0, 2), (60, 2, 50.5, 1)]);
        for (text, want) in [
            ("v,k\n", "d.csv:1:1: expected the header"),
            ("input,k,value\n60,0\n", "d.csv:2:1: expected 3 fields"),
            ("input,k,value\n300,0,1\n", "d.csv:2:1: input must be"),
            ("input,k,value\n60,x,1\n", "d.csv:2:4: k must be"),
            ("input,k,value\n60,99,1\n", "d.csv:2:4: k must be"),
            ("input,k,value\n60,1,nan\n", "d.csv:2:6: value must be"),
            ("input,k,value\n", "d.csv:2:1: no data lines"),
        ] {
            let e = Dataset::parse(text, "d.csv").unwrap_err().to_string();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn the_device_program_doubles_then_halves() {
        assert_eq!(
            device_program(5, 2),
            "in(A, 5);\nmov(B, A);\nadd(A, A, B);\nmov(B, A);\nadd(A, A, B);\n\
             diva(A, E, F);\ndiva(A, E, F);\n"
        );
    }
}
