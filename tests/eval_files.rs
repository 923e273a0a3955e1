//! `scamp eval` against hostile and broken files: readers that stop at their limit
//! (`/dev/zero` as network, spec or program), IDX headers checked before anything is
//! inflated, gzip bombs, multi-member gzip, head `.npy` shapes checked before
//! allocating, merges that check their counts and fingerprints, thresholds the DAC
//! cannot load, a stage that leaves FLAG cleared, diverging head training, `--html`
//! paths checked before the work and never over an input, and the minor messages.

mod common;

use common::dataset::{idx_bytes, squares};
use common::npy::npy_bytes;
use common::{json, scamp, stderr, temp_dir};
use flate2::{write::GzEncoder, Compression};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// `n` 28x28 images per split, a square of pixel value `level` placed by the class;
/// labels 0..9, as IDX files.
fn split_at_level(n: u32, level: u8) -> (Vec<u8>, Vec<u8>) {
    let (pixels, labels) = squares(n, level);
    (idx_bytes(&[n, 28, 28], &pixels), idx_bytes(&[n], &labels))
}

/// `n` 28x28 images per split, a bright square placed by the class; labels 0..9.
fn split_bytes(n: u32) -> (Vec<u8>, Vec<u8>) {
    split_at_level(n, 200)
}

/// A tiny dataset folder; `wrap` turns each file's bytes into what is written.
fn tiny_with(purpose: &str, n: u32, wrap: &dyn Fn(&[u8]) -> Vec<u8>, ext: &str) -> PathBuf {
    let dir = temp_dir(purpose);
    let (images, labels) = split_bytes(n);
    for split in ["train", "t10k"] {
        std::fs::write(
            dir.join(format!("{split}-images-idx3-ubyte{ext}")),
            wrap(&images),
        )
        .unwrap();
        std::fs::write(
            dir.join(format!("{split}-labels-idx1-ubyte{ext}")),
            wrap(&labels),
        )
        .unwrap();
    }
    dir
}

fn tiny(purpose: &str, n: u32) -> PathBuf {
    tiny_with(purpose, n, &|b| b.to_vec(), "")
}

/// Exit 2 and one `error:` line containing `want`, within `limit`.
fn refused_within(args: &[&str], want: &str, limit: Duration) -> String {
    let t = Instant::now();
    let o = scamp(args);
    let msg = stderr(&o);
    assert!(t.elapsed() < limit, "{args:?} took {:?}", t.elapsed());
    assert_eq!(o.status.code(), Some(2), "{args:?}: {msg}");
    assert!(msg.starts_with("error: "), "{msg}");
    assert_eq!(msg.trim().lines().count(), 1, "{msg}");
    assert!(msg.contains(want), "{args:?}: expected `{want}` in {msg}");
    msg
}

fn refused(args: &[&str], want: &str) -> String {
    refused_within(args, want, Duration::from_secs(120))
}

/// A folder with the identity spec (A to A), its programs and `net` as net.yaml.
fn network(purpose: &str, net: &str) -> PathBuf {
    let dir = temp_dir(purpose);
    for f in ["analognet2.yaml", "analognet2.scamp"] {
        std::fs::copy(Path::new("programs").join(f), dir.join(f)).unwrap();
    }
    std::fs::write(
        dir.join("identity.yaml"),
        "name: identity\ninput: A\nregisters: [A, B, C]\nkernels:\n  - out: A\n    weights: [[1]]\n",
    )
    .unwrap();
    std::fs::write(dir.join("nothing.scamp"), "// A is already A.\n").unwrap();
    std::fs::write(dir.join("copy.scamp"), "mov(B, A);\n").unwrap();
    std::fs::write(dir.join("copy-where.scamp"), "mov(B, A);\nwhere(A);\n").unwrap();
    let p = dir.join("net.yaml");
    std::fs::write(&p, net).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn endless_files_are_read_only_to_their_limit() {
    let data = tiny("ef-zero", 10);
    let d = s(&data);
    let fast = Duration::from_secs(10);
    refused_within(&["eval", "/dev/zero", "--dataset", d], "larger than", fast);
    let p = network("ef-zero-spec", "name: x\nstages:\n  - spec: /dev/zero\n");
    refused_within(
        &["eval", s(&p), "--dataset", d],
        "/dev/zero: cannot read: larger than",
        fast,
    );
    let p = network(
        "ef-zero-prog",
        "name: x\nstages:\n  - spec: identity.yaml\n    program: /dev/zero\n    decision: sign\n",
    );
    refused_within(
        &["eval", s(&p), "--dataset", d],
        "/dev/zero: cannot read: larger than",
        fast,
    );
    let msg = refused(
        &["eval", "/", "--dataset", d],
        "a folder, not a network file",
    );
    assert!(msg.starts_with("error: /: "), "{msg}");
    refused_within(
        &["eval", "--noise", "/dev/zero", "--dataset", d],
        "larger than",
        fast,
    );
}

#[test]
fn idx_headers_are_checked_before_inflating() {
    // 30000x30000 claimed, 100 MB of zeros gzip'd to about 100 KB.
    let dir = temp_dir("ef-wide");
    let mut wide = idx_bytes(&[1, 30_000, 30_000], &[]);
    wide.extend(vec![0u8; 100 << 20]);
    let (images, labels) = split_bytes(10);
    std::fs::write(dir.join("train-images-idx3-ubyte.gz"), gz(&wide)).unwrap();
    std::fs::write(dir.join("train-labels-idx1-ubyte"), &labels).unwrap();
    std::fs::write(dir.join("t10k-images-idx3-ubyte"), &images).unwrap();
    std::fs::write(dir.join("t10k-labels-idx1-ubyte"), &labels).unwrap();
    refused_within(
        &["eval", "--dataset", s(&dir)],
        "images of 30000x30000 pixels do not fit the 256x256 array",
        Duration::from_secs(3),
    );
    // A bomb: 10 images announced, 200 MB inflated behind them. Only the images are
    // read, and the run is the same as with the plain files.
    let (images, _) = split_bytes(10);
    let mut bomb = images.clone();
    bomb.extend(vec![0u8; 200 << 20]);
    std::fs::write(dir.join("train-images-idx3-ubyte.gz"), gz(&bomb)).unwrap();
    let args = |d: &Path| {
        scamp(&[
            "eval",
            "--json",
            "--dataset",
            s(d),
            "--noise",
            "ideal",
            "--depths",
            "2",
        ])
    };
    let plain = tiny("ef-plain", 10);
    let t = Instant::now();
    let r = json(&args(&dir));
    assert!(t.elapsed() < Duration::from_secs(60));
    assert_eq!(r["accuracy"], json(&args(&plain))["accuracy"]);
}

#[test]
fn multi_member_gzip_reads_as_its_concatenation() {
    let two = |b: &[u8]| {
        let mut out = gz(&b[..b.len() / 3]);
        out.extend(gz(&b[b.len() / 3..]));
        out
    };
    let split = tiny_with("ef-members", 20, &two, ".gz");
    let plain = tiny("ef-members-plain", 20);
    let run = |d: &Path| {
        json(&scamp(&[
            "eval",
            "--json",
            "--dataset",
            s(d),
            "--noise",
            "ideal",
            "--depths",
            "2",
        ]))
    };
    let (a, b) = (run(&split), run(&plain));
    assert_eq!(a["accuracy"], b["accuracy"]);
    assert_eq!(a["images"], 20);
}

#[test]
fn folders_fifos_and_symlink_loops_say_what_they_are() {
    let dir = tiny("ef-fifo", 10);
    let f = dir.join("t10k-images-idx3-ubyte");
    std::fs::remove_file(&f).unwrap();
    let ok = std::process::Command::new("mkfifo")
        .arg(&f)
        .status()
        .unwrap();
    assert!(ok.success());
    refused_within(
        &["eval", "--dataset", s(&dir)],
        "not a regular file (a FIFO)",
        Duration::from_secs(10),
    );
    std::fs::remove_file(&f).unwrap();
    std::os::unix::fs::symlink(&f, &f).unwrap();
    refused(
        &["eval", "--dataset", s(&dir)],
        "Too many levels of symbolic links",
    );
}

/// Writes a float32 `.npy` whose header claims `shape`, with `data` bytes after it.
fn npy_claiming(path: &Path, shape: &str, data: usize) {
    std::fs::write(path, npy_bytes("<f4", shape, &vec![0u8; data])).unwrap();
}

#[test]
fn a_head_npy_shape_is_checked_before_allocating() {
    let data = tiny("ef-npy", 10);
    let p = network(
        "ef-npy-net",
        "name: x\nstages:\n  - spec: analognet2.yaml\n    program: analognet2.scamp\nhead:\n  weights: w.npy\n",
    );
    npy_claiming(&p.parent().unwrap().join("w.npy"), "(10, 999999999999)", 64);
    refused_within(
        &["eval", s(&p), "--dataset", s(&data), "--depths", "2"],
        "head layer 1 is 10x999999999999; it takes 147 inputs, so it must be 10x148",
        Duration::from_secs(30),
    );
    npy_claiming(&p.parent().unwrap().join("w.npy"), "(10, 148)", 100);
    refused(
        &["eval", s(&p), "--dataset", s(&data), "--depths", "2"],
        "truncated: 100 bytes of data, a 10x148 array of float32 needs 5920",
    );
}

#[test]
fn thresholds_the_dac_cannot_load_are_refused_at_their_position() {
    let data = tiny("ef-thr", 10);
    for (t, ok) in [
        ("2.5", false),
        ("2000", false),
        ("-128", false),
        ("128", true),
        ("-127", true),
    ] {
        let p = network(
            &format!("ef-thr-{t}"),
            &format!("name: x\nstages:\n  - spec: identity.yaml\n    program: nothing.scamp\n    decision: threshold\n    threshold: {t}\n"),
        );
        let args = [
            "eval",
            s(&p),
            "--dataset",
            s(&data),
            "--noise",
            "ideal",
            "--json",
        ];
        if ok {
            json(&scamp(&args));
        } else {
            let msg = refused(&args, "net.yaml:6:16: ");
            assert!(
                msg.contains(&format!(
                    "threshold {} cannot be loaded",
                    t.parse::<f64>().unwrap()
                )),
                "{msg}"
            );
            assert!(msg.contains("an integer in -127..128"), "{msg}");
        }
    }
}

#[test]
fn a_stage_that_clears_flag_does_not_mask_the_decision() {
    // Dim squares (pixel 100, register value -28) decided against -50: the threshold's
    // load `in(B, 50)` must reach every PE. A stage that leaves FLAG = A > 0 (no PE)
    // would leave B = A there, and no bit would be set.
    let dir = temp_dir("ef-flag");
    let (images, labels) = split_at_level(40, 100);
    for split in ["train", "t10k"] {
        std::fs::write(dir.join(format!("{split}-images-idx3-ubyte")), &images).unwrap();
        std::fs::write(dir.join(format!("{split}-labels-idx1-ubyte")), &labels).unwrap();
    }
    let run = |program: &str| {
        let p = network(
            &format!("ef-flag-{program}"),
            &format!("name: x\nstages:\n  - spec: identity.yaml\n    program: {program}\n    decision: threshold\n    threshold: -50\n"),
        );
        json(&scamp(&[
            "eval",
            s(&p),
            "--dataset",
            s(&dir),
            "--noise",
            "ideal",
            "--json",
        ]))
    };
    let plain = run("copy.scamp");
    assert_eq!(plain["accuracy"]["ideal"], 1.0, "{plain}");
    assert_eq!(run("copy-where.scamp")["accuracy"], plain["accuracy"]);
}

#[test]
fn diverging_head_training_is_refused() {
    let data = tiny("ef-diverge", 20);
    let p = network(
        "ef-inf",
        "name: x\nstages:\n  - spec: identity.yaml\n    program: nothing.scamp\n    decision: sign\nhead:\n  train: {learning_rate: .inf}\n",
    );
    refused(
        &["eval", s(&p), "--dataset", s(&data)],
        "net.yaml:7:10: train needs epochs >= 1, batch >= 1, a finite learning_rate > 0",
    );
    let p = network(
        "ef-l2",
        "name: x\nstages:\n  - spec: identity.yaml\n    program: nothing.scamp\n    decision: sign\nhead:\n  train: {l2: 1e30}\n",
    );
    refused(
        &["eval", s(&p), "--dataset", s(&data), "--noise", "ideal"],
        "the head's training diverged (weights not finite)",
    );
}

/// Shard files 1/2 and 2/2 of the identity network on `data` (ideal noise).
fn shards(purpose: &str, net: &Path, data: &Path) -> Vec<(PathBuf, Value)> {
    let dir = temp_dir(purpose);
    (1..=2)
        .map(|k| {
            let shard = format!("{k}/2");
            let o = scamp(&[
                "eval",
                s(net),
                "--json",
                "--dataset",
                s(data),
                "--noise",
                "ideal",
                "--shard",
                &shard,
            ]);
            let v = json(&o);
            let p = dir.join(format!("{k}.json"));
            std::fs::write(&p, &o.stdout).unwrap();
            (p, v)
        })
        .collect()
}

#[test]
fn merges_check_their_counts_and_what_the_figures_depend_on() {
    let data = tiny("ef-merge", 200);
    let net = network(
        "ef-merge-net",
        "name: x\nstages:\n  - spec: identity.yaml\n    program: nothing.scamp\n    decision: sign\n",
    );
    let parts = shards("ef-merge-shards", &net, &data);
    let (a, b) = (s(&parts[0].0), s(&parts[1].0));
    json(&scamp(&["eval", "--json", "--merge", a, b]));
    let edit_part = |part: usize, name: &str, edit: &dyn Fn(&mut Value)| {
        let mut v = parts[part].1.clone();
        edit(&mut v);
        let p = temp_dir("ef-merge-edit").join(name);
        std::fs::write(&p, v.to_string()).unwrap();
        p
    };
    let edited = |name: &str, edit: &dyn Fn(&mut Value)| edit_part(0, name, edit);
    let wrap = edited("wrap.json", &|v| {
        v["merge"]["rows"][0]["counts"]["ideal_correct"] = Value::from(u64::MAX)
    });
    refused(
        &["eval", "--merge", s(&wrap), b],
        "wrap.json: depth 0: ideal_correct 18446744073709551615 is over images",
    );
    let big = edited("big.json", &|v| {
        v["merge"]["rows"][0]["counts"]["ideal_correct"] = Value::from(1_000_000)
    });
    refused(
        &["eval", "--merge", s(&big), b],
        "ideal_correct 1000000 is over images",
    );
    // Two shards each consistent on their own, whose sums overflow.
    let huge = |v: &mut Value| {
        let n = 1u64 << 63;
        v["merge"]["meta"]["test_images"] = Value::from(u64::MAX);
        let wrong = |runs: u64| {
            let mut m = vec![vec![0u64; 10]; 10];
            m[0][1] = runs;
            serde_json::json!(m)
        };
        let c = &mut v["merge"]["rows"][0]["counts"];
        c["images"] = Value::from(n);
        c["ideal_correct"] = Value::from(0);
        c["noisy_correct"] = serde_json::json!([0, 0, 0]);
        c["confusion_ideal"] = wrong(n);
        let mut confusion = vec![vec![0u64; 10]; 10];
        (confusion[0][1], confusion[0][2], confusion[0][3]) = (n, n, n);
        c["confusion"] = serde_json::json!(confusion);
        c["changed"] = Value::from(0);
    };
    let (h1, h2) = (
        edit_part(0, "h1.json", &huge),
        edit_part(1, "h2.json", &huge),
    );
    refused(
        &["eval", "--merge", s(&h1), s(&h2)],
        "h2.json: the counts overflow when added to the other shards'",
    );
    for (k, n) in [(5, 3), (0, 3)] {
        let out = edited(&format!("range{k}.json"), &|v| {
            v["merge"]["shard"] = serde_json::json!([k, n])
        });
        refused(
            &["eval", "--merge", s(&out), b],
            &format!("shard {k}/{n} is out of range"),
        );
    }
    let confusion = edited("confusion.json", &|v| {
        v["merge"]["rows"][0]["counts"]["confusion"][0][0] = Value::from(7777)
    });
    let msg = refused(&["eval", "--merge", s(&confusion), b], "confusion counts");
    assert!(!msg.contains("not the same evaluation"), "{msg}");
    // Other training images, or another head file: other figures, so no merge.
    let other = tiny("ef-merge-other", 200);
    let train = other.join("train-images-idx3-ubyte");
    let mut pixels = std::fs::read(&train).unwrap();
    pixels[16 + 100] = 255;
    std::fs::write(&train, pixels).unwrap();
    let foreign = shards("ef-merge-foreign", &net, &other);
    refused(
        &["eval", "--merge", a, s(&foreign[1].0)],
        "not the same evaluation",
    );
}

#[test]
fn html_paths_are_checked_before_the_work_and_never_over_an_input() {
    let data = tiny("ef-html", 200);
    let d = s(&data);
    refused_within(
        &["eval", "--dataset", d, "--html", "/proc/nonexistent/r.html"],
        "cannot write",
        Duration::from_secs(5),
    );
    let net = network(
        "ef-html-net",
        "name: x\nstages:\n  - spec: identity.yaml\n    program: nothing.scamp\n    decision: sign\n",
    );
    let spec = net.parent().unwrap().join("identity.yaml");
    let before = std::fs::read(&spec).unwrap();
    refused(
        &["eval", s(&net), "--dataset", d, "--html", s(&spec)],
        "it is an input of this command",
    );
    assert_eq!(std::fs::read(&spec).unwrap(), before);
    let parts = shards("ef-html-shards", &net, &data);
    let shard = std::fs::read(&parts[0].0).unwrap();
    refused(
        &[
            "eval",
            "--merge",
            s(&parts[0].0),
            s(&parts[1].0),
            "--html",
            s(&parts[0].0),
        ],
        "it is an input of this command",
    );
    assert_eq!(std::fs::read(&parts[0].0).unwrap(), shard);
}

#[test]
fn the_minor_cases_say_what_is_wrong() {
    let data = tiny("ef-minor", 10);
    let d = s(&data);
    refused(
        &[
            "eval",
            "--dataset",
            d,
            "--shard",
            "1/100000",
            "--depths",
            "2",
        ],
        "shard 1/100000 holds no frame",
    );
    refused(
        &["eval", "--dataset", d, "--depths", "99"],
        "--depths 99: the network's stages are written at depth",
    );
    let o = scamp(&["eval", "programs/analognet2_net.yaml", "--merge", "a.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
}
