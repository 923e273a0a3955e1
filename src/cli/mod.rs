//! Command-line interface: argument parsing and printing only. Each subcommand lives in
//! its own file and calls into the library.

use clap::{Parser, Subcommand};
use scamp::CompileError;
use std::path::PathBuf;

/// A user-facing failure: printed as one `error: ...` line. Bad input exits with 2; a
/// search that found no program exits with 1, like a check that failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A problem the command line itself found (flag values, files it could not use).
    #[error("{0}")]
    Msg(String),
    /// A library error in a file: `FILE:` in front of the error's own `LINE:COL: ...`.
    #[error("{}:{source}", file.display())]
    InFile {
        /// The file the error is in.
        file: PathBuf,
        /// The positioned error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A file that could not be used, without a position: `FILE: message`.
    #[error("{}: {source}", file.display())]
    File {
        /// The file.
        file: PathBuf,
        /// What is wrong with it.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Compiling a spec failed: exit 1 when the search found no program (a failed
    /// check), 2 when the generator refused the spec or the options (bad input).
    #[error("{}: {source}", spec.display())]
    CompileSpec {
        /// The spec that was compiled.
        spec: PathBuf,
        /// Why it failed.
        source: scamp::CompileError,
    },
    /// The code generator refused the spec or the options.
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// A noise profile that could not be read (the error names the file).
    #[error(transparent)]
    Profile(#[from] scamp::ProfileError),
    /// A picture that could not be loaded.
    #[error(transparent)]
    Capture(#[from] scamp::CaptureError),
    /// A program stopped while running (with its position).
    #[error(transparent)]
    Run(#[from] scamp::RunError),
    /// The calibration could not run.
    #[error(transparent)]
    Calibration(#[from] scamp::identity::CalibrationError),
    /// A plane or image file could not be read or written (the error names it).
    #[error(transparent)]
    PlaneFile(#[from] scamp::PlaneFileError),
    /// JSON output could not be written.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

impl CliError {
    /// A message-only error (any error or text, shown as it displays).
    pub fn msg(m: impl std::fmt::Display) -> Self {
        CliError::Msg(m.to_string())
    }

    /// The exit code this error ends the process with.
    pub fn code(&self) -> u8 {
        let not_found = matches!(
            self,
            CliError::CompileSpec { source, .. } if source.is_no_program()
        ) || matches!(self, CliError::Compile(CompileError::ApproxMiss { .. }));
        if not_found {
            1
        } else {
            2
        }
    }
}

impl From<String> for CliError {
    fn from(m: String) -> Self {
        CliError::Msg(m)
    }
}

/// A failed compilation of the spec at `spec`, naming it.
pub fn compile_error(spec: &std::path::Path, e: CompileError) -> CliError {
    CliError::CompileSpec {
        spec: spec.to_path_buf(),
        source: e,
    }
}

/// Exit code of a subcommand that ran to the end: 0 success, 1 a check failed.
pub type Outcome = Result<u8, CliError>;

/// `error: FILE:LINE:COL: message` for an error with a position in `file`.
pub fn positioned(
    file: &std::path::Path,
    e: impl std::error::Error + Send + Sync + 'static,
) -> CliError {
    CliError::InFile {
        file: file.to_path_buf(),
        source: Box::new(e),
    }
}

/// Simulator, code generator and checker for the SCAMP-5 focal-plane sensor-processor.
#[derive(Parser, Debug)]
#[command(name = "scamp", version, about, after_help = args::LIMITS)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Execute a program on the 256x256 array and print its figures.
    #[command(after_help = args::LIMITS)]
    Run(run::RunArgs),
    /// Show every bus instruction of a program and one PE's registers after each.
    #[command(after_help = args::LIMITS)]
    Trace(trace::TraceArgs),
    /// Noise profiles: show one as YAML, rerun the calibration against the hardware.
    Noise(noise::NoiseCmdArgs),
    /// Prove a program computes its kernels and measure its error on test images.
    #[command(after_help = args::LIMITS)]
    Check(check::CheckArgs),
    /// Simulator throughput next to a streaming roofline.
    Bench(bench::BenchArgs),
    /// Generate the shortest program computing the kernels of a filter spec.
    #[command(after_help = args::LIMITS)]
    Compile(compile::CompileArgs),
    /// A network's accuracy on a dataset, ideal against a noise profile.
    Eval(eval::EvalArgs),
    /// The playground: edit, run and step programs and grade exercises in a browser.
    Serve(serve::ServeArgs),
    /// A program, spec or network as a C++ source for the SCAMP-5d host API.
    Export(export::ExportArgs),
}

/// Parses the command line, runs the subcommand and returns the process exit code.
pub fn main() -> u8 {
    let cli = match Cli::try_parse_from(args::join_negative_values(std::env::args_os().collect())) {
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
        Command::Eval(a) => eval::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Export(a) => export::run(a),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            e.code()
        }
    }
}

pub mod args;
pub mod bench;
pub mod check;
pub mod common;
pub mod compile;
pub mod eval;
pub mod export;
pub mod files;
pub mod noise;
pub mod run;
pub mod serve;
pub mod trace;
