//! The instruction table is the one source of what an instruction is: these tests fail if
//! the properties passes read from it (cycles, the once-per-bus rule as "may overwrite" and
//! "may repeat", full-FLAG-only, code-generator use) disagree with what the validator, the
//! printer and parser, the simulator or the code generator actually do.

use crate::cain::assemble::alloc::Instr;
use crate::cain::moves::step::{Kind, Step};
use crate::cain::{Goal, Ops};
use crate::isa::{
    self, entry, parse_program, DReg, Def, Device, Dir, DirSet, Id, Operand, Pos, Reg, Slot, Stmt,
};
use crate::sim::{run, Array, EdgeMode, WarningKind, DEFAULT_CLOCK_HZ, N};

const DEVICE: Device = Device { general: 6 };

/// Operand choice `v` for `slot` at position `i`: registers and directions rotate with
/// `v`, constants run through the DAC's range and its ends.
fn operand(slot: Slot, i: usize, v: usize) -> Operand {
    match slot {
        Slot::Dir => Operand::Dir(Dir::ALL[(i + v) % 4]),
        Slot::Dirs => {
            let mut s = DirSet::default();
            for (k, d) in Dir::ALL.iter().enumerate() {
                s.0[d.index()] = (v + 1) >> k & 1 == 1;
            }
            Operand::Dirs(s)
        }
        Slot::Value => Operand::Int([0, 127, -128, 5][v % 4]),
        Slot::Bit => Operand::Int((v % 2) as i64),
        s if s.is_register() => Operand::Reg(Reg::Gen(((i + v) % DEVICE.general) as u8)),
        s => s.placeholder(i + v),
    }
}

fn placeholders(def: &Def) -> Vec<Operand> {
    (0..def.arity())
        .map(|i| def.slots[i].placeholder(i))
        .collect()
}

#[test]
fn every_entry_takes_the_cycles_of_its_expansion_whatever_the_operands() {
    for def in isa::table() {
        let mut built = 0;
        for v in 0..8 {
            let args = (0..def.arity())
                .map(|i| operand(def.slots[i], i, v))
                .collect();
            if let Ok(s) = Stmt::of(def, args, DEVICE, Pos::default()) {
                assert_eq!(s.cycles(), def.cycles(), "{s}");
                built += 1;
            }
        }
        assert!(built > 0, "{def:?}: no operand choice builds");
    }
}

#[test]
fn statements_print_as_they_parse() {
    for def in isa::table() {
        let s = Stmt::of(def, placeholders(def), DEVICE, Pos::default()).expect("placeholders");
        let p = parse_program(&format!("{s};"), DEVICE).expect("printed text parses");
        assert!(
            std::ptr::eq(p.stmts[0].def, def),
            "{s} parsed as {:?}",
            p.stmts[0].def
        );
        assert_eq!(p.stmts[0].args, s.args);
    }
}

#[test]
fn names_and_arities_are_unique() {
    let t = isa::table();
    for (i, a) in t.iter().enumerate() {
        assert!(
            !t[..i]
                .iter()
                .any(|b| b.name == a.name && b.arity() == a.arity()),
            "{a:?} twice"
        );
    }
}

#[test]
fn the_once_per_bus_rule_is_what_the_validator_accepts() {
    let mut rejected = 0;
    for def in isa::table() {
        let regs: Vec<usize> = (0..def.arity())
            .filter(|&i| def.slots[i].is_register())
            .collect();
        for (n, &a) in regs.iter().enumerate() {
            for &b in &regs[..n] {
                let mut args = placeholders(def);
                args[a] = args[b];
                let ok = Stmt::of(def, args, DEVICE, Pos::default()).is_ok();
                assert_eq!(ok, !def.shares_bus(a, b), "{def:?} operands {b} and {a}");
                rejected += usize::from(!ok);
            }
        }
    }
    assert!(rejected > 10, "only {rejected} aliasings rejected");
}

/// Distinct registers for a kind's results and sources: results from `A`, sources after.
fn instr(kind: Kind) -> Instr {
    let def = kind.def();
    let (nr, ns) = (def.results().count(), def.sources().count());
    Instr {
        kind,
        dsts: (0..nr).map(|i| Reg::Gen(i as u8)).collect(),
        srcs: (nr..nr + ns).map(|i| Reg::Gen(i as u8)).collect(),
    }
}

#[test]
fn code_generator_kinds_agree_with_their_entries() {
    for kind in Kind::all() {
        let def = kind.def();
        assert_eq!(def.codegen.map(|c| c.id), Some(kind.id()), "{kind:?}");
        let ins = vec![Goal::single(0, 0, 4); def.sources().count()];
        let outs = Step::eval(kind, &ins).expect("operands fit");
        assert_eq!(outs.len(), def.results().count(), "{kind:?}");
        let s = crate::cain::assemble::emit::statement(&instr(kind), DEVICE)
            .expect("distinct registers");
        assert!(std::ptr::eq(s.def, def));
        assert_eq!(kind.cycles(), s.cycles(), "{s}");
        let p = parse_program(&s.to_string(), DEVICE).expect("emitted text parses");
        assert!(std::ptr::eq(p.stmts[0].def, def), "{s}");
        assert_eq!(p.stmts[0].args, s.args);
        assert!(!kind.allowed(Ops::Basic) || kind.allowed(Ops::All));
    }
    for id in Id::ALL {
        assert_eq!(entry(id).codegen.map(|c| c.id), Some(id));
        assert!(Kind::all().iter().any(|k| k.id() == id), "{id:?} unused");
    }
}

#[test]
fn overwrite_and_repeat_rules_are_what_the_validator_accepts() {
    for kind in Kind::all() {
        let base = instr(kind);
        for k in 0..base.dsts.len() {
            for i in 0..base.srcs.len() {
                let mut x = base.clone();
                x.dsts[k] = x.srcs[i];
                let ok = crate::cain::assemble::emit::statement(&x, DEVICE).is_ok();
                assert_eq!(ok, kind.may_overwrite(k, i), "{kind:?} result {k} into {i}");
            }
        }
        for i in 0..base.srcs.len() {
            for j in 0..i {
                let mut x = base.clone();
                x.srcs[i] = x.srcs[j];
                let ok = crate::cain::assemble::emit::statement(&x, DEVICE).is_ok();
                assert_eq!(ok, kind.may_repeat(j, i), "{kind:?} sources {j} and {i}");
            }
        }
    }
}

/// Runs `instr` on an ideal array whose general register `g` holds the pattern `g`
/// (so equal registers hold equal values) and returns the result planes.
fn results(instr: &Instr, patterns: &[usize]) -> Vec<Vec<f32>> {
    let s = crate::cain::assemble::emit::statement(instr, DEVICE).expect("valid");
    let mut a = Array::new(DEVICE.general, EdgeMode::Zero);
    for (g, &pattern) in patterns.iter().enumerate() {
        let plane = a.plane_mut(Reg::Gen(g as u8)).expect("general register");
        for (p, v) in plane.iter_mut().enumerate() {
            let (r, c) = ((p / N) as f32, (p % N) as f32);
            *v = ((r * 3.0 + c * (pattern as f32 + 2.0)) % 64.0 - 32.0) / 2.0;
        }
    }
    let prog = crate::isa::Program { stmts: vec![s] };
    run(&mut a, &prog, 1, DEFAULT_CLOCK_HZ).expect("runs");
    instr
        .dsts
        .iter()
        .map(|&d| a.plane(d).expect("general").to_vec())
        .collect()
}

#[test]
fn allowed_overwrites_and_repeats_compute_what_distinct_registers_do() {
    let mut checked = 0;
    for kind in Kind::all() {
        let base = instr(kind);
        let identity: Vec<usize> = (0..DEVICE.general).collect();
        for k in 0..base.dsts.len() {
            for i in (0..base.srcs.len()).filter(|&i| kind.may_overwrite(k, i)) {
                let mut x = base.clone();
                x.dsts[k] = x.srcs[i];
                // The overwritten source held the same value before the instruction.
                let want = results(&base, &identity);
                let got = results(&x, &identity);
                assert_eq!(got[k], want[k], "{kind:?} result {k} into source {i}");
                checked += 1;
            }
        }
        for i in 0..base.srcs.len() {
            for j in (0..i).filter(|&j| kind.may_repeat(j, i)) {
                let mut x = base.clone();
                x.srcs[i] = x.srcs[j];
                // Distinct registers holding equal values.
                let mut same = identity.clone();
                let (ri, rj) = (reg_index(base.srcs[i]), reg_index(base.srcs[j]));
                same[ri] = same[rj];
                assert_eq!(
                    results(&x, &identity),
                    results(&base, &same),
                    "{kind:?} sources {j} and {i}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 20, "only {checked} aliasings checked");
}

fn reg_index(r: Reg) -> usize {
    match r {
        Reg::Gen(g) => usize::from(g),
        _ => unreachable!("general registers only"),
    }
}

#[test]
fn full_flag_warnings_follow_the_table() {
    for def in isa::table() {
        let s = Stmt::of(def, placeholders(def), DEVICE, Pos::default()).expect("placeholders");
        let mut a = Array::new(DEVICE.general, EdgeMode::Zero);
        a.bits_mut(DReg::Flag)[N + 1] = 0;
        a.refresh_flag();
        let prog = crate::isa::Program { stmts: vec![s] };
        let report = run(&mut a, &prog, 1, DEFAULT_CLOCK_HZ).expect("runs");
        let warned = report
            .warnings
            .iter()
            .any(|w| matches!(w.kind, WarningKind::PartialFlag { .. }));
        assert_eq!(warned, def.full_flag_only, "{def:?}: {:?}", report.warnings);
    }
}

/// A test image: a pattern with no symmetry a wrong offset could hide behind.
fn image(r: usize, c: usize) -> f32 {
    ((r * 7 + c * 3 + (r * c) % 5) % 32) as f32
}

/// A goal's value at PE (r, c): its atom counts times the image at their offsets.
fn value(g: &Goal, r: usize, c: usize) -> f32 {
    g.0.iter()
        .map(|t| {
            let (rr, cc) = (r as i32 + i32::from(t.r), c as i32 + i32::from(t.c));
            t.n as f32 * image(rr as usize, cc as usize)
        })
        .sum()
}

#[test]
fn what_the_code_generator_assumes_a_kind_computes_is_what_the_simulator_does() {
    // Sources are distinct goals whose counts survive a halving.
    let goals = [
        Goal::single(0, 0, 4),
        Goal::single(1, -1, 8).plus(&Goal::single(0, 2, -4)),
        Goal::single(-2, 1, 12),
    ];
    for kind in Kind::all() {
        let x = instr(kind);
        let ins = &goals[..x.srcs.len()];
        let outs = Step::eval(kind, ins).expect("operands fit");
        let s = crate::cain::assemble::emit::statement(&x, DEVICE).expect("distinct registers");
        let mut a = Array::new(DEVICE.general, EdgeMode::Zero);
        for (reg, g) in x.srcs.iter().zip(ins) {
            let plane = a.plane_mut(*reg).expect("general register");
            for (p, v) in plane.iter_mut().enumerate() {
                let (r, c) = (p / N, p % N);
                if (4..N - 4).contains(&r) && (4..N - 4).contains(&c) {
                    *v = value(g, r, c);
                }
            }
        }
        let prog = crate::isa::Program { stmts: vec![s] };
        run(&mut a, &prog, 1, DEFAULT_CLOCK_HZ).expect("runs");
        for (reg, g) in x.dsts.iter().zip(&outs) {
            for (r, c) in [(8, 8), (100, 37), (N - 9, N - 9), (20, 200)] {
                assert_eq!(a.read(*reg, r, c), value(g, r, c), "{kind:?} at ({r}, {c})");
            }
        }
    }
}
