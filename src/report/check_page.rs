//! The page of `scamp check --html` for a bank: its report, the measurement behind
//! it and, when the proof holds, the pictures of run 0 on each image.

use super::check::{image_panels, CheckPage, KernelSummary};
use scamp::Measurement;
use scamp::Pictures;
use scamp::RunError;
use scamp::{Bank, CheckReport};

/// Why the page could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// The program stopped on an image.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A picture could not be encoded.
    #[error("cannot render: {0}")]
    Render(#[from] image::ImageError),
}

/// The page of `scamp check --html` for `r`, `bank`'s report (`target` names
/// what was checked; `m` is the measurement behind `r`): proof, error table, and
/// pictures per image when the proof holds. `None` for a bank without kernels.
pub fn bank_page(
    bank: &Bank,
    r: &CheckReport,
    m: Option<Measurement>,
    target: &str,
    p: &Pictures,
) -> Result<Option<String>, PageError> {
    let Some(spec) = bank.spec() else {
        return Ok(None);
    };
    let targets = scamp::check_targets(spec, bank.kernels());
    let panels = if r.verified {
        image_panels(bank.groups(), spec, &targets, p.images, p.testbed)?
    } else {
        Vec::new()
    };
    let errors = m.map(|m| m.kernels).unwrap_or_default();
    let summaries = bank
        .kernels()
        .iter()
        .enumerate()
        .map(|(i, k)| KernelSummary {
            out: k.out.to_string(),
            depth: k.approx.depth,
            approximated: k.approx.shown(),
            approx_error: k.approx.error,
            errors: errors.get(i).cloned(),
        })
        .collect();
    Ok(Some(super::check::check_page(&CheckPage {
        name: &spec.name,
        target,
        program: &r.program,
        instructions: r.instructions,
        cycles: r.cycles,
        time_us: r.time_us,
        energy_uj_per_frame: r.energy_uj_per_frame,
        noise: &r.noise,
        runs: r.runs,
        verified: r.verified,
        mismatch: &r.mismatch,
        border: r.border,
        kernels: summaries,
        images: panels,
        saturated: r.verified.then_some(r.saturated),
    })?))
}
