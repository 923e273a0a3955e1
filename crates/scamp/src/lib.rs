#![warn(missing_docs)]
#![warn(unreachable_pub)]
// No function over 100 lines (clippy.toml sets the threshold).
#![deny(clippy::too_many_lines)]
//! `scamp`: a cycle-accurate simulator, code generator and checker for the SCAMP-5
//! focal-plane sensor-processor.
//!
//! # The front door
//!
//! The library's files are private; what a user needs is re-exported here, at the crate
//! root, grouped by what you do:
//!
//! | you want to | start from |
//! | --- | --- |
//! | write and run a program | [`parse_program`] gives a [`Program`] for a [`Device`] over registers [`Reg`]; [`run`] it on an [`Array`] under a noise [`Profile`] ([`NoiseModel`]), capture a [`GreyImage`]; or run a [`Bank`] over frames with [`RunOptions`] and a [`Setup`] per frame ([`Preload`], [`PlaneValues`]) |
//! | prove and check it | [`prove`] a program against its [`Target`]s, or [`Bank::prove`]; [`Bank::check`] with [`CheckOptions`] on a [`ProfileTestbed`] gives [`Checked`] and its [`CheckReport`]; [`Bank::compare`] with [`CompareOptions`] over the [`Watched`] registers |
//! | compile kernels | [`parse_spec`] gives a [`Spec`], compiled by [`Bank::compile`] (or [`compile`]) with [`CompileOptions`] (an [`Objective`]) and [`Stats`] into a [`CompileReport`] |
//! | evaluate a network | [`eval`]: a [`Network`], [`eval::Options`], [`eval::evaluate`] and its [`eval::Report`] |
//! | export a bank or a network | [`of_bank`], [`of_network`], [`cpp_source`] ([`ExportReport`]) |
//! | know why something was refused | [`IsaError`], [`SpecProblem`] and [`YamlError`] ([`YamlCause`]), [`CompileError`], [`ProfileError`] ([`ProfileCause`]), [`BankError`], [`RunError`], [`CompareError`], [`ProofError`], [`EvalError`] ([`eval::NetworkProblem`]), [`ExportError`], [`ValueError`] (a flag's or keyword's text) |
//!
//! Each report serialises to exactly the JSON the `scamp` command prints.
//!
//! # Namespaces
//!
//! A few groups are large or cohesive enough to keep a module of their own:
//!
//! - [`isa`]: the instruction set as data ([`isa::table`]), program text and the
//!   file-size limits;
//! - [`eval`]: `scamp eval`, a network's accuracy ideal and noisy, its datasets and
//!   shards;
//! - [`images`]: the bundled images;
//! - [`identity`] and [`background`]: the two device experiments the `scamp5` profile
//!   was calibrated against (the library's, since every member of the uncertainty
//!   ensemble is held to them; only their comparisons and tolerances are public);
//! - [`cancel`]: stopping a long call from another thread.
//!
//! The HTML pages and the calibration fits are applications above the library: they
//! live in the `scamp` command's package, `scamp-cli`.
//!
//! # Run a program on your own array
//!
//! ```
//! use ndarray::Array2;
//! use scamp::{Device, PlaneValues, Preload, Profile, RunOptions, Setup, Watched, parse_program};
//!
//! let program = parse_program("mov(B, A); add(C, A, B);", Device::default()).unwrap();
//! let ramp = Array2::from_shape_fn((256, 256), |(_, c)| c as f32 / 4.0);
//! let mut setup = Setup::new(scamp::default_image());
//! setup.preloads.push(Preload::new("A", 6, PlaneValues::analogue("A", ramp.view()).unwrap()).unwrap());
//! let mut opts = RunOptions::new(Profile::builtin("ideal").unwrap());
//! opts.raw = true;
//! let c = Watched::parse("C", 6).unwrap();
//! let frames = scamp::run_batch(&program, &[setup], &opts, &[c]).unwrap();
//! // Under `ideal` the arithmetic is exact: C = A + A on every PE.
//! assert_eq!(frames[0].planes[0].1[255], 2.0 * 255.0 / 4.0);
//! ```
//!
//! # Compile a spec
//!
//! ```
//! use scamp::Bank;
//! let spec = scamp::parse_spec(
//!     "name: blur\ninput: A\nregisters: [A, B, C, D]\nkernels:\n  - out: A\n    scale: 1/4\n    weights: [[1, 2, 1]]\nsearch: { work: 2000, workers: 1 }\n",
//! ).unwrap();
//! let bank = Bank::compile(spec, &scamp::CompileOptions::default(), &scamp::Stats::default()).unwrap();
//! let report = bank.compile_report().unwrap();
//! assert!(bank.prove().unwrap().verified);
//! assert_eq!(report.kernels[0].approximated, scamp::ShownWeights::Plane(vec![vec![1, 2, 1]]));
//! assert!(report.instructions <= 6, "{}", bank.text());
//! ```
//!
//! # Check a program against its kernel
//!
//! ```
//! use scamp::{Bank, CheckOptions, ProfileTestbed, isa};
//! let spec = scamp::parse_spec(
//!     "name: half\ninput: A\nregisters: [A, B]\nkernels:\n  - out: A\n    scale: 1/2\n    weights: [[1]]\n",
//! ).unwrap();
//! let program = isa::parse_program("divq(B, A); mov(A, B);", isa::Device::default()).unwrap();
//! let bank = Bank::with_kernels(program, "", spec).unwrap();
//! let images = [scamp::default_image()];
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
//! use scamp::adc_step;
//! use scamp::{Bank, CompareOptions, RunOptions, Setup, Watched, isa};
//! let program = isa::parse_program("get_image(A, B); divq(C, A);", isa::Device::default()).unwrap();
//! let opts = RunOptions::new(scamp::Profile::builtin("scamp5").unwrap());
//! let compare = CompareOptions::new(vec![Watched::parse("C", 6).unwrap()], adc_step(&opts.profile))
//!     .with_runs(2);
//! let scenes = [("camera".to_string(), scamp::default_image())];
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
//! use scamp::{Bank, GreyImage, Profile, RunOptions, Setup, Watched, isa};
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

#[macro_use]
mod builder;
mod bank;
mod cain;
pub mod cancel;
mod energy;
pub mod eval;
mod export;
pub mod isa;
mod options;
mod sim;
#[cfg(test)]
mod tests;
mod value;
mod verify;

// Write and run a program.
pub use bank::{
    batch_bytes, check_tolerance, run_batch, run_one, run_plan, Frame, InputError, PlaneValues,
    Preload, RunOptions, RunPlan, RunSummary, Setup, MAX_SET_VALUE, RUNS,
};
pub use isa::{parse_program, Device, IsaError, Pos, Program, Reg};
pub use sim::images;
pub use sim::noise::{
    builtin_text, NoiseModel, Profile, ProfileCause, ProfileError, Saturation, BUILTINS,
    DEFAULT_PROFILE, MAX_LEVEL,
};
pub use sim::run::run;
pub use sim::{
    default_image, frames, load_image, load_npy, run_observed, save_bits_npy, save_bits_png,
    save_npy, save_png, Array, CaptureError, EdgeMode, GreyImage, PlaneFileError,
    Preload as RegisterFill, RunError, RunReport, DEFAULT_CLOCK_HZ, DEFAULT_IMAGE_NAME, N, PES,
};

// Prove a program and check it on images.
pub use bank::{Bank, BankError, CheckOptions, CheckReport, Checked, Pictures, Proof};
pub use options::{FrontOption, InPython, CHECK_OPTIONS, EVAL_OPTIONS};
pub use verify::ensemble::{background, described, ensemble, identity};
pub use verify::{
    adc_step, first_run, heat_colour, load_images, load_input, named_frame, per_target, prove,
    save_heatmap, CheckTarget, CompareError, CompareOptions, DiffMap, ErrorFigures, EvaluateError,
    Evaluation, Groups, ImagesError, KernelErrors, Measurement, Predicted, ProfileTestbed, Target,
    Watched,
};

// Compile kernels.
pub use bank::{CompileReport, SplitJson};
pub use cain::{
    check_slack, check_targets, check_time_limit, choose_layer, compile, header, layer_spec,
    parse_registers, parse_spec, parse_spec_in, program_text, read_bias, read_weights, spec_yaml,
    ApproxParams, ChooseError, ChooseOptions, CompileError, CompileOptions, Compiled, LayerError,
    LayerTarget, Objective, Ops, OptionDecl, ShownWeights, Source, Spec, Stats, StopReason, Whole,
    COMPILE_OPTIONS, DEEPEST, MAX_SIDE,
};

// Evaluate a network: the `eval` module, with its front door here.
pub use eval::{EvalError, Network};

// Export a bank or a network.
pub use export::{
    cpp_source, of_bank, of_network, write_golden, ExportError, ExportReport, GoldenSample,
    HeadOptions, NetworkHost, Plan,
};

// The errors' causes.
pub use cain::SpecProblem;
pub use cain::{OptionError, OptionProblem, RangeError};
pub use isa::{SourceError, YamlCause, YamlError};
pub use value::ValueError;
pub use verify::ProofError;

// The reports as the command line prints them.
pub use bank::text as bank_text;
