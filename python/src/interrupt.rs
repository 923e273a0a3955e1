//! Long calls that Ctrl-C stops. The work runs on a helper thread with the GIL
//! released, while the calling thread wakes every few milliseconds to let Python look
//! at its signals; on an interrupt it asks the library to stop ([`scamp::cancel`]),
//! waits for the work to wind down (the library's loops look at the request between
//! steps), drops what it returned and raises the interrupt (`KeyboardInterrupt`).

use pyo3::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How often the calling thread looks at Python's signals.
const POLL: Duration = Duration::from_millis(20);

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
    let _active = Active::enter();
    std::thread::scope(|scope| {
        let handle = scope.spawn(work);
        let mut interrupt = None;
        while !handle.is_finished() {
            py.detach(|| {
                let until = std::time::Instant::now() + POLL;
                while !handle.is_finished() && std::time::Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(1));
                }
            });
            if interrupt.is_none() {
                if let Err(e) = py.check_signals() {
                    scamp::cancel::request();
                    interrupt = Some(e);
                }
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
            (None, Ok(v)) => Ok(v),
            (None, Err(panic)) => std::panic::resume_unwind(panic),
        }
    })
}
