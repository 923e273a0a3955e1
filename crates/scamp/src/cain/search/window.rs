//! Plan improvement by window re-search: a peephole superoptimiser over found plans.
//!
//! A plan is a chain of goal bags, `B0` (the input) to `Bn` (the final goals), one
//! instruction between neighbours. The global search finds good chains but rarely
//! optimal ones on multi-kernel sets: a stretch of `w` instructions between `Bi` and
//! `Bj` may often be done in fewer. For each window, an exhaustive search of small
//! depth runs backwards from `Bj` looking for any bag that `Bi` (plus the input)
//! already covers, with `Bi`'s goals readable as operands; a shorter path is spliced
//! in, instructions whose results nobody reads any more are dropped, and the caller
//! decides (registers, range, objective) whether the new plan is better. Windows are
//! tried until none of size up to the limit improves, or the work runs out.

use crate::cain::moves::goal::{Bag, Goal};
use crate::cain::moves::reverse::{expand_toward, Cand, Ctx, PassThrough};
use crate::cain::moves::step::Step;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

/// How hard [`improve`] tries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WindowOptions {
    /// Largest window (instructions replaced at once).
    pub(crate) max_window: usize,
    /// Bags expanded over the whole improvement.
    pub(crate) node_limit: u64,
}

/// The bags live before each step of `steps` (program order): `bags[i]` before step `i`,
/// the last one `root`.
pub(crate) fn bags(steps: &[Step], root: &Bag) -> Vec<Bag> {
    let mut v = vec![root.clone()];
    for s in steps.iter().rev() {
        let before = v
            .last()
            .map_or_else(Bag::default, |b| b.replace(&s.outs, &s.ins));
        v.push(before);
    }
    v.reverse();
    v
}

/// `steps` without the instructions none of whose results is read later or final.
pub(crate) fn without_dead(steps: &[Step], root: &Bag) -> Vec<Step> {
    let mut live = root.clone();
    let mut kept: Vec<Step> = Vec::with_capacity(steps.len());
    for s in steps.iter().rev() {
        if s.outs.iter().any(|g| live.contains(g)) {
            live = live.replace(&s.outs, &s.ins);
            kept.push(s.clone());
        }
    }
    kept.reverse();
    kept
}

/// Instructions at least still needed from `bag` back to a bag within `target`: every
/// goal outside it needs one, a `div` making a goal and its negation together.
fn need(bag: &Bag, target: &Bag) -> usize {
    let missing: Vec<&Goal> = bag.0.iter().filter(|g| !target.contains(g)).collect();
    let pairs = missing
        .iter()
        .filter(|g| g.0.first().is_some_and(|t| t.n < 0) && missing.contains(&&g.neg()))
        .count();
    missing.len() - pairs
}

/// One window's search: a path of at most `depth` instructions from `to` back to a
/// bag within `target`.
struct Probe<'a> {
    ctx: &'a Ctx,
    target: &'a Bag,
    fits: &'a dyn Fn(&Cand) -> bool,
    go_on: &'a dyn Fn() -> bool,
    /// Bags from which no path within the recorded depth exists.
    failed: HashMap<u64, usize, BuildHasherDefault<PassThrough>>,
    nodes: u64,
    node_limit: u64,
}

impl<'a> Probe<'a> {
    /// A search toward `target` with `nodes` of the work already spent.
    fn new(env: &'a Env, target: &'a Bag, nodes: u64) -> Probe<'a> {
        Probe {
            ctx: env.ctx,
            target,
            fits: env.fits,
            go_on: env.go_on,
            failed: HashMap::default(),
            nodes,
            node_limit: env.node_limit,
        }
    }

    /// Expands `bag` (one node of the work) and returns its fingerprint and the
    /// children that fit and may still lead within the target in `depth - 1` more
    /// instructions, in the generator's order, each with the instructions it still
    /// needs; `None` where `bag` is not worth expanding (no depth or work left, or a
    /// failure at this depth already recorded).
    fn open(&mut self, bag: &Bag, depth: usize) -> Option<(u64, Vec<Open>)> {
        if depth == 0 || self.nodes >= self.node_limit || !(self.go_on)() {
            return None;
        }
        let fp = bag.fingerprint();
        if self.failed.get(&fp).is_some_and(|&d| d >= depth) {
            return None;
        }
        self.nodes += 1;
        let mut cands = Vec::new();
        expand_toward(bag, self.ctx, self.target, depth == 1, &mut cands);
        let open = cands
            .into_iter()
            .filter(|c| (self.fits)(c))
            .map(|c| (need(&c.child, self.target), c.child.fingerprint(), c))
            .filter(|&(n, _, _)| n < depth)
            .collect();
        Some((fp, open))
    }

    /// Records that no path of `depth` leads from the bag `fp` into the target, unless
    /// the work ran out on the way (then it is unknown).
    fn fail(&mut self, fp: u64, depth: usize) {
        if self.nodes < self.node_limit && (self.go_on)() {
            self.failed.insert(fp, depth);
        }
    }

    /// Steps in program order reaching `bag` from within the target in at most `depth`.
    fn path(&mut self, bag: &Bag, depth: usize) -> Option<Vec<Step>> {
        let (fp, mut open) = self.open(bag, depth)?;
        if let Some(k) = open.iter().position(|&(n, _, _)| n == 0) {
            return Some(vec![open.swap_remove(k).2.step]);
        }
        open.sort_by_key(|&(n, fp, _)| (n, fp));
        for (_, _, c) in open {
            if let Some(mut p) = self.path(&c.child, depth - 1) {
                p.push(c.step);
                return Some(p);
            }
        }
        self.fail(fp, depth);
        None
    }

    /// Adds to `found` (at most `most` in all) the paths of at most `depth`
    /// instructions reaching `bag` from within the target, in program order; false if
    /// there is none.
    fn paths(&mut self, bag: &Bag, depth: usize, found: &mut Vec<Vec<Step>>, most: usize) -> bool {
        if found.len() >= most {
            return false;
        }
        let Some((fp, mut open)) = self.open(bag, depth) else {
            return false;
        };
        open.sort_by_key(|&(n, fp, _)| (n, fp));
        let mut any = false;
        for (n, _, c) in open {
            if found.len() >= most {
                break;
            }
            if n == 0 {
                found.push(vec![c.step]);
                any = true;
                continue;
            }
            let from = found.len();
            if self.paths(&c.child, depth - 1, found, most) {
                any = true;
                for p in &mut found[from..] {
                    p.push(c.step.clone());
                }
            }
        }
        if !any {
            self.fail(fp, depth);
        }
        any
    }
}

/// A child worth following: the instructions it still needs, its fingerprint, itself.
type Open = (usize, u64, Cand);

/// What every window's search shares: the problem, the filter on children, when to
/// stop.
struct Env<'a> {
    ctx: &'a Ctx,
    fits: &'a dyn Fn(&Cand) -> bool,
    go_on: &'a dyn Fn() -> bool,
    node_limit: u64,
}

/// A path shorter than `len` instructions from `to` back to a bag within `from` (and
/// the input), in program order; the shortest one the work allows. `nodes` counts the
/// bags expanded.
fn shorter(from: &Bag, to: &Bag, len: usize, env: &Env, nodes: &mut u64) -> Option<Vec<Step>> {
    let target = held(from, env.ctx);
    if need(to, &target) >= len {
        return None;
    }
    let mut probe = Probe::new(env, &target, *nodes);
    let found = (1..len).find_map(|d| probe.path(to, d));
    *nodes = probe.nodes;
    found
}

/// What a window starting at `from` may read: its goals and the inputs.
fn held(from: &Bag, ctx: &Ctx) -> Bag {
    let mut goals = from.0.clone();
    goals.extend(ctx.inputs().cloned());
    Bag::new(goals)
}

/// `plan` with its steps `i..j` replaced by `mid`, without the steps that no longer
/// feed the result.
fn splice(plan: &[Step], (i, j): (usize, usize), mid: &[Step], root: &Bag) -> Vec<Step> {
    let spliced: Vec<Step> = plan[..i]
        .iter()
        .chain(mid)
        .chain(&plan[j..])
        .cloned()
        .collect();
    without_dead(&spliced, root)
}

/// Up to `most` paths of at most `len` instructions from `to` back to a bag within
/// `from` (and the input), in program order. `nodes` counts the bags expanded.
fn alternatives(
    from: &Bag,
    to: &Bag,
    len: usize,
    env: &Env,
    nodes: &mut u64,
    most: usize,
) -> Vec<Vec<Step>> {
    let target = held(from, env.ctx);
    let mut probe = Probe::new(env, &target, *nodes);
    let mut found = Vec::new();
    probe.paths(to, len, &mut found, most);
    *nodes = probe.nodes;
    found
}

/// Paths tried per window by [`reroute`]: the first ones in the generator's order
/// (fewest instructions still needed first), enough for every route of most windows.
const ROUTES_PER_WINDOW: usize = 96;

/// Re-routes `steps` window by window without making it longer than the windows it
/// replaces: every other way of computing a window's live values (at most as many
/// instructions) is offered to `accept`, which says whether it is better (under the
/// error objective: a lower predicted error within the length slack) and remembers
/// it; the plan goes on from every accepted one. The same values made another way
/// pick up different transfer errors (where a division happens, which copy is
/// summed), which the length polish of [`improve`] never looks at. Returns the last
/// accepted plan and the bags expanded (each offer counts as one).
pub(crate) fn reroute(
    steps: &[Step],
    root: &Bag,
    ctx: &Ctx,
    opts: WindowOptions,
    fits: &dyn Fn(&Cand) -> bool,
    go_on: &dyn Fn() -> bool,
    accept: &mut dyn FnMut(&[Step]) -> bool,
) -> (Vec<Step>, u64) {
    let mut plan = steps.to_vec();
    let mut nodes = 0u64;
    let env = Env {
        ctx,
        fits,
        go_on,
        node_limit: opts.node_limit,
    };
    // Windows (by their end bags and size) whose every route was offered in vain.
    let mut tried: HashSet<(u64, u64, usize), BuildHasherDefault<PassThrough>> = HashSet::default();
    'again: loop {
        let chain = bags(&plan, root);
        let fps: Vec<u64> = chain.iter().map(Bag::fingerprint).collect();
        for w in 1..=opts.max_window.min(plan.len()) {
            for i in 0..=plan.len() - w {
                let j = i + w;
                let key = (fps[i], fps[j], w);
                if tried.contains(&key) {
                    continue;
                }
                let routes =
                    alternatives(&chain[i], &chain[j], w, &env, &mut nodes, ROUTES_PER_WINDOW);
                for mid in routes {
                    if nodes >= opts.node_limit || !go_on() {
                        break 'again;
                    }
                    if mid.as_slice() == &plan[i..j] {
                        continue;
                    }
                    nodes += 1;
                    let next = splice(&plan, (i, j), &mid, root);
                    if accept(&next) {
                        plan = next;
                        continue 'again;
                    }
                }
                if nodes >= opts.node_limit || !go_on() {
                    break 'again;
                }
                tried.insert(key);
            }
        }
        break;
    }
    (plan, nodes)
}

/// Improves `steps` (a plan from the input to `root`, program order) window by window:
/// each shorter splice is offered to `accept`, which says whether it is better (and
/// remembers it); the plan goes on from every accepted one. Returns the last accepted
/// plan (or `steps` as given) and the bags expanded. `fits` filters the generator's
/// children (e.g. the register range); the work stops when `go_on` says so.
pub(crate) fn improve(
    steps: &[Step],
    root: &Bag,
    ctx: &Ctx,
    opts: WindowOptions,
    fits: &dyn Fn(&Cand) -> bool,
    go_on: &dyn Fn() -> bool,
    accept: &mut dyn FnMut(&[Step]) -> bool,
) -> (Vec<Step>, u64) {
    let mut plan = steps.to_vec();
    let mut nodes = 0u64;
    let env = Env {
        ctx,
        fits,
        go_on,
        node_limit: opts.node_limit,
    };
    // Windows (by their end bags and size) searched in full without a shorter path:
    // after a splice most windows are the same as before and need no second look.
    let mut failed: HashSet<(u64, u64, usize), BuildHasherDefault<PassThrough>> =
        HashSet::default();
    'again: loop {
        let chain = bags(&plan, root);
        let fps: Vec<u64> = chain.iter().map(Bag::fingerprint).collect();
        for w in 2..=opts.max_window.min(plan.len()) {
            for i in 0..=plan.len() - w {
                if nodes >= opts.node_limit || !go_on() {
                    break 'again;
                }
                let j = i + w;
                let key = (fps[i], fps[j], w);
                if failed.contains(&key) {
                    continue;
                }
                let found = shorter(&chain[i], &chain[j], w, &env, &mut nodes);
                let Some(mid) = found else {
                    if nodes < opts.node_limit && go_on() {
                        failed.insert(key);
                    }
                    continue;
                };
                let next = splice(&plan, (i, j), &mid, root);
                if next.len() < plan.len() && accept(&next) {
                    plan = next;
                    continue 'again;
                }
                // The same window would find the same path again.
                failed.insert(key);
            }
        }
        break;
    }
    (plan, nodes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cain::moves::goal::fixtures::grid;
    use crate::cain::moves::goal::SHIFTS;
    use crate::cain::moves::reverse::is_initial;
    use crate::cain::moves::step::Kind;

    /// Runs `plan` forwards from the input: every step reads only live goals, and the
    /// finals are all live at the end.
    fn valid(plan: &[Step], root: &Bag, ctx: &Ctx) -> bool {
        let mut live = vec![ctx.init.clone()];
        for s in plan {
            if !s.is_consistent() || !s.ins.iter().all(|g| live.contains(g)) {
                return false;
            }
            live.extend(s.outs.iter().cloned());
        }
        root.0.iter().all(|g| live.contains(g))
    }

    fn step(kind: Kind, ins: Vec<Goal>) -> Step {
        let outs = Step::eval(kind, &ins).expect("operands fit");
        Step { kind, outs, ins }
    }

    #[test]
    fn bags_run_back_to_the_input_and_dead_steps_go() {
        let c = Ctx::for_tests(false);
        let x = c.init.clone();
        let east = step(Kind::Shift(SHIFTS[1]), vec![x.clone()]);
        let e = east.outs[0].clone();
        let wasted = step(Kind::Neg, vec![x.clone()]);
        let sum = step(Kind::Add2, vec![x.clone(), e.clone()]);
        let root = Bag::new(sum.outs.clone());
        let plan = vec![east.clone(), wasted, sum.clone()];
        let clean = without_dead(&plan, &root);
        assert_eq!(clean, vec![east, sum]);
        let chain = bags(&clean, &root);
        assert_eq!(chain.len(), 3);
        assert!(is_initial(&chain[0], &c));
        assert_eq!(chain[1], Bag::new(vec![x, e]));
        assert_eq!(chain[2], root);
    }

    #[test]
    fn a_roundabout_plan_is_shortened_and_stays_valid() {
        // Two kernels sharing a 1 2 1 row, built the long way: each from scratch.
        let c = Ctx::for_tests(false);
        let x = c.init.clone();
        let a = grid(&[&[1, 2, 1], &[0, 0, 0], &[0, 0, 0]]);
        let b = grid(&[&[1, 2, 1], &[0, 0, 1], &[0, 0, 0]]);
        let root = Bag::new(vec![a.clone(), b.clone()]);
        let mut plan = Vec::new();
        let build = |plan: &mut Vec<Step>| {
            // x + east x, then its copy moved west, summed, then moved north.
            plan.push(step(Kind::Shift(SHIFTS[1]), vec![x.clone()]));
            let e = plan[plan.len() - 1].outs[0].clone();
            plan.push(step(Kind::Add2, vec![x.clone(), e]));
            let p = plan[plan.len() - 1].outs[0].clone();
            plan.push(step(Kind::Shift(SHIFTS[3]), vec![p.clone()]));
            let w = plan[plan.len() - 1].outs[0].clone();
            plan.push(step(Kind::Add2, vec![p, w]));
            let row = plan[plan.len() - 1].outs[0].clone();
            plan.push(step(Kind::Shift(SHIFTS[0]), vec![row]));
        };
        build(&mut plan);
        let a_made = plan[plan.len() - 1].outs[0].clone();
        assert_eq!(a_made, a, "the fixture builds the first kernel");
        // The second kernel repeats the whole build, then adds its extra atom.
        build(&mut plan);
        let se = step(Kind::Shift(SHIFTS[1]), vec![x.clone()]);
        let e = se.outs[0].clone();
        plan.push(se);
        plan.push(step(Kind::Add2, vec![a.clone(), e]));
        let plan = without_dead(&plan, &root);
        assert!(valid(&plan, &root, &c));
        let before = plan.len();
        let mut offers = 0;
        let (better, _) = improve(
            &plan,
            &root,
            &c,
            WindowOptions {
                max_window: 4,
                node_limit: 100_000,
            },
            &|_| true,
            &|| true,
            &mut |p| {
                offers += 1;
                valid(p, &root, &c)
            },
        );
        assert!(offers > 0);
        assert!(valid(&better, &root, &c));
        assert!(better.len() < before, "{} -> {}", before, better.len());
    }

    #[test]
    fn rerouting_offers_other_routes_of_no_more_instructions() {
        // x moved two east by two single moves: `mov2x` does it in one, and a route
        // through the other order of operands is as long.
        let c = Ctx::for_tests(false);
        let x = c.init.clone();
        let e1 = step(Kind::Shift(SHIFTS[1]), vec![x.clone()]);
        let e = e1.outs[0].clone();
        let e2 = step(Kind::Shift(SHIFTS[1]), vec![e.clone()]);
        let root = Bag::new(e2.outs.clone());
        let plan = vec![e1, e2];
        let mut offers = Vec::new();
        let (kept, nodes) = reroute(
            &plan,
            &root,
            &c,
            WindowOptions {
                max_window: 2,
                node_limit: 10_000,
            },
            &|_| true,
            &|| true,
            &mut |p| {
                offers.push(p.to_vec());
                false
            },
        );
        assert_eq!(kept, plan, "nothing accepted, nothing changed");
        assert!(nodes > 0);
        assert!(!offers.is_empty());
        for p in &offers {
            assert!(valid(p, &root, &c), "an invalid route was offered");
            assert!(p.len() <= plan.len());
            assert_ne!(p, &plan, "the plan itself is not an alternative");
        }
        assert!(offers.iter().any(|p| p.len() == 1), "the one-move route");
        // A scorer that prefers fewer instructions takes the one-move route and stops.
        let (better, _) = reroute(
            &plan,
            &root,
            &c,
            WindowOptions {
                max_window: 2,
                node_limit: 10_000,
            },
            &|_| true,
            &|| true,
            &mut |p| p.len() < 2,
        );
        assert_eq!(better.len(), 1);
        assert!(valid(&better, &root, &c));
    }

    #[test]
    fn rejected_plans_are_not_kept() {
        let c = Ctx::for_tests(false);
        let x = c.init.clone();
        let e1 = step(Kind::Shift(SHIFTS[1]), vec![x.clone()]);
        let e = e1.outs[0].clone();
        let e2 = step(Kind::Shift(SHIFTS[1]), vec![e.clone()]);
        let ee = e2.outs[0].clone();
        // x moved two east in two steps where mov2x does it in one.
        let root = Bag::new(vec![ee]);
        let plan = vec![e1, e2];
        let (kept, _) = improve(
            &plan,
            &root,
            &c,
            WindowOptions {
                max_window: 4,
                node_limit: 1000,
            },
            &|_| true,
            &|| true,
            &mut |_| false,
        );
        assert_eq!(kept, plan);
        let (shorter, _) = improve(
            &plan,
            &root,
            &c,
            WindowOptions {
                max_window: 4,
                node_limit: 1000,
            },
            &|_| true,
            &|| true,
            &mut |p| valid(p, &root, &c),
        );
        assert_eq!(shorter.len(), 1);
    }

    #[test]
    fn searched_plans_of_random_pairs_stay_valid_and_never_grow() {
        use crate::cain::search::{search, SearchOptions, Stats};
        let c = Ctx::for_tests(false);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 5) as i32 - 2
        };
        for _ in 0..4 {
            let mut kernel = || {
                let rows: Vec<Vec<i32>> =
                    (0..3).map(|_| (0..3).map(|_| next()).collect()).collect();
                let refs: Vec<&[i32]> = rows.iter().map(Vec::as_slice).collect();
                grid(&refs)
            };
            let root = Bag::new(vec![kernel(), kernel()]);
            if root.0.iter().any(Goal::is_empty) || root.len() < 2 {
                continue;
            }
            let opts = SearchOptions {
                work: Some(300),
                ..SearchOptions::default()
            };
            let finish = |p: &[Step]| Some((p.to_vec(), p.len(), 0, 0.0));
            let Some(found) = search(&root, &c, &opts, &Stats::default(), &finish).best else {
                continue;
            };
            let plan = found.value;
            assert!(valid(&plan, &root, &c));
            let (better, _) = improve(
                &plan,
                &root,
                &c,
                WindowOptions {
                    max_window: 5,
                    node_limit: 5000,
                },
                &|_| true,
                &|| true,
                &mut |p| {
                    assert!(valid(p, &root, &c), "an invalid splice was offered");
                    true
                },
            );
            assert!(valid(&better, &root, &c));
            assert!(better.len() <= plan.len());
        }
    }
}
