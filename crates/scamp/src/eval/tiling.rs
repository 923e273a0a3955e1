//! Many dataset images on one 256x256 frame. The array is pixel-parallel: a frame of
//! 64 small images costs the same bus instructions as one, so images are tiled.
//!
//! A value at one PE can depend on PEs up to `reach` steps away (the neighbour steps a
//! value travels through the stages' programs, [`crate::isa::Program::edge_reach`],
//! summed along the paths of stacked stages). Tiles are therefore kept `reach` PEs
//! apart, filled with the background pixel 0 (black, the background of MNIST-style
//! images), and far enough from the array edge that no value on their paths passes it
//! (the margin: a value moved out of the array and back is lost, and the edge reads 0,
//! not the background's -128): every PE of a tile then computes exactly what it would
//! compute for that image alone on a black frame, whatever its neighbours hold.

use super::dataset::Split;
use crate::sim::N;

/// The background pixel around and between the tiles.
pub const BACKGROUND: u8 = 0;

/// Where the images of one frame go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiling {
    /// Image height.
    pub(crate) rows: usize,
    /// Image width.
    pub(crate) cols: usize,
    /// Empty PEs between tiles.
    pub(crate) gap: usize,
    /// Empty PEs between the array border and the outer tiles (at least `gap`).
    pub(crate) margin: usize,
    /// Tiles down the frame.
    pub(crate) down: usize,
    /// Tiles across the frame.
    pub(crate) across: usize,
}

/// Images too large to tile the array even once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{rows}x{cols} images with a gap of {gap} PEs do not fit the 256x256 array")]
pub struct NoTiling {
    /// Image height.
    pub(crate) rows: usize,
    /// Image width.
    pub(crate) cols: usize,
    /// The gap kept between tiles (the network's reach).
    pub(crate) gap: usize,
}

impl Tiling {
    /// The densest tiling of `rows` x `cols` images whose tiles stay `reach` apart and
    /// away from the array border; `None` when not even one image fits.
    pub fn new(rows: usize, cols: usize, reach: usize) -> Option<Tiling> {
        Tiling::with_margin(rows, cols, reach, reach)
    }

    /// The densest tiling of `rows` x `cols` images whose tiles stay `gap` apart and
    /// `margin` (or `gap`, when more) away from the array border; `None` when not even
    /// one image fits.
    pub(crate) fn with_margin(
        rows: usize,
        cols: usize,
        gap: usize,
        margin: usize,
    ) -> Option<Tiling> {
        let margin = margin.max(gap);
        // n tiles take n (size + gap) - gap PEs between the two margins.
        let fit = |size: usize| (N + gap).saturating_sub(2 * margin) / (size + gap);
        let (down, across) = (fit(rows), fit(cols));
        (down > 0 && across > 0).then_some(Tiling {
            rows,
            cols,
            gap,
            margin,
            down,
            across,
        })
    }

    /// Images per frame.
    pub fn per_frame(&self) -> usize {
        self.down * self.across
    }

    /// Frames needed for `images` images.
    pub(crate) fn frames(&self, images: usize) -> usize {
        images.div_ceil(self.per_frame())
    }

    /// Top-left PE (row, column) of tile `slot`.
    pub(crate) fn origin(&self, slot: usize) -> (usize, usize) {
        let (i, j) = (slot / self.across, slot % self.across);
        (
            self.margin + i * (self.rows + self.gap),
            self.margin + j * (self.cols + self.gap),
        )
    }

    /// The 256x256 frame holding images `first..first + per_frame` of `split` (slots
    /// past the end of the split stay background).
    #[cfg(test)]
    pub(crate) fn compose(&self, split: &Split, first: usize) -> Vec<u8> {
        let mut frame = Vec::new();
        self.compose_into(split, first, &mut frame);
        frame
    }

    /// [`Tiling::compose`] into `frame` (its allocation reused from frame to frame).
    pub(crate) fn compose_into(&self, split: &Split, first: usize, frame: &mut Vec<u8>) {
        frame.clear();
        frame.resize(N * N, BACKGROUND);
        for slot in 0..self.per_frame() {
            let img = split.image(first + slot);
            if img.is_empty() {
                break;
            }
            let (r0, c0) = self.origin(slot);
            for (r, row) in img.chunks_exact(self.cols).enumerate() {
                let at = (r0 + r) * N + c0;
                frame[at..at + self.cols].copy_from_slice(row);
            }
        }
    }

    /// The tile `slot` of a full-array plane, row-major.
    #[cfg(test)]
    pub(crate) fn extract<T: Copy>(&self, plane: &[T], slot: usize) -> Vec<T> {
        let mut out = Vec::with_capacity(self.rows * self.cols);
        self.extract_into(plane, slot, &mut out);
        out
    }

    /// Appends the tile `slot` of a full-array plane to `out`, row-major.
    pub(crate) fn extract_into<T: Copy>(&self, plane: &[T], slot: usize, out: &mut Vec<T>) {
        let (r0, c0) = self.origin(slot);
        for r in 0..self.rows {
            let at = (r0 + r) * N + c0;
            out.extend_from_slice(&plane[at..at + self.cols]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_stay_apart_and_inside() {
        let t = Tiling::new(28, 28, 2).unwrap();
        assert_eq!((t.down, t.across), (8, 8));
        let (r, c) = t.origin(63);
        assert_eq!((r, c), (2 + 7 * 30, 2 + 7 * 30));
        assert!(r + 28 + 2 <= N);
        assert_eq!(Tiling::new(28, 28, 4).unwrap().per_frame(), 49);
        assert!(Tiling::new(300, 28, 0).is_none());
        // Three apart and five from the border: eight across (8 x 28 + 7 x 3 = 245).
        let t = Tiling::with_margin(28, 28, 3, 5).unwrap();
        assert_eq!((t.per_frame(), t.origin(9)), (64, (5 + 31, 5 + 31)));
        assert_eq!(Tiling::with_margin(28, 28, 3, 6).unwrap().per_frame(), 49);
        assert_eq!(Tiling::with_margin(28, 28, 3, 1).unwrap().origin(0), (3, 3));
        let split = Split {
            rows: 2,
            cols: 3,
            pixels: (1..=12).collect(),
            labels: vec![0, 1],
        };
        let t = Tiling::new(2, 3, 1).unwrap();
        let frame = t.compose(&split, 0);
        assert_eq!(t.extract(&frame, 0), (1..=6).collect::<Vec<u8>>());
        assert_eq!(t.extract(&frame, 1), (7..=12).collect::<Vec<u8>>());
        assert_eq!(t.extract(&frame, 2), vec![0; 6]);
        assert_eq!(frame[N + 1], 1);
        assert_eq!(frame[N], 0);
    }
}
