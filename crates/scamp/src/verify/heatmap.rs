//! Error heat maps: absolute error as colour, with a colour bar and its scale printed
//! beside the image, so a figure can be read without the report.

use crate::sim::readout::PlaneFileError;
use image::{Rgb, RgbImage};
use ndarray::Array2;
use std::path::Path;

/// Colour stops from no error (black) through purple, red and yellow to the largest
/// error (white): monotone in brightness, readable in grey print.
const STOPS: [(f64, [f64; 3]); 5] = [
    (0.0, [0.0, 0.0, 0.0]),
    (0.25, [85.0, 15.0, 110.0]),
    (0.5, [190.0, 40.0, 60.0]),
    (0.75, [245.0, 160.0, 20.0]),
    (1.0, [255.0, 255.0, 235.0]),
];

/// Colour of `t` in 0..=1.
pub fn colour(t: f64) -> Rgb<u8> {
    let t = t.clamp(0.0, 1.0);
    for w in STOPS.windows(2) {
        let ((t0, c0), (t1, c1)) = (w[0], w[1]);
        if t <= t1 {
            let f = (t - t0) / (t1 - t0);
            return Rgb([0, 1, 2].map(|i| (c0[i] + f * (c1[i] - c0[i])).round() as u8));
        }
    }
    Rgb([255, 255, 235])
}

/// 3x5 glyphs for the characters a scale label needs.
fn glyph(c: char) -> [u8; 5] {
    match c {
        '0' => [7, 5, 5, 5, 7],
        '1' => [2, 6, 2, 2, 7],
        '2' => [7, 1, 7, 4, 7],
        '3' => [7, 1, 7, 1, 7],
        '4' => [5, 5, 7, 1, 1],
        '5' => [7, 4, 7, 1, 7],
        '6' => [7, 4, 7, 5, 7],
        '7' => [7, 1, 1, 1, 1],
        '8' => [7, 5, 7, 5, 7],
        '9' => [7, 5, 7, 1, 7],
        '.' => [0, 0, 0, 0, 2],
        '-' => [0, 0, 7, 0, 0],
        'e' => [0, 7, 7, 4, 7],
        _ => [0; 5],
    }
}

fn draw_text(img: &mut RgbImage, x: u32, y: u32, text: &str) {
    const SCALE: u32 = 2;
    for (i, c) in text.chars().enumerate() {
        let g = glyph(c);
        for (row, bits) in g.iter().enumerate() {
            for col in 0..3u32 {
                if bits & (4 >> col) != 0 {
                    for dy in 0..SCALE {
                        for dx in 0..SCALE {
                            let px = x + (i as u32 * 4 + col) * SCALE + dx;
                            let py = y + row as u32 * SCALE + dy;
                            if px < img.width() && py < img.height() {
                                img.put_pixel(px, py, Rgb([255, 255, 255]));
                            }
                        }
                    }
                }
            }
        }
    }
}

fn label(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if !(0.01..1000.0).contains(&v) {
        format!("{v:.1e}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Renders `|err|` as a heat map scaled to its maximum, with a colour bar labelled with
/// the maximum, half of it and 0 (in the units of the values).
pub(crate) fn render(err: &Array2<f64>) -> RgbImage {
    let (h, w) = err.dim();
    let max = err.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let bar_x = w as u32 + 8;
    let width = bar_x + 14 + 8 + 4 * 2 * 8;
    let height = h as u32;
    let mut img = RgbImage::from_pixel(width, height, Rgb([32, 32, 32]));
    for ((r, c), v) in err.indexed_iter() {
        let t = if max > 0.0 { v.abs() / max } else { 0.0 };
        img.put_pixel(c as u32, r as u32, colour(t));
    }
    for y in 0..height {
        let t = 1.0 - f64::from(y) / f64::from(height.max(2) - 1);
        for x in bar_x..bar_x + 14 {
            img.put_pixel(x, y, colour(t));
        }
    }
    let tx = bar_x + 18;
    draw_text(&mut img, tx, 1, &label(max));
    draw_text(&mut img, tx, height / 2 - 5, &label(max / 2.0));
    draw_text(&mut img, tx, height - 11, "0");
    img
}

/// Writes a heat map of `|err|` to `path`.
pub fn save(path: &Path, err: &Array2<f64>) -> Result<(), PlaneFileError> {
    render(err)
        .save(path)
        .map_err(|source| PlaneFileError::WriteImage {
            path: path.to_path_buf(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_runs_from_black_to_white() {
        assert_eq!(colour(0.0), Rgb([0, 0, 0]));
        assert_eq!(colour(1.0), Rgb([255, 255, 235]));
        let mut e = Array2::<f64>::zeros((4, 4));
        e[[1, 2]] = -3.0;
        let img = render(&e);
        assert_eq!(*img.get_pixel(2, 1), colour(1.0));
        assert_eq!(*img.get_pixel(0, 0), colour(0.0));
        assert_eq!(label(0.125), "0.125");
        assert_eq!(label(2.0), "2");
    }
}
