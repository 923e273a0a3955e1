//! Register planes made small enough to embed: block means over square blocks, then one
//! byte per block. Analogue values map to `round(v) + 128` clamped to 0..=255, one level
//! per unit of the array's -128..127 range; digital planes map to the share of set bits
//! in the block, 0..=255.

use scamp::N;

/// Downsampled side length used for the step-through.
pub const TRACE_SIDE: usize = 64;

/// Block means of a row-major `N`x`N` plane over blocks of `N / side` pixels.
pub fn block_means(plane: &[f32], side: usize) -> Vec<f64> {
    let b = N / side;
    let mut out = vec![0.0f64; side * side];
    for (r, row) in plane.chunks_exact(N).enumerate() {
        let orow = &mut out[(r / b) * side..(r / b + 1) * side];
        for (c, &v) in row.iter().enumerate() {
            orow[c / b] += f64::from(v);
        }
    }
    let area = (b * b) as f64;
    out.iter_mut().for_each(|v| *v /= area);
    out
}

/// An analogue plane as bytes: block means, `round(v) + 128`, clamped to 0..=255.
pub fn quantise_analogue(plane: &[f32], side: usize) -> Vec<u8> {
    quantise_levels(&block_means(plane, side))
}

/// Values (block means, differences) as bytes: `round(v) + 128`, clamped to 0..=255.
pub fn quantise_levels(values: &[f64]) -> Vec<u8> {
    values
        .iter()
        .map(|v| (v.round() + 128.0).clamp(0.0, 255.0) as u8)
        .collect()
}

/// A digital plane (0/1 per PE) as bytes: the share of set bits per block, 0..=255.
pub fn quantise_bits(bits: &[u8], side: usize) -> Vec<u8> {
    let as_f32: Vec<f32> = bits.iter().map(|&b| f32::from(b.min(1))).collect();
    block_means(&as_f32, side)
        .iter()
        .map(|v| (v * 255.0).round().clamp(0.0, 255.0) as u8)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_means_average_each_block() {
        let plane: Vec<f32> = (0..N * N).map(|i| ((i / N) / 4) as f32).collect();
        let m = block_means(&plane, 64);
        assert_eq!(m.len(), 64 * 64);
        assert_eq!(m[0], 0.0);
        assert_eq!(m[64 * 10 + 3], 10.0);
    }

    #[test]
    fn analogue_levels_are_offset_and_clamped() {
        let mut plane = vec![0.0f32; N * N];
        plane[..N].fill(-500.0);
        let q = quantise_analogue(&plane, N);
        assert_eq!(q[0], 0);
        assert_eq!(q[N], 128);
        let q = quantise_analogue(&vec![127.0f32; N * N], 64);
        assert!(q.iter().all(|&v| v == 255));
    }

    #[test]
    fn bits_become_shares() {
        let mut bits = vec![0u8; N * N];
        for r in 0..4 {
            bits[r * N..r * N + 2].fill(1);
        }
        let q = quantise_bits(&bits, 64);
        assert_eq!(q[0], 128);
        assert_eq!(q[1], 0);
    }
}
