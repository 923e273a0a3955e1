//! Options shared by the subcommands that run programs: loading a program, the scene,
//! preloaded registers, edges and the noise profile.

use super::args::EdgeArg;
use super::files;
use super::CliError;
use scamp::Array;
use scamp::{isa, isa::parse_program, isa::AnyReg, isa::DReg, isa::Device, isa::Program, isa::Reg};
use scamp::{PlaneValues, Preload, RunOptions, Setup};
use scamp::{ProfileTestbed, Watched};
use std::path::{Path, PathBuf};

/// Reads a text file of kind `what` with at most `limit` bytes; errors name the file
/// (and the line and column of a byte that is not UTF-8).
pub fn read_source(path: &Path, limit: u64, what: &'static str) -> Result<String, CliError> {
    isa::read_text(path, limit, what).map_err(|e| match e.pos() {
        Some(_) => super::positioned(path, e),
        None => CliError::File {
            file: path.to_path_buf(),
            source: Box::new(e),
        },
    })
}

/// Reads and parses a program file; errors carry `FILE:LINE:COL`.
pub fn load_program(path: &Path, device: Device) -> Result<Program, CliError> {
    let text = read_source(path, isa::MAX_PROGRAM_BYTES, "program")?;
    parse_program(&text, device).map_err(|e| super::positioned(path, e))
}

/// How the array is prepared before a program runs.
#[derive(clap::Args, Debug, Clone)]
pub struct SetupArgs {
    /// Picture that `get_image` captures (PNG/JPEG/PGM; made grey and 256x256).
    /// Default: the built-in images/camera.png.
    #[arg(long, value_name = "PATH")]
    pub image: Option<PathBuf>,
    /// Preload a register everywhere: `A=100`, `A=col` or `A=row` (each PE's column or
    /// row number), `A=values.npy` (256x256), `R3=1`.
    #[arg(long = "set", value_name = "REG=VALUE")]
    pub set: Vec<String>,
    /// Array edge: what neighbour views see beyond the border.
    #[arg(long, default_value = "zero", value_enum)]
    pub edge: EdgeArg,
}

impl SetupArgs {
    /// The registers `--set` loads before the program runs (they count as written).
    pub fn preset(&self) -> Vec<AnyReg> {
        self.set
            .iter()
            .filter_map(|s| s.split_once('='))
            .filter_map(|(name, _)| {
                DReg::parse(name)
                    .map(AnyReg::Digital)
                    .or_else(|| Reg::parse(name).map(AnyReg::Analogue))
            })
            .collect()
    }

    /// A fresh array with the scene exposed and the preloads applied.
    pub fn build(&self, device: Device) -> Result<Array, CliError> {
        Ok(self.setup(device, self.scene()?, None)?.array())
    }

    /// The picture `get_image` captures: `--image`, or the built-in default.
    pub fn scene(&self) -> Result<scamp::GreyImage, CliError> {
        Ok(match &self.image {
            Some(p) => {
                let img = scamp::load_image(p)?;
                if let Some((w, h)) = img.resized_from {
                    eprintln!(
                        "note: {} is {w}x{h}; converted to grey and resized to 256x256",
                        p.display()
                    );
                }
                img
            }
            None => scamp::default_image(),
        })
    }

    /// The library's description of the run's array: `scene` exposed, the `--set`
    /// preloads in order, and `input` (when given) loaded with the scene.
    pub fn setup(
        &self,
        device: Device,
        scene: scamp::GreyImage,
        input: Option<Reg>,
    ) -> Result<Setup, CliError> {
        let preloads = self
            .set
            .iter()
            .map(|s| preload(s, device.general))
            .collect::<Result<_, _>>()?;
        Ok(Setup {
            general: device.general,
            edge: self.edge.into(),
            scene,
            preloads,
            input,
        })
    }
}

/// One `--set REG=VALUE|FILE.npy`, checked against a device with `general` registers.
fn preload(spec: &str, general: usize) -> Result<Preload, CliError> {
    let (name, value) = spec.split_once('=').ok_or_else(|| {
        CliError::msg(format!("--set {spec}: expected REG=VALUE or REG=FILE.npy"))
    })?;
    if value.ends_with(".npy") {
        let reg = Reg::parse(name)
            .filter(|r| matches!(r, Reg::Gen(i) if usize::from(*i) < general) || *r == Reg::News)
            .ok_or_else(|| {
                CliError::msg(format!(
                    "--set {spec}: a .npy file fills an analogue register (A..{} or NEWS)",
                    Reg::general_name(general - 1)
                ))
            })?;
        return Ok(Preload {
            register: Watched::Analogue(reg),
            values: PlaneValues::Analogue(files::load_values(Path::new(value))?),
        });
    }
    // Numbers and the `col`/`row` ramps: the library's text form, as the playground uses.
    scamp::RegisterFill::parse(name, value, general)
        .map(Preload::from)
        .map_err(|e| CliError::msg(format!("--set {spec}: {e}")))
}

/// The analogue error model to run under.
#[derive(clap::Args, Debug, Clone)]
pub struct NoiseArgs {
    /// Noise profile: `ideal`, `scamp5` or a profile YAML file (see `scamp noise show`
    /// and docs/noise-profile.md).
    #[arg(long, default_value = scamp::DEFAULT_PROFILE, value_name = "PROFILE")]
    pub noise: String,
    /// Temporal-noise (run) seed; run r of `--runs` uses seed + r.
    #[arg(long, default_value_t = 1, value_parser = super::args::seed)]
    pub seed: u64,
    /// Fixed-pattern (chip) seed: the same seed is the same chip.
    #[arg(long = "chip-seed", default_value_t = 1, value_parser = super::args::seed)]
    pub chip_seed: u64,
}

impl NoiseArgs {
    /// Loads the profile (built-in name or file); errors carry `FILE:LINE:COL`.
    pub fn profile(&self) -> Result<scamp::Profile, CliError> {
        Ok(scamp::Profile::load(&self.noise)?)
    }

    /// The library's run options: this profile and seeds, one repetition at
    /// `clock_hz`, read through the readout path unless `raw`.
    pub fn options(&self, clock_hz: f64, raw: bool) -> Result<RunOptions, CliError> {
        Ok(RunOptions::new(self.profile()?)
            .with_seed(self.seed)
            .with_chip_seed(self.chip_seed)
            .with_clock_hz(clock_hz)
            .with_raw(raw))
    }

    /// Installs the profile's layer on `array` (run seed `--seed`, default clock).
    /// Results are then read with [`Array::read_out`], which applies the profile's
    /// readout path (ADC, readout noise) when it has one.
    pub fn install(&self, array: &mut Array) -> Result<(), CliError> {
        let opts = self.options(scamp::DEFAULT_CLOCK_HZ, false)?;
        array.set_layer(opts.model(0));
        Ok(())
    }

    /// The test bed of `scamp check`: fresh arrays with this profile's layer (run r
    /// uses seed `--seed` + r, every run the chip `--chip-seed`), read through the
    /// profile's readout path.
    pub fn testbed(&self) -> Result<ProfileTestbed, CliError> {
        Ok(ProfileTestbed {
            profile: self.profile()?,
            chip_seed: self.chip_seed,
            seed: self.seed,
        })
    }
}

/// The default compile options with `--work` (a deterministic node budget) when given.
pub fn work_options(work: Option<u64>) -> scamp::CompileOptions {
    let mut opts = scamp::CompileOptions::default();
    opts.work = work;
    opts
}
