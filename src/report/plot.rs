//! Inline SVG charts for the `--html` page: accuracy (ideal, and noisy with its spread
//! over the chips) against the approximation depth and the instructions it costs, and
//! the flip rate of each binary map. Plain SVG text: nothing is fetched.

use super::html::escape;
use scamp::eval::DepthRow;
use std::fmt::Write;

const W: f64 = 520.0;
const H: f64 = 260.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 52.0;

/// The lower and upper ends of a y axis holding `values` (fractions), padded and
/// rounded out to whole percent.
fn y_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((1.0f64, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let pad = ((hi - lo) * 0.15).max(0.01);
    (
        ((lo - pad).max(0.0) * 100.0).floor() / 100.0,
        ((hi + pad).min(1.0) * 100.0).ceil() / 100.0,
    )
}

/// Accuracy against depth: ideal (blue) and the noisy mean (red) with a bar from the
/// worst to the best chip; each depth's instructions under its tick.
pub(crate) fn accuracy(rows: &[DepthRow], noise: &str) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let (lo, hi) = y_range(
        rows.iter()
            .flat_map(|r| [r.accuracy.ideal, r.accuracy.noisy.min, r.accuracy.noisy.max]),
    );
    let span = (hi - lo).max(1e-9);
    let x = |i: usize| LEFT + (W - LEFT - RIGHT) * (i as f64 + 0.5) / rows.len() as f64;
    let y = |v: f64| TOP + (H - TOP - BOTTOM) * (hi - v) / span;
    let mut s = format!(
        "<svg class=\"plot\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" \
         aria-label=\"accuracy against depth\">"
    );
    // Writing into a String cannot fail.
    let _ = axes(&mut s, lo, hi, &y);
    for (i, r) in rows.iter().enumerate() {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">depth {}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" class=\"small\">{} instr.</text>",
            x(i),
            H - BOTTOM + 18.0,
            r.depth,
            x(i),
            H - BOTTOM + 34.0,
            r.instructions
        );
        let n = &r.accuracy.noisy;
        let _ = write!(
            s,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1:.1}\" y2=\"{2:.1}\" stroke=\"#c0392b\" stroke-width=\"2\"/>",
            x(i),
            y(n.min),
            y(n.max)
        );
    }
    for (colour, value) in [
        (
            "#2463b8",
            Box::new(|r: &DepthRow| r.accuracy.ideal) as Box<dyn Fn(&DepthRow) -> f64>,
        ),
        ("#c0392b", Box::new(|r: &DepthRow| r.accuracy.noisy.mean)),
    ] {
        let points: Vec<String> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| format!("{:.1},{:.1}", x(i), y(value(r))))
            .collect();
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>",
            points.join(" ")
        );
        for p in &points {
            let (px, py) = p.split_once(',').unwrap_or(("0", "0"));
            let _ = write!(
                s,
                "<circle cx=\"{px}\" cy=\"{py}\" r=\"4\" fill=\"{colour}\"/>"
            );
        }
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#2463b8\">ideal</text>\
         <text x=\"{:.1}\" y=\"{:.1}\" fill=\"#c0392b\">{} (mean; bar: worst to best chip)</text></svg>",
        LEFT + 8.0,
        TOP + 12.0,
        LEFT + 60.0,
        TOP + 12.0,
        escape(noise)
    );
    s
}

/// The y axis (percent, 5 ticks) and the x axis line.
fn axes(s: &mut String, lo: f64, hi: f64, y: &dyn Fn(f64) -> f64) -> std::fmt::Result {
    for k in 0..=4 {
        let v = lo + (hi - lo) * f64::from(k) / 4.0;
        let (right, at, label_x) = (W - RIGHT, y(v), LEFT - 6.0);
        write!(
            s,
            "<line x1=\"{LEFT}\" x2=\"{right:.1}\" y1=\"{at:.1}\" y2=\"{at:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{label_x:.1}\" y=\"{:.1}\" text-anchor=\"end\">{:.1} %</text>",
            at + 4.0,
            100.0 * v
        )?;
    }
    write!(
        s,
        "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{1:.1}\" y2=\"{1:.1}\" stroke=\"#333\"/>",
        W - RIGHT,
        H - BOTTOM
    )
}

/// One bar per binary map: the fraction of its bits the noise flipped.
pub(crate) fn flips(rates: &[f64]) -> String {
    if rates.is_empty() {
        return String::new();
    }
    let hi = rates.iter().copied().fold(0.0f64, f64::max).max(1e-6) * 1.15;
    let slot = (W - LEFT - RIGHT) / rates.len() as f64;
    let y = |v: f64| TOP + (H - TOP - BOTTOM) * (hi - v) / hi;
    let mut s = format!(
        "<svg class=\"plot\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" \
         aria-label=\"flip rate per map\">"
    );
    let _ = axes(&mut s, 0.0, hi, &y);
    for (m, &r) in rates.iter().enumerate() {
        let x = LEFT + slot * m as f64 + slot * 0.2;
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#8e44ad\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">map {m}</text>",
            y(r),
            slot * 0.6,
            (H - BOTTOM - y(r)).max(0.0),
            x + slot * 0.3,
            H - BOTTOM + 18.0
        );
    }
    s.push_str("</svg>");
    s
}
