//! Energy per frame: a cost model from published SCAMP-5 power figures, not a
//! measurement (docs/export.md, "Energy per frame").
//!
//! The one published figure the model rests on is the chip's energy efficiency in
//! Carey et al., "A 100,000 fps vision sensor with embedded 535 GOPS/W 256x256 SIMD
//! processor array", VLSI Circuits Symposium 2013: 1.9 pJ per operation (the abstract),
//! 655 GOPS peak at a 10 MHz instruction rate (the introduction), that is one grey-level
//! operation per processing element per instruction. One bus instruction on the whole
//! array therefore costs 65,536 x 1.9 pJ = 124.5 nJ. The paper gives no split between
//! analogue transfers, digital instructions and flag updates, so every class is charged
//! this figure (an upper bound for the one-bit classes), and no figure for the readout
//! is published there: readouts are counted per frame but cost nothing in the model.

use crate::isa::op::BusOp;
use crate::isa::Program;
use crate::sim::N;
use serde::Serialize;

/// Energy per operation of one processing element, in joules (Carey et al. 2013,
/// abstract: "1.9pJ/OP").
pub(crate) const JOULES_PER_OP: f64 = 1.9e-12;

/// Peak operations per second the same paper quotes at 10 MHz (introduction: 655 GOPS);
/// with [`JOULES_PER_OP`] it gives the chip's peak power, 1.2445 W.
#[cfg(test)]
const PEAK_OPS_PER_SECOND: f64 = 655e9;

/// Instruction rate at which the peak figure was measured, in Hz (10 MHz).
#[cfg(test)]
const PEAK_INSTRUCTION_HZ: f64 = 10e6;

/// Energy of one bus instruction executed by every processing element, in microjoules.
pub(crate) fn instruction_uj() -> f64 {
    (N * N) as f64 * JOULES_PER_OP * 1e6
}

/// How many cycles of each instruction class a frame runs, and what they cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct FrameEnergy {
    /// Analogue bus transfers (`bus`, `bus2`, `bus3`, and the capture's transfers).
    pub(crate) analogue_cycles: u64,
    /// Native digital instructions on `R0..R12` and `FLAG`.
    pub(crate) digital_cycles: u64,
    /// `where`, `all`, `rpix` and `nop`.
    pub(crate) control_cycles: u64,
    /// Readouts per frame (images or event scans): counted, not charged (no published
    /// figure).
    pub(crate) readouts: u64,
    /// The model's energy of one frame, in microjoules.
    pub(crate) energy_uj_per_frame: f64,
}

impl FrameEnergy {
    /// The energy of running `program` once and reading out `readouts` planes.
    pub(crate) fn of(program: &Program, readouts: u64) -> FrameEnergy {
        let mut e = FrameEnergy {
            readouts,
            ..FrameEnergy::default()
        };
        for op in program.stmts.iter().flat_map(|s| &s.ops) {
            match op {
                BusOp::Transfer { .. } => e.analogue_cycles += 1,
                BusOp::Digital(_) => e.digital_cycles += 1,
                BusOp::Where(_) | BusOp::All | BusOp::Rpix { .. } | BusOp::Nop => {
                    e.control_cycles += 1
                }
                BusOp::Dac(_) | BusOp::DacUncorrected(_) => {}
            }
        }
        e.energy_uj_per_frame = e.cycles() as f64 * instruction_uj();
        e
    }

    /// Cycles of every class.
    pub(crate) fn cycles(&self) -> u64 {
        self.analogue_cycles + self.digital_cycles + self.control_cycles
    }
}

/// The energy of `cycles` bus instructions, in microjoules.
pub(crate) fn cycles_uj(cycles: u64) -> f64 {
    cycles as f64 * instruction_uj()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{parse_program, Device};

    #[test]
    fn one_second_at_the_peak_rate_is_the_papers_power() {
        // 10 M instructions at 124.5 nJ each: 1.245 W, the 655 GOPS at 1.9 pJ/OP the
        // paper quotes (655e9 * 1.9e-12 = 1.2445 W; 65,536 PEs against 65,500 ops).
        // The figures docs/export.md quotes: 124.5 nJ per instruction, 1.245 W.
        assert_eq!(format!("{:.4}", instruction_uj()), "0.1245");
        let watts = cycles_uj(PEAK_INSTRUCTION_HZ as u64) * 1e-6;
        assert_eq!(format!("{watts:.3}"), "1.245");
        let published = PEAK_OPS_PER_SECOND * JOULES_PER_OP;
        assert!((watts - published).abs() / published < 0.001, "{watts} W");
    }

    #[test]
    fn counts_each_class_once_per_cycle() {
        let p = parse_program(
            "get_image(A, D); in(B, 3); where(A); MOV(R5, FLAG); all();",
            Device::default(),
        )
        .unwrap();
        let e = FrameEnergy::of(&p, 1);
        assert_eq!(
            (e.analogue_cycles, e.digital_cycles, e.control_cycles),
            (5, 1, 5)
        );
        assert_eq!(e.cycles(), p.cycles());
        assert_eq!(e.energy_uj_per_frame, 11.0 * instruction_uj());
    }
}
