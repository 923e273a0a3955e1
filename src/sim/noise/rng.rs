//! Counter-based random numbers for the noise model.
//!
//! Every random value is a pure function of a key (seed, stream, instruction, plane, row)
//! and a column, so results do not depend on how rows are shared among threads, and no
//! generator state is carried from one instruction to the next. A normal deviate comes
//! from a 32-bit hash of (row key, column) by [`normal`]: no table, no branch, no
//! rejection loop, so a whole row vectorises. (A ziggurat needs a table look-up and a
//! rare slow path per deviate, which defeat SIMD; this costs about one cycle per PE.)

/// Stream tags: independent random streams derived from the same seed.
pub mod stream {
    /// Temporal noise of a transfer.
    pub const TEMPORAL: u64 = 1;
    /// Readout noise.
    pub const READOUT: u64 = 2;
    /// Temporal noise of a DAC load.
    pub const TEMPORAL_LOAD: u64 = 3;
    /// Temporal noise of a capture.
    pub const TEMPORAL_CAPTURE: u64 = 4;
    /// Fixed-pattern gain per PE.
    pub const FP_GAIN: u64 = 16;
    /// Fixed-pattern offset per PE and register.
    pub const FP_OFFSET: u64 = 17;
    /// DAC (`in()`) load gain per PE.
    pub const LOAD_GAIN: u64 = 18;
    /// DAC (`in()`) load offset per PE.
    pub const LOAD_OFFSET: u64 = 19;
    /// Capture gain per PE (photo-response non-uniformity).
    pub const CAPTURE_GAIN: u64 = 20;
    /// Capture offset per PE (dark-signal non-uniformity).
    pub const CAPTURE_OFFSET: u64 = 21;
    /// Readout offset per PE.
    pub const READOUT_OFFSET: u64 = 22;
}

/// The splitmix64 finaliser: a bijective 64-bit mixer.
#[inline(always)]
pub fn mix64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The key of one row of one random stream: mixes every coordinate in turn, so keys of
/// different (seed, stream, a, b, row) are unrelated.
#[inline]
pub fn row_key(seed: u64, stream: u64, a: u64, b: u64, row: usize) -> u64 {
    let mut k = mix64(seed ^ 0x5ca3_9e37_79b9_7f4a);
    k = mix64(k ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    k = mix64(k ^ a);
    k = mix64(k ^ b.wrapping_mul(0xd1b5_4a32_d192_ed03));
    mix64(k ^ row as u64)
}

/// `col * 0x9e3779b9` for the 256 columns of a row, so that row loops load the column
/// term instead of multiplying for it.
pub static COLUMN_MIX: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = (c as u32).wrapping_mul(0x9e37_79b9);
        c += 1;
    }
    t
};

/// A 32-bit hash of (row key, column) ("lowbias32" by C. Wellons): two multiplies, so it
/// vectorises with 32-bit lanes.
#[inline(always)]
pub fn lane_hash(key: u64, col: u32) -> u32 {
    premixed_hash(key, col.wrapping_mul(0x9e37_79b9))
}

/// [`lane_hash`] with the column term `col * 0x9e3779b9` given (see [`COLUMN_MIX`]).
#[inline(always)]
pub fn premixed_hash(key: u64, column_mix: u32) -> u32 {
    let mut x = column_mix ^ (key as u32);
    x = x.wrapping_add((key >> 32) as u32);
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^ (x >> 16)
}

/// Standard deviation of the sum of four uniform bytes: `sqrt(4 (256^2 - 1) / 12)`.
const BYTE_SUM_SD: f32 = 147.800_54;
/// Odd polynomial mapping the standardised byte sum to the normal quantile of its own
/// distribution function (least squares, weighted by probability, then scaled to unit
/// variance): kurtosis 2.998, P(|z| > 3) = 0.0028 (normal: 0.0027), largest deviate
/// 4.4. The distribution function stays within 0.0019 of the normal one, which is the
/// granularity of 1,021 levels.
const P1: f32 = 0.968_029_3;
const P3: f32 = 0.003_722_036;
const P5: f32 = 0.001_949_272;

/// A standard normal deviate from a 32-bit hash: the sum of its four bytes (close to
/// normal by the central limit theorem) pushed through a cubic-quintic correction that
/// makes it normal to within the granularity. Branch- and table-free, so a row of them
/// compiles to a few SIMD instructions per 8 or 16 PEs.
#[inline(always)]
pub fn normal(h: u32) -> f32 {
    let pairs = (h & 0x00ff_00ff) + ((h >> 8) & 0x00ff_00ff);
    let s = (pairs & 0xffff) + (pairs >> 16);
    let x = (s as f32 - 510.0) * (1.0 / BYTE_SUM_SD);
    let x2 = x * x;
    x * (P1 + x2 * (P3 + x2 * P5))
}

/// Fills `out` with the standard normal deviates of row key `key`, column by column.
#[inline(always)]
pub fn fill_normals(key: u64, out: &mut [f32]) {
    if out.len() <= COLUMN_MIX.len() {
        for (o, &m) in out.iter_mut().zip(&COLUMN_MIX) {
            *o = normal(premixed_hash(key, m));
        }
    } else {
        for (c, o) in out.iter_mut().enumerate() {
            *o = normal(lane_hash(key, c as u32));
        }
    }
}

/// A whole plane of standard normal deviates for stream `stream`, index `a` of `seed`
/// (used for the fixed pattern, drawn once per chip).
pub fn normal_plane(seed: u64, stream: u64, a: u64, rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0f32; rows * cols];
    for (r, row) in out.chunks_mut(cols).enumerate() {
        fill_normals(row_key(seed, stream, a, 0, r), row);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mapping_is_odd_and_bounded() {
        // Complementing every byte mirrors the byte sum about its mean.
        for h in [0u32, 1, 0x1234_5678, 0x8080_8080, 0xdead_beef] {
            assert_eq!(normal(h), -normal(!h));
        }
        assert!(normal(u32::MAX) > 4.0 && normal(u32::MAX) < 4.5);
    }

    #[test]
    fn normals_have_unit_moments() {
        let p = normal_plane(7, stream::TEMPORAL, 3, 256, 256);
        let n = p.len() as f64;
        let mean = p.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
        let var = p
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / n;
        let kurt = p
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(4))
            .sum::<f64>()
            / n
            / (var * var);
        // 65,536 samples: standard errors are about 0.004 (mean), 0.006 (variance) and
        // 0.02 (kurtosis, 3 for a normal).
        assert!(mean.abs() < 0.02, "mean {mean}");
        assert!((var - 1.0).abs() < 0.03, "variance {var}");
        assert!((kurt - 3.0).abs() < 0.1, "kurtosis {kurt}");
        let beyond2 = p.iter().filter(|v| v.abs() > 2.0).count() as f64 / n;
        assert!((beyond2 - 0.0455).abs() < 0.004, "P(|z|>2) {beyond2}");
    }

    #[test]
    fn streams_and_rows_are_uncorrelated() {
        let a = normal_plane(1, stream::TEMPORAL, 0, 64, 256);
        let b = normal_plane(1, stream::TEMPORAL, 1, 64, 256);
        let c = normal_plane(2, stream::TEMPORAL, 0, 64, 256);
        let corr = |x: &[f32], y: &[f32]| {
            x.iter().zip(y).map(|(a, b)| f64::from(a * b)).sum::<f64>() / x.len() as f64
        };
        assert!(corr(&a, &b).abs() < 0.03);
        assert!(corr(&a, &c).abs() < 0.03);
        // Neighbouring rows and columns of one plane.
        assert!(corr(&a[..256 * 63], &a[256..]).abs() < 0.03);
        assert!(corr(&a[..a.len() - 1], &a[1..]).abs() < 0.03);
        // Pure function of the key; the table of column terms changes nothing.
        let mut row = [0f32; 256];
        fill_normals(99, &mut row);
        for (c, v) in row.iter().enumerate() {
            assert_eq!(*v, normal(lane_hash(99, c as u32)));
        }
        assert_eq!(a, normal_plane(1, stream::TEMPORAL, 0, 64, 256));
    }
}
