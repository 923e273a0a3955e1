//! `scamp noise calibrate` as one report: the identity-kernel comparison and the
//! background of the uncorrected load under one profile, serialised as `--json`
//! prints it and rendered as the text the terminal shows.

use scamp::Profile;
use scamp::{background, background::Figure};
use scamp::{identity, identity::CalibrationError, identity::Row, identity::Setup};
use serde::Serialize;
use std::fmt::Write;

/// What to compare: the profile, the inputs and the experiments' sizes and seeds.
pub struct Request<'a> {
    /// The profile to compare with the measurements.
    pub profile: &'a Profile,
    /// The profile as the user named it (shown when the profile has no name).
    pub given: &'a str,
    /// Uniform input values of the identity experiment.
    pub inputs: &'a [i32],
    /// Largest number of kernel applications.
    pub k_max: u32,
    /// Seeds and repetitions (the background runs on the same chip, from the same seed).
    pub setup: Setup,
    /// Frames of the background experiment.
    pub frames: u32,
}

/// What `scamp noise calibrate --json` prints.
#[derive(Clone, Debug, Serialize)]
pub struct Calibration {
    /// The profile's name (else as given).
    pub profile: String,
    /// The profile as given on the command line (the text report shows it).
    #[serde(skip)]
    pub given: String,
    /// Chip seed.
    pub chip_seed: u64,
    /// Run seed of the first repetition.
    pub seed: u64,
    /// Repetitions averaged per point.
    pub reps: u32,
    /// Sum of squared errors in units of the tolerance.
    pub misfit: f64,
    /// Whether every measured point is within tolerance.
    pub within_tolerance: bool,
    /// Measured against simulated, per input and k.
    pub rows: Vec<Row>,
    /// The background experiment.
    pub background: Background,
}

/// The background of the uncorrected load, device against simulated.
#[derive(Clone, Debug, Serialize)]
pub struct Background {
    /// Frames simulated.
    pub frames: u32,
    /// Whether every held statistic is within tolerance.
    pub within_tolerance: bool,
    /// Per statistic, device and simulated values.
    pub figures: Vec<Figure>,
}

/// Runs both experiments of `req`.
pub fn calibrate(req: &Request) -> Result<Calibration, CalibrationError> {
    let rows = identity::compare(req.profile, req.inputs, req.k_max, req.setup)?;
    let s = req.setup;
    let figures = background::figures(req.profile, s.chip_seed, s.run_seed, req.frames as usize)?;
    Ok(Calibration {
        profile: if req.profile.name.is_empty() {
            req.given.to_string()
        } else {
            req.profile.name.clone()
        },
        given: req.given.to_string(),
        chip_seed: s.chip_seed,
        seed: s.run_seed,
        reps: s.reps,
        misfit: identity::misfit(&rows),
        within_tolerance: identity::holds(&rows),
        rows,
        background: Background {
            frames: req.frames,
            within_tolerance: figures.iter().all(Figure::holds),
            figures,
        },
    })
}

/// "yes" or "no".
fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The text report: the identity table, then the background table.
pub fn text(c: &Calibration) -> String {
    let mut s = String::new();
    // Writing into a String cannot fail.
    let _ = identity_text(&mut s, c);
    let _ = background_text(&mut s, c);
    s
}

fn identity_text(s: &mut String, c: &Calibration) -> std::fmt::Result {
    writeln!(
        s,
        "identity kernel `{}` applied k times to a uniform input; bias = mean(input - \
         output), std = spatial std of input - output",
        identity::KERNEL
    )?;
    writeln!(
        s,
        "profile {}, chip seed {}, run seeds {}..{}, averaged over {} repetitions",
        c.given,
        c.chip_seed,
        c.seed,
        c.seed + u64::from(c.reps) - 1,
        c.reps
    )?;
    writeln!(
        s,
        "\n{:>6} {:>3} {:>14} {:>14} {:>13} {:>13}",
        "input", "k", "measured bias", "simulated bias", "measured std", "simulated std"
    )?;
    for r in &c.rows {
        let (mb, ms) = match r.measured {
            Some((b, s)) => (format!("{b:.1}"), format!("{s:.1}")),
            None => ("-".into(), "-".into()),
        };
        writeln!(
            s,
            "{:>6} {:>3} {:>14} {:>14.2} {:>13} {:>13.2}",
            r.input, r.k, mb, r.bias, ms, r.std
        )?;
    }
    writeln!(
        s,
        "\nmisfit {:.3} (sum of squared errors in units of the tolerance); every \
         measured point within tolerance (bias 2 + 6%, std 1.5 + 25%): {}",
        c.misfit,
        yes(c.within_tolerance)
    )
}

fn background_text(s: &mut String, c: &Calibration) -> std::fmt::Result {
    let b = &c.background;
    writeln!(
        s,
        "\nbackground of the uncorrected load `load_in(A, 0)`, 8-bit levels (128 = analogue \
         0): device (810 frames, another chip) vs simulated ({} frames, chip seed {}, run \
         seeds {}..{})",
        b.frames,
        c.chip_seed,
        c.seed,
        c.seed + u64::from(b.frames) - 1
    )?;
    writeln!(
        s,
        "\n{:<28} {:>9} {:>10} {:>10}",
        "statistic", "device", "simulated", "tolerance"
    )?;
    for f in &b.figures {
        let tol = f.tolerance.map_or("-".into(), |t| format!("{t:.2}"));
        writeln!(
            s,
            "{:<28} {:>9.2} {:>10.2} {:>10}",
            f.name, f.device, f.simulated, tol
        )?;
    }
    writeln!(
        s,
        "\nevery held statistic within tolerance ({:.0} %): {}",
        100.0 * background::RELATIVE_TOLERANCE,
        yes(b.within_tolerance)
    )
}
