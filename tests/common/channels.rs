//! The multi-channel kernel set several tests compile, check and prove.

/// Two kernels over three inputs: a blur of A and B plus a quarter of C, and a
/// horizontal gradient of A and B plus a quarter of C.
pub const THREE: &str = "name: three-channel
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
