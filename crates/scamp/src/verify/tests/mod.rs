//! The proofs' and static ranges' own tests: they pin items that are not the library's
//! surface (symbolic execution, the multi-plane proof, intervals and peaks), the gaps a
//! proof must not pass, and the compile-time input model against the bundled images.

mod background;
mod batched_runs;
mod check_channels;
mod ensemble;
mod predict_images;
mod proof_gaps;
mod proof_planes;
mod proof_soundness;

/// The repository's root, where `programs/`, `images/` and the bundled specs are.
fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
