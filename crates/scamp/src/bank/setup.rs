//! How the array is prepared before a program runs: the scene `get_image` captures,
//! planes preloaded into registers, the input register loaded with the picture, and
//! the array edge. The command line and the Python bindings both describe a run this
//! way, so the same description gives the same array bit for bit.

use crate::isa::{DReg, Reg};
use crate::sim::capture::GreyImage;
use crate::sim::{Array, EdgeMode, N, PES};
use crate::verify::compare::{load_input, Watched};
use ndarray::ArrayView2;

/// Largest magnitude a preloaded analogue value may have: the level range of a profile
/// (values beyond it are no register value any program could hold).
pub use crate::sim::preload::MAX_VALUE as MAX_SET_VALUE;

/// Values preloaded into one register on every PE.
#[derive(Clone, Debug, PartialEq)]
pub enum PlaneValues {
    /// An analogue plane, 65,536 values in row-major order.
    Analogue(Vec<f32>),
    /// A digital plane, 65,536 bits (0 or 1) in row-major order.
    Bits(Vec<u8>),
}

/// One register preloaded before the program runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Preload {
    /// The register (analogue `A`.., `NEWS`; digital `R0`..`R12`, `FLAG`).
    pub register: Watched,
    /// Its values.
    pub values: PlaneValues,
}

/// Everything that prepares a fresh array for one run.
#[derive(Clone, Debug)]
pub struct Setup {
    /// General analogue registers of the device.
    pub general: usize,
    /// What neighbour views see beyond the border.
    pub edge: EdgeMode,
    /// The picture `get_image` captures.
    pub scene: GreyImage,
    /// Registers preloaded, in order (later ones overwrite earlier ones).
    pub preloads: Vec<Preload>,
    /// A register loaded with the scene's full-range values `p - 128` after the
    /// preloads, as `check` loads a spec's input.
    pub input: Option<Reg>,
}

/// Why an input plane was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InputError {
    /// The plane is not 256x256.
    #[error("{name}: expected a 256x256 plane, got {rows}x{cols}")]
    Shape {
        /// The register or input it was meant for.
        name: String,
        /// Rows given.
        rows: usize,
        /// Columns given.
        cols: usize,
    },
    /// A value is NaN or infinite.
    #[error("{name}: value {value} at ({row}, {col}) is not finite")]
    NotFinite {
        /// The register.
        name: String,
        /// The value as printed.
        value: String,
        /// Its row.
        row: usize,
        /// Its column.
        col: usize,
    },
    /// A value lies beyond the register range.
    #[error("{name}: value {value} at ({row}, {col}) is outside the register range -{max}..{max}")]
    Range {
        /// The register.
        name: String,
        /// The value as printed.
        value: String,
        /// Its row.
        row: usize,
        /// Its column.
        col: usize,
        /// The largest magnitude allowed.
        max: f32,
    },
    /// A digital plane holds something other than 0 and 1.
    #[error("{name}: a digital register takes 0 or 1, got {value} at ({row}, {col})")]
    NotBit {
        /// The register.
        name: String,
        /// The value as printed.
        value: String,
        /// Its row.
        row: usize,
        /// Its column.
        col: usize,
    },
    /// The register is not on the device.
    #[error("unknown register `{name}` (expected {expected})")]
    Register {
        /// The name given.
        name: String,
        /// What would have been accepted.
        expected: String,
    },
}

fn check_shape(name: &str, dim: (usize, usize)) -> Result<(), InputError> {
    if dim == (N, N) {
        Ok(())
    } else {
        Err(InputError::Shape {
            name: name.to_string(),
            rows: dim.0,
            cols: dim.1,
        })
    }
}

impl PlaneValues {
    /// An analogue plane from a 256x256 view of register values: finite and within
    /// ±[`MAX_SET_VALUE`].
    pub fn analogue(name: &str, view: ArrayView2<f32>) -> Result<PlaneValues, InputError> {
        check_shape(name, view.dim())?;
        let mut out = Vec::with_capacity(PES);
        for ((row, col), &v) in view.indexed_iter() {
            if !v.is_finite() {
                return Err(InputError::NotFinite {
                    name: name.to_string(),
                    value: v.to_string(),
                    row,
                    col,
                });
            }
            if v.abs() > MAX_SET_VALUE {
                return Err(InputError::Range {
                    name: name.to_string(),
                    value: v.to_string(),
                    row,
                    col,
                    max: MAX_SET_VALUE,
                });
            }
            out.push(v);
        }
        Ok(PlaneValues::Analogue(out))
    }

    /// A digital plane from a 256x256 view of 0s and 1s.
    pub fn bits(name: &str, view: ArrayView2<u8>) -> Result<PlaneValues, InputError> {
        check_shape(name, view.dim())?;
        if let Some(((row, col), v)) = view.indexed_iter().find(|(_, &v)| v > 1) {
            return Err(InputError::NotBit {
                name: name.to_string(),
                value: v.to_string(),
                row,
                col,
            });
        }
        Ok(PlaneValues::Bits(view.iter().copied().collect()))
    }
}

impl Preload {
    /// The preload of `name` (a register of a device with `general` general registers)
    /// with `values`; analogue values go to analogue registers, bits to digital ones.
    pub fn new(name: &str, general: usize, values: PlaneValues) -> Result<Preload, InputError> {
        let register = Watched::parse(name, general)
            .filter(|w| !matches!(w, Watched::Analogue(Reg::Pix)))
            .ok_or_else(|| InputError::Register {
                name: cut(name),
                expected: format!(
                    "A..{}, NEWS, R0..R12 or FLAG",
                    Reg::general_name(general.saturating_sub(1))
                ),
            })?;
        let values = match (register, values) {
            (Watched::Digital(_), PlaneValues::Analogue(v)) => {
                match v.iter().position(|&x| x != 0.0 && x != 1.0) {
                    Some(i) => {
                        return Err(InputError::NotBit {
                            name: name.to_string(),
                            value: v[i].to_string(),
                            row: i / N,
                            col: i % N,
                        })
                    }
                    None => PlaneValues::Bits(v.iter().map(|&x| x as u8).collect()),
                }
            }
            (Watched::Analogue(_), PlaneValues::Bits(b)) => {
                PlaneValues::Analogue(b.iter().map(|&x| f32::from(x)).collect())
            }
            (_, v) => v,
        };
        Ok(Preload { register, values })
    }
}

impl From<crate::sim::preload::Preload> for Preload {
    /// A preload written as text (`A=col`, `B=-3.5`, `R5=1`) as a plane.
    fn from(p: crate::sim::preload::Preload) -> Preload {
        match p {
            crate::sim::preload::Preload::Analogue(reg, fill) => Preload {
                register: Watched::Analogue(reg),
                values: PlaneValues::Analogue(fill.plane()),
            },
            crate::sim::preload::Preload::Digital(d, bit) => Preload {
                register: Watched::Digital(d),
                values: PlaneValues::Bits(vec![bit; PES]),
            },
        }
    }
}

impl Setup {
    /// A setup on the default device (six general registers, zero edge) capturing
    /// `scene`, with nothing preloaded.
    pub fn new(scene: GreyImage) -> Setup {
        Setup {
            general: crate::isa::Device::default().general,
            edge: EdgeMode::Zero,
            scene,
            preloads: Vec::new(),
            input: None,
        }
    }

    /// A fresh array: the scene exposed, the preloads applied in order, then the input
    /// register loaded with the scene.
    pub fn array(&self) -> Array {
        let mut array = Array::new(self.general, self.edge);
        array.expose(&self.scene.pixels);
        for p in &self.preloads {
            match (&p.register, &p.values) {
                (Watched::Digital(d), PlaneValues::Bits(b)) => {
                    copy_bits(&mut array, *d, b);
                }
                (Watched::Analogue(r), PlaneValues::Analogue(v)) => {
                    if let Some(plane) = array.plane_mut(*r) {
                        plane.iter_mut().zip(v).for_each(|(d, &s)| *d = s);
                    }
                }
                // `Preload::new` converts values to the register's kind.
                _ => {}
            }
        }
        if let Some(r) = self.input {
            load_input(&mut array, r, &self.scene);
        }
        array
    }
}

/// A name as quoted in a message: at most 40 characters, so a huge token is not echoed.
fn cut(name: &str) -> String {
    match name.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &name[..i]),
        None => name.to_string(),
    }
}

fn copy_bits(array: &mut Array, d: DReg, bits: &[u8]) {
    array
        .bits_mut(d)
        .iter_mut()
        .zip(bits)
        .for_each(|(dst, &b)| *dst = b);
    array.refresh_flag();
}
