//! A compile's `search.rules` counts the children the search took by the generator
//! rule that made them, under the rules' names (moved from the command's
//! `tests/cain.rs`, which checks that `scamp compile --json` prints these counts).

use crate::cain::moves::rule::Rule;
use crate::cain::{compile, parse_spec, CompileOptions, Objective, Stats};

#[test]
fn the_search_counts_children_by_rule_name() {
    let text = std::fs::read_to_string(super::repo().join("programs/sobel_x.yaml")).expect("spec");
    let spec = parse_spec(&text).expect("valid spec");
    // As `scamp compile --time-limit 60 --workers 1 --objective length`: the spec's work
    // budget ends the search; the time limit only keeps a busy machine from cutting it.
    let opts = CompileOptions::default()
        .with_time_limit(60.0)
        .with_workers(1)
        .with_objective(Objective::Length);
    let c = compile(&spec, &opts, &Stats::default()).expect("compiles");
    let rules = &c.search.rules;
    let names: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
    for (name, n) in rules {
        assert!(names.contains(&name.as_str()), "unknown rule {name}");
        assert!(*n > 0, "{name}: {n}");
    }
    // Sobel's differences are made by folds (G = P - moved P).
    assert!(rules.contains_key("fold_difference"), "{rules:?}");
}
