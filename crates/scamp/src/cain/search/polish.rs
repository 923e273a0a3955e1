//! Polishing finished plans: window re-search for shorter plans and, under the error
//! objective, re-routing within the slack for lower scored ones.

use super::window::{self, WindowOptions};
use super::*;
use crate::cain::moves::goal::{fingerprint_of, Bag};
use crate::cain::moves::reverse::{Cand, Ctx};
use crate::cain::moves::step::Step;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Polishes a plan found by another search (under the error objective, the length
/// search's shortest) as [`search`] polishes its finalists, within `opts`' budget.
/// The outcome's best is the polished result where polishing improved the plan (never
/// the plan itself), and its stop is `time` where the clock cut a work budget short.
pub(crate) fn polish<T: Send>(
    root: &Bag,
    ctx: &Ctx,
    opts: &SearchOptions,
    stats: &Stats,
    finish: &Finisher<'_, T>,
    plan: &[Step],
) -> Outcome<T> {
    let start = Instant::now();
    let finalist = finish(plan).map(|done| Finalist::of(plan, &done, opts, &root.0));
    let polish = Polish::new(root, ctx, opts, stats, finish, start);
    Outcome {
        best: finalist.and_then(|f| polish.all(&[f])).map(unplan),
        nodes: 0,
        plans_found: 0,
        seconds: start.elapsed().as_secs_f64(),
        stop: polish.stop(StopReason::Exhausted),
    }
}

/// A result with the plan it was finished from.
pub(super) type Polished<T> = Found<(T, Vec<Step>)>;

/// The result without its plan.
pub(super) fn unplan<T>(f: Polished<T>) -> Found<T> {
    Found {
        value: f.value.0,
        instructions: f.instructions,
        cycles: f.cycles,
        score: f.score,
        at: f.at,
    }
}

/// What polishing compares results by: instructions, cycles and score.
pub(super) type Rank = (usize, u64, f64);

/// A finished plan waiting to be polished.
#[derive(Clone)]
pub(super) struct Finalist {
    pub(super) instructions: usize,
    pub(super) cycles: u64,
    /// Its score under the error objective (clipping cost included).
    pub(super) score: f64,
    pub(super) plan: Vec<Step>,
}

impl Finalist {
    /// `plan` as finished (`done`), its score with the clipping cost of the error
    /// objective added.
    pub(super) fn of<T>(
        plan: &[Step],
        done: &Finished<T>,
        opts: &SearchOptions,
        finals: &[crate::cain::moves::goal::Goal],
    ) -> Finalist {
        Finalist {
            instructions: done.1,
            cycles: done.2,
            score: done.3 + plan_clipping(opts, plan, finals),
            plan: plan.to_vec(),
        }
    }
}

/// Keeps `f` the `most` best distinct plans: the shortest (then fewest cycles), or
/// `by_score` the lowest scored; ties by content, so that the set does not depend on
/// the order plans arrive in.
pub(super) fn admit(f: &mut Vec<Finalist>, plan: Finalist, most: usize, by_score: bool) {
    if f.iter().any(|x| x.plan == plan.plan) {
        return;
    }
    f.push(plan);
    f.sort_by(|a, b| {
        let rank = |x: &Finalist| (x.instructions, x.cycles, fingerprint_of(&x.plan));
        let order = if by_score {
            a.score.total_cmp(&b.score)
        } else {
            std::cmp::Ordering::Equal
        };
        order.then(rank(a).cmp(&rank(b)))
    });
    f.truncate(most);
}

/// What polishing the finalists reads: the problem, the budget and how plans are
/// finished and scored.
pub(super) struct Polish<'a, 'f, T> {
    pub(super) root: &'a Bag,
    pub(super) ctx: &'a Ctx,
    pub(super) opts: &'a SearchOptions,
    pub(super) stats: &'a Stats,
    pub(super) finish: &'a Finisher<'f, T>,
    /// When the search started (the budget counts from it).
    pub(super) start: Instant,
    /// Whether the time limit cut a polish short (the result then depends on the
    /// machine's load, in the deterministic mode too).
    pub(super) struck: AtomicBool,
}

impl<'a, 'f, T: Send> Polish<'a, 'f, T> {
    /// A polish of plans of the problem `root`, `ctx` whose budget counts from `start`.
    pub(super) fn new(
        root: &'a Bag,
        ctx: &'a Ctx,
        opts: &'a SearchOptions,
        stats: &'a Stats,
        finish: &'a Finisher<'f, T>,
        start: Instant,
    ) -> Self {
        Polish {
            root,
            ctx,
            opts,
            stats,
            finish,
            start,
            struck: AtomicBool::new(false),
        }
    }

    /// `time` where the clock cut a polish short, else `otherwise`.
    pub(super) fn stop(&self, otherwise: StopReason) -> StopReason {
        if self.struck.load(Ordering::Relaxed) {
            StopReason::Time
        } else {
            otherwise
        }
    }

    /// The longest plan within the slack of a plan of `shortest` instructions.
    pub(super) fn slack_bound(&self, shortest: usize) -> usize {
        (shortest as f64 * (1.0 + self.opts.slack)).floor() as usize
    }

    /// Polishes every finalist (spread over the workers' threads, each with its share
    /// of the budget) and returns the best result, ties to the earlier finalist.
    pub(super) fn all(&self, finalists: &[Finalist]) -> Option<Polished<T>> {
        let (opts, start) = (self.opts, self.start);
        let threads = opts
            .workers
            .max(1)
            .min(finalists.len())
            .min(std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1);
        let from = start.elapsed();
        let span = opts.time_limit.saturating_sub(from);
        // The shortest length as the polish begins: each finalist's bound on length
        // comes from it and its own progress, never from what another thread found
        // meanwhile, so that a work budget gives the same program under any load.
        let least = self.stats.best.load(Ordering::Relaxed);
        let run = |t: usize| -> Vec<(usize, Option<Polished<T>>)> {
            let mine: Vec<usize> = (t..finalists.len()).step_by(threads).collect();
            let m = mine.len() as f64;
            mine.iter()
                .enumerate()
                .map(|(r, &k)| {
                    // Each finalist of this thread gets an equal slice of the time left.
                    let until = from + span.mul_f64((r as f64 + 1.0) / m);
                    // Kept while it shortens on its own; whether it beats the best is
                    // decided at the end.
                    let f = &finalists[k];
                    let own = (f.instructions, f.cycles, f.score);
                    (k, self.one(&f.plan, own, least, until))
                })
                .collect()
        };
        let mut results: Vec<(usize, Option<Polished<T>>)> = if threads > 1 {
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..threads).map(|t| s.spawn(move || run(t))).collect();
                handles
                    .into_iter()
                    .flat_map(|h| h.join().unwrap_or_default())
                    .collect()
            })
        } else {
            run(0)
        };
        results.sort_by_key(|r| r.0);
        let results = results.into_iter().filter_map(|r| r.1);
        if opts.slack > 0.0 {
            let most = self.slack_bound(self.stats.best.load(Ordering::Relaxed));
            results
                .filter(|r| r.instructions <= most)
                .min_by(|a, b| a.score.total_cmp(&b.score))
        } else {
            results.min_by_key(|f| (f.instructions, f.cycles))
        }
    }

    /// Improves `plan` by window re-search until `until` (from the start) or its share
    /// of the work; returns its best result better than `own` (its instructions and
    /// cycles, the score not to exceed): shorter (then fewer cycles) without a higher
    /// score. Under the error objective the rest of the budget re-routes the result
    /// (see [`window::reroute`]): no longer than the slack allows of the shortest of
    /// `least` (the shortest length as the polish began) and this plan's own results,
    /// with a lower score.
    pub(super) fn one(
        &self,
        plan: &[Step],
        own: Rank,
        least: usize,
        until: Duration,
    ) -> Option<Polished<T>> {
        let Polish {
            root,
            ctx,
            opts,
            stats,
            finish,
            start,
            ..
        } = *self;
        let finals = &root.0;
        let fits = |c: &Cand| {
            opts.range.as_ref().is_none_or(|r| r.fits_bag(&c.child))
                && flat_fits(opts, finals, false, c)
        };
        let node_limit = opts
            .work
            .or(opts.node_limit)
            .map_or(u64::MAX, |w| w.saturating_mul(opts.tuning.polish_per_work));
        let reroute = opts.slack > 0.0;
        // Under the error objective a clock budget is shared by the two polishes (a
        // work budget gives each its own work).
        let from = start.elapsed();
        let shorten_until = if reroute && node_limit == u64::MAX {
            from + until.saturating_sub(from) / 2
        } else {
            until
        };
        // A work budget whose polish the clock cuts short no longer gives the same
        // program on every machine: the outcome says so.
        let in_time = |end: Duration| {
            let left = start.elapsed() < end && !crate::cancel::requested();
            if !left && end == until && node_limit != u64::MAX {
                self.struck.store(true, Ordering::Relaxed);
            }
            left
        };
        let best: std::cell::RefCell<Option<Polished<T>>> = std::cell::RefCell::new(None);
        // Finishes `steps` and keeps it if `better` says so of (instructions, cycles,
        // score) against the best so far.
        let consider = |steps: &[Step], better: &dyn Fn(Rank, Rank) -> bool| {
            let Some((value, instructions, cycles, score)) = finish(steps) else {
                return false;
            };
            let score = score + plan_clipping(opts, steps, finals);
            let mut best = best.borrow_mut();
            let now = best
                .as_ref()
                .map_or(own, |b| (b.instructions, b.cycles, b.score));
            if !better((instructions, cycles, score), now) {
                return false;
            }
            *best = Some(Found {
                value: (value, steps.to_vec()),
                instructions,
                cycles,
                score,
                at: start.elapsed(),
            });
            stats.best.fetch_min(instructions, Ordering::Relaxed);
            true
        };
        let shorten_in_time = || in_time(shorten_until);
        let mut shorter = |steps: &[Step]| {
            shorten_in_time()
                && consider(steps, &|(n, c, s), (n0, c0, s0)| {
                    (n, c) < (n0, c0) && s <= s0
                })
        };
        let window = WindowOptions {
            // Windows grow until the work runs out: the larger, the rarer and dearer.
            max_window: plan.len(),
            node_limit,
        };
        let (shortened, _) = window::improve(
            plan,
            root,
            ctx,
            window,
            &fits,
            &shorten_in_time,
            &mut shorter,
        );
        if reroute {
            let in_time = || in_time(until);
            // The clipping cost is measured on a few hundred positions: a re-routing
            // is taken for lower predicted noise, never for a clipping cost the sample
            // may under-count.
            let risk = plan_clipping(opts, &shortened, finals);
            let mut lower = |steps: &[Step]| {
                let mine = best.borrow().as_ref().map_or(own.0, |b| b.instructions);
                let most = self.slack_bound(least.min(own.0).min(mine));
                in_time()
                    && plan_clipping(opts, steps, finals) <= risk * (1.0 + 1e-9)
                    && consider(steps, &|(n, _, s), (_, _, s0)| {
                        n <= most && s < s0 * (1.0 - 1e-9)
                    })
            };
            let window = WindowOptions {
                max_window: opts.tuning.reroute_window,
                node_limit,
            };
            window::reroute(&shortened, root, ctx, window, &fits, &in_time, &mut lower);
        }
        best.into_inner()
    }
}

/// The clipping cost the error objective adds to a plan's score (0 otherwise).
pub(super) fn plan_clipping(
    opts: &SearchOptions,
    steps: &[Step],
    finals: &[crate::cain::moves::goal::Goal],
) -> f64 {
    match &opts.clip {
        Some(m) if opts.slack > 0.0 => m.plan_clipping(steps, finals),
        _ => 0.0,
    }
}

/// See [`Shared::flat_fits`].
pub(super) fn flat_fits(
    opts: &SearchOptions,
    finals: &[crate::cain::moves::goal::Goal],
    strict: bool,
    cand: &Cand,
) -> bool {
    let Some(m) = opts.clip.as_ref().filter(|_| opts.slack > 0.0) else {
        return true;
    };
    cand.step
        .ins
        .iter()
        .all(|g| !finals.contains(g) || m.flat_fits(g))
        && cand.child.0.iter().all(|g| {
            finals.contains(g)
                || (m.flat_fits(g) && (!strict || m.peak_within(g, opts.tuning.strict_range)))
        })
}
