//! The tutorial's exercises are graded by `scamp check`: every reference solution in
//! tests/exercises/ passes its exercise's proof, and every starter program in
//! docs/tutorial/exercises/ runs but does not.

mod common;

use common::{scamp, stderr};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Exercise folders, sorted.
fn exercises() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("docs/tutorial/exercises"))
        .expect("docs/tutorial/exercises")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

/// `scamp check PROGRAM --kernel SPEC --noise ideal --json`: (exit code, verified).
fn grade(program: &Path, spec: &Path) -> (Option<i32>, bool, String) {
    let o = scamp(&[
        "check",
        program.to_str().unwrap(),
        "--kernel",
        spec.to_str().unwrap(),
        "--noise",
        "ideal",
        "--json",
    ]);
    let verified = serde_json::from_slice::<serde_json::Value>(&o.stdout)
        .ok()
        .and_then(|j| j["verified"].as_bool())
        .unwrap_or(false);
    (o.status.code(), verified, stderr(&o))
}

#[test]
fn there_are_at_least_six_exercises_each_with_spec_starter_and_solution() {
    let all = exercises();
    assert!(all.len() >= 6, "{} exercises", all.len());
    for e in &all {
        assert!(e.join("spec.yaml").is_file(), "{}", e.display());
        let starter = std::fs::read_to_string(e.join("starter.scamp")).expect("starter");
        assert!(
            starter
                .lines()
                .filter(|l| l.trim_start().starts_with("//"))
                .count()
                >= 3,
            "{}: the task belongs in the starter's comments",
            e.display()
        );
        let name = e.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            Path::new(ROOT)
                .join(format!("tests/exercises/{name}.scamp"))
                .is_file(),
            "no reference solution for {name}"
        );
    }
}

#[test]
fn every_reference_solution_passes_its_proof() {
    for e in exercises() {
        let name = e.file_name().unwrap().to_string_lossy().into_owned();
        let solution = Path::new(ROOT).join(format!("tests/exercises/{name}.scamp"));
        let (code, verified, err) = grade(&solution, &e.join("spec.yaml"));
        assert_eq!(code, Some(0), "{name}: {err}");
        assert!(verified, "{name}: the solution does not prove");
    }
}

#[test]
fn every_starter_runs_but_fails_its_proof() {
    for e in exercises() {
        let (code, verified, err) = grade(&e.join("starter.scamp"), &e.join("spec.yaml"));
        assert_eq!(code, Some(1), "{}: {err}", e.display());
        assert!(!verified, "{}: the starter already passes", e.display());
    }
}

/// A starter's comments may not quote a figure the tool measures (an RMSE, a count of
/// macros): those drift when the generator or the error model changes. They name the
/// command that gives it instead; tutorial pages keep such figures in generated blocks.
#[test]
fn no_starter_quotes_a_measured_figure() {
    for e in exercises() {
        let text = std::fs::read_to_string(e.join("starter.scamp")).unwrap();
        for (i, line) in text.lines().enumerate() {
            let words: Vec<&str> = line.split_whitespace().collect();
            for (k, w) in words.iter().enumerate() {
                let w = w.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '.');
                let decimal = w.contains('.')
                    && w.split('.')
                        .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
                let count = w.chars().all(|c| c.is_ascii_digit())
                    && !w.is_empty()
                    && words.get(k + 1).is_some_and(|n| {
                        ["macros", "instructions", "cycles"]
                            .contains(&n.trim_matches(|c: char| !c.is_ascii_alphabetic()))
                    });
                assert!(
                    !decimal && !count,
                    "{}:{}: `{line}` quotes a figure",
                    e.join("starter.scamp").display(),
                    i + 1
                );
            }
        }
    }
}
