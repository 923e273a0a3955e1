//! The text report of `scamp eval`: the figures of [`Report`] as the terminal shows
//! them (the HTML page, [`super::html`], shows the same tables).

use super::Report;
use std::fmt::Write;

/// A fraction as a percentage, right-aligned in 8 characters.
fn pct(x: f64) -> String {
    format!("{:6.2} %", 100.0 * x)
}

/// The whole text report: the run's settings, accuracy, the table per approximation
/// depth and the confusion matrix under noise.
pub fn text(r: &Report) -> String {
    let mut s = String::new();
    // Writing into a String cannot fail.
    let _ = summary(&mut s, r);
    let _ = depths(&mut s, r);
    let _ = confusion(&mut s, r);
    s
}

fn summary(s: &mut String, r: &Report) -> std::fmt::Result {
    writeln!(
        s,
        "network       {} ({} stage(s), {} binary map(s), {} features)",
        r.network, r.stages, r.maps, r.features
    )?;
    writeln!(s, "dataset       {} ({} test images)", r.dataset, r.images)?;
    writeln!(
        s,
        "noise         {} on chip seeds {:?}; head trained under {}",
        r.noise, r.chip_seeds, r.train_noise
    )?;
    writeln!(
        s,
        "chip          {} instructions, {} cycles, {:.1} us per frame of {} images (gap {}): \
         {:.0} frames/s, {:.0} images/s",
        r.instructions,
        r.cycles,
        r.time_us,
        r.images_per_frame,
        r.gap,
        r.frames_per_second,
        r.chip_images_per_second
    )?;
    writeln!(
        s,
        "accuracy      ideal {}  noisy {} +- {:.2} (min {}, max {})  lost {}",
        pct(r.accuracy.ideal),
        pct(r.accuracy.noisy.mean),
        100.0 * r.accuracy.noisy.std,
        pct(r.accuracy.noisy.min),
        pct(r.accuracy.noisy.max),
        pct(r.accuracy.lost)
    )?;
    writeln!(
        s,
        "flipped       {} of the binary-map bits; class changed for {} of (image, chip) pairs",
        pct(r.flipped),
        pct(r.changed)
    )?;
    writeln!(
        s,
        "simulated     {:.0} noisy test images/s",
        r.images_per_second
    )
}

fn depths(s: &mut String, r: &Report) -> std::fmt::Result {
    writeln!(
        s,
        "\n{:>5} {:>12} {:>7} {:>10} {:>10} {:>10} {:>10}",
        "depth", "instructions", "cycles", "ideal", "noisy", "lost", "flipped"
    )?;
    for d in &r.depths {
        writeln!(
            s,
            "{:>5} {:>12} {:>7} {:>10} {:>10} {:>10} {:>10}",
            d.depth,
            d.instructions,
            d.cycles,
            pct(d.accuracy.ideal),
            pct(d.accuracy.noisy.mean),
            pct(d.accuracy.lost),
            pct(d.flipped)
        )?;
    }
    Ok(())
}

fn confusion(s: &mut String, r: &Report) -> std::fmt::Result {
    writeln!(
        s,
        "\nconfusion under {} (rows: true class, columns: predicted; summed over chips)",
        r.noise
    )?;
    for row in &r.confusion {
        let cells: Vec<String> = row.iter().map(|v| format!("{v:>6}")).collect();
        writeln!(s, "{}", cells.join(""))?;
    }
    Ok(())
}
