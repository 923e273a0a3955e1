//! The tiling claim of docs/eval.md: with the gap the stages' reach asks for, an image
//! gives the same binary maps whatever its neighbours on the frame hold, under noise
//! too (same chip, same run seed, same slot), for the one- and the two-stage network.

use crate::eval::frames::{run_frame, FrameNoise};
use crate::eval::network::load as load_network;
use crate::eval::tiling::Tiling;
use crate::eval::{BuildOptions, Source, Split};
use crate::sim::noise::Profile;

/// 64 pseudo-random 28x28 images (bright, busy content right up to the tile edges).
fn busy(n: usize) -> Split {
    let mut x: u64 = 7;
    let pixels = (0..n * 784)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 56) as u8
        })
        .collect();
    Split {
        rows: 28,
        cols: 28,
        pixels,
        labels: vec![0; n],
    }
}

#[test]
fn an_image_reads_out_the_same_whatever_its_neighbours() {
    let profile = Profile::builtin("scamp5").unwrap();
    for net in ["analognet2_net.yaml", "deep_net.yaml"] {
        let net = load_network(&Source::Bundled, net).unwrap();
        let opts = BuildOptions {
            depth: None,
            compile: crate::cain::CompileOptions::default().with_work(2000),
        };
        let chip = crate::eval::build_stage(&net, &opts).unwrap();
        let tiling = Tiling::with_margin(28, 28, chip.reach, chip.margin).unwrap();
        assert_eq!(tiling.per_frame(), 64);
        let full = busy(64);
        let noise = FrameNoise {
            profile: &profile,
            chip_seed: 3,
            run_seed: 11,
        };
        let together = run_frame(&chip, &tiling, &full, 0, noise).unwrap();
        for slot in [0, 9, 27, 63] {
            // The same image alone at the same slot: every other tile black.
            let mut alone = full.clone();
            for (i, px) in alone.pixels.chunks_mut(784).enumerate() {
                if i != slot {
                    px.fill(0);
                }
            }
            let single = run_frame(&chip, &tiling, &alone, 0, noise).unwrap();
            assert_eq!(single[slot], together[slot], "slot {slot}");
        }
        // With the tiles pushed together (no gap), neighbours do change the maps.
        let tight = Tiling { gap: 0, ..tiling };
        let together = run_frame(&chip, &tight, &full, 0, noise).unwrap();
        let mut alone = full.clone();
        for (i, px) in alone.pixels.chunks_mut(784).enumerate() {
            if i != 9 {
                px.fill(0);
            }
        }
        let single = run_frame(&chip, &tight, &alone, 0, noise).unwrap();
        assert_ne!(single[9], together[9]);
    }
}

#[test]
fn forty_nine_fashion_images_fit_a_frame_four_pixels_apart() {
    let t = Tiling::new(28, 28, 4).unwrap();
    assert_eq!((t.per_frame(), t.frames(10_000)), (49, 205));
    assert!(Tiling::new(300, 28, 0).is_none());
}

#[test]
fn an_image_reads_out_the_same_at_every_slot_under_ideal() {
    // Exact arithmetic: an image's maps depend neither on its neighbours nor on where it
    // sits, the corners included (the margin keeps every path inside the array), for
    // the bundled networks and the three-layer `programs/fashion3/`, whose depthwise
    // stages side by side need the gap of one stacked path (3), not of all seven (7).
    let ideal = Profile::builtin("ideal").unwrap();
    let fashion3 = concat!(env!("CARGO_MANIFEST_DIR"), "/../../programs/fashion3");
    let nets = [
        (Source::Bundled, "analognet2_net.yaml"),
        (Source::Bundled, "deep_net.yaml"),
        (Source::Dir(std::path::Path::new(fashion3)), "net.yaml"),
    ];
    for (source, name) in nets {
        let net = load_network(&source, name).unwrap();
        let opts = BuildOptions {
            depth: None,
            compile: crate::cain::CompileOptions::default().with_work(2000),
        };
        let chip = crate::eval::build_stage(&net, &opts).unwrap();
        let tiling = Tiling::with_margin(28, 28, chip.reach, chip.margin).unwrap();
        let full = busy(64);
        let noise = FrameNoise {
            profile: &ideal,
            chip_seed: 0,
            run_seed: 0,
        };
        let together = run_frame(&chip, &tiling, &full, 0, noise).unwrap();
        let per_frame = tiling.per_frame();
        for (image, maps) in together.iter().enumerate() {
            // Image `image` alone, at the opposite slot.
            let at = per_frame - 1 - image;
            let mut alone = Split {
                pixels: vec![0; full.pixels.len()],
                ..full.clone()
            };
            alone.pixels[at * 784..(at + 1) * 784]
                .copy_from_slice(&full.pixels[image * 784..(image + 1) * 784]);
            let single = run_frame(&chip, &tiling, &alone, 0, noise).unwrap();
            assert_eq!(&single[at], maps, "{name}: image {image} at {at}");
        }
        if name == "net.yaml" {
            assert_eq!((chip.reach, per_frame), (3, 64), "margin {}", chip.margin);
        }
    }
}
