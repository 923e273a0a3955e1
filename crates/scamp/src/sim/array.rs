//! The numeric PE array: 256x256 float planes for the analogue registers, byte planes
//! for the digital ones, and the bus instructions executed over all PEs at once.

mod bands;
mod plan;
mod rows;

use super::edge::EdgeMode;
use super::layer::{Exact, ReadCtx, WriteCtx, WriteLayer};
use super::machine::{step, Machine, MachineError};
use super::noise::NoiseModel;
use crate::isa::{BusOp, DReg, DigitalOp, Dir, Reg};
use plan::{Dst, Src, Transfer, MAX_WRITTEN};
use rayon::prelude::*;

pub(crate) use super::dims::{N, PES};

/// The state of every PE, with the layer that perturbs writes.
pub struct Array {
    general: usize,
    /// General planes, then `NEWS`, then the photodiode exposure, then a scratch plane
    /// (the copy a transfer that overwrites what it reads reads from).
    planes: Vec<Vec<f32>>,
    /// `R0..R12`, then `FLAG`; one byte (0 or 1) per PE.
    bits: Vec<Vec<u8>>,
    flag_full: bool,
    pix_reset: Option<f32>,
    dac: f32,
    /// Whether the DAC was last set without the vendor's correction (`load_in`).
    dac_uncorrected: bool,
    edge: EdgeMode,
    bit_scratch: Vec<u8>,
    /// The transfers planned but not yet run (kept to reuse its allocation).
    segment: Vec<Transfer>,
    layer: Box<dyn WriteLayer>,
    seq: u64,
    saturated: u64,
    /// Per plane: clipped writes, and which PEs were clipped.
    clip_writes: Vec<u64>,
    clip_map: Vec<Vec<u8>>,
    /// Per plane: the instruction up to which decay has been applied (only kept when
    /// the layer decays values).
    settled: Vec<u64>,
    decays: bool,
}

/// Statements executed one after another with their transfers fused across statement
/// boundaries: the last transfers of a statement may still be pending when the next
/// statement starts, and run when they can no longer be fused or the batch ends. The
/// batch borrows the array, so nothing can look at it while transfers are pending.
pub(crate) struct Batch<'a> {
    array: &'a mut Array,
}

impl Batch<'_> {
    /// Runs one statement's bus instructions, fusing consecutive transfers into one
    /// pass over the array where that cannot change the result (see `plan`); its last
    /// transfers may stay pending until the next statement or the end of the batch.
    pub(crate) fn execute(&mut self, ops: &[BusOp]) -> Result<(), MachineError> {
        self.array.execute_pending(ops)
    }

    /// Whether FLAG is 1 in every PE (pending transfers never change FLAG).
    pub(crate) fn flag_full(&self) -> bool {
        self.array.flag_full
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.array.flush();
    }
}

impl Array {
    /// A fresh array: every register 0, FLAG 1 everywhere, exact writes.
    pub fn new(general: usize, edge: EdgeMode) -> Self {
        let mut bits = vec![vec![0u8; PES]; DReg::COUNT + 1];
        bits[DReg::Flag.index()].fill(1);
        Array {
            general,
            planes: vec![vec![0.0; PES]; general + 3],
            bits,
            flag_full: true,
            pix_reset: None,
            dac: 0.0,
            dac_uncorrected: false,
            edge,
            bit_scratch: vec![0; PES],
            segment: Vec::with_capacity(plan::MAX_FUSED),
            layer: Box::new(Exact),
            seq: 0,
            saturated: 0,
            clip_writes: vec![0; general + 2],
            clip_map: vec![vec![0; PES]; general + 2],
            settled: vec![0; general + 2],
            decays: false,
        }
    }

    /// Puts the array in the state [`Array::new`] gives it (every register 0, FLAG 1,
    /// exact writes, time 0) for `general` registers, reusing its planes: allocating a
    /// fresh array per frame costs more than the frame's bus passes (the kernel zeroes
    /// every new page).
    pub(crate) fn reset(&mut self, general: usize, edge: EdgeMode) {
        let fresh = |planes: &mut Vec<Vec<f32>>, n: usize| {
            planes.resize_with(n, || vec![0.0; PES]);
            planes.iter_mut().for_each(|p| p.fill(0.0));
        };
        fresh(&mut self.planes, general + 3);
        for (i, b) in self.bits.iter_mut().enumerate() {
            b.fill(u8::from(i == DReg::Flag.index()));
        }
        self.clip_map.resize_with(general + 2, || vec![0; PES]);
        self.clip_writes.resize(general + 2, 0);
        self.reset_saturation();
        self.settled.clear();
        self.settled.resize(general + 2, 0);
        self.general = general;
        self.flag_full = true;
        self.pix_reset = None;
        self.dac = 0.0;
        self.dac_uncorrected = false;
        self.edge = edge;
        self.segment.clear();
        self.layer = Box::new(Exact);
        self.seq = 0;
        self.saturated = 0;
        self.decays = false;
    }

    /// Runs every later instruction under the noise model `model` (an array starts
    /// exact).
    pub fn set_layer(&mut self, model: NoiseModel) {
        let layer: Box<dyn WriteLayer> = Box::new(model);
        self.settle();
        self.decays = layer.decay(1).is_some();
        self.settled.fill(self.seq);
        self.layer = layer;
    }

    /// Clipped writes and distinct clipped PEs of `reg` since the last
    /// [`Array::reset_saturation`].
    pub(crate) fn clipped(&self, reg: Reg) -> (u64, u64) {
        let Some(i) = self.plane_index(reg) else {
            return (0, 0);
        };
        if self.clip_writes[i] == 0 {
            return (0, 0);
        }
        // Row by row in 32-bit lanes, so the count vectorises.
        let pes = self.clip_map[i]
            .chunks_exact(N)
            .map(|row| u64::from(row.iter().map(|&b| u32::from(b)).sum::<u32>()))
            .sum();
        (self.clip_writes[i], pes)
    }

    /// Starts counting clipped writes per register afresh (the total of
    /// [`Array::saturated`] keeps running).
    pub(crate) fn reset_saturation(&mut self) {
        for (w, m) in self.clip_writes.iter_mut().zip(&mut self.clip_map) {
            // A map can only hold marks where writes were clipped.
            if *w > 0 {
                m.fill(0);
                *w = 0;
            }
        }
    }

    /// Applies the layer's decay to every register up to the current instruction
    /// (values read through [`Array::plane`] are then current).
    pub fn settle(&mut self) {
        if self.decays {
            for i in 0..=self.general {
                self.settle_plane(i);
            }
        }
    }

    /// Decays plane `i` for the instructions since it was last settled.
    fn settle_plane(&mut self, i: usize) {
        let idle = self.seq - self.settled[i];
        self.settled[i] = self.seq;
        if let Some((factor, toward)) = self.layer.decay(idle) {
            self.planes[i].par_chunks_mut(N).for_each(|row| {
                row.iter_mut()
                    .for_each(|v| *v = toward + (*v - toward) * factor)
            });
        }
    }

    /// Settles the planes an instruction reads or writes, before it runs.
    fn settle_regs(&mut self, regs: &[Reg]) {
        for &r in regs {
            let reg = if matches!(r, Reg::X(_)) { Reg::News } else { r };
            if let Some(i) = self.plane_index(reg).filter(|&i| i <= self.general) {
                self.settle_plane(i);
            }
        }
    }

    /// The values of `reg` as the readout path delivers them (ADC quantisation and
    /// readout noise when the layer models them; the exact values otherwise).
    pub fn read_out(&self, reg: Reg) -> Option<Vec<f32>> {
        let plane = self.plane_index(reg)?;
        let mut out = self.planes[plane].clone();
        if self.layer.has_readout() {
            let ctx = ReadCtx {
                seq: self.seq,
                plane,
            };
            let layer = &*self.layer;
            out.par_chunks_mut(N)
                .enumerate()
                .for_each(|(r, row)| layer.readout(&ctx, r, row));
        }
        Some(out)
    }

    /// Number of general registers.
    pub fn general(&self) -> usize {
        self.general
    }

    /// The edge mode.
    pub fn edge(&self) -> EdgeMode {
        self.edge
    }

    /// Writes clipped by the layer so far.
    pub fn saturated(&self) -> u64 {
        self.saturated
    }

    /// Lets one cycle pass without an instruction reaching the array (a `nop()`).
    pub(crate) fn tick(&mut self) {
        self.seq += 1;
    }

    /// Bus instructions executed so far (the sequence number of the next one).
    #[cfg(test)]
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// Whether FLAG is 1 in every PE.
    pub(crate) fn flag_full(&self) -> bool {
        self.flag_full
    }

    /// Index of the plane holding `reg` (general, `NEWS` or `PIX`).
    pub(crate) fn plane_index(&self, reg: Reg) -> Option<usize> {
        match reg {
            Reg::Gen(i) if usize::from(i) < self.general => Some(usize::from(i)),
            Reg::News => Some(self.general),
            Reg::Pix => Some(self.general + 1),
            _ => None,
        }
    }

    /// Row-major values of an analogue register (`PIX` shows the exposure).
    pub fn plane(&self, reg: Reg) -> Option<&[f32]> {
        self.plane_index(reg).map(|i| self.planes[i].as_slice())
    }

    /// Mutable values of a general register or `NEWS` (for preloading).
    pub fn plane_mut(&mut self, reg: Reg) -> Option<&mut [f32]> {
        match reg {
            Reg::Gen(_) | Reg::News => {
                let i = self.plane_index(reg)?;
                Some(self.planes[i].as_mut_slice())
            }
            _ => None,
        }
    }

    /// The value of `reg` at one PE, as that PE would read it (neighbour views included).
    pub fn read(&self, reg: Reg, row: usize, col: usize) -> f32 {
        match reg {
            Reg::In => self.dac,
            Reg::Pix if self.pix_reset.is_some() => self.pix_reset.unwrap_or(0.0),
            Reg::X(d) => {
                let (dr, dc) = d.step();
                match (
                    self.edge.neighbour(row, dr, N),
                    self.edge.neighbour(col, dc, N),
                ) {
                    (Some(r), Some(c)) => self.planes[self.general][r * N + c],
                    _ => 0.0,
                }
            }
            _ => self
                .plane_index(reg)
                .map_or(0.0, |i| self.planes[i][row * N + col]),
        }
    }

    /// A digital register plane (0 or 1 per PE).
    pub fn bits(&self, reg: DReg) -> &[u8] {
        &self.bits[reg.index()]
    }

    /// Mutable digital register plane (for preloading).
    pub(crate) fn bits_mut(&mut self, reg: DReg) -> &mut [u8] {
        if reg == DReg::Flag {
            self.flag_full = false;
        }
        &mut self.bits[reg.index()]
    }

    /// Recomputes the cached "FLAG is all ones" after outside changes to FLAG.
    pub(crate) fn refresh_flag(&mut self) {
        self.flag_full = self.bits[DReg::Flag.index()].iter().all(|&b| b == 1);
    }

    /// Exposes the photodiodes to an 8-bit grey image (row-major 256x256): `PIX` then
    /// holds half the pixel value, so a half-range capture gives `p / 2` and a
    /// full-range capture `p - 128`.
    pub fn expose(&mut self, image: &[u8]) {
        let pix = self.general + 1;
        for (d, &p) in self.planes[pix].iter_mut().zip(image) {
            *d = f32::from(p) / 2.0;
        }
        self.pix_reset = None;
    }

    /// Starts a batch of statements whose transfers may fuse across statements (see
    /// [`Batch`]).
    pub(crate) fn batch(&mut self) -> Batch<'_> {
        Batch { array: self }
    }

    /// Runs the transfers planned but not yet run.
    fn flush(&mut self) {
        let mut segment = std::mem::take(&mut self.segment);
        self.run_segment(&segment);
        segment.clear();
        self.segment = segment;
    }

    /// Plans `ops` onto the pending segment (see [`Batch::execute`]).
    fn execute_pending(&mut self, ops: &[BusOp]) -> Result<(), MachineError> {
        if self.decays {
            // Decay settles planes instruction by instruction: no fusion (and so
            // nothing is ever pending).
            for op in ops {
                step(self, op)?;
            }
            return Ok(());
        }
        let mut segment = std::mem::take(&mut self.segment);
        let result = self.execute_fused(ops, &mut segment);
        self.segment = segment;
        result
    }

    /// Transfers are planned as they come (which moves `seq`, the DAC and the PIX reset
    /// on as executing them would) and run when the next one cannot join their segment
    /// or something else touches the array; the last segment stays pending.
    fn execute_fused(
        &mut self,
        ops: &[BusOp],
        segment: &mut Vec<Transfer>,
    ) -> Result<(), MachineError> {
        for op in ops {
            match op {
                BusOp::Transfer { dsts, srcs } => {
                    let t = match self.plan_transfer(dsts, srcs) {
                        Ok(t) => t,
                        Err(e) => {
                            self.run_segment(segment);
                            segment.clear();
                            return Err(e);
                        }
                    };
                    if !plan::joins(segment, &t) {
                        self.run_segment(segment);
                        segment.clear();
                    }
                    segment.push(t);
                }
                // These only change how later sources read (or the time): plan on.
                BusOp::Rpix { level } => self.reset_pix(*level),
                BusOp::Dac(v) => self.set_dac(*v),
                BusOp::DacUncorrected(v) => self.set_dac_uncorrected(*v),
                BusOp::Nop => self.tick(),
                other => {
                    self.run_segment(segment);
                    segment.clear();
                    step(self, other)?;
                }
            }
        }
        Ok(())
    }

    /// Where source `reg` is read from.
    fn source(&self, reg: Reg) -> Result<Src, MachineError> {
        Ok(match reg {
            Reg::In => Src::Const(self.dac),
            Reg::Pix => match self.pix_reset {
                Some(level) => Src::Const(level),
                None => Src::Plane(self.general + 1),
            },
            Reg::X(d) => {
                let (dr, dc) = d.step();
                Src::View {
                    plane: self.general,
                    dr,
                    dc,
                }
            }
            other => Src::Plane(
                self.plane_index(other)
                    .ok_or(MachineError::NoRegister(other))?,
            ),
        })
    }

    /// Resolves a transfer at the current instruction, then moves time on past it (the
    /// PIX reset is read once; the instruction takes its cycle).
    fn plan_transfer(&mut self, dsts: &[Reg], srcs: &[Reg]) -> Result<Transfer, MachineError> {
        let mut t = Transfer::new();
        for &s in srcs {
            t.push_src(self.source(s)?);
        }
        for &d in dsts {
            let (reg, from) = match d {
                Reg::X(dir) => {
                    let (dr, dc) = dir.step();
                    (Reg::News, (-dr, -dc))
                }
                r => (r, (0, 0)),
            };
            let plane = self
                .plane_index(reg)
                .filter(|&p| p <= self.general)
                .ok_or(MachineError::CannotReceive(d))?;
            let ctx = WriteCtx {
                seq: self.seq,
                reg: d,
                plane,
                receivers: dsts.len(),
                sources: srcs.len(),
                reads_in: srcs.contains(&Reg::In),
                in_uncorrected: self.dac_uncorrected && srcs.contains(&Reg::In),
                reads_pix: srcs.contains(&Reg::Pix),
            };
            t.push_dst(Dst { plane, from, ctx });
        }
        t.snapshot_self_reads(self.scratch_index());
        if srcs.contains(&Reg::Pix) {
            // The reset level is read once; afterwards PIX shows a new exposure.
            self.pix_reset = None;
        }
        self.seq += 1;
        Ok(t)
    }

    /// The hidden plane a transfer reads its snapshot from.
    fn scratch_index(&self) -> usize {
        self.general + 2
    }

    /// Runs a segment of planned transfers over the array, band by band.
    fn run_segment(&mut self, segment: &[Transfer]) {
        let Some(first) = segment.first() else {
            return;
        };
        if let Some(p) = first.snapshot {
            let at = self.scratch_index();
            let (planes, scratch) = self.planes.split_at_mut(at);
            scratch[0].copy_from_slice(&planes[p]);
        }
        let ids = plan::written_planes(segment);
        let exact = self.layer.is_exact();
        // The written planes leave `planes` while the bands hold them (so every other
        // plane can be shared for reading); clip maps travel only when a layer clips.
        let mut owned: [Vec<f32>; MAX_WRITTEN] = Default::default();
        let mut maps: [Vec<u8>; MAX_WRITTEN] = Default::default();
        for (i, &p) in ids.iter().enumerate().filter(|(_, &p)| p != usize::MAX) {
            owned[i] = std::mem::take(&mut self.planes[p]);
            if !exact {
                maps[i] = std::mem::take(&mut self.clip_map[p]);
            }
        }
        let shared = bands::Shared {
            planes: &self.planes,
            flag: (!self.flag_full).then(|| self.bits[DReg::Flag.index()].as_slice()),
            edge: self.edge,
            layer: (!exact).then_some(&*self.layer),
        };
        let clipped = bands::run(&shared, bands::split(ids, &mut owned, &mut maps), segment);
        for (i, &p) in ids.iter().enumerate().filter(|(_, &p)| p != usize::MAX) {
            self.planes[p] = std::mem::take(&mut owned[i]);
            if !exact {
                self.clip_map[p] = std::mem::take(&mut maps[i]);
            }
            self.clip_writes[p] += clipped[i];
            self.saturated += clipped[i];
        }
    }
}

impl Machine for Array {
    fn transfer(&mut self, dsts: &[Reg], srcs: &[Reg]) -> Result<(), MachineError> {
        if self.decays {
            self.settle_regs(srcs);
            self.settle_regs(dsts);
        }
        let t = self.plan_transfer(dsts, srcs)?;
        self.run_segment(&[t]);
        if self.decays {
            // The value lands at the end of this cycle; it starts decaying with the
            // next one. (PEs a FLAG mask left unwritten skip this one cycle.)
            for d in t.dsts() {
                self.settled[d.plane] = self.seq;
            }
        }
        Ok(())
    }

    fn flag_where(&mut self, srcs: &[Reg]) -> Result<(), MachineError> {
        if self.decays {
            self.settle_regs(srcs);
        }
        let mut t = Transfer::new();
        for &s in srcs {
            t.push_src(self.source(s)?);
        }
        let shared = bands::Shared {
            planes: &self.planes,
            flag: None,
            edge: self.edge,
            layer: None,
        };
        let flag = &mut self.bits[DReg::Flag.index()];
        flag.par_chunks_mut(bands::BAND_ROWS * N)
            .enumerate()
            .for_each(|(b, rows)| bands::where_rows(&shared, &t, b * bands::BAND_ROWS, rows));
        self.refresh_flag();
        self.seq += 1;
        Ok(())
    }

    fn flag_all(&mut self) {
        self.bits[DReg::Flag.index()].fill(1);
        self.flag_full = true;
        self.seq += 1;
    }

    fn reset_pix(&mut self, level: f32) {
        self.pix_reset = Some(level);
        self.seq += 1;
    }

    fn set_dac(&mut self, value: i32) {
        self.dac = value as f32;
        self.dac_uncorrected = false;
    }

    fn set_dac_uncorrected(&mut self, value: i32) {
        self.dac = value as f32;
        self.dac_uncorrected = true;
    }

    fn digital(&mut self, op: &DigitalOp) -> Result<(), MachineError> {
        self.seq += 1;
        let mut out = std::mem::take(&mut self.bit_scratch);
        let dst = match op {
            DigitalOp::Set(rs) | DigitalOp::Clr(rs) => {
                let v = u8::from(matches!(op, DigitalOp::Set(_)));
                for r in rs {
                    self.bits[r.index()].fill(v);
                }
                self.bit_scratch = out;
                if rs.contains(&DReg::Flag) {
                    self.refresh_flag();
                }
                return Ok(());
            }
            DigitalOp::Mov(d, s) => {
                out.copy_from_slice(&self.bits[s.index()]);
                *d
            }
            DigitalOp::Not(d, s) => {
                for (o, v) in out.iter_mut().zip(&self.bits[s.index()]) {
                    *o = 1 - v;
                }
                *d
            }
            DigitalOp::Or(d, srcs) | DigitalOp::Nor(d, srcs) => {
                out.fill(0);
                for s in srcs {
                    for (o, v) in out.iter_mut().zip(&self.bits[s.index()]) {
                        *o |= v;
                    }
                }
                if matches!(op, DigitalOp::Nor(..)) {
                    out.iter_mut().for_each(|o| *o = 1 - *o);
                }
                *d
            }
            DigitalOp::MovIfR0(d, s) => {
                let sel = &self.bits[0];
                for (i, o) in out.iter_mut().enumerate() {
                    *o = if sel[i] == 1 {
                        self.bits[s.index()][i]
                    } else {
                        self.bits[d.index()][i]
                    };
                }
                *d
            }
            DigitalOp::DNews { dst, src, boundary } => {
                let srcp = &self.bits[src.index()];
                for r in 0..N {
                    for c in 0..N {
                        let mut acc = 0u8;
                        for d in Dir::ALL {
                            let sel = crate::isa::op::dnews_select_reg(d);
                            if self.bits[sel.index()][r * N + c] == 0 {
                                continue;
                            }
                            let (dr, dc) = d.step();
                            let inside = r as i32 + dr >= 0
                                && r as i32 + dr < N as i32
                                && c as i32 + dc >= 0
                                && c as i32 + dc < N as i32;
                            acc |= if inside {
                                srcp[(r as i32 + dr) as usize * N + (c as i32 + dc) as usize]
                            } else {
                                u8::from(*boundary)
                            };
                        }
                        out[r * N + c] = acc;
                    }
                }
                *dst
            }
        };
        std::mem::swap(&mut self.bits[dst.index()], &mut out);
        self.bit_scratch = out;
        if dst == DReg::Flag {
            self.refresh_flag();
        }
        Ok(())
    }

    fn idle(&mut self) {
        self.tick();
    }
}
