//! Property tests of `scamp eval --merge`'s arithmetic: sums are exact or refused
//! (never wrapped), shards of consistent counts merge into exactly their sum, and any
//! edit that breaks a count's consistency or the shard numbering is refused.

use crate::eval::counts::Counts;
use crate::eval::report::{DepthCounts, Mergeable, Meta};
use crate::eval::shard::{merge as merge_shards, MergeError, ShardFault};
use proptest::prelude::*;

const SEEDS: usize = 2;

/// Counts of `images` images whose labels and predictions come from `picks` (label,
/// ideal prediction, and one noisy prediction per seed), with `flips` of `bits`.
fn counts_of(picks: &[(u8, u8, [u8; SEEDS])], flips: u64, bits: u64) -> Counts {
    let mut c = Counts::new(SEEDS);
    for &(label, ideal, noisy) in picks {
        c.add_ideal(label, ideal);
        for (s, &n) in noisy.iter().enumerate() {
            c.add_noisy(s, (label, ideal, n), &[], 0);
        }
    }
    c.flipped_bits = flips.min(bits);
    c.flipped_per_map = vec![c.flipped_bits];
    c.bits = bits;
    c
}

fn pick() -> impl Strategy<Value = (u8, u8, [u8; SEEDS])> {
    (0u8..10, 0u8..10, [0u8..10, 0u8..10])
}

fn meta(test_images: u64) -> Meta {
    Meta {
        network: "n".into(),
        dataset: "d".into(),
        noise: "scamp5".into(),
        train_noise: "ideal".into(),
        chip_seeds: (1..=SEEDS as u64).collect(),
        seed: 0,
        train_images: 10,
        test_images,
        stages: 1,
        maps: 1,
        features: 4,
        clock_hz: 1e7,
    }
}

fn shard(k: u32, n: u32, counts: Counts, test_images: u64) -> (String, Mergeable) {
    let row = DepthCounts {
        depth: 0,
        instructions: 1,
        cycles: 1,
        images_per_frame: 1,
        gap: 0,
        program: "p".into(),
        counts,
        noisy_seconds: 0.5,
        saturation: Vec::new(),
    };
    let m = Mergeable {
        fingerprint: "f".into(),
        shard: Some([k, n]),
        main_depth: 0,
        rows: vec![row],
        meta: meta(test_images),
    };
    (format!("{k}.json"), m)
}

proptest! {
    #[test]
    fn checked_sums_are_exact_or_refused(a in prop::array::uniform8(any::<u64>()), b in prop::array::uniform8(any::<u64>())) {
        let mut x = Counts::new(1);
        let mut y = Counts::new(1);
        (x.images, x.ideal_correct, x.noisy_correct[0], x.flipped_bits, x.bits, x.changed, x.confusion[0][0], x.confusion_ideal[9][9]) = a.into();
        (y.images, y.ideal_correct, y.noisy_correct[0], y.flipped_bits, y.bits, y.changed, y.confusion[0][0], y.confusion_ideal[9][9]) = b.into();
        let wide: Vec<u128> = a.iter().zip(&b).map(|(p, q)| u128::from(*p) + u128::from(*q)).collect();
        match x.checked_sum(&y) {
            Some(s) => {
                let got = [s.images, s.ideal_correct, s.noisy_correct[0], s.flipped_bits, s.bits, s.changed, s.confusion[0][0], s.confusion_ideal[9][9]];
                prop_assert!(got.iter().zip(&wide).all(|(g, w)| u128::from(*g) == *w));
            }
            None => prop_assert!(wide.iter().any(|&w| w > u128::from(u64::MAX))),
        }
    }

    #[test]
    fn consistent_shards_merge_into_their_sum(
        parts in prop::collection::vec((prop::collection::vec(pick(), 1..30), 0u64..1000, 0u64..1000), 1..6),
    ) {
        let n = parts.len() as u32;
        let counts: Vec<Counts> = parts.iter().map(|(p, f, b)| counts_of(p, *f, *b)).collect();
        let total: u64 = counts.iter().map(|c| c.images).sum();
        let mut whole = Counts::new(SEEDS);
        for c in &counts {
            prop_assert_eq!(c.inconsistency(SEEDS), None);
            whole.add(c);
        }
        // Given in reverse order: the merge does not depend on it.
        let shards: Vec<_> = counts.into_iter().enumerate().rev()
            .map(|(i, c)| shard(i as u32 + 1, n, c, total)).collect();
        let merged = merge_shards(&shards).expect("consistent shards merge");
        prop_assert_eq!(&merged.rows[0].counts, &whole);
        prop_assert_eq!(merged.shard, None);
    }

    #[test]
    fn broken_counts_or_numbering_are_refused(
        picks in prop::collection::vec(pick(), 2..30),
        field in 0usize..7,
        by in 1u64..u64::MAX,
    ) {
        let c = counts_of(&picks, 3, 10);
        let images = c.images;
        let mut bad = c.clone();
        match field {
            0 => bad.ideal_correct = bad.images.saturating_add(by),
            1 => bad.noisy_correct[1] = bad.images.saturating_add(by),
            2 => bad.confusion[3][4] = bad.confusion[3][4].wrapping_add(by),
            3 => bad.confusion_ideal[0][0] = bad.confusion_ideal[0][0].wrapping_add(by),
            4 => bad.flipped_bits = bad.bits.saturating_add(by),
            5 => bad.changed = bad.images.saturating_mul(SEEDS as u64).saturating_add(by),
            _ => bad.images = bad.images.wrapping_add(by),
        }
        prop_assert!(bad.inconsistency(SEEDS).is_some(), "field {field}");
        let good = shard(2, 2, c.clone(), 2 * images);
        let refused = merge_shards(&[shard(1, 2, bad, 2 * images), good.clone()]).unwrap_err();
        let is_counts = matches!(refused, MergeError::Counts { .. });
        prop_assert!(is_counts, "{refused}");
        for (k, n) in [(0, 2), (3, 2), (by as u32 % 5 + 3, 2)] {
            let out = merge_shards(&[shard(k, n, c.clone(), 2 * images), good.clone()]).unwrap_err();
            prop_assert!(out.to_string().contains("out of range"), "{out}");
            let typed = matches!(out, MergeError::Shards { cause: ShardFault::OutOfRange { .. }, .. });
            prop_assert!(typed, "{out:?}");
        }
    }
}
