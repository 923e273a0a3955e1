//! Reporting a compiled program: the error objective's score, the predicted error of
//! the outputs, the `//` header printed above a program and the program text (groups
//! in kernel blocks).

use crate::cain::{Compiled, Ops, Source, Spec};
use crate::isa::{Program, Reg, Wiring};
use crate::sim::noise::Profile;
use crate::verify::predict::{self, InputStats, Predicted, Tap};
use crate::verify::range::InputRange;
use std::collections::BTreeMap;

/// `text` with control characters escaped, so that it stays inside one `//` comment
/// (parsed specs refuse them already; a [`Spec`] built in code might not).
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Per register of `outs`, the predicted error of `program` under `profile`, noise
/// and signal propagating from every input plane of `wiring`.
pub(crate) fn predict_outputs(
    program: &Program,
    wiring: Wiring,
    outs: &[Reg],
    profile: &Profile,
    stats: &InputStats,
) -> Result<Vec<Predicted>, predict::PredictError> {
    let regs = wiring.inputs();
    let inputs = InputPlanes {
        regs: &regs,
        general: wiring.general,
    };
    predict_outputs_planes(program, inputs, outs, profile, stats)
}

/// The input registers of a program (plane `z` in `regs[z]`) and the device's
/// general registers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InputPlanes<'a> {
    /// Per input plane, its register.
    pub(crate) regs: &'a [Reg],
    /// Number of general registers.
    pub(crate) general: usize,
}

/// [`predict_outputs`] of a program reading several input planes: noise and signal
/// propagate from every plane, each with the moments of `stats`.
pub(crate) fn predict_outputs_planes(
    program: &Program,
    inputs: InputPlanes,
    outs: &[Reg],
    profile: &Profile,
    stats: &InputStats,
) -> Result<Vec<Predicted>, predict::PredictError> {
    let model = predict::analyse_planes(program, inputs.regs, inputs.general, profile)?;
    Ok(outs.iter().map(|&r| model.predict(r, stats)).collect())
}

/// What the score holds saturation against: the input range, the register limit and
/// the exact outputs (whose own clipping no program can avoid).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clipping<'a> {
    /// The input's range.
    pub(crate) range: InputRange,
    /// The saturation limit.
    pub(crate) limit: f64,
    /// Each output's exact kernel, tap (plane and offset) to coefficient.
    pub(crate) outputs: &'a [BTreeMap<Tap, f64>],
}

/// The error objective's score: the summed predicted mean squared error of the outputs
/// `outs`, plus what saturation costs where the image is smooth (values pushed beyond
/// the limit by their systematic error, values other than unfitting outputs beyond it
/// anyway); with the outputs' predicted errors.
pub(crate) fn predicted_score(
    program: &Program,
    inputs: InputPlanes,
    outs: &[Reg],
    profile: &Profile,
    stats: &InputStats,
    clip: &Clipping,
) -> Option<(f64, Vec<Predicted>)> {
    let Clipping {
        range,
        limit,
        outputs,
    } = *clip;
    let model = predict::analyse_planes(program, inputs.regs, inputs.general, profile).ok()?;
    let predicted: Vec<Predicted> = outs.iter().map(|&r| model.predict(r, stats)).collect();
    let mse = Predicted::summed_mse(&predicted);
    let same = |a: &[(Tap, f64)], b: &BTreeMap<Tap, f64>, sign: f64| {
        a.len() == b.len()
            && a.iter()
                .all(|(o, c)| b.get(o).is_some_and(|d| (c - sign * d).abs() < 1e-9))
    };
    let unavoidable =
        |v: &[(Tap, f64)]| outputs.iter().any(|o| same(v, o, 1.0) || same(v, o, -1.0));
    Some((
        mse + model.smooth_clipping(range, limit, &unavoidable),
        predicted,
    ))
}

/// The saturation limit of `profile` as one magnitude: the nearer of its two knees,
/// up to which values are stored unchanged (the limits themselves under a hard clip).
pub(crate) fn saturation_limit(profile: &Profile) -> Option<f64> {
    profile.saturation.as_ref().map(|s| s.knee())
}

/// One plane of integer weights as `[1 2 1; 2 4 2]`: rows north to south, separated by
/// `;`. The header here and the exported C++'s notes print kernels this way.
pub(crate) fn weights_text(plane: &[Vec<i64>]) -> String {
    let rows: Vec<String> = plane
        .iter()
        .map(|r| {
            r.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    format!("[{}]", rows.join("; "))
}

/// Every plane of an approximated kernel's integer weights: `[1 2 1; 2 4 2]` for one
/// input, `([...] + [...] + [...])` for several (one array per input, summed).
pub(crate) fn planes_text(approx: &crate::cain::Approx) -> String {
    let planes: Vec<String> = approx
        .planes()
        .into_iter()
        .map(|p| weights_text(p))
        .collect();
    if planes.len() > 1 {
        format!("({})", planes.join(" + "))
    } else {
        planes.concat()
    }
}

/// Each output's predicted error as `B RMSE 1.23 bias +0.05, C RMSE ...` (`outs` and
/// `predicted` in the same order).
pub(crate) fn predicted_text(outs: &[Reg], predicted: &[Predicted]) -> String {
    outs.iter()
        .zip(predicted)
        .map(|(r, p)| format!("{r} RMSE {:.2} bias {:+.2}", p.rmse, p.bias))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `//` comment header printed above a compiled program.
pub fn header(spec: &Spec, c: &Compiled) -> String {
    let mut s = format!(
        "// {}: generated by `scamp compile` (Cain-style search, ops: {})\n",
        one_line(&spec.name),
        match c.ops {
            Ops::All => "all",
            Ops::Basic => "basic",
        }
    );
    let inputs = if spec.other_inputs.is_empty() {
        format!("input image in {}", c.input)
    } else {
        let names: Vec<String> = spec.inputs().iter().map(ToString::to_string).collect();
        format!("inputs (one channel each) in {}", names.join(", "))
    };
    s += &format!(
        "// {inputs}; registers {}\n",
        c.registers
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    for k in &c.kernels {
        s += &format!(
            "// {} = {} / 2^{} (d = {}, approximation error {})\n",
            k.out,
            planes_text(&k.approx),
            k.approx.depth,
            k.approx.depth,
            k.approx.error
        );
    }
    s += &format!(
        "// {} instructions, {} cycles; proven exact by symbolic execution\n",
        c.program.instructions(),
        c.program.cycles()
    );
    s += &provenance(c);
    s += &range_lines(spec, c);
    s
}

/// How the program was made: the search mode and, for a bank, its groups.
fn provenance(c: &Compiled) -> String {
    let mut s = String::new();
    if let Some(w) = c.search.work {
        s += &format!(
            "// deterministic search: {w} nodes per worker, {} workers, seed {}\n",
            c.search.workers, c.search.seed
        );
    }
    if c.groups.len() > 1 {
        s += &format!(
            "// {} groups, each from the input, outputs read out after each: {}\n",
            c.groups.len(),
            group_list(c)
        );
        for (i, g) in c.groups.iter().enumerate() {
            s += &format!(
                "// group {}: {} instructions, {} cycles, made by the {}\n",
                i + 1,
                g.program.instructions(),
                g.program.cycles(),
                g.source.name()
            );
        }
    } else {
        s += &format!(
            "// made by the {}\n",
            match c.search.source {
                Source::Search => "search",
                Source::Fallback => "constructive fallback (the search found nothing shorter)",
            }
        );
    }
    s
}

/// The outputs that clip, the peak value against the limit and the predicted errors.
fn range_lines(spec: &Spec, c: &Compiled) -> String {
    let mut s = String::new();
    let outs: Vec<Reg> = c.kernels.iter().map(|k| k.out).collect();
    for (k, (&m, &fit)) in c
        .kernels
        .iter()
        .zip(c.range.outputs.iter().zip(&c.range.largest_fitting_scale))
    {
        if m > c.range.limit + 1e-9 {
            s += &format!(
                "// note: {}'s exact output reaches +-{m}, beyond the register limit: it clips \
                 (the largest scale that fits is {fit:.6})\n",
                k.out
            );
        }
    }
    s += &format!(
        "// peak |value| {} (limit {}) for inputs {}..{}; predicted under {}: {}\n",
        c.range.peak.magnitude,
        c.range.limit,
        spec.input_range.lo,
        spec.input_range.hi,
        c.profile,
        predicted_text(&outs, &c.predicted)
    );
    s
}

/// The groups as `[A, B, C], [D, E]` (output registers of their kernels).
pub(crate) fn group_list(c: &Compiled) -> String {
    c.groups
        .iter()
        .map(|g| {
            let outs: Vec<String> = g
                .kernels
                .iter()
                .filter_map(|&i| c.kernels.get(i).map(|k| k.out.to_string()))
                .collect();
            format!("[{}]", outs.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The program text printed below the header: the program itself, or for a bank of
/// several groups each group's program in a kernel block
/// (`scamp5_kernel_begin(); ... scamp5_kernel_end();`): the host reads the outputs
/// out at the end of each block, and the next block starts from the input again.
pub fn program_text(c: &Compiled) -> String {
    if c.groups.len() <= 1 {
        return c.program.to_string();
    }
    let mut s = String::new();
    for (i, g) in c.groups.iter().enumerate() {
        let outs: Vec<String> = g
            .kernels
            .iter()
            .filter_map(|&k| c.kernels.get(k).map(|k| k.out.to_string()))
            .collect();
        s += &format!(
            "// group {}: kernels {} into {}\nscamp5_kernel_begin();\n{}scamp5_kernel_end();\n",
            i + 1,
            g.kernels
                .iter()
                .map(|k| (k + 1).to_string())
                .collect::<Vec<_>>()
                .join(", "),
            outs.join(", "),
            g.program
        );
    }
    s
}
