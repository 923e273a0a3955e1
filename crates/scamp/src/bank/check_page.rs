//! What `scamp check` writes besides its report: the result files of `--out` and the
//! self-contained page of `--html`, both from the bank's groups.

use super::{Bank, CheckReport};
use crate::report as html_report;
use crate::sim::capture::GreyImage;
use crate::sim::run::RunError;
use crate::verify::check::{self, Measurement, OutputError, Testbed};
use crate::verify::groups;
use std::path::Path;

/// The images a page or the result files are made from, and the test bed they run on.
pub struct Pictures<'a> {
    /// Named test images.
    pub images: &'a [(String, GreyImage)],
    /// Run 0 of this test bed makes the pictures.
    pub testbed: &'a dyn Testbed,
}

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

impl Bank {
    /// Writes, per image and kernel, the result, the ideal result and an error heat map
    /// (see `check::write_outputs`): in `dir` for one program, in `dir/groupN` per
    /// group of a bank. Nothing for a bank without kernels.
    pub fn write_outputs(
        &self,
        dir: &Path,
        p: &Pictures,
        border: usize,
    ) -> Result<(), OutputError> {
        let Some(spec) = self.spec() else {
            return Ok(());
        };
        let targets = crate::cain::check_targets(spec, self.kernels());
        let groups = self.groups();
        for (i, (program, members)) in groups.iter().enumerate() {
            let sub = if groups.len() > 1 {
                dir.join(format!("group{}", i + 1))
            } else {
                dir.to_path_buf()
            };
            check::write_outputs(
                &sub,
                program,
                spec.wiring(),
                &groups::members_of(members, &targets),
                p.images,
                p.testbed,
                border,
            )?;
        }
        Ok(())
    }

    /// The page of `scamp check --html` for `r`, this bank's report (`target` names
    /// what was checked; `m` is the measurement behind `r`): proof, error table, and
    /// pictures per image when the proof holds. `None` for a bank without kernels.
    pub fn check_page(
        &self,
        r: &CheckReport,
        m: Option<Measurement>,
        target: &str,
        p: &Pictures,
    ) -> Result<Option<String>, PageError> {
        let Some(spec) = self.spec() else {
            return Ok(None);
        };
        let targets = crate::cain::check_targets(spec, self.kernels());
        let panels = if r.verified {
            html_report::check::image_panels(
                self.groups(),
                spec.wiring(),
                &targets,
                p.images,
                p.testbed,
            )?
        } else {
            Vec::new()
        };
        let errors = m.map(|m| m.kernels).unwrap_or_default();
        let summaries = self
            .kernels()
            .iter()
            .enumerate()
            .map(|(i, k)| html_report::KernelSummary {
                out: k.out.to_string(),
                depth: k.approx.depth,
                approximated: k.approx.shown(),
                approx_error: k.approx.error,
                errors: errors.get(i).cloned(),
            })
            .collect();
        Ok(Some(html_report::check_page(&html_report::CheckPage {
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
}
