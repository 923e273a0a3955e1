//! The step-through page of `scamp trace --html`: a program run twice, under exact
//! arithmetic and under a noise profile, with every register plane recorded after each
//! bus instruction, shown beside the source.

use super::html::{base64, escape, page, script_json};
use super::planes::{block_means, quantise_bits, quantise_levels, TRACE_SIDE};
use scamp::{isa::BusOp, isa::DReg, isa::Dir, isa::Program, isa::Reg};
use scamp::{Array, RunError};
use serde_json::{json, Value};

/// The script of the step-through page.
const SCRIPT: &str = include_str!("assets/trace.js");

/// What a step-through page shows.
pub struct TraceInput<'a> {
    /// Name of the program (its file name).
    pub title: &'a str,
    /// Program text as written, shown line by line.
    pub source: &'a str,
    /// The parsed program.
    pub program: &'a Program,
    /// The array for the exact run, prepared (scene exposed, preloads applied).
    pub ideal: Array,
    /// The same array with a noise layer installed.
    pub noisy: Array,
    /// Name of the noise profile of the second run.
    pub noise: &'a str,
    /// The PE whose registers are listed as numbers.
    pub pe: (usize, usize),
    /// Array clock in Hz.
    pub clock_hz: f64,
}

/// Where each recorded bus instruction came from.
struct StepInfo {
    line: u32,
    stmt: String,
    op: String,
    index: usize,
    of: usize,
    cycles: u64,
    written: Vec<String>,
}

/// The planes a bus instruction writes, by the names the page shows (a write through a
/// neighbour view lands in `NEWS`).
pub fn written(op: &BusOp) -> Vec<String> {
    match op {
        BusOp::Transfer { dsts, .. } => dsts
            .iter()
            .map(|r| match r {
                Reg::X(_) => "NEWS".to_string(),
                r => r.to_string(),
            })
            .collect(),
        BusOp::Where(_) | BusOp::All => vec!["FLAG".into()],
        _ => Vec::new(),
    }
}

/// One run's planes as key frames: a plane is stored at a step only when its bytes
/// differ from the last stored frame; a uniform plane is stored as its one level.
struct Recorder {
    last: Vec<Option<Vec<u8>>>,
    frames: Vec<Vec<Value>>,
}

impl Recorder {
    fn new(planes: usize) -> Self {
        Recorder {
            last: vec![None; planes],
            frames: vec![Vec::new(); planes],
        }
    }

    fn record(&mut self, plane: usize, step: usize, bytes: Vec<u8>) {
        if self.last[plane].as_ref() == Some(&bytes) {
            return;
        }
        let frame = if bytes.iter().all(|&b| b == bytes[0]) {
            json!([step, bytes[0]])
        } else {
            json!([step, base64(&bytes)])
        };
        self.frames[plane].push(frame);
        self.last[plane] = Some(bytes);
    }
}

/// The analogue planes of `array` in the order the page shows them: the general
/// registers, then `NEWS`.
pub fn analogue_regs(array: &Array) -> Vec<Reg> {
    let mut regs: Vec<Reg> = (0..array.general()).map(|i| Reg::Gen(i as u8)).collect();
    regs.push(Reg::News);
    regs
}

pub(crate) fn digital_regs() -> Vec<DReg> {
    let mut regs: Vec<DReg> = (0..13).map(DReg::R).collect();
    regs.push(DReg::Flag);
    regs
}

/// The watched PE's registers, its neighbours' NEWS and its FLAG, at full precision.
fn pe_values(array: &Array, pe: (usize, usize)) -> Vec<f32> {
    let mut v: Vec<f32> = analogue_regs(array)
        .iter()
        .map(|&r| array.read(r, pe.0, pe.1))
        .collect();
    v.extend(Dir::ALL.iter().map(|&d| array.read(Reg::X(d), pe.0, pe.1)));
    v.push(f32::from(array.bits(DReg::Flag)[pe.0 * scamp::N + pe.1]));
    v
}

/// Block means of every analogue plane at full precision, as key frames (step, means):
/// the exact run keeps them so the noisy run can record its difference from it before
/// either is quantised (a value beyond the byte range would otherwise hide the error).
type Means = Vec<Vec<(usize, Vec<f64>)>>;

/// Everything recorded from one run.
struct Recorded {
    analogue: Recorder,
    /// This run minus the reference run, when there is one.
    diff: Recorder,
    means: Means,
    digital: Recorder,
    pe: Vec<Vec<f32>>,
    steps: Vec<StepInfo>,
    report: scamp::RunReport,
}

/// The reference's means of plane `i` at `step`: its latest key frame at or before it.
fn means_at(reference: &Means, i: usize, step: usize) -> Option<&[f64]> {
    reference[i]
        .iter()
        .rev()
        .find(|(s, _)| *s <= step)
        .map(|(_, m)| m.as_slice())
}

fn snapshot(
    rec: &mut Recorded,
    array: &Array,
    step: usize,
    pe: (usize, usize),
    reference: Option<&Means>,
) {
    for (i, &r) in analogue_regs(array).iter().enumerate() {
        let Some(p) = array.plane(r) else { continue };
        let means = block_means(p, TRACE_SIDE);
        rec.analogue.record(i, step, quantise_levels(&means));
        match reference.and_then(|m| means_at(m, i, step)) {
            Some(exact) => {
                let d: Vec<f64> = means.iter().zip(exact).map(|(a, b)| a - b).collect();
                rec.diff.record(i, step, quantise_levels(&d));
            }
            None => {
                if rec.means[i].last().is_none_or(|(_, m)| *m != means) {
                    rec.means[i].push((step, means));
                }
            }
        }
    }
    for (i, &d) in digital_regs().iter().enumerate() {
        rec.digital
            .record(i, step, quantise_bits(array.bits(d), TRACE_SIDE));
    }
    rec.pe.push(pe_values(array, pe));
}

/// Most bus instructions a page shows. Past it the page shows evenly spaced ones (and
/// the last): every shown step holds every register plane, and 10,000 macros shown in
/// full made a 300 MB page that took 1.4 GB to build.
pub const MAX_TRACE_STEPS: usize = 1000;

/// How a page samples a program's bus instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampling {
    /// Bus instructions in the program.
    pub total: usize,
    /// One shown every `every` (1: all of them).
    pub every: usize,
}

impl Sampling {
    /// The sampling of `program`'s page.
    pub fn of(program: &Program) -> Sampling {
        let total: usize = program.stmts.iter().map(|s| s.ops.len()).sum();
        Sampling {
            total,
            every: total.div_ceil(MAX_TRACE_STEPS).max(1),
        }
    }

    /// Whether bus instruction `i` (1-based) is shown.
    fn shows(&self, i: usize) -> bool {
        i.is_multiple_of(self.every) || i == self.total
    }

    /// What the page leaves out, when it leaves anything out.
    pub fn note(&self) -> Option<String> {
        (self.every > 1).then(|| {
            format!(
                "the program has {} bus instructions, more than the {MAX_TRACE_STEPS} a page \
                 shows: every {}th is shown (and the last), each with the state after it",
                self.total, self.every
            )
        })
    }
}

fn record(
    array: &mut Array,
    program: &Program,
    pe: (usize, usize),
    clock_hz: f64,
    reference: Option<&Means>,
) -> Result<Recorded, RunError> {
    let sampling = Sampling::of(program);
    let mut done = 0usize;
    let planes = analogue_regs(array).len();
    let mut rec = Recorded {
        analogue: Recorder::new(planes),
        diff: Recorder::new(planes),
        means: vec![Vec::new(); planes],
        digital: Recorder::new(digital_regs().len()),
        pe: Vec::new(),
        steps: Vec::new(),
        report: scamp::RunReport::default(),
    };
    snapshot(&mut rec, array, 0, pe, reference);
    let mut cycles = 0u64;
    let report = scamp::run_observed(array, program, 1, clock_hz, |s, i, arr| {
        cycles += s.ops[i].cycles();
        done += 1;
        if !sampling.shows(done) {
            return;
        }
        rec.steps.push(StepInfo {
            line: s.pos.line,
            stmt: s.to_string(),
            op: s.ops[i].to_string(),
            index: i,
            of: s.ops.len(),
            cycles,
            written: written(&s.ops[i]),
        });
        let step = rec.steps.len();
        snapshot(&mut rec, arr, step, pe, reference);
    })?;
    rec.report = report;
    Ok(rec)
}

fn run_json(name: &str, names: &[String], bits: &[String], rec: Recorded) -> Value {
    let planes: serde_json::Map<String, Value> = names
        .iter()
        .cloned()
        .zip(rec.analogue.frames.into_iter().map(Value::from))
        .collect();
    let diff: serde_json::Map<String, Value> = names
        .iter()
        .cloned()
        .zip(rec.diff.frames.into_iter().map(Value::from))
        .collect();
    let digital: serde_json::Map<String, Value> = bits
        .iter()
        .cloned()
        .zip(rec.digital.frames.into_iter().map(Value::from))
        .collect();
    json!({
        "name": name,
        "planes": planes,
        "diff": diff,
        "bits": digital,
        "pe": rec.pe,
        "saturated": rec.report.saturated,
    })
}

/// Runs the program under both arrays and renders the step-through page.
pub fn trace_page(input: TraceInput<'_>) -> Result<String, RunError> {
    let TraceInput {
        title,
        source,
        program,
        mut ideal,
        mut noisy,
        noise,
        pe,
        clock_hz,
    } = input;
    let exact = record(&mut ideal, program, pe, clock_hz, None)?;
    let perturbed = record(&mut noisy, program, pe, clock_hz, Some(&exact.means))?;
    let names: Vec<String> = analogue_regs(&ideal).iter().map(Reg::to_string).collect();
    let bits: Vec<String> = digital_regs().iter().map(DReg::to_string).collect();
    let mut pe_names = names.clone();
    pe_names.extend(Dir::ALL.iter().map(|&d| Reg::X(d).to_string()));
    pe_names.push("FLAG".into());
    let steps: Vec<Value> = exact
        .steps
        .iter()
        .map(|s| json!([s.line, s.stmt, s.op, s.index, s.of, s.cycles, s.written]))
        .collect();
    let warnings: Vec<String> = exact
        .report
        .warnings
        .iter()
        .map(|w| format!("line {}: {}", w.pos.line, w.kind))
        .chain(Sampling::of(program).note())
        .collect();
    let data = json!({
        "title": title,
        "lines": source.lines().collect::<Vec<_>>(),
        "side": TRACE_SIDE,
        "n": scamp::N,
        "clock_hz": clock_hz,
        "pe": [pe.0, pe.1],
        "pe_names": pe_names,
        "analogue": names,
        "digital": bits,
        "steps": steps,
        "warnings": warnings,
        "runs": [
            run_json("ideal", &names, &bits, exact),
            run_json(noise, &names, &bits, perturbed),
        ],
    });
    let body = format!(
        "{}\n<script id=\"trace-data\" type=\"application/json\">{}</script>",
        body(title, noise),
        script_json(&data)
    );
    Ok(page(&format!("scamp trace: {title}"), &body, SCRIPT))
}

/// The static frame the script fills in.
fn body(title: &str, noise: &str) -> String {
    let b = scamp::N / TRACE_SIDE;
    format!(
        r#"<header>
<h1><span class="tool">scamp trace</span> {title}</h1>
<p class="sub">Every bus instruction of the program, run twice on the 256x256 array: with exact
arithmetic (<b>ideal</b>) and under the <b>{noise}</b> error model. Step with the buttons, the
slider or the arrow keys (Home/End for the ends); <code>#step=N</code> in the address opens step N.</p>
</header>
<nav id="controls">
<button id="first" title="first step (Home)">&#x21E4;</button>
<button id="prev" title="previous bus instruction (left arrow)">&#x25C0;</button>
<input id="slider" type="range" min="0" max="0" value="0" aria-label="step">
<button id="next" title="next bus instruction (right arrow)">&#x25B6;</button>
<button id="last" title="last step (End)">&#x21E5;</button>
<span id="where"></span>
</nav>
<main>
<section id="code-pane">
<h2>Program</h2>
<ol id="source"></ol>
<h2>Bus instructions of this macro</h2>
<ol id="expansion"></ol>
<h2>PE <span id="pe-name"></span></h2>
<table id="pe-table"></table>
<div id="pe-cross"></div>
<p class="note" id="warnings"></p>
</section>
<section id="planes-pane">
<div id="scale"></div>
<div id="runs"></div>
<h2>Digital registers and FLAG</h2>
<p class="note">White where the bit is 1 (grey: part of the block). Registers that stay 0 are hidden.</p>
<div id="bits"></div>
<p class="note">How the pictures are stored: each 256x256 plane is reduced to {side}x{side} block means
({b}x{b} PEs per block) and quantised to one byte per block (level = round(value) + 128, clamped to
-128..127, so values beyond the range show at the ends of the scale); the difference row is computed
from the block means before quantising. A plane is stored only at the steps where it changes. Hover
a picture for the value of a block; the PE table shows the chosen PE at full precision.</p>
<p id="status" data-ready="0"></p>
<div id="tip" hidden></div>
</section>
</main>"#,
        title = escape(title),
        noise = escape(noise),
        side = TRACE_SIDE,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use scamp::{isa::parse_program, isa::Device};

    #[test]
    fn long_programs_are_sampled_to_the_page_limit() {
        let short = parse_program(&"mov(B, A);\n".repeat(10), Device::default()).unwrap();
        assert_eq!(Sampling::of(&short).every, 1);
        assert_eq!(Sampling::of(&short).note(), None);
        let long = parse_program(&"mov(B, A);\n".repeat(10_000), Device::default()).unwrap();
        let s = Sampling::of(&long);
        let shown = (1..=s.total).filter(|&i| s.shows(i)).count();
        assert!(shown <= MAX_TRACE_STEPS, "{shown}");
        assert!(shown * 2 > MAX_TRACE_STEPS, "{shown}");
        assert!(s.shows(s.total));
        assert!(s.note().is_some_and(|n| n.contains(&s.total.to_string())));
    }
}
