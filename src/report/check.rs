//! The report page of `scamp check --html`: the program, the proof (with the kernels
//! as grids), the error table, and per image the input, the exact convolution, the
//! simulated result and a heat map of the error, side by side.

use super::html::{escape, page, png_data_uri};
use super::planes::block_means;

use image::{GrayImage, Luma, RgbImage};
use ndarray::Array2;
use scamp::Spec;
use scamp::{
    first_run, heat_colour, named_frame, per_target, CheckTarget as Target, ErrorFigures, Groups,
    KernelErrors, ProfileTestbed,
};
use scamp::{GreyImage, RunError, N};

/// Side of the pictures embedded in the report (block means of 2x2 PEs).
pub const REPORT_SIDE: usize = 128;

/// One kernel as the report lists it.
pub struct KernelSummary {
    /// Output register.
    pub out: String,
    /// Approximation depth d.
    pub depth: u32,
    /// Integer weights of the approximated kernel (divide by 2^d), rows north to south:
    /// one plane, or one per input of a kernel of several.
    pub approximated: scamp::ShownWeights,
    /// Summed absolute weight error of the approximation.
    pub approx_error: f64,
    /// Measured figures (absent when the proof failed and nothing was run).
    pub errors: Option<KernelErrors>,
}

/// One kernel's pictures for one image.
pub struct KernelPanel {
    /// Output register.
    pub out: String,
    /// Exact convolution of the specified kernel.
    pub exact: Array2<f64>,
    /// What the simulated array read out.
    pub result: Array2<f64>,
}

/// The pictures of one test image.
pub struct ImagePanels {
    /// Image name (file stem).
    pub name: String,
    /// Each input as its register holds it (`p - 128`), with the register's name.
    pub inputs: Vec<(String, Array2<f64>)>,
    /// One panel per kernel.
    pub kernels: Vec<KernelPanel>,
}

/// Everything the report shows.
pub struct CheckPage<'a> {
    /// Spec name.
    pub name: &'a str,
    /// What was checked (program or spec path).
    pub target: &'a str,
    /// The program text.
    pub program: &'a str,
    /// Macro instructions.
    pub instructions: usize,
    /// Bus instructions.
    pub cycles: u64,
    /// Time at the array clock, microseconds.
    pub time_us: f64,
    /// The energy model's figure for one frame, microjoules.
    pub energy_uj_per_frame: f64,
    /// Noise profile name.
    pub noise: &'a str,
    /// Run seeds measured.
    pub runs: u32,
    /// Whether the proof succeeded.
    pub verified: bool,
    /// Why the proof failed: the kernels as text grids and the differing offsets.
    pub mismatch: &'a [String],
    /// Border excluded from the figures, pixels.
    pub border: usize,
    /// The kernels.
    pub kernels: Vec<KernelSummary>,
    /// Pictures per image (empty when the proof failed).
    pub images: Vec<ImagePanels>,
    /// PE-register pairs clipped while the program ran (none when nothing was measured).
    pub saturated: Option<u64>,
}

/// Per image, every input plane and each target's exact and simulated results (run 0
/// of `testbed`); a bank's groups each run from the inputs, their panels in target order.
pub fn image_panels(
    groups: &Groups,
    spec: &Spec,
    targets: &[Target],
    images: &[(String, GreyImage)],
    testbed: &ProfileTestbed,
) -> Result<Vec<ImagePanels>, RunError> {
    let wiring = spec.wiring();
    images
        .iter()
        .enumerate()
        .map(|(j, (name, _))| {
            let frame = named_frame(images, j, wiring);
            let mut captured = None;
            let kernels = per_target(groups, targets, |program, ts| {
                let run = first_run(program, wiring, ts, &frame, testbed)?;
                captured.get_or_insert(run.inputs);
                Ok::<_, RunError>(
                    ts.iter()
                        .zip(run.kernels)
                        .map(|(t, (exact, result))| KernelPanel {
                            out: t.out.to_string(),
                            exact,
                            result,
                        })
                        .collect(),
                )
            })?;
            let mut planes = captured.unwrap_or_default().into_iter();
            let inputs = spec
                .inputs()
                .iter()
                .map(|r| {
                    let plane = planes.next().unwrap_or_else(|| Array2::zeros((N, N)));
                    (r.to_string(), plane)
                })
                .collect();
            Ok(ImagePanels {
                name: name.clone(),
                inputs,
                kernels,
            })
        })
        .collect()
}

fn small(values: &Array2<f64>) -> Vec<f64> {
    let f: Vec<f32> = values.iter().map(|&v| v as f32).collect();
    block_means(&f, REPORT_SIDE)
}

/// A plane in the array's units as a grey picture: -128 black, 127 white.
fn grey_uri(values: &Array2<f64>) -> Result<String, image::ImageError> {
    let s = REPORT_SIDE as u32;
    let m = small(values);
    let img = GrayImage::from_fn(s, s, |x, y| {
        let v = m[(y * s + x) as usize];
        Luma([(v.round() + 128.0).clamp(0.0, 255.0) as u8])
    });
    png_data_uri(&image::DynamicImage::ImageLuma8(img))
}

/// `|result - exact|` inside the measured area as a heat map over 0..=`max`.
fn heat_uri(p: &KernelPanel, border: usize, max: f64) -> Result<String, image::ImageError> {
    let err = abs_error(p, border);
    let s = REPORT_SIDE as u32;
    let m = small(&err);
    let img = RgbImage::from_fn(s, s, |x, y| {
        heat_colour(m[(y * s + x) as usize] / max.max(f64::EPSILON))
    });
    png_data_uri(&image::DynamicImage::ImageRgb8(img))
}

/// Percentile of the absolute errors at which a heat map's colour scale ends.
const SCALE_PERCENTILE: f64 = 99.5;

/// The absolute errors inside the measured area.
fn inner_errors(p: &KernelPanel, border: usize) -> Vec<f64> {
    let b = border.min(N / 2);
    let mut v = Vec::with_capacity((N - 2 * b).pow(2));
    for r in b..N - b {
        for c in b..N - b {
            v.push((p.result[[r, c]] - p.exact[[r, c]]).abs());
        }
    }
    v
}

/// The `q`th percentile of `values` (reordered in place); 0 when there are none.
fn percentile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let i = (((values.len() - 1) as f64) * q / 100.0).round() as usize;
    let (_, v, _) = values.select_nth_unstable_by(i, f64::total_cmp);
    *v
}

fn abs_error(p: &KernelPanel, border: usize) -> Array2<f64> {
    Array2::from_shape_fn((N, N), |(r, c)| {
        let inside = r >= border && c >= border && r + border < N && c + border < N;
        if inside {
            (p.result[[r, c]] - p.exact[[r, c]]).abs()
        } else {
            0.0
        }
    })
}

/// A round number at least `v`, for a colour-bar end.
fn nice(v: f64) -> f64 {
    if v <= 0.0 {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|&x| x >= v)
        .unwrap_or(10.0 * p)
}

fn fmt_num(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn figure_cells(f: &ErrorFigures) -> String {
    let psnr = f.psnr.map_or("&infin;".to_string(), |p| format!("{p:.1}"));
    format!(
        "<td class=\"num\">{:.3}</td><td class=\"num\">{:.3}</td><td class=\"num\">{psnr}</td>\
         <td class=\"num\">{:+.3}</td>",
        f.rmse, f.max, f.bias
    )
}

fn kernel_grid(k: &KernelSummary) -> String {
    let planes = k.approximated.planes();
    let mut s = String::from("<figure>");
    for (z, plane) in planes.iter().enumerate() {
        // Several inputs: one grid per input plane, summed.
        let caption = match (planes.len(), z) {
            (1, _) => format!("{} = 1/2<sup>{}</sup> &times;", escape(&k.out), k.depth),
            (n, 0) => format!(
                "{} = 1/2<sup>{}</sup> &times; input 1 of {n}",
                escape(&k.out),
                k.depth
            ),
            (n, z) => format!("+ input {} of {n}", z + 1),
        };
        s.push_str(&plane_grid(plane, &caption));
    }
    s.push_str(&format!(
        "<figcaption>d = {}, approximation error {}</figcaption></figure>",
        k.depth,
        fmt_num(k.approx_error)
    ));
    s
}

/// One plane of integer weights as a table, the centre highlighted.
fn plane_grid(plane: &[Vec<i64>], caption: &str) -> String {
    let h = plane.len();
    let w = plane.first().map_or(0, Vec::len);
    let (ci, cj) = ((h.saturating_sub(1)) / 2, (w.saturating_sub(1)) / 2);
    let mut s = format!("<table class=\"kernel-grid\"><caption>{caption}</caption>");
    for (i, row) in plane.iter().enumerate() {
        s.push_str("<tr>");
        for (j, v) in row.iter().enumerate() {
            let cls = if (i, j) == (ci, cj) {
                " class=\"centre\""
            } else {
                ""
            };
            s.push_str(&format!("<td{cls}>{v}</td>"));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>");
    s
}

fn error_table(p: &CheckPage<'_>) -> String {
    let mut s = String::from(
        "<table class=\"errors\"><tr><th>out</th><th>error</th><th class=\"num\">RMSE</th>\
         <th class=\"num\">max |e|</th><th class=\"num\">PSNR dB</th><th class=\"num\">bias</th>",
    );
    if p.runs > 1 {
        s.push_str("<th class=\"num\">RMSE over runs</th>");
    }
    s.push_str("</tr>");
    for k in &p.kernels {
        let Some(e) = &k.errors else { continue };
        let rows = [
            ("approximation", &e.approx, None),
            ("analogue", &e.analogue, Some(&e.analogue_runs)),
            ("total", &e.total, Some(&e.total_runs)),
        ];
        for (i, (what, f, spread)) in rows.iter().enumerate() {
            let out = if i == 0 {
                format!("<td rowspan=\"3\"><b>{}</b></td>", escape(&k.out))
            } else {
                String::new()
            };
            s.push_str(&format!("<tr>{out}<td>{what}</td>{}", figure_cells(f)));
            if p.runs > 1 {
                let cell = spread.map_or(String::new(), |r| {
                    format!("{:.3} &plusmn; {:.3}", r.rmse.mean, r.rmse.std)
                });
                s.push_str(&format!("<td class=\"num\">{cell}</td>"));
            }
            s.push_str("</tr>");
        }
    }
    s.push_str("</table>");
    if let Some(n) = p.saturated {
        s.push_str(&format!(
            "\n<p class=\"note\">{n} PE-register pairs clipped while the program ran (every \
             register, all images, every group of a bank, run 1).</p>"
        ));
    }
    s
}

fn image_section(p: &CheckPage<'_>) -> Result<String, image::ImageError> {
    let mut s = String::new();
    let nk = p.kernels.len();
    for k in 0..nk {
        let mut errors: Vec<f64> = p
            .images
            .iter()
            .filter_map(|im| im.kernels.get(k))
            .flat_map(|kp| inner_errors(kp, p.border))
            .collect();
        let max = nice(percentile(&mut errors, SCALE_PERCENTILE));
        let out = p.kernels[k].out.as_str();
        s.push_str(&format!(
            "<h3>Kernel {}</h3>\n<div class=\"scale\"><span class=\"scale-label\">|error|</span>\
             <span class=\"scale-bar\"><span class=\"heat-scale\" style=\"background: \
             linear-gradient(to right, {})\"></span><span class=\"ticks\"><span>0</span>\
             <span>{}</span><span>&ge; {}</span></span></span><span class=\"note\">the scale \
             ends at the {}th percentile of the kernel's errors, so a few outliers do not \
             darken the rest</span></div>\n<div class=\"panels\"{}>\n",
            escape(out),
            heat_gradient(),
            fmt_num(max / 2.0),
            fmt_num(max),
            SCALE_PERCENTILE,
            panel_columns(p)
        ));
        for im in &p.images {
            let Some(kp) = im.kernels.get(k) else {
                continue;
            };
            let rmse = {
                let e = inner_errors(kp, p.border);
                (e.iter().map(|v| v * v).sum::<f64>() / e.len().max(1) as f64).sqrt()
            };
            s.push_str(&format!(
                "<div class=\"label\">{}<small>total RMSE {:.3}</small></div>\n",
                escape(&im.name),
                rmse
            ));
            let mut figures = input_figures(&im.inputs)?;
            figures.extend([
                (grey_uri(&kp.exact)?, "exact convolution".to_string()),
                (
                    grey_uri(&kp.result)?,
                    format!("simulated ({})", escape(p.noise)),
                ),
                (
                    heat_uri(kp, p.border, max)?,
                    "|simulated &minus; exact|".to_string(),
                ),
            ]);
            for (uri, caption) in figures {
                s.push_str(&format!(
                    "<figure><img alt=\"{} {}: {caption}\" src=\"{uri}\"><figcaption>{caption}\
                     </figcaption></figure>\n",
                    escape(&im.name),
                    escape(out)
                ));
            }
        }
        s.push_str("</div>\n");
    }
    Ok(s)
}

/// The pictures of the inputs: `input (p - 128)` for one, `input A (p - 128)`, one per
/// input register, for several.
fn input_figures(
    inputs: &[(String, Array2<f64>)],
) -> Result<Vec<(String, String)>, image::ImageError> {
    inputs
        .iter()
        .map(|(reg, plane)| {
            let caption = if inputs.len() == 1 {
                "input (p &minus; 128)".to_string()
            } else {
                format!("input {} (p &minus; 128)", escape(reg))
            };
            Ok((grey_uri(plane)?, caption))
        })
        .collect()
}

/// The grid's columns where several inputs add pictures to a row (the stylesheet's
/// four pictures fit one input).
fn panel_columns(p: &CheckPage<'_>) -> String {
    match p.images.first().map_or(1, |im| im.inputs.len()) {
        0 | 1 => String::new(),
        n => format!(
            " style=\"grid-template-columns: 9rem repeat({}, minmax(0, 200px))\"",
            n + 3
        ),
    }
}

fn heat_gradient() -> String {
    let stops: Vec<String> = (0..=8)
        .map(|i| {
            let c = heat_colour(f64::from(i) / 8.0);
            format!("rgb({},{},{})", c[0], c[1], c[2])
        })
        .collect();
    stops.join(", ")
}

/// Renders the report page.
pub fn check_page(p: &CheckPage<'_>) -> Result<String, image::ImageError> {
    let badge = if p.verified {
        "<span class=\"badge ok\">proof: exact</span>"
    } else {
        "<span class=\"badge bad\">proof: FAILED</span>"
    };
    let mut body = format!(
        "<header><h1><span class=\"tool\">scamp check</span> {name} {badge}</h1>\n\
         <dl class=\"facts\"><dt>target</dt><dd><code>{target}</code></dd>\
         <dt>program</dt><dd>{ins} instructions, {cyc} bus instructions (cycles), {us:.1} &micro;s at 10 MHz</dd>\
         <dt>energy</dt><dd>{uj:.2} &micro;J per frame (a model from published power figures, not a measurement)</dd>\
         <dt>noise</dt><dd>{noise}, {runs} run(s)</dd>\
         <dt>measured on</dt><dd>{measured}</dd></dl></header>\n",
        name = escape(p.name),
        target = escape(p.target),
        ins = p.instructions,
        cyc = p.cycles,
        us = p.time_us,
        uj = p.energy_uj_per_frame,
        noise = escape(p.noise),
        runs = p.runs,
        measured = if p.verified {
            format!(
                "{} image(s); a border of {} px is left out (values there depend on the \
                 array edge)",
                p.images.len(),
                p.border
            )
        } else {
            "nothing: a program that fails its proof is not run".to_string()
        },
    );
    body.push_str("<h2>Proof</h2>\n");
    if p.verified {
        body.push_str(
            "<p>Symbolic execution of every bus instruction shows each output register holds \
             exactly the approximated kernel below (weights divided by 2<sup>d</sup>; the \
             highlighted cell is the PE itself, north is up).</p>\n",
        );
    } else {
        body.push_str(&format!(
            "<p>The program does <b>not</b> compute the kernels. Expected against computed \
             (north up, the PE itself outlined), the offsets that differ marked:</p>\n{}\n\
             <p>The kernels the program should compute:</p>\n",
            mismatch_html(p.mismatch)
        ));
    }
    body.push_str("<div class=\"kernels\">");
    for k in &p.kernels {
        body.push_str(&kernel_grid(k));
    }
    body.push_str("</div>\n");
    if p.verified {
        body.push_str(
            "<h2>Error</h2>\n<p class=\"note\">approximation: exact convolution of the \
             approximated kernel against the specified one; analogue: simulated against the \
             approximated kernel; total: simulated against the specified kernel. PSNR with \
             peak 255.</p>\n",
        );
        body.push_str(&error_table(p));
        body.push_str(&format!(
            "\n<h2>Images</h2>\n<p class=\"note\">Each picture is {side}x{side} (block means \
             of 2x2 PEs); grey pictures span -128 (black) to 127 (white), heat maps 0 to \
             the kernel's scale. Run 1 of the noise profile.</p>\n",
            side = REPORT_SIDE
        ));
        body.push_str(&image_section(p)?);
    }
    body.push_str(&format!(
        "<h2>Program</h2>\n<pre class=\"program\">{}</pre>\n",
        escape(p.program)
    ));
    Ok(page(&format!("scamp check: {}", p.name), &body, ""))
}

/// A failed proof of one register: the expected and the computed kernel over the same
/// offsets, exact coefficients as text, and which offsets differ.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ProofGrid {
    /// The output register.
    pub register: String,
    /// First and last row offset (north to south).
    pub rows: (i32, i32),
    /// First and last column offset (west to east).
    pub cols: (i32, i32),
    /// Expected coefficients, row by row.
    pub expected: Vec<Vec<String>>,
    /// Computed coefficients, row by row.
    pub computed: Vec<Vec<String>>,
    /// Lines of the explanation that are not grid rows (offset list, constant term).
    pub notes: Vec<String>,
}

impl ProofGrid {
    /// Whether the cell at (`i`, `j`) of the grids differs.
    pub fn differs(&self, i: usize, j: usize) -> bool {
        self.expected.get(i).and_then(|r| r.get(j)) != self.computed.get(i).and_then(|r| r.get(j))
    }
}

/// `-1..2` as (-1, 2).
fn range_of(s: &str) -> Option<(i32, i32)> {
    let (a, b) = s.trim().split_once("..")?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// The cells of a `[ a  b  c ]` grid row.
fn cells(s: &str) -> Vec<String> {
    s.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Reads the explanation of a failed proof (the lines of
/// a failed proof's `mismatch`) back into grids; lines that belong to no
/// register (a symbolic execution that stopped) are returned apart.
pub fn proof_grids(lines: &[String]) -> (Vec<ProofGrid>, Vec<String>) {
    let mut grids: Vec<ProofGrid> = Vec::new();
    let mut other = Vec::new();
    for line in lines {
        if let Some(rest) = line.strip_prefix("register ") {
            let parsed = rest.split_once(": kernel rows ").and_then(|(reg, tail)| {
                let (rows, tail) = tail.split_once(" (north to south), columns ")?;
                let cols = tail.split_once(' ').map_or(tail, |(c, _)| c);
                Some((reg.to_string(), range_of(rows)?, range_of(cols)?))
            });
            match parsed {
                Some((register, rows, cols)) => grids.push(ProofGrid {
                    register,
                    rows,
                    cols,
                    expected: Vec::new(),
                    computed: Vec::new(),
                    notes: Vec::new(),
                }),
                None => other.push(line.clone()),
            }
            continue;
        }
        let Some(g) = grids.last_mut() else {
            other.push(line.clone());
            continue;
        };
        let t = line.trim();
        if t.starts_with('[') {
            if let Some((a, b)) = t.split_once("]") {
                g.expected.push(cells(a));
                g.computed.push(cells(b));
                continue;
            }
        }
        if !(t.starts_with("expected") && t.ends_with("computed")) {
            g.notes.push(t.to_string());
        }
    }
    (grids, other)
}

/// One grid as a table: the PE's own cell outlined, differing cells marked.
fn grid_table(g: &ProofGrid, computed: bool) -> String {
    let rows = if computed { &g.computed } else { &g.expected };
    let mut s = format!(
        "<table class=\"kernel-grid proof\"><caption>{} {}</caption>",
        escape(&g.register),
        if computed { "computed" } else { "expected" }
    );
    for (i, row) in rows.iter().enumerate() {
        s.push_str("<tr>");
        for (j, v) in row.iter().enumerate() {
            let mut cls = Vec::new();
            if (g.rows.0 + i as i32, g.cols.0 + j as i32) == (0, 0) {
                cls.push("centre");
            }
            if g.differs(i, j) {
                cls.push("diff");
            }
            s.push_str(&format!(
                "<td class=\"{}\" title=\"offset (row {:+}, col {:+})\">{}</td>",
                cls.join(" "),
                g.rows.0 + i as i32,
                g.cols.0 + j as i32,
                escape(v)
            ));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>");
    s
}

/// A failed proof drawn as expected and computed kernel grids per register.
fn mismatch_html(lines: &[String]) -> String {
    let (grids, other) = proof_grids(lines);
    let mut s = String::new();
    for g in &grids {
        s.push_str(&format!(
            "<div class=\"kernels proof-grids\"><figure>{}</figure><figure>{}</figure></div>\n",
            grid_table(g, false),
            grid_table(g, true)
        ));
        if !g.notes.is_empty() {
            s.push_str(&format!(
                "<pre class=\"mismatch\">{}</pre>\n",
                escape(&g.notes.join("\n"))
            ));
        }
    }
    if !other.is_empty() {
        s.push_str(&format!(
            "<pre class=\"mismatch\">{}</pre>\n",
            escape(&other.join("\n"))
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_proof_reads_back_into_grids_with_the_differing_cells() {
        use scamp::{isa::parse_program, isa::Device, Bank};
        // Computes in(r, c-1) where the kernel wants (in(r, c+1) + in(r, c)) / 2.
        let p = parse_program("movx(B, A, west)", Device::default()).unwrap();
        let spec = scamp::parse_spec(
            "name: t\ninput: A\nregisters: [A, B]\nkernels:\n  - out: B\n    scale: 1/2\n    weights: [[0, 1, 1]]\n",
        )
        .unwrap();
        let proof = Bank::with_kernels(p, "", spec).unwrap().prove().unwrap();
        assert!(!proof.verified);
        let lines = proof.mismatch;
        let (grids, other) = proof_grids(&lines);
        assert!(other.is_empty(), "{other:?}");
        assert_eq!(grids.len(), 1);
        let g = &grids[0];
        assert_eq!(
            (g.register.as_str(), g.rows, g.cols),
            ("B", (0, 0), (-1, 1))
        );
        assert_eq!(g.expected, vec![vec!["0", "1/2", "1/2"]]);
        assert_eq!(g.computed, vec![vec!["1", "0", "0"]]);
        assert!(g.differs(0, 0) && g.differs(0, 1) && g.differs(0, 2));
        let html = mismatch_html(&lines);
        assert_eq!(html.matches("class=\"centre diff\"").count(), 2, "{html}");
        assert!(html.contains("B expected") && html.contains("B computed"));
    }

    #[test]
    fn percentile_picks_the_ranked_value() {
        let mut v: Vec<f64> = (0..=200).rev().map(f64::from).collect();
        assert_eq!(percentile(&mut v, 99.5), 199.0);
        assert_eq!(percentile(&mut v, 50.0), 100.0);
        assert_eq!(percentile(&mut [], 99.5), 0.0);
    }

    #[test]
    fn nice_rounds_up_to_a_round_number() {
        assert_eq!(nice(0.0), 1.0);
        assert_eq!(nice(3.2), 5.0);
        assert!((nice(0.07) - 0.1).abs() < 1e-12);
        assert_eq!(nice(20.0), 20.0);
    }
}
