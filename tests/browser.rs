//! The HTML pages in a real browser: headless Chromium renders the step-through page of
//! a bundled program and a check report; the tests read the DOM after the page's script
//! ran and look at screenshots. Without a browser the tests say loudly that they were
//! skipped; with `CI=true` they fail instead.

mod common;

use common::{scamp, stderr, temp_dir};
use std::path::{Path, PathBuf};

/// The browser binary, or `None` (after saying so, or failing under CI).
fn browser() -> Option<PathBuf> {
    common::browser::find("the browser tests", "the HTML pages were not rendered")
}

/// Runs headless Chromium on `url` with extra `args` (`--dump-dom`, `--screenshot=..`)
/// and returns what it printed on stdout.
fn chromium(bin: &Path, url: &str, args: &[String], profile: &Path) -> String {
    let out = common::browser::command(bin, profile, (1400, 1100))
        .args(args)
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn file_url(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// The text between the first `open` and the next `close` after it.
fn between<'a>(s: &'a str, open: &str, close: &str) -> &'a str {
    let start = s
        .find(open)
        .unwrap_or_else(|| panic!("`{open}` in the DOM"))
        + open.len();
    let end = s[start..].find(close).map_or(s.len(), |e| start + e);
    &s[start..end]
}

fn attr(tag: &str, name: &str) -> String {
    between(tag, &format!("{name}=\""), "\"").to_string()
}

/// The page refers to nothing outside itself: no addresses, no external scripts,
/// styles or pictures.
fn assert_self_contained(html: &str) {
    for bad in ["http://", "https://", "<link", "@import", "url("] {
        assert!(!html.contains(bad), "the page contains `{bad}`");
    }
    for (i, _) in html.match_indices(" src=\"") {
        assert!(
            html[i + 6..].starts_with("data:"),
            "a src that is not a data: URI at byte {i}"
        );
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Standard deviation of the screenshot's luminance, and its number of distinct colours.
fn screenshot_spread(png: &Path) -> (f64, usize) {
    let img = image::open(png).expect("a PNG screenshot").to_rgb8();
    let lum: Vec<f64> = img
        .pixels()
        .map(|p| 0.299 * f64::from(p[0]) + 0.587 * f64::from(p[1]) + 0.114 * f64::from(p[2]))
        .collect();
    let mean = lum.iter().sum::<f64>() / lum.len() as f64;
    let var = lum.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / lum.len() as f64;
    let mut colours: Vec<[u8; 3]> = img.pixels().map(|p| p.0).collect();
    colours.sort_unstable();
    colours.dedup();
    (var.sqrt(), colours.len())
}

#[test]
fn trace_page_renders_every_line_draws_planes_and_steps() {
    let Some(bin) = browser() else { return };
    let dir = temp_dir("browser-trace");
    let page = dir.join("analognet2.html");
    let program = "programs/analognet2.scamp";
    let o = scamp(&[
        "trace",
        program,
        "--html",
        page.to_str().unwrap(),
        "--input",
        "A",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).expect("the page was written");
    assert_self_contained(&html);

    let source = std::fs::read_to_string(program).unwrap();
    let steps: u64 = {
        let o = scamp(&["run", program, "--noise", "ideal", "--json"]);
        common::json(&o)["cycles"].as_u64().unwrap()
    };
    let url = file_url(&page);
    let first = chromium(
        &bin,
        &format!("{url}#step=0"),
        &["--dump-dom".into()],
        &dir.join("p0"),
    );
    let last = chromium(
        &bin,
        &format!("{url}#step={steps}"),
        &["--dump-dom".into()],
        &dir.join("p1"),
    );

    // Every program line is rendered in the listing (not only in the embedded data).
    let listing = between(&first, "<ol id=\"source\">", "</ol>");
    for line in source.lines().filter(|l| !l.trim().is_empty()) {
        let cell = format!("<code>{}</code>", escape(line));
        assert!(listing.contains(&cell), "line `{line}` not in the listing");
    }

    // The script drew every analogue plane of three rows (ideal, noisy, difference) and
    // at the last step they show pictures, not uniform planes.
    for (dom, step) in [(&first, 0), (&last, steps)] {
        let status = between(dom, "<p id=\"status\"", ">");
        assert_eq!(attr(status, "data-ready"), "1", "{status}");
        assert_eq!(attr(status, "data-step"), step.to_string(), "{status}");
        assert_eq!(attr(status, "data-drawn"), (7 * 3).to_string(), "{status}");
    }
    let nonblank: usize = attr(between(&last, "<p id=\"status\"", ">"), "data-nonblank")
        .parse()
        .unwrap();
    assert!(nonblank >= 7 * 2, "only {nonblank} planes show a picture");

    // Stepping changes what is shown: the position line, the highlighted source line
    // and the PE table.
    let where0 = between(&first, "<span id=\"where\">", "</span>");
    let where1 = between(&last, "<span id=\"where\">", "</span>");
    assert!(where0.starts_with("step 0 /"), "{where0}");
    assert!(where1.starts_with(&format!("step {steps} /")), "{where1}");
    assert!(where1.contains(&format!("cycle {steps}")), "{where1}");
    let last_stmt = source.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    assert!(
        between(&last, "<li class=\"current\">", "</li>").contains(&escape(last_stmt)),
        "the last statement is not highlighted at the last step"
    );
    assert_ne!(
        between(&first, "<table id=\"pe-table\">", "</table>"),
        between(&last, "<table id=\"pe-table\">", "</table>")
    );

    // A screenshot is a picture, not an empty page.
    let shot = dir.join("trace.png");
    chromium(
        &bin,
        &format!("{url}#step={steps}"),
        &[format!("--screenshot={}", shot.display())],
        &dir.join("p2"),
    );
    let (spread, colours) = screenshot_spread(&shot);
    assert!(
        spread > 20.0 && colours > 1000,
        "blank screenshot: std {spread}, {colours} colours"
    );
}

#[test]
fn check_report_renders_proof_table_and_pictures() {
    let Some(bin) = browser() else { return };
    let dir = temp_dir("browser-check");
    let page = dir.join("gauss.html");
    let o = scamp(&[
        "check",
        "programs/gauss3x3_hand.scamp",
        "--kernel",
        "programs/gauss3x3.yaml",
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    let dom = chromium(
        &bin,
        &file_url(&page),
        &["--dump-dom".into()],
        &dir.join("p0"),
    );
    assert!(dom.contains("proof: exact"));
    let images = std::fs::read_dir("images")
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "png"))
        })
        .count();
    let pictures = dom.matches("<img ").count();
    assert_eq!(
        pictures,
        images * 4,
        "input, exact, simulated, error per image"
    );
    assert!(dom.contains("<td>total</td>"));
    let shot = dir.join("check.png");
    chromium(
        &bin,
        &file_url(&page),
        &[format!("--screenshot={}", shot.display())],
        &dir.join("p1"),
    );
    let (spread, colours) = screenshot_spread(&shot);
    assert!(
        spread > 20.0 && colours > 1000,
        "blank screenshot: std {spread}, {colours} colours"
    );

    // A failed proof shows the kernels that differ, and no pictures.
    let wrong = dir.join("wrong.html");
    let o = scamp(&[
        "check",
        "programs/gauss3x3_wrong.scamp",
        "--kernel",
        "programs/gauss3x3.yaml",
        "--html",
        wrong.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let dom = chromium(
        &bin,
        &file_url(&wrong),
        &["--dump-dom".into()],
        &dir.join("p2"),
    );
    assert!(dom.contains("proof: FAILED"));
    assert!(dom.contains("expected") && dom.contains("computed"));
    assert_eq!(dom.matches("<img ").count(), 0);
}
