//! Two values in one 32-bit word, each rounded to the nearest bfloat16 (the upper half
//! of its f32: 8 significant bits, ties to even). The noise model's per-PE deviates are
//! stored this way (the chip's gain and offset deviates side by side, the temporal
//! table two deviates to a word): one load brings two values, and unpacking is one mask
//! ([`hi`]) or one shift ([`lo`]), integer operations that leave the floating-point
//! units to the model's multiply-adds. The rounding moves a unit deviate by at most
//! 2^-9 of itself, without bias, and commutes with negation: far below anything the
//! device data resolve.

/// `hi` and `lo` rounded to bfloat16, `hi` in the upper half of the word.
pub(crate) fn pack(hi: f32, lo: f32) -> u32 {
    (bits(hi) << 16) | bits(lo)
}

/// The upper 16 bits of `x` rounded to nearest, ties to even (`x` finite).
fn bits(x: f32) -> u32 {
    let b = x.to_bits();
    (b + 0x7fff + ((b >> 16) & 1)) >> 16
}

/// `x` rounded to the nearest bfloat16, as [`pack`] stores it.
pub(crate) fn round(x: f32) -> f32 {
    f32::from_bits(bits(x) << 16)
}

/// The value in the upper half of a packed word.
#[inline(always)]
pub(crate) fn hi(w: u32) -> f32 {
    f32::from_bits(w & 0xffff_0000)
}

/// The value in the lower half of a packed word.
#[inline(always)]
pub(crate) fn lo(w: u32) -> f32 {
    f32::from_bits(w << 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_rounds_each_value_to_eight_significant_bits() {
        for (h, l) in [
            (1.0f32, -2.5f32),
            (0.1234, -3.9),
            (-0.000_123, 4.4),
            (0.0, -0.0),
        ] {
            let w = pack(h, l);
            for (x, y) in [(h, hi(w)), (l, lo(w))] {
                assert!((x - y).abs() <= x.abs() / 512.0, "{x} -> {y}");
                assert_eq!(y.to_bits() & 0xffff, 0);
                assert_eq!(y, round(x));
                assert_eq!(-y, round(-x), "rounding commutes with negation");
            }
        }
        // Exactly representable values pass through; ties go to even.
        assert_eq!(hi(pack(-1.5, 0.0)), -1.5);
        assert_eq!(lo(pack(0.0, f32::from_bits(0x3f80_8000))), 1.0);
        assert_eq!(
            lo(pack(0.0, f32::from_bits(0x3f81_8000))),
            f32::from_bits(0x3f82_0000)
        );
    }
}
