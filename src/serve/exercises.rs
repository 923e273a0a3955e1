//! The tutorial's exercises, built into the server, and their grading: the proof and
//! the error figures of `scamp check PROGRAM --kernel SPEC` with its defaults (the
//! scamp5 profile, chip and run seed 1, one run, every image of images/).

use super::api::{Diagnostic, ExerciseInfo, GradeReply, GradeRequest, KernelGrade};
use super::session::MAX_STEP_CYCLES;
use super::Refusal;
use crate::report::check::proof_grids;
use scamp::{Bank, BankError};

use scamp::images;
use scamp::{isa::parse_program, isa::Device};
use scamp::{EvaluateError, Evaluation, ProfileTestbed};
use scamp::{Profile, DEFAULT_PROFILE};

/// Folder name, starter program and spec of every exercise in docs/tutorial/exercises/.
pub const EXERCISES: [(&str, &str, &str); 7] = [
    (
        "01-fetch-east",
        include_str!("../../docs/tutorial/exercises/01-fetch-east/starter.scamp"),
        include_str!("../../docs/tutorial/exercises/01-fetch-east/spec.yaml"),
    ),
    (
        "02-gradient",
        include_str!("../../docs/tutorial/exercises/02-gradient/starter.scamp"),
        include_str!("../../docs/tutorial/exercises/02-gradient/spec.yaml"),
    ),
    (
        "03-vertical-mean",
        include_str!("../../docs/tutorial/exercises/03-vertical-mean/starter.scamp"),
        include_str!("../../docs/tutorial/exercises/03-vertical-mean/spec.yaml"),
    ),
    (
        "04-neighbour-mean",
        include_str!("../../docs/tutorial/exercises/04-neighbour-mean/starter.scamp"),
        include_str!("../../docs/tutorial/exercises/04-neighbour-mean/spec.yaml"),
    ),
    (
        "05-gauss3x3",
        include_str!("../../docs/tutorial/exercises/05-gauss3x3/starter.scamp"),
        include_str!("../../docs/tutorial/exercises/05-gauss3x3/spec.yaml"),
    ),
    (
        "06-sobel-x",
        include_str!("../../docs/tutorial/exercises/06-sobel-x/starter.scamp"),
        include_str!("../../docs/tutorial/exercises/06-sobel-x/spec.yaml"),
    ),
    (
        "07-two-blurs",
        include_str!("../../docs/tutorial/exercises/07-two-blurs/starter.scamp"),
        include_str!("../../docs/tutorial/exercises/07-two-blurs/spec.yaml"),
    ),
];

/// The exercises as the page lists them.
pub fn list() -> Vec<ExerciseInfo> {
    EXERCISES
        .iter()
        .map(|(name, starter, spec)| ExerciseInfo {
            name: name.to_string(),
            starter: starter.to_string(),
            spec: spec.to_string(),
        })
        .collect()
}

/// A reply that graded nothing because the program has a problem at `pos`.
fn not_graded(exercise: &str, pos: scamp::isa::Pos, msg: String) -> GradeReply {
    GradeReply {
        exercise: exercise.to_string(),
        errors: vec![Diagnostic {
            line: pos.line,
            col: pos.col,
            msg,
        }],
        verified: false,
        grids: Vec::new(),
        notes: Vec::new(),
        kernels: Vec::new(),
        instructions: 0,
        cycles: 0,
        noise: DEFAULT_PROFILE.to_string(),
        images: 0,
        border: 0,
    }
}

/// Answers `/api/grade`.
pub fn grade(req: &GradeRequest) -> Result<GradeReply, Refusal> {
    let Some((name, _, spec_text)) = EXERCISES.iter().find(|(n, _, _)| *n == req.exercise) else {
        return Err(Refusal {
            status: 404,
            msg: format!("no exercise `{}`", req.exercise),
        });
    };
    let spec = scamp::parse_spec(spec_text).map_err(internal)?;
    super::session::check_size(&req.program)?;
    let device = Device {
        general: spec.general_count(),
    };
    let program = match parse_program(&req.program, device) {
        Ok(p) => p,
        Err(e) => return Ok(not_graded(name, e.pos, e.cause.to_string())),
    };
    if program.cycles() > MAX_STEP_CYCLES {
        return Err(Refusal::bad(format!(
            "the program has {} bus instructions; grading runs at most {MAX_STEP_CYCLES} \
             (`scamp check` grades it)",
            program.cycles()
        )));
    }
    let bank = Bank::with_kernels(program, &req.program, spec).map_err(internal)?;
    let grey: Vec<_> = images::all().into_iter().map(|(_, g)| g).collect();
    let testbed = ProfileTestbed {
        profile: Profile::load(DEFAULT_PROFILE).map_err(internal)?,
        chip_seed: 1,
        seed: 1,
    };
    match bank.evaluate(&grey, &testbed, 1, false) {
        Ok(e) => Ok(reply(name, &bank, &e, grey.len())),
        Err(BankError::Evaluate(EvaluateError::Run(r))) => {
            Ok(not_graded(name, r.pos, r.cause.to_string()))
        }
        Err(other) => Err(internal(other)),
    }
}

/// A bundled spec that does not load, or an evaluation that fails other than by the
/// program's own run: the server's fault, not the request's.
fn internal(e: impl std::fmt::Display) -> Refusal {
    Refusal {
        status: 500,
        msg: e.to_string(),
    }
}

/// The grade of an evaluated bank: its proof, and its figures per kernel.
fn reply(name: &str, bank: &Bank, e: &Evaluation, images: usize) -> GradeReply {
    let (grids, notes) = proof_grids(&e.mismatch);
    let m = e.measurement.as_ref();
    let groups = bank.groups();
    GradeReply {
        exercise: name.to_string(),
        errors: Vec::new(),
        verified: e.verified,
        grids,
        notes,
        kernels: m.map_or_else(Vec::new, |m| {
            bank.kernels()
                .iter()
                .zip(&m.kernels)
                .map(|(k, f)| KernelGrade {
                    out: k.out.to_string(),
                    depth: k.approx.depth,
                    approx: f.approx,
                    analogue: f.analogue,
                    total: f.total,
                })
                .collect()
        }),
        instructions: groups.iter().map(|(p, _)| p.instructions()).sum(),
        cycles: groups.iter().map(|(p, _)| p.cycles()).sum(),
        noise: DEFAULT_PROFILE.to_string(),
        images,
        border: m.map_or(0, |m| m.border),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_bundle_is_the_exercise_folder() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/tutorial/exercises");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let bundled: Vec<&str> = EXERCISES.iter().map(|e| e.0).collect();
        assert_eq!(names, bundled);
        for (name, starter, spec) in EXERCISES {
            let on_disk = |f: &str| std::fs::read_to_string(dir.join(name).join(f)).unwrap();
            assert_eq!(starter, on_disk("starter.scamp"));
            assert_eq!(spec, on_disk("spec.yaml"));
        }
    }

    #[test]
    fn a_starter_fails_with_grids_and_unknown_exercises_are_404() {
        let (name, starter, _) = EXERCISES[1];
        let r = grade(&GradeRequest {
            exercise: name.into(),
            program: starter.into(),
        })
        .unwrap();
        assert!(!r.verified);
        assert!(!r.grids.is_empty(), "{:?}", r.notes);
        assert!(r.kernels.is_empty());
        let e = grade(&GradeRequest {
            exercise: name.into(),
            program: "diva(A, E, F)\n".repeat(5000),
        })
        .unwrap_err();
        assert_eq!(e.status, 400);
        assert!(e.msg.contains("grading runs at most"), "{}", e.msg);
        let r = grade(&GradeRequest {
            exercise: name.into(),
            program: "movx(B, A, wst)".into(),
        })
        .unwrap();
        assert_eq!((r.errors[0].line, r.errors[0].col), (1, 12));
        let e = grade(&GradeRequest {
            exercise: "99-none".into(),
            program: String::new(),
        })
        .unwrap_err();
        assert_eq!(e.status, 404);
    }
}
