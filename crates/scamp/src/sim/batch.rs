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

/// Runs `one(run)` for every run seed index in `0..count`, a few runs at a time side by
/// side across the cores, and hands each result to `sink` in run order. Only one chunk's
/// results are held at once, so memory stays flat in the number of runs; this is the one
/// multi-seed loop of `run --runs`, `check --runs` and `run --compare`.
pub(crate) fn seeded<T: Send, E: Send>(
    count: u32,
    one: impl Fn(u32) -> Result<T, E> + Sync,
    mut sink: impl FnMut(u32, T) -> Result<(), E>,
) -> Result<(), E> {
    let chunk = (2 * rayon::current_num_threads()).max(1) as u32;
    let mut start = 0;
    // A cancelled call (see `crate::cancel`) stops after its first chunk.
    while start < count && !(start > 0 && crate::cancel::requested()) {
        let n = chunk.min(count - start);
        let done = frames(n as usize, |i| one(start + i as u32))?;
        for (i, t) in (start..).zip(done) {
            sink(i, t)?;
        }
        start += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_runs_arrive_in_order_in_chunks() {
        let mut seen = Vec::new();
        seeded(
            37,
            |r| Ok::<_, ()>(r * 2),
            |r, v| {
                seen.push((r, v));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen, (0..37).map(|r| (r, r * 2)).collect::<Vec<_>>());
        let stopped = seeded(10, |r| if r == 7 { Err(r) } else { Ok(r) }, |_, _| Ok(()));
        assert_eq!(stopped, Err(7));
    }

    #[test]
    fn results_come_in_index_order_and_the_first_error_wins() {
        let squares = frames(100, |i| Ok::<_, ()>(i * i)).unwrap();
        assert_eq!(squares, (0..100).map(|i| i * i).collect::<Vec<_>>());
        let failed = frames(100, |i| if i % 30 == 29 { Err(i) } else { Ok(i) });
        assert_eq!(failed, Err(29));
    }
}
