//! How far a goal bag is from the start: a lower bound used for pruning, and an
//! estimate used to order children (best first).

use crate::cain::moves::goal::{Bag, Goal, SHIFTS};
use crate::cain::moves::reverse::{telescope, Ctx, PassThrough};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::rc::Rc;

/// Instructions still needed at least, before `bag` is live.
///
/// Every goal other than the input needs an instruction of its own, except that one
/// `div` makes a goal and its negation together. And a goal that needs `k` halvings
/// sits at the end of a chain holding values at every level `1..k`: each level no goal
/// of the bag occupies needs one more instruction.
pub(crate) fn lower_bound(bag: &Bag, ctx: &Ctx) -> u32 {
    let mut n = 0u32;
    let mut levels = 0u64;
    let mut max_level = 0;
    for g in &bag.0 {
        if ctx.is_input(g) {
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

/// Additions needed to build a single-offset goal whose count exceeds the input's
/// (`unit` atoms), beyond the one instruction the bound counts: a count like 476
/// (= 512 - 32 - 4) takes two more, a power of two none. Without it such goals look
/// free, and the search prefers splitting a sharpening kernel's centre off as it
/// stands over `2 x - blur`. Smaller counts are left at zero: they come from the
/// halving chain, which the bound already counts and the search shares.
fn count_cost(g: &Goal, unit: u32) -> f32 {
    match g.0.as_slice() {
        [t] if t.n.unsigned_abs() > unit => naf_weight(t.n.unsigned_abs()).saturating_sub(1) as f32,
        _ => 0.0,
    }
}

/// Nonzero digits of the non-adjacent form of `n` (fewest signed powers of two
/// summing to `n`).
fn naf_weight(mut n: u32) -> u32 {
    let mut w = 0;
    while n != 0 {
        if n & 1 == 1 {
            w += 1;
            // A run of ones is one power above minus one below.
            if n & 2 == 2 {
                n = n.wrapping_add(1);
            }
        }
        n >>= 1;
    }
    w
}

/// Tunable weights of the estimate.
struct Weights {
    support: f32,
    sum_step: f32,
    copy: f32,
    distinct: f32,
    mixed: f32,
}

const WEIGHTS: Weights = Weights {
    support: 2.0,
    sum_step: 1.0,
    copy: 1.0,
    distinct: 0.5,
    mixed: 0.5,
};

/// How a goal is estimated to be built: its own family and cost, then the chain of
/// goals it is made from by telescoping (`G = moved P - P` or `G = P + moved P`), each
/// with its family and cost. Goals whose chains meet share the work below the meeting
/// point (e.g. the two halves of a butterfly both made from one box).
#[derive(Clone, Debug)]
struct Info {
    /// Cheapest first, a few ways: (family fingerprint, extra instructions) from the
    /// goal down its chain.
    chains: Vec<Vec<(u64, f32)>>,
    /// The plain build cost.
    base: f32,
}

impl Info {
    /// The estimate without structure: the plain build cost.
    fn base(&self) -> f32 {
        self.base
    }

    /// The cheapest route.
    fn cost(&self) -> f32 {
        self.chains.iter().map(|c| c[0].1).fold(self.base, f32::min)
    }
}

/// Alternative chains kept per goal.
const CHAINS: usize = 6;

/// Largest support of a goal whose telescopes are followed.
const MAX_CHAIN_SUPPORT: usize = 12;

/// Levels of telescoping followed when estimating a goal.
const CHAIN_DEPTH: u32 = 4;

/// Estimated instructions still needed before `bag` is live (not a bound), with caches
/// of per-goal figures (child bags share most goals with their parent).
#[derive(Default)]
pub(crate) struct Estimator {
    /// Goal fingerprint -> how it is built.
    goals: HashMap<u64, Rc<Info>, BuildHasherDefault<PassThrough>>,
    /// (goal, part) fingerprints -> cost of the goal given the part.
    relief: HashMap<(u64, u64), f32>,
}

/// Largest cache size before it is cleared (bounds memory per worker).
const CACHE_LIMIT: usize = 1 << 20;

impl Estimator {
    /// The build chain of `g` (extra instructions beyond the one producing `g`).
    fn info(&mut self, g: &Goal, fp: u64, depth: u32) -> Rc<Info> {
        if let Some(v) = self.goals.get(&fp) {
            return v.clone();
        }
        let fam = g.family().fingerprint();
        let mut chains: Vec<Vec<(u64, f32)>> = vec![vec![(fam, build_cost(g))]];
        if g.support() > 1 && g.support() <= MAX_CHAIN_SUPPORT && depth > 0 {
            let atoms = g.atoms();
            for s in &SHIFTS {
                for sign in [-1, 1] {
                    let Some(p) = telescope(g, s.dr, s.dc, sign) else {
                        continue;
                    };
                    if p.atoms() > atoms {
                        continue;
                    }
                    let sub = self.info(&p, p.fingerprint(), depth - 1);
                    // One instruction (subx reads P twice; a sum of P and its move
                    // is an addx away when P is itself a sum) plus P's own.
                    let step = if sign < 0 { 1.0 } else { WEIGHTS.sum_step };
                    for c in &sub.chains {
                        let mut chain = Vec::with_capacity(c.len() + 1);
                        chain.push((fam, step + c[0].1));
                        chain.extend(c.iter().copied());
                        chains.push(chain);
                    }
                }
            }
        }
        chains.sort_by(|a, b| a[0].1.total_cmp(&b[0].1).then(a.len().cmp(&b.len())));
        // Keep distinct routes (by the family just below the goal), cheapest first.
        let mut kept: Vec<Vec<(u64, f32)>> = Vec::with_capacity(CHAINS);
        for c in chains {
            if kept.len() == CHAINS {
                break;
            }
            if !kept
                .iter()
                .any(|k| k.get(1).map(|x| x.0) == c.get(1).map(|x| x.0))
            {
                kept.push(c);
            }
        }
        let best = Rc::new(Info {
            chains: kept,
            base: build_cost(g),
        });
        if self.goals.len() >= CACHE_LIMIT {
            self.goals.clear();
        }
        self.goals.insert(fp, best.clone());
        best
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
    pub(crate) fn estimate(&mut self, bag: &Bag, ctx: &Ctx) -> f32 {
        let lb = lower_bound(bag, ctx) as f32;
        let fps: Vec<u64> = bag.0.iter().map(Goal::fingerprint).collect();
        let mut items: Vec<(usize, Rc<Info>)> = Vec::with_capacity(bag.len());
        let many = bag.0.iter().filter(|g| g.support() > 1).count() > 1;
        for (i, g) in bag.0.iter().enumerate() {
            if !ctx.is_input(g) && g.support() > 1 {
                let info = if many && ctx.structured {
                    self.info(g, fps[i], CHAIN_DEPTH)
                } else {
                    let fam = g.family().fingerprint();
                    let base = build_cost(g);
                    Rc::new(Info {
                        chains: vec![vec![(fam, base)]],
                        base,
                    })
                };
                items.push((i, info));
            }
        }
        // Cheapest goals first. A goal made by combining two others is free only when
        // both were counted before it (else a butterfly {D, E, D + E} would be free),
        // so each goal that is such a combination is also tried last.
        items.sort_by(|a, b| a.1.cost().total_cmp(&b.1.cost()).then(a.0.cmp(&b.0)));
        let combos = if ctx.structured {
            combinations(bag)
        } else {
            Vec::new()
        };
        let mut extra = self.pass(bag, &fps, &items, &combos);
        if !combos.is_empty() {
            for k in 0..items.len().saturating_sub(1) {
                let i = items[k].0;
                if combos.iter().any(|c| c.0 == i) {
                    let mut o = items.clone();
                    let it = o.remove(k);
                    o.push(it);
                    extra = extra.min(self.pass(bag, &fps, &o, &combos));
                }
            }
        }
        // Only deeper kernels pay: at depth 0 there is no halving chain to reach
        // past, and the depth-0 search (Laplacians, sharpen) is left as it was.
        let unit = if ctx.depth == 0 {
            u32::MAX
        } else {
            u32::try_from(ctx.init.sum().unsigned_abs()).unwrap_or(u32::MAX)
        };
        lb + extra + bag.0.iter().map(|g| count_cost(g, unit)).sum::<f32>()
    }

    /// Extra instructions of the goals taken in the order of `items`.
    fn pass(
        &mut self,
        bag: &Bag,
        fps: &[u64],
        items: &[(usize, Rc<Info>)],
        combos: &[(usize, usize, usize)],
    ) -> f32 {
        let mut fams: Vec<u64> = Vec::with_capacity(4 * bag.len());
        // Goals counted so far: those not in `items` cost nothing beyond the bound.
        let mut pending: Vec<bool> = vec![false; bag.len()];
        for (i, _) in items {
            pending[*i] = true;
        }
        let mut extra = 0.0;
        for (n, (i, info)) in items.iter().enumerate() {
            let i = *i;
            let g = &bag.0[i];
            let fam = info.chains[0][0].0;
            if fams.contains(&fam) {
                pending[i] = false;
                continue;
            }
            // Among equally dear routes, prefer one through a family that a goal still
            // to come can share.
            let later = &items[n + 1..];
            let shared = |f: u64| {
                later
                    .iter()
                    .any(|(_, o)| o.chains.iter().any(|c| c[1..].iter().any(|x| x.0 == f)))
            };
            // The cheapest route, lowered where it shares work with goals counted
            // before it.
            let mut cost = info.base();
            let mut key = f32::INFINITY;
            let mut route = 0;
            for (k, chain) in info.chains.iter().enumerate() {
                let full = chain[0].1;
                let mut c = full;
                for &(f, e) in &chain[1..] {
                    if fams.contains(&f) {
                        c = full - e;
                        break;
                    }
                }
                let bonus = if later.is_empty() {
                    0.0
                } else {
                    chain[1..]
                        .iter()
                        .filter(|x| x.1 > 0.0 && shared(x.0))
                        .map(|x| x.1)
                        .fold(0.0, f32::max)
                };
                cost = cost.min(c);
                if c - 0.5 * bonus < key {
                    key = c - 0.5 * bonus;
                    route = k;
                }
            }
            if cost > 0.0
                && combos
                    .iter()
                    .any(|&(t, a, b)| t == i && !pending[a] && !pending[b])
            {
                cost = 0.0;
            }
            for (j, h) in bag.0.iter().enumerate() {
                if j != i && h.support() >= 2 && h.atoms() < g.atoms() {
                    cost = cost.min(self.relieved(g, fps[i], h, fps[j]));
                }
            }
            fams.extend(info.chains[route].iter().map(|c| c.0));
            pending[i] = false;
            extra += cost;
        }
        extra
    }
}

/// Every `(t, a, b)` with goal `t` of `bag` equal to plus or minus the sum or the
/// difference of goals `a` and `b` (one instruction, already counted by the bound).
fn combinations(bag: &Bag) -> Vec<(usize, usize, usize)> {
    let n = bag.len();
    let mut out = Vec::new();
    if n < 3 {
        return out;
    }
    let sums: Vec<i64> = bag.0.iter().map(Goal::sum).collect();
    for a in 0..n {
        for b in (a + 1)..n {
            let (sp, sm) = (sums[a] + sums[b], sums[a] - sums[b]);
            let mut plus: Option<Goal> = None;
            let mut minus: Option<Goal> = None;
            for (t, (g, &st)) in bag.0.iter().zip(&sums).enumerate() {
                if t == a || t == b {
                    continue;
                }
                if st == sp || st == -sp {
                    let p = plus.get_or_insert_with(|| bag.0[a].plus(&bag.0[b]));
                    if p == g || equals_neg(p, g) {
                        out.push((t, a, b));
                        continue;
                    }
                }
                if st == sm || st == -sm {
                    let m = minus.get_or_insert_with(|| bag.0[a].minus(&bag.0[b]));
                    if m == g || equals_neg(m, g) {
                        out.push((t, a, b));
                    }
                }
            }
        }
    }
    out
}

/// Whether `x == -y`.
fn equals_neg(x: &Goal, y: &Goal) -> bool {
    x.0.len() == y.0.len()
        && x.0
            .iter()
            .zip(&y.0)
            .all(|(p, q)| p.at() == q.at() && p.n == -q.n)
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
        // Moves keep channels: a copy starts on the part's own channel.
        if t.n != sign * first.n || t.z != first.z {
            continue;
        }
        let (dr, dc) = (t.r.wrapping_sub(first.r), t.c.wrapping_sub(first.c));
        let Some(moved) = part.translated(dr, dc) else {
            continue;
        };
        let fits = moved.0.iter().all(|m| {
            let have = rest.get_on(m.z, m.r, m.c);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_cost_their_signed_binary_digits() {
        assert_eq!(naf_weight(0), 0);
        assert_eq!(naf_weight(64), 1);
        assert_eq!(naf_weight(7), 2); // 8 - 1
        assert_eq!(naf_weight(476), 3); // 512 - 32 - 4
        assert_eq!(count_cost(&Goal::single(0, 0, 476), 256), 2.0);
        assert_eq!(count_cost(&Goal::single(0, 0, -3), 4), 0.0);
        assert_eq!(count_cost(&Goal::single(0, 0, 512), 256), 0.0);
    }
}
