//! One group's compile: the constructive fallback made first ([`prepare`]), then the
//! search's phases for a better program ([`search_group`]), every candidate proven, held
//! to the range and scored by the objective, and the final choice among them.

use crate::cain::drive::choice::{self, Finalists};
use crate::cain::drive::phase;
use crate::cain::drive::pipeline::{self, PhaseResult, Pipeline, Ran};
use crate::cain::drive::setup::Setup;
use crate::cain::moves::goal::{Bag, Goal};
use crate::cain::moves::reverse::Ctx;
use crate::cain::score::{clipping::ClipModel, objective};
use crate::cain::search::{self, Found, GoalRange, Outcome, SearchOptions, StopReason};
use crate::cain::{
    assemble::alloc, assemble::emit, assemble::report, drive::fallback, moves::step, spec::approx,
    CompileError, GeneratorBug, Objective, PhaseReport, Source, Stats,
};
use crate::isa::{Program, Reg};
use crate::verify::predict::{InputStats, PredictError, Predicted};
use crate::verify::range::{self, Peak};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A proven program of one group with what was measured when it was made.
#[derive(Clone, Debug)]
pub(crate) struct Candidate {
    /// The program.
    pub(crate) program: Program,
    /// The largest magnitude any of its values reaches.
    pub(crate) peak: Peak,
    /// Per member kernel, the predicted error (from the scoring, under the error
    /// objective).
    pub(crate) predicted: Option<Vec<Predicted>>,
    /// The plan it was made from (empty for the constructive program), for the
    /// clipping cost of a program found by the length search and scored afterwards.
    pub(crate) steps: Vec<step::Step>,
}

/// What one group's compile produced.
pub(crate) struct GroupResult {
    /// The chosen program (`at`: from the start of the compile).
    pub(crate) best: Found<Candidate>,
    /// Which generator made it.
    pub(crate) source: Source,
    /// The search's figures.
    pub(crate) outcome: Outcome<Candidate>,
    /// Per member kernel, the predicted error of the chosen program.
    pub(crate) predicted: Vec<Predicted>,
    /// Per phase (the constructive program first), what it found and whether it was
    /// kept (`group` left 0: the compile numbers its groups).
    pub(crate) phases: Vec<PhaseReport>,
}

/// The group's kernels as goals at their common depth, with their output registers.
fn finals(setup: &Setup, members: &[usize]) -> Result<(u32, Vec<(Goal, Reg)>), CompileError> {
    let kernels: Vec<_> = members
        .iter()
        .filter_map(|&i| setup.kernels.get(i))
        .collect();
    let depth = kernels.iter().map(|k| k.approx.depth).max().unwrap_or(0);
    let mut finals = Vec::with_capacity(kernels.len());
    for (&i, k) in members.iter().zip(&kernels) {
        let g = approx::goal_of(&k.approx, depth).ok_or_else(|| CompileError::Approx {
            index: i + 1,
            out: k.out,
            cause: crate::cain::ApproxFailure::CommonDepth { depth },
        })?;
        finals.push((g, k.out));
    }
    Ok((depth, finals))
}

/// Holds a group's targets and turns programs into scored candidates.
pub(crate) struct Judge<'a> {
    setup: &'a Setup<'a>,
    /// The members' kernels on every input plane (one plane each for one input).
    planes: Vec<crate::verify::planes::PlanesTarget>,
    /// The members (indices into the setup's kernels).
    members: Vec<usize>,
    outs: Vec<Reg>,
    pub(crate) held_to: f64,
    stats_in: InputStats,
    /// Each output's exact coefficients on every plane (outputs that cannot fit are
    /// exempt from the clipping score).
    outputs_f64: Vec<BTreeMap<crate::verify::predict::Tap, f64>>,
}

impl<'a> Judge<'a> {
    fn new(setup: &'a Setup<'a>, members: &[usize]) -> Judge<'a> {
        let planes: Vec<crate::verify::planes::PlanesTarget> = members
            .iter()
            .filter_map(|&i| setup.kernels.get(i))
            .map(crate::cain::KernelReport::planes_target)
            .collect();
        let outputs_f64 = planes.iter().map(exact_taps).collect();
        Judge {
            setup,
            outs: planes.iter().map(|t| t.out).collect(),
            planes,
            members: members.to_vec(),
            held_to: setup.held_to(members),
            stats_in: objective::input_stats(setup.spec.input_range),
            outputs_f64,
        }
    }

    /// Proves that `program` computes every member kernel within the registers: on
    /// the one input, or, with several inputs, on every input plane.
    fn prove(&self, program: &Program) -> Result<(), GeneratorBug> {
        let s = self.setup;
        crate::verify::prove_kernels(program, s.wiring(), &self.planes, Some(&s.registers))?;
        Ok(())
    }

    /// The input planes' registers and the device's general registers.
    fn inputs<'i>(&self, regs: &'i [Reg]) -> report::InputPlanes<'i> {
        report::InputPlanes {
            regs,
            general: self.setup.general,
        }
    }

    /// The predicted error of each member's output of `program` (noise and signal
    /// from every input plane).
    fn predict(&self, program: &Program) -> Result<Vec<Predicted>, PredictError> {
        let s = self.setup;
        let regs = s.spec.inputs();
        let inputs = self.inputs(&regs);
        report::predict_outputs_planes(program, inputs, &self.outs, &s.profile, &self.stats_in)
    }

    /// The error objective's score of `program` and its outputs' predicted errors.
    pub(crate) fn score(&self, program: &Program) -> Option<(f64, Vec<Predicted>)> {
        let s = self.setup;
        let regs = s.spec.inputs();
        report::predicted_score(
            program,
            self.inputs(&regs),
            &self.outs,
            &s.profile,
            &self.stats_in,
            &report::Clipping {
                range: s.spec.input_range,
                limit: s.limit,
                outputs: &self.outputs_f64,
            },
        )
    }

    /// Proves `program` (made from `steps`), holds it to the range and scores it under
    /// `objective`; `None` if it fails any.
    pub(crate) fn judge(
        &self,
        program: Program,
        steps: &[step::Step],
        objective: Objective,
    ) -> Option<search::Finished<Candidate>> {
        let s = self.setup;
        self.prove(&program).ok()?;
        // Over every input plane when there are several.
        let peak = range::peak(&program, s.wiring(), s.spec.input_range).ok()?;
        if peak.magnitude > self.held_to + 1e-9 {
            return None;
        }
        let (score, predicted) = match objective {
            Objective::Length => (0.0, None),
            Objective::Error => {
                let (score, p) = self.score(&program)?;
                (score, Some(p))
            }
        };
        let (n, c) = (program.instructions(), program.cycles());
        Some((
            Candidate {
                program,
                peak,
                predicted,
                steps: steps.to_vec(),
            },
            n,
            c,
            score,
        ))
    }
}

/// A multi-plane kernel's exact coefficients by tap (plane, row and column offset).
fn exact_taps(
    t: &crate::verify::planes::PlanesTarget,
) -> BTreeMap<crate::verify::predict::Tap, f64> {
    let mut out = BTreeMap::new();
    for (z, plane) in t.planes.iter().enumerate() {
        let Ok(z) = u16::try_from(z) else { continue };
        for (&(r, c), coef) in &plane.expected().terms {
            out.insert((z, r, c), range::coef_f64(coef));
        }
    }
    out
}

/// Runs the search for a group. Where an output cannot fit, it first tries for half
/// the budget to keep everything but the outputs within the limit (values beyond it
/// clip and spoil what fits), then holds values to the outputs' own magnitude.
pub(crate) fn run_search(
    root: &Bag,
    ctx: &Ctx,
    opts: &SearchOptions,
    range: &GoalRange,
    held_to: f64,
    stats: &Stats,
    finish: &search::Finisher<'_, Candidate>,
) -> Outcome<Candidate> {
    let strict = SearchOptions {
        range: Some(range.clone()),
        ..opts.clone()
    };
    if held_to <= range.limit {
        return search::search(root, ctx, &strict, stats, finish);
    }
    let first = SearchOptions {
        time_limit: opts.time_limit / 2,
        node_limit: opts.node_limit.map(|n| n / 2),
        work: opts.work.map(|n| n / 2),
        ..strict
    };
    // Outputs beyond what one instruction makes from values within the limit (a 5x5
    // kernel in eighths reaches eleven times it) leave the first try nothing to find:
    // the second gets the whole budget.
    let sources = step::Kind::most_sources(ctx.ops);
    let o = if root.0.iter().all(|g| range.reachable(g, sources)) {
        let o = search::search(root, ctx, &first, stats, finish);
        if o.best.is_some() {
            return o;
        }
        Some(o)
    } else {
        None
    };
    let spent = o.as_ref().map_or(0.0, |o| o.seconds);
    let second = SearchOptions {
        time_limit: opts
            .time_limit
            .saturating_sub(Duration::from_secs_f64(spent))
            .max(Duration::from_millis(1)),
        work: match o {
            Some(_) => first.work,
            None => opts.work,
        },
        range: Some(range.held_to(held_to)),
        ..opts.clone()
    };
    let mut o2 = search::search(root, ctx, &second, stats, finish);
    o2.seconds += spent;
    o2
}

/// A group ready for its search: its goals and judge, and its constructive program
/// already made, proven, held to the range and scored.
pub(crate) struct Prepared<'a> {
    setup: &'a Setup<'a>,
    depth: u32,
    finals: Vec<(Goal, Reg)>,
    judge: Judge<'a>,
    fallback: Option<Found<Candidate>>,
    /// What making and judging the constructive program took: a measure, on this
    /// machine under its present load, of what handling a program of that size costs.
    /// After the search, the program it found (shorter, or the constructive one is
    /// kept) is proven again and predicted, and the search may be judging one more
    /// candidate when its clock runs out: all no more than this.
    pub(crate) reserve: Duration,
}

impl Prepared<'_> {
    /// The predicted error of each member's output of the constructive program (`None`
    /// when the registers do not suffice for it).
    pub(crate) fn constructive_predicted(&self) -> Option<&[Predicted]> {
        self.fallback.as_ref()?.value.predicted.as_deref()
    }
}

/// Makes the constructive program of the kernels `members` (proven, held to the
/// range, scored and predicted), before any search, so that the search is given only
/// the time that remains. `start` is when the compile started (the program's `at`).
pub(crate) fn prepare<'a>(
    setup: &'a Setup<'a>,
    members: &[usize],
    start: Instant,
) -> Result<Prepared<'a>, CompileError> {
    let began = Instant::now();
    let (depth, finals) = finals(setup, members)?;
    let judge = Judge::new(setup, members);
    let fallback = (|| {
        let instrs = fallback::program(
            &finals,
            &setup.spec.inputs(),
            &setup.registers,
            depth,
            setup.ops,
        )?;
        let (mut value, instructions, cycles, score) = judge.judge(
            emit::program(&instrs, setup.device).ok()?,
            &[],
            setup.objective,
        )?;
        if value.predicted.is_none() {
            // The length objective does not score by error: predict now, so that
            // nothing of this size is left for after the search.
            value.predicted = Some(judge.predict(&value.program).ok()?);
        }
        Some(Found {
            value,
            instructions,
            cycles,
            score,
            at: start.elapsed(),
        })
    })();
    let reserve = if fallback.is_some() {
        began.elapsed()
    } else {
        Duration::ZERO
    };
    Ok(Prepared {
        setup,
        depth,
        finals,
        judge,
        fallback,
        reserve,
    })
}

/// A group's clock: what it may spend (`time`, from the clock left when it starts)
/// and its nominal share of the time limit (`nominal`, the same on every run).
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupClock {
    /// The clock budget.
    pub(crate) time: Duration,
    /// The time limit's share for the group.
    pub(crate) nominal: Duration,
}

/// Searches for a program of a prepared group within its clock (and the work budget,
/// if any) that beats its constructive program: runs the objective's phases
/// ([`phase::plan`]) and makes the final choice from their results ([`choice`]).
pub(crate) fn search_group(
    prepared: Prepared<'_>,
    clock: GroupClock,
    start: Instant,
    stats: &Stats,
) -> Result<GroupResult, CompileError> {
    let Prepared {
        setup,
        depth,
        finals,
        judge,
        fallback,
        reserve,
    } = prepared;
    if let (None, Some(why)) = (
        &fallback,
        crate::cain::drive::feasible::impossible(&finals, &setup.registers),
    ) {
        return Err(CompileError::NoProgram(why));
    }
    let inputs = setup.input_goals(depth);
    let problem = alloc::AllocProblem {
        inputs: &inputs,
        registers: &setup.registers,
        outputs: &finals,
    };
    let finish = pipeline::finisher(setup, &judge, &problem);
    let (root, ctx, range, clip) = search_frame(setup, depth, &finals);
    // The constructive program bounds the search from its start (in the deterministic
    // mode too: the bound is the same on every run). The bound is this group's own:
    // another group's shorter program says nothing about this one's.
    stats.best.store(
        fallback.as_ref().map_or(usize::MAX, |f| f.instructions),
        std::sync::atomic::Ordering::Relaxed,
    );
    let pipeline = Pipeline {
        setup,
        judge: &judge,
        finish: &finish,
        root,
        ctx,
        range,
        clip,
        start,
        began: start.elapsed(),
        time: clock.time,
        nominal: clock.nominal,
        stats,
    };
    let phases = phase::plan(setup.objective, setup.search.work.is_some());
    let ran = pipeline.run(&phases, fallback.clone())?;
    let finalists = finalists(&ran, &judge, &pipeline)?;
    let (best, source) = choice::final_choice(setup.objective, finalists, setup.search.slack);
    let reports = reports(&ran, fallback.as_ref(), reserve, &best);
    let outcome = merged(ran.phases, best.clone());
    let mut result = judge.conclude(best, source, outcome)?;
    result.phases = reports;
    Ok(result)
}

/// The final choice's candidates: the shortest program, a shorter one the later phases
/// finished (scored as the shortest was) and the later phases' results.
fn finalists(
    ran: &Ran,
    judge: &Judge<'_>,
    pipeline: &Pipeline<'_>,
) -> Result<Finalists, CompileError> {
    let later = || {
        ran.phases
            .iter()
            .filter(|r| r.phase.objective == Objective::Error)
    };
    // The shortest program the error phases finished, in the order of the keeper
    // (the same whichever phase finished it first).
    let seen = objective::Shortest::default();
    for f in later().filter_map(|r| r.shortest.as_ref()) {
        seen.offer(&(f.value.clone(), f.instructions, f.cycles, f.score), f.at);
    }
    let shorter = seen
        .shorter_than(ran.shortest.0.instructions)
        .map(|f| objective::rescore((f, Source::Search), judge, &pipeline.clip, &pipeline.root.0))
        .transpose()?
        .map(|(f, _)| f);
    Ok(Finalists {
        shortest: ran.shortest.clone(),
        shorter,
        searched: later().filter_map(|r| r.outcome.best.clone()).collect(),
    })
}

/// Per phase, what it found and whether the chosen program is one of its; the
/// constructive program first, as a phase of its own.
fn reports(
    ran: &Ran,
    constructive: Option<&Found<Candidate>>,
    reserve: Duration,
    chosen: &Found<Candidate>,
) -> Vec<PhaseReport> {
    let report =
        |name: &'static str, nodes, seconds, best: Option<&Found<Candidate>>, kept| PhaseReport {
            group: 0,
            name,
            nodes,
            seconds,
            best_instructions: best.map(|b| b.instructions),
            best_predicted_rmse: best
                .and_then(|b| b.value.predicted.as_deref())
                .map(|p| Predicted::summed_mse(p).sqrt()),
            kept,
        };
    let first = report(
        "constructive",
        0,
        reserve.as_secs_f64(),
        constructive,
        constructive.is_some_and(|c| choice::kept(chosen, [c])),
    );
    let phases = ran.phases.iter().map(|r| {
        let own = r.program.as_ref();
        let kept = choice::kept(chosen, own.into_iter().chain(&r.shortest));
        report(r.phase.name, r.outcome.nodes, r.outcome.seconds, own, kept)
    });
    std::iter::once(first).chain(phases).collect()
}

/// One outcome for all phases (counts added, the stop reason that says most about the
/// result), its best the chosen program.
fn merged(phases: Vec<PhaseResult>, best: Found<Candidate>) -> Outcome<Candidate> {
    let mut outcomes = phases.into_iter().map(|r| r.outcome);
    let Some(first) = outcomes.next() else {
        return Outcome {
            best: Some(best),
            nodes: 0,
            plans_found: 0,
            seconds: 0.0,
            stop: StopReason::Exhausted,
        };
    };
    let rest: Vec<_> = outcomes.collect();
    if rest.is_empty() {
        return first;
    }
    let n = rest.len();
    rest.into_iter().enumerate().fold(first, |acc, (i, o)| {
        objective::merge(acc, o, (i + 1 == n).then(|| best.clone()))
    })
}

/// The search's view of a group: the root bag (the final goals), the generator's
/// context, the range the goals are held to and the clipping model of the error
/// objective (which also weighs the clipping a plan causes on the bundled images, see
/// `clipping`).
fn search_frame(
    setup: &Setup,
    depth: u32,
    finals: &[(Goal, Reg)],
) -> (Bag, Ctx, GoalRange, ClipModel) {
    let spec = setup.spec;
    let final_atoms: i64 = finals.iter().map(|(g, _)| g.atoms()).sum();
    let ctx = Ctx {
        init: Goal::input(0, depth),
        others: setup
            .input_goals(depth)
            .into_iter()
            .skip(1)
            .map(|(g, _)| g)
            .collect(),
        regs: setup.registers.len(),
        ops: setup.ops,
        depth,
        max_atoms: 2 * final_atoms + (2i64 << depth),
        structured: false,
    };
    let root = Bag::new(finals.iter().map(|(g, _)| g.clone()).collect());
    let range = GoalRange {
        depth,
        lo: spec.input_range.lo,
        hi: spec.input_range.hi,
        limit: setup.limit,
        exempt: finals.iter().map(|(g, _)| g.clone()).collect(),
    };
    let clip = ClipModel::new(depth, spec.input_range, setup.limit, &root.0);
    (root, ctx, range, clip)
}

impl Judge<'_> {
    /// The group's result: the chosen program proven again where the search made it
    /// (both candidates were proven when made; this keeps the guarantee local, the
    /// constructive program's proof is in [`prepare`]) and its outputs predicted.
    fn conclude(
        &self,
        best: Found<Candidate>,
        source: Source,
        outcome: Outcome<Candidate>,
    ) -> Result<GroupResult, CompileError> {
        if source == Source::Search {
            self.prove(&best.value.program)
                .map_err(CompileError::Proof)?;
        }
        let predicted = match &best.value.predicted {
            Some(p) => p.clone(),
            None => self
                .predict(&best.value.program)
                .map_err(|e| CompileError::Proof(e.into()))?,
        };
        Ok(GroupResult {
            best,
            source,
            outcome,
            predicted,
            phases: Vec::new(),
        })
    }
}

/// The error when neither generator produced a program.
pub(crate) fn not_found(
    outcome: &Outcome<Candidate>,
    judge: &Judge,
    setup: &Setup,
) -> CompileError {
    if let (0, Some(why)) = (
        outcome.plans_found,
        crate::cain::drive::feasible::exhausted(outcome, &setup.registers),
    ) {
        return CompileError::NoProgram(why);
    }
    if outcome.plans_found > 0 {
        // Plans reached the input, but none finished in range.
        return CompileError::NoRangeSafe {
            outs: judge.outs.clone(),
            held_to: judge.held_to,
            profile: setup.profile.name.clone(),
            input: setup.spec.input_range,
            stop: outcome.stop,
            nodes: outcome.nodes,
        };
    }
    if !setup.spec.other_inputs.is_empty() {
        let needed = constructive_needs(setup, &judge.members);
        // Only where the inputs crowd the constructive program out of the registers.
        if needed.is_none_or(|n| n > setup.registers.len()) {
            return CompileError::Crowded {
                inputs: setup.spec.inputs().len(),
                registers: setup.registers.len(),
                needed,
                stop: outcome.stop,
                nodes: outcome.nodes,
            };
        }
    }
    CompileError::NotFound {
        stop: outcome.stop,
        nodes: outcome.nodes,
    }
}

/// The fewest registers (the given ones, then further general registers up to the
/// largest device's) in which the constructive program of `members` fits.
fn constructive_needs(setup: &Setup, members: &[usize]) -> Option<usize> {
    let (depth, finals) = finals(setup, members).ok()?;
    let inputs = setup.spec.inputs();
    let mut registers = setup.registers.clone();
    let mut more = (0..crate::cain::spec::MAX_GENERAL as u8)
        .map(Reg::Gen)
        .filter(|r| !setup.registers.contains(r));
    loop {
        if fallback::program(&finals, &inputs, &registers, depth, setup.ops).is_some() {
            return Some(registers.len());
        }
        registers.push(more.next()?);
    }
}
