//! The analytic error predictor: the bias and RMSE a program's outputs pick up under a
//! noise profile, from the profile's parameters alone (no simulation).
//!
//! Every bus transfer writes `v (1 + g + s_g G[pe]) + o + s_o O[pe][reg] + noise` (the
//! model of the noise profile), and every later linear operation carries that error
//! along. So an output's error, at PE p, is a sum of independent zero-mean random
//! variables each times a coefficient, plus a systematic part:
//!
//! - systematic: `b(x)`, an affine function of the input pixels (the transfers' gains
//!   `g v` and offsets `o`, scaled by the operations that follow);
//! - fixed-pattern gain: `sum A_d(x) G[p + d]`, one unit-normal variable per PE that the
//!   value passed through, its coefficient an affine function of the input;
//! - fixed-pattern offsets, load and capture patterns, temporal noise: constant
//!   coefficients of unit-normal (or, for temporal noise, per-transfer) variables;
//! - the readout path: noise, per-PE offset and the ADC's rounding (variance 1/12).
//!
//! Over many PEs and images, the mean error is `E[b(x)]` and the mean squared error
//! `E[b(x)^2] + sum E[A_d(x)^2] + sum c^2 var`. The expectations need the input's first
//! and second moments, [`InputStats`]: from real images (`check`), or a model of the
//! input range (`compile`). Not modelled: saturation (reported separately), decay of
//! idle registers, products of two small error terms.

use super::range::InputRange;
use super::symbolic::Offset;
#[cfg(test)]
use crate::isa::Wiring;
use crate::isa::{DigitalOp, Pos, Program, Reg};
use crate::sim::machine::{step, Machine, MachineError};
use crate::sim::noise::profile::{Injection, Transfer};
use crate::sim::noise::{BusKind, Profile};
use ndarray::Array2;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// A pixel of one input plane: `(plane, row offset, column offset)`. Plane 0 is the
/// first input (the only one of a single-input program); sorted by plane first, so
/// terms of plane 0 keep the order of their offsets.
pub(crate) type Tap = (u16, i32, i32);

/// Coefficients by pixel tap, sorted by tap.
pub(crate) type Terms = [(Tap, f64)];

/// `constant + sum coef * x_z(p + offset)`, in f64.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Affine {
    /// Coefficients by tap (plane and pixel offset), sorted, each tap once (a tap
    /// whose terms cancelled keeps its 0). A sorted list rather than a map: programs of
    /// thousands of instructions add values of hundreds of terms at every step, and a
    /// merge of two lists is several times faster than inserting into a tree.
    pub(crate) terms: Vec<(Tap, f64)>,
    /// Constant part.
    pub(crate) constant: f64,
}

impl Affine {
    /// `self += k o`, offset by offset.
    fn add(&mut self, o: &Affine, k: f64) {
        // A term new to `self` starts at 0.0 (`0.0 + k c`: only the sign of a zero
        // differs from `k c`).
        if self.terms.is_empty() {
            self.terms = o.terms.iter().map(|&(off, c)| (off, 0.0 + k * c)).collect();
        } else if !o.terms.is_empty() {
            let mut out = Vec::with_capacity(self.terms.len() + o.terms.len());
            let (mut a, mut b) = (self.terms.iter().peekable(), o.terms.iter().peekable());
            loop {
                match (a.peek(), b.peek()) {
                    (Some(&&(oa, x)), Some(&&(ob, y))) => {
                        if oa < ob {
                            a.next();
                            out.push((oa, x));
                        } else if ob < oa {
                            b.next();
                            out.push((ob, 0.0 + k * y));
                        } else {
                            a.next();
                            b.next();
                            out.push((oa, x + k * y));
                        }
                    }
                    (Some(&&t), None) => {
                        a.next();
                        out.push(t);
                    }
                    (None, Some(&&(ob, y))) => {
                        b.next();
                        out.push((ob, 0.0 + k * y));
                    }
                    (None, None) => break,
                }
            }
            self.terms = out;
        }
        self.constant += k * o.constant;
    }

    fn scale(&mut self, k: f64) {
        self.terms.iter_mut().for_each(|(_, c)| *c *= k);
        self.constant *= k;
    }

    fn shifted(&self, dr: i32, dc: i32) -> Affine {
        // A translation keeps the offsets' order.
        Affine {
            terms: self
                .terms
                .iter()
                .map(|&((z, r, c), v)| ((z, r + dr, c + dc), v))
                .collect(),
            constant: self.constant,
        }
    }

    /// The sum of the coefficients.
    pub(crate) fn sum(&self) -> f64 {
        self.terms.iter().map(|&(_, c)| c).sum()
    }

    fn radius(&self) -> i32 {
        self.terms
            .iter()
            .map(|&((_, r, c), _)| r.abs().max(c.abs()))
            .max()
            .unwrap_or(0)
    }
}

/// Lags of the bundled images' moments: `(dr, dc)` with `dr` in `0..=IMAGE_REACH` and
/// `dc` in `-IMAGE_REACH..=IMAGE_REACH` (for `dr = 0`, `dc >= 0`).
pub(crate) const IMAGE_REACH: usize = 8;

/// Pixels of the bundled images nearer the edge than this are left out of their moments.
#[cfg(test)]
pub(crate) const IMAGE_BORDER: usize = 8;

/// The bundled test images' (`images/`) mean, full-range values (`pixel - 128`).
/// Derived from the images and held to them by `tests/predict_images.rs`.
pub(crate) const IMAGE_MEAN: f64 = -9.160723;

/// The bundled test images' `E[x(p) x(p + (dr, dc))]`, full-range values, as
/// `(dr, dc, moment)` for the lags of [`IMAGE_REACH`] (derived like [`IMAGE_MEAN`]).
pub(crate) const IMAGE_LAGS: &[(i32, i32, f64)] = &[
    (0, 0, 4197.2274),
    (0, 1, 3763.5628),
    (0, 2, 3268.9271),
    (0, 3, 2859.3051),
    (0, 4, 2481.8253),
    (0, 5, 2112.2863),
    (0, 6, 1748.4403),
    (0, 7, 1389.5955),
    (0, 8, 1033.0600),
    (1, -8, 1303.3707),
    (1, -7, 1585.8781),
    (1, -6, 1870.1356),
    (1, -5, 2158.9975),
    (1, -4, 2453.4287),
    (1, -3, 2755.8626),
    (1, -2, 3086.4806),
    (1, -1, 3470.1605),
    (1, 0, 3798.5727),
    (1, 1, 3485.9324),
    (1, 2, 3101.4624),
    (1, 3, 2769.6340),
    (1, 4, 2468.1334),
    (1, 5, 2171.1486),
    (1, 6, 1878.8299),
    (1, 7, 1591.6642),
    (1, 8, 1307.5359),
    (2, -8, 1568.0590),
    (2, -7, 1774.1220),
    (2, -6, 1981.2383),
    (2, -5, 2192.1615),
    (2, -4, 2406.9027),
    (2, -3, 2628.2451),
    (2, -2, 2870.1550),
    (2, -1, 3132.9163),
    (2, 0, 3349.0290),
    (2, 1, 3150.5036),
    (2, 2, 2889.9491),
    (2, 3, 2649.5808),
    (2, 4, 2430.5778),
    (2, 5, 2212.0607),
    (2, 6, 1995.7863),
    (2, 7, 1783.7780),
    (2, 8, 1574.3139),
    (3, -8, 1831.2352),
    (3, -7, 1959.6833),
    (3, -6, 2089.2756),
    (3, -5, 2222.1807),
    (3, -4, 2356.8485),
    (3, -3, 2495.7032),
    (3, -2, 2651.6970),
    (3, -1, 2822.5952),
    (3, 0, 2953.0689),
    (3, 1, 2834.9725),
    (3, 2, 2672.6724),
    (3, 3, 2521.9588),
    (3, 4, 2385.2249),
    (3, 5, 2247.9369),
    (3, 6, 2110.8830),
    (3, 7, 1975.8473),
    (3, 8, 1841.5332),
    (4, -8, 2094.7134),
    (4, -7, 2145.6834),
    (4, -6, 2197.6386),
    (4, -5, 2251.2103),
    (4, -4, 2305.5331),
    (4, -3, 2364.3891),
    (4, -2, 2439.8379),
    (4, -1, 2527.1378),
    (4, 0, 2577.1910),
    (4, 1, 2535.5601),
    (4, 2, 2461.4544),
    (4, 3, 2395.7483),
    (4, 4, 2338.9135),
    (4, 5, 2282.1955),
    (4, 6, 2225.2768),
    (4, 7, 2168.8000),
    (4, 8, 2112.0187),
    (5, -8, 2358.9135),
    (5, -7, 2331.6270),
    (5, -6, 2305.3294),
    (5, -5, 2279.4519),
    (5, -4, 2255.1298),
    (5, -3, 2237.3761),
    (5, -2, 2233.9499),
    (5, -1, 2239.5265),
    (5, 0, 2214.2815),
    (5, 1, 2247.7004),
    (5, 2, 2254.5053),
    (5, 3, 2271.3985),
    (5, 4, 2294.3079),
    (5, 5, 2316.6234),
    (5, 6, 2338.6877),
    (5, 7, 2360.8903),
    (5, 8, 2382.8141),
    (6, -8, 2623.7506),
    (6, -7, 2517.0122),
    (6, -6, 2412.1321),
    (6, -5, 2308.9248),
    (6, -4, 2207.7819),
    (6, -3, 2113.6485),
    (6, -2, 2031.6326),
    (6, -1, 1956.3993),
    (6, 0, 1857.8845),
    (6, 1, 1966.8905),
    (6, 2, 2050.9591),
    (6, 3, 2148.1689),
    (6, 4, 2251.5996),
    (6, 5, 2351.5626),
    (6, 6, 2451.8430),
    (6, 7, 2552.8852),
    (6, 8, 2653.3765),
    (7, -8, 2890.8024),
    (7, -7, 2704.6680),
    (7, -6, 2520.5433),
    (7, -5, 2339.9410),
    (7, -4, 2162.7553),
    (7, -3, 1992.0203),
    (7, -2, 1831.4417),
    (7, -1, 1676.6924),
    (7, 0, 1505.0679),
    (7, 1, 1691.3693),
    (7, 2, 1852.9360),
    (7, 3, 2027.6325),
    (7, 4, 2210.7507),
    (7, 5, 2387.5213),
    (7, 6, 2564.9743),
    (7, 7, 2745.0138),
    (7, 8, 2924.0635),
    (8, -8, 3161.4876),
    (8, -7, 2896.6024),
    (8, -6, 2632.4113),
    (8, -5, 2372.0917),
    (8, -4, 2117.7255),
    (8, -3, 1870.4637),
    (8, -2, 1632.4143),
    (8, -1, 1399.8906),
    (8, 0, 1154.2975),
    (8, 1, 1418.5229),
    (8, 2, 1658.2835),
    (8, 3, 1907.2685),
    (8, 4, 2168.3538),
    (8, 5, 2424.3972),
    (8, 6, 2678.3851),
    (8, 7, 2936.7574),
    (8, 8, 3195.9271),
];

/// First and second moments of the input pixels `x` (full-range values).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct InputStats {
    /// `E[x]`.
    pub(crate) mean: f64,
    /// `E[x^2]`.
    pub(crate) square: f64,
    /// `E[x(p) x(p + d)]` for measured lags `d`; a lag not listed is taken as `square`
    /// (neighbouring pixels equal: the smooth-image model). Every input plane has
    /// these moments.
    pub(crate) lags: HashMap<Offset, f64>,
    /// Between two different input planes `a < b`, `E[x_a(p) x_b(p + d)]` keyed by
    /// `(a, b, d)`; a pair of planes with no lag listed is independent (`mean^2`), see
    /// `crate::verify::plane_stats`.
    pub(crate) cross: HashMap<(u16, u16, Offset), f64>,
}

impl InputStats {
    /// The default input model of `compile`: the bundled test images' moments
    /// (`IMAGE_LAGS`), mapped affinely from the capture's -128..127 onto `range`. Unlike
    /// a locally constant input, it gives edges and texture their weight, which is what
    /// zero-sum kernels (Sobel, Laplacian) respond to; lags beyond `IMAGE_REACH` take
    /// the farthest measured correlation.
    pub(crate) fn of_bundled_images(range: InputRange) -> InputStats {
        let (a, b) = range.full_range_map();
        let mean = a + b * IMAGE_MEAN;
        let map = |m: f64| a * a + 2.0 * a * b * IMAGE_MEAN + b * b * m;
        let mut lags = HashMap::with_capacity(2 * IMAGE_LAGS.len());
        for &(dr, dc, m) in IMAGE_LAGS {
            lags.insert((dr, dc), map(m));
            lags.insert((-dr, -dc), map(m));
        }
        let square = lags.get(&(0, 0)).copied().unwrap_or(a * a);
        InputStats {
            mean,
            square,
            lags,
            cross: HashMap::new(),
        }
    }

    /// The moments of real images (full-range values), over the pixels at least
    /// `border` from the edge, with lags up to `reach` in each direction.
    pub(crate) fn of_images(images: &[Array2<f64>], border: usize, reach: usize) -> InputStats {
        let mut sum = 0.0;
        let mut count = 0.0;
        let mut lags: HashMap<Offset, (f64, f64)> = HashMap::new();
        let r = reach as isize;
        for img in images {
            let (h, w) = img.dim();
            let (b, hh, ww) = (border as isize, h as isize, w as isize);
            for y in b..hh - b {
                for x in b..ww - b {
                    sum += img[[y as usize, x as usize]];
                    count += 1.0;
                }
            }
            for dr in 0..=r {
                for dc in -r..=r {
                    if dr == 0 && dc < 0 {
                        continue;
                    }
                    let e = lags.entry((dr as i32, dc as i32)).or_insert((0.0, 0.0));
                    for y in b..(hh - b - dr).max(b) {
                        for x in (b - dc.min(0)).max(b)..(ww - b - dc.max(0)).max(b) {
                            e.0 += img[[y as usize, x as usize]]
                                * img[[(y + dr) as usize, (x + dc) as usize]];
                            e.1 += 1.0;
                        }
                    }
                }
            }
        }
        let mut out: HashMap<Offset, f64> = HashMap::new();
        for (&(dr, dc), &(s, n)) in &lags {
            if n > 0.0 {
                out.insert((dr, dc), s / n);
                out.insert((-dr, -dc), s / n);
            }
        }
        let square = out.get(&(0, 0)).copied().unwrap_or(0.0);
        InputStats {
            mean: if count > 0.0 { sum / count } else { 0.0 },
            square,
            lags: out,
            cross: HashMap::new(),
        }
    }

    pub(crate) fn second(&self, d: Offset) -> f64 {
        let r = IMAGE_REACH as i32;
        self.lags
            .get(&d)
            .or_else(|| self.lags.get(&(d.0.clamp(-r, r), d.1.clamp(-r, r))))
            .copied()
            .unwrap_or(self.square)
    }

    /// `E[a(x)]`.
    pub(crate) fn expect(&self, a: &Affine) -> f64 {
        a.constant + self.mean * a.sum()
    }

    /// `E[a(x)^2]`.
    pub(crate) fn expect_square(&self, a: &Affine) -> f64 {
        let sum = a.sum();
        let mut s = a.constant * a.constant + 2.0 * a.constant * self.mean * sum;
        let first = a.terms.first().map(|t| t.0 .0);
        if first != a.terms.last().map(|t| t.0 .0) {
            self.add_planes_square(&mut s, &a.terms);
        } else {
            self.add_plane_square(&mut s, &a.terms, sum);
        }
        s.max(0.0)
    }

    /// Adds `E[(sum u x(p + o))^2]` of `terms`, all on one plane (of sum `sum`), to
    /// `s` (added term by term into `s`: single-input predictions stay bit for bit).
    pub(crate) fn add_plane_square(&self, s: &mut f64, terms: &Terms, sum: f64) {
        if self.lags.len() < terms.len() {
            // Every pair at `square`, corrected at the measured lags: linear in the
            // terms for few lags (none in the smooth-image model).
            *s += self.square * sum * sum;
            let find = |t: Tap| {
                terms
                    .binary_search_by(|(o, _)| o.cmp(&t))
                    .ok()
                    .and_then(|i| terms.get(i))
                    .map(|&(_, c)| c)
            };
            for &((z, r1, c1), u) in terms {
                for (&(dr, dc), &m) in &self.lags {
                    if let Some(v) = find((z, r1 + dr, c1 + dc)) {
                        *s += u * v * (m - self.square);
                    }
                }
            }
        } else {
            for &((_, r1, c1), u) in terms {
                for &((_, r2, c2), v) in terms {
                    *s += u * v * self.second((r2 - r1, c2 - c1));
                }
            }
        }
    }
}

/// Which random plane a gain error comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum GainPlane {
    /// The chip's `G[pe]`, shared by every bus kind.
    Chip,
    /// The DAC load's per-PE gain.
    Load,
    /// The pixel's per-PE gain (photo-response non-uniformity).
    Capture,
}

/// Which random variable a constant-coefficient error comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Source {
    /// `O[pe][slot]` (general registers by index, `NEWS` 256).
    Pattern(u16),
    /// The DAC load's per-PE offset.
    Load,
    /// The pixel's per-PE offset.
    Capture,
    /// Temporal noise of transfer number `n` (its variance is kept per transfer).
    Temporal(u32),
}

/// A reference to the error of a node, times `coef`, as seen from the PE `shift` away.
#[derive(Clone, Debug)]
struct ErrRef {
    node: Rc<Node>,
    coef: f64,
    shift: Offset,
}

/// The error one transfer leaves: the errors of its sources carried on (`parts`), plus
/// the random terms it adds at its own PE. Errors form a graph of shared nodes rather
/// than a map per register: copying each register's terms along every instruction made
/// the predictor quadratic in program length; the graph is summed per output once, by
/// a backward pass ([`Tracked::sums`]).
#[derive(Debug)]
struct Node {
    /// Creation order: parts are always older than the node.
    id: u64,
    parts: Vec<ErrRef>,
    /// Fixed-pattern gains: plane, coefficient, the value it multiplies.
    gains: Vec<(GainPlane, f64, Rc<Affine>)>,
    /// Constant-coefficient terms: variable and coefficient.
    consts: Vec<(Source, f64)>,
}

impl Drop for Node {
    // Long chains (one node per transfer) are freed without recursion.
    fn drop(&mut self) {
        let mut stack = std::mem::take(&mut self.parts);
        while let Some(r) = stack.pop() {
            if let Ok(mut n) = Rc::try_unwrap(r.node) {
                stack.append(&mut n.parts);
            }
        }
    }
}

/// The random error terms of one register summed per variable.
#[derive(Default)]
struct ErrorSums {
    /// `A_d(x)` per gain plane and PE `d`.
    gains: BTreeMap<(GainPlane, Offset), Affine>,
    /// Coefficient per constant-coefficient variable and PE.
    consts: BTreeMap<(Source, Offset), f64>,
}

/// One register's value and the error it carries.
#[derive(Clone, Debug, Default)]
struct Tracked {
    value: Affine,
    bias: Affine,
    /// The random error: a sum of node references.
    err: Vec<ErrRef>,
}

impl Tracked {
    fn exact(value: Affine) -> Tracked {
        Tracked {
            value,
            ..Tracked::default()
        }
    }

    fn add(&mut self, o: &Tracked, k: f64) {
        self.value.add(&o.value, k);
        self.bias.add(&o.bias, k);
        self.err.extend(o.err.iter().map(|r| ErrRef {
            coef: r.coef * k,
            ..r.clone()
        }));
    }

    fn shifted(&self, dr: i32, dc: i32) -> Tracked {
        Tracked {
            value: self.value.shifted(dr, dc),
            bias: self.bias.shifted(dr, dc),
            err: self
                .err
                .iter()
                .map(|r| ErrRef {
                    shift: (r.shift.0 + dr, r.shift.1 + dc),
                    ..r.clone()
                })
                .collect(),
        }
    }

    /// The error errors carry on: everything so far times `1 + gain`.
    fn scale_error(&mut self, k: f64) {
        self.bias.scale(k);
        self.err.iter_mut().for_each(|r| r.coef *= k);
    }

    /// The random terms summed per variable: each node's weight per shift is pushed
    /// from the newest node to the oldest (every node once), then its own terms are
    /// added at those weights.
    fn sums(&self) -> ErrorSums {
        let mut nodes: BTreeMap<u64, Rc<Node>> = BTreeMap::new();
        let mut stack: Vec<Rc<Node>> = self.err.iter().map(|r| Rc::clone(&r.node)).collect();
        while let Some(n) = stack.pop() {
            if nodes.contains_key(&n.id) {
                continue;
            }
            stack.extend(n.parts.iter().map(|p| Rc::clone(&p.node)));
            nodes.insert(n.id, n);
        }
        let mut weight: HashMap<u64, HashMap<Offset, f64>> = HashMap::new();
        for r in &self.err {
            *weight
                .entry(r.node.id)
                .or_default()
                .entry(r.shift)
                .or_insert(0.0) += r.coef;
        }
        let mut out = ErrorSums::default();
        let mut gains: BTreeMap<(GainPlane, Offset), (BTreeMap<Tap, f64>, f64)> = BTreeMap::new();
        for (id, n) in nodes.iter().rev() {
            let Some(w) = weight.remove(id) else {
                continue;
            };
            for p in &n.parts {
                let to = weight.entry(p.node.id).or_default();
                for (&(r, c), &k) in &w {
                    *to.entry((r + p.shift.0, c + p.shift.1)).or_insert(0.0) += k * p.coef;
                }
            }
            for (&(r, c), &k) in &w {
                for (plane, g, v) in &n.gains {
                    let a = gains.entry((*plane, (r, c))).or_default();
                    for &((z, vr, vc), x) in &v.terms {
                        *a.0.entry((z, vr + r, vc + c)).or_insert(0.0) += k * g * x;
                    }
                    a.1 += k * g * v.constant;
                }
                for (src, x) in &n.consts {
                    *out.consts.entry((*src, (r, c))).or_insert(0.0) += k * x;
                }
            }
        }
        out.gains = gains
            .into_iter()
            .map(|(key, (terms, constant))| {
                let terms = terms.into_iter().collect();
                (key, Affine { terms, constant })
            })
            .collect();
        out
    }
}

/// One error term as applied to a written value (a bus kind or an injection).
struct Term {
    gain: f64,
    offset: f64,
    pattern_gain: f64,
    pattern_offset: f64,
    noise: f64,
    noise_signal: f64,
}

impl Term {
    fn of_transfer(t: &Transfer, p: &Profile) -> Term {
        Term {
            gain: t.gain,
            offset: t.offset,
            pattern_gain: t.pattern * p.fixed_pattern.gain,
            pattern_offset: t.pattern * p.fixed_pattern.offset,
            noise: t.noise,
            noise_signal: t.noise_signal,
        }
    }

    fn of_injection(i: &Injection) -> Term {
        Term {
            gain: i.gain,
            offset: i.offset,
            pattern_gain: i.pattern_gain,
            pattern_offset: i.pattern_offset,
            noise: i.noise,
            noise_signal: i.noise_signal,
        }
    }
}

/// Temporal noise of one transfer: `N(0, noise^2 + noise_signal^2 v^2)`.
#[derive(Clone, Debug)]
struct TemporalVar {
    noise2: f64,
    signal2: f64,
    value: Rc<Affine>,
}

/// One value written, as seen from the PE that holds it (`value` moved by `shift`),
/// with the sums of its systematic error.
struct Write {
    value: Rc<Affine>,
    shift: Offset,
    /// Sum of the bias's pixel coefficients.
    bias_sum: f64,
    /// The bias's constant.
    bias_constant: f64,
}

/// One PE carrying values and errors through a program.
struct ErrorPe<'p> {
    profile: &'p Profile,
    general: Vec<Tracked>,
    news: Tracked,
    dac: i32,
    pix_reset: Option<f32>,
    temporal: Vec<TemporalVar>,
    /// Every value written so far with its systematic error.
    writes: Vec<Write>,
    /// Error nodes made so far.
    nodes: u64,
}

impl ErrorPe<'_> {
    fn value(&self, reg: Reg) -> Tracked {
        match reg {
            Reg::Gen(i) => self
                .general
                .get(usize::from(i))
                .cloned()
                .unwrap_or_default(),
            Reg::News => self.news.clone(),
            Reg::X(d) => {
                let (dr, dc) = d.step();
                self.news.shifted(dr, dc)
            }
            Reg::In => Tracked::exact(Affine {
                terms: Vec::new(),
                constant: f64::from(self.dac),
            }),
            Reg::Pix => match self.pix_reset {
                // Half the raw pixel, x / 2 + 64 (as in the symbolic executor).
                None => Tracked::exact(Affine {
                    terms: vec![((0, 0, 0), 0.5)],
                    constant: 64.0,
                }),
                Some(level) => Tracked::exact(Affine {
                    terms: Vec::new(),
                    constant: f64::from(level),
                }),
            },
        }
    }

    /// Applies one error term to `t` (written at this PE into offset slot `slot`).
    /// `v` is `t`'s value, shared.
    fn perturb(
        &mut self,
        t: &mut Tracked,
        v: &Rc<Affine>,
        term: &Term,
        plane: GainPlane,
        offset_src: Source,
    ) {
        t.scale_error(1.0 + term.gain);
        t.bias.add(v, term.gain);
        t.bias.constant += term.offset;
        let mut node = Node {
            id: self.nodes,
            parts: std::mem::take(&mut t.err),
            gains: Vec::new(),
            consts: Vec::new(),
        };
        self.nodes += 1;
        if term.pattern_gain != 0.0 {
            node.gains.push((plane, term.pattern_gain, Rc::clone(v)));
        }
        if term.pattern_offset != 0.0 {
            node.consts.push((offset_src, term.pattern_offset));
        }
        if term.noise != 0.0 || term.noise_signal != 0.0 {
            let id = self.temporal.len() as u32;
            self.temporal.push(TemporalVar {
                noise2: term.noise * term.noise,
                signal2: term.noise_signal * term.noise_signal,
                value: Rc::clone(v),
            });
            node.consts.push((Source::Temporal(id), 1.0));
        }
        t.err.push(ErrRef {
            node: Rc::new(node),
            coef: 1.0,
            shift: (0, 0),
        });
    }
}

fn slot(reg: Reg) -> u16 {
    match reg {
        Reg::Gen(i) => u16::from(i),
        _ => 256,
    }
}

impl Machine for ErrorPe<'_> {
    fn transfer(&mut self, dsts: &[Reg], srcs: &[Reg]) -> Result<(), MachineError> {
        let mut sum = Tracked::default();
        for s in srcs {
            sum.add(&self.value(*s), 1.0);
        }
        let n = dsts.len().max(1);
        let mut v = Tracked::default();
        v.add(&sum, -1.0 / n as f64);
        let profile = self.profile;
        let kind = Term::of_transfer(profile.transfer.kind(BusKind::of(n, srcs.len())), profile);
        for d in dsts {
            let mut t = match d {
                Reg::X(dir) => {
                    let (dr, dc) = dir.step();
                    v.shifted(-dr, -dc)
                }
                _ => v.clone(),
            };
            let reg = if matches!(d, Reg::X(_)) {
                Reg::News
            } else {
                *d
            };
            let value = Rc::new(t.value.clone());
            self.perturb(
                &mut t,
                &value,
                &kind,
                GainPlane::Chip,
                Source::Pattern(slot(reg)),
            );
            // Recorded as seen from the PE that holds it.
            let (dr, dc) = match d {
                Reg::X(dir) => dir.step(),
                _ => (0, 0),
            };
            self.writes.push(Write {
                value: Rc::clone(&value),
                shift: (dr, dc),
                bias_sum: t.bias.sum(),
                bias_constant: t.bias.constant,
            });
            if srcs.contains(&Reg::In) {
                let load = Term::of_injection(&profile.load);
                self.perturb(&mut t, &value, &load, GainPlane::Load, Source::Load);
            }
            if srcs.contains(&Reg::Pix) {
                let cap = Term::of_injection(&profile.capture);
                self.perturb(&mut t, &value, &cap, GainPlane::Capture, Source::Capture);
            }
            match reg {
                Reg::Gen(i) => {
                    if let Some(g) = self.general.get_mut(usize::from(i)) {
                        *g = t;
                    }
                }
                Reg::News => self.news = t,
                other => return Err(MachineError::CannotReceive(other)),
            }
        }
        if srcs.contains(&Reg::Pix) {
            self.pix_reset = None;
        }
        Ok(())
    }

    fn flag_where(&mut self, _srcs: &[Reg]) -> Result<(), MachineError> {
        Err(MachineError::FlagUnpredicted)
    }

    fn flag_all(&mut self) {}

    fn reset_pix(&mut self, level: f32) {
        self.pix_reset = Some(level);
    }

    fn set_dac(&mut self, value: i32) {
        self.dac = value;
    }

    fn digital(&mut self, _op: &DigitalOp) -> Result<(), MachineError> {
        Ok(())
    }
}

/// Why a program's error cannot be predicted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: `{statement}`: {cause}")]
pub struct PredictError {
    /// Statement that could not be followed.
    pub(crate) pos: Pos,
    /// Its text.
    pub(crate) statement: String,
    /// Why.
    pub(crate) cause: MachineError,
}

/// The error structure of a program's registers after it ran: input-independent, so it
/// can be evaluated under several input models.
pub(crate) struct ErrorModel {
    general: Vec<Tracked>,
    writes: Vec<Write>,
    temporal: Vec<TemporalVar>,
    readout_var: f64,
}

/// Predicted error of one output.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Predicted {
    /// Predicted root-mean-square error.
    pub rmse: f64,
    /// Predicted mean error (result minus exact).
    pub bias: f64,
}

impl Predicted {
    /// The summed mean squared error of several outputs (what the code generator's
    /// error objective ranks programs by, before saturation).
    pub fn summed_mse(outputs: &[Predicted]) -> f64 {
        outputs.iter().map(|p| p.rmse * p.rmse).sum()
    }
}

/// Follows `program` (input plane `z` in the wiring's `z`-th input register, every
/// other register zero and exact) through the error model of `profile`.
#[cfg(test)]
pub(crate) fn analyse(
    program: &Program,
    wiring: Wiring,
    profile: &Profile,
) -> Result<ErrorModel, PredictError> {
    analyse_planes(program, &wiring.inputs(), wiring.general, profile)
}

/// [`analyse`] of a program reading several input planes, plane `z` in `inputs[z]`
/// (every other register zero and exact), on a device of `general` general registers.
/// Values made from `PIX` are held on plane 0, as the multi-plane proof holds them.
pub(crate) fn analyse_planes(
    program: &Program,
    inputs: &[Reg],
    general: usize,
    profile: &Profile,
) -> Result<ErrorModel, PredictError> {
    let mut pe = ErrorPe {
        profile,
        general: vec![Tracked::default(); general],
        news: Tracked::default(),
        dac: 0,
        pix_reset: None,
        temporal: Vec::new(),
        writes: Vec::new(),
        nodes: 0,
    };
    for (z, &input) in inputs.iter().enumerate() {
        if let (Reg::Gen(i), Ok(z)) = (input, u16::try_from(z)) {
            if let Some(g) = pe.general.get_mut(usize::from(i)) {
                *g = Tracked::exact(Affine {
                    terms: vec![((z, 0, 0), 1.0)],
                    constant: 0.0,
                });
            }
        }
    }
    for s in &program.stmts {
        for op in &s.ops {
            step(&mut pe, op).map_err(|cause| PredictError {
                pos: s.pos,
                statement: s.to_string(),
                cause,
            })?;
        }
    }
    let r = &profile.readout;
    let readout_var = if r.enabled {
        r.noise * r.noise
            + r.pattern_offset * r.pattern_offset
            + if r.quantise { 1.0 / 12.0 } else { 0.0 }
    } else {
        0.0
    };
    Ok(ErrorModel {
        general: pe.general,
        writes: pe.writes,
        temporal: pe.temporal,
        readout_var,
    })
}

impl ErrorModel {
    /// Largest pixel offset any error term of `reg` depends on (the lags
    /// [`InputStats::of_images`] must measure are up to twice this).
    pub(crate) fn radius(&self, reg: Reg) -> i32 {
        let Some(t) = self.tracked(reg) else {
            return 0;
        };
        let gains = t
            .sums()
            .gains
            .values()
            .map(Affine::radius)
            .max()
            .unwrap_or(0);
        t.value.radius().max(t.bias.radius()).max(gains)
    }

    /// What saturation at `+-limit` costs where the image is smooth: over every value
    /// written (value plus its systematic error, the input locally constant and uniform
    /// over `range`), the mean squared excess beyond the limit, summed. Values whose
    /// exact range is beyond the limit and `skip` says are unavoidable (the outputs that
    /// cannot fit) are left out.
    pub(crate) fn smooth_clipping(
        &self,
        range: InputRange,
        limit: f64,
        skip: &dyn Fn(&Terms) -> bool,
    ) -> f64 {
        const SAMPLES: usize = 32;
        let mut total = 0.0;
        for w in &self.writes {
            let v = &w.value;
            let (sv, sb) = (v.sum(), w.bias_sum);
            let peak = v.terms.iter().map(|(_, c)| c.abs()).sum::<f64>() * range.bound();
            if peak > limit && skip(&v.shifted(w.shift.0, w.shift.1).terms) {
                continue;
            }
            for i in 0..SAMPLES {
                let x = range.lo + (range.hi - range.lo) * (i as f64 + 0.5) / SAMPLES as f64;
                let y = (sv + sb) * x + v.constant + w.bias_constant;
                let e = (y.abs() - limit).max(0.0);
                total += e * e / SAMPLES as f64;
            }
        }
        total
    }

    fn tracked(&self, reg: Reg) -> Option<&Tracked> {
        match reg {
            Reg::Gen(i) => self.general.get(usize::from(i)),
            _ => None,
        }
    }

    /// The predicted bias and RMSE of `reg` as read out, for inputs with moments
    /// `stats`.
    pub(crate) fn predict(&self, reg: Reg, stats: &InputStats) -> Predicted {
        let Some(t) = self.tracked(reg) else {
            return Predicted {
                rmse: 0.0,
                bias: 0.0,
            };
        };
        let bias = stats.expect(&t.bias);
        let mut mse = stats.expect_square(&t.bias) + self.readout_var;
        let sums = t.sums();
        mse += sums
            .gains
            .values()
            .map(|a| stats.expect_square(a))
            .sum::<f64>();
        for (&(src, _), &c) in &sums.consts {
            let var = match src {
                Source::Temporal(id) => self.temporal.get(id as usize).map_or(0.0, |v| {
                    v.noise2 + v.signal2 * stats.expect_square(&v.value)
                }),
                _ => 1.0,
            };
            mse += c * c * var;
        }
        Predicted {
            rmse: mse.max(0.0).sqrt(),
            bias,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{parse_program, Device};

    fn model(text: &str, profile: &Profile) -> ErrorModel {
        let p = parse_program(text, Device::default()).unwrap();
        analyse(&p, Wiring::new(Reg::A, 6), profile).unwrap()
    }

    #[test]
    fn ideal_profile_predicts_no_error() {
        let ideal = Profile::builtin("ideal").unwrap();
        let m = model("divq(B, A); movx(C, B, east); add(D, B, C)", &ideal);
        let s = InputStats::of_bundled_images(InputRange::default());
        assert_eq!(
            m.predict(Reg::D, &s),
            Predicted {
                rmse: 0.0,
                bias: 0.0
            }
        );
    }

    #[test]
    fn offsets_and_gains_follow_the_linear_structure() {
        // Single-source transfers with gain -10 % and offset 2, against hand arithmetic.
        let mut p = Profile::default();
        p.transfer.bus_1.gain = -0.1;
        p.transfer.bus_1.offset = 2.0;
        // mov(B, A) is two single-source transfers: NEWS = -A, B = -NEWS.
        let m = model("mov(B, A)", &p);
        let s = InputStats {
            mean: 10.0,
            square: 100.0,
            lags: HashMap::new(),
            cross: HashMap::new(),
        };
        // NEWS = -0.9 x + 2; B = 0.9 (0.9 x - 2) + 2 = 0.81 x + 0.2: error -0.19 x + 0.2.
        let got = m.predict(Reg::B, &s);
        assert!((got.bias - (-0.19 * 10.0 + 0.2)).abs() < 1e-12, "{got:?}");
        let mse: f64 = 0.19 * 0.19 * 100.0 - 2.0 * 0.19 * 0.2 * 10.0 + 0.04;
        assert!((got.rmse - mse.sqrt()).abs() < 1e-12, "{got:?}");
    }

    #[test]
    fn clipping_counts_systematic_error_that_pushes_beyond_the_limit() {
        // mov(B, A) = two single-source transfers, each with gain g: B = (1 + g)^2 x.
        let range = InputRange::default();
        let none = |_: &Terms| false;
        let mut p = Profile::default();
        p.transfer.bus_1.gain = -0.05;
        // Values shrink: nothing reaches the limit.
        assert_eq!(
            model("mov(B, A)", &p).smooth_clipping(range, 128.0, &none),
            0.0
        );
        // Values grow by 10 %: the brightest and darkest inputs pass +-128.
        p.transfer.bus_1.gain = 0.05;
        let c = model("mov(B, A)", &p).smooth_clipping(range, 128.0, &none);
        assert!(c > 1.0 && c < 100.0, "{c}");
        // Every value beyond the limit counts unless the caller skips it.
        let ideal = Profile::builtin("ideal").unwrap();
        let m = model("movx(C, A, east); add(B, A, C)", &ideal);
        assert!(m.smooth_clipping(range, 128.0, &none) > 1000.0);
        assert_eq!(m.smooth_clipping(range, 128.0, &|_| true), 0.0);
    }

    #[test]
    fn image_moments_match_direct_sums() {
        let img = Array2::from_shape_fn((8, 8), |(r, c)| (r * 8 + c) as f64);
        let s = InputStats::of_images(std::slice::from_ref(&img), 1, 1);
        let inner: Vec<f64> = (1..7)
            .flat_map(|r| (1..7).map(move |c| (r * 8 + c) as f64))
            .collect();
        assert!((s.mean - inner.iter().sum::<f64>() / 36.0).abs() < 1e-12);
        let east: f64 = (1..7)
            .flat_map(|r| (1..6).map(move |c| (r, c)))
            .map(|(r, c)| img[[r, c]] * img[[r, c + 1]])
            .sum::<f64>()
            / 30.0;
        assert!((s.second((0, 1)) - east).abs() < 1e-9);
        assert_eq!(s.second((0, 1)), s.second((0, -1)));
    }
}
