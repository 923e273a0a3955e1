//! The options of `scamp check` and `scamp eval` are declared once
//! (`scamp::options::{CHECK_OPTIONS, EVAL_OPTIONS}`): the flags, their defaults and the
//! docs' tables are held to those lists here; the Python signatures, their defaults and
//! the stub by python/tests/test_errors_and_options.py.

use clap::CommandFactory;
use scamp::{FrontOption, InPython, CHECK_OPTIONS, EVAL_OPTIONS};
use std::collections::BTreeMap;

/// The long flags of `scamp COMMAND` with their default values (none for a flag
/// without one), besides `--json` and `--help`.
fn flags(command: &str) -> BTreeMap<String, Option<String>> {
    let cli = scamp_cli::cli::Cli::command();
    let sub = cli
        .get_subcommands()
        .find(|c| c.get_name() == command)
        .unwrap_or_else(|| panic!("a {command} subcommand"));
    sub.get_arguments()
        .filter_map(|a| {
            let long = a.get_long()?;
            let default = a
                .get_default_values()
                .first()
                .map(|v| v.to_string_lossy().into_owned());
            Some((format!("--{long}"), default))
        })
        .filter(|(l, _)| !matches!(l.as_str(), "--json" | "--help"))
        .collect()
}

fn declared(options: &[FrontOption]) -> BTreeMap<String, Option<String>> {
    options
        .iter()
        .map(|o| (o.flag(), o.cli_default.map(str::to_string)))
        .collect()
}

#[test]
fn every_check_flag_is_declared_with_its_default() {
    assert_eq!(flags("check"), declared(&CHECK_OPTIONS));
}

#[test]
fn every_eval_flag_is_declared_with_its_default() {
    assert_eq!(flags("eval"), declared(&EVAL_OPTIONS));
}

#[test]
fn the_flags_keep_the_declared_order_in_help() {
    for (command, options) in [("check", &CHECK_OPTIONS[..]), ("eval", &EVAL_OPTIONS[..])] {
        let cli = scamp_cli::cli::Cli::command();
        let sub = cli
            .get_subcommands()
            .find(|c| c.get_name() == command)
            .expect("the subcommand");
        let order: Vec<String> = sub
            .get_arguments()
            .filter_map(|a| a.get_long())
            .filter(|l| !matches!(*l, "json" | "help"))
            .map(|l| format!("--{l}"))
            .collect();
        let want: Vec<String> = options.iter().map(FrontOption::flag).collect();
        assert_eq!(order, want, "{command}");
    }
}

/// The docs' table of a command's options, as the declaration renders it.
fn table(function: &str, options: &[FrontOption]) -> String {
    let mut out = format!(
        "| keyword of `{function}` | flag | type | default | values | what it does |\n\
         | --- | --- | --- | --- | --- | --- |\n"
    );
    for o in options {
        let keyword = match o.python {
            InPython::Keyword => format!("`{}`", o.name),
            InPython::Via(f) => format!("via `scamp.{f}`"),
            InPython::Output => "(returned)".to_string(),
        };
        let range = if o.range.is_empty() { "-" } else { o.range };
        out += &format!(
            "| {keyword} | `{}` | {} | `{}` | {range} | {} |\n",
            o.flag(),
            o.kind,
            o.py_default,
            o.doc
        );
    }
    out
}

#[test]
fn the_python_docs_list_every_check_and_eval_option_as_declared() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = std::fs::read_to_string(root.join("docs/python.md")).expect("docs/python.md");
    for want in [
        table("scamp.check", &CHECK_OPTIONS),
        table("Network.evaluate", &EVAL_OPTIONS),
    ] {
        assert!(
            docs.contains(&want),
            "docs/python.md must hold the table as declared:\n{want}"
        );
    }
}
