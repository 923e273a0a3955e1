//! Saturation of a plan, measured on representative inputs.
//!
//! A register clips beyond the limit, and a clipped value read again carries its
//! clipping into whatever is made from it. The error objective runs a plan on a fixed
//! sample of input patches from the bundled images ([`Sample`]): each step computes its
//! results from its sources' clipped values by the step's linear rule, each result is
//! clipped in turn, and each output's mean squared distance from its exact value,
//! clipped, is the output's cost. The clipped exact value is the best any program can
//! give, so an output that must clip costs nothing by itself, an intermediate whose
//! clipping the output's own clipping hides costs nothing, and one whose clipping
//! reaches the output costs what it changes there, once per output. The sum is in the
//! units of the predicted mean squared error it is added to.

use crate::cain::moves::goal::Goal;
use crate::cain::moves::step::{Kind, Step};
use crate::cain::score::sample::Sample;
use crate::verify::range::InputRange;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;

/// The limit, the input range and the sample plans are measured on.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ClipModel {
    /// Common depth of the goals (a goal's counts are over `2^depth`).
    pub(crate) depth: u32,
    /// Lowest input pixel.
    pub(crate) lo: f64,
    /// Highest input pixel.
    pub(crate) hi: f64,
    /// Largest magnitude a register holds before it clips.
    pub(crate) limit: f64,
    /// The largest magnitude an output reaches on flat regions (0 if none is given).
    /// Where an output cannot fit, it clips whatever the program does; values up to its
    /// magnitude are then common to every candidate and not refused by
    /// [`ClipModel::flat_fits`] (what their clipping does to the outputs still counts
    /// in the score).
    pub(crate) unavoidable: f64,
    /// The representative inputs.
    pub(crate) sample: Arc<Sample>,
}

/// One term of a value's linear rule: `coef` times value `src` at offset `(dr, dc)`.
type Tap = (usize, i32, i32, f64);

/// How a value of a plan is made.
enum Def<'a> {
    /// No step writes it before it is read (an input): its exact value, clipped.
    Given(&'a Goal),
    /// A step's result: the sum of its taps, clipped.
    Computed(Vec<Tap>),
}

impl ClipModel {
    /// The model for goals over `2^depth`, inputs in `range` and the saturation
    /// `limit`, measured on the bundled images (one channel per input channel of the
    /// outputs `finals`), with the outputs' largest flat magnitude as
    /// [`ClipModel::unavoidable`].
    pub(crate) fn new(depth: u32, range: InputRange, limit: f64, finals: &[Goal]) -> ClipModel {
        let channels = finals
            .iter()
            .flat_map(|g| g.0.iter().map(|t| usize::from(t.z) + 1))
            .max()
            .unwrap_or(1);
        let m = ClipModel {
            depth,
            lo: range.lo,
            hi: range.hi,
            limit,
            unavoidable: 0.0,
            sample: Arc::new(Sample::of_bundled_images(range, channels)),
        };
        let unavoidable = finals
            .iter()
            .map(|g| m.flat_magnitude(g))
            .fold(0.0, f64::max);
        ClipModel { unavoidable, ..m }
    }

    /// Whether `g` stays within the limit on flat regions at every level of the input
    /// range, or within the largest output's own flat magnitude where that is beyond
    /// the limit ([`ClipModel::unavoidable`]).
    pub(crate) fn flat_fits(&self, g: &Goal) -> bool {
        self.flat_magnitude(g) <= self.limit.max(self.unavoidable) * (1.0 + 1e-12)
    }

    /// The largest magnitude `g` reaches on flat regions (its coefficient sum times the
    /// input bound).
    pub(crate) fn flat_magnitude(&self, g: &Goal) -> f64 {
        let bound = self.lo.abs().max(self.hi.abs());
        (g.sum() as f64 * 2f64.powi(-(self.depth.min(60) as i32))).abs() * bound
    }

    /// Whether `g` stays within `k` times the limit for every input in the range.
    pub(crate) fn peak_within(&self, g: &Goal, k: f64) -> bool {
        let bound = self.lo.abs().max(self.hi.abs());
        let l1 = g.atoms() as f64 * 2f64.powi(-(self.depth.min(60) as i32));
        l1 * bound <= k * self.limit * (1.0 + 1e-12)
    }

    /// Whether one instruction of at most `sources` sources can make `g` from values
    /// within `k` times the limit for any input and within the limit on flat regions
    /// (what the error search's first half holds every value but the outputs to).
    pub(crate) fn reachable(&self, g: &Goal, sources: usize, k: f64) -> bool {
        let n = sources as f64;
        self.peak_within(g, n * k) && self.flat_magnitude(g) <= n * self.limit * (1.0 + 1e-12)
    }

    /// `v` clipped at the limit.
    fn clip(&self, v: f64) -> f64 {
        v.clamp(-self.limit, self.limit)
    }

    /// What the clipping `steps` cause costs the outputs `finals`: per output, the mean
    /// over the sample of the squared distance between the value the plan leaves and
    /// the exact value clipped; summed over the outputs.
    pub(crate) fn plan_clipping(&self, steps: &[Step], finals: &[Goal]) -> f64 {
        // Where no value read can leave the range, every output is its exact value
        // clipped (the common case: nothing to run).
        if steps
            .iter()
            .flat_map(|s| &s.ins)
            .all(|g| self.peak_within(g, 1.0))
        {
            return 0.0;
        }
        let Some((defs, outs)) = dataflow(steps, finals) else {
            return 0.0;
        };
        let need = offsets_needed(&defs, &outs);
        let n = self.sample.len();
        let mut start = Vec::with_capacity(defs.len());
        let mut slots = 0;
        for offs in &need {
            start.push(slots * n);
            slots += offs.len();
        }
        let at = |v: usize, o: (i32, i32)| -> usize {
            let k = need[v].iter().position(|&p| p == o).unwrap_or(0);
            start[v] + k * n
        };
        let mut values = vec![0.0; slots * n];
        for (v, def) in defs.iter().enumerate() {
            for (k, &(r, c)) in need[v].iter().enumerate() {
                let (done, rest) = values.split_at_mut(start[v] + k * n);
                let out = &mut rest[..n];
                match def {
                    Def::Given(g) => self.exact(g, (r, c), out),
                    Def::Computed(taps) => {
                        for &(src, dr, dc, coef) in taps {
                            let from = at(src, (r + dr, c + dc));
                            for (o, x) in out.iter_mut().zip(&done[from..from + n]) {
                                *o += coef * x;
                            }
                        }
                    }
                }
                for o in out.iter_mut() {
                    *o = self.clip(*o);
                }
            }
        }
        let mut ideal = vec![0.0; n];
        let mut total = 0.0;
        for (g, &v) in finals.iter().zip(&outs) {
            ideal.iter_mut().for_each(|x| *x = 0.0);
            self.exact(g, (0, 0), &mut ideal);
            let got = &values[at(v, (0, 0))..][..n];
            let sq: f64 = got
                .iter()
                .zip(&ideal)
                .map(|(&y, &x)| (y - self.clip(x)).powi(2))
                .sum();
            total += sq / n as f64;
        }
        total
    }

    /// Adds the exact value of `g` at offset `o` of every sampled position to `out`.
    fn exact(&self, g: &Goal, o: (i32, i32), out: &mut [f64]) {
        let unit = 2f64.powi(-(self.depth.min(60) as i32));
        for t in &g.0 {
            let coef = f64::from(t.n) * unit;
            let xs = self
                .sample
                .at(t.z, o.0 + i32::from(t.r), o.1 + i32::from(t.c));
            for (y, x) in out.iter_mut().zip(xs) {
                *y += coef * x;
            }
        }
    }
}

/// What each result of `kind` is made of, from its `sources` sources: per result, the
/// taps over source indices. Read off the step's own goal arithmetic on one probe per
/// source (source `j` alone on channel `j`), so every kind's rule is the one
/// [`Step::eval`] gives it.
fn rule(kind: Kind, sources: usize) -> Option<Vec<Vec<Tap>>> {
    let probes: Vec<Goal> = (0..sources)
        .map(|j| Some(Goal::single_on(u8::try_from(j).ok()?, 0, 0, 2)))
        .collect::<Option<_>>()?;
    let outs = Step::eval(kind, &probes)?;
    Some(
        outs.iter()
            .map(|g| {
                g.0.iter()
                    .map(|t| {
                        let coef = f64::from(t.n) / 2.0;
                        (usize::from(t.z), i32::from(t.r), i32::from(t.c), coef)
                    })
                    .collect()
            })
            .collect(),
    )
}

/// The values of `steps` in the order they are made, each step's sources the latest
/// value of their goal, and the value each of `finals` ends as; `None` where a step's
/// operands do not fit its kind.
fn dataflow<'a>(steps: &'a [Step], finals: &'a [Goal]) -> Option<(Vec<Def<'a>>, Vec<usize>)> {
    let mut defs = Vec::new();
    let mut latest: HashMap<&Goal, usize> = HashMap::new();
    let mut rules: HashMap<(Kind, usize), Vec<Vec<Tap>>> = HashMap::new();
    for s in steps {
        let srcs: Vec<usize> = s
            .ins
            .iter()
            .map(|g| source(g, &mut defs, &mut latest))
            .collect();
        let key = (s.kind, s.ins.len());
        let made = match rules.entry(key) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(rule(s.kind, s.ins.len())?),
        };
        let mut written = Vec::with_capacity(s.outs.len());
        for taps in made {
            let taps = taps
                .iter()
                .map(|&(j, dr, dc, coef)| (srcs[j], dr, dc, coef))
                .collect();
            defs.push(Def::Computed(taps));
            written.push(defs.len() - 1);
        }
        for (g, v) in s.outs.iter().zip(written) {
            latest.insert(g, v);
        }
    }
    let outs = finals
        .iter()
        .map(|g| source(g, &mut defs, &mut latest))
        .collect();
    Some((defs, outs))
}

/// The value `g` holds now: the latest written, or a new given one.
fn source<'a>(
    g: &'a Goal,
    defs: &mut Vec<Def<'a>>,
    latest: &mut HashMap<&'a Goal, usize>,
) -> usize {
    *latest.entry(g).or_insert_with(|| {
        defs.push(Def::Given(g));
        defs.len() - 1
    })
}

/// Per value of `defs`, the offsets at which the outputs `outs` (each at its centre)
/// read it, directly or through later values.
fn offsets_needed(defs: &[Def<'_>], outs: &[usize]) -> Vec<Vec<(i32, i32)>> {
    let mut need: Vec<Vec<(i32, i32)>> = vec![Vec::new(); defs.len()];
    let note = |offs: &mut Vec<(i32, i32)>, o: (i32, i32)| {
        if !offs.contains(&o) {
            offs.push(o);
        }
    };
    for &v in outs {
        note(&mut need[v], (0, 0));
    }
    // Sources come before what they make: walking back, a value's readers are done.
    for v in (0..defs.len()).rev() {
        if let Def::Computed(taps) = &defs[v] {
            let offs = std::mem::take(&mut need[v]);
            for &(r, c) in &offs {
                for &(src, dr, dc, _) in taps {
                    note(&mut need[src], (r + dr, c + dc));
                }
            }
            need[v] = offs;
        }
    }
    need
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cain::moves::goal::fixtures::grid;

    /// Depth 2 (counts in quarters), the full input range, limit 128, measured on flat
    /// patches at `levels`.
    fn model(levels: &[f64]) -> ClipModel {
        ClipModel {
            depth: 2,
            lo: -128.0,
            hi: 127.0,
            limit: 128.0,
            unavoidable: 0.0,
            sample: Arc::new(Sample::flat(levels)),
        }
    }

    /// `kind` applied to `ins`.
    fn step(kind: Kind, ins: &[&Goal]) -> Step {
        let ins: Vec<Goal> = ins.iter().map(|&g| g.clone()).collect();
        let outs = Step::eval(kind, &ins).expect("operands fit");
        Step { kind, outs, ins }
    }

    #[test]
    fn an_intermediate_costs_only_what_its_clipping_changes_in_an_output() {
        let m = model(&[100.0, -20.0]);
        let x = Goal::input(0, 2);
        let twice = step(Kind::Add2, &[&x, &x]);
        let x2 = twice.outs[0].clone();
        // 4x from a clipped 2x: the output clips anyway, to the same value.
        let four = step(Kind::Add2, &[&x2, &x2]);
        let plan = [twice.clone(), four.clone()];
        assert_eq!(m.plan_clipping(&plan, &four.outs), 0.0);
        // x as 2x - x: at 100, 2x clips to 128 and the output is 28 for 100; at -20
        // nothing clips. Mean of 72^2 and 0.
        let back = step(Kind::Sub, &[&x2, &x]);
        assert_eq!(back.outs[0], x);
        let c = m.plan_clipping(&[twice.clone(), back.clone()], &back.outs);
        assert!((c - 72.0 * 72.0 / 2.0).abs() < 1e-9, "{c}");
        // An output that clips and is not read again costs nothing.
        assert_eq!(
            m.plan_clipping(std::slice::from_ref(&twice), &twice.outs),
            0.0
        );
        // Read again by a later step, its clipping counts where it reaches an output.
        let half = step(Kind::Divq, &[&x2]);
        let c = m.plan_clipping(&[twice, half.clone()], &half.outs);
        assert!((c - 36.0 * 36.0 / 2.0).abs() < 1e-9, "{c}");
    }

    #[test]
    fn moving_steps_follow_their_rule() {
        let x = Goal::input(0, 2);
        let twice = step(Kind::Add2, &[&x, &x]);
        let shifts = crate::cain::moves::goal::SHIFTS;
        // Flat at 60: 2x is 120, within the limit, and every moved result is exact.
        let m = model(&[60.0]);
        for s in shifts {
            let moved = step(Kind::SubShift(s), &[&twice.outs[0], &x]);
            assert_eq!(
                m.plan_clipping(&[twice.clone(), moved.clone()], &moved.outs),
                0.0
            );
        }
        // Flat at 90: 2x clips to 128, the moved difference is 128 - 90 = 38 for 90.
        let moved = step(Kind::SubShift(shifts[1]), &[&twice.outs[0], &x]);
        let c = model(&[90.0]).plan_clipping(&[twice, moved.clone()], &moved.outs);
        assert!((c - 52.0 * 52.0).abs() < 1e-9, "{c}");
    }

    #[test]
    fn flat_fit_is_about_the_coefficient_sum() {
        let m = model(&[0.0]);
        // Sum 1 (the input itself): at the limit, fits; sum 5/4 does not.
        assert!(m.flat_fits(&grid(&[&[4]])));
        assert!(!m.flat_fits(&grid(&[&[4, 1]])));
        // Large but cancelling: fits on flat regions.
        assert!(m.flat_fits(&grid(&[&[8, -8], &[8, -8]])));
        assert!(!m.flat_fits(&grid(&[&[-4, -4], &[1, 0]])));
        // Static peaks: 8 quarters reach 2 x 128.
        let big = grid(&[&[4, -4], &[-2, 2]]);
        assert!(m.peak_within(&big, 3.0) && !m.peak_within(&big, 2.9));
        // Two sources within 1.5 x the limit reach 3 x it; flat sums up to 2 x it.
        assert!(m.reachable(&big, 2, 1.5) && !m.reachable(&big, 2, 1.4));
        assert!(!m.reachable(&grid(&[&[4, 4, 1]]), 2, 10.0));
        assert!(m.peak_within(&grid(&[&[4]]), 1.0));
    }

    #[test]
    fn flat_fit_allows_what_an_unfitting_output_reaches_anyway() {
        // An output of flat sum 2 (twice the input) cannot fit: values up to it pass,
        // values beyond it do not.
        let out = grid(&[&[4, 4]]);
        let m = ClipModel {
            unavoidable: model(&[0.0]).flat_magnitude(&out),
            ..model(&[0.0])
        };
        assert_eq!(m.flat_magnitude(&out), 256.0);
        assert!(!model(&[0.0]).flat_fits(&out));
        assert!(m.flat_fits(&out) && m.flat_fits(&grid(&[&[4, 2]])));
        assert!(!m.flat_fits(&grid(&[&[4, 4, 1]])));
    }
}
