//! The `scamp` command.

/// The search allocates small vectors at a high rate (see Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(scamp_cli::cli::main())
}
