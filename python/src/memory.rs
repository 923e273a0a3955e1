//! Refusing a batch the machine cannot hold, before anything is allocated for it.

use crate::errors::value_error;
use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use scamp::sim::PES;

/// Working memory of one frame in flight (array planes, digital planes, clip maps and
/// the noise layer's per-chip pattern), rounded up.
const FRAME_WORKSPACE: u64 = 64 << 20;

/// Bytes the machine can still give, from `/proc/meminfo` (`None` where unknown).
fn available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
}

/// Bytes a run of `registers` outputs on `frames` images needs, given `input_planes`
/// input planes to copy: each output plane is held twice (as the frames finish, then
/// as numpy arrays), inputs once, plus one workspace per core.
pub fn needed(frames: u64, registers: u64, input_planes: u64) -> u64 {
    let plane = PES as u64 * 4;
    let threads = rayon::current_num_threads() as u64;
    frames
        .saturating_mul(registers)
        .saturating_mul(2 * plane)
        .saturating_add(input_planes.saturating_mul(plane))
        .saturating_add(threads.min(frames.max(1)) * FRAME_WORKSPACE)
}

/// Fails when the batch in `inputs` with `registers` outputs needs more memory than
/// the machine has available, saying how much it would need. Reads only the shapes.
pub fn check_batch(inputs: Option<&Bound<'_, PyDict>>, registers: usize) -> PyResult<()> {
    let mut frames = 1u64;
    let mut planes = 0u64;
    for (_, value) in inputs.into_iter().flat_map(|d| d.iter()) {
        if let Ok(a) = value.cast::<PyUntypedArray>() {
            let shape = a.shape();
            let n = if shape.len() == 3 { shape[0] as u64 } else { 1 };
            frames = frames.max(n);
            planes = planes.saturating_add(n);
        }
    }
    let need = needed(frames, registers as u64, planes);
    match available() {
        Some(have) if need > have => Err(value_error(format!(
            "a batch of {frames} images with {registers} output registers would need {} of memory, \
             more than the {} available; run it in smaller batches",
            gib(need),
            gib(have)
        ))),
        _ => Ok(()),
    }
}
