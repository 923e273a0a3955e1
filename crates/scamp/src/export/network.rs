//! A network as one frame on the device: the capture and each stage with its decisions
//! as blocks, the binary maps read out as events, and the host head; built on the
//! library's network types ([`crate::eval::stage::Chip`], [`Head`]), so that new layer
//! kinds reach the export through them.

use super::head::NetworkHost;
use super::plan::{check_device, kernel_line, proof_notes, Block, Plan, Readout};
use super::{ExportError, Internal};
use crate::cain::{self, CompileOptions};
use crate::eval::dataset::{Dataset, Split};
use crate::eval::frames::{run_frame, FrameNoise};
use crate::eval::head::Head;
use crate::eval::network::{Activation, Decision, HeadDef, Network};
use crate::eval::readout::Layout;
use crate::eval::stage::{self, BuildOptions, Chip};
use crate::eval::tiling::{NoTiling, Tiling};
use crate::isa::{AnyReg, Program, Reg, Wiring};
use crate::sim::batch;
use crate::sim::noise::Profile;
use crate::verify::predict::InputStats;

/// A network ready to export: its frame plan and host side.
#[derive(Clone, Debug)]
pub struct NetworkExport {
    /// The frame: one block per stage, the maps read out after the last.
    pub plan: Plan,
    /// Window, readout, maps and head.
    pub host: NetworkHost,
}

/// How the head is trained when the network trains it.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct HeadOptions {
    /// Use only the first N training images (as `eval --train-images`).
    pub train_images: Option<usize>,
    /// Search options of the stages the generator compiles.
    pub compile: CompileOptions,
}

with_methods!(HeadOptions {
    with_train_images => train_images: Option<usize>,
    with_compile => compile: CompileOptions,
});

/// Where each stage's statements start in the chip's frame program: stage programs are
/// laid out in order, with the capture before the first and decisions after each.
fn stage_starts(chip: &Chip) -> Result<Vec<usize>, ExportError> {
    let text: Vec<String> = chip.program.stmts.iter().map(ToString::to_string).collect();
    let mut at = 0;
    let mut starts = Vec::new();
    for (i, s) in chip.stages.iter().enumerate() {
        let want: Vec<String> = s.program.stmts.iter().map(ToString::to_string).collect();
        let found = (at..=text.len().saturating_sub(want.len()))
            .find(|&k| text[k..k + want.len()] == want[..])
            .ok_or(Internal::StageMissing(i + 1))?;
        starts.push(found);
        at = found + want.len();
    }
    Ok(starts)
}

fn slice(p: &Program, from: usize, to: usize) -> Program {
    Program {
        stmts: p.stmts[from..to].to_vec(),
    }
}

fn decision_name(d: &Decision) -> String {
    match d {
        Decision::Sign => "sign (bit = value > 0)".into(),
        Decision::Threshold(t) if t.len() == 1 => format!("threshold (bit = value > {})", t[0]),
        Decision::Threshold(t) => format!(
            "threshold per map (bit = value > t, t = {})",
            t.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Decision::None => "none (analogue outputs feed the next stage)".into(),
    }
}

/// The note naming a stage's bias and activation, when it has either.
fn activation_note(bias: &[f64], a: Option<Activation>) -> Option<String> {
    let act = match a {
        None => None,
        Some(Activation::Relu) => Some("relu (where value < 0: res)".to_string()),
        Some(Activation::LeakyRelu { shift }) => Some(format!(
            "leaky relu, slope 1/{} (where value < 0: divq {shift} times)",
            1u64 << shift
        )),
    };
    let bias = (!bias.is_empty()).then(|| {
        format!(
            "bias per output {} (folded into the threshold when a decision alone follows)",
            bias.iter()
                .map(|b| format!("{b}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    });
    match (bias, act) {
        (None, None) => None,
        (b, a) => Some(format!(
            "after the kernels: {}",
            b.into_iter().chain(a).collect::<Vec<_>>().join("; ")
        )),
    }
}

/// One block per stage: the capture goes with the first, the decisions with each.
fn stage_blocks(
    net: &Network,
    chip: &Chip,
    profile: (&str, &Profile),
) -> Result<Vec<Block>, ExportError> {
    let starts = stage_starts(chip)?;
    let mut blocks = Vec::new();
    for (i, (def, st)) in net.stages.iter().zip(&chip.stages).enumerate() {
        let end = starts
            .get(i + 1)
            .copied()
            .unwrap_or(chip.program.stmts.len());
        let from = starts[i];
        let outs: Vec<Reg> = st.kernels.iter().map(|k| k.out).collect();
        // Every input map of the stage, on the chip's register file.
        let wiring = Wiring::planes(&def.spec.inputs(), chip.general)
            .unwrap_or_else(|| Wiring::new(def.spec.input, chip.general));
        let stats = InputStats::of_bundled_images(def.spec.input_range);
        let predicted = cain::predict_outputs(&st.program, wiring, &outs, profile.1, &stats)
            .map_err(Internal::from)?;
        let maps: Vec<String> = chip
            .maps
            .iter()
            .filter(|m| m.stage == i)
            .map(|m| format!("{} -> {}", m.from, m.bit))
            .collect();
        let mut notes = vec![format!(
            "spec: {} ({})",
            def.spec.name,
            def.spec_file.display()
        )];
        notes.extend(st.kernels.iter().map(kernel_line));
        notes.extend(proof_notes(&st.program, profile.0, &outs, &predicted));
        notes.extend(activation_note(&def.bias, def.activation));
        notes.push(format!(
            "decision: {}; {}",
            decision_name(&def.decision),
            maps.join(", ")
        ));
        blocks.push(Block {
            title: format!("stage {}: {}", i + 1, def.spec.name),
            notes,
            capture: (i == 0 && from > 0).then(|| slice(&chip.program, 0, from)),
            program: slice(&chip.program, from, end),
            readout: Vec::new(),
            watch: outs
                .iter()
                .map(|r| AnyReg::Analogue(*r))
                .chain(
                    chip.maps
                        .iter()
                        .filter(|m| m.stage == i)
                        .map(|m| AnyReg::Digital(m.bit)),
                )
                .collect(),
        });
    }
    if let Some(last) = blocks.last_mut() {
        last.readout = chip.maps.iter().map(|m| Readout::Events(m.bit)).collect();
    }
    Ok(blocks)
}

/// Features of every image of `split` under `ideal`, as `eval` trains its head on them.
fn ideal_features(
    chip: &Chip,
    tiling: &Tiling,
    layout: &Layout,
    split: &Split,
) -> Result<Vec<f32>, ExportError> {
    let ideal = Profile::builtin("ideal").expect("the ideal profile is built in");
    let frames = batch::frames(tiling.frames(split.len()), |f| {
        let noise = FrameNoise {
            profile: &ideal,
            chip_seed: 0,
            run_seed: 0,
        };
        run_frame(chip, tiling, split, f, noise)
    })
    .map_err(Internal::Frame)?;
    Ok(frames
        .iter()
        .flatten()
        .flat_map(|bits| layout.features_of(bits))
        .collect())
}

/// The head `eval` would use: read from its file, or trained on the ideal features of
/// the training split.
fn head(
    net: &Network,
    data: &Dataset,
    chip: &Chip,
    tiling: &Tiling,
    layout: &Layout,
    opts: &HeadOptions,
) -> Result<Head, ExportError> {
    match &net.head {
        HeadDef::Weights(files) => Ok(Head::load(files, layout.features())?),
        HeadDef::Train { params, hidden } => {
            let train = data.train.up_to(opts.train_images);
            let x = ideal_features(chip, tiling, layout, &train)?;
            Ok(Head::train(
                &x,
                &train.labels,
                layout.features(),
                hidden,
                params,
            ))
        }
    }
}

/// Builds the chip part of `net` (refusing an unproven stage), its head, and the plan.
pub fn of_network(
    net: &Network,
    data: &Dataset,
    profile: (&str, &Profile),
    opts: &HeadOptions,
) -> Result<NetworkExport, ExportError> {
    let build = BuildOptions {
        depth: None,
        compile: opts.compile.clone(),
    };
    let chip = stage::build(net, &build)?;
    check_device(&chip.program, &net.name)?;
    let (rows, cols) = (data.test.rows, data.test.cols);
    let tiling = Tiling::with_margin(rows, cols, chip.reach, chip.margin).ok_or(NoTiling {
        rows,
        cols,
        gap: chip.reach,
    })?;
    let layout = Layout::new(rows, cols, chip.maps.len(), &net.readout)?;
    let head = head(net, data, &chip, &tiling, &layout, opts)?;
    // The window keeps the tiles' margin from the edge; row and column 0 are kept out
    // of it: the vendor's event buffer marks its unused entries (0, 0).
    let gap = tiling.margin.max(1);
    if gap + rows.max(cols) > crate::sim::N {
        return Err(ExportError::Window { rows, cols });
    }
    let plan = Plan {
        name: net.name.clone(),
        notes: vec![
            format!("network: {}; stages: {}, binary maps: {}, features: {}", net.name, net.stages.len(), chip.maps.len(), layout.features()),
            format!(
                "the network sees the {rows}x{cols} window at row {gap}, column {gap} of the captured frame; \
                 events are read as (column, row) pairs"
            ),
        ]
        .into_iter()
        .chain(net.binarise.map(|b| {
            format!(
                "input: after the capture, pixels above {} become {} and the others 0",
                b.level, b.value
            )
        }))
        .chain(net.readout.cap.map(|c| {
            format!("readout: at most {c} events per map, taken in row-major scan order")
        }))
        .collect(),
        blocks: stage_blocks(net, &chip, profile)?,
    };
    Ok(NetworkExport {
        host: NetworkHost {
            origin: (gap, gap),
            layout,
            maps: chip.maps.iter().map(|m| m.bit).collect(),
            head,
        },
        plan,
    })
}

#[cfg(test)]
mod tests {
    use super::stage_blocks;
    use crate::eval::stage::{self, BuildOptions};
    use crate::isa::{Reg, Wiring};
    use crate::sim::noise::Profile;
    use crate::verify::predict::InputStats;
    use ndarray::{Array1, Array4};

    /// Weights `[out, in, 3, 3]` in multiples of 1/4 (exact at depth 2), from `seed`.
    fn weights(out: usize, inputs: usize, seed: usize) -> Array4<f64> {
        Array4::from_shape_fn((out, inputs, 3, 3), |(o, z, r, c)| {
            ((o * 31 + z * 17 + r * 7 + c * 3 + seed * 11) % 9) as f64 / 4.0 - 1.0
        })
    }

    /// A network of two layers, 1 -> 3 -> 2 maps (the second reading all three), its
    /// arrays beside it: what tests/eval_layers.rs exports through the command.
    fn two_layers() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("scamp-export-multi-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let net = "name: multi\nstages:\n  \
            - {weights: w1.npy, bias: b1.npy, depth: 2, activation: relu, decision: none}\n  \
            - {weights: w2.npy, bias: b2.npy, depth: 2, activation: relu}\nreadout: {pool: 4}\n";
        let b1: Vec<f64> = (0..3).map(|o| [-20.0, 35.0, 5.0][o % 3]).collect();
        let b2: Vec<f64> = (0..2).map(|o| [-60.0, 90.0, 0.0][o % 3]).collect();
        for (i, (w, b)) in [(weights(3, 1, 1), b1), (weights(2, 3, 2), b2)]
            .iter()
            .enumerate()
        {
            ndarray_npy::write_npy(dir.join(format!("w{}.npy", i + 1)), w).expect("written");
            let b = Array1::from(b.clone());
            ndarray_npy::write_npy(dir.join(format!("b{}.npy", i + 1)), &b).expect("written");
        }
        let p = dir.join("net.yaml");
        std::fs::write(&p, net).expect("written");
        p
    }

    /// Moved from tests/eval_layers.rs (which checks that `scamp export` writes one such
    /// note per stage): stage 2 reads maps B, C and D, and its prediction takes noise and
    /// signal from all three, not from B alone.
    #[test]
    fn export_predicts_a_multi_input_stage_from_every_map() {
        let loaded = crate::eval::load_path(Some(&two_layers())).expect("loads");
        let chip = stage::build(&loaded, &BuildOptions::default()).expect("builds");
        let scamp5 = Profile::builtin("scamp5").expect("built in");
        let blocks = stage_blocks(&loaded, &chip, ("scamp5", &scamp5)).expect("blocks");
        let notes: Vec<&str> = blocks
            .iter()
            .flat_map(|b| &b.notes)
            .filter_map(|l| {
                l.split_once("predicted error under scamp5: ")
                    .map(|(_, r)| r)
            })
            .collect();
        assert_eq!(notes.len(), 2, "{notes:?}");
        let stage = &chip.stages[1];
        let spec = &loaded.stages[1].spec;
        let outs = [Reg::A, Reg::E];
        let stats = InputStats::of_bundled_images(spec.input_range);
        let predict = |w: Wiring| {
            let p = crate::cain::predict_outputs(&stage.program, w, &outs, &scamp5, &stats)
                .expect("predicts");
            let each: Vec<String> = outs
                .iter()
                .zip(&p)
                .map(|(r, p)| format!("{r} RMSE {:.2} bias {:+.2}", p.rmse, p.bias))
                .collect();
            each.join(", ")
        };
        let every = predict(Wiring::planes(&spec.inputs(), chip.general).expect("wiring"));
        assert_eq!(notes[1], every);
        assert_ne!(notes[1], predict(Wiring::new(Reg::B, chip.general)));
    }
}
