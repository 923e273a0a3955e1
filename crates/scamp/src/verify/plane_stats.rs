//! The error predictor's input model over several input planes (the channels of a
//! layer, each in its own register).
//!
//! Every plane has the moments of [`InputStats`] (mean, square and lags): a spec gives
//! one input range for all its inputs. Between two planes the model is either
//! independent, `E[x_a(p) x_b(q)] = mean^2` (what `compile` predicts with: the channels
//! taken as different images of the bundled set), or measured at each lag
//! ([`InputStats::of_frames`], what `check` predicts with, from the very images it feeds
//! each input).

use super::predict::{InputStats, Terms, IMAGE_REACH};
use super::symbolic::Offset;
use ndarray::Array2;
use std::collections::HashMap;

impl InputStats {
    /// `E[x_a(p) x_b(p + d)]`: the plane's own lag for `a == b`, else the measured
    /// cross moment (a lag beyond those measured takes the farthest one), else
    /// independence (`mean^2`).
    pub(crate) fn cross_second(&self, a: u16, b: u16, d: Offset) -> f64 {
        if a == b {
            return self.second(d);
        }
        if a > b {
            return self.cross_second(b, a, (-d.0, -d.1));
        }
        let r = IMAGE_REACH as i32;
        self.cross
            .get(&(a, b, d))
            .or_else(|| {
                self.cross
                    .get(&(a, b, (d.0.clamp(-r, r), d.1.clamp(-r, r))))
            })
            .copied()
            .unwrap_or(self.mean * self.mean)
    }

    /// Adds `E[(sum u x_z(p + o))^2]` of `terms` over several planes to `s`: each
    /// plane's own square, then twice each pair of planes' cross term.
    pub(crate) fn add_planes_square(&self, s: &mut f64, terms: &Terms) {
        let planes: Vec<&Terms> = terms.chunk_by(|x, y| x.0 .0 == y.0 .0).collect();
        for p in &planes {
            let sum = p.iter().map(|t| t.1).sum();
            self.add_plane_square(s, p, sum);
        }
        for (i, a) in planes.iter().enumerate() {
            for b in planes.iter().skip(i + 1) {
                *s += 2.0 * self.cross_term(a, b);
            }
        }
    }

    /// `E[(sum_a u x_za)(sum_b v x_zb)]` of the terms of two different planes.
    fn cross_term(&self, a: &Terms, b: &Terms) -> f64 {
        let (Some(&((za, ..), _)), Some(&((zb, ..), _))) = (a.first(), b.first()) else {
            return 0.0;
        };
        let measured = self
            .cross
            .keys()
            .any(|&(x, y, _)| (x, y) == (za.min(zb), za.max(zb)));
        if !measured {
            let (sa, sb): (f64, f64) = (a.iter().map(|t| t.1).sum(), b.iter().map(|t| t.1).sum());
            return self.mean * self.mean * sa * sb;
        }
        let mut s = 0.0;
        for &((_, r1, c1), u) in a {
            for &((_, r2, c2), v) in b {
                s += u * v * self.cross_second(za, zb, (r2 - r1, c2 - c1));
            }
        }
        s
    }

    /// The moments of `planes` input planes that all hold one picture (what an exported
    /// program gives every input: one capture, copied): between any two planes, each lag
    /// up to [`IMAGE_REACH`] has the picture's own moment, so their signals and the
    /// errors they carry add in amplitude rather than in power.
    pub(crate) fn one_scene(mut self, planes: usize) -> InputStats {
        let r = IMAGE_REACH as i32;
        let planes = u16::try_from(planes).unwrap_or(u16::MAX);
        for a in 0..planes {
            for b in a + 1..planes {
                for dr in -r..=r {
                    for dc in -r..=r {
                        let m = self.second((dr, dc));
                        self.cross.insert((a, b, (dr, dc)), m);
                    }
                }
            }
        }
        self
    }

    /// The moments of frames of several planes (`frames[j][z]`, full-range values)
    /// over the pixels at least `border` from the edge: each plane's own moments pooled
    /// over every plane and frame ([`InputStats::of_images`]), and the cross moments of
    /// every pair of planes at lags up to `reach` in each direction, averaged over the
    /// frames.
    pub(crate) fn of_frames(
        frames: &[Vec<Array2<f64>>],
        border: usize,
        reach: usize,
    ) -> InputStats {
        let all: Vec<Array2<f64>> = frames.iter().flatten().cloned().collect();
        let mut stats = InputStats::of_images(&all, border, reach);
        let r = reach as i32;
        let mut sums: HashMap<(u16, u16, Offset), (f64, f64)> = HashMap::new();
        for frame in frames {
            for (a, xa) in frame.iter().enumerate() {
                for (b, xb) in frame.iter().enumerate().skip(a + 1) {
                    let (Ok(a), Ok(b)) = (u16::try_from(a), u16::try_from(b)) else {
                        continue;
                    };
                    for dr in -r..=r {
                        for dc in -r..=r {
                            let e = sums.entry((a, b, (dr, dc))).or_insert((0.0, 0.0));
                            let (s, n) = lag_sum(xa, xb, border, (dr, dc));
                            e.0 += s;
                            e.1 += n;
                        }
                    }
                }
            }
        }
        stats.cross = sums
            .into_iter()
            .filter(|&(_, (_, n))| n > 0.0)
            .map(|(k, (s, n))| (k, s / n))
            .collect();
        stats
    }
}

/// `sum x(p) y(p + d)` over the pixels `p` with `p` and `p + d` at least `border` from
/// the edge, and how many.
fn lag_sum(x: &Array2<f64>, y: &Array2<f64>, border: usize, d: Offset) -> (f64, f64) {
    let (h, w) = x.dim();
    let (b, hh, ww) = (
        border as i64,
        h.min(y.dim().0) as i64,
        w.min(y.dim().1) as i64,
    );
    let (dr, dc) = (i64::from(d.0), i64::from(d.1));
    let (mut s, mut n) = (0.0, 0.0);
    for r in (b - dr.min(0)).max(b)..(hh - b - dr.max(0)).max(b) {
        for c in (b - dc.min(0)).max(b)..(ww - b - dc.max(0)).max(b) {
            s += x[[r as usize, c as usize]] * y[[(r + dr) as usize, (c + dc) as usize]];
            n += 1.0;
        }
    }
    (s, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::predict::Affine;

    fn flat(z: u16, v: f64) -> Affine {
        Affine {
            terms: vec![((z, 0, 0), v)],
            constant: 0.0,
        }
    }

    #[test]
    fn independent_planes_add_their_variances_around_the_common_mean() {
        let s = InputStats {
            mean: 2.0,
            square: 10.0,
            lags: HashMap::new(),
            cross: HashMap::new(),
        };
        // E[(x_0 + x_1)^2] = 10 + 10 + 2 * 2 * 2.
        let sum = Affine {
            terms: vec![((0, 0, 0), 1.0), ((1, 0, 0), 1.0)],
            constant: 0.0,
        };
        assert_eq!(s.expect_square(&sum), 28.0);
        // One plane alone, whichever it is, is the single-input figure.
        assert_eq!(s.expect_square(&flat(1, 3.0)), 90.0);
        assert_eq!(s.expect_square(&flat(0, 3.0)), 90.0);
    }

    #[test]
    fn frame_moments_match_direct_sums() {
        let a = Array2::from_shape_fn((6, 6), |(r, c)| (r * 6 + c) as f64);
        let b = Array2::from_shape_fn((6, 6), |(r, c)| (r as f64) - (c as f64) * 2.0);
        let s = InputStats::of_frames(&[vec![a.clone(), b.clone()]], 1, 1);
        // E[a(p) b(p + (0, 1))] over p with both inside the border.
        let want: Vec<f64> = (1..5)
            .flat_map(|r| (1..4).map(move |c| (r, c)))
            .map(|(r, c)| a[[r, c]] * b[[r, c + 1]])
            .collect();
        let mean = want.iter().sum::<f64>() / want.len() as f64;
        assert!((s.cross_second(0, 1, (0, 1)) - mean).abs() < 1e-9);
        assert_eq!(s.cross_second(1, 0, (0, -1)), s.cross_second(0, 1, (0, 1)));
        // Plane 1's own moments are pooled with plane 0's.
        let own = InputStats::of_images(&[a, b], 1, 1);
        assert_eq!(s.second((0, 1)), own.second((0, 1)));
    }
}
