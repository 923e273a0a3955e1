//! The array fuses the bus instructions of a statement into band passes
//! (the batches `run` uses). These tests check, on random
//! programs drawn from the whole instruction table, random register contents, every edge mode and a partial
//! FLAG, that the fused path is bit-identical to executing one bus instruction at a time
//! (`step`, used by `run_observed`) and to a naive PE-by-PE reference of the bus
//! semantics written here from docs/machine.md; and that under the `scamp5` noise profile the
//! fused and unfused paths draw exactly the same noise.

use crate::isa::{self, parse_program, BusOp, DReg, Device, Program, Reg, Slot};
use crate::sim::machine::{bus_value, step};
use crate::sim::noise::{KneeForm, NoiseModel, Profile};
use crate::sim::vector_unit::{forced, supported, VectorUnit};
use crate::sim::{run, run_observed, Array, EdgeMode, DEFAULT_CLOCK_HZ, N, PES};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const GENERAL: usize = 6;
const EDGES: [EdgeMode; 3] = [EdgeMode::Zero, EdgeMode::Replicate, EdgeMode::Wrap];
const DIRS: [&str; 4] = ["north", "east", "south", "west"];

/// Text of one random operand for `slot`.
fn operand(rng: &mut StdRng, slot: Slot) -> String {
    let general = || ["A", "B", "C", "D", "E", "F"];
    let pick = |rng: &mut StdRng, xs: &[&str]| xs[rng.gen_range(0..xs.len())].to_string();
    match slot {
        Slot::Dst | Slot::Acc => pick(rng, &general()),
        Slot::Src => pick(rng, &["A", "B", "C", "D", "E", "F", "A", "B", "PIX", "IN"]),
        Slot::BusDst => pick(rng, &["A", "B", "C", "NEWS", "XN", "XE", "XS", "XW"]),
        Slot::BusSrc => pick(
            rng,
            &[
                "A", "B", "C", "D", "NEWS", "XN", "XE", "XS", "XW", "PIX", "IN",
            ],
        ),
        Slot::Dir => pick(rng, &DIRS),
        Slot::Value => rng.gen_range(-128..=127).to_string(),
        Slot::DDst(_) => format!("R{}", rng.gen_range(0..=12)),
        Slot::DSrc(_) => format!("R{}", rng.gen_range(0..=12)),
        Slot::Dirs => format!("{}|{}", pick(rng, &DIRS), pick(rng, &DIRS)),
        Slot::Bit => rng.gen_range(0..=1).to_string(),
    }
}

/// A random valid statement of `def` (operand draws that break a rule are redrawn).
fn statement(rng: &mut StdRng, def: &isa::Def) -> Option<String> {
    for _ in 0..50 {
        let args: Vec<String> = def.slots.iter().map(|&s| operand(rng, s)).collect();
        let text = format!("{}({});", def.name, args.join(", "));
        if parse_program(&text, Device::default()).is_ok() {
            return Some(text);
        }
    }
    None
}

/// A random program: every table entry once (in random order), plus `extra` random ones.
fn random_program(rng: &mut StdRng, extra: usize) -> Program {
    let defs = isa::table();
    let mut order: Vec<usize> = (0..defs.len()).collect();
    order.extend((0..extra).map(|_| rng.gen_range(0..defs.len())));
    for i in (1..order.len()).rev() {
        order.swap(i, rng.gen_range(0..=i));
    }
    let text: String = order
        .iter()
        .filter_map(|&i| statement(rng, &defs[i]))
        .collect::<Vec<_>>()
        .join("\n");
    parse_program(&text, Device::default()).expect("statements parse one by one")
}

/// A random array state: values in -100..100 (some -0.0 and +0.0, which a sum started
/// from the wrong identity tells apart), random digital registers, FLAG partial or full, an exposure.
fn random_array(rng: &mut StdRng, edge: EdgeMode, partial_flag: bool) -> Array {
    let mut a = Array::new(GENERAL, edge);
    let mut regs: Vec<Reg> = (0..GENERAL as u8).map(Reg::Gen).collect();
    regs.push(Reg::News);
    for r in regs {
        for v in a.plane_mut(r).unwrap() {
            *v = match rng.gen_range(0..20) {
                0 => -0.0,
                1 => 0.0,
                _ => rng.gen_range(-100.0f32..100.0),
            };
        }
    }
    for d in 0..13 {
        for b in a.bits_mut(DReg::R(d)) {
            *b = rng.gen_range(0..=1);
        }
    }
    if partial_flag {
        for b in a.bits_mut(DReg::Flag) {
            *b = u8::from(rng.gen_bool(0.7));
        }
    }
    a.refresh_flag();
    let image: Vec<u8> = (0..PES).map(|_| rng.gen()).collect();
    a.expose(&image);
    a
}

fn copy_state(from: &Array, to: &mut Array) {
    let mut regs: Vec<Reg> = (0..GENERAL as u8).map(Reg::Gen).collect();
    regs.push(Reg::News);
    for r in regs {
        to.plane_mut(r)
            .unwrap()
            .copy_from_slice(from.plane(r).unwrap());
    }
    let mut dregs: Vec<DReg> = (0..13).map(DReg::R).collect();
    dregs.push(DReg::Flag);
    for d in dregs {
        to.bits_mut(d).copy_from_slice(from.bits(d));
    }
    to.refresh_flag();
}

/// Every register as bits, FLAG and the instruction count.
fn state(a: &Array) -> (Vec<Vec<u32>>, Vec<u8>, u64, u64) {
    let mut regs: Vec<Reg> = (0..GENERAL as u8).map(Reg::Gen).collect();
    regs.push(Reg::News);
    let planes = regs
        .iter()
        .map(|&r| a.plane(r).unwrap().iter().map(|v| v.to_bits()).collect())
        .collect();
    (planes, a.bits(DReg::Flag).to_vec(), a.seq(), a.saturated())
}

/// A transfer PE by PE, straight from docs/machine.md: every PE sums its sources (a neighbour
/// view beyond the edge contributes nothing), the bus hands each receiver
/// `bus_value`, and receivers are written where the writing PE's FLAG is set.
fn reference_transfer(a: &mut Array, dsts: &[Reg], srcs: &[Reg]) {
    let edge = a.edge();
    let mut value = vec![0f32; PES];
    for r in 0..N {
        for c in 0..N {
            let vals: Vec<f32> = srcs
                .iter()
                .filter(|s| match s {
                    Reg::X(d) => {
                        let (dr, dc) = d.step();
                        edge.neighbour(r, dr, N).is_some() && edge.neighbour(c, dc, N).is_some()
                    }
                    _ => true,
                })
                .map(|&s| a.read(s, r, c))
                .collect();
            value[r * N + c] = bus_value(&vals, dsts.len());
        }
    }
    let flag = a.bits(DReg::Flag).to_vec();
    for &d in dsts {
        let (plane, step) = match d {
            Reg::X(dir) => (Reg::News, dir.step()),
            r => (r, (0, 0)),
        };
        let out = a.plane_mut(plane).unwrap();
        for t in 0..N {
            for c in 0..N {
                let from = (edge.neighbour(t, -step.0, N), edge.neighbour(c, -step.1, N));
                if let (Some(ir), Some(ic)) = from {
                    if flag[ir * N + ic] == 1 {
                        out[t * N + c] = value[ir * N + ic];
                    }
                }
            }
        }
    }
    a.tick();
}

/// Runs `p` with the reference transfer (other instructions, and transfers reading
/// `PIX`, whose reset state is private to the array, go through `step`).
fn run_reference(a: &mut Array, p: &Program) {
    for s in &p.stmts {
        for op in &s.ops {
            match op {
                BusOp::Transfer { dsts, srcs } if !srcs.contains(&Reg::Pix) => {
                    reference_transfer(a, dsts, srcs)
                }
                op => step(a, op).unwrap(),
            }
        }
    }
}

#[test]
fn fused_runs_are_bit_identical_to_unfused_and_to_the_reference() {
    let mut rng = StdRng::seed_from_u64(6);
    for edge in EDGES {
        for partial_flag in [false, true] {
            let p = random_program(&mut rng, 10);
            let start = random_array(&mut rng, edge, partial_flag);
            let mut fused = random_array(&mut rng, edge, partial_flag);
            let mut unfused = random_array(&mut rng, edge, partial_flag);
            copy_state(&start, &mut fused);
            copy_state(&start, &mut unfused);
            let mut reference = random_array(&mut rng, edge, partial_flag);
            copy_state(&start, &mut reference);
            // The same exposure everywhere.
            for a in [&mut fused, &mut unfused, &mut reference] {
                let image: Vec<u8> = (0..PES).map(|i| (i * 7 % 251) as u8).collect();
                a.expose(&image);
            }
            run(&mut fused, &p, 1, DEFAULT_CLOCK_HZ).unwrap();
            run_observed(&mut unfused, &p, 1, DEFAULT_CLOCK_HZ, |_, _, _| {}).unwrap();
            run_reference(&mut reference, &p);
            let what = format!("edge {edge:?}, partial FLAG {partial_flag}, program:\n{p}");
            assert!(state(&fused) == state(&unfused), "fused != unfused: {what}");
            assert!(
                state(&fused) == state(&reference),
                "fused != reference: {what}"
            );
        }
    }
}

/// Neighbour chains that may or may not share a band pass: every macro with two
/// directions, all direction pairs, every edge mode, a partial FLAG.
#[test]
fn two_step_neighbour_macros_match_for_every_direction_pair() {
    let mut rng = StdRng::seed_from_u64(7);
    let mut text = String::new();
    for d1 in DIRS {
        for d2 in DIRS {
            text += &format!("mov2x(A, B, {d1}, {d2}); add2x(C, A, D, {d2}, {d1});");
            text += &format!("sub2x(D, C, {d1}, {d2}, A); movx(B, D, {d1});");
            // Raw transfers that write the plane they read from another row.
            let x = &d1[..1].to_uppercase();
            text += &format!("bus(X{x}, NEWS); bus(NEWS, X{x}); bus2(E, XW, XE);");
        }
    }
    let p = parse_program(&text, Device::default()).unwrap();
    for edge in EDGES {
        for partial_flag in [false, true] {
            let start = random_array(&mut rng, edge, partial_flag);
            let mut fused = random_array(&mut rng, edge, partial_flag);
            let mut reference = random_array(&mut rng, edge, partial_flag);
            copy_state(&start, &mut fused);
            copy_state(&start, &mut reference);
            run(&mut fused, &p, 1, DEFAULT_CLOCK_HZ).unwrap();
            run_reference(&mut reference, &p);
            assert!(
                state(&fused) == state(&reference),
                "edge {edge:?}, partial FLAG {partial_flag}"
            );
        }
    }
}

#[test]
fn fused_runs_draw_the_same_noise_as_unfused_ones() {
    let profile = Profile::load("scamp5").unwrap();
    let mut rng = StdRng::seed_from_u64(8);
    for (edge, partial_flag) in [(EdgeMode::Zero, false), (EdgeMode::Wrap, true)] {
        let p = random_program(&mut rng, 10);
        let start = random_array(&mut rng, edge, partial_flag);
        let runs: Vec<_> = [true, false]
            .into_iter()
            .map(|fuse| {
                let mut a = Array::new(GENERAL, edge);
                a.set_layer(NoiseModel::new(&profile, 3, 4));
                copy_state(&start, &mut a);
                let image: Vec<u8> = (0..PES).map(|i| (i * 13 % 253) as u8).collect();
                a.expose(&image);
                let report = if fuse {
                    run(&mut a, &p, 2, DEFAULT_CLOCK_HZ)
                } else {
                    run_observed(&mut a, &p, 2, DEFAULT_CLOCK_HZ, |_, _, _| {})
                };
                (state(&a), report.unwrap())
            })
            .collect();
        assert!(runs[0].0 == runs[1].0, "edge {edge:?}, program:\n{p}");
        assert_eq!(runs[0].1, runs[1].1);
    }
}

#[test]
fn fused_noisy_runs_do_not_depend_on_the_thread_count() {
    let profile = Profile::load("scamp5").unwrap();
    let p = parse_program(
        "div(A, B, C, D); add2x(E, A, B, north, east); divq(F, E); movx(A, F, south);",
        Device::default(),
    )
    .unwrap();
    let results: Vec<_> = [1, 2, 3]
        .into_iter()
        .map(|threads| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut rng = StdRng::seed_from_u64(9);
                let mut a = random_array(&mut rng, EdgeMode::Zero, false);
                a.set_layer(NoiseModel::new(&profile, 5, 6));
                run(&mut a, &p, 3, DEFAULT_CLOCK_HZ).unwrap();
                state(&a)
            })
        })
        .collect();
    assert!(results[0] == results[1] && results[1] == results[2]);
}

/// The hot loops are compiled once per vector unit and the widest the processor has
/// runs (`sim::vector_unit`): every copy this processor can run (the portable one, AVX2,
/// AVX-512) gives the same bits on the same noisy rows, with values far past the soft
/// knees (the compression's own `tanh`), every instruction of the table, hard and soft
/// saturation.
#[test]
fn every_vector_unit_gives_the_same_bits() {
    let units = supported();
    assert_eq!(units[0], VectorUnit::Portable);
    let mut rng = StdRng::seed_from_u64(10);
    let p = random_program(&mut rng, 30);
    let mut start = random_array(&mut rng, EdgeMode::Zero, false);
    for r in (0..GENERAL as u8).map(Reg::Gen) {
        for v in start.plane_mut(r).unwrap() {
            *v *= 30.0;
        }
    }
    let scamp5 = Profile::load("scamp5").unwrap();
    let mut hard = scamp5.clone();
    let mut rational = scamp5.clone();
    if let (Some(h), Some(r)) = (&mut hard.saturation, &mut rational.saturation) {
        (h.knee_low, h.knee_high) = (h.low, h.high);
        r.form = KneeForm::Rational;
    }
    for profile in [scamp5, hard, rational] {
        let runs: Vec<_> = units
            .iter()
            .map(|&unit| {
                forced::set(Some(unit));
                let mut a = Array::new(GENERAL, EdgeMode::Zero);
                a.set_layer(NoiseModel::new(&profile, 3, 4));
                copy_state(&start, &mut a);
                let report = run(&mut a, &p, 2, DEFAULT_CLOCK_HZ);
                forced::set(None);
                (state(&a), report.unwrap())
            })
            .collect();
        assert!(runs[0].0 .3 > 0, "the values reach past the knees");
        for (unit, r) in units.iter().zip(&runs) {
            assert!(r.0 == runs[0].0, "{unit:?} differs from the portable copy");
            assert_eq!(r.1, runs[0].1);
        }
    }
}
