#![warn(missing_docs)]
// No function over 100 lines (clippy.toml sets the threshold).
#![deny(clippy::too_many_lines)]
//! `scamp`: a cycle-accurate simulator, code generator and checker for the SCAMP-5
//! focal-plane sensor-processor.
//!
//! # The front door
//!
//! What a user starts from is re-exported here, at the crate root:
//!
//! | you have or want | start from |
//! | --- | --- |
//! | kernels and the program that computes them | [`Bank`] ([`Bank::compile`], [`Bank::with_kernels`], [`Bank::bare`]); every method returns a [`BankError`] |
//! | program text | [`parse_program`] gives a [`Program`] for a [`Device`] over registers [`Reg`], or an [`IsaError`] |
//! | a filter spec | [`parse_spec`] gives a [`Spec`], compiled with [`CompileOptions`] (an [`Objective`]) and [`Stats`], or a [`CompileError`] |
//! | the analogue error model | [`Profile`] (or a [`ProfileError`]) |
//! | an image | [`GreyImage`] |
//! | a command's options | [`CheckOptions`] with a [`ProfileTestbed`], [`RunOptions`] with a [`Setup`] per frame ([`Preload`], [`PlaneValues`]), [`CompareOptions`] over the [`Watched`] registers |
//! | a command's report | [`Proof`], [`Checked`] and its [`CheckReport`], [`CompileReport`], [`RunSummary`]: each serialises to exactly the JSON the `scamp` command prints |
//! | a network to evaluate on a dataset | [`Network`] (or an [`EvalError`]) |
//! | why a run or a comparison stopped | [`RunError`], [`CompareError`] |
//! | why a spec or a network file was refused | [`isa::YamlError`]: a position and a [`isa::YamlCause`], serde_yaml's own error or a check's cause with its values ([`cain::SpecProblem`], [`eval::NetworkProblem`]) |
//! | why a profile was refused | [`ProfileError`]: a position and a [`sim::noise::ProfileCause`] |
//!
//! # Namespaces
//!
//! The rest sits one level down. Each module below is a flat list of re-exports over
//! private files, so a path is never deeper than `scamp::module::Item`:
//!
//! - [`isa`]: the instruction set as data, program text, the macro table and the
//!   file-size limits;
//! - [`sim`]: the machine (register planes, bus instructions, capture, readout), with
//!   [`sim::noise`] (the error model) and [`sim::images`] (the bundled images);
//! - [`cain`]: the code generator, its options, reports and spec format;
//! - [`verify`]: proofs, error figures, predictions and static ranges;
//! - [`bank`]: banks and their reports, with [`bank::text`] (the reports as the
//!   command line prints them);
//! - [`eval`] (`scamp eval`) and [`export`] (`scamp export`);
//! - [`options`] (the check and eval options, each declared once), [`energy`] (the
//!   energy model) and [`cancel`] (stopping a long call from another thread).
//!
//! The HTML pages and the calibration experiments are applications above the library:
//! they live in the `scamp` command's package, `scamp-cli`.
//!
//! Each module's own page says which of its items are the library's surface, which are
//! plumbing the command line and the Python bindings share, and which are internals
//! the integration tests pin.
//!
//! # Run a program on your own array
//!
//! ```
//! use ndarray::Array2;
//! use scamp::{parse_program, sim, Device, PlaneValues, Preload, Profile, RunOptions, Setup, Watched};
//!
//! let program = parse_program("mov(B, A); add(C, A, B);", Device::default()).unwrap();
//! let ramp = Array2::from_shape_fn((256, 256), |(_, c)| c as f32 / 4.0);
//! let mut setup = Setup::new(sim::default_image());
//! setup.preloads.push(Preload::new("A", 6, PlaneValues::analogue("A", ramp.view()).unwrap()).unwrap());
//! let mut opts = RunOptions::new(Profile::builtin("ideal").unwrap());
//! opts.raw = true;
//! let c = Watched::parse("C", 6).unwrap();
//! let frames = scamp::bank::run_batch(&program, &[setup], &opts, &[c]).unwrap();
//! // Under `ideal` the arithmetic is exact: C = A + A on every PE.
//! assert_eq!(frames[0].planes[0].1[255], 2.0 * 255.0 / 4.0);
//! ```
//!
//! # Compile a spec
//!
//! ```
//! use scamp::{cain, Bank};
//! let spec = cain::parse_spec(
//!     "name: blur\ninput: A\nregisters: [A, B, C, D]\nkernels:\n  - out: A\n    scale: 1/4\n    weights: [[1, 2, 1]]\nsearch: { work: 2000, workers: 1 }\n",
//! ).unwrap();
//! let bank = Bank::compile(spec, &cain::CompileOptions::default(), &cain::Stats::default()).unwrap();
//! let report = bank.compile_report().unwrap();
//! assert!(bank.prove().unwrap().verified);
//! assert_eq!(report.kernels[0].approximated, cain::ShownWeights::Plane(vec![vec![1, 2, 1]]));
//! assert!(report.instructions <= 6, "{}", bank.text());
//! ```
//!
//! # Check a program against its kernel
//!
//! ```
//! use scamp::{cain, isa, Bank, CheckOptions, ProfileTestbed};
//! let spec = cain::parse_spec(
//!     "name: half\ninput: A\nregisters: [A, B]\nkernels:\n  - out: A\n    scale: 1/2\n    weights: [[1]]\n",
//! ).unwrap();
//! let program = isa::parse_program("divq(B, A); mov(A, B);", isa::Device::default()).unwrap();
//! let bank = Bank::with_kernels(program, "", spec).unwrap();
//! let images = [scamp::sim::default_image()];
//! let opts = CheckOptions::new("ideal");
//! let checked = bank.check(&images, &ProfileTestbed::ideal(), &opts).unwrap();
//! assert!(checked.report.verified);
//! // Exact arithmetic: no analogue error at all under `ideal`.
//! assert_eq!(checked.report.kernels[0].analogue.rmse, 0.0);
//! ```
//!
//! # Compare ideal and noisy runs
//!
//! ```
//! use scamp::verify::adc_step;
//! use scamp::{isa, sim, Bank, CompareOptions, RunOptions, Setup, Watched};
//! let program = isa::parse_program("get_image(A, B); divq(C, A);", isa::Device::default()).unwrap();
//! let opts = RunOptions::new(sim::noise::Profile::builtin("scamp5").unwrap());
//! let compare = CompareOptions::new(vec![Watched::parse("C", 6).unwrap()], adc_step(&opts.profile))
//!     .with_runs(2);
//! let scenes = [("camera".to_string(), sim::default_image())];
//! let c = Bank::bare(program)
//!     .compare(&scenes, &|img| Setup::new(img.clone()), &opts, &compare, None)
//!     .unwrap();
//! let json = serde_json::to_value(&c).unwrap();
//! let rmse = json["registers"]["C"]["rmse"].as_f64().unwrap();
//! assert!(rmse > 0.1 && rmse < 20.0, "{rmse}");
//! ```
//!
//! # Load and edit a noise profile
//!
//! ```
//! use scamp::Profile;
//! let mut p = Profile::builtin("scamp5").unwrap();
//! p.saturation = None;
//! let text = p.to_yaml();
//! let back = Profile::from_yaml(&text, "edited.yaml").unwrap();
//! assert!(back.saturation.is_none());
//! assert!(Profile::load("no-such-profile.yaml").is_err());
//! ```
//!
//! # Evaluate a bank on a batch of images
//!
//! ```
//! use scamp::{isa, Bank, GreyImage, Profile, RunOptions, Setup, Watched};
//! let program = isa::parse_program("get_image(A, B); divq(C, A);", isa::Device::default()).unwrap();
//! let bank = Bank::bare(program);
//! // Eight flat frames of grey levels 0, 32, ..., 224: frame i runs with seed 7 + i.
//! let setups: Vec<Setup> = (0..8u8)
//!     .map(|i| Setup::new(GreyImage { pixels: vec![i * 32; 65536], resized_from: None }))
//!     .collect();
//! let mut opts = RunOptions::new(Profile::builtin("ideal").unwrap());
//! opts.seed = 7;
//! let c = Watched::parse("C", 6).unwrap();
//! let frames = bank.run(&setups, &opts, &[c]).unwrap();
//! assert_eq!(frames.len(), 8);
//! // get_image gives p - 128 (read out through the 8-bit ADC); divq halves it.
//! assert_eq!(frames[7].planes[0].1[0], ((224.0f32 - 128.0) / 2.0).round());
//! ```

pub mod bank;
pub mod cain;
pub mod cancel;
pub mod energy;
pub mod eval;
pub mod export;
pub mod isa;
pub mod options;
pub mod sim;
pub mod verify;

pub use bank::{
    Bank, BankError, CheckOptions, CheckReport, Checked, CompileReport, PlaneValues, Preload,
    Proof, RunOptions, RunSummary, Setup,
};
pub use cain::{parse_spec, CompileError, CompileOptions, Objective, Spec, Stats};
pub use eval::{EvalError, Network};
pub use isa::{parse_program, Device, IsaError, Program, Reg};
pub use sim::noise::{Profile, ProfileError};
pub use sim::{GreyImage, RunError};
pub use verify::{CompareError, CompareOptions, ProfileTestbed, Watched};
