//! Counter-based random numbers for the noise model.
//!
//! Every random value is a pure function of a key (seed, stream, instruction, plane, row)
//! and a column, so results do not depend on how rows are shared among threads, and no
//! generator state is carried from one instruction to the next.
//!
//! Two generators, for two costs:
//!
//! - [`normal`] turns a 32-bit hash of (row key, column) into a deviate: no table, no
//!   branch, no rejection loop, so a whole row vectorises (about twenty vector
//!   instructions per 8 or 16 PEs). It draws what is drawn once: the chip's fixed
//!   pattern, and the readout noise.
//! - [`temporal_row`] serves the temporal noise of every bus write, the hot loop of a
//!   noisy run, where the hash alone would cost several times the write itself. A row
//!   of deviates is a window of 128 consecutive words (256 deviates, two to a word as
//!   bfloat16) of one fixed table of normal deviates, at an offset and with a sign taken
//!   from the row key: one load per two PEs, from a table that stays in the core's
//!   second-level cache. The table is antithetic and scaled so that its entries have
//!   mean exactly 0 and mean square 1 (to within 10^-9), so over the random
//!   offsets and signs every deviate has mean 0 and variance 1; its shape is that of
//!   [`normal`], to 8 significant bits. The price is that two rows whose windows overlap
//!   share that stretch of their noise (shifted, with a sign): one pair of rows in
//!   about 128 overlaps, over half a row on average; and the fixed table carries its
//!   own lag correlations, at the level of its sampling error (about 0.006). For
//!   temporal noise, whose spread is a small part of the error budget, exact moments
//!   matter and such weak, rare correlation does not.

use super::bf16;

/// Stream tags: independent random streams derived from the same seed.
pub(crate) mod stream {
    /// Temporal noise of a transfer.
    pub(crate) const TEMPORAL: u64 = 1;
    /// Readout noise.
    pub(crate) const READOUT: u64 = 2;
    /// Temporal noise of a DAC load.
    pub(crate) const TEMPORAL_LOAD: u64 = 3;
    /// Temporal noise of a capture.
    pub(crate) const TEMPORAL_CAPTURE: u64 = 4;
    /// Temporal streams are the tags below this.
    pub(crate) const TEMPORAL_STREAMS: usize = 5;
    /// Fixed-pattern gain per PE.
    pub(crate) const FP_GAIN: u64 = 16;
    /// Fixed-pattern offset per PE and register.
    pub(crate) const FP_OFFSET: u64 = 17;
    /// DAC (`in()`) load gain per PE.
    pub(crate) const LOAD_GAIN: u64 = 18;
    /// DAC (`in()`) load offset per PE.
    pub(crate) const LOAD_OFFSET: u64 = 19;
    /// Capture gain per PE (photo-response non-uniformity).
    pub(crate) const CAPTURE_GAIN: u64 = 20;
    /// Capture offset per PE (dark-signal non-uniformity).
    pub(crate) const CAPTURE_OFFSET: u64 = 21;
    /// Readout offset per PE.
    pub(crate) const READOUT_OFFSET: u64 = 22;
    /// The uncorrected load's deviate per load, shared by every PE.
    pub(crate) const UNCORRECTED_COMMON: u64 = 23;
    /// The uncorrected load's offset per PE.
    pub(crate) const UNCORRECTED_OFFSET: u64 = 24;
    /// The uncorrected load's per-column deviates (row 0 of the plane), per-row
    /// deviates (row 1) and tilt (row 2, column 0).
    pub(crate) const UNCORRECTED_LINES: u64 = 25;
    /// The fixed table temporal noise is read from.
    pub(crate) const TEMPORAL_TABLE: u64 = 32;
}

/// The splitmix64 finaliser: a bijective 64-bit mixer.
#[inline(always)]
pub(crate) fn mix64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The key of one row of one random stream: mixes every coordinate in turn, so keys of
/// different (seed, stream, a, b, row) are unrelated.
#[inline]
pub(crate) fn row_key(seed: u64, stream: u64, a: u64, b: u64, row: usize) -> u64 {
    let mut k = mix64(seed ^ 0x5ca3_9e37_79b9_7f4a);
    k = mix64(k ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    k = mix64(k ^ a);
    k = mix64(k ^ b.wrapping_mul(0xd1b5_4a32_d192_ed03));
    mix64(k ^ row as u64)
}

/// The key of random stream `stream` of `seed`, which [`temporal_key`] completes for
/// one row.
pub(crate) fn stream_key(seed: u64, stream: u64) -> u64 {
    mix64(mix64(seed ^ 0x5ca3_9e37_79b9_7f4a) ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// The key of one row of one instruction's temporal noise: one mix of the stream key
/// with the coordinates packed without overlap (instruction above bit 20, plane in bits
/// 8..20, row below), so distinct rows, planes and instructions get distinct keys. One
/// mix rather than [`row_key`]'s five: this runs for every row of every noisy write.
#[inline(always)]
pub(crate) fn temporal_key(stream_key: u64, seq: u64, plane: usize, row: usize) -> u64 {
    row_of_write(write_key(stream_key, seq, plane), row)
}

/// The part of [`temporal_key`] one write fixes (its rows differ in the low 8 bits).
#[inline(always)]
pub(crate) fn write_key(stream_key: u64, seq: u64, plane: usize) -> u64 {
    stream_key ^ (seq << 20 | (plane as u64 & 0xfff) << 8)
}

/// [`temporal_key`] of row `row` of the write whose [`write_key`] is `write`.
#[inline(always)]
pub(crate) fn row_of_write(write: u64, row: usize) -> u64 {
    mix64(write ^ (row as u64 & 0xff))
}

/// `col * 0x9e3779b9` for the 256 columns of a row, so that row loops load the column
/// term instead of multiplying for it.
pub(crate) static COLUMN_MIX: [u32; 256] = {
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
pub(crate) fn lane_hash(key: u64, col: u32) -> u32 {
    premixed_hash(key, col.wrapping_mul(0x9e37_79b9))
}

/// [`lane_hash`] with the column term `col * 0x9e3779b9` given (see [`COLUMN_MIX`]).
#[inline(always)]
pub(crate) fn premixed_hash(key: u64, column_mix: u32) -> u32 {
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
pub(crate) fn normal(h: u32) -> f32 {
    let pairs = (h & 0x00ff_00ff) + ((h >> 8) & 0x00ff_00ff);
    let s = (pairs & 0xffff) + (pairs >> 16);
    let x = (s as f32 - 510.0) * (1.0 / BYTE_SUM_SD);
    let x2 = x * x;
    x * (P1 + x2 * (P3 + x2 * P5))
}

/// Fills `out` with the standard normal deviates of row key `key`, column by column.
#[inline(always)]
pub(crate) fn fill_normals(key: u64, out: &mut [f32]) {
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

/// Deviates in the temporal-noise table (a power of two, so an offset is a mask of key
/// bits).
const TABLE_LEN: usize = 1 << 16;
/// Words of the table: two deviates to a word, as bfloat16 (see [`bf16`]), 128 KiB,
/// which stays in a core's second-level cache beside a band's planes.
const TABLE_WORDS: usize = TABLE_LEN / 2;
/// Row length served from the table.
const ROW: usize = 256;
/// Words of a row's window: column `c < HALF` takes the upper half of word `c`, column
/// `HALF + c` its lower half, so that a vector of columns unpacks from one vector of
/// words with one mask or one shift.
const HALF: usize = ROW / 2;

/// The words one row of temporal noise reads: 256 deviates, two to a word.
pub(crate) type Window = [u32; HALF];

/// The table of temporal noise: `TABLE_WORDS` words followed by a copy of its first
/// window (so that every window is contiguous).
fn temporal_table() -> &'static [u32] {
    static TABLE: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    TABLE.get_or_init(draw_temporal_table)
}

/// The temporal-noise table: `TABLE_LEN / 2` deviates of [`normal`] and their negatives
/// (mean exactly 0, as rounding to bfloat16 commutes with negation), scaled so that the
/// rounded entries have mean square 1. Scaling alone cannot hit 1 closer than about
/// 10^-4 ([`normal`] has about a thousand levels, which round together), so
/// [`settle_square`] then moves a few entries by one bfloat16 step.
fn draw_temporal_table() -> Vec<u32> {
    let half = TABLE_LEN / 2;
    let key = row_key(0x7ab1e, stream::TEMPORAL_TABLE, 0, 0, 0);
    let draws: Vec<f64> = (0..half)
        .map(|i| f64::from(normal(lane_hash(key, i as u32))))
        .collect();
    let mean_square = draws.iter().map(|d| d * d).sum::<f64>() / half as f64;
    let scale = 1.0 / mean_square.sqrt();
    let mut t: Vec<f32> = draws
        .iter()
        .map(|d| bf16::round((d * scale) as f32))
        .collect();
    settle_square(&mut t, half as f64);
    t.extend_from_within(..);
    t[half..].iter_mut().for_each(|v| *v = -*v);
    let mut words: Vec<u32> = t.chunks(2).map(|p| bf16::pack(p[0], p[1])).collect();
    words.extend_from_within(..HALF);
    words
}

/// Moves entries of `q` (bfloat16 values) one bfloat16 step away from or towards zero,
/// first to last, each when that brings the sum of squares nearer `target`: the first
/// moves are coarse, the later ones (on ever more entries that are small) fine, so the
/// sum ends within a small entry's step of `target`.
fn settle_square(q: &mut [f32], target: f64) {
    const STEP: u32 = 1 << 16;
    let mut sum: f64 = q.iter().map(|&v| f64::from(v).powi(2)).sum();
    for v in q.iter_mut() {
        let gap = target - sum;
        let bits = v.to_bits();
        let moved = if gap > 0.0 {
            f32::from_bits(bits + STEP)
        } else if bits & 0x7fff_ffff >= STEP {
            f32::from_bits(bits - STEP)
        } else {
            continue;
        };
        let delta = f64::from(moved).powi(2) - f64::from(*v).powi(2);
        if (gap - delta).abs() < gap.abs() {
            sum += delta;
            *v = moved;
        }
    }
}

/// The temporal noise of row key `key`: a window of table words and a sign, the
/// deviates of a row being `sign` times those [`each_deviate`] serves (unit variance).
#[inline]
pub(crate) fn temporal_row(key: u64) -> (&'static Window, f32) {
    // Bits of a well-mixed key: 15 for the offset, one for the sign.
    let at = key as usize & (TABLE_WORDS - 1);
    let window = temporal_table()[at..at + HALF]
        .try_into()
        .expect("the table extends past every offset");
    let sign = if key >> 63 == 0 { 1.0 } else { -1.0 };
    (window, sign)
}

/// Calls `f(c, z)` for every column `c` of a row with its deviate `z` in `window`
/// (without the row's sign): the loop the row kernels run, which vectorises as one
/// load and two unpackings per two vectors of columns (`c` and `c + 128` together).
#[inline(always)]
pub(crate) fn each_deviate(window: &Window, mut f: impl FnMut(usize, f32)) {
    for (c, &w) in window.iter().enumerate() {
        f(c, bf16::hi(w));
        f(c + HALF, bf16::lo(w));
    }
}

/// A whole plane of standard normal deviates for stream `stream`, index `a` of `seed`
/// (used for the fixed pattern, drawn once per chip).
pub(crate) fn normal_plane(seed: u64, stream: u64, a: u64, rows: usize, cols: usize) -> Vec<f32> {
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

    /// The deviate of column `c` in `window` (without the row's sign), by the layout
    /// [`HALF`] describes.
    fn deviate(window: &Window, c: usize) -> f32 {
        if c < HALF {
            bf16::hi(window[c])
        } else {
            bf16::lo(window[c - HALF])
        }
    }

    /// Deviates of `rows` rows of temporal noise, as the layer draws them.
    fn temporal_deviates(seed: u64, rows: usize) -> Vec<f64> {
        let key = stream_key(seed, stream::TEMPORAL);
        let mut out = Vec::with_capacity(rows * ROW);
        for r in 0..rows {
            let (w, sign) = temporal_row(temporal_key(key, r as u64 / 256, 3, r % 256));
            out.extend((0..ROW).map(|c| f64::from(sign * deviate(w, c))));
        }
        out
    }

    #[test]
    fn the_temporal_table_has_exact_moments() {
        let t = temporal_table();
        let body: Vec<f64> = t[..TABLE_WORDS]
            .iter()
            .flat_map(|&w| [bf16::hi(w), bf16::lo(w)])
            .map(f64::from)
            .collect();
        let n = TABLE_LEN as f64;
        let mean = body.iter().sum::<f64>() / n;
        let square = body.iter().map(|v| v * v).sum::<f64>() / n;
        assert_eq!(mean, 0.0);
        assert!((square - 1.0).abs() < 1e-9, "mean square {square}");
        assert_eq!(&t[TABLE_WORDS..], &t[..HALF]);
    }

    #[test]
    fn each_deviate_visits_every_column_once_with_its_deviate() {
        let (w, _) = temporal_row(12345);
        let mut seen = [None; ROW];
        each_deviate(w, |c, z| {
            assert!(seen[c].is_none(), "column {c} twice");
            seen[c] = Some(z);
        });
        for (c, z) in seen.iter().enumerate() {
            assert_eq!(*z, Some(deviate(w, c)));
        }
        // Every deviate of the window is served once.
        let mut served: Vec<u32> = seen.iter().flatten().map(|z| z.to_bits()).collect();
        let mut stored: Vec<u32> = w
            .iter()
            .flat_map(|&x| [bf16::hi(x), bf16::lo(x)])
            .map(f32::to_bits)
            .collect();
        served.sort_unstable();
        stored.sort_unstable();
        assert_eq!(served, stored);
    }

    #[test]
    fn temporal_noise_is_unit_normal_and_uncorrelated() {
        for seed in [1, 2, 99] {
            let z = temporal_deviates(seed, 1024);
            let n = z.len() as f64;
            let mean = z.iter().sum::<f64>() / n;
            let var = z.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
            let kurt = z.iter().map(|v| (v - mean).powi(4)).sum::<f64>() / n / (var * var);
            // 262,144 deviates: standard errors about 0.002 (mean), 0.003 (variance),
            // 0.01 (kurtosis); the bounds allow for the rare overlap of table windows
            // (about 8 of the 1024 rows overlap another one).
            assert!(mean.abs() < 0.01, "mean {mean}");
            assert!((var - 1.0).abs() < 0.015, "variance {var}");
            assert!((kurt - 3.0).abs() < 0.06, "kurtosis {kurt}");
            let beyond2 = z.iter().filter(|v| v.abs() > 2.0).count() as f64 / n;
            assert!((beyond2 - 0.0455).abs() < 0.003, "P(|z|>2) {beyond2}");
            let corr = |lag: usize| {
                z.iter().zip(&z[lag..]).map(|(a, b)| a * b).sum::<f64>() / (n - lag as f64)
            };
            // Neighbouring columns, neighbouring rows, and rows 16 apart: the fixed
            // table's own lag correlations are at the level of its sampling error
            // (32,768 independent draws: about 0.006).
            for lag in [1, ROW, 16 * ROW] {
                assert!(corr(lag).abs() < 0.02, "lag {lag}: {}", corr(lag));
            }
        }
        // A pure function of the key.
        assert_eq!(temporal_deviates(5, 8), temporal_deviates(5, 8));
        assert_ne!(temporal_deviates(5, 8), temporal_deviates(6, 8));
    }
}
