//! The options of `check` and `eval`, each declared once (name, type, default, range,
//! doc) as [`crate::cain::options::COMPILE_OPTIONS`] declares the compile options: the
//! command-line flags, the Python keywords with their defaults, the `.pyi` stub and the
//! docs' tables are checked against these lists (tests/check_eval_options.rs,
//! python/tests/test_errors_and_options.py).
//!
//! ```
//! use scamp::{CHECK_OPTIONS, EVAL_OPTIONS, InPython};
//! let runs = CHECK_OPTIONS.iter().find(|o| o.name == "runs").unwrap();
//! assert_eq!((runs.flag(), runs.cli_default, runs.py_default), ("--runs".into(), Some("1"), "1"));
//! let seeds = EVAL_OPTIONS.iter().find(|o| o.name == "chip_seeds").unwrap();
//! assert_eq!(seeds.python, InPython::Keyword);
//! assert_eq!(seeds.range, "1..=1000");
//! ```

/// Where the Python package takes an option of a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InPython {
    /// A keyword of the function of the same name (`scamp.check`,
    /// `scamp.Network.evaluate`), with [`FrontOption::py_default`].
    Keyword,
    /// A keyword of another function, named here: e.g. the compile budget of `check`
    /// goes to `scamp.compile`, whose result `scamp.check` takes.
    Via(&'static str),
    /// A file the command writes; the Python function returns the data instead.
    Output,
}

/// One option of a command as every front end shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FrontOption {
    /// The Python keyword; the flag is [`FrontOption::flag`].
    pub name: &'static str,
    /// Its type, as the stub writes it.
    pub kind: &'static str,
    /// The command line's default as clap shows it, if the flag has one.
    pub cli_default: Option<&'static str>,
    /// The Python default, as the signature writes it.
    pub py_default: &'static str,
    /// The values accepted (empty when any value of the type is).
    pub range: &'static str,
    /// What it does, in one line.
    pub doc: &'static str,
    /// Where Python takes it.
    pub python: InPython,
}

impl FrontOption {
    /// The command-line flag: `--` and the name with `-` for `_`.
    pub fn flag(&self) -> String {
        format!("--{}", self.name.replace('_', "-"))
    }
}

/// Declares one option.
const fn opt(
    name: &'static str,
    kind: &'static str,
    (cli_default, py_default): (Option<&'static str>, &'static str),
    range: &'static str,
    doc: &'static str,
    python: InPython,
) -> FrontOption {
    FrontOption {
        name,
        kind,
        cli_default,
        py_default,
        range,
        doc,
        python,
    }
}

use InPython::{Keyword, Output, Via};

/// Every option of `scamp check` (besides the target and `--json`), in the order of
/// its `--help`.
pub const CHECK_OPTIONS: [FrontOption; 14] = [
    opt(
        "kernel",
        "spec",
        (None, "None"),
        "",
        "the filter spec a program is meant to compute",
        Keyword,
    ),
    opt(
        "images",
        "folder or uint8 array",
        (Some("images"), "None"),
        "",
        "test images (the bundled ones by default)",
        Keyword,
    ),
    opt(
        "noise",
        "profile",
        (Some("scamp5"), "'scamp5'"),
        "",
        "noise profile: ideal, scamp5 or a profile file",
        Keyword,
    ),
    opt(
        "seed",
        "int",
        (Some("1"), "1"),
        "0..=2^64-1",
        "temporal-noise (run) seed; run r uses seed + r",
        Keyword,
    ),
    opt(
        "chip_seed",
        "int",
        (Some("1"), "1"),
        "0..=2^64-1",
        "fixed-pattern (chip) seed",
        Keyword,
    ),
    opt(
        "runs",
        "int",
        (Some("1"), "1"),
        "1..=100000",
        "run seeds per image (mean and spread of each figure)",
        Keyword,
    ),
    opt(
        "out",
        "folder",
        (None, "-"),
        "",
        "per image and kernel: result, ideal result, error heat map",
        Output,
    ),
    opt(
        "time_limit",
        "float",
        (None, "None"),
        "(0, 86400]",
        "search budget in seconds when a spec is compiled",
        Via("compile"),
    ),
    opt(
        "workers",
        "int",
        (None, "None"),
        "1..=1024",
        "search workers when a spec is compiled",
        Via("compile"),
    ),
    opt(
        "work",
        "int",
        (None, "None"),
        "1..",
        "deterministic search of N nodes per worker when a spec is compiled",
        Via("compile"),
    ),
    opt(
        "max_total_rmse",
        "float",
        (None, "None"),
        "more than 0",
        "the shortest program whose total RMSE meets this budget",
        Keyword,
    ),
    opt(
        "uncertainty",
        "bool",
        (None, "False"),
        "",
        "the range of the figures over the profile's uncertainty ensemble",
        Keyword,
    ),
    opt(
        "html",
        "file",
        (None, "-"),
        "",
        "a self-contained HTML report",
        Output,
    ),
    opt(
        "accept_approximation",
        "bool",
        (None, "False"),
        "",
        "accept an approximation that misses max_error",
        Via("compile"),
    ),
];

/// Every option of `scamp eval` (besides the network and `--json`), in the order of
/// its `--help`.
pub const EVAL_OPTIONS: [FrontOption; 13] = [
    opt(
        "dataset",
        "folder",
        (Some(crate::eval::dataset::DEFAULT_DIR), "None"),
        "",
        "folder of MNIST-style IDX files (Fashion-MNIST's by default)",
        Keyword,
    ),
    opt(
        "noise",
        "profile",
        (Some(crate::sim::noise::DEFAULT_PROFILE), "'scamp5'"),
        "",
        "noise profile of the noisy runs",
        Keyword,
    ),
    opt(
        "chip_seeds",
        "int",
        (Some("3"), "3"),
        "1..=1000",
        "chips (fixed-pattern seeds 1..=N) the noisy runs are repeated on",
        Keyword,
    ),
    opt(
        "seed",
        "int",
        (Some("0"), "0"),
        "",
        "temporal-noise seed of the noisy runs (another seed, another draw on the same chips)",
        Keyword,
    ),
    opt(
        "train_noise",
        "profile",
        (None, "None"),
        "",
        "train the head under this profile instead of ideal",
        Keyword,
    ),
    opt(
        "train_images",
        "int",
        (None, "None"),
        "1..",
        "use only the first N training images",
        Keyword,
    ),
    opt(
        "test_images",
        "int",
        (None, "None"),
        "1..",
        "use only the first N test images",
        Keyword,
    ),
    opt(
        "depths",
        "list of int",
        (None, "None"),
        "",
        "approximation depths to report besides the network's own",
        Keyword,
    ),
    opt(
        "work",
        "int",
        (None, "None"),
        "1..",
        "deterministic search budget for the stages the generator compiles",
        Keyword,
    ),
    opt(
        "shard",
        "str",
        (None, "None"),
        "K/N, 1 <= K <= N",
        "evaluate the K-th of N shares of the test frames",
        Keyword,
    ),
    opt(
        "merge",
        "files",
        (None, "-"),
        "",
        "merge the JSON of shards into the whole run's report",
        Via("merge_shards"),
    ),
    opt(
        "html",
        "file",
        (None, "-"),
        "",
        "a self-contained HTML report",
        Output,
    ),
    opt(
        "uncertainty",
        "bool",
        (None, "False"),
        "",
        "the accuracy's range over the profile's uncertainty ensemble",
        Keyword,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The library's own defaults (`eval::Options::default`) are the declared ones.
    #[test]
    fn eval_options_default_to_the_declared_values() {
        let declared = |name: &str| {
            EVAL_OPTIONS
                .iter()
                .find(|o| o.name == name)
                .map(|o| (o.cli_default, o.py_default))
        };
        let d = crate::eval::Options::default();
        let chips = d.chip_seeds.to_string();
        assert_eq!(
            declared("chip_seeds"),
            Some((Some(chips.as_str()), chips.as_str()))
        );
        let seed = d.seed.to_string();
        assert_eq!(declared("seed"), Some((Some(seed.as_str()), seed.as_str())));
        assert_eq!(
            declared("noise").and_then(|(cli, _)| cli),
            Some(d.noise.0.as_str())
        );
        assert_eq!(
            (
                d.train_noise.is_none(),
                d.train_images,
                d.test_images,
                d.depths
            ),
            (true, None, None, None)
        );
    }
}
