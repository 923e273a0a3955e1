//! What leaves the chip: the set bits of each binary map, optionally capped at N
//! events per map in row-major scan order, counted in square pooling blocks or in
//! explicit (possibly overlapping) bins; the head sees each count over its block's or
//! bin's size.

use super::network::{Bin, Grouping, Readout};

/// A readout bin that reaches past the image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "readout bin {index} [{}, {}, {}, {}] reaches past the {rows}x{cols} image",
    bin.row, bin.col, bin.height, bin.width
)]
pub struct BinOutside {
    /// The bin's 0-based number.
    pub(crate) index: usize,
    /// The bin.
    pub(crate) bin: Bin,
    /// Image height.
    pub(crate) rows: usize,
    /// Image width.
    pub(crate) cols: usize,
}

/// The readout of images of one size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Map height.
    pub(crate) rows: usize,
    /// Map width.
    pub(crate) cols: usize,
    /// Maps per image.
    pub(crate) maps: usize,
    /// Blocks or bins, and the cap.
    pub(crate) readout: Readout,
}

impl Layout {
    /// The layout of `readout` for `maps` maps of `rows x cols`; a bin outside the
    /// image is refused with its number.
    pub(crate) fn new(
        rows: usize,
        cols: usize,
        maps: usize,
        readout: &Readout,
    ) -> Result<Layout, BinOutside> {
        if let Grouping::Bins(bins) = &readout.grouping {
            if let Some((i, b)) = bins
                .iter()
                .enumerate()
                .find(|(_, b)| b.row + b.height > rows || b.col + b.width > cols)
            {
                return Err(BinOutside {
                    index: i,
                    bin: *b,
                    rows,
                    cols,
                });
            }
        }
        Ok(Layout {
            rows,
            cols,
            maps,
            readout: readout.clone(),
        })
    }

    /// Groups (blocks or bins) per map.
    pub(crate) fn groups(&self) -> usize {
        match &self.readout.grouping {
            Grouping::Pool(p) => self.rows.div_ceil(*p) * self.cols.div_ceil(*p),
            Grouping::Bins(b) => b.len(),
        }
    }

    /// Features per image.
    pub fn features(&self) -> usize {
        self.maps * self.groups()
    }

    /// The event counts as they leave the chip (map, then group order).
    pub(crate) fn counts(&self, bits: &[u8]) -> Vec<u32> {
        match self.readout.cap {
            Some(cap) => self.uncapped_counts(&capped(bits, self.rows * self.cols, cap)),
            None => self.uncapped_counts(bits),
        }
    }

    fn uncapped_counts(&self, bits: &[u8]) -> Vec<u32> {
        match &self.readout.grouping {
            Grouping::Pool(p) => self.pooled(bits, *p),
            Grouping::Bins(b) => self.binned(bits, b),
        }
    }

    /// The features of one image: each count over its group's size.
    pub(crate) fn features_of(&self, bits: &[u8]) -> Vec<f32> {
        let sizes = self.sizes();
        self.counts(bits)
            .iter()
            .enumerate()
            .map(|(k, &n)| n as f32 / sizes[k % sizes.len()])
            .collect()
    }

    /// PEs of each group of one map.
    fn sizes(&self) -> Vec<f32> {
        match &self.readout.grouping {
            Grouping::Pool(p) => {
                let across = self.cols.div_ceil(*p);
                let size = |i: usize, n: usize| (*p).min(n - i * p) as f32;
                (0..self.groups())
                    .map(|b| size(b / across, self.rows) * size(b % across, self.cols))
                    .collect()
            }
            Grouping::Bins(b) => b.iter().map(|b| (b.height * b.width) as f32).collect(),
        }
    }

    fn pooled(&self, bits: &[u8], pool: usize) -> Vec<u32> {
        let (down, across) = (self.rows.div_ceil(pool), self.cols.div_ceil(pool));
        let mut out = vec![0u32; self.features()];
        let plane = self.rows * self.cols;
        for (m, map) in bits.chunks_exact(plane).enumerate() {
            for (r, row) in map.chunks_exact(self.cols).enumerate() {
                let at = m * down * across + (r / pool) * across;
                for (slot, block) in out[at..at + across].iter_mut().zip(row.chunks(pool)) {
                    *slot += block.iter().map(|&b| u32::from(b != 0)).sum::<u32>();
                }
            }
        }
        out
    }

    fn binned(&self, bits: &[u8], bins: &[Bin]) -> Vec<u32> {
        let plane = self.rows * self.cols;
        let mut out = Vec::with_capacity(self.features());
        for map in bits.chunks_exact(plane) {
            for b in bins {
                let n = (b.row..b.row + b.height)
                    .map(|r| {
                        let at = r * self.cols + b.col;
                        map[at..at + b.width].iter().filter(|&&v| v != 0).count() as u32
                    })
                    .sum();
                out.push(n);
            }
        }
        out
    }
}

/// `bits` with every map's set bits after its `cap`-th (in row-major scan order:
/// row 0 from column 0 rightwards, then row 1, ...) cleared: the events the device's
/// scan never reads.
pub(crate) fn capped(bits: &[u8], plane: usize, cap: usize) -> Vec<u8> {
    let mut out = bits.to_vec();
    for map in out.chunks_exact_mut(plane) {
        let mut seen = 0;
        for b in map.iter_mut().filter(|b| **b != 0) {
            seen += 1;
            if seen > cap {
                *b = 0;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(
        rows: usize,
        cols: usize,
        maps: usize,
        grouping: Grouping,
        cap: Option<usize>,
    ) -> Layout {
        Layout::new(rows, cols, maps, &Readout { grouping, cap }).expect("fits")
    }

    #[test]
    fn pooling_counts_blocks_with_ragged_edges() {
        let p = layout(3, 3, 2, Grouping::Pool(2), None);
        assert_eq!(p.features(), 8);
        let bits = [1, 1, 1, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        assert_eq!(p.counts(&bits), vec![3, 1, 2, 1, 0, 0, 0, 1]);
        let f = p.features_of(&bits);
        assert_eq!(f[0], 0.75);
        assert_eq!(f[1], 0.5);
        assert_eq!(f[3], 1.0);
    }

    #[test]
    fn overlapping_bins_count_an_event_in_each_and_the_cap_follows_the_scan() {
        let bins = vec![
            Bin {
                row: 0,
                col: 0,
                height: 2,
                width: 2,
            },
            Bin {
                row: 1,
                col: 1,
                height: 2,
                width: 2,
            },
        ];
        let bits = [1, 0, 1, 0, 1, 1, 1, 1, 1];
        let b = layout(3, 3, 1, Grouping::Bins(bins.clone()), None);
        assert_eq!(b.counts(&bits), vec![2, 4]);
        assert_eq!(b.features_of(&bits), vec![0.5, 1.0]);
        // Cap 3: the events at (0,0), (0,2), (1,1) are read; the rest are not.
        let c = layout(3, 3, 1, Grouping::Bins(bins), Some(3));
        assert_eq!(c.counts(&bits), vec![2, 1]);
        assert!(Layout::new(2, 2, 1, &c.readout).is_err());
    }
}
