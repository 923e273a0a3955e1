//! The numeric PE array: 256x256 float planes for the analogue registers, byte planes
//! for the digital ones, and the bus instructions executed over all PEs at once.

use super::edge::EdgeMode;
use super::layer::{Exact, ReadCtx, WriteCtx, WriteLayer};
use super::machine::{Linear, Machine, MachineError};
use crate::isa::{DReg, DigitalOp, Dir, Reg};
use rayon::prelude::*;

/// Side of the array.
pub const N: usize = 256;
/// PEs in the array.
pub const PES: usize = N * N;

/// Where a transfer reads one row of a source from.
#[derive(Clone, Copy)]
enum Source<'a> {
    Plane(&'a [f32]),
    Const(f32),
    Neighbour(&'a [f32], Dir),
}

impl Source<'_> {
    /// Adds row `r` of this source to `acc`.
    #[inline(always)]
    fn add_row(&self, r: usize, edge: EdgeMode, acc: &mut [f32]) {
        match *self {
            Source::Plane(p) => {
                for (a, v) in acc.iter_mut().zip(&p[r * N..(r + 1) * N]) {
                    a.add_assign(v);
                }
            }
            Source::Const(c) => acc.iter_mut().for_each(|a| a.add_assign(&c)),
            Source::Neighbour(news, d) => {
                let (dr, dc) = d.step();
                // A row with nothing beyond the edge contributes zeros.
                let Some(nr) = edge.neighbour(r, dr, N) else {
                    return;
                };
                let row = &news[nr * N..(nr + 1) * N];
                if dc == 0 {
                    for (a, v) in acc.iter_mut().zip(row) {
                        a.add_assign(v);
                    }
                    return;
                }
                // Interior columns are a shifted slice; the edge column follows the mode.
                let (inner, edge_col) = if dc > 0 { (1..N, N - 1) } else { (0..N - 1, 0) };
                let shifted = &row[inner];
                let body = if dc > 0 {
                    &mut acc[..N - 1]
                } else {
                    &mut acc[1..]
                };
                for (a, v) in body.iter_mut().zip(shifted) {
                    a.add_assign(v);
                }
                if let Some(c) = edge.neighbour(edge_col, dc, N) {
                    acc[edge_col].add_assign(&row[c]);
                }
            }
        }
    }
}

/// The state of every PE, with the layer that perturbs writes.
pub struct Array {
    general: usize,
    /// General planes, then `NEWS`, then the photodiode exposure.
    planes: Vec<Vec<f32>>,
    /// `R0..R12`, then `FLAG`; one byte (0 or 1) per PE.
    bits: Vec<Vec<u8>>,
    flag_full: bool,
    pix_reset: Option<f32>,
    dac: f32,
    edge: EdgeMode,
    scratch: Vec<f32>,
    bit_scratch: Vec<u8>,
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

impl Array {
    /// A fresh array: every register 0, FLAG 1 everywhere, exact writes.
    pub fn new(general: usize, edge: EdgeMode) -> Self {
        let mut bits = vec![vec![0u8; PES]; DReg::COUNT + 1];
        bits[DReg::Flag.index()].fill(1);
        Array {
            general,
            planes: vec![vec![0.0; PES]; general + 2],
            bits,
            flag_full: true,
            pix_reset: None,
            dac: 0.0,
            edge,
            scratch: vec![0.0; PES],
            bit_scratch: vec![0; PES],
            layer: Box::new(Exact),
            seq: 0,
            saturated: 0,
            clip_writes: vec![0; general + 2],
            clip_map: vec![vec![0; PES]; general + 2],
            settled: vec![0; general + 2],
            decays: false,
        }
    }

    /// Replaces the write layer (e.g. with a noise model).
    pub fn set_layer(&mut self, layer: Box<dyn WriteLayer>) {
        self.settle();
        self.decays = layer.decay(1).is_some();
        self.settled.fill(self.seq);
        self.layer = layer;
    }

    /// Clipped writes and distinct clipped PEs of `reg` since the last
    /// [`Array::reset_saturation`].
    pub fn clipped(&self, reg: Reg) -> (u64, u64) {
        let Some(i) = self.plane_index(reg) else {
            return (0, 0);
        };
        if self.clip_writes[i] == 0 {
            return (0, 0);
        }
        let pes = self.clip_map[i].iter().map(|&b| u64::from(b)).sum();
        (self.clip_writes[i], pes)
    }

    /// Starts counting clipped writes per register afresh (the total of
    /// [`Array::saturated`] keeps running).
    pub fn reset_saturation(&mut self) {
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
                reg,
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
    pub fn tick(&mut self) {
        self.seq += 1;
    }

    /// Bus instructions executed so far (the sequence number of the next one).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Whether FLAG is 1 in every PE.
    pub fn flag_full(&self) -> bool {
        self.flag_full
    }

    /// Index of the plane holding `reg` (general, `NEWS` or `PIX`).
    pub fn plane_index(&self, reg: Reg) -> Option<usize> {
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
    pub fn bits_mut(&mut self, reg: DReg) -> &mut [u8] {
        if reg == DReg::Flag {
            self.flag_full = false;
        }
        &mut self.bits[reg.index()]
    }

    /// Recomputes the cached "FLAG is all ones" after outside changes to FLAG.
    pub fn refresh_flag(&mut self) {
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

    fn source(&self, reg: Reg) -> Result<Source<'_>, MachineError> {
        Ok(match reg {
            Reg::In => Source::Const(self.dac),
            Reg::Pix => match self.pix_reset {
                Some(level) => Source::Const(level),
                None => Source::Plane(&self.planes[self.general + 1]),
            },
            Reg::X(d) => Source::Neighbour(&self.planes[self.general], d),
            other => Source::Plane(
                &self.planes[self
                    .plane_index(other)
                    .ok_or_else(|| MachineError(format!("no register {other}")))?],
            ),
        })
    }

    /// Fills `scratch` with the sum of the sources, PE by PE.
    fn sum_into_scratch(&mut self, srcs: &[Reg]) -> Result<(), MachineError> {
        let mut scratch = std::mem::take(&mut self.scratch);
        let summed = self.sum_sources(srcs, &mut scratch);
        self.scratch = scratch;
        summed
    }

    fn sum_sources(&self, srcs: &[Reg], out: &mut [f32]) -> Result<(), MachineError> {
        let mut sources = [Source::Const(0.0); 4];
        for (slot, r) in sources.iter_mut().zip(srcs) {
            *slot = self.source(*r)?;
        }
        let sources = &sources[..srcs.len().min(4)];
        let edge = self.edge;
        out.par_chunks_mut(N).enumerate().for_each(|(r, acc)| {
            acc.fill(f32::zero());
            for s in sources {
                s.add_row(r, edge, acc);
            }
        });
        Ok(())
    }

    /// Stores `scratch` into `dst` where the writing PE's FLAG is set, through the layer.
    fn store(&mut self, dst: Reg, ctx: WriteCtx) -> u64 {
        let (target, shift) = match dst {
            Reg::X(d) => (self.general, Some(d)),
            _ => (ctx.plane, None),
        };
        let edge = self.edge;
        let scratch = &self.scratch;
        let flag = &self.bits[DReg::Flag.index()];
        let layer = &*self.layer;
        let exact = layer.is_exact();
        let full = self.flag_full;
        let plane = &mut self.planes[target];
        if shift.is_none() && exact && full {
            plane.copy_from_slice(scratch);
            return 0;
        }
        if shift.is_none() && full {
            // Every PE writes: each row is perturbed in place, no mask to build or apply.
            const ALL: [bool; N] = [true; N];
            let clipped: u64 = plane
                .par_chunks_mut(N)
                .zip(self.clip_map[target].par_chunks_mut(N))
                .enumerate()
                .map(|(t, (out, map_row))| {
                    out.copy_from_slice(&scratch[t * N..(t + 1) * N]);
                    let mut hit = [false; N];
                    let n = layer.perturb(&ctx, t, out, &ALL, &mut hit);
                    if n > 0 {
                        for (m, h) in map_row.iter_mut().zip(&hit) {
                            *m |= u8::from(*h);
                        }
                    }
                    n
                })
                .sum();
            self.clip_writes[target] += clipped;
            return clipped;
        }
        let clipped: u64 = plane
            .par_chunks_mut(N)
            .zip(self.clip_map[target].par_chunks_mut(N))
            .enumerate()
            .map(|(t, (out, map_row))| {
                let mut vals = [0f32; N];
                let mut mask = [false; N];
                match shift {
                    None => {
                        vals.copy_from_slice(&scratch[t * N..(t + 1) * N]);
                        for (m, &f) in mask.iter_mut().zip(&flag[t * N..(t + 1) * N]) {
                            *m = f == 1;
                        }
                    }
                    Some(d) => {
                        // NEWS at t receives what the PE at t - d computed.
                        let (dr, dc) = d.step();
                        let Some(ir) = edge.neighbour(t, -dr, N) else {
                            return 0;
                        };
                        for c in 0..N {
                            if let Some(ic) = edge.neighbour(c, -dc, N) {
                                vals[c] = scratch[ir * N + ic];
                                mask[c] = flag[ir * N + ic] == 1;
                            }
                        }
                    }
                }
                let clipped = if exact {
                    0
                } else {
                    let mut hit = [false; N];
                    let n = layer.perturb(&ctx, t, &mut vals, &mask, &mut hit);
                    if n > 0 {
                        for (m, h) in map_row.iter_mut().zip(&hit) {
                            *m |= u8::from(*h);
                        }
                    }
                    n
                };
                for ((o, v), m) in out.iter_mut().zip(&vals).zip(&mask) {
                    if *m {
                        *o = *v;
                    }
                }
                clipped
            })
            .sum();
        self.clip_writes[target] += clipped;
        clipped
    }
}

impl Machine for Array {
    fn transfer(&mut self, dsts: &[Reg], srcs: &[Reg]) -> Result<(), MachineError> {
        if self.decays {
            self.settle_regs(srcs);
            self.settle_regs(dsts);
        }
        self.sum_into_scratch(srcs)?;
        let receivers = dsts.len();
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch
            .par_chunks_mut(N)
            .for_each(|row| row.iter_mut().for_each(|v| v.negate_split(receivers)));
        self.scratch = scratch;
        for &d in dsts {
            let plane = self
                .plane_index(match d {
                    Reg::X(_) => Reg::News,
                    r => r,
                })
                .ok_or_else(|| MachineError(format!("{d} cannot receive a transfer")))?;
            let ctx = WriteCtx {
                seq: self.seq,
                reg: d,
                plane,
                receivers,
                sources: srcs.len(),
                reads_in: srcs.contains(&Reg::In),
                reads_pix: srcs.contains(&Reg::Pix),
            };
            self.saturated += self.store(d, ctx);
            if self.decays {
                // The value lands at the end of this cycle; it starts decaying with the
                // next one. (PEs a FLAG mask left unwritten skip this one cycle.)
                self.settled[plane] = self.seq + 1;
            }
        }
        if srcs.contains(&Reg::Pix) {
            // The reset level is read once; afterwards PIX shows a new exposure.
            self.pix_reset = None;
        }
        self.seq += 1;
        Ok(())
    }

    fn flag_where(&mut self, srcs: &[Reg]) -> Result<(), MachineError> {
        if self.decays {
            self.settle_regs(srcs);
        }
        self.sum_into_scratch(srcs)?;
        let flag = &mut self.bits[DReg::Flag.index()];
        for (f, v) in flag.iter_mut().zip(&self.scratch) {
            *f = u8::from(*v > 0.0);
        }
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
}
