//! The compile-time input model is the bundled images' moments: the constants in
//! `verify::predict` are those of `images/`, and with them the predicted analogue error
//! of every bundled spec's program is within 25 % of what `check` measures.

use scamp::verify::check::{input_values, load_images};
use scamp::verify::predict::{InputStats, IMAGE_BORDER, IMAGE_LAGS, IMAGE_MEAN, IMAGE_REACH};
use std::path::Path;

#[test]
fn bundled_image_moments_are_the_images() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("images");
    let images = load_images(&dir).expect("images");
    let xs: Vec<_> = images.iter().map(|(_, g)| input_values(g)).collect();
    let s = InputStats::of_images(&xs, IMAGE_BORDER, IMAGE_REACH);
    let r = IMAGE_REACH as i32;
    let mut table = String::new();
    let mut lags = Vec::new();
    for dr in 0..=r {
        for dc in -r..=r {
            if dr == 0 && dc < 0 {
                continue;
            }
            let m = s.lags[&(dr, dc)];
            table += &format!("    ({dr}, {dc}, {m:.4}),\n");
            lags.push((dr, dc, m));
        }
    }
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-4 * b.abs().max(1.0);
    let same = close(s.mean, IMAGE_MEAN)
        && lags.len() == IMAGE_LAGS.len()
        && lags
            .iter()
            .zip(IMAGE_LAGS)
            .all(|(a, b)| a.0 == b.0 && a.1 == b.1 && close(a.2, b.2));
    assert!(same, "IMAGE_MEAN: {:.6}\nIMAGE_LAGS:\n{table}", s.mean);
}
