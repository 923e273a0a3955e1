//! The uncertainty ensemble and its parameters: each member is drawn within the
//! profile's ranges and checked against the identity-kernel experiment, and each
//! parameter moves the profile as docs/noise.md says.

use crate::sim::noise::{BusKind, Parameter, Profile};
use crate::verify::ensemble::ensemble;
use crate::verify::ensemble::identity::{self, Setup};

#[test]
fn the_ensemble_is_deterministic_and_keeps_the_measured_combinations() {
    let p = Profile::builtin("scamp5").unwrap();
    let a = ensemble(&p).unwrap();
    let b = ensemble(&p).unwrap();
    assert_eq!(a, b);
    let u = p.uncertainty.as_ref().unwrap();
    assert_eq!(a.len(), 1 + 2 * 6 + u.samples as usize);
    assert!(a[0].values.is_empty() && a[0].profile == p && a[0].rejected.is_none());
    for m in &a {
        for (key, v) in &m.values {
            let k = Parameter::ALL.iter().find(|k| k.key() == *key).unwrap();
            let r = u.range(*k).unwrap();
            assert!(r.low <= *v && *v <= r.high);
        }
        let t = &m.profile.transfer;
        // bus2's offset excess over bus and the kernel's first-order loss are kept.
        let excess = t.bus2.offset - t.bus_1.offset;
        assert!((excess - p.transfer.bus2.offset).abs() < 1e-9);
        let loss = 5.5 * t.bus_1.gain + t.bus2.gain;
        assert!((loss - (5.5 * p.transfer.bus_1.gain + p.transfer.bus2.gain)).abs() < 1e-12);
        // An accepted member reproduces the identity-kernel measurement.
        if m.rejected.is_none() {
            let rows = identity::compare(&m.profile, &[0, 120], 32, Setup::default()).unwrap();
            assert!(identity::holds(&rows));
        }
    }
}

#[test]
fn parameters_move_the_profile_as_documented() {
    let p = Profile::builtin("scamp5").unwrap();
    let q = Parameter::PlainOffset.apply(&p, -1.0);
    assert_eq!(q.transfer.bus_1.offset, -1.0);
    assert!((q.transfer.bus2.offset - (p.transfer.bus2.offset - 1.0)).abs() < 1e-12);
    let q = Parameter::GainRatio.apply(&p, 1.0);
    assert_eq!(q.transfer.kind(BusKind::Half).gain, q.transfer.bus_1.gain);
    let q = Parameter::CaptureScale.apply(&p, 0.0);
    assert_eq!(q.capture, Default::default());
    // The nominal values reproduce the profile.
    for k in Parameter::ALL {
        let q = k.apply(&p, k.nominal(&p));
        for ((_, a), (_, b)) in q.transfer.all().iter().zip(p.transfer.all().iter()) {
            assert!((a.gain - b.gain).abs() < 1e-12 && (a.offset - b.offset).abs() < 1e-12);
            assert!((a.noise - b.noise).abs() < 1e-12 && (a.pattern - b.pattern).abs() < 1e-12);
        }
    }
}

/// The calibration holds: every measured point of docs/noise.md within the tolerance of
/// `identity::tolerance` (bias 2 + 6 %, std 1.5 + 25 %), chip seed 1, run seeds 1, 2.
#[test]
fn scamp5_reproduces_the_identity_kernel_measurements() {
    let setup = Setup {
        chip_seed: 1,
        run_seed: 1,
        reps: 2,
    };
    let rows =
        identity::compare(&Profile::builtin("scamp5").unwrap(), &[0, 120], 32, setup).unwrap();
    let mut checked = 0;
    for r in &rows {
        if let Some((mb, ms)) = r.measured {
            let (tb, ts) = identity::tolerance(mb, ms);
            assert!(
                (r.bias - mb).abs() <= tb && (r.std - ms).abs() <= ts,
                "input {} k {}: measured {mb}/{ms}, simulated {:.2}/{:.2}",
                r.input,
                r.k,
                r.bias,
                r.std
            );
            checked += 1;
        }
    }
    assert_eq!(checked, identity::MEASURED.len());
    // The drift heads for a fixed point below zero: an input there barely moves.
    let fixed = identity::simulate(&Profile::builtin("scamp5").unwrap(), -70, 8, setup).unwrap();
    assert!(fixed[8].bias.abs() < 4.0, "{:?}", fixed[8]);
    // Under `ideal` the kernel is exactly the identity.
    let ideal = identity::simulate(&Profile::builtin("ideal").unwrap(), 120, 4, setup).unwrap();
    assert!(ideal.iter().all(|r| r.bias == 0.0 && r.std == 0.0));
}
