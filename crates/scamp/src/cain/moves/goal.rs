//! Atoms, goals and goal bags.
//!
//! A goal is a kernel scaled by 2^D: an integer count of signed atoms per pixel offset.
//! Offsets are `(row, col)` with row + south and col + east, the same convention as the
//! symbolic verifier, so a goal is exactly the [`crate::verify::symbolic::LinComb`] a
//! register must hold, times 2^D. A goal bag is the set of goals that must be live in
//! registers at one point of the program.

use crate::isa::Dir;
use std::fmt;
use std::hash::{Hash, Hasher};

/// One offset of a goal with its signed atom count (never zero inside a goal).
///
/// Terms order by (channel, row, col): a goal on input channel 0 alone keeps the order
/// (and, see the `Hash` impl, the fingerprint) it had before goals carried channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Term {
    /// Input channel (plane) the atoms are of: Cain's z coordinate.
    pub(crate) z: u8,
    /// Row offset (+ south).
    pub(crate) r: i8,
    /// Column offset (+ east).
    pub(crate) c: i8,
    /// Signed number of atoms at this offset.
    pub(crate) n: i32,
}

impl Hash for Term {
    /// Channel 0 hashes as the (row, col, count) it was before channels: single-input
    /// searches keep their fingerprints, hence their seen table and their programs.
    fn hash<H: Hasher>(&self, h: &mut H) {
        if self.z != 0 {
            self.z.hash(h);
        }
        self.r.hash(h);
        self.c.hash(h);
        self.n.hash(h);
    }
}

impl Term {
    /// The term's position: (channel, row, col), the order goals keep.
    pub(crate) fn at(&self) -> (u8, i8, i8) {
        (self.z, self.r, self.c)
    }
}

/// A goal: atom counts by offset, sorted by offset, no zero counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Goal(pub Vec<Term>);

/// A translation that one neighbour instruction applies: `movx` moves one step,
/// `mov2x` two (straight or diagonal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Shift {
    /// Row translation of the atoms (+ south).
    pub(crate) dr: i8,
    /// Column translation of the atoms (+ east).
    pub(crate) dc: i8,
    /// First direction the value comes from.
    pub(crate) d1: Dir,
    /// Second direction for two-step instructions.
    pub(crate) d2: Option<Dir>,
}

const fn one(d: Dir, dr: i8, dc: i8) -> Shift {
    Shift {
        dr,
        dc,
        d1: d,
        d2: None,
    }
}

const fn two(d1: Dir, d2: Dir, dr: i8, dc: i8) -> Shift {
    Shift {
        dr,
        dc,
        d1,
        d2: Some(d2),
    }
}

/// Every translation a single instruction can apply: four one-step (`movx`) and eight
/// two-step (`mov2x`) ones. `movx(y, x, east)` makes y(p) = x(p + east), so the atoms
/// of x move by the step of `east`.
pub(crate) const SHIFTS: [Shift; 12] = [
    one(Dir::North, -1, 0),
    one(Dir::East, 0, 1),
    one(Dir::South, 1, 0),
    one(Dir::West, 0, -1),
    two(Dir::North, Dir::North, -2, 0),
    two(Dir::East, Dir::East, 0, 2),
    two(Dir::South, Dir::South, 2, 0),
    two(Dir::West, Dir::West, 0, -2),
    two(Dir::North, Dir::East, -1, 1),
    two(Dir::North, Dir::West, -1, -1),
    two(Dir::South, Dir::East, 1, 1),
    two(Dir::South, Dir::West, 1, -1),
];

impl Shift {
    /// Whether a one-step instruction (`movx`, `addx`, `subx`) applies it.
    pub(crate) fn is_single(self) -> bool {
        self.d2.is_none()
    }

    /// The translation undoing this one, as `(dr, dc)`.
    pub(crate) fn inverse(self) -> (i8, i8) {
        (-self.dr, -self.dc)
    }
}

impl Goal {
    /// The empty goal (what `res` produces).
    pub(crate) fn empty() -> Goal {
        Goal(Vec::new())
    }

    /// `n` atoms at offset `(r, c)` of channel 0.
    #[cfg(test)]
    pub(crate) fn single(r: i8, c: i8, n: i32) -> Goal {
        Goal::single_on(0, r, c, n)
    }

    /// `n` atoms at offset `(r, c)` of channel `z`.
    pub(crate) fn single_on(z: u8, r: i8, c: i8, n: i32) -> Goal {
        if n == 0 {
            Goal::empty()
        } else {
            Goal(vec![Term { z, r, c, n }])
        }
    }

    /// Input `z` as a goal: 2^`depth` atoms at the centre of channel `z`.
    pub(crate) fn input(z: u8, depth: u32) -> Goal {
        Goal::single_on(z, 0, 0, 1 << depth)
    }

    /// The channels the goal has atoms on, ascending.
    pub(crate) fn channels(&self) -> Vec<u8> {
        let mut v: Vec<u8> = self.0.iter().map(|t| t.z).collect();
        v.dedup();
        v
    }

    /// The atoms on channel `z` only.
    pub(crate) fn channel(&self, z: u8) -> Goal {
        Goal(self.0.iter().copied().filter(|t| t.z == z).collect())
    }

    /// Builds a goal from unsorted terms, merging equal offsets and dropping zeros.
    pub(crate) fn from_terms(mut terms: Vec<Term>) -> Goal {
        terms.sort_unstable_by_key(Term::at);
        let mut out: Vec<Term> = Vec::with_capacity(terms.len());
        for t in terms {
            match out.last_mut() {
                Some(last) if last.at() == t.at() => last.n += t.n,
                _ => out.push(t),
            }
        }
        out.retain(|t| t.n != 0);
        Goal(out)
    }

    /// Whether the goal has no atoms.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Number of atoms (sum of absolute counts).
    pub(crate) fn atoms(&self) -> i64 {
        self.0.iter().map(|t| i64::from(t.n.unsigned_abs())).sum()
    }

    /// Number of offsets with atoms.
    pub(crate) fn support(&self) -> usize {
        self.0.len()
    }

    /// Signed sum of the counts.
    pub(crate) fn sum(&self) -> i64 {
        self.0.iter().map(|t| i64::from(t.n)).sum()
    }

    /// The count at an offset of channel 0.
    #[cfg(test)]
    pub(crate) fn get(&self, r: i8, c: i8) -> i32 {
        self.get_on(0, r, c)
    }

    /// The count at an offset of channel `z`.
    pub(crate) fn get_on(&self, z: u8, r: i8, c: i8) -> i32 {
        match self.0.binary_search_by_key(&(z, r, c), Term::at) {
            Ok(i) => self.0[i].n,
            Err(_) => 0,
        }
    }

    /// The goal translated by `(dr, dc)`; `None` if an offset would leave the i8 range.
    pub(crate) fn translated(&self, dr: i8, dc: i8) -> Option<Goal> {
        let mut v = Vec::with_capacity(self.0.len());
        for t in &self.0 {
            v.push(Term {
                r: t.r.checked_add(dr)?,
                c: t.c.checked_add(dc)?,
                ..*t
            });
        }
        // A translation keeps the (channel, row, col) order.
        Some(Goal(v))
    }

    /// The goal as moved by `s` (what `movx`/`mov2x` produce from it).
    pub(crate) fn shifted(&self, s: Shift) -> Option<Goal> {
        self.translated(s.dr, s.dc)
    }

    /// The goal that `s` moves onto this one.
    pub(crate) fn unshifted(&self, s: Shift) -> Option<Goal> {
        let (dr, dc) = s.inverse();
        self.translated(dr, dc)
    }

    /// Every count negated.
    pub(crate) fn neg(&self) -> Goal {
        Goal(self.0.iter().map(|t| Term { n: -t.n, ..*t }).collect())
    }

    /// Every count times `k` (k != 0); `None` on overflow.
    pub(crate) fn scaled(&self, k: i32) -> Option<Goal> {
        let mut v = Vec::with_capacity(self.0.len());
        for t in &self.0 {
            v.push(Term {
                n: t.n.checked_mul(k)?,
                ..*t
            });
        }
        Some(Goal(v))
    }

    /// Half of every count, if all are even.
    pub(crate) fn halved(&self) -> Option<Goal> {
        if self.0.iter().all(|t| t.n % 2 == 0) {
            Some(Goal(
                self.0.iter().map(|t| Term { n: t.n / 2, ..*t }).collect(),
            ))
        } else {
            None
        }
    }

    /// `self + k * other` (sorted merge).
    pub(crate) fn combine(&self, other: &Goal, k: i32) -> Goal {
        let (a, b) = (&self.0, &other.0);
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let take_a = j >= b.len() || (i < a.len() && a[i].at() < b[j].at());
            let take_b = i >= a.len() || (j < b.len() && b[j].at() < a[i].at());
            if take_a {
                out.push(a[i]);
                i += 1;
            } else if take_b {
                out.push(Term {
                    n: b[j].n.saturating_mul(k),
                    ..b[j]
                });
                j += 1;
            } else {
                let n = a[i].n.saturating_add(b[j].n.saturating_mul(k));
                if n != 0 {
                    out.push(Term { n, ..a[i] });
                }
                i += 1;
                j += 1;
            }
        }
        Goal(out)
    }

    /// The atoms of `self + k x other` with `other` translated by `(dr, dc)`, counted
    /// without making the goal: the generator tries many such sums per goal and keeps
    /// only the smaller ones. Counts saturate as in [`Goal::combine`].
    pub(crate) fn combined_atoms(&self, other: &Goal, k: i32, dr: i8, dc: i8) -> i64 {
        let (a, b) = (&self.0, &other.0);
        let at = |t: &Term| (t.z, i16::from(t.r), i16::from(t.c));
        let moved = |t: &Term| {
            (
                t.z,
                i16::from(t.r) + i16::from(dr),
                i16::from(t.c) + i16::from(dc),
            )
        };
        let (mut i, mut j, mut total) = (0, 0, 0i64);
        while i < a.len() || j < b.len() {
            let n = match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if at(x) == moved(y) => {
                    i += 1;
                    j += 1;
                    x.n.saturating_add(y.n.saturating_mul(k))
                }
                (Some(x), Some(y)) if at(x) < moved(y) => {
                    i += 1;
                    x.n
                }
                (Some(x), None) => {
                    i += 1;
                    x.n
                }
                (_, Some(y)) => {
                    j += 1;
                    y.n.saturating_mul(k)
                }
                (None, None) => break,
            };
            total += i64::from(n.unsigned_abs());
        }
        total
    }

    /// `self + other`.
    pub(crate) fn plus(&self, other: &Goal) -> Goal {
        self.combine(other, 1)
    }

    /// `self - other`.
    pub(crate) fn minus(&self, other: &Goal) -> Goal {
        self.combine(other, -1)
    }

    /// Number of times 2 divides every count (31 for the empty goal).
    pub(crate) fn two_adic(&self) -> u32 {
        self.0
            .iter()
            .map(|t| t.n.trailing_zeros())
            .min()
            .unwrap_or(31)
    }

    /// Halvings needed to make this goal from `2^depth` atoms at the centre: the
    /// depth of the largest denominator among its coefficients.
    pub(crate) fn level(&self, depth: u32) -> u32 {
        depth.saturating_sub(self.two_adic())
    }

    /// The positive atoms only.
    pub(crate) fn positive_part(&self) -> Goal {
        Goal(self.0.iter().copied().filter(|t| t.n > 0).collect())
    }

    /// The negative atoms only.
    pub(crate) fn negative_part(&self) -> Goal {
        Goal(self.0.iter().copied().filter(|t| t.n < 0).collect())
    }

    /// Atom-weighted centre of the offsets (0,0 for the empty goal).
    pub(crate) fn centroid(&self) -> (f32, f32) {
        let w = self.atoms() as f32;
        if w == 0.0 {
            return (0.0, 0.0);
        }
        let (mut r, mut c) = (0.0f32, 0.0f32);
        for t in &self.0 {
            let a = t.n.unsigned_abs() as f32;
            r += a * f32::from(t.r);
            c += a * f32::from(t.c);
        }
        (r / w, c / w)
    }

    /// A key equal for goals that are translations of each other (same shape and
    /// counts): the goal moved so that its first offset is at the origin.
    pub(crate) fn shape(&self) -> Goal {
        match self.0.first() {
            None => Goal::empty(),
            Some(t) => {
                let (dr, dc) = (t.r, t.c);
                Goal(
                    self.0
                        .iter()
                        .map(|u| Term {
                            r: u.r.wrapping_sub(dr),
                            c: u.c.wrapping_sub(dc),
                            ..*u
                        })
                        .collect(),
                )
            }
        }
    }

    /// The shape up to sign and powers of two: goals related by moves, negation and
    /// halving/doubling share this key.
    pub(crate) fn family(&self) -> Goal {
        let s = self.shape();
        let k = s.two_adic().min(30);
        let sign = if s.0.first().is_some_and(|t| t.n < 0) {
            -1
        } else {
            1
        };
        Goal(
            s.0.iter()
                .map(|t| Term {
                    n: sign * (t.n >> k),
                    ..*t
                })
                .collect(),
        )
    }

    /// A 64-bit fingerprint, stable across runs (used by the shared seen table).
    pub(crate) fn fingerprint(&self) -> u64 {
        fingerprint_of(self)
    }
}

impl fmt::Display for Goal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("{}");
        }
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|t| match t.z {
                0 => format!("{}@({},{})", t.n, t.r, t.c),
                z => format!("{}@{z}:({},{})", t.n, t.r, t.c),
            })
            .collect();
        write!(f, "{{{}}}", parts.join(" "))
    }
}

/// A goal bag: the sorted set of goals live at one point of the program.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Bag(pub Vec<Goal>);

impl Bag {
    /// A bag from goals in any order (duplicates merged: one register suffices).
    pub(crate) fn new(mut goals: Vec<Goal>) -> Bag {
        goals.sort_unstable();
        goals.dedup();
        Bag(goals)
    }

    /// Whether `g` is in the bag.
    pub(crate) fn contains(&self, g: &Goal) -> bool {
        self.0.binary_search(g).is_ok()
    }

    /// Number of goals.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// `(self - outs) + ins`.
    pub(crate) fn replace(&self, outs: &[Goal], ins: &[Goal]) -> Bag {
        let mut v: Vec<Goal> = self
            .0
            .iter()
            .filter(|g| !outs.contains(g))
            .cloned()
            .collect();
        v.extend(ins.iter().cloned());
        Bag::new(v)
    }

    /// Total atoms over all goals.
    pub(crate) fn atoms(&self) -> i64 {
        self.0.iter().map(Goal::atoms).sum()
    }

    /// A 64-bit fingerprint, stable across runs.
    pub(crate) fn fingerprint(&self) -> u64 {
        fingerprint_of(self)
    }
}

impl fmt::Display for Bag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        write!(f, "[{}]", parts.join(", "))
    }
}

/// A 64-bit fingerprint of `x`: rustc's Fx hash (rustc-hash 1.1), stable across runs,
/// with a final avalanche because the seen table shards by the top bits and hashes by
/// the fingerprint as it stands (Fx alone leaves them weakly mixed for small keys).
pub(crate) fn fingerprint_of<T: Hash + ?Sized>(x: &T) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    x.hash(&mut h);
    let mut x = h.finish();
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x
}

/// Goals written as grids of coefficients, for the search's unit tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::{Goal, Term};

    /// A goal from a grid of coefficients whose middle entry is offset (0, 0).
    pub(crate) fn grid(rows: &[&[i32]]) -> Goal {
        let (h, w) = (rows.len() as i8, rows.first().map_or(0, |r| r.len()) as i8);
        let mut t = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            for (j, &n) in r.iter().enumerate() {
                t.push(Term {
                    z: 0,
                    r: i as i8 - (h - 1) / 2,
                    c: j as i8 - (w - 1) / 2,
                    n,
                });
            }
        }
        Goal::from_terms(t)
    }

    /// A one-row goal centred on its middle entry.
    pub(crate) fn row(v: &[i32]) -> Goal {
        grid(&[v])
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{grid, row};
    use super::*;

    #[test]
    fn combined_atoms_counts_the_goal_combine_makes() {
        let goals = [
            grid(&[&[1, -2, 0], &[3, 4, -1], &[0, 2, 5]]),
            grid(&[&[0, 1, 0], &[-1, 4, -1], &[0, 1, 0]]),
            row(&[1, 2, 1]),
            row(&[-3, 0, 0, 2, 7]),
            Goal::empty(),
        ];
        for a in &goals {
            for b in &goals {
                for k in [-2, -1, 1, 3] {
                    for s in SHIFTS {
                        let made = b.shifted(s).map(|m| a.combine(&m, k).atoms());
                        assert_eq!(made, Some(a.combined_atoms(b, k, s.dr, s.dc)));
                    }
                    assert_eq!(a.combine(b, k).atoms(), a.combined_atoms(b, k, 0, 0));
                }
            }
        }
        // Equal goals cancel.
        assert_eq!(goals[0].combined_atoms(&goals[0], -1, 0, 0), 0);
    }

    #[test]
    fn arithmetic_and_families() {
        let g = row(&[1, 2, 1]);
        assert_eq!(g.atoms(), 4);
        assert_eq!(g.level(4), 4);
        assert_eq!(g.scaled(2).map(|x| x.level(4)), Some(3));
        let e = g.shifted(SHIFTS[1]).unwrap_or_default();
        assert_eq!(e.get(0, 2), 1);
        assert_eq!(g.family(), e.family());
        assert_eq!(g.family(), g.neg().scaled(4).unwrap_or_default().family());
        assert_eq!(g.plus(&g.neg()), Goal::empty());
        assert_eq!(g.minus(&row(&[1, 0, 0])), row(&[0, 2, 1]));
    }
}
