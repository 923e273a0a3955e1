//! A network stage for tests: a spec of two kernels on the captured image and a
//! program computing it, as the files `refs.yaml` and `refs.scamp` a network names.

use std::path::Path;

/// Two kernels of the captured image A: B = A(west) + A(east) - A and C = A(north).
pub const REFS_SPEC: &str = "name: refs
input: A
registers: [A, B, C, D]
kernels:
  - out: B
    weights:
      - [0, 0, 0]
      - [1, -1, 1]
      - [0, 0, 0]
  - out: C
    weights:
      - [0, 1, 0]
      - [0, 0, 0]
      - [0, 0, 0]
approximation: { max_depth: 0, max_error: 0.0 }
";

/// A program computing [`REFS_SPEC`] (proven when the network is built).
pub const REFS_PROGRAM: &str = "movx(B, A, east);
movx(C, A, west);
add(B, B, C);
sub(B, B, A);
movx(C, A, north);
";

/// Writes [`REFS_SPEC`] and [`REFS_PROGRAM`] into `dir` as `refs.yaml` and `refs.scamp`.
pub fn write_refs(dir: &Path) {
    std::fs::write(dir.join("refs.yaml"), REFS_SPEC).expect("refs.yaml written");
    std::fs::write(dir.join("refs.scamp"), REFS_PROGRAM).expect("refs.scamp written");
}
