//! The second device measurement: the background of the uncorrected load. `load_in(A,
//! 0)` over 16 run seeds of one chip reproduces the device's statistics (temporal,
//! spatial, column and row figures) within 30 %, on several chips, while the corrected
//! load shows none of the structure.

use crate::sim::noise::Profile;
use crate::verify::ensemble::background::{self, BackgroundStats, DEVICE};

fn stats(profile: &Profile, value: i32, chip: u64) -> BackgroundStats {
    let frames = background::frames(profile, value, chip, 100, 16).unwrap();
    background::statistics(&frames)
}

fn near(what: &str, sim: f64, device: f64, rel: f64) {
    assert!(
        (sim - device).abs() <= rel * device.abs(),
        "{what}: simulated {sim:.3}, device {device:.3}"
    );
}

#[test]
fn load_in_background_matches_the_device_on_several_chips() {
    let p = Profile::builtin("scamp5").unwrap();
    for chip in [1, 5, 11] {
        let s = stats(&p, 0, chip);
        near("column std", s.column_std, DEVICE.column_std, 0.3);
        near("row std", s.row_std, DEVICE.row_std, 0.3);
        near(
            "row 0 offset",
            s.row0_mean - s.grand_mean,
            DEVICE.row0_mean - DEVICE.grand_mean,
            0.3,
        );
        near("temporal", s.temporal[0], DEVICE.temporal[0], 0.3);
        near("spatial", s.spatial_std, DEVICE.spatial_std, 0.3);
        near("fixed pattern", s.fixed_pattern, DEVICE.fixed_pattern, 0.3);
        near(
            "grand mean offset",
            s.grand_mean - 128.0,
            DEVICE.grand_mean - 128.0,
            0.3,
        );
        // The temporal part is small next to the fixed pattern, as on the device.
        assert!(s.temporal[0] < 0.4 * s.fixed_pattern);
        // The bow: centre columns above the edge columns.
        assert!(
            s.column_profile[3] - s.column_profile[0] > 2.0,
            "{:?}",
            s.column_profile
        );
        assert!(background::compare(&s).iter().all(|f| f.holds()));
    }
}

#[test]
fn the_fixed_pattern_is_the_chips_and_the_temporal_part_the_runs() {
    let p = Profile::builtin("scamp5").unwrap();
    let a = background::frames(&p, 0, 4, 1, 16).unwrap();
    let b = background::frames(&p, 0, 4, 1, 16).unwrap();
    assert_eq!(a, b, "the same seeds give the same frames");
    let sa = background::statistics(&a);
    let other_runs = background::statistics(&background::frames(&p, 0, 4, 500, 16).unwrap());
    // Other run seeds of the same chip: the same time-averaged pattern, to within the
    // temporal noise averaged over 16 frames.
    let mean_a: Vec<f64> = (0..a[0].len())
        .map(|i| a.iter().map(|f| f[i]).sum::<f64>() / 16.0)
        .collect();
    let c = background::frames(&p, 0, 4, 500, 16).unwrap();
    let mean_c: Vec<f64> = (0..c[0].len())
        .map(|i| c.iter().map(|f| f[i]).sum::<f64>() / 16.0)
        .collect();
    let diff = mean_a
        .iter()
        .zip(&mean_c)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        / mean_a.len() as f64;
    assert!(diff.sqrt() < 0.5, "{}", diff.sqrt());
    assert!((sa.column_std - other_runs.column_std).abs() < 0.05);
    // The corrected load has no column structure and no offset.
    let corrected = Profile::builtin("scamp5").unwrap();
    let frames = corrected_frames(&corrected);
    let s = background::statistics(&frames);
    assert!(
        s.column_std < 0.3 && (s.grand_mean - 128.0).abs() < 0.3,
        "{s:?}"
    );
    assert!((s.row0_mean - s.grand_mean).abs() < 1.0);
}

/// Frames of the corrected load `in(A, 0)` on chip 4, run seeds 1..=16, in levels.
fn corrected_frames(p: &Profile) -> Vec<Vec<f64>> {
    use crate::isa::{parse_program, Device, Reg};
    use crate::sim::noise::NoiseModel;
    use crate::sim::{run, Array, EdgeMode, DEFAULT_CLOCK_HZ};
    let program = parse_program("in(A, 0);", Device::default()).unwrap();
    (1..=16)
        .map(|seed| {
            let mut a = Array::new(6, EdgeMode::Zero);
            a.set_layer(NoiseModel::new(p, 4, seed));
            run(&mut a, &program, 1, DEFAULT_CLOCK_HZ).unwrap();
            a.settle();
            let out = a.read_out(Reg::Gen(0)).unwrap();
            out.iter().map(|&v| f64::from(v) + 128.0).collect()
        })
        .collect()
}

#[test]
fn ideal_background_is_flat() {
    let s = stats(&Profile::builtin("ideal").unwrap(), 0, 1);
    assert_eq!(
        (s.grand_mean, s.fixed_pattern, s.temporal[0]),
        (128.0, 0.0, 0.0)
    );
    let s = stats(&Profile::builtin("ideal").unwrap(), -20, 1);
    assert_eq!(s.grand_mean, 108.0);
}
