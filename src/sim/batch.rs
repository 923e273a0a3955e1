//! Many frames at once. Monte Carlo work is many independent runs of a program (images
//! times run seeds), each on an array of its own; one frame alone keeps the cores busy
//! only inside each band pass and waits at the end of every segment, while frames side
//! by side keep them busy throughout and overlap the serial parts (exposure, readout,
//! error sums). Every frame's result depends only on its index, and results come back in
//! index order, so a batch gives the same results whatever the thread count.

use rayon::prelude::*;

/// Runs `frame(i)` for every `i` in `0..count`, spread across the cores; returns the
/// results in index order, or the error of the first frame (in index order) that failed.
pub fn frames<T: Send, E: Send>(
    count: usize,
    frame: impl Fn(usize) -> Result<T, E> + Sync,
) -> Result<Vec<T>, E> {
    let results: Vec<Result<T, E>> = (0..count).into_par_iter().map(&frame).collect();
    results.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_index_order_and_the_first_error_wins() {
        let squares = frames(100, |i| Ok::<_, ()>(i * i)).unwrap();
        assert_eq!(squares, (0..100).map(|i| i * i).collect::<Vec<_>>());
        let failed = frames(100, |i| if i % 30 == 29 { Err(i) } else { Ok(i) });
        assert_eq!(failed, Err(29));
    }
}
