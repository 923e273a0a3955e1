//! Golden outputs: for a few sample scenes, the planes the device should hold after
//! each block and what the host reads, under `ideal` and under the noise profile, as
//! `.npy` files with an `index.json`, so that what the device reads back can be
//! compared with what the simulator predicts, stage by stage.
//!
//! Every plane comes from [`crate::bank::run_one`] on the frame's statements up to the
//! end of the block, the same run `scamp run` makes: under `ideal` the files equal
//! `scamp run --out` of that program on the sample's scene bit for bit, and under the
//! profile they equal it at the seeds the index records.

use super::head::NetworkHost;
use super::plan::{Plan, Readout};
use super::{ExportError, Internal, WriteFailure};
use crate::bank::{run_one, RunOptions, Setup};
use crate::isa::{AnyReg, Program};
use crate::sim::capture::GreyImage;
use crate::sim::noise::Profile;
use crate::sim::{readout, N};
use crate::verify::compare::Watched;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Seeds of the noisy golden runs: those `scamp run` uses by default.
pub(crate) const SEED: u64 = 1;
/// Chip seed of the noisy golden runs (`scamp run`'s default).
pub(crate) const CHIP_SEED: u64 = 1;

/// One sample scene.
#[derive(Clone, Debug)]
pub struct Sample {
    /// Its name (a folder of the golden outputs).
    pub name: String,
    /// The 256x256 scene the camera sees.
    pub scene: GreyImage,
}

/// The planes of one block under one profile: register name to file.
pub(crate) type Planes = BTreeMap<String, String>;

/// What the index holds of one block.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct BlockIndex {
    /// The block's title.
    pub(crate) title: String,
    /// The statements from the frame's start to the block's end (what `scamp run` runs).
    pub(crate) program: String,
    /// Per profile, the planes after the block.
    pub(crate) planes: BTreeMap<String, Planes>,
}

/// What the index holds of one sample.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SampleIndex {
    /// Its name.
    pub(crate) name: String,
    /// The scene as an 8-bit grey PNG.
    pub(crate) scene: String,
    /// Per block.
    pub(crate) blocks: Vec<BlockIndex>,
    /// Per profile, the planes the host reads (`readout_REG.npy`).
    pub(crate) readout: BTreeMap<String, Planes>,
    /// Per profile, the head's class (networks only).
    pub(crate) classes: BTreeMap<String, u8>,
}

/// `index.json` of a golden folder.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct GoldenIndex {
    /// The spec, program or network.
    pub(crate) name: String,
    /// The profiles: `ideal` and the noise profile's name.
    pub(crate) profiles: Vec<String>,
    /// Temporal seed of the noisy runs.
    pub(crate) seed: u64,
    /// Chip seed of the noisy runs.
    pub(crate) chip_seed: u64,
    /// Per sample.
    pub(crate) samples: Vec<SampleIndex>,
    /// Per profile, the readout features of every sample (`samples x features`,
    /// float32; networks only).
    pub(crate) features: BTreeMap<String, String>,
}

fn watched(r: AnyReg) -> Watched {
    match r {
        AnyReg::Analogue(a) => Watched::Analogue(a),
        AnyReg::Digital(d) => Watched::Digital(d),
    }
}

fn file_err(e: impl Into<WriteFailure>) -> ExportError {
    ExportError::Write(e.into())
}

fn save(dir: &Path, rel: &str, w: Watched, v: &[f32]) -> Result<(), ExportError> {
    let path = dir.join(rel);
    if w.is_digital() {
        let bits: Vec<u8> = v.iter().map(|&b| u8::from(b != 0.0)).collect();
        readout::save_bits_npy(&path, &bits).map_err(file_err)
    } else {
        readout::save_npy(&path, v).map_err(file_err)
    }
}

/// The frame's statements up to the end of block `b`.
fn prefix(plan: &Plan, b: usize) -> Program {
    let stmts = plan.blocks[..=b]
        .iter()
        .flat_map(|blk| blk.capture.iter().chain(std::iter::once(&blk.program)))
        .flat_map(|p| p.stmts.iter().cloned())
        .collect();
    Program { stmts }
}

/// Runs `program` on `scene` and returns the planes of `regs`.
fn planes(
    program: &Program,
    scene: &GreyImage,
    opts: &RunOptions,
    regs: &[Watched],
) -> Result<Vec<Vec<f32>>, ExportError> {
    let frame =
        run_one(program, &Setup::new(scene.clone()), opts, regs, 0).map_err(Internal::Golden)?;
    Ok(frame.planes.into_iter().map(|(_, v)| v).collect())
}

/// The window bits of every map, maps one after another (what the host's events give).
fn window_bits(host: &NetworkHost, maps: &[Vec<f32>]) -> Vec<u8> {
    let (r0, c0) = host.origin;
    let p = &host.layout;
    let mut out = Vec::with_capacity(maps.len() * p.rows * p.cols);
    for m in maps {
        for r in r0..r0 + p.rows {
            out.extend(
                m[r * N + c0..r * N + c0 + p.cols]
                    .iter()
                    .map(|&b| u8::from(b != 0.0)),
            );
        }
    }
    out
}

/// The profiles the golden outputs are written under: `ideal`, and `profile` unless it
/// is `ideal` itself.
fn profiles(profile: (&str, &Profile)) -> Result<Vec<(String, RunOptions)>, ExportError> {
    let ideal = Profile::builtin("ideal").expect("the ideal profile is built in");
    let mut out = vec![("ideal".to_string(), RunOptions::new(ideal))];
    if profile.0 != "ideal" {
        let mut o = RunOptions::new(profile.1.clone());
        o.seed = SEED;
        o.chip_seed = CHIP_SEED;
        out.push((profile.0.to_string(), o));
    }
    Ok(out)
}

/// What every sample is written with: the folder, the frame, the host and the runs.
struct Golden<'a> {
    dir: &'a Path,
    plan: &'a Plan,
    host: Option<&'a NetworkHost>,
    runs: Vec<(String, RunOptions)>,
}

impl Golden<'_> {
    /// Writes `reg`'s plane as `SAMPLE/PROFILE/{stem}_REG.npy` and names it in `files`.
    fn file(
        &self,
        at: (&str, &str, &str),
        w: Watched,
        v: &[f32],
        files: &mut Planes,
    ) -> Result<(), ExportError> {
        let (sample, profile, stem) = at;
        let rel = format!("{sample}/{profile}/{stem}_{w}.npy");
        save(self.dir, &rel, w, v)?;
        files.insert(w.to_string(), rel);
        Ok(())
    }

    /// One sample: its scene, the planes after each block and the readouts under each
    /// profile, and a network's class (its features go to `features`).
    fn sample(
        &self,
        s: &Sample,
        features: &mut BTreeMap<String, Vec<f32>>,
    ) -> Result<SampleIndex, ExportError> {
        for (name, _) in &self.runs {
            std::fs::create_dir_all(self.dir.join(&s.name).join(name)).map_err(file_err)?;
        }
        let scene = format!("{}/scene.png", s.name);
        let levels: Vec<f32> = s
            .scene
            .pixels
            .iter()
            .map(|&p| f32::from(p) - 128.0)
            .collect();
        readout::save_png(&self.dir.join(&scene), &levels).map_err(file_err)?;
        let mut sample = SampleIndex {
            name: s.name.clone(),
            scene,
            blocks: Vec::new(),
            readout: BTreeMap::new(),
            classes: BTreeMap::new(),
        };
        for (b, blk) in self.plan.blocks.iter().enumerate() {
            let program = prefix(self.plan, b);
            let watch: Vec<Watched> = blk.watch.iter().map(|r| watched(*r)).collect();
            let reads: Vec<Watched> = blk.readout.iter().map(|r| watched(r.register())).collect();
            // One read of each register: a read goes through the profile's readout path.
            let mut all = watch.clone();
            all.extend(reads.iter().filter(|r| !watch.contains(r)));
            let mut per = BTreeMap::new();
            for (name, opts) in &self.runs {
                let values = planes(&program, &s.scene, opts, &all)?;
                let of = |w: &Watched| all.iter().position(|a| a == w).map(|i| values[i].clone());
                let kept: Vec<Vec<f32>> = watch.iter().filter_map(of).collect();
                let read: Vec<Vec<f32>> = reads.iter().filter_map(of).collect();
                let mut files = Planes::new();
                for (w, v) in watch.iter().zip(&kept) {
                    self.file(
                        (&s.name, name, &format!("block{}", b + 1)),
                        *w,
                        v,
                        &mut files,
                    )?;
                }
                let files_read = sample.readout.entry(name.clone()).or_default();
                for (w, v) in reads.iter().zip(&read) {
                    self.file((&s.name, name, "readout"), *w, v, files_read)?;
                }
                let events = blk.readout.iter().any(|r| matches!(r, Readout::Events(_)));
                if let (Some(h), true) = (self.host, events) {
                    let f = h.layout.features_of(&window_bits(h, &read));
                    sample.classes.insert(name.clone(), h.head.predict(&f));
                    features.entry(name.clone()).or_default().extend(f);
                }
                per.insert(name.clone(), files);
            }
            sample.blocks.push(BlockIndex {
                title: blk.title.clone(),
                program: program.to_string(),
                planes: per,
            });
        }
        Ok(sample)
    }
}

/// Writes the golden outputs of `plan` for `samples` into `dir` (which must exist),
/// with the folder's index as `index.json`.
pub fn write(
    dir: &Path,
    plan: &Plan,
    host: Option<&NetworkHost>,
    samples: &[Sample],
    profile: (&str, &Profile),
) -> Result<(), ExportError> {
    let golden = Golden {
        dir,
        plan,
        host,
        runs: profiles(profile)?,
    };
    let mut features: BTreeMap<String, Vec<f32>> = BTreeMap::new();
    let mut index = GoldenIndex {
        name: plan.name.clone(),
        profiles: golden.runs.iter().map(|(n, _)| n.clone()).collect(),
        seed: SEED,
        chip_seed: CHIP_SEED,
        samples: Vec::new(),
        features: BTreeMap::new(),
    };
    for s in samples {
        index.samples.push(golden.sample(s, &mut features)?);
    }
    if let Some(h) = host {
        for (name, f) in features {
            let rel = format!("features_{name}.npy");
            let arr = ndarray::Array2::from_shape_vec((samples.len(), h.layout.features()), f)
                .map_err(Internal::from)?;
            ndarray_npy::write_npy(dir.join(&rel), &arr).map_err(file_err)?;
            index.features.insert(name, rel);
        }
    }
    let json = serde_json::to_string_pretty(&index).map_err(file_err)?;
    std::fs::write(dir.join("index.json"), json).map_err(file_err)
}
