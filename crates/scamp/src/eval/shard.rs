//! Sharding: shard K of N evaluates the K-th share of the test split's frames (whole
//! frames, so every image sits in the same tile, with the same noise, as in the whole
//! run), and merging adds the shards' counts into exactly the whole run's counts.

use super::counts::Inconsistency;
use super::report::Mergeable;
use std::ops::Range;

/// Largest shard report read by `--merge` (a report is a few kilobytes).
pub(crate) const MAX_REPORT_BYTES: u64 = 16 << 20;

/// Shard `index` (1-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based index.
    pub(crate) index: u32,
    /// Number of shards.
    pub(crate) count: u32,
}

/// A shard that is not `K/N` with 1 <= K <= N.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--shard {given}: expected K/N with 1 <= K <= N (e.g. 2/8)")]
pub struct BadShard {
    /// The text given.
    pub(crate) given: String,
}

impl Shard {
    /// Parses `K/N` with 1 <= K <= N.
    pub fn parse(s: &str) -> Result<Shard, BadShard> {
        let bad = || BadShard {
            given: s.to_string(),
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The frames of `frames` this shard evaluates.
    ///
    /// ```
    /// use scamp::eval::Shard;
    /// let shard = Shard::parse("2/3").unwrap();
    /// assert_eq!(shard.frames(10), 3..6);
    /// assert!(Shard::parse("4/3").is_err());
    /// ```
    pub fn frames(&self, frames: usize) -> Range<usize> {
        let at = |k: u32| (frames as u128 * u128::from(k) / u128::from(self.count)) as usize;
        at(self.index - 1)..at(self.index)
    }
}

/// Why shards could not be merged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// Nothing to merge.
    #[error("--merge needs at least one file")]
    Empty,
    /// Different evaluations.
    #[error("{file}: not the same evaluation as {first} (different network, dataset, noise, seeds or limits)")]
    Different {
        /// The file that differs.
        file: String,
        /// The first file.
        first: String,
    },
    /// A file that could not be read, or is no `scamp eval --json` report.
    #[error("{file}: {cause}")]
    Read {
        /// The file (with `:LINE:COL` where the JSON is wrong).
        file: String,
        /// What is wrong.
        cause: ReadFault,
    },
    /// Counts that no evaluation can give (a file edited or damaged).
    #[error("{file}: depth {depth}: {why}")]
    Counts {
        /// The file.
        file: String,
        /// The program depth whose counts do not add up.
        depth: u32,
        /// What does not add up.
        why: Inconsistency,
    },
    /// Shards that together count another number of images than the test split has.
    #[error("{file}: the shards count {images} images at depth {depth}, the test split has {test_images}")]
    Uncovered {
        /// The last file.
        file: String,
        /// The program depth.
        depth: u32,
        /// The images the shards count.
        images: u64,
        /// The test split's images.
        test_images: u64,
    },
    /// A shard twice, out of range, or a whole run among shards.
    #[error("{file}: {cause}")]
    Shards {
        /// The file.
        file: String,
        /// What is wrong.
        cause: ShardFault,
    },
}

/// Why a file given to merge is no shard report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadFault {
    /// The file could not be read as text.
    #[error(transparent)]
    File(#[from] crate::isa::SourceError),
    /// The text is no `scamp eval --json` report.
    #[error("not a `scamp eval --json` report: {0}")]
    NotReport(#[source] serde_json::Error),
}

/// What is wrong with a shard among the others.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShardFault {
    /// A shard of another number of shards than the first file's.
    #[error("shard {index}/{count} does not belong with {first}'s shards (of {first_count})")]
    Foreign {
        /// Its index.
        index: u32,
        /// Its number of shards.
        count: u32,
        /// The first file.
        first: String,
        /// The first file's number of shards.
        first_count: u32,
    },
    /// The same shard in two files.
    #[error("shard {index}/{count} is given twice")]
    Twice {
        /// Its index.
        index: u32,
        /// The number of shards.
        count: u32,
    },
    /// Counts that overflow when added up.
    #[error("the counts overflow when added to the other shards'")]
    Overflow,
    /// Saturation counts of other programs or stages, or that overflow.
    #[error("the saturation counts do not add up with the other shards'")]
    SaturationMismatch,
    /// Shards missing (the first few).
    #[error("shards {missing:?} of {count} are missing")]
    Missing {
        /// The missing indices, at most 8.
        missing: Vec<u32>,
        /// The number of shards.
        count: u32,
    },
    /// A report made without `--shard`.
    #[error("a whole run, not a shard (made without --shard)")]
    WholeRun,
    /// `K/N` with K not in 1..=N.
    #[error("shard {index}/{count} is out of range (1 <= K <= N)")]
    OutOfRange {
        /// Its index.
        index: u32,
        /// The number of shards.
        count: u32,
    },
}

/// Reads the reports of `scamp eval --shard K/N --json` in `files` and adds up their
/// shards (`merge`).
pub fn merge_files(files: &[std::path::PathBuf]) -> Result<Mergeable, MergeError> {
    let mut parts = Vec::new();
    for f in files {
        let text = crate::isa::source::read_text(f, MAX_REPORT_BYTES, "report").map_err(|e| {
            MergeError::Read {
                file: f.display().to_string(),
                cause: e.into(),
            }
        })?;
        let r: super::Report = serde_json::from_str(&text).map_err(|e| MergeError::Read {
            file: format!("{}:{}:{}", f.display(), e.line(), e.column()),
            cause: ReadFault::NotReport(e),
        })?;
        parts.push((f.display().to_string(), r.merge));
    }
    merge(&parts)
}

/// Adds up the shards `parts` (each with its file name); the result is the whole run's
/// counts (`shard` absent). Every shard of the same N must be there exactly once, the
/// counts of each must be those of some evaluation, and their sums those of the whole
/// test split; sums that would overflow are refused.
pub(crate) fn merge(parts: &[(String, Mergeable)]) -> Result<Mergeable, MergeError> {
    let ((first_file, first), _) = parts.split_first().ok_or(MergeError::Empty)?;
    for (file, m) in parts {
        check_counts(file, m)?;
    }
    let n = shard_of(first_file, first)?[1];
    let mut seen = std::collections::BTreeSet::new();
    let mut out = first.clone();
    out.shard = None;
    for (i, (file, m)) in parts.iter().enumerate() {
        let same_rows = m.rows.len() == first.rows.len()
            && m.rows
                .iter()
                .zip(&first.rows)
                .all(|(a, b)| a.depth == b.depth && a.program == b.program);
        if m.fingerprint != first.fingerprint
            || !same_rows
            || m.main_depth != first.main_depth
            || m.meta != first.meta
        {
            return Err(MergeError::Different {
                file: file.clone(),
                first: first_file.clone(),
            });
        }
        let shards = |cause: ShardFault| MergeError::Shards {
            file: file.clone(),
            cause,
        };
        let [k, this_n] = shard_of(file, m)?;
        if this_n != n {
            return Err(shards(ShardFault::Foreign {
                index: k,
                count: this_n,
                first: first_file.clone(),
                first_count: n,
            }));
        }
        if !seen.insert(k) {
            return Err(shards(ShardFault::Twice { index: k, count: n }));
        }
        if i > 0 {
            for (a, b) in out.rows.iter_mut().zip(&m.rows) {
                a.counts = a
                    .counts
                    .checked_sum(&b.counts)
                    .ok_or_else(|| shards(ShardFault::Overflow))?;
                a.noisy_seconds += b.noisy_seconds;
                a.saturation = super::saturation::checked_sum(&a.saturation, &b.saturation)
                    .ok_or_else(|| shards(ShardFault::SaturationMismatch))?;
            }
        }
    }
    // At most as many shards are seen as files given, so this stops soon.
    let missing: Vec<u32> = (1..=n).filter(|k| !seen.contains(k)).take(8).collect();
    let last = parts.last().map_or(first_file, |(f, _)| f);
    if !missing.is_empty() {
        return Err(MergeError::Shards {
            file: last.clone(),
            cause: ShardFault::Missing { missing, count: n },
        });
    }
    if let Some(r) = out
        .rows
        .iter()
        .find(|r| r.counts.images != out.meta.test_images)
    {
        return Err(MergeError::Uncovered {
            file: last.clone(),
            depth: r.depth,
            images: r.counts.images,
            test_images: out.meta.test_images,
        });
    }
    Ok(out)
}

/// `[K, N]` of a shard with 1 <= K <= N, or why it is none.
fn shard_of(file: &str, m: &Mergeable) -> Result<[u32; 2], MergeError> {
    let shards = |cause: ShardFault| MergeError::Shards {
        file: file.to_string(),
        cause,
    };
    match m.shard {
        None => Err(shards(ShardFault::WholeRun)),
        Some([index, count]) if index == 0 || index > count => {
            Err(shards(ShardFault::OutOfRange { index, count }))
        }
        Some(kn) => Ok(kn),
    }
}

/// Refuses a file whose counts no evaluation can give.
fn check_counts(file: &str, m: &Mergeable) -> Result<(), MergeError> {
    let seeds = m.meta.chip_seeds.len();
    for row in &m.rows {
        let why = row.counts.inconsistency(seeds).or_else(|| {
            (row.counts.images > m.meta.test_images).then_some(Inconsistency::ImagesOverSplit {
                images: row.counts.images,
                test_images: m.meta.test_images,
            })
        });
        let why = why.or_else(|| row.saturation.iter().find_map(|c| c.inconsistency()));
        let why = why.or_else(|| {
            (!(row.noisy_seconds.is_finite() && row.noisy_seconds >= 0.0)).then_some(
                Inconsistency::NoisySeconds {
                    seconds: row.noisy_seconds,
                },
            )
        });
        if let Some(why) = why {
            return Err(MergeError::Counts {
                file: file.to_string(),
                depth: row.depth,
                why,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_every_frame_once() {
        assert!(Shard::parse("0/3").is_err());
        assert!(Shard::parse("4/3").is_err());
        assert!(Shard::parse("x").is_err());
        let mut all = Vec::new();
        for k in 1..=3 {
            all.extend(Shard::parse(&format!("{k}/3")).unwrap().frames(10));
        }
        assert_eq!(all, (0..10).collect::<Vec<_>>());
        assert_eq!(Shard::parse("5/5").unwrap().frames(3), 2..3);
        assert_eq!(Shard::parse("1/5").unwrap().frames(3), 0..0);
    }
}
