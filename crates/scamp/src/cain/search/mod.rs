//! The backward search over goal bags.
//!
//! Child-generator deque traversal (Cain): take the node at the front, produce its next
//! child (children are ranked by the local heuristic and produced lazily, a few at a
//! time), push the child on the front and the parent on the back. The front keeps
//! diving along the best children while every earlier node waits its turn at the back
//! for its next-best child, so the search does not drown in one subtree.
//!
//! Pruning: a bag seen before at equal or lower cost (table shared by all workers);
//! cost plus the lower bound reaching the best length found (shared); bags that do not
//! fit the registers or grow too many atoms (in the generator). Workers differ by a
//! seeded perturbation of the ranking. The budget is wall-clock time, an optional node
//! count (or work, shared or per worker) and a memory cap; the best plan so far is
//! returned when it runs out.

pub(crate) mod heuristic;
mod options;
pub(crate) mod tuning;
pub(crate) mod window;
pub use options::*;
mod polish;
mod run;
mod worker;
pub(crate) use polish::polish;
use polish::*;
use run::*;
use worker::*;

use crate::cain::moves::goal::Bag;
use crate::cain::moves::reverse::Ctx;
use crate::cain::moves::step::Step;
use std::sync::Mutex;
use std::time::Instant;

/// Searches backwards from `root` (the final goals) to the input goal of `ctx`.
/// Every plan reaching the input is handed to `finish`; the best finished one is kept,
/// then improved window by window (see [`crate::cain::search::window`]) in the last part of the
/// budget. With [`SearchOptions::work`] the workers search apart and the result is
/// reproducible, unless the work is [shared](SearchOptions::shared); otherwise they
/// share what they learn and race on the clock (and on the shared work).
pub(crate) fn search<T: Send>(
    root: &Bag,
    ctx: &Ctx,
    opts: &SearchOptions,
    stats: &Stats,
    finish: &Finisher<'_, T>,
) -> Outcome<T> {
    let start = Instant::now();
    // The shortest plans finished (under the error objective the lowest scored), kept
    // to be improved by windows afterwards: a plan a little longer than the best may
    // polish into a shorter one, one scored a little worse into a better one.
    let by_score = opts.slack > 0.0;
    let finalists: Mutex<Vec<Finalist>> = Mutex::new(Vec::new());
    let keep = |steps: &[Step]| {
        let done = finish(steps)?;
        if let Ok(mut f) = finalists.lock() {
            let plan = Finalist::of(steps, &done, opts, &root.0);
            admit(&mut f, plan, opts.tuning.finalists, by_score);
        }
        Some(((done.0, steps.to_vec()), done.1, done.2, done.3))
    };
    let first = SearchOptions {
        time_limit: opts.time_limit.mul_f64(1.0 - opts.tuning.polish_share),
        ..opts.clone()
    };
    let out = search_phases(root, ctx, &first, stats, &keep);
    let mut finalists = finalists.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some(b) = &out.best {
        // The chosen plan is always polished (under the error objective it need not
        // be among the lowest scored: those may lie beyond the slack).
        let chosen = Finalist {
            instructions: b.instructions,
            cycles: b.cycles,
            score: b.score,
            plan: b.value.1.clone(),
        };
        admit(
            &mut finalists,
            chosen.clone(),
            opts.tuning.finalists,
            by_score,
        );
        if !finalists.iter().any(|f| f.plan == chosen.plan) {
            finalists.insert(0, chosen);
            finalists.truncate(opts.tuning.finalists.max(1));
        }
    }
    let polish = Polish::new(root, ctx, opts, stats, finish, start);
    let polished = polish.all(&finalists);
    // Polishing keeps a result only where it beats the search's: shorter, or under the
    // error objective lower scored (within the slack: see `all`).
    let best = match (out.best, polished) {
        (Some(b), Some(p)) => {
            let better = if by_score {
                p.score < b.score
            } else {
                (p.instructions, p.cycles) < (b.instructions, b.cycles)
            };
            Some(unplan(if better { p } else { b }))
        }
        (b, p) => b.or(p).map(unplan),
    };
    Outcome {
        best,
        nodes: out.nodes,
        plans_found: out.plans_found,
        seconds: start.elapsed().as_secs_f64(),
        stop: polish.stop(out.stop),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cain::moves::goal::fixtures::grid;
    use crate::cain::moves::goal::Goal;
    use crate::cain::moves::step::Kind;
    use crate::cain::search::tuning::Tuning;
    use crate::cain::spec::Ops;
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    #[test]
    fn structured_search_shares_work_between_the_sobel_pair() {
        let ctx = Ctx::for_tests(true);
        let root = Bag::new(vec![
            grid(&[&[-1, 0, 1], &[-2, 0, 2], &[-1, 0, 1]]),
            grid(&[&[-1, -2, -1], &[0, 0, 0], &[1, 2, 1]]),
        ]);
        let opts = SearchOptions {
            time_limit: Duration::from_secs(60),
            node_limit: Some(20_000),
            ..SearchOptions::default()
        };
        let finish = |steps: &[Step]| {
            assert!(steps.iter().all(Step::is_consistent));
            Some((steps.len(), steps.len(), 0, 0.0))
        };
        let out = search(&root, &ctx, &opts, &Stats::default(), &finish);
        let best = out.best.expect("a plan");
        // Separately the pair takes 10 (5 each); sharing brings it to 9 here (8 with
        // two workers, see programs/sobel_xy.scamp).
        assert!(best.instructions <= 9, "{}", best.instructions);
    }

    #[test]
    fn a_shared_work_stops_at_the_workers_combined_nodes() {
        let ctx = Ctx::for_tests(false);
        let root = Bag::new(vec![grid(&[&[3, -5, 2], &[7, 1, -6], &[-2, 9, 4]])]);
        let finish = |steps: &[Step]| Some((steps.len(), steps.len(), 0, 0.0));
        let every = Tuning::default().check_every;
        // The live counter holds earlier searches' nodes: they do not count.
        let earlier = 1_000_000;
        for workers in [1, 2, 3] {
            let stats = Stats::default();
            stats.nodes.store(earlier, Ordering::Relaxed);
            let opts = SearchOptions {
                time_limit: Duration::from_secs(600),
                work: Some(2_000),
                shared: true,
                workers,
                ..SearchOptions::default()
            };
            let out = search_once(&root, &ctx, &opts, &stats, &finish, false);
            assert_eq!(out.stop, StopReason::Nodes, "{workers} workers");
            assert!(out.best.is_some(), "{workers} workers");
            // Stopped at the combined work, each worker within one check of it.
            let own = stats.nodes.load(Ordering::Relaxed) - earlier;
            let combined = 2_000 * workers as u64;
            assert!(
                own >= combined && own < combined + workers as u64 * every,
                "{workers} workers: {own} nodes"
            );
        }
    }

    #[test]
    fn reachable_asks_for_at_most_the_sources_times_the_limit() {
        // Quarters of inputs -128..127 against a limit of 128: a goal of 12 atoms
        // reaches 3 x 128, made by adding three values of 4 atoms each.
        let range = GoalRange {
            depth: 2,
            lo: -128.0,
            hi: 127.0,
            limit: 128.0,
            exempt: Vec::new(),
        };
        let three = grid(&[&[4, -4, 4]]);
        assert!(!range.fits(&three));
        assert!(range.reachable(&three, 3) && !range.reachable(&three, 2));
        assert!(!range.reachable(&grid(&[&[4, -4, 5]]), 3));
        assert!(range.reachable(&grid(&[&[4]]), 1) && range.fits(&grid(&[&[4]])));
        assert_eq!(Kind::most_sources(Ops::All), 3);
        assert_eq!(Kind::most_sources(Ops::Basic), 2);
    }

    #[test]
    fn polishing_a_plan_returns_only_improvements() {
        let ctx = Ctx {
            max_atoms: 100,
            ..Ctx::for_tests(false)
        };
        let x = ctx.init.clone();
        let east = |g: &Goal, s: usize| Step {
            kind: Kind::Shift(crate::cain::moves::goal::SHIFTS[s]),
            outs: vec![g
                .shifted(crate::cain::moves::goal::SHIFTS[s])
                .expect("in reach")],
            ins: vec![g.clone()],
        };
        // x moved two east by two one-step moves; `mov2x` does it in one.
        let first = east(&x, 1);
        let second = east(&first.outs[0], 1);
        let root = Bag::new(second.outs.clone());
        let plan = vec![first, second];
        let opts = SearchOptions {
            node_limit: Some(10_000),
            slack: 0.25,
            ..SearchOptions::default()
        };
        // Scored by the one-step moves it makes (the error objective's role).
        let finish = |steps: &[Step]| {
            assert!(steps.iter().all(Step::is_consistent));
            let singles = steps
                .iter()
                .filter(|s| s.kind.shift().is_some_and(|d| d.is_single()))
                .count();
            Some((
                steps.to_vec(),
                steps.len(),
                steps.len() as u64,
                singles as f64,
            ))
        };
        let out = polish(&root, &ctx, &opts, &Stats::default(), &finish, &plan);
        let best = out.best.expect("an improvement");
        assert_eq!((best.instructions, best.score), (1, 0.0));
        assert_eq!(best.value[0].outs, root.0);
        assert_eq!(out.stop, StopReason::Exhausted);
        // The improved plan cannot be improved again: nothing is returned, never the
        // plan itself.
        let again = polish(&root, &ctx, &opts, &Stats::default(), &finish, &best.value);
        assert!(again.best.is_none());
    }
}
