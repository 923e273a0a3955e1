//! The library crate (`crates/scamp`) pulls in no command-line, web-server, page-making
//! or progress-bar crate, and the Python extension links the library, not the command.

use std::process::Command;

/// The normal dependency tree of `package`, one crate name per line.
fn tree(package: &str) -> Vec<String> {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-e",
            "normal",
            "--prefix",
            "none",
            "-p",
            package,
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// What only the command needs: its argument parser, the playground's server, its
/// progress bar and allocator, and what only the HTML pages use (the tutorial's Markdown,
/// pictures inlined as base64 data URIs).
const APPLICATION_CRATES: [&str; 8] = [
    "clap",
    "tiny_http",
    "hyper",
    "tokio",
    "indicatif",
    "mimalloc",
    "pulldown-cmark",
    "base64",
];

#[test]
fn the_library_has_no_application_dependency() {
    let crates = tree("scamp");
    assert!(crates.iter().any(|c| c == "ndarray"), "{crates:?}");
    for app in APPLICATION_CRATES {
        assert!(
            !crates.iter().any(|c| c == app),
            "the library depends on {app}"
        );
    }
}

#[test]
fn the_python_extension_links_the_library_not_the_command() {
    let crates = tree("scamp-python");
    assert!(crates.iter().any(|c| c == "scamp"), "{crates:?}");
    assert!(!crates.iter().any(|c| c == "scamp-cli"), "{crates:?}");
    for app in ["clap", "hyper", "tokio", "indicatif"] {
        assert!(
            !crates.iter().any(|c| c == app),
            "the extension depends on {app}"
        );
    }
}
