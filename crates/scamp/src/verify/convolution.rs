//! Reference convolution in exact-enough f64: the correlation convention of the filter
//! specs (row 0 of a kernel is north, column 0 west, not flipped).

use ndarray::Array2;

/// `out(r, c) = sum over i, j of w[i][j] * img(r + i - ci, c + j - cj)`, with pixels outside
/// the image taken as 0 (callers compare only the interior).
pub(crate) fn correlate(img: &Array2<f64>, w: &Array2<f64>, centre: (usize, usize)) -> Array2<f64> {
    let (h, wd) = img.dim();
    let (kh, kw) = w.dim();
    let mut out = Array2::<f64>::zeros((h, wd));
    for i in 0..kh {
        for j in 0..kw {
            let k = w[[i, j]];
            if k == 0.0 {
                continue;
            }
            let dr = i as isize - centre.0 as isize;
            let dc = j as isize - centre.1 as isize;
            for r in 0..h {
                let sr = r as isize + dr;
                if sr < 0 || sr >= h as isize {
                    continue;
                }
                for c in 0..wd {
                    let sc = c as isize + dc;
                    if sc >= 0 && sc < wd as isize {
                        out[[r, c]] += k * img[[sr as usize, sc as usize]];
                    }
                }
            }
        }
    }
    out
}

/// Centre of an `h x w` kernel: `((h - 1) / 2, (w - 1) / 2)`, the upper-left of the
/// middle four for even sizes.
pub(crate) fn centre_of(h: usize, w: usize) -> (usize, usize) {
    ((h.max(1) - 1) / 2, (w.max(1) - 1) / 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn correlation_is_not_flipped() {
        // Weight 1 at the east position picks the pixel to the east.
        let img = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]];
        let w = array![[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]];
        let out = correlate(&img, &w, centre_of(3, 3));
        assert_eq!(out[[1, 1]], 6.0);
        let w = array![[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]];
        assert_eq!(correlate(&img, &w, (1, 1))[[1, 1]], 1.0);
        assert_eq!(centre_of(4, 4), (1, 1));
    }
}
