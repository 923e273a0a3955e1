//! Sharding: shard K of N evaluates the K-th share of the test split's frames (whole
//! frames, so every image sits in the same tile, with the same noise, as in the whole
//! run), and merging adds the shards' counts into exactly the whole run's counts.

use super::report::Mergeable;
use std::ops::Range;

/// Shard `index` (1-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based index.
    pub index: u32,
    /// Number of shards.
    pub count: u32,
}

impl Shard {
    /// Parses `K/N` with 1 <= K <= N.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || format!("--shard {s}: expected K/N with 1 <= K <= N (e.g. 2/8)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The frames of `frames` this shard evaluates.
    pub fn frames(&self, frames: usize) -> Range<usize> {
        let at = |k: u32| (frames as u128 * u128::from(k) / u128::from(self.count)) as usize;
        at(self.index - 1)..at(self.index)
    }
}

/// Why shards could not be merged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
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
    #[error("{file}: {msg}")]
    Read {
        /// The file (with `:LINE:COL` where the JSON is wrong).
        file: String,
        /// What is wrong.
        msg: String,
    },
    /// A shard twice, or a whole run among shards.
    #[error("{file}: {msg}")]
    Shards {
        /// The file.
        file: String,
        /// What is wrong.
        msg: String,
    },
}

/// Reads the reports of `scamp eval --shard K/N --json` in `files` and adds up their
/// shards ([`merge`]).
pub fn merge_files(files: &[std::path::PathBuf]) -> Result<Mergeable, MergeError> {
    let mut parts = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| MergeError::Read {
            file: f.display().to_string(),
            msg: format!("cannot read: {e}"),
        })?;
        let r: super::Report = serde_json::from_str(&text).map_err(|e| MergeError::Read {
            file: format!("{}:{}:{}", f.display(), e.line(), e.column()),
            msg: format!("not a `scamp eval --json` report: {e}"),
        })?;
        parts.push((f.display().to_string(), r.merge));
    }
    merge(&parts)
}

/// Adds up the shards `parts` (each with its file name); the result is the whole run's
/// counts (`shard` absent). Every shard of the same N must be there exactly once.
pub fn merge(parts: &[(String, Mergeable)]) -> Result<Mergeable, MergeError> {
    let ((first_file, first), rest) = parts.split_first().ok_or(MergeError::Empty)?;
    let mut seen = Vec::new();
    let mut out = first.clone();
    out.shard = None;
    for (i, (file, m)) in parts.iter().enumerate() {
        let same_rows = m.rows.len() == first.rows.len()
            && m.rows.iter().zip(&first.rows).all(|(a, b)| {
                a.depth == b.depth
                    && a.program == b.program
                    && a.counts.well_formed(first.meta.chip_seeds.len())
            });
        if m.fingerprint != first.fingerprint || !same_rows || m.main_depth != first.main_depth {
            return Err(MergeError::Different {
                file: file.clone(),
                first: first_file.clone(),
            });
        }
        let shard = |msg: String| MergeError::Shards {
            file: file.clone(),
            msg,
        };
        let Some([k, n]) = m.shard else {
            return Err(shard(
                "a whole run, not a shard (made without --shard)".into(),
            ));
        };
        if Some(n) != first.shard.map(|s| s[1]) {
            return Err(shard(format!(
                "shard {k}/{n} does not belong with {first_file}'s shards"
            )));
        }
        if seen.contains(&k) {
            return Err(shard(format!("shard {k}/{n} is given twice")));
        }
        seen.push(k);
        if i > 0 {
            for (a, b) in out.rows.iter_mut().zip(&m.rows) {
                a.counts.add(&b.counts);
                a.noisy_seconds += b.noisy_seconds;
            }
        }
    }
    let n = first.shard.map_or(0, |s| s[1]);
    if seen.len() != n as usize {
        let mut missing: Vec<u32> = (1..=n).filter(|k| !seen.contains(k)).collect();
        missing.truncate(8);
        return Err(MergeError::Shards {
            file: rest.last().map_or(first_file, |(f, _)| f).clone(),
            msg: format!("shards {missing:?} of {n} are missing"),
        });
    }
    Ok(out)
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
