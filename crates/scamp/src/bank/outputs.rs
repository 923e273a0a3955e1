//! What `scamp check --out` writes besides its report: the result files of each group
//! of the bank. (The page of `--html` is the `scamp` command's.)

use super::Bank;
use crate::sim::capture::GreyImage;
use crate::verify::check::{self, OutputError, ProfileTestbed};
use crate::verify::groups;
use std::path::Path;

/// The images the result files (or a page) are made from, and the test bed they run on.
pub struct Pictures<'a> {
    /// Named test images.
    pub images: &'a [(String, GreyImage)],
    /// Run 0 of this test bed makes the pictures.
    pub testbed: &'a ProfileTestbed,
}

impl Bank {
    /// Writes, per image and kernel, the result, the ideal result and an error heat map
    /// (see `verify::check::write_outputs`): in `dir` for one program, in `dir/groupN` per
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
}
