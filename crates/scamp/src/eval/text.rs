//! The text report of `scamp eval`: the figures of [`Report`] as the terminal shows
//! them (the HTML page, [`super::html`], shows the same tables).

use super::report::DepthRow;
use super::Report;
use crate::verify::saturation::RegisterSaturation;
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
    let _ = depths(&mut s, &r.depths);
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
        "chip          {} instructions, {} cycles, {:.1} us per frame: {:.0} frames/s, \
         {:.0} images/s at one scene per frame",
        r.instructions, r.cycles, r.time_us, r.frames_per_second, r.chip_images_per_second
    )?;
    writeln!(
        s,
        "simulator     {} images tiled per frame (gap {}), {:.0} noisy test images/s",
        r.images_per_frame, r.gap, r.images_per_second
    )?;
    writeln!(
        s,
        "energy        {:.2} uJ per frame, {:.2} uJ per image (a model from published power figures, not a measurement)",
        r.energy_uj_per_frame, r.energy_uj_per_image
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
    if let Some(u) = &r.uncertainty {
        writeln!(
            s,
            "uncertainty   noisy {:.1} % ({:.1}-{:.1} over the saturation range; {:.1}-{:.1} \
             over {} of {} ensemble profiles)",
            100.0 * r.accuracy.noisy.mean,
            100.0 * u.saturation_range[0],
            100.0 * u.saturation_range[1],
            100.0 * u.accuracy_range[0],
            100.0 * u.accuracy_range[1],
            u.accepted,
            u.members
        )?;
    }
    saturation(s, r)?;
    writeln!(
        s,
        "flipped       {} of the binary-map bits; class changed for {} of (image, chip) pairs",
        pct(r.flipped),
        pct(r.changed)
    )
}

/// The table per approximation depth, right-aligned under its heads.
fn depths(s: &mut String, rows: &[DepthRow]) -> std::fmt::Result {
    let line = |s: &mut String, c: &[&str]| {
        writeln!(
            s,
            "{:>5} {:>12} {:>7} {:>10} {:>10} {:>10} {:>10}",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6]
        )
    };
    s.push('\n');
    line(s, &DepthRow::HEADS)?;
    for d in rows {
        line(s, &d.cells().each_ref().map(String::as_str))?;
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

/// Per stage, the shares of PE-writes past the knee and past the limit of the
/// registers that have any (first test chip), or that there are none.
fn saturation(s: &mut String, r: &Report) -> std::fmt::Result {
    let list = |share: &dyn Fn(&RegisterSaturation) -> f64| {
        let mut out = String::new();
        let mut stage = 0;
        for c in r.saturation_by_register.iter().filter(|c| share(c) > 0.0) {
            if c.stage != stage {
                stage = c.stage;
                let sep = if out.is_empty() { "" } else { "; " };
                out.push_str(&format!("{sep}stage {stage} "));
            } else {
                out.push_str(", ");
            }
            out.push_str(&format!("{} {:.2} %", c.register, 100.0 * share(c)));
        }
        if out.is_empty() {
            "none".to_string()
        } else {
            out
        }
    };
    if r.saturation_by_register.is_empty() {
        return Ok(());
    }
    write!(
        s,
        "saturation    PE-writes past the knee (chip 1): {}",
        list(&|c| c.knee_share)
    )?;
    if r.saturation_by_register
        .iter()
        .any(|c| c.limit_share.is_some())
    {
        write!(
            s,
            ". Past the limit: {}",
            list(&|c| c.limit_share.unwrap_or(0.0))
        )?;
    }
    writeln!(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::counts::{Accuracy, Spread};

    #[test]
    fn the_depth_table_lines_up_under_its_heads() {
        let row = DepthRow {
            depth: 2,
            instructions: 52,
            cycles: 77,
            images_per_frame: 64,
            accuracy: Accuracy {
                ideal: 0.7666,
                noisy: Spread::of(vec![0.7646]),
                lost: 0.002,
            },
            flipped: 0.0073,
        };
        let mut s = String::new();
        depths(&mut s, &[row]).expect("writes");
        assert_eq!(
            s,
            "\ndepth instructions  cycles      ideal      noisy       lost    flipped\n    \
             2           52      77    76.66 %    76.46 %     0.20 %     0.73 %\n"
        );
    }
}
