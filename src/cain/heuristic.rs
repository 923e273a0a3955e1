//! How far a goal bag is from the start: a lower bound used for pruning, and an
//! estimate used to order children (best first).

use super::goal::{Bag, Goal};
use super::reverse::{Ctx, PassThrough};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// Instructions still needed at least, before `bag` is live.
///
/// Every goal other than the input needs an instruction of its own, except that one
/// `div` makes a goal and its negation together. And a goal that needs `k` halvings
/// sits at the end of a chain holding values at every level `1..k`: each level no goal
/// of the bag occupies needs one more instruction.
pub fn lower_bound(bag: &Bag, ctx: &Ctx) -> u32 {
    let mut n = 0u32;
    let mut levels = 0u64;
    let mut max_level = 0;
    for g in &bag.0 {
        if *g == ctx.init {
            continue;
        }
        let neg = g.neg();
        // Count a {G, -G} pair once (for the one whose first count is positive).
        let paired = g.0.first().is_some_and(|t| t.n < 0) && bag.contains(&neg);
        if !paired {
            n += 1;
        }
        let l = g.level(ctx.depth).min(63);
        levels |= 1 << l;
        max_level = max_level.max(l);
    }
    let missing = (1..max_level).filter(|l| levels & (1 << l) == 0).count() as u32;
    n + missing
}

/// Estimated instructions to build `g` once its family has no member yet: merging `n`
/// offsets costs about two instructions per doubling of the support (a move and an add).
fn build_cost(g: &Goal) -> f32 {
    let n = g.support() as f32;
    if n <= 1.0 {
        return 0.0;
    }
    let mixed = g.0.iter().any(|t| t.n < 0) && g.0.iter().any(|t| t.n > 0);
    let distinct = {
        let mut v: Vec<u32> = g.0.iter().map(|t| t.n.unsigned_abs()).collect();
        v.sort_unstable();
        v.dedup();
        v.len() as f32
    };
    WEIGHTS.support * n.log2()
        + WEIGHTS.distinct * (distinct - 1.0)
        + if mixed { WEIGHTS.mixed } else { 0.0 }
}

/// Tunable weights of the estimate.
struct Weights {
    support: f32,
    copy: f32,
    distinct: f32,
    mixed: f32,
}

const WEIGHTS: Weights = Weights {
    support: 2.0,
    copy: 1.0,
    distinct: 0.5,
    mixed: 0.5,
};

/// Estimated instructions still needed before `bag` is live (not a bound), with caches
/// of per-goal figures (child bags share most goals with their parent).
#[derive(Default)]
pub struct Estimator {
    /// Goal fingerprint -> (family fingerprint, build cost).
    goals: HashMap<u64, (u64, f32), BuildHasherDefault<PassThrough>>,
    /// (goal, part) fingerprints -> cost of the goal given the part.
    relief: HashMap<(u64, u64), f32>,
}

/// Largest cache size before it is cleared (bounds memory per worker).
const CACHE_LIMIT: usize = 1 << 20;

impl Estimator {
    fn goal(&mut self, g: &Goal, fp: u64) -> (u64, f32) {
        if let Some(v) = self.goals.get(&fp) {
            return *v;
        }
        let v = (g.family().fingerprint(), build_cost(g));
        if self.goals.len() >= CACHE_LIMIT {
            self.goals.clear();
        }
        self.goals.insert(fp, v);
        v
    }

    /// Cost of `g` when `part` is live: one instruction per moved copy of `part` (or
    /// of its negation) that fits inside `g`, plus building what is left. This is the
    /// relief for goals containing others (e.g. a box made of moved columns).
    fn relieved(&mut self, g: &Goal, gfp: u64, part: &Goal, pfp: u64) -> f32 {
        if let Some(v) = self.relief.get(&(gfp, pfp)) {
            return *v;
        }
        let mut best = f32::INFINITY;
        for sign in [1, -1] {
            let (copies, rest) = cover(g, part, sign);
            if copies > 0 {
                let c = copies as f32 * WEIGHTS.copy + build_cost(&rest);
                best = best.min(c);
            }
        }
        if self.relief.len() >= CACHE_LIMIT {
            self.relief.clear();
        }
        self.relief.insert((gfp, pfp), best);
        best
    }

    /// Estimated instructions still needed before `bag` is live.
    pub fn estimate(&mut self, bag: &Bag, ctx: &Ctx) -> f32 {
        let lb = lower_bound(bag, ctx) as f32;
        let mut fams: Vec<u64> = Vec::with_capacity(bag.len());
        let fps: Vec<u64> = bag.0.iter().map(Goal::fingerprint).collect();
        let mut extra = 0.0;
        for (i, g) in bag.0.iter().enumerate() {
            if *g == ctx.init || g.support() <= 1 {
                continue;
            }
            let (fam, mut cost) = self.goal(g, fps[i]);
            if fams.contains(&fam) {
                continue;
            }
            fams.push(fam);
            for (j, h) in bag.0.iter().enumerate() {
                if j != i && h.support() >= 2 && h.atoms() < g.atoms() {
                    cost = cost.min(self.relieved(g, fps[i], h, fps[j]));
                }
            }
            extra += cost;
        }
        lb + extra
    }
}

/// Greedily removes moved copies of `sign * part` from `g`: (copies, what is left).
fn cover(g: &Goal, part: &Goal, sign: i32) -> (u32, Goal) {
    let Some(first) = part.0.first() else {
        return (0, g.clone());
    };
    let mut rest = g.clone();
    let mut copies = 0;
    let mut k = 0;
    while k < rest.0.len() {
        let t = rest.0[k];
        k += 1;
        if t.n != sign * first.n {
            continue;
        }
        let (dr, dc) = (t.r.wrapping_sub(first.r), t.c.wrapping_sub(first.c));
        let Some(moved) = part.translated(dr, dc) else {
            continue;
        };
        let fits = moved.0.iter().all(|m| {
            let have = rest.get(m.r, m.c);
            let want = sign * m.n;
            have.signum() == want.signum() && have.abs() >= want.abs()
        });
        if fits {
            rest = rest.combine(&moved, -sign);
            copies += 1;
            k = 0;
        }
    }
    (copies, rest)
}
