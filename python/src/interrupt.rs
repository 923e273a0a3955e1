//! Long calls that Ctrl-C stops. The work runs on a helper thread with the GIL
//! released, while the calling thread wakes every few milliseconds to let Python look
//! at its signals; on an interrupt it asks the library to stop ([`scamp::cancel`]),
//! waits for the work to wind down (the library's loops look at the request between
//! steps), drops what it returned and raises the interrupt (`KeyboardInterrupt`).
//! The same wake-ups hand the work's progress to an optional Python callback, at most
//! every [`PROGRESS_EVERY`].

use pyo3::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How often the calling thread looks at Python's signals.
const POLL: Duration = Duration::from_millis(20);

/// Least time between two calls of a progress callback.
pub const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// Calls in progress: the last to end withdraws a cancellation request.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

struct Active;

impl Active {
    fn enter() -> Active {
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        Active
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        if ACTIVE.fetch_sub(1, Ordering::SeqCst) == 1 {
            scamp::cancel::clear();
        }
    }
}

/// Runs `work` so that Ctrl-C (any Python signal handler that raises) stops it within
/// a fraction of a second and raises what the handler raised.
pub fn interruptible<T: Send>(py: Python<'_>, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    interruptible_with_progress(py, None, |_| work())
}

/// The latest (done, total) the work reported and not yet handed to the callback.
type Pending = std::sync::Mutex<Option<(u64, u64)>>;

/// Hands the pending progress to `callback` (a callback that raises stops the work).
fn report(callback: &Bound<'_, PyAny>, pending: &Pending) -> PyResult<()> {
    let latest = pending.lock().unwrap_or_else(|e| e.into_inner()).take();
    match latest {
        Some((done, total)) => callback.call1((done, total)).map(drop),
        None => Ok(()),
    }
}

/// [`interruptible`], with `work` given a function to report its progress (done,
/// total) through; `callback` receives it from the calling thread, at most every
/// [`PROGRESS_EVERY`] and once more with the last figures when the work ends. An
/// exception raised by the callback stops the work as Ctrl-C does and is raised.
pub fn interruptible_with_progress<T: Send>(
    py: Python<'_>,
    callback: Option<&Bound<'_, PyAny>>,
    work: impl FnOnce(&(dyn Fn(u64, u64) + Sync)) -> T + Send,
) -> PyResult<T> {
    let _active = Active::enter();
    let pending: Pending = std::sync::Mutex::new(None);
    let record = |done: u64, total: u64| {
        *pending.lock().unwrap_or_else(|e| e.into_inner()) = Some((done, total));
    };
    std::thread::scope(|scope| {
        let handle = scope.spawn(|| work(&record));
        let mut interrupt = None;
        let mut reported = std::time::Instant::now();
        while !handle.is_finished() {
            py.detach(|| {
                let until = std::time::Instant::now() + POLL;
                while !handle.is_finished() && std::time::Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(1));
                }
            });
            if interrupt.is_some() {
                continue;
            }
            let mut outcome = py.check_signals();
            if let (Ok(()), Some(cb)) = (&outcome, callback) {
                if reported.elapsed() >= PROGRESS_EVERY {
                    reported = std::time::Instant::now();
                    outcome = report(cb, &pending);
                }
            }
            if let Err(e) = outcome {
                scamp::cancel::request();
                interrupt = Some(e);
            }
        }
        let done = py.detach(|| handle.join());
        match (interrupt, done) {
            (Some(e), _) => Err(e),
            // Another call's interrupt stopped this one short: its result is partial.
            (None, _) if scamp::cancel::requested() => {
                Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(
                    "interrupted by another call's Ctrl-C",
                ))
            }
            (None, Ok(v)) => {
                if let Some(cb) = callback {
                    report(cb, &pending)?;
                }
                Ok(v)
            }
            (None, Err(panic)) => std::panic::resume_unwind(panic),
        }
    })
}
