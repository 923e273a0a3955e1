//! `load_in(a, v)`, the vendor's load without correction: the same bus expansion as
//! `in(a, v)` with the DAC set uncorrected, an exact result under `ideal`, and under
//! `scamp5` the error of the uncorrected load that `in` does not show.

use scamp::{isa::parse_program, isa::BusOp, isa::Device, isa::Reg};
use scamp::{run, Array, EdgeMode, DEFAULT_CLOCK_HZ};
use scamp::{NoiseModel, Profile};

fn program(text: &str) -> scamp::isa::Program {
    parse_program(text, Device::default()).expect("valid program")
}

#[test]
fn expansion_is_the_dac_setting_then_two_transfers() {
    for name in ["load_in", "scamp5_load_in"] {
        for (reg, v) in [(Reg::Gen(0), 0), (Reg::Gen(3), -128), (Reg::Gen(5), 127)] {
            let p = program(&format!("{name}({reg}, {v});"));
            let s = &p.stmts[0];
            assert_eq!(
                s.ops,
                vec![
                    BusOp::DacUncorrected(v),
                    BusOp::transfer(&[Reg::News], &[Reg::In]),
                    BusOp::transfer(&[reg], &[Reg::News]),
                ]
            );
            assert_eq!(s.cycles(), 2);
        }
    }
    // The corrected load has the same transfers behind a corrected DAC setting.
    let corrected = program("in(B, 7);");
    assert_eq!(corrected.stmts[0].ops[0], BusOp::Dac(7));
    assert_eq!(
        corrected.stmts[0].ops[1..],
        program("load_in(B, 7);").stmts[0].ops[1..]
    );
    for bad in ["load_in(A, 128);", "load_in(NEWS, 1);", "load_in(A);"] {
        assert!(parse_program(bad, Device::default()).is_err(), "{bad}");
    }
}

#[test]
fn ideal_result_is_the_value_where_flag_is_set() {
    for v in [-128, -37, 0, 1, 127] {
        let mut a = Array::new(6, EdgeMode::Zero);
        let p = program(&format!(
            "load_in(C, 100); where(C); load_in(D, {v}); all();"
        ));
        run(&mut a, &p, 1, DEFAULT_CLOCK_HZ).unwrap();
        a.settle();
        assert!(a.plane(Reg::Gen(3)).unwrap().iter().all(|&x| x == v as f32));
        // NEWS keeps what the second transfer read: minus the value.
        assert!(a.plane(Reg::News).unwrap().iter().all(|&x| x == -v as f32));
    }
    // Under a partial FLAG only the flagged PEs load.
    let mut a = Array::new(6, EdgeMode::Zero);
    a.plane_mut(Reg::Gen(0)).unwrap()[..100].fill(5.0);
    let p = program("where(A); load_in(B, 9); all();");
    run(&mut a, &p, 1, DEFAULT_CLOCK_HZ).unwrap();
    a.settle();
    let b = a.plane(Reg::Gen(1)).unwrap();
    assert!(b[..100].iter().all(|&x| x == 9.0) && b[100..].iter().all(|&x| x == 0.0));
}

/// Mean of register A after `text` under `profile` (readout included).
fn mean_after(text: &str, profile: &Profile, chip: u64, seed: u64) -> (f64, Vec<f32>) {
    let mut a = Array::new(6, EdgeMode::Zero);
    a.set_layer(NoiseModel::new(profile, chip, seed));
    run(&mut a, &program(text), 1, DEFAULT_CLOCK_HZ).unwrap();
    a.settle();
    let out = a.read_out(Reg::Gen(0)).unwrap();
    (
        out.iter().map(|&x| f64::from(x)).sum::<f64>() / out.len() as f64,
        out,
    )
}

#[test]
fn the_uncorrected_load_carries_its_own_error() {
    let s = Profile::builtin("scamp5").unwrap();
    let (corrected, _) = mean_after("in(A, 0);", &s, 3, 1);
    let (raw, _) = mean_after("load_in(A, 0);", &s, 3, 1);
    // The corrected load reads back unbiased; the uncorrected one shows the profile's
    // offset (up to the readout's rounding and the per-load common noise).
    assert!(corrected.abs() < 0.2, "{corrected}");
    let want = s.load_uncorrected.offset;
    assert!(want > 0.5 && (raw - want).abs() < 4.0 * s.load_uncorrected.noise_common + 0.2);
    // The DAC setting stays uncorrected until the next corrected one.
    let (later, _) = mean_after("load_in(A, 0); mov(A, IN);", &s, 3, 1);
    assert!((later - raw).abs() < 1.0, "{later} vs {raw}");
    let (reset, _) = mean_after("load_in(A, 0); in(A, 0);", &s, 3, 1);
    assert!(reset.abs() < 0.2, "{reset}");
    // Under `ideal` both are exact.
    let ideal = Profile::builtin("ideal").unwrap();
    let (_, out) = mean_after("load_in(A, -17);", &ideal, 3, 1);
    assert!(out.iter().all(|&x| x == -17.0));
}
