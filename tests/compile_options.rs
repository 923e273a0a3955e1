//! The compile options are declared once (`scamp::COMPILE_OPTIONS`):
//! every front end is held to that list here, so an option added to one and not
//! declared (or declared and missing from one) fails a test. The Python keywords and
//! the stub are held to it by python/tests/test_errors_and_options.py and stubtest; the
//! docs' table and lists of the options are held to it here too.

use clap::CommandFactory;
use scamp::{OptionDecl, COMPILE_OPTIONS};
use std::collections::BTreeSet;

/// The long flags of `scamp compile`, without the ones that are not compile options.
fn compile_flags() -> BTreeSet<String> {
    let cli = scamp_cli::cli::Cli::command();
    let compile = cli
        .get_subcommands()
        .find(|c| c.get_name() == "compile")
        .expect("a compile subcommand");
    compile
        .get_arguments()
        .filter_map(|a| a.get_long())
        .filter(|l| !matches!(*l, "output" | "json" | "help"))
        .map(|l| format!("--{l}"))
        .collect()
}

#[test]
fn every_compile_flag_is_declared_and_every_declaration_is_a_flag() {
    let declared: BTreeSet<String> = COMPILE_OPTIONS.iter().map(OptionDecl::flag).collect();
    assert_eq!(compile_flags(), declared);
}

/// The keys serde expects under `search:`, read from its refusal of an unknown key.
fn search_keys() -> BTreeSet<String> {
    let err = scamp::parse_spec("kernels:\n  - out: A\n    weights: [[1]]\nsearch: { nokey: 1 }\n")
        .expect_err("an unknown key is refused");
    let msg = err.cause.to_string();
    let (_, expected) = msg
        .split_once("expected one of ")
        .unwrap_or_else(|| panic!("serde names the keys: {msg}"));
    expected
        .split(", ")
        .map(|k| format!("search.{}", k.trim_matches('`')))
        .collect()
}

#[test]
fn every_search_key_is_declared() {
    let declared: BTreeSet<String> = COMPILE_OPTIONS
        .iter()
        .filter_map(|d| d.spec_key)
        .filter(|k| k.starts_with("search."))
        .map(str::to_string)
        .collect();
    assert_eq!(search_keys(), declared);
}

#[test]
fn every_declared_spec_key_is_accepted_by_the_spec_parser() {
    let value = |key: &str| match key {
        "search.ops" => "basic",
        "registers" => "[A, B]",
        "fit" | "approximation.accept" => "true",
        _ => "5",
    };
    for key in COMPILE_OPTIONS.iter().filter_map(|d| d.spec_key) {
        let yaml = match key.split_once('.') {
            Some((section, leaf)) => format!("{section}: {{ {leaf}: {} }}\n", value(key)),
            None => format!("{key}: {}\n", value(key)),
        };
        let text = format!("input: A\nkernels:\n  - out: A\n    weights: [[1]]\n{yaml}");
        assert!(
            scamp::parse_spec(&text).is_ok(),
            "{key}: {text}: {:?}",
            scamp::parse_spec(&text).err()
        );
    }
}

/// The docs' table of compile options, as the declaration renders it.
fn table() -> String {
    let mut out = String::from(
        "| keyword | flag | spec key | default | what it does |\n| --- | --- | --- | --- | --- |\n",
    );
    for d in &COMPILE_OPTIONS {
        out += &format!(
            "| `{}` | `{}` | {} | {} | {} |\n",
            d.name,
            d.flag(),
            d.spec_key.map_or("-".into(), |k| format!("`{k}`")),
            d.default,
            d.doc
        );
    }
    out
}

#[test]
fn the_python_docs_list_every_option_as_declared() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = std::fs::read_to_string(root.join("docs/python.md")).expect("docs/python.md");
    let want = table();
    assert!(
        docs.contains(&want),
        "docs/python.md must hold the compile options table as declared:\n{want}"
    );
}

/// docs/spec-format.md has a row for every declared spec key, and every `search` flag
/// in its list of the flags that override the `search` section.
#[test]
fn the_spec_format_has_every_declared_key_and_search_flag() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = std::fs::read_to_string(root.join("docs/spec-format.md")).expect("spec-format.md");
    for d in &COMPILE_OPTIONS {
        let Some(key) = d.spec_key else { continue };
        assert!(docs.contains(&format!("| `{key}` |")), "no row for `{key}`");
        if key.starts_with("search.") {
            assert!(
                docs.contains(&format!("`{}`", d.flag())),
                "{} not listed",
                d.flag()
            );
        }
    }
}

/// The README's row of `scamp compile` names every compile flag.
#[test]
fn the_readme_names_every_compile_flag() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let row = readme
        .lines()
        .find(|l| l.starts_with("| `scamp compile SPEC.yaml` |"))
        .expect("the README's compile row");
    for d in &COMPILE_OPTIONS {
        let flag = d.flag();
        assert!(
            row.contains(&format!("`{flag}`")) || row.contains(&format!("`{flag} ")),
            "{flag} not in the README's compile row"
        );
    }
}
