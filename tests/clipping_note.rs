//! The clipping note of `scamp check` (the README's first command) says what the
//! readout clipping means for a network that keeps only the sign of an output, with
//! the measured count of signs it changes.

mod common;

use common::{json, scamp};

#[test]
fn the_clipping_note_counts_the_decisions_clipping_changes() {
    let args = [
        "check",
        "programs/analognet2.scamp",
        "--kernel",
        "programs/analognet2.yaml",
    ];
    let r = json(&scamp(&[&args[..], &["--json"]].concat()));
    let kernels = r["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 3);
    for k in kernels {
        let s = &k["sources"];
        assert!(s["clipped_share"].as_f64().unwrap() > 0.0, "{s}");
        // Clipping to the symmetric readout range keeps every sign.
        assert_eq!(s["clipped_sign_changes"], 0, "{s}");
    }
    let text = String::from_utf8(scamp(&args).stdout).unwrap();
    let notes: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("note: the exact result"))
        .collect();
    assert_eq!(notes.len(), 3, "{text}");
    for n in notes {
        assert!(n.contains("only the sign of this output"), "{n}");
        assert!(n.ends_with("clipping changed the sign of 0 PEs"), "{n}");
    }
}
