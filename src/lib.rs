#![warn(missing_docs)]
// No function over 100 lines (clippy.toml sets the threshold).
#![deny(clippy::too_many_lines)]
//! The `scamp` command and the playground server, above the [`scamp`] library.
//!
//! This crate only parses, calls the library and presents its results: [`cli`] holds the
//! command line (one module per subcommand), [`serve`] the playground's web server,
//! [`report`] the self-contained HTML pages and [`calibrate`] the calibration
//! experiments of `scamp noise` and the throughput figures of `scamp bench`.
//! A Rust program that simulates, compiles or checks depends on the `scamp` library
//! (`crates/scamp`) instead, which pulls in no command-line, web or progress-bar crate.

pub mod calibrate;
pub mod cli;
pub mod report;
pub mod serve;
