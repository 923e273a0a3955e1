//! The playground of `scamp serve` in a real browser: headless Chromium driven through
//! the DevTools protocol (a small client over a websocket). The test types a program,
//! sees the error at its line, fixes it, steps, clicks a PE, runs to a line, grades an
//! exercise, and opens shared links; screenshots at 1280x800 go to the temp folder.
//! Without a browser the test says loudly that it was skipped; with `CI=true` it fails.

mod common;
mod serve_support;

use serde_json::{json, Value};
use serve_support::Serve;
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use tungstenite::{Message, WebSocket};

/// The browser binary, or `None` (after saying so, or failing under CI).
fn browser() -> Option<PathBuf> {
    common::browser::find("the playground test", "the playground was not driven")
}

/// Headless Chromium with one page, spoken to over the DevTools protocol.
struct Browser {
    child: Child,
    ws: WebSocket<TcpStream>,
    session: String,
    next_id: u64,
    _profile: PathBuf,
}

impl Browser {
    fn launch(bin: &Path, profile: PathBuf) -> Browser {
        let mut child = common::browser::command(bin, &profile, (1280, 800))
            .arg("--remote-debugging-port=0")
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("chromium printed its DevTools address")
                .expect("a line");
            if let Some(u) = line.split("DevTools listening on ").nth(1) {
                break u.trim().to_string();
            }
        };
        // Keep draining stderr so the browser never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        let host = url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .expect("host:port")
            .to_string();
        let stream = TcpStream::connect(&host).expect("connect to DevTools");
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .expect("timeout");
        let (ws, _) = tungstenite::client(url.as_str(), stream).expect("websocket handshake");
        let mut b = Browser {
            child,
            ws,
            session: String::new(),
            next_id: 0,
            _profile: profile,
        };
        let targets = b.call("Target.getTargets", json!({}));
        let page = targets["targetInfos"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["type"] == "page"))
            .map(|t| t["targetId"].clone())
            .expect("a page target");
        let attached = b.call(
            "Target.attachToTarget",
            json!({"targetId": page, "flatten": true}),
        );
        b.session = attached["sessionId"].as_str().expect("session").to_string();
        b.call("Page.enable", json!({}));
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": false}),
        );
        b
    }

    /// Sends one command (to the page once attached) and waits for its answer.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        self.ws
            .send(Message::text(msg.to_string()))
            .expect("send to chromium");
        loop {
            let m = self.ws.read().expect("an answer from chromium");
            let Message::Text(t) = m else { continue };
            let v: Value = serde_json::from_str(t.as_str()).expect("JSON from chromium");
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {}", v["error"]);
                return v["result"].clone();
            }
        }
    }

    /// Evaluates `expr` in the page (promises awaited) and returns its value.
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(
            r.get("exceptionDetails").is_none(),
            "{expr}: {}",
            r["exceptionDetails"]
        );
        r["result"]["value"].clone()
    }

    /// Waits until `cond` is true in the page and no request is pending.
    fn wait(&mut self, cond: &str) {
        let expr = format!(
            "(() => {{ const b = document.getElementById('busy'); \
             return (!b || b.dataset.busy === '0') && !!({cond}); }})()"
        );
        let start = Instant::now();
        while self.eval(&expr) != json!(true) {
            assert!(
                start.elapsed() < Duration::from_secs(90),
                "the page never reached `{cond}`; status: {}",
                self.eval("document.getElementById('status').textContent")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn goto(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
        self.wait("document.readyState === 'complete' && document.getElementById('where')");
    }

    fn text(&mut self, selector: &str) -> String {
        self.eval(&format!(
            "(document.querySelector({selector:?}) || {{}}).textContent || ''"
        ))
        .as_str()
        .unwrap_or_default()
        .to_string()
    }

    /// Clicks the centre of the element `selector` (or a point inside it) as a mouse does.
    fn click_at(&mut self, selector: &str, dx: Option<(f64, f64)>) {
        let r = self.eval(&format!(
            "(() => {{ const r = document.querySelector({selector:?}).getBoundingClientRect(); \
             return [r.left, r.top, r.width, r.height]; }})()"
        ));
        let f = |i: usize| r[i].as_f64().expect("a rectangle");
        let (x, y) = match dx {
            Some((x, y)) => (f(0) + x, f(1) + y),
            None => (f(0) + f(2) / 2.0, f(1) + f(3) / 2.0),
        };
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }

    fn click(&mut self, selector: &str) {
        self.click_at(selector, None);
    }

    /// Replaces the editor's text by typing `text` into it.
    fn type_program(&mut self, text: &str) {
        self.eval(
            "(() => { const e = document.getElementById('editor'); e.focus(); e.select(); })()",
        );
        self.call("Input.insertText", json!({"text": text}));
    }

    fn screenshot(&mut self, path: &Path) {
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}));
        use base64::Engine;
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().expect("PNG data"))
            .expect("base64");
        std::fs::write(path, png).expect("write screenshot");
        let img = image::open(path).expect("a PNG").to_rgb8();
        assert_eq!(img.dimensions(), (1280, 800));
    }

    /// The panes sit side by side inside the window: nothing wider than the window,
    /// the editor left of the planes, both views inside the right pane.
    fn assert_layout(&mut self) {
        let ok = self.eval(
            "(() => { const r = (id) => document.getElementById(id).getBoundingClientRect(); \
             const l = r('left'), g = r('right'), v0 = r('view-0'), v1 = r('view-1'), \
             ed = r('editor-wrap'), c = r('controls'); \
             return [document.documentElement.scrollWidth <= 1280, \
                     l.right <= g.left + 1, v0.right <= v1.left, v1.right <= g.right, \
                     ed.height > 150, c.bottom <= 800, l.bottom <= 800, g.bottom <= 800]; })()",
        );
        assert_eq!(
            ok,
            json!([true, true, true, true, true, true, true, true]),
            "layout at 1280x800"
        );
    }

    /// `reg` of the selected PE in the ideal run, as the PE table shows it.
    fn pe_value(&mut self, reg: &str) -> String {
        self.text(&format!("#pe-table tr[data-reg='{reg}'] td:nth-child(2)"))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn the_playground_edits_runs_steps_picks_grades_and_shares() {
    let Some(bin) = browser() else { return };
    let dir = common::temp_dir("playground");
    let server = Serve::start();
    let mut b = Browser::launch(&bin, dir.join("profile"));
    b.goto(&server.url());
    b.wait("document.getElementById('where').textContent.includes('step 2 of 2')");
    typo_then_fix(&mut b, &dir);
    run_and_step(&mut b);
    click_a_pe(&mut b, &dir);
    // Run to line 3: stops before the macro there.
    b.eval("document.getElementById('bp-line').value = '3'");
    b.click("#run-to");
    b.wait("document.getElementById('where').textContent.includes('step 1 of 2')");
    grade_an_exercise(&mut b, &dir);
    open_shared_links(&mut b, &server.url(), &dir);
    eprintln!("playground screenshots in {}", dir.display());
}

/// A typo on line 3 shows at its line and column as we type; fixed, the error goes and
/// the inputs follow the `// given:` line.
fn typo_then_fix(b: &mut Browser, dir: &Path) {
    // A typo on line 3: the error sits at its line and column as we type.
    b.type_program("// given: A = col\nmovx(B, A, east);\nmovx(C, A, wst);\n");
    b.wait("!document.getElementById('error-bubble').hidden");
    assert_eq!(
        b.eval("document.getElementById('error-bubble').dataset.line"),
        "3"
    );
    assert_eq!(
        b.eval("document.getElementById('error-bubble').dataset.col"),
        "12"
    );
    assert!(
        b.text("#error-bubble").contains("wst"),
        "{}",
        b.text("#error-bubble")
    );
    assert_eq!(b.text("#gutter .err"), "3");
    assert_eq!(b.text("#highlight .tok-err"), "wst");
    b.screenshot(&dir.join("1-error.png"));
    b.assert_layout();

    // Fixed: the error goes, the inputs follow the `// given:` line.
    b.type_program("// given: A = col\nmovx(B, A, east);\nmovx(C, A, west);\n");
    b.wait("document.getElementById('error-bubble').hidden");
    assert_eq!(b.eval("document.getElementById('inputs').value"), "A = col");
}

/// Runs the fixed program, then steps back and forth, each step a macro with its
/// values, arrows and read and written registers.
fn run_and_step(b: &mut Browser) {
    // Run, then step back and forth: each step is a macro.
    b.click("#run");
    b.wait("document.getElementById('where').textContent.includes('step 2 of 2')");
    assert_eq!(b.pe_value("C"), "127");
    // A new program opens on the register it wrote last.
    assert_eq!(
        b.eval("document.querySelector('#regs button.on').dataset.reg"),
        json!("C")
    );
    b.click("#back");
    b.wait("document.getElementById('where').textContent.includes('step 1 of 2')");
    assert_eq!(b.pe_value("B"), "129");
    assert_eq!(b.pe_value("C"), "0");
    // movx(B, A, east) pushes A west: one arrow out to the west, NEWS and B written.
    assert_eq!(
        b.eval("[...document.querySelectorAll('#view-0 line.arrow')].map(l => l.dataset.dir + ':' + l.dataset.inward)"),
        json!(["west:false"])
    );
    assert_eq!(
        b.eval("[...document.querySelectorAll('#regs button.written')].map(x => x.dataset.reg)"),
        json!(["B", "NEWS"])
    );
    assert_eq!(
        b.eval("[...document.querySelectorAll('#regs button.read')].map(x => x.dataset.reg)"),
        json!(["A", "NEWS"])
    );
    b.click("#step");
    b.wait("document.getElementById('where').textContent.includes('step 2 of 2')");
    assert_eq!(b.pe_value("C"), "127");
}

/// A click at zoom 8 picks the PE under the pointer, its neighbour's values beside it.
fn click_a_pe(b: &mut Browser, dir: &Path) {
    // Click a PE at zoom 8: the view centres on (128, 128); one PE is 8 screen pixels,
    // so 3 PEs right and 2 up of the centre is (126, 131).
    b.eval("(() => { const z = document.getElementById('zoom'); z.value = '8'; z.dispatchEvent(new Event('change')); })()");
    b.click_at(
        "#view-0 .viewport",
        Some((1.0 + 184.0 + 3.0 * 8.0, 1.0 + 184.0 - 2.0 * 8.0)),
    );
    b.wait("document.getElementById('pe-name').textContent.includes('(126, 131)')");
    assert_eq!(b.pe_value("A"), "131");
    assert_eq!(b.pe_value("B"), "132");
    assert_eq!(
        b.text("#pe-table tr[data-reg='A'] td:nth-child(5) .ideal"),
        "132",
        "the east neighbour's A"
    );
    let noisy = b.text("#pe-table tr[data-reg='A'] td:nth-child(5) .noisy");
    let noisy: f64 = noisy
        .parse()
        .unwrap_or_else(|_| panic!("a noisy value: {noisy}"));
    assert!(
        (noisy - 132.0).abs() < 20.0,
        "the east neighbour's noisy A: {noisy}"
    );
    b.screenshot(&dir.join("2-zoomed-pe.png"));
    b.assert_layout();
}

/// An exercise: the starter fails its proof with grids, the reference solution passes
/// with the figures `scamp check` prints.
fn grade_an_exercise(b: &mut Browser, dir: &Path) {
    // An exercise: the starter fails with grids, the reference solution passes with
    // the figures `scamp check` prints.
    b.eval("(() => { const e = document.getElementById('exercise'); e.value = '02-gradient'; e.dispatchEvent(new Event('change')); })()");
    b.wait("!document.getElementById('grade-panel').hidden && document.getElementById('editor').value.includes('Exercise 2')");
    assert_eq!(
        b.eval("document.getElementById('inputs').value"),
        "A = image"
    );
    b.click("#grade");
    b.wait("document.querySelector('#grade-result .verdict')");
    assert!(b.text("#grade-result .verdict").contains("proof failed"));
    let diffs = b.eval("document.querySelectorAll('#grade-result table.kgrid td.diff').length");
    assert!(diffs.as_u64().unwrap() >= 2, "{diffs}");
    b.screenshot(&dir.join("3-failed-proof.png"));
    b.assert_layout();
    let root = env!("CARGO_MANIFEST_DIR");
    let solution =
        std::fs::read_to_string(format!("{root}/tests/exercises/02-gradient.scamp")).unwrap();
    b.type_program(&solution);
    b.wait("document.getElementById('error-bubble').hidden");
    b.click("#grade");
    b.wait("document.querySelector('#grade-result .verdict.ok')");
    let cli = common::json(&common::scamp(&[
        "check",
        "tests/exercises/02-gradient.scamp",
        "--kernel",
        "docs/tutorial/exercises/02-gradient/spec.yaml",
        "--json",
    ]));
    let total = cli["kernels"][0]["total"]["rmse"].as_f64().unwrap();
    let shown =
        b.eval("[...document.querySelectorAll('#grade-result td.rmse')].map(t => t.textContent)");
    assert_eq!(shown[2], json!(format!("{total:.3}")), "{shown}");
    let visible = b.eval(
        "(() => { const r = document.getElementById('grade-result').getBoundingClientRect(); \
         const t = document.getElementById('regs').getBoundingClientRect(); \
         return r.bottom <= 800 && t.top >= 44; })()",
    );
    assert_eq!(
        visible,
        json!(true),
        "the grade and the planes fit in the window"
    );
    b.screenshot(&dir.join("4-graded.png"));
    b.assert_layout();
}

/// Shared links (`?program=`) to the server at `url`: a typo opens at its error, a
/// correct program opens run with its planes drawn.
fn open_shared_links(b: &mut Browser, url: &str, dir: &Path) {
    // A shared link with a misspelt macro opens with the error at its line.
    let typo = "// given: A = col\nmovx(B, A, east);\nmvox(C, A, west);\n";
    b.goto(&format!("{url}?program={}", encode(typo)));
    b.wait("!document.getElementById('error-bubble').hidden");
    assert_eq!(b.eval("document.getElementById('editor').value"), typo);
    assert_eq!(
        b.eval("document.getElementById('error-bubble').dataset.line"),
        "3"
    );
    assert!(b.text("#error-bubble").contains("mvox"));
    assert_eq!(b.text("#status"), "error at line 3, column 1");
    b.screenshot(&dir.join("5-shared-typo.png"));

    // A shared correct program opens run, its planes drawn.
    let good = "get_image(A, B);\nmovx(C, A, east);\nsub(D, C, A);\n";
    b.goto(&format!("{url}?program={}", encode(good)));
    b.wait("document.getElementById('where').textContent.includes('step 3 of 3')");
    b.eval("(() => { document.querySelector(\"#regs button[data-reg='A']\").click(); })()");
    let spread = b.eval(
        "(() => { const c = document.querySelector('#view-1 canvas'); \
         const d = c.getContext('2d').getImageData(0, 0, 256, 256).data; \
         let lo = 255, hi = 0; for (let i = 0; i < d.length; i += 4) { lo = Math.min(lo, d[i]); hi = Math.max(hi, d[i]); } \
         return hi - lo; })()",
    );
    assert!(
        spread.as_u64().unwrap() > 100,
        "the noisy plane of A is a picture: {spread}"
    );
    b.screenshot(&dir.join("6-shared-run.png"));
    b.assert_layout();
}
