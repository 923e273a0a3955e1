//! Row kernels: one row of 256 PEs at a time, written over plain slices of a fixed
//! length so that the compiler drops the bounds checks and vectorises every loop.

use super::N;
use crate::sim::edge::EdgeMode;
use crate::sim::machine::{bus_value, Linear};

/// `out[c] := src[c + dc]` wherever column `c + dc` exists (the column that falls off
/// the row follows the edge mode); returns the column left untouched, if any. `dc` is
/// -1, 0 or 1.
#[inline(always)]
pub(super) fn shift_into<T: Copy>(
    src: &[T],
    dc: i32,
    edge: EdgeMode,
    out: &mut [T],
) -> Option<usize> {
    let (src, out) = (&src[..N], &mut out[..N]);
    // The body is a shifted slice; only the edge column needs the edge mode.
    let edge_col = match dc {
        0 => {
            out.copy_from_slice(src);
            return None;
        }
        1 => {
            out[..N - 1].copy_from_slice(&src[1..]);
            N - 1
        }
        _ => {
            out[1..].copy_from_slice(&src[..N - 1]);
            0
        }
    };
    match edge.neighbour(edge_col, dc, N) {
        Some(c) => {
            out[edge_col] = src[c];
            None
        }
        None => Some(edge_col),
    }
}

/// [`shift_into`], with `absent` where nothing is there.
#[inline(always)]
pub(super) fn gather<T: Copy>(src: &[T], dc: i32, edge: EdgeMode, out: &mut [T], absent: T) {
    if let Some(c) = shift_into(src, dc, edge, out) {
        out[c] = absent;
    }
}

/// `out[c] = f(the K values of column c)`, for K spans of `L` values of one source each.
#[inline(always)]
fn map_rows<const K: usize, const L: usize>(
    rows: [&[f32]; K],
    out: &mut [f32],
    f: impl Fn([f32; K]) -> f32,
) {
    let rows = rows.map(|r| &r[..L]);
    for (c, o) in out[..L].iter_mut().enumerate() {
        *o = f(std::array::from_fn(|k| rows[k][c]));
    }
}

/// One copy of [`map_rows`] per source count (0 to 4), so the column loop is straight
/// SIMD code whatever the instruction.
#[inline(always)]
fn by_count<const L: usize>(rows: &[&[f32]], out: &mut [f32], f: impl Fn(&[f32]) -> f32) {
    match *rows {
        [] => map_rows::<0, L>([], out, |v: [f32; 0]| f(&v)),
        [a] => map_rows::<1, L>([a], out, |v| f(&v)),
        [a, b] => map_rows::<2, L>([a, b], out, |v| f(&v)),
        [a, b, c] => map_rows::<3, L>([a, b, c], out, |v| f(&v)),
        [a, b, c, d] => map_rows::<4, L>([a, b, c, d], out, |v| f(&v)),
        _ => unreachable!("a bus instruction has at most four sources"),
    }
}

/// `out[c]` := what the bus hands each of `receivers` receivers at column `c`
/// ([`bus_value`], the one definition of the bus arithmetic).
#[inline(always)]
pub(super) fn bus_row(rows: &[&[f32]], receivers: usize, out: &mut [f32]) {
    bus_span::<N>(rows, receivers, out);
}

/// [`bus_row`] over spans of `L` values (several whole rows at once).
#[inline(always)]
pub(super) fn bus_span<const L: usize>(rows: &[&[f32]], receivers: usize, out: &mut [f32]) {
    // A constant receiver count lets the division by 1 or 2 become exact cheap steps.
    match receivers {
        1 => by_count::<L>(rows, out, |v| bus_value(v, 1)),
        2 => by_count::<L>(rows, out, |v| bus_value(v, 2)),
        3 => by_count::<L>(rows, out, |v| bus_value(v, 3)),
        r => by_count::<L>(rows, out, |v| bus_value(v, r)),
    }
}

/// `out[c]` := the plain sum of the sources at column `c`, from zero in source order
/// (what `where` compares with 0).
#[inline(always)]
pub(super) fn sum_row(rows: &[&[f32]], out: &mut [f32]) {
    by_count::<N>(rows, out, |v| {
        let mut acc = f32::zero();
        v.iter().for_each(|x| acc.add_assign(x));
        acc
    });
}

/// `out[c] := vals[c]` where `mask[c]`. The choice is made on the bits, through a
/// mask of all ones or all zeros per entry: a select of floats compiled to a
/// conditional move per entry, while this is a few vector instructions per vector of
/// entries (the same bits either way).
#[inline(always)]
pub(super) fn store_masked(out: &mut [f32], vals: &[f32], mask: &[bool]) {
    for ((o, &v), &m) in out[..N].iter_mut().zip(&vals[..N]).zip(&mask[..N]) {
        let take = u32::from(m).wrapping_neg();
        *o = f32::from_bits((v.to_bits() & take) | (o.to_bits() & !take));
    }
}

/// `map[c] |= hit[c]`: remembers which PEs were clipped.
#[inline(always)]
pub(super) fn mark_clipped(map: &mut [u8], hit: &[bool]) {
    for (m, &h) in map[..N].iter_mut().zip(&hit[..N]) {
        *m |= u8::from(h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_follows_the_edge_mode() {
        let src: Vec<f32> = (0..N).map(|c| c as f32).collect();
        let mut out = vec![0f32; N];
        gather(&src, 1, EdgeMode::Zero, &mut out, -1.0);
        assert_eq!((out[0], out[N - 2], out[N - 1]), (1.0, 255.0, -1.0));
        gather(&src, -1, EdgeMode::Wrap, &mut out, -1.0);
        assert_eq!((out[0], out[1]), (255.0, 0.0));
        gather(&src, 1, EdgeMode::Replicate, &mut out, -1.0);
        assert_eq!(out[N - 1], 255.0);
    }

    #[test]
    fn store_masked_writes_the_masked_entries_only() {
        let vals: Vec<f32> = (0..N).map(|c| c as f32 - 0.5).collect();
        let mask: Vec<bool> = (0..N).map(|c| c % 3 == 1).collect();
        let mut out = vec![f32::NAN; N];
        out[3] = -0.0;
        store_masked(&mut out, &vals, &mask);
        for c in 0..N {
            let want = if mask[c] {
                vals[c]
            } else if c == 3 {
                -0.0
            } else {
                f32::NAN
            };
            assert_eq!(out[c].to_bits(), want.to_bits(), "column {c}");
        }
    }

    #[test]
    fn bus_row_is_bus_value_per_column() {
        let a: Vec<f32> = (0..N).map(|c| c as f32 * 0.37 - 20.0).collect();
        let b: Vec<f32> = (0..N).map(|c| -(c as f32) * 1.13 + 3.0).collect();
        let mut out = vec![0f32; N];
        for receivers in 1..=3 {
            bus_row(&[&a, &b], receivers, &mut out);
            for c in 0..N {
                let want = bus_value(&[a[c], b[c]], receivers);
                assert_eq!(out[c].to_bits(), want.to_bits());
            }
        }
        // No source: every receiver gets +0.0, as `bus_value` of nothing (the negated
        // identity -0.0).
        bus_row(&[], 1, &mut out);
        assert!(out.iter().all(|v| v.to_bits() == 0.0f32.to_bits()));
    }
}
