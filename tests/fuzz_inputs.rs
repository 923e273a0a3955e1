//! Seeded mutation fuzzing of every input format: the bundled programs, specs and noise
//! profiles, and `.npy` files, with bytes flipped, text cut, lines repeated and numbers
//! made huge. Whatever comes out, the readers must not panic, and a rejection must name
//! a line and column inside the text. A smaller set goes through the binary, which must
//! exit 0, 1 or 2 (never a crash) and print `error: FILE...` when it refuses.

mod common;

use common::npy::npy_bytes;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use scamp::parse_spec;
use scamp::{isa::decode, isa::parse_program, isa::Device, isa::Pos, isa::Reg, isa::Wiring};
use scamp::{Array, EdgeMode, DEFAULT_CLOCK_HZ};
use scamp::{NoiseModel, Profile};
use std::path::Path;

fn bundled(ext: &str) -> Vec<String> {
    let mut out: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("programs"))
            .expect("programs/")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .map(|p| std::fs::read_to_string(p).expect("bundled text"))
            .collect();
    out.sort();
    out
}

/// One way of damaging a text.
#[derive(Clone, Debug)]
enum Mutation {
    /// Replace the byte at this fraction of the length.
    Flip(prop::sample::Index, u8),
    /// Keep only a prefix.
    Truncate(prop::sample::Index),
    /// Repeat one line this many times.
    Duplicate(prop::sample::Index, usize),
    /// Insert text at a position.
    Insert(prop::sample::Index, String),
    /// Delete a byte.
    Delete(prop::sample::Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let junk = prop_oneof![
        Just("99999999999999999999999".to_string()),
        Just("-1e308".to_string()),
        Just("1e400".to_string()),
        Just(".nan".to_string()),
        Just("\n".to_string()),
        Just("[".to_string()),
        Just("{".to_string()),
        Just(":".to_string()),
        Just(",".to_string()),
        Just("(".to_string()),
        Just("|".to_string()),
        Just("\u{feff}".to_string()),
        Just("/*".to_string()),
        Just("Z".to_string()),
        Just("- ".to_string()),
        Just("&a *a".to_string()),
        "[ -~]{0,8}",
    ];
    prop_oneof![
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        any::<prop::sample::Index>().prop_map(Mutation::Truncate),
        (any::<prop::sample::Index>(), 2usize..40).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
        (any::<prop::sample::Index>(), junk).prop_map(|(i, s)| Mutation::Insert(i, s)),
        any::<prop::sample::Index>().prop_map(Mutation::Delete),
    ]
}

fn apply(text: &str, muts: &[Mutation]) -> Vec<u8> {
    let mut b = text.as_bytes().to_vec();
    for m in muts {
        let n = b.len().max(1);
        match m {
            Mutation::Flip(i, v) => {
                if !b.is_empty() {
                    let k = i.index(n);
                    b[k] = *v;
                }
            }
            Mutation::Truncate(i) => b.truncate(i.index(n + 1)),
            Mutation::Duplicate(i, times) => {
                let text = String::from_utf8_lossy(&b).into_owned();
                let lines: Vec<&str> = text.split('\n').collect();
                let k = i.index(lines.len());
                let mut out = Vec::new();
                for (j, l) in lines.iter().enumerate() {
                    let reps = if j == k { *times } else { 1 };
                    for _ in 0..reps {
                        out.push(*l);
                    }
                }
                b = out.join("\n").into_bytes();
            }
            Mutation::Insert(i, s) => {
                let k = i.index(n + 1).min(b.len());
                b.splice(k..k, s.bytes());
            }
            Mutation::Delete(i) => {
                if !b.is_empty() {
                    b.remove(i.index(n));
                }
            }
        }
    }
    b
}

/// A position that lies inside `text` (or just after its end).
fn inside(text: &str, pos: Pos) -> bool {
    let lines = text.split('\n').count() as u32;
    pos.line >= 1 && pos.col >= 1 && pos.line <= lines + 1
}

fn config(cases: u32, seed: u64) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(400, 0x10))]

    #[test]
    fn programs_never_panic(
        which in any::<prop::sample::Index>(),
        muts in prop::collection::vec(mutation(), 1..4),
    ) {
        let sources = bundled("scamp");
        let bytes = apply(&sources[which.index(sources.len())], &muts);
        let text = match decode(bytes, "program") {
            Ok(t) => t,
            Err(e) => {
                prop_assert!(e.pos().is_some(), "{e}");
                return Ok(());
            }
        };
        match parse_program(&text, Device::default()) {
            Err(e) => prop_assert!(inside(&text, e.pos), "{e} outside the text"),
            Ok(p) => {
                // Whatever parses can be proven or refuted, never crash the prover.
                let t = scamp::Target { out: Reg::A, depth: 4, weights: vec![vec![1, 2, 1]] };
                let _ = scamp::prove(&p, Wiring::new(Reg::A, 6), &[t], None);
                let _ = p.cycles();
            }
        }
    }
}

proptest! {
    #![proptest_config(config(400, 0x20))]

    #[test]
    fn specs_never_panic(
        which in any::<prop::sample::Index>(),
        muts in prop::collection::vec(mutation(), 1..4),
    ) {
        let sources = bundled("yaml");
        let bytes = apply(&sources[which.index(sources.len())], &muts);
        let Ok(text) = decode(bytes, "spec") else {
            return Ok(());
        };
        match parse_spec(&text) {
            Err(e) => prop_assert!(inside(&text, e.pos), "{e} outside the text"),
            Ok(s) => {
                prop_assert!(s.registers.iter().all(|r| matches!(r, Reg::Gen(i) if *i < 6)));
                prop_assert!(!s.name.chars().any(char::is_control));
                // Approximates every kernel (the first thing a bank of the spec does).
                let _ = scamp::Bank::with_kernels(scamp::isa::Program::default(), "", s);
            }
        }
    }
}

proptest! {
    #![proptest_config(config(150, 0x30))]

    #[test]
    fn profiles_never_panic(
        which in any::<prop::sample::Index>(),
        muts in prop::collection::vec(mutation(), 1..4),
    ) {
        let sources = [
            scamp::builtin_text("ideal").expect("built in"),
            scamp::builtin_text("scamp5").expect("built in"),
        ];
        let bytes = apply(sources[which.index(sources.len())], &muts);
        let Ok(text) = decode(bytes, "profile") else {
            return Ok(());
        };
        match Profile::from_yaml(&text, "p.yaml") {
            Err(e) => prop_assert!(e.line >= 1 && e.col >= 1, "{e}"),
            Ok(p) => {
                // An accepted profile runs and reads out without a panic.
                let mut array = Array::new(6, EdgeMode::Zero);
                array.set_layer(NoiseModel::new(&p, 1, 1).with_clock(DEFAULT_CLOCK_HZ));
                let prog = parse_program("get_image(A, B); divq(C, A); add(D, C, A)", Device::default())
                    .expect("valid");
                scamp::run(&mut array, &prog, 1, DEFAULT_CLOCK_HZ).expect("runs");
                let out = array.read_out(Reg::D).expect("a register");
                prop_assert!(out.iter().all(|v| v.is_finite()));
            }
        }
    }
}

/// A float32 256x256 `.npy` file.
fn npy_file() -> Vec<u8> {
    let data: Vec<u8> = (0..256 * 256)
        .flat_map(|i| ((i % 200) as f32 - 100.0).to_le_bytes())
        .collect();
    npy_bytes("<f4", "(256, 256)", &data)
}

proptest! {
    #![proptest_config(config(120, 0x40))]

    #[test]
    fn npy_files_never_panic(
        flips in prop::collection::vec((0usize..200, any::<u8>()), 0..6),
        cut in prop::option::of(0usize..262_300),
        header in prop::option::of(prop_oneof![
            Just("(1000000000, 1000000000)"), Just("(256,)"), Just("(256, 256, 1)"),
            Just("()"), Just("(256, -1)"), Just("(256, 257)"), Just("(99999999999999999999, 1)"),
        ]),
    ) {
        let mut b = npy_file();
        if let Some(h) = header {
            let text = String::from_utf8_lossy(&b[..128]).replace("(256, 256)", h);
            let mut nb = text.into_bytes();
            nb.extend_from_slice(&b[128..]);
            b = nb;
        }
        for (at, v) in flips {
            if at < b.len() {
                b[at] = v;
            }
        }
        if let Some(c) = cut {
            b.truncate(c);
        }
        let dir = common::temp_dir("fuzz-npy");
        let f = dir.join("x.npy");
        std::fs::write(&f, &b).expect("temp file");
        match scamp_cli::cli::files::load_values(&f) {
            Ok(v) => prop_assert!(v.len() == 256 * 256 && v.iter().all(|x| x.abs() <= 1024.0)),
            Err(e) => prop_assert!(e.to_string().contains("x.npy"), "{e}"),
        }
    }
}

proptest! {
    #![proptest_config(config(24, 0x50))]

    /// The binary on damaged files: exit 0, 1 or 2, and a refusal names the file.
    #[test]
    fn the_binary_refuses_cleanly(
        which in any::<prop::sample::Index>(),
        muts in prop::collection::vec(mutation(), 1..4),
        spec in any::<bool>(),
    ) {
        let (sources, name) = if spec {
            (bundled("yaml"), "fuzz.yaml")
        } else {
            (bundled("scamp"), "fuzz.scamp")
        };
        let bytes = apply(&sources[which.index(sources.len())], &muts);
        let f = common::temp_file("fuzz-bin", name, bytes);
        let path = f.to_string_lossy().into_owned();
        let o = if spec {
            common::scamp(&["compile", &path, "--time-limit", "0.3", "--workers", "1"])
        } else {
            common::scamp(&["run", &path, "--noise", "ideal", "--json"])
        };
        let err = common::stderr(&o);
        let code = o.status.code();
        prop_assert!(matches!(code, Some(0..=2)), "exit {code:?}: {err}");
        if code == Some(2) {
            prop_assert!(err.starts_with(&format!("error: {path}")), "{err}");
        }
    }
}
