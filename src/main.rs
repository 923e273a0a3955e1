//! The `scamp` command.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(scamp::cli::main())
}
