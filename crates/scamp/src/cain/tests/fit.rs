//! The spec's `fit` key rescales the kernels check holds a program to (moved from the
//! command's `tests/cain_objective.rs`: `approximate_spec` is not the library's surface).

use crate::cain::{approximate_spec, check_targets, parse_spec};

#[test]
fn the_spec_key_fits_for_check_too() {
    let text =
        std::fs::read_to_string(super::repo().join("programs/analognet2.yaml")).expect("spec");
    let s = parse_spec(&format!("{text}fit: true\n")).expect("valid spec");
    assert!(s.fit);
    let kernels = approximate_spec(&s).expect("approximates");
    assert!(kernels
        .iter()
        .all(|k| k.approx.depth == 4 && k.fitted.is_some()));
    // The check targets' exact weights follow the rescale: B's -4/4 becomes -4/16.
    let targets = check_targets(&s, &kernels);
    assert_eq!(targets[1].exact[[0, 0]], -0.25);
    assert_eq!(targets[1].approx[[0, 0]], -0.25);
    let err = parse_spec(&format!("{text}fit: maybe\n")).expect_err("refused");
    // Positioned at the value (line 28 of the spec with the key appended).
    let msg = err.to_string();
    assert!(msg.starts_with("28:6:") && msg.contains("boolean"), "{msg}");
}
