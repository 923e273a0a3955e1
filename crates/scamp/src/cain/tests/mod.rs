//! The code generator's own tests: they drive its internals (goals, bags, the search's
//! children, symbolic proofs of what it makes), which are not the library's surface.
//! What the `scamp compile` command prints is pinned by the tests beside the command.

mod banks;
mod channels;
mod compile;
mod search;

/// The repository's root, where `programs/`, `benches/specs` and the docs' examples are.
fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Two kernels over three inputs: a blur of A and B plus a quarter of C, and a
/// horizontal gradient of A and B plus a quarter of C (the set tests/common/channels.rs
/// gives the command's tests).
const THREE: &str = "name: three-channel
inputs: [A, B, C]
registers: [A, B, C, D, E, F]
kernels:
  - out: D
    scale: 1/64
    weights:
      - [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
      - [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
      - [[0, 0, 0], [0, 16, 0], [0, 0, 0]]
  - out: E
    scale: 1/32
    weights:
      - [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]
      - [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]
      - [[0, 0, 0], [0, 8, 0], [0, 0, 0]]
";
