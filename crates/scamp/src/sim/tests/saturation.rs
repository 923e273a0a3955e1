//! The default profile's register range (docs/noise.md, "Saturation"), moved from the
//! command's `tests/saturation.rs`: `Saturation::is_hard` is not the library's surface.

use crate::sim::noise::Profile;

/// `scamp5` with its knee and limit at `knee` and `limit` (as the command's
/// calibration sets them).
fn with_range(knee: f64, limit: f64) -> Profile {
    let mut p = Profile::builtin("scamp5").unwrap();
    p.saturation = p.saturation.map(|s| s.symmetric(knee, limit));
    p
}

#[test]
fn the_default_keeps_values_to_128_and_compresses_beyond() {
    let s = Profile::builtin("scamp5").unwrap().saturation.unwrap();
    assert_eq!((s.knee(), s.limit()), (128.0, 2048.0));
    assert_eq!(s.apply(127.5), 127.5);
    // docs/noise.md: a value of 1,140 is stored as about 1,056 (7 % low).
    assert!(
        (s.apply(1140.0) - 1055.6).abs() < 0.1,
        "{}",
        s.apply(1140.0)
    );
    // Tutorial chapter 7: by default a value of 500 is compressed by under 1 %; at
    // the near end of the range (knee 128, limit 512) a value
    // of 500 is stored as about 415.
    let near = with_range(128.0, 512.0).saturation.unwrap();
    assert_eq!(near.apply(500.0).round(), 415.0);
    assert!(s.apply(500.0) > 495.0 && s.apply(500.0) < 500.0);
    // Form `none` only counts: values pass unchanged.
    let none = Profile::from_yaml("saturation: {low: -10, high: 10, form: none}\n", "p")
        .unwrap()
        .saturation
        .unwrap();
    assert!(!none.is_hard());
    assert_eq!(none.apply(50.0), 50.0);
}
