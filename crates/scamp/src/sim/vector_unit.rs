//! Which vector unit the processor offers, detected once, and the one mechanism that
//! runs a hot loop compiled for it: a [`Kernel`] is compiled once per unit and
//! [`run_widest`] picks the copy at run time. Every copy does the same operations in
//! the same order (the compiler fuses no multiply-add on its own and reorders no sum;
//! the fused multiply-adds the code asks for with `mul_add` round once on every unit,
//! in hardware on the vector units, in software in the portable copy), so results are
//! bit-identical whichever runs.

use std::sync::OnceLock;

/// The widest vector instruction set usable by the hot loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VectorUnit {
    /// AVX-512 (F, BW and VL), with FMA.
    Avx512,
    /// AVX2 with FMA.
    Avx2,
    /// Whatever the target was compiled for.
    Portable,
}

/// The widest unit this processor supports (detected on first call).
pub(crate) fn widest() -> VectorUnit {
    static UNIT: OnceLock<VectorUnit> = OnceLock::new();
    *UNIT.get_or_init(detect)
}

#[cfg(target_arch = "x86_64")]
fn detect() -> VectorUnit {
    let fma = std::arch::is_x86_feature_detected!("fma");
    if fma
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vl")
    {
        VectorUnit::Avx512
    } else if fma && std::arch::is_x86_feature_detected!("avx2") {
        VectorUnit::Avx2
    } else {
        VectorUnit::Portable
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> VectorUnit {
    VectorUnit::Portable
}

/// A computation to compile once per vector unit. Implementors mark [`Kernel::run`]
/// `#[inline(always)]`, so that its body (and what it inlines) is compiled into each
/// copy with that unit's instructions.
pub(crate) trait Kernel {
    /// What the computation returns.
    type Output;
    /// Runs the computation.
    fn run(self) -> Self::Output;
}

/// Runs `kernel` compiled for the widest vector unit the processor has (in the unit
/// tests, the one [`forced::set`] chose).
#[inline]
pub(crate) fn run_widest<K: Kernel>(kernel: K) -> K::Output {
    #[cfg(test)]
    let unit = forced::get().unwrap_or_else(widest);
    #[cfg(not(test))]
    let unit = widest();
    #[cfg(target_arch = "x86_64")]
    match unit {
        // SAFETY: the processor supports the instruction set (detected at run time; the
        // tests force only a unit `supported` lists).
        VectorUnit::Avx512 => return unsafe { x86::avx512(kernel) },
        // SAFETY: as above.
        VectorUnit::Avx2 => return unsafe { x86::avx2(kernel) },
        VectorUnit::Portable => {}
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = unit;
    kernel.run()
}

/// Every unit, narrowest first (the tests' list: [`supported`], [`forced`]).
#[cfg(test)]
const UNITS: [VectorUnit; 3] = [VectorUnit::Portable, VectorUnit::Avx2, VectorUnit::Avx512];

/// The units this processor can run, narrowest first.
#[cfg(test)]
pub(crate) fn supported() -> Vec<VectorUnit> {
    let widest = UNITS.iter().position(|&u| u == widest()).unwrap_or(0);
    UNITS[..=widest].to_vec()
}

/// The unit the unit tests make [`run_widest`] use, so that they can run the copies
/// of the hot loops side by side on one processor. Every copy gives the same bits,
/// so tests running meanwhile are not affected by the choice.
#[cfg(test)]
pub(crate) mod forced {
    use super::{VectorUnit, UNITS};
    use std::sync::atomic::{AtomicU8, Ordering};

    /// 0: none; otherwise 1 + the unit's index in [`UNITS`].
    static FORCED: AtomicU8 = AtomicU8::new(0);

    /// Makes [`super::run_widest`] use `unit` (`None`: the widest again), which must be
    /// one this processor supports.
    pub(crate) fn set(unit: Option<VectorUnit>) {
        assert!(unit.is_none_or(|u| super::supported().contains(&u)));
        let code = unit.map_or(0, |u| 1 + UNITS.iter().position(|&x| x == u).unwrap_or(0));
        FORCED.store(code as u8, Ordering::SeqCst);
    }

    /// The unit set, if any.
    pub(crate) fn get() -> Option<VectorUnit> {
        match FORCED.load(Ordering::SeqCst) {
            0 => None,
            code => UNITS.get(usize::from(code) - 1).copied(),
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The copies of a [`Kernel`] per instruction set.

    use super::Kernel;

    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
    pub(super) fn avx512<K: Kernel>(kernel: K) -> K::Output {
        kernel.run()
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn avx2<K: Kernel>(kernel: K) -> K::Output {
        kernel.run()
    }
}
