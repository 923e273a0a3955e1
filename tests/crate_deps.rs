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

/// The library's folder.
fn library() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/scamp")
}

/// Every file the library's sources embed (`include_bytes!`, `include_str!`), as paths
/// relative to the library's folder (`None` for one outside it).
fn embedded(dir: &std::path::Path, found: &mut Vec<Option<String>>) {
    let root = library().canonicalize().expect("the library's folder");
    for entry in std::fs::read_dir(dir).expect("a source folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            embedded(&path, found);
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for macro_name in ["include_bytes!(\"", "include_str!(\""] {
            for (at, _) in text.match_indices(macro_name) {
                let rest = &text[at + macro_name.len()..];
                let file = &rest[..rest.find('"').expect("a closing quote")];
                let full = dir
                    .join(file)
                    .canonicalize()
                    .expect("an embedded file exists");
                found.push(
                    full.strip_prefix(&root)
                        .ok()
                        .map(|p| p.to_string_lossy().into_owned()),
                );
            }
        }
    }
}

/// `cargo package` of the library lists every file it embeds: none is outside its
/// folder, so the packaged crate builds on its own (the bundled images, the default
/// network's files).
#[test]
fn the_library_packages_with_everything_it_embeds() {
    let mut found = Vec::new();
    embedded(&library().join("src"), &mut found);
    let inside: Vec<String> = found.iter().flatten().cloned().collect();
    assert_eq!(
        inside.len(),
        found.len(),
        "embedded from outside crates/scamp"
    );
    assert!(
        inside.contains(&"images/camera.png".to_string()),
        "{inside:?}"
    );
    assert!(
        inside.contains(&"programs/analognet2_net.yaml".to_string()),
        "{inside:?}"
    );
    let package = |extra: &str| {
        Command::new(env!("CARGO"))
            .args([
                "package",
                "--offline",
                "--allow-dirty",
                "-p",
                "scamp",
                extra,
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo runs")
    };
    let list = package("--list");
    assert!(
        list.status.success(),
        "cargo package --list: {}",
        String::from_utf8_lossy(&list.stderr)
    );
    let listed = String::from_utf8_lossy(&list.stdout);
    let listed: Vec<&str> = listed.lines().collect();
    for file in &inside {
        assert!(
            listed.contains(&file.as_str()),
            "{file} not packaged: {listed:?}"
        );
    }
    let pack = package("--no-verify");
    assert!(
        pack.status.success(),
        "cargo package --no-verify: {}",
        String::from_utf8_lossy(&pack.stderr)
    );
}
