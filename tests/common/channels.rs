//! The multi-channel kernel set several tests compile, check and prove.

/// Two kernels over three inputs: a blur of A and B plus a quarter of C, and a
/// horizontal gradient of A and B plus a quarter of C: the library's own tests' file,
/// so that the set is written once.
pub const THREE: &str = include_str!("../../crates/scamp/src/cain/tests/three_channel.yaml");
