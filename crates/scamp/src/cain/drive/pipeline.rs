//! Runs a group's phases ([`crate::cain::drive::phase`]) in order, each on its share of
//! the clock the group has left, and reports what each found.
//!
//! Between phases the pipeline keeps the shortest program so far (the length phase's,
//! or the constructive one where that is no longer): under the error objective the
//! later phases search within the slack of it, and the final polish starts from it
//! (under the length objective a shorter program it makes takes its place).

use crate::cain::assemble::{alloc, emit};
use crate::cain::drive::choice;
use crate::cain::drive::phase::{self, Phase, RangeRule, Searches};
use crate::cain::drive::race::{run_search, Candidate, Judge};
use crate::cain::drive::setup::Setup;
use crate::cain::moves::goal::Bag;
use crate::cain::moves::reverse::Ctx;
use crate::cain::moves::step;
use crate::cain::score::{clipping::ClipModel, objective};
use crate::cain::search::{self, Found, GoalRange, Outcome, SearchOptions, StopReason};
use crate::cain::{CompileError, Objective, Source, Stats};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Turns a plan into a candidate under an objective (see [`finisher`]).
pub(crate) type GroupFinisher<'a> =
    dyn Fn(&[step::Step], Objective) -> Option<search::Finished<Candidate>> + Sync + 'a;

/// What one phase found.
pub(crate) struct PhaseResult {
    /// The phase.
    pub(crate) phase: Phase,
    /// Its search's figures; `best` is its result (`at`: from the start of the compile).
    pub(crate) outcome: Outcome<Candidate>,
    /// The shortest program it finished under the error objective (then fewest cycles,
    /// lowest score), whatever the slack kept.
    pub(crate) shortest: Option<Found<Candidate>>,
    /// Its program as the final choice sees it: the length phase's scored under the
    /// error objective (`None` where the constructive one was shorter), otherwise its
    /// search's best.
    pub(crate) program: Option<Found<Candidate>>,
}

/// A group's search, ready to run its phases.
pub(crate) struct Pipeline<'a> {
    /// The compile's settings.
    pub(crate) setup: &'a Setup<'a>,
    /// Proves, holds to the range and scores candidates.
    pub(crate) judge: &'a Judge<'a>,
    /// Turns a plan into a candidate (register allocation, emission, judgement).
    pub(crate) finish: &'a GroupFinisher<'a>,
    /// The final goals.
    pub(crate) root: Bag,
    /// The generator's context.
    pub(crate) ctx: Ctx,
    /// The range goals are held to.
    pub(crate) range: GoalRange,
    /// The clipping model of the error objective.
    pub(crate) clip: ClipModel,
    /// When the compile started.
    pub(crate) start: Instant,
    /// When the group's search began (from `start`).
    pub(crate) began: Duration,
    /// The group's clock budget.
    pub(crate) time: Duration,
    /// The group's nominal clock: its share of the time limit, the same on every run
    /// (what a calibrated phase's work is made from, see [`phase::calibrated_work`]).
    pub(crate) nominal: Duration,
    /// The live counters.
    pub(crate) stats: &'a Stats,
}

/// What the pipeline leaves: every phase's result and the shortest program (with its
/// source) the later phases were held to.
pub(crate) struct Ran {
    /// Per phase, in order.
    pub(crate) phases: Vec<PhaseResult>,
    /// The shortest program after the length phases (the length phase's, or the
    /// constructive one, or the length objective's polish of them).
    pub(crate) shortest: (Found<Candidate>, Source),
}

impl Pipeline<'_> {
    /// What the group's clock leaves now.
    fn left(&self) -> Duration {
        let spent = self.start.elapsed().saturating_sub(self.began);
        self.time.saturating_sub(spent)
    }

    /// Runs `phases` in order; `constructive` is the group's constructive program, a
    /// candidate of the shortest. Errors where no program was found at all.
    pub(crate) fn run(
        &self,
        phases: &[Phase],
        constructive: Option<Found<Candidate>>,
    ) -> Result<Ran, CompileError> {
        let mut constructive = constructive;
        let mut shortest: Option<(Found<Candidate>, Source)> = None;
        let mut results = Vec::with_capacity(phases.len());
        for &phase in phases {
            let budget = phase::clock_budget(&phase, self.left(), self.time);
            let seen = objective::Shortest::default();
            let before = self.stats.nodes.load(Ordering::Relaxed);
            let mut outcome = match (phase.searches, &shortest) {
                (Searches::Plans, _) => self.plans(phase, budget, &seen),
                (Searches::Polish, Some(s)) => self.polish(phase, budget, &seen, s),
                (Searches::Polish, None) => continue,
            };
            // A search racing the clock reports the compile's live counter, which also
            // holds the earlier phases' (and groups') nodes: the phase's own are what
            // the counter gained while it ran.
            let gained = self
                .stats
                .nodes
                .load(Ordering::Relaxed)
                .saturating_sub(before);
            outcome.nodes = outcome.nodes.min(gained);
            let program = match (phase.objective, phase.searches) {
                (Objective::Length, Searches::Plans) => {
                    let s = self.shortest(&outcome, constructive.take())?;
                    let own = (s.1 == Source::Search).then(|| s.0.clone());
                    shortest = Some(s);
                    own
                }
                (Objective::Length, Searches::Polish) => {
                    // The polish returns only a shorter program (then fewer cycles).
                    if let Some(b) = &outcome.best {
                        shortest = Some((b.clone(), Source::Search));
                    }
                    outcome.best.clone()
                }
                (Objective::Error, _) => outcome.best.clone(),
            };
            results.push(PhaseResult {
                phase,
                outcome,
                shortest: seen.take(),
                program,
            });
        }
        let shortest = match (shortest, constructive) {
            (Some(s), _) => s,
            (None, c) => choice::shortest(None, c).ok_or(CompileError::NotFound {
                stop: StopReason::Exhausted,
                nodes: 0,
            })?,
        };
        Ok(Ran {
            phases: results,
            shortest,
        })
    }

    /// The shortest of the length phase's (`outcome`) and the constructive program;
    /// under the error objective scored as the error phases score theirs, and the
    /// length they search within the slack of.
    fn shortest(
        &self,
        outcome: &Outcome<Candidate>,
        constructive: Option<Found<Candidate>>,
    ) -> Result<(Found<Candidate>, Source), CompileError> {
        let s = choice::shortest(outcome.best.clone(), constructive)
            .ok_or_else(|| crate::cain::drive::race::not_found(outcome, self.judge, self.setup))?;
        if self.setup.objective == Objective::Length {
            return Ok(s);
        }
        let s = objective::rescore(s, self.judge, &self.clip, &self.root.0)?;
        self.stats.best.store(s.0.instructions, Ordering::Relaxed);
        Ok(s)
    }

    /// A backward search under `phase`'s objective within `budget`; programs it
    /// finishes under the error objective are offered to `seen`.
    fn plans(
        &self,
        phase: Phase,
        budget: Duration,
        seen: &objective::Shortest,
    ) -> Outcome<Candidate> {
        let given = &self.setup.search;
        let (work, shared) = phase::work_budget(&phase, given.work, || self.calibrated_work());
        let opts = match phase.objective {
            Objective::Length => SearchOptions {
                time_limit: budget,
                work,
                shared,
                slack: 0.0,
                clip: None,
                ..given.clone()
            },
            Objective::Error => SearchOptions {
                time_limit: budget,
                work,
                shared,
                clip: Some(self.clip.clone()),
                ..given.clone()
            },
        };
        let finish = |steps: &[step::Step]| self.offered(steps, phase.objective, seen);
        let held_to = self.judge.held_to;
        let mut o = run_search(
            &self.root,
            &self.ctx,
            &opts,
            &self.range,
            held_to,
            self.stats,
            &finish,
        );
        o.best = o.best.map(|b| Found {
            at: b.at + self.began,
            ..b
        });
        o
    }

    /// The work (nodes per worker) of a calibrated phase (see
    /// [`phase::calibrated_work`]).
    fn calibrated_work(&self) -> u64 {
        let s = &self.setup.search;
        phase::calibrated_work(self.nominal, self.root.atoms(), s.node_limit, s.workers)
    }

    /// Polishes the shortest plan `s` within `budget` under `phase`'s objective and
    /// range rule: shorter under the length objective; under the error objective
    /// shorter, then re-routed for a lower score within the slack.
    fn polish(
        &self,
        phase: Phase,
        budget: Duration,
        seen: &objective::Shortest,
        s: &(Found<Candidate>, Source),
    ) -> Outcome<Candidate> {
        let seed = &s.0.value.steps;
        let range = &self.range;
        let fits = |r: &GoalRange| seed.iter().all(|t| t.outs.iter().all(|g| r.fits(g)));
        let range = match phase.range {
            RangeRule::KeptBySeed if !fits(range) => {
                range.held_to(self.judge.held_to.max(range.limit))
            }
            _ => range.clone(),
        };
        // The length objective's slack is 0: its polish only shortens.
        let opts = SearchOptions {
            time_limit: budget.max(Duration::from_millis(1)),
            clip: (phase.objective == Objective::Error).then(|| self.clip.clone()),
            range: Some(range),
            ..self.setup.search.clone()
        };
        let finish = |steps: &[step::Step]| self.offered(steps, phase.objective, seen);
        let mut p = search::polish(&self.root, &self.ctx, &opts, self.stats, &finish, seed);
        p.best = p.best.map(|b| Found {
            at: self.start.elapsed(),
            ..b
        });
        p
    }

    /// Finishes `steps` under `objective`, offering the result to `seen` under the
    /// error objective.
    fn offered(
        &self,
        steps: &[step::Step],
        objective: Objective,
        seen: &objective::Shortest,
    ) -> Option<search::Finished<Candidate>> {
        let done = (self.finish)(steps, objective)?;
        if objective == Objective::Error {
            seen.offer(&done, self.start.elapsed());
        }
        Some(done)
    }
}

/// The finisher of a group: allocates registers for a plan, emits it and judges it.
pub(crate) fn finisher<'a>(
    setup: &'a Setup<'a>,
    judge: &'a Judge<'a>,
    problem: &'a alloc::AllocProblem<'a>,
) -> impl Fn(&[step::Step], Objective) -> Option<search::Finished<Candidate>> + Sync + 'a {
    move |steps: &[step::Step], objective: Objective| {
        let instrs = alloc::allocate(steps, problem)?;
        judge.judge(emit::program(&instrs, setup.device).ok()?, steps, objective)
    }
}
