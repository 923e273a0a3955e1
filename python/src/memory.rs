//! Refusing a batch the machine cannot hold, before anything is allocated for it.

use crate::errors::value_error;
use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use scamp::batch_bytes;
use scamp::PES;

/// Bytes the machine can still give, from `/proc/meminfo` (`None` where unknown).
fn available() -> Option<u128> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u128 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn gib(bytes: u128) -> String {
    format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
}

/// Bytes a run of `registers` outputs on `frames` frames needs: what the library holds
/// while it runs ([`batch_bytes`]), the numpy copies of the outputs, and the copied
/// input planes (`input_planes`, at most 4 bytes a value).
pub fn needed(frames: u128, registers: usize, general: usize, input_planes: u128) -> u128 {
    let plane = PES as u128 * 4;
    batch_bytes(frames as usize, registers, general)
        .saturating_add(frames.saturating_mul(registers as u128 * plane))
        .saturating_add(input_planes.saturating_mul(plane))
}

/// Fails when the batch in `inputs` with `registers` outputs needs more memory than
/// the machine has available, saying how much it would need. Reads only the shapes.
pub fn check_batch(
    inputs: Option<&Bound<'_, PyDict>>,
    registers: usize,
    general: usize,
) -> PyResult<()> {
    let mut frames = 1u128;
    let mut count = 0u128;
    for (_, value) in inputs.into_iter().flat_map(|d| d.iter()) {
        if let Ok(a) = value.cast::<PyUntypedArray>() {
            let shape = a.shape();
            frames = frames.max(if shape.len() == 3 {
                shape[0] as u128
            } else {
                1
            });
            count += 1;
        }
    }
    // Every frame's setup holds its own copy of each input plane.
    let planes = frames.saturating_mul(count);
    // A frame count beyond usize is refused by the shape check; saturate here.
    let need = needed(frames.min(usize::MAX as u128), registers, general, planes);
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
