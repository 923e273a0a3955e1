//! `scamp eval [NET.yaml]`: a network's accuracy on a dataset, ideal against a noise
//! profile (docs/eval.md).

use super::common::work_options;
use super::{args, files, CliError, Outcome};
use crate::report::eval as html;
use indicatif::{ProgressBar, ProgressStyle};
use scamp::DEFAULT_PROFILE;
use scamp::{eval, eval::Shard};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;

/// Arguments of `scamp eval`.
#[derive(clap::Args, Debug)]
pub struct EvalArgs {
    /// Network file (docs/eval.md). Default: the bundled AnalogNet2 network
    /// (programs/analognet2_net.yaml). Not with --merge: the shards carry it.
    #[arg(conflicts_with = "merge")]
    pub network: Option<PathBuf>,
    /// Folder of MNIST-style IDX files (train-images-idx3-ubyte[.gz], ...).
    #[arg(long, value_name = "DIR", default_value = eval::DEFAULT_DATASET_DIR)]
    dataset: PathBuf,
    /// Noise profile of the noisy runs: `ideal`, `scamp5` or a profile YAML.
    #[arg(long, default_value = DEFAULT_PROFILE, value_name = "PROFILE")]
    noise: String,
    /// Chips (fixed-pattern seeds 1..=N) the noisy runs are repeated on.
    #[arg(long = "chip-seeds", default_value_t = 3, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    chip_seeds: u32,
    /// Temporal-noise seed of the noisy runs: another seed draws other temporal noise
    /// on the same chips.
    #[arg(long, default_value_t = 0, value_name = "N")]
    seed: u64,
    /// Train the head on features under this profile (noise-aware training, over N
    /// training chips) instead of `ideal`.
    #[arg(long = "train-noise", value_name = "PROFILE")]
    train_noise: Option<String>,
    /// Use only the first N training images.
    #[arg(long = "train-images", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    train_images: Option<u64>,
    /// Use only the first N test images.
    #[arg(long = "test-images", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    test_images: Option<u64>,
    /// Approximation depths to report besides the network's own (default: all from 0).
    #[arg(long, value_delimiter = ',', value_name = "D,...")]
    depths: Option<Vec<u32>>,
    /// Deterministic search budget (nodes per worker) for stages the generator compiles
    /// (default: each spec's `work`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    work: Option<u64>,
    /// Evaluate the K-th of N shares of the test frames and print mergeable JSON.
    #[arg(long, value_name = "K/N", value_parser = Shard::parse, conflicts_with = "merge")]
    shard: Option<Shard>,
    /// Merge the JSON of shards (from --shard --json) into the whole run's report.
    #[arg(long, num_args = 1.., value_name = "FILE")]
    merge: Vec<PathBuf>,
    /// Write a self-contained HTML report.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Error bars: rerun at the network's depth under every profile of the noise
    /// profile's uncertainty ensemble that still matches the measurements, and report the
    /// accuracy's range and the part of it the register range gives.
    #[arg(long, conflicts_with_all = ["merge", "shard"])]
    uncertainty: bool,
    #[command(flatten)]
    json: args::JsonArg,
}

/// The progress bar: on stderr, only when it is a terminal and no JSON is asked for.
fn progress_bar(json: bool) -> Option<ProgressBar> {
    if json || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(0);
    let style = ProgressStyle::with_template("{msg:28} {bar:40} {pos}/{len} frames {elapsed}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}

/// Every file an evaluation reads: the network, its specs, programs and head weights,
/// and the dataset folder's files.
fn inputs_of(a: &EvalArgs, net: &eval::Network) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = a.network.iter().cloned().collect();
    for s in &net.stages {
        files.push(s.spec_file.clone());
        files.extend(s.program.as_ref().map(|(f, _)| f.clone()));
    }
    if let eval::HeadDef::Weights(f) = &net.head {
        files.extend(f.iter().cloned());
    }
    if let Ok(entries) = std::fs::read_dir(&a.dataset) {
        files.extend(entries.flatten().map(|e| e.path()));
    }
    files
}

/// Runs `scamp eval`.
pub fn run(a: &EvalArgs) -> Outcome {
    let (report, examples, size) = if a.merge.is_empty() {
        let net = eval::load_path(a.network.as_deref()).map_err(CliError::msg)?;
        if let Some(file) = &a.html {
            files::check_writable_file(file)?;
            files::check_not_an_input(file, &inputs_of(a, &net))?;
        }
        let data = eval::read_dataset(&a.dataset).map_err(CliError::msg)?;
        let bar = progress_bar(a.json.json);
        let bar_lock = Mutex::new(bar);
        let progress = |what: &str, done: u64, total: u64| {
            if let Ok(guard) = bar_lock.lock() {
                if let Some(b) = guard.as_ref() {
                    b.set_message(what.to_string());
                    b.set_length(total);
                    b.set_position(done);
                }
            }
        };
        let train_noise = a.train_noise.as_deref();
        let opts = eval::Options::default()
            .with_noise(eval::named_profile(&a.noise)?)
            .with_chip_seeds(a.chip_seeds)
            .with_seed(a.seed)
            .with_train_noise(train_noise.map(eval::named_profile).transpose()?)
            .with_train_images(a.train_images.map(|n| n as usize))
            .with_test_images(a.test_images.map(|n| n as usize))
            .with_shard(a.shard)
            .with_depths(a.depths.clone())
            .with_compile(work_options(a.work))
            .with_examples(if a.html.is_some() { 12 } else { 0 })
            .with_progress(Some(&progress))
            .with_count_saturation(true);
        if a.uncertainty {
            scamp::described(&opts.noise.1).map_err(CliError::msg)?;
        }
        let e = eval::evaluate(&net, &data, &opts).map_err(CliError::msg)?;
        let mut report = eval::report(&e.merge);
        if a.uncertainty {
            let nominal = report.accuracy.noisy.mean;
            report.uncertainty =
                Some(eval::uncertainty_ranges(&net, &data, &opts, nominal).map_err(CliError::msg)?);
        }
        if let Ok(Some(b)) = bar_lock.lock().map(|g| g.clone()) {
            b.finish_and_clear();
        }
        (report, e.examples, (e.rows, e.cols))
    } else {
        if let Some(file) = &a.html {
            files::check_writable_file(file)?;
            files::check_not_an_input(file, &a.merge)?;
        }
        let m = eval::merge_files(&a.merge).map_err(CliError::msg)?;
        (eval::report(&m), Vec::new(), (0, 0))
    };
    if let Some(file) = &a.html {
        let page = html::page_of(&report, &examples, size.0, size.1).map_err(CliError::msg)?;
        std::fs::write(file, page)
            .map_err(|e| CliError::msg(format!("{}: cannot write: {e}", file.display())))?;
    }
    if a.json.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", eval::report_text(&report));
    }
    Ok(0)
}
