//! The code generator is never empty-handed and reproducible: a constructive program
//! for any kernels within the budget, deterministic work budgets, and banks larger
//! than the register file split into groups.

use super::{assert_proven, lcg_row};
use crate::cain::{self, CompileOptions, Source, Stats};
use crate::isa::Wiring;
use crate::verify::prove;

fn spec(text: &str) -> cain::Spec {
    cain::parse_spec(text).expect("valid spec")
}

/// A dense `n` x `n` kernel in eighths from a small linear congruential sequence.
fn dense_kernel(n: usize, seed: u64) -> String {
    let mut x = seed;
    (0..n)
        .map(|_| format!("      - {}\n", lcg_row(&mut x, n)))
        .collect()
}

fn budget(seconds: f64, workers: usize) -> CompileOptions {
    CompileOptions::default()
        .with_time_limit(seconds)
        .with_workers(workers)
}

#[test]
fn a_dense_31x31_kernel_gets_a_proven_program_within_a_second() {
    for (n, regs) in [(31, "[A, B, C, D, E, F]"), (15, "[A, B, C]")] {
        let text = format!(
            "registers: {regs}\nkernels:\n  - out: A\n    scale: 1/8\n    weights:\n{}",
            dense_kernel(n, n as u64)
        );
        let c = cain::compile(&spec(&text), &budget(1.0, 2), &Stats::default())
            .unwrap_or_else(|e| panic!("{n}x{n} in {regs}: {e}"));
        assert_proven(&c);
        assert!(c.search.seconds_to_best <= c.search.seconds);
    }
}

#[test]
fn the_fallback_answers_several_kernels_when_the_search_has_no_time() {
    let text = format!(
        "registers: [A, B, C, D, E]\nkernels:\n  - out: A\n    scale: 1/8\n    weights:\n{}  \
         - out: B\n    scale: 1/8\n    weights:\n{}  - out: C\n    weights: [[1, -2, 1]]\n",
        dense_kernel(5, 1),
        dense_kernel(3, 2)
    );
    let c = cain::compile(&spec(&text), &budget(0.001, 1), &Stats::default())
        .expect("the constructive program at least");
    assert_proven(&c);
    assert_eq!(c.kernels.len(), 3);
    // With a real budget the search beats the constructive program on small kernels.
    let g =
        "kernels:\n  - out: A\n    scale: 1/16\n    weights: [[1, 2, 1], [2, 4, 2], [1, 2, 1]]\n";
    let c = cain::compile(&spec(g), &budget(1.0, 1), &Stats::default()).expect("program");
    assert_eq!(c.search.source, Source::Search);
    assert_proven(&c);
}

#[test]
fn a_work_budget_gives_the_same_program_every_time() {
    let text = "registers: [A, B, C, D, E, F]\nkernels:\n  \
        - { out: A, scale: 1/4, weights: [[0, 0, 0], [-3, 1, 0], [-3, 0, 2]] }\n  \
        - { out: B, scale: 1/4, weights: [[-4, -1, 1], [-1, 2, 0], [1, 1, 0]] }\n";
    let s = spec(text);
    let opts = CompileOptions::default()
        .with_time_limit(120.0)
        .with_workers(3)
        .with_work(400)
        .with_seed(5);
    let a = cain::compile(&s, &opts, &Stats::default()).expect("program");
    let b = cain::compile(&s, &opts, &Stats::default()).expect("program");
    assert_eq!(a.program.to_string(), b.program.to_string());
    assert_eq!(a.search.stop, cain::StopReason::Nodes);
    assert_eq!(a.search.nodes, b.search.nodes);
    assert_proven(&a);
    // The spec key means the same as the option.
    let keyed = spec(&format!(
        "{text}search: {{ workers: 3, work: 400, seed: 5 }}\n"
    ));
    let c = cain::compile(&keyed, &CompileOptions::default(), &Stats::default()).expect("program");
    assert_eq!(a.program.to_string(), c.program.to_string());
}

/// `count` random 3x3 kernels in eighths (weights -7..7), outputs cycling through A..F.
fn bank(count: usize, seed: u64) -> String {
    let outs = ["A", "B", "C", "D", "E", "F"];
    let mut x = seed;
    let mut text = String::from("kernels:\n");
    for k in 0..count {
        let w: Vec<String> = (0..3).map(|_| lcg_row(&mut x, 3)).collect();
        text += &format!(
            "  - {{ out: {}, scale: 1/8, weights: [{}] }}\n",
            outs[k % outs.len()],
            w.join(", ")
        );
    }
    text
}

/// Each group's program proves its own kernels, run from the input alone; every kernel
/// is in exactly one group, and no group keeps more outputs than registers.
fn assert_groups_proven(c: &cain::Compiled) {
    let targets = c.targets();
    let mut seen = vec![0; targets.len()];
    for g in &c.groups {
        assert!(g.kernels.len() <= c.registers.len());
        let ts: Vec<_> = g.kernels.iter().map(|&i| targets[i].clone()).collect();
        prove(&g.program, Wiring::new(c.input, 6), &ts, Some(&c.registers))
            .unwrap_or_else(|e| panic!("{e}\n{}", g.program));
        for &i in &g.kernels {
            seen[i] += 1;
        }
    }
    assert!(seen.iter().all(|&n| n == 1), "{seen:?}");
}

#[test]
fn a_bank_of_eight_kernels_compiles_in_groups_and_checks_exactly() {
    use crate::sim::GreyImage;
    use crate::verify;
    let s = spec(&bank(8, 11));
    let c = cain::compile(&s, &budget(2.0, 2), &Stats::default()).expect("a program");
    assert!(c.groups.len() >= 2, "{} groups", c.groups.len());
    assert_groups_proven(&c);
    // The printed text splits back into the same groups by proof alone.
    let text = cain::program_text(&c);
    let program = crate::isa::parse_program(&text, crate::isa::Device::default()).expect("parses");
    let ends = verify::kernel_block_ends(&text);
    assert_eq!(ends.len(), c.groups.len());
    let groups = verify::assign_blocks(
        verify::split_blocks(&program, &ends),
        Wiring::new(c.input, 6),
        &c.kernels
            .iter()
            .map(cain::KernelReport::planes_target)
            .collect::<Vec<_>>(),
    );
    let members: Vec<Vec<usize>> = groups.iter().map(|(_, m)| m.clone()).collect();
    let compiled: Vec<Vec<usize>> = c.groups.iter().map(|g| g.kernels.clone()).collect();
    assert_eq!(members, compiled);
    // Under exact arithmetic every kernel of every group measures no analogue error
    // (a dim image keeps the outputs within the ideal profile's range).
    let img = GreyImage {
        pixels: (0..65_536u32)
            .map(|i| (120 + (i * 7 + i / 256) % 17) as u8)
            .collect(),
        resized_from: None,
    };
    let targets = cain::check_targets(&s, &c.kernels);
    let m = verify::measure_groups(
        &groups,
        Wiring::new(c.input, 6),
        &targets,
        std::slice::from_ref(&img),
        &verify::ProfileTestbed::ideal(),
        1,
    )
    .expect("runs");
    assert_eq!(m.kernels.len(), 8);
    for k in &m.kernels {
        assert!(k.analogue.rmse < 1e-6, "{} {:?}", k.out, k.analogue);
    }
}

#[test]
fn a_bank_of_four_kernels_gets_proven_programs() {
    for seed in [3, 4] {
        let c = cain::compile(&spec(&bank(4, seed)), &budget(2.0, 2), &Stats::default())
            .expect("a program");
        assert_groups_proven(&c);
        assert!(c.range.peak.magnitude <= c.range.held_to + 1e-9);
    }
}

/// A 31x31 kernel, and a bank of two 15x15 kernels in three registers (each a group of
/// its own), under a small work budget: the constructive programs are made, proven and
/// scored before the search, so the answer is the same on every run, for either
/// objective, and every value stays within range.
#[test]
fn large_kernels_compile_reproducibly_under_a_work_budget() {
    let one = format!(
        "kernels:\n  - out: A\n    scale: 1/8\n    weights:\n{}",
        dense_kernel(31, 5)
    );
    let two = format!(
        "registers: [A, B, C]\nkernels:\n  - out: A\n    scale: 1/8\n    weights:\n{}  \
         - out: B\n    scale: 1/8\n    weights:\n{}",
        dense_kernel(15, 6),
        dense_kernel(15, 7)
    );
    for text in [one, two] {
        let s = spec(&text);
        let opts = CompileOptions::default()
            .with_time_limit(120.0)
            .with_workers(1)
            .with_work(1);
        let length = opts.clone().with_objective(cain::Objective::Length);
        let a = cain::compile(&s, &opts, &Stats::default()).expect("a program");
        assert_groups_proven(&a);
        assert!(a.range.peak.magnitude <= a.range.held_to + 1e-9);
        assert!(a.search.seconds_to_best <= a.search.seconds);
        // The length objective predicts the constructive program's error before the
        // search: a prediction for every kernel, and the same program on every run.
        let l = cain::compile(&s, &length, &Stats::default()).expect("a program");
        assert_groups_proven(&l);
        assert_eq!(l.predicted.len(), s.kernels.len());
        for p in &l.predicted {
            assert!(p.rmse.is_finite() && p.rmse > 0.0, "{p:?}");
        }
        if s.kernels.len() > 1 {
            assert!(a.groups.len() > 1, "{} groups", a.groups.len());
            let b = cain::compile(&s, &length, &Stats::default()).expect("a program");
            assert_eq!(l.program.to_string(), b.program.to_string());
        }
    }
}

/// With no time for any search, every group still gets its constructive program,
/// proven: a 15x15 kernel in three registers and a bank of eight.
#[test]
fn every_group_gets_its_constructive_program_when_the_clock_is_spent() {
    let large = format!(
        "registers: [A, B, C]\nkernels:\n  - out: A\n    scale: 1/8\n    weights:\n{}",
        dense_kernel(15, 9)
    );
    for text in [large, bank(8, 21)] {
        let c = cain::compile(&spec(&text), &budget(0.001, 2), &Stats::default())
            .expect("the constructive program");
        assert_eq!(c.search.source, Source::Fallback);
        assert!(c.groups.iter().all(|g| g.source == Source::Fallback));
        assert_groups_proven(&c);
        assert!(c.range.peak.magnitude <= c.range.held_to + 1e-9);
    }
}

#[test]
fn sixty_four_kernels_are_a_bank_and_sixty_five_are_refused() {
    let many = |n: usize| format!("kernels:\n{}", "  - {out: A, weights: [[1]]}\n".repeat(n));
    assert_eq!(spec(&many(64)).kernels.len(), 64);
    let msg = match cain::parse_spec(&many(65)) {
        Ok(s) => panic!("{} kernels accepted", s.kernels.len()),
        Err(e) => e.to_string(),
    };
    assert!(
        msg.contains("65 kernels, more than the 64 a spec may list"),
        "{msg}"
    );
}
