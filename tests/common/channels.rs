//! The multi-channel kernel set several tests compile, check and prove.

/// Two kernels over three inputs: a blur of A and B plus a quarter of C, and a
/// horizontal gradient of A and B plus a quarter of C (tests/common/three_channel.yaml,
/// which the library's own tests read too).
pub const THREE: &str = include_str!("three_channel.yaml");
