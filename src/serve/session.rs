//! One `/api/run` request, start to end: the program parsed, two arrays prepared from
//! the request's inputs, both run up to the step asked for, and the planes and the
//! selected PE read out. Nothing outlives the request, so users never share state.

use super::api::{Diagnostic, PeView, Plane, RunReply, RunRequest, RunState, Value};
use super::{steps::steps, Refusal};
use crate::report::html::base64;
use crate::report::trace::analogue_regs;
use scamp::load_input;
use scamp::{images, Array, EdgeMode, RegisterFill, N};
use scamp::{
    isa::parse_program, isa::DReg, isa::Device, isa::Dir, isa::Program, isa::Reg,
    isa::MAX_PROGRAM_BYTES,
};
use scamp::{NoiseModel, Profile, BUILTINS, DEFAULT_PROFILE};

/// Most bus instructions one request runs: a longer program is shown up to the last
/// macro within this many, and the reply says so (a million-instruction program would
/// otherwise hold a worker for minutes).
pub const MAX_STEP_CYCLES: u64 = 20_000;

/// Largest preload text accepted, in bytes.
pub const MAX_INPUTS_BYTES: usize = 4096;

/// What a register is preloaded with, from the request's inputs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Input {
    /// A constant, a ramp or a digital bit.
    Preload(RegisterFill),
    /// The picture as `check` preloads a spec's input register (`p - 128`).
    Image(Reg),
}

/// Parses `A = col, B = 1000; R5 = 1` (also `A = image`), separated by commas,
/// semicolons or new lines; a `// given:` prefix is allowed.
pub fn parse_inputs(text: &str, general: usize) -> Result<Vec<Input>, String> {
    if text.len() > MAX_INPUTS_BYTES {
        return Err(format!("inputs longer than {MAX_INPUTS_BYTES} bytes"));
    }
    let mut out = Vec::new();
    for part in text.split([',', ';', '\n']) {
        let part = part.trim();
        let part = part
            .strip_prefix("//")
            .map(str::trim)
            .unwrap_or(part)
            .trim_start_matches("given:")
            .trim();
        if part.is_empty() {
            continue;
        }
        let (name, value) = part
            .split_once('=')
            .ok_or_else(|| format!("inputs: `{part}`: expected REG = VALUE"))?;
        if value.trim() == "image" {
            let reg = Reg::parse(name.trim())
                .filter(|r| matches!(r, Reg::Gen(i) if usize::from(*i) < general))
                .ok_or_else(|| {
                    format!("inputs: `{part}`: the image goes into a general register")
                })?;
            out.push(Input::Image(reg));
            continue;
        }
        let p = RegisterFill::parse(name, value, general)
            .map_err(|e| format!("inputs: `{part}`: {e}"))?;
        out.push(Input::Preload(p));
    }
    Ok(out)
}

/// The request's settings, checked.
struct Setup {
    program: Program,
    inputs: Vec<Input>,
    image: scamp::GreyImage,
    profile: Profile,
    pe: (usize, usize),
}

fn setup(req: &RunRequest, program: Program) -> Result<Setup, Refusal> {
    let device = Device::default();
    let inputs = parse_inputs(&req.inputs, device.general).map_err(Refusal::bad)?;
    let name = req.image.as_deref().unwrap_or("camera");
    let image = images::image(name).ok_or_else(|| {
        Refusal::bad(format!(
            "image `{name}` is not bundled (one of {})",
            images::names().join(", ")
        ))
    })?;
    let noise = req.noise.as_deref().unwrap_or(DEFAULT_PROFILE);
    // Only built-in profiles: a name from the network must never open a file.
    if !BUILTINS.contains(&noise) {
        return Err(Refusal::bad(format!(
            "noise `{noise}`: the playground offers {}",
            BUILTINS.join(", ")
        )));
    }
    let profile = Profile::load(noise).map_err(|e| Refusal::bad(e.to_string()))?;
    let pe = match req.pe {
        Some([r, c]) if r < N && c < N => (r, c),
        Some([r, c]) => {
            return Err(Refusal::bad(format!(
                "PE ({r}, {c}) is outside the {N}x{N} array"
            )))
        }
        None => (N / 2, N / 2),
    };
    Ok(Setup {
        program,
        inputs,
        image,
        profile,
        pe,
    })
}

fn prepared(s: &Setup) -> Array {
    let mut array = Array::new(Device::default().general, EdgeMode::Zero);
    array.expose(&s.image.pixels);
    for input in &s.inputs {
        match *input {
            Input::Preload(p) => p.apply(&mut array),
            Input::Image(reg) => load_input(&mut array, reg, &s.image),
        }
    }
    array
}

/// Macros of `program` that fit in [`MAX_STEP_CYCLES`].
fn runnable(program: &Program) -> usize {
    let mut cycles = 0;
    program
        .stmts
        .iter()
        .take_while(|s| {
            cycles += s.cycles();
            cycles <= MAX_STEP_CYCLES
        })
        .count()
}

/// The digital registers shown: those the program names, and FLAG.
fn shown_bits(program: &Program) -> Vec<DReg> {
    let mut d = program.digital_registers();
    if !d.contains(&DReg::Flag) {
        d.push(DReg::Flag);
    }
    d
}

/// Both runs' planes on one scale per register, so ideal and noisy compare by eye.
fn planes(arrays: [&Array; 2], bits: &[DReg]) -> [Vec<Plane>; 2] {
    let mut out: [Vec<Plane>; 2] = [Vec::new(), Vec::new()];
    for reg in analogue_regs(arrays[0]) {
        let (Some(a), Some(b)) = (arrays[0].plane(reg), arrays[1].plane(reg)) else {
            continue;
        };
        let finite = a.iter().chain(b).copied().filter(|v| v.is_finite());
        let lo = finite.clone().fold(f32::INFINITY, f32::min);
        let hi = finite.fold(f32::NEG_INFINITY, f32::max);
        let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 0.0) };
        for (k, p) in [a, b].into_iter().enumerate() {
            out[k].push(encode(&reg.to_string(), p, lo, hi));
        }
    }
    for &d in bits {
        for (k, arr) in arrays.into_iter().enumerate() {
            let v: Vec<f32> = arr.bits(d).iter().map(|&b| f32::from(b)).collect();
            out[k].push(encode(&d.to_string(), &v, 0.0, 1.0));
        }
    }
    out
}

/// A plane as bytes on the scale `lo..hi` (empty data when it is uniform).
fn encode(name: &str, p: &[f32], lo: f32, hi: f32) -> Plane {
    let uniform = p.iter().all(|&v| v == p[0]);
    let data = if uniform {
        String::new()
    } else {
        let span = (hi - lo).max(f32::MIN_POSITIVE);
        let bytes: Vec<u8> = p
            .iter()
            .map(|&v| ((v - lo) / span * 255.0).round().clamp(0.0, 255.0) as u8)
            .collect();
        base64(&bytes)
    };
    Plane {
        name: name.to_string(),
        lo: if uniform { p[0] } else { lo },
        hi: if uniform { p[0] } else { hi },
        data,
    }
}

/// The registers of PE `pe` and of its four neighbours.
fn pe_views(array: &Array, pe: (usize, usize), bits: &[DReg]) -> Vec<PeView> {
    let mut views = vec![("self", Some(pe))];
    for d in Dir::ALL {
        let (dr, dc) = d.step();
        let r = pe.0 as i64 + i64::from(dr);
        let c = pe.1 as i64 + i64::from(dc);
        let inside = (0..N as i64).contains(&r) && (0..N as i64).contains(&c);
        views.push((d.name(), inside.then_some((r as usize, c as usize))));
    }
    views
        .into_iter()
        .map(|(dir, at)| PeView {
            dir,
            row: at.map(|p| p.0),
            col: at.map(|p| p.1),
            values: at.map_or_else(Vec::new, |(r, c)| {
                let mut v: Vec<Value> = analogue_regs(array)
                    .into_iter()
                    .map(|reg| Value {
                        name: reg.to_string(),
                        value: array.read(reg, r, c),
                    })
                    .collect();
                v.extend(bits.iter().map(|&d| Value {
                    name: d.to_string(),
                    value: f32::from(array.bits(d)[r * N + c]),
                }));
                v
            }),
        })
        .collect()
}

/// A parse error as the page shows it.
fn diagnostic(pos: scamp::isa::Pos, msg: &str) -> Diagnostic {
    Diagnostic {
        line: pos.line,
        col: pos.col,
        msg: msg.to_string(),
    }
}

/// Refuses a program over the CLI's size limit (413, as a body too large).
pub fn check_size(text: &str) -> Result<(), Refusal> {
    if text.len() as u64 > MAX_PROGRAM_BYTES {
        return Err(Refusal {
            status: 413,
            msg: format!(
                "the program has {} bytes; the most accepted is {MAX_PROGRAM_BYTES} (as in the CLI)",
                text.len()
            ),
        });
    }
    Ok(())
}

/// Parses `text`, refusing a program over the CLI's size limit.
pub fn parse(text: &str) -> Result<Result<Program, Diagnostic>, Refusal> {
    check_size(text)?;
    Ok(parse_program(text, Device::default()).map_err(|e| diagnostic(e.pos, &e.cause.to_string())))
}

/// Answers `/api/run`.
pub fn run(req: &RunRequest) -> Result<RunReply, Refusal> {
    let program = match parse(&req.program)? {
        Ok(p) => p,
        Err(d) => {
            return Ok(RunReply {
                errors: vec![d],
                steps: Vec::new(),
                step: 0,
                instructions: 0,
                cycles: 0,
                truncated: None,
                warnings: Vec::new(),
                pe: [N / 2, N / 2],
                runs: Vec::new(),
            })
        }
    };
    let s = setup(req, program)?;
    let last = runnable(&s.program);
    let truncated = (last < s.program.stmts.len()).then(|| {
        format!(
            "the program has {} bus instructions; the playground runs at most {MAX_STEP_CYCLES} \
             per request, so it stops after macro {last} of {} (`scamp run` runs it all)",
            s.program.cycles(),
            s.program.stmts.len()
        )
    });
    let step = req.step.unwrap_or(last).min(last);
    let prefix = Program {
        stmts: s.program.stmts[..step].to_vec(),
    };
    let mut ideal = prepared(&s);
    let mut noisy = prepared(&s);
    noisy.set_layer(NoiseModel::new(&s.profile, 1, 1).with_clock(scamp::DEFAULT_CLOCK_HZ));
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for array in [&mut ideal, &mut noisy] {
        match scamp::run(array, &prefix, 1, scamp::DEFAULT_CLOCK_HZ) {
            Ok(report) => warnings = report.warnings,
            Err(e) => {
                if errors.is_empty() {
                    errors.push(diagnostic(e.pos, &e.cause.to_string()));
                }
            }
        }
    }
    let bits = shown_bits(&s.program);
    let [pi, pn] = planes([&ideal, &noisy], &bits);
    let runs = vec![
        RunState {
            name: "ideal".into(),
            planes: pi,
            pe: pe_views(&ideal, s.pe, &bits),
            saturated: ideal.saturated(),
        },
        RunState {
            name: s.profile.name.clone(),
            planes: pn,
            pe: pe_views(&noisy, s.pe, &bits),
            saturated: noisy.saturated(),
        },
    ];
    Ok(RunReply {
        errors,
        steps: steps(&s.program.stmts[..last]),
        step,
        instructions: s.program.stmts.len(),
        cycles: s.program.cycles(),
        truncated,
        warnings: warnings
            .iter()
            .map(|w| format!("line {}: {}", w.pos.line, w.kind))
            .collect(),
        pe: [s.pe.0, s.pe.1],
        runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(program: &str, inputs: &str, step: Option<usize>) -> RunRequest {
        RunRequest {
            program: program.into(),
            inputs: inputs.into(),
            image: None,
            noise: Some("ideal".into()),
            step,
            pe: Some([128, 128]),
        }
    }

    fn value(state: &RunState, reg: &str) -> f32 {
        state.pe[0]
            .values
            .iter()
            .find(|v| v.name == reg)
            .map(|v| v.value)
            .unwrap()
    }

    #[test]
    fn runs_to_the_step_asked_for_with_ramps_preloaded() {
        let prog = "movx(B, A, east);\nmovx(C, A, west);\n";
        let r = run(&request(prog, "// given: A = col", None)).unwrap();
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        assert_eq!((r.step, r.steps.len()), (2, 2));
        assert_eq!(value(&r.runs[0], "B"), 129.0);
        assert_eq!(value(&r.runs[0], "C"), 127.0);
        assert_eq!(r.runs[0].pe[2].dir, "east");
        assert_eq!(r.runs[0].pe[2].values[0].value, 129.0);
        let one = run(&request(prog, "A = col", Some(1))).unwrap();
        assert_eq!(value(&one.runs[0], "B"), 129.0);
        assert_eq!(value(&one.runs[0], "C"), 0.0);
    }

    #[test]
    fn a_runaway_program_is_cut_at_the_limit_and_says_so() {
        let prog = "add(A, A, B);\n".repeat(12_000);
        let r = run(&request(&prog, "", None)).unwrap();
        let cut = r.truncated.expect("cut");
        assert!(cut.contains("at most 20000"), "{cut}");
        assert!(r.steps.last().unwrap().cycles <= MAX_STEP_CYCLES);
        assert_eq!(r.instructions, 12_000);
    }

    #[test]
    fn the_docs_quote_the_limit() {
        let doc = include_str!("../../docs/html-pages.md");
        let limit = format!("{},{:03}", MAX_STEP_CYCLES / 1000, MAX_STEP_CYCLES % 1000);
        assert!(doc.contains(&format!("at most {limit} bus instructions per request")));
    }

    #[test]
    fn bad_inputs_are_refused_with_a_reason() {
        for (inputs, want) in [
            ("A = 1e9", "outside the register range"),
            ("Q = 1", "unknown register"),
            ("A col", "expected REG = VALUE"),
            ("R1 = 3", "0 or 1"),
        ] {
            let e = run(&request("add(A, A, B)", inputs, None)).unwrap_err();
            assert_eq!(e.status, 400);
            assert!(e.msg.contains(want), "{inputs}: {}", e.msg);
        }
        let mut r = request("add(A, A, B)", "", None);
        r.noise = Some("/etc/passwd".into());
        assert!(run(&r).unwrap_err().msg.contains("offers ideal"));
        r.noise = None;
        r.pe = Some([0, 256]);
        assert_eq!(run(&r).unwrap_err().status, 400);
    }

    #[test]
    fn a_parse_error_comes_back_at_its_line_and_column() {
        let r = run(&request("add(A, A, B);\n  ad(A, A, B);\n", "", None)).unwrap();
        assert_eq!(r.errors.len(), 1);
        assert_eq!((r.errors[0].line, r.errors[0].col), (2, 3));
        assert!(r.errors[0].msg.contains("`ad`"), "{}", r.errors[0].msg);
    }
}
