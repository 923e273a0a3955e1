//! The code generator's own tests: they drive its internals (goals, bags, the search's
//! children, symbolic proofs of what it makes), which are not the library's surface.
//! What the `scamp compile` command prints is pinned by the tests beside the command.

mod banks;
mod channels;
mod compile;
mod fit;
mod layer;
mod rules;
mod search;

/// Proves a compiled program again, independently of the compiler's own check.
pub(super) fn assert_proven(c: &crate::cain::Compiled) {
    let general = crate::isa::Reg::general_count(&c.registers);
    crate::verify::prove(
        &c.program,
        crate::isa::Wiring::new(c.input, general),
        &c.targets(),
        Some(&c.registers),
    )
    .unwrap_or_else(|e| panic!("{e}\n{}", c.program));
}

/// A row of `n` weights in eighths (-7..7) from a linear congruential sequence at `x`.
pub(super) fn lcg_row(x: &mut u64, n: usize) -> String {
    let row: Vec<String> = (0..n)
        .map(|_| {
            *x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (((*x >> 33) % 15) as i64 - 7).to_string()
        })
        .collect();
    format!("[{}]", row.join(", "))
}

/// The repository's root, where `programs/`, `benches/specs` and the docs' examples are.
fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Two kernels over three inputs: a blur of A and B plus a quarter of C, and a
/// horizontal gradient of A and B plus a quarter of C (the file the command's tests
/// read too).
const THREE: &str = include_str!("three_channel.yaml");

/// Six 2x2 kernels over three inputs in six registers, outputs D, E, F twice: too many
/// for one program, so a bank of groups (the file the command's tests read too).
const SIX: &str = include_str!("six_kernels.yaml");
