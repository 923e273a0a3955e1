//! The `--html` page: the confusion matrices under `ideal` and under the noise side by
//! side, the accuracy per depth, and images whose class the noise changed with their
//! binary maps ideal against noisy (flipped bits marked). Self-contained: pictures are
//! inline PNGs, the style sheet is inline, nothing is fetched.

use super::html::{escape, page, png_data_uri};
use image::{DynamicImage, Rgb, RgbImage};
use scamp::{eval::DepthRow, eval::Example, eval::Report, eval::CLASSES, eval::FASHION_NAMES};

/// Pixels per image pixel in the pictures.
const ZOOM: u32 = 4;

fn matrix(title: &str, m: &[Vec<u64>]) -> String {
    let max = m.iter().flatten().copied().max().unwrap_or(1).max(1) as f64;
    let mut s = format!(
        "<div class=\"panel\"><h3>{}</h3><table class=\"confusion\"><tr><th>true \\ predicted</th>",
        escape(title)
    );
    for k in 0..CLASSES {
        s.push_str(&format!("<th>{k}</th>"));
    }
    s.push_str("</tr>");
    for (k, row) in m.iter().enumerate() {
        s.push_str(&format!(
            "<tr><th>{k} {}</th>",
            escape(FASHION_NAMES.get(k).unwrap_or(&""))
        ));
        for (j, &v) in row.iter().enumerate() {
            let a = v as f64 / max;
            let colour = if j == k { "40,140,60" } else { "200,60,40" };
            s.push_str(&format!(
                "<td style=\"background:rgba({colour},{a:.3})\">{v}</td>"
            ));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table></div>");
    s
}

/// A grey picture of `rows x cols` values, zoomed.
fn picture(
    values: &[u8],
    rows: usize,
    cols: usize,
    colour: impl Fn(usize) -> [u8; 3],
) -> Result<String, image::ImageError> {
    let img = RgbImage::from_fn(cols as u32 * ZOOM, rows as u32 * ZOOM, |x, y| {
        let i = (y / ZOOM) as usize * cols + (x / ZOOM) as usize;
        if i < values.len() {
            Rgb(colour(i))
        } else {
            Rgb([0, 0, 0])
        }
    });
    png_data_uri(&DynamicImage::ImageRgb8(img))
}

/// One map of an image, ideal and on each chip side by side (flipped bits red where
/// the noise set them, blue where it cleared them).
fn map_row(e: &Example, m: usize, rows: usize, cols: usize) -> Result<String, image::ImageError> {
    let plane = rows * cols;
    let ib = e.ideal_bits.get(m * plane..(m + 1) * plane).unwrap_or(&[]);
    let mut s = format!(
        "<figure><img alt=\"map {m} ideal\" src=\"{}\"><figcaption>map {m} ideal</figcaption></figure>",
        picture(ib, rows, cols, |i| [255 * ib[i]; 3])?
    );
    for c in &e.chips {
        let nb = c.bits.get(m * plane..(m + 1) * plane).unwrap_or(&[]);
        let noisy = picture(nb, rows, cols, |i| match (ib.get(i), nb[i]) {
            (Some(&0), 1) => [230, 40, 40],
            (Some(&1), 0) => [40, 80, 230],
            (_, b) => [255 * b; 3],
        })?;
        s.push_str(&format!(
            "<figure><img alt=\"map {m} chip {}\" src=\"{noisy}\"><figcaption>chip {}</figcaption></figure>",
            c.chip_seed, c.chip_seed
        ));
    }
    Ok(s)
}

fn example(
    e: &Example,
    rows: usize,
    cols: usize,
    maps: usize,
) -> Result<String, image::ImageError> {
    let name = |k: u8| FASHION_NAMES.get(usize::from(k)).copied().unwrap_or("");
    let chips: Vec<String> = e
        .chips
        .iter()
        .map(|c| format!("chip {} says {} {}", c.chip_seed, c.class, name(c.class)))
        .collect();
    let mut s = format!(
        "<div class=\"example\"><p>test image {} (true {} {}): ideal says {} {}; {}</p><img alt=\"image\" src=\"{}\">",
        e.index,
        e.label,
        name(e.label),
        e.ideal,
        name(e.ideal),
        escape(&chips.join(", ")),
        picture(&e.pixels, rows, cols, |i| [e.pixels[i]; 3])?
    );
    for m in 0..maps {
        s.push_str(&format!(
            "<div class=\"maprow\">{}</div>",
            map_row(e, m, rows, cols)?
        ));
    }
    s.push_str("</div>");
    Ok(s)
}

/// The page for `r` with `examples` (images of `rows x cols`).
pub fn page_of(
    r: &Report,
    examples: &[Example],
    rows: usize,
    cols: usize,
) -> Result<String, image::ImageError> {
    let pct = |x: f64| format!("{:.2} %", 100.0 * x);
    let mut body = format!(
        "<style>.maprow{{display:flex;gap:6px;flex-wrap:wrap}}.maprow figure{{margin:2px}}\
         .plot{{max-width:100%;height:auto}}.plot text{{font:12px sans-serif}}\
         .plot .small{{font-size:10px;fill:#555}}</style><h1>scamp eval: {}</h1><p>{} test images, noise <code>{}</code> on chip seeds {:?}, head trained under <code>{}</code>. \
         Accuracy ideal {}, noisy {} &plusmn; {} (min {}, max {}), lost {}; {} of the binary-map bits flipped; \
         the noise changed the class of {} of the (image, chip) pairs. Energy {:.2} &micro;J per frame, {:.2} &micro;J per image \
         (one scene per frame; a model from published power figures, not a measurement).</p>",
        escape(&r.network),
        r.images,
        escape(&r.noise),
        r.chip_seeds,
        escape(&r.train_noise),
        pct(r.accuracy.ideal),
        pct(r.accuracy.noisy.mean),
        pct(r.accuracy.noisy.std),
        pct(r.accuracy.noisy.min),
        pct(r.accuracy.noisy.max),
        pct(r.accuracy.lost),
        pct(r.flipped),
        pct(r.changed),
        r.energy_uj_per_frame,
        r.energy_uj_per_image,
    );
    let row = |tag: &str, cells: &[&str]| {
        let cells: String = cells
            .iter()
            .map(|c| format!("<{tag}>{c}</{tag}>"))
            .collect();
        format!("<tr>{cells}</tr>")
    };
    body.push_str("<h2>Accuracy per approximation depth</h2>");
    body.push_str(&super::plot::accuracy(&r.depths, &r.noise));
    body.push_str("<table>");
    body.push_str(&row("th", &DepthRow::HEADS));
    for d in &r.depths {
        body.push_str(&row("td", &d.cells().each_ref().map(String::as_str)));
    }
    body.push_str("</table><h2>Confusion matrices</h2><div class=\"matrices\">");
    body.push_str(&matrix("ideal", &r.confusion_ideal));
    body.push_str(&matrix(
        &format!("{} (summed over chip seeds)", r.noise),
        &r.confusion,
    ));
    body.push_str("</div><h2>Flip rate per binary map</h2>");
    body.push_str(&super::plot::flips(&r.flipped_per_map));
    body.push_str("<h2>Images whose class the noise changed</h2><p>Each image once, its maps ideal and on every chip side by side (red: set by the noise, blue: cleared).</p>");
    if examples.is_empty() {
        body.push_str("<p>None: the noise changed no class.</p>");
    }
    for e in examples {
        body.push_str(&example(e, rows, cols, r.maps)?);
    }
    Ok(page(&format!("scamp eval: {}", r.network), &body, ""))
}
