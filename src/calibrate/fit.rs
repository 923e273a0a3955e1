//! The fit of a profile's free parameters to the identity-kernel measurements
//! (docs/noise.md) by Nelder-Mead: how the `scamp5` profile's numbers were obtained
//! (`scamp noise calibrate --fit`).

use scamp::Profile;
use scamp::{identity::compare, identity::misfit, identity::CalibrationError, identity::Setup};

/// The free parameters of the fit, in order, with what they set in the profile.
pub const FIT_PARAMETERS: &[&str] = &[
    "transfer gain g (bus_k: g, bus2: 2g, bus3: 3g)",
    "bus2 offset o (bus3: 2o)",
    "fixed_pattern.gain",
    "fixed_pattern.offset",
    "transfer noise s_t (bus2: 2 s_t, bus3: 3 s_t)",
    "load.gain",
    "load.pattern_offset",
    "load.pattern_gain",
    "readout.noise",
];

/// The fitted parameters of a profile, in the order of [`FIT_PARAMETERS`].
pub fn parameters(p: &Profile) -> Vec<f64> {
    vec![
        p.transfer.bus_1.gain,
        p.transfer.bus2.offset,
        p.fixed_pattern.gain,
        p.fixed_pattern.offset,
        p.transfer.bus_1.noise,
        p.load.gain,
        p.load.pattern_offset,
        p.load.pattern_gain,
        p.readout.noise,
    ]
}

/// `base` with the fitted parameters `x` (spreads taken as absolute values; the ratios
/// between bus kinds are the assumptions listed in the scamp5 profile).
pub fn with_parameters(base: &Profile, x: &[f64]) -> Profile {
    let mut p = base.clone();
    let g = x[0].clamp(-0.2, 0.2);
    let o = x[1].clamp(-32.0, 32.0);
    let st = x[4].abs().min(16.0);
    for (kind, t) in p.transfer.all_mut() {
        // Everything scales with the receivers the current is split between.
        let n = kind.receivers() as f64;
        t.gain = n * g;
        t.offset = (n - 1.0) * o;
        t.noise = n * st;
        t.pattern = n;
    }
    p.fixed_pattern.gain = x[2].abs().min(0.5);
    p.fixed_pattern.offset = x[3].abs().min(16.0);
    p.load.gain = x[5].clamp(-0.2, 0.2);
    p.load.pattern_offset = x[6].abs().min(16.0);
    p.load.pattern_gain = x[7].abs().min(0.5);
    p.readout.noise = x[8].abs().min(16.0);
    p
}

/// Fits the free parameters of `start` to the measured series (docs/noise.md; Nelder-Mead on [`misfit`], the
/// seeds fixed so that the objective is deterministic). Returns the fitted profile and
/// its misfit.
pub fn fit(
    start: &Profile,
    setup: Setup,
    iterations: u32,
    progress: impl FnMut(u32, f64),
) -> Result<(Profile, f64), CalibrationError> {
    let eval = |x: &[f64]| -> Result<f64, CalibrationError> {
        let p = with_parameters(start, x);
        Ok(misfit(&compare(&p, &[0, 120], 32, setup)?))
    };
    let (best, value) =
        super::simplex::minimise_with(&parameters(start), iterations, eval, progress)?;
    Ok((with_parameters(start, &best), value))
}
