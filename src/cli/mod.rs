//! Command-line interface: argument parsing and printing only. Each subcommand lives in
//! its own file and calls into the library.

use clap::{Parser, Subcommand};

/// A user-facing failure: printed as one `error: ...` line, exit code 2.
#[derive(Debug)]
pub struct CliError(pub String);

impl<E: std::fmt::Display> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError(e.to_string())
    }
}

/// Exit code of a subcommand that ran to the end: 0 success, 1 a check failed.
pub type Outcome = Result<u8, CliError>;

/// `error: FILE:LINE:COL: message` for an error with a position in `file`.
pub fn positioned(file: &std::path::Path, e: impl std::fmt::Display) -> CliError {
    CliError(format!("{}:{e}", file.display()))
}

/// Simulator, code generator and checker for the SCAMP-5 focal-plane sensor-processor.
#[derive(Parser, Debug)]
#[command(name = "scamp", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Execute a program on the 256x256 array and print its figures.
    Run(run::RunArgs),
    /// Show every bus instruction of a program and one PE's registers after each.
    Trace(trace::TraceArgs),
    /// Noise profiles: show one as YAML, rerun the calibration against the hardware.
    Noise(noise::NoiseCmdArgs),
    /// Prove a program computes its kernels and measure its error on test images.
    Check(check::CheckArgs),
    /// Simulator throughput next to a streaming roofline.
    Bench(bench::BenchArgs),
    /// Generate the shortest program computing the kernels of a filter spec.
    Compile(compile::CompileArgs),
}

/// Parses the command line, runs the subcommand and returns the process exit code.
pub fn main() -> u8 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let outcome = match &cli.command {
        Command::Run(a) => run::run(a),
        Command::Trace(a) => trace::run(a),
        Command::Noise(a) => noise::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Check(a) => check::run(a),
        Command::Compile(a) => compile::run(a),
    };
    match outcome {
        Ok(code) => code,
        Err(CliError(msg)) => {
            eprintln!("error: {msg}");
            2
        }
    }
}

pub mod bench;
pub mod check;
pub mod common;
pub mod compile;
pub mod noise;
pub mod run;
pub mod trace;
