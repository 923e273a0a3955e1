//! `scamp run PROGRAM`: execute a program on the array and print its figures.

use super::common::{load_program, NoiseArgs, SetupArgs};
use super::{args, CliError, Outcome};
use scamp::RunOptions;
use scamp::{isa::Device, isa::Reg};
use scamp::{load_images, CompareOptions, DiffMap, Watched};
use scamp::{GreyImage, PlaneFileError, RunReport};
use std::path::{Path, PathBuf};

/// Arguments of `scamp run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Program file (vendor macro / bus syntax).
    pub program: PathBuf,
    #[command(flatten)]
    setup: SetupArgs,
    #[command(flatten)]
    noise: NoiseArgs,
    /// Run the program K times in a row on the same state.
    #[arg(long, default_value_t = 1, value_name = "K", value_parser = args::repeat)]
    repeat: u32,
    /// Repeat the whole run N times from a fresh array with run seeds seed, seed+1, ...
    /// (same chip) and report the mean and spread of each register over the runs.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = args::runs)]
    runs: u32,
    /// Report and save the analogue values themselves, bypassing the profile's readout
    /// path (readout noise and 8-bit ADC).
    #[arg(long)]
    raw: bool,
    /// Write written registers as DIR/REG.npy (float32) and DIR/REG.png (value+128);
    /// digital registers as uint8 0/1 arrays and black/white PNGs. With --compare, also
    /// the difference maps DIR/IMAGE_REG.diff.npy/png (analogue: noisy - ideal and a
    /// heat map of its size) and DIR/IMAGE_REG.flipped.npy/png (digital: 1 where the
    /// bit flipped) of the first run.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Registers to report and save instead of those the program writes: `A,B,NEWS`,
    /// digital `R5,FLAG` too.
    #[arg(long, value_delimiter = ',', value_name = "REG,...")]
    save: Vec<String>,
    /// Preload REG with the image's full-range values p - 128 before the program runs,
    /// as `check` preloads a spec's input (for programs that take their input in a
    /// register, such as those `scamp compile` writes).
    #[arg(long, value_name = "REG")]
    input: Option<String>,
    /// Run the program once more under `ideal` on the same input and report how far the
    /// noisy run drifts in every register it writes (or the --save list): RMSE, bias,
    /// max and fraction beyond --tolerance for analogue registers, the fraction of
    /// flipped bits for digital ones, and saturation.
    #[arg(long)]
    compare: bool,
    /// With --compare: an analogue PE is beyond when |noisy - ideal| exceeds X
    /// [default: one 8-bit step of the profile's readout range]
    #[arg(
        long,
        value_name = "X",
        requires = "compare",
        allow_negative_numbers = true,
        value_parser = args::tolerance
    )]
    tolerance: Option<f64>,
    /// With --compare: run on every picture (PNG/JPEG/PGM) in DIR instead of one scene.
    #[arg(
        long,
        value_name = "DIR",
        requires = "compare",
        conflicts_with = "image"
    )]
    images: Option<PathBuf>,
    /// With --compare: leave N PEs on every side out of the figures (as `check` leaves
    /// out the border its output register's values could have crossed).
    #[arg(long, value_name = "N", requires = "compare", value_parser = args::border)]
    border: Option<usize>,
    /// With --compare: compare again under every profile of the noise profile's
    /// uncertainty ensemble that reproduces the device measurements, and report each
    /// figure's range and the part of it the register range gives.
    #[arg(long, requires = "compare")]
    uncertainty: bool,
    /// Array clock in MHz, at most 1000.
    #[arg(long, default_value_t = 10.0, value_name = "MHZ", value_parser = args::clock)]
    clock: f64,
    #[command(flatten)]
    json: args::JsonArg,
}

/// The registers named by `--save`, checked against the device.
fn parse_save(names: &[String], general: usize) -> Result<Vec<Watched>, CliError> {
    names
        .iter()
        .map(|s| {
            Watched::parse(s, general).ok_or_else(|| {
                CliError::msg(format!(
                    "--save: unknown register `{s}` (expected A..{}, NEWS, PIX, R0..R12 or FLAG)",
                    Reg::general_name(general - 1)
                ))
            })
        })
        .collect()
}

/// The scenes the program runs on: every picture of `--images`, else the one scene.
fn scenes(a: &RunArgs) -> Result<Vec<(String, GreyImage)>, CliError> {
    if let Some(dir) = &a.images {
        return load_images(dir).map_err(CliError::msg);
    }
    let path = a
        .setup
        .image
        .as_deref()
        .unwrap_or(Path::new(scamp::DEFAULT_IMAGE_NAME));
    let name = path
        .file_stem()
        .map_or_else(|| "image".into(), |s| s.to_string_lossy().into_owned());
    Ok(vec![(name, a.setup.scene()?)])
}

fn save_plane(dir: &Path, w: Watched, v: &[f32]) -> Result<(), CliError> {
    let (npy, png) = (dir.join(format!("{w}.npy")), dir.join(format!("{w}.png")));
    if w.is_digital() {
        let bits: Vec<u8> = v.iter().map(|&b| u8::from(b != 0.0)).collect();
        scamp::save_bits_npy(&npy, &bits)?;
        scamp::save_bits_png(&png, &bits)?;
    } else {
        scamp::save_npy(&npy, v)?;
        scamp::save_png(&png, v)?;
    }
    Ok(())
}

/// Writes one difference map of `--compare` into `dir`.
fn save_map(dir: &Path, m: &DiffMap) -> Result<(), PlaneFileError> {
    let stem = format!("{}_{}", m.image, m.register);
    if m.register.is_digital() {
        let bits: Vec<u8> = m.diff.iter().map(|&d| u8::from(d != 0.0)).collect();
        scamp::save_bits_npy(&dir.join(format!("{stem}.flipped.npy")), &bits)?;
        scamp::save_bits_png(&dir.join(format!("{stem}.flipped.png")), &bits)
    } else {
        let v: Vec<f32> = m.diff.iter().map(|&d| d as f32).collect();
        scamp::save_npy(&dir.join(format!("{stem}.diff.npy")), &v)?;
        scamp::save_heatmap(&dir.join(format!("{stem}.diff.png")), &m.diff)
    }
}

/// Runs `scamp run`.
pub fn run(a: &RunArgs) -> Outcome {
    if let Some(dir) = &a.out {
        super::files::prepare_dir(dir)?;
    }
    let device = Device::default();
    let program = load_program(&a.program, device)?;
    let mut opts = a.noise.options(a.clock * 1e6, a.raw)?;
    opts.repeat = a.repeat;
    let saved = parse_save(&a.save, device.general)?;
    let input = input_register(a.input.as_deref(), device)?;
    // Registers read before any write hold leftovers on the chip (issue 29).
    let mut preset = a.setup.preset();
    preset.extend(input.map(scamp::isa::AnyReg::Analogue));
    for u in scamp::isa::unwritten_reads(&program, &preset) {
        eprintln!("warning: {}:{u}", a.program.display());
    }
    let scenes = scenes(a)?;
    let setup = |img: &GreyImage| a.setup.setup(device, img.clone(), input);
    // Validated once here, so that every run below can build its array infallibly.
    let first = setup(&scenes[0].1)?;
    let watched: Vec<Watched> = if saved.is_empty() {
        program
            .written_registers()
            .into_iter()
            .map(Watched::Analogue)
            .collect()
    } else {
        saved.clone()
    };
    let compare = a.compare.then(|| {
        let registers = if saved.is_empty() {
            Watched::written_by(&program)
        } else {
            saved
        };
        (scenes.as_slice(), compare_options(a, &opts, registers))
    });
    let plan = scamp::RunPlan {
        program: &program,
        setup: &first,
        opts: &opts,
        watched: &watched,
        runs: a.runs,
        noise_name: &a.noise.noise,
        compare,
    };
    let mut write = |m: DiffMap| {
        a.out
            .as_deref()
            .map_or(Ok(()), |dir| save_map(dir, &m).map_err(Into::into))
    };
    let result =
        scamp::run_plan(&plan, &|r| warnings(a, r), Some(&mut write)).map_err(|e| match e {
            scamp::CompareError::Run(e) => super::positioned(&a.program, e),
            other => CliError::msg(other.to_string()),
        })?;
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::msg(format!("{}: cannot create: {e}", dir.display())))?;
        for (r, v) in &result.first.planes {
            save_plane(dir, *r, v)?;
        }
    }
    let out = result.summary;
    for w in &out.warnings {
        eprintln!("warning: {w}");
    }
    if a.json.json {
        println!("{}", serde_json::to_string(&out)?);
        return Ok(0);
    }
    let context = scamp::bank_text::RunContext {
        program: a.program.display().to_string(),
        per_run: program.instructions(),
        repeat: a.repeat,
        clock_mhz: a.clock,
        out: a.out.as_ref().map(|d| d.display().to_string()),
    };
    print!("{}", scamp::bank_text::run(&context, &out));
    Ok(0)
}

/// `--input`, which must name a general register of `device`.
fn input_register(name: Option<&str>, device: Device) -> Result<Option<Reg>, CliError> {
    let Some(s) = name else {
        return Ok(None);
    };
    Reg::parse(s)
        .filter(|r| matches!(r, Reg::Gen(i) if usize::from(*i) < device.general))
        .map(Some)
        .ok_or_else(|| {
            CliError::msg(format!(
                "--input: `{s}` is not a general register (expected {})",
                device.general_range()
            ))
        })
}

/// The options of `--compare` for `registers`.
fn compare_options(a: &RunArgs, opts: &RunOptions, registers: Vec<Watched>) -> CompareOptions {
    let tolerance = a
        .tolerance
        .unwrap_or_else(|| scamp::adc_step(&opts.profile));
    CompareOptions::new(registers, tolerance)
        .with_repeat(a.repeat)
        .with_clock_hz(opts.clock_hz)
        .with_raw(a.raw)
        .with_border(a.border.unwrap_or(0))
        .with_runs(a.runs)
        .with_seeds(a.noise.seed, a.noise.chip_seed)
        .with_uncertainty(a.uncertainty)
}

/// The run's warnings, each prefixed with the program file and, when known, the position.
fn warnings(a: &RunArgs, report: &RunReport) -> Vec<String> {
    report
        .warnings
        .iter()
        .map(|w| {
            if w.pos.line == 0 {
                format!("{}: {}", a.program.display(), w.kind)
            } else {
                format!("{}:{}: {}", a.program.display(), w.pos, w.kind)
            }
        })
        .collect()
}
