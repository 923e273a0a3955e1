//! Which vector unit the processor offers, detected once. The hot loops are compiled
//! once per unit and chosen at run time; every copy does the same operations in the
//! same order, so results are bit-identical whichever runs.

use std::sync::OnceLock;

/// The widest vector instruction set usable by the hot loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorUnit {
    /// AVX-512 (F, BW and VL).
    Avx512,
    /// AVX2.
    Avx2,
    /// Whatever the target was compiled for.
    Portable,
}

/// The widest unit this processor supports (detected on first call).
pub fn widest() -> VectorUnit {
    static UNIT: OnceLock<VectorUnit> = OnceLock::new();
    *UNIT.get_or_init(detect)
}

#[cfg(target_arch = "x86_64")]
fn detect() -> VectorUnit {
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vl")
    {
        VectorUnit::Avx512
    } else if std::arch::is_x86_feature_detected!("avx2") {
        VectorUnit::Avx2
    } else {
        VectorUnit::Portable
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> VectorUnit {
    VectorUnit::Portable
}
