//! Stopping long library calls from outside: a caller that is interrupted (Ctrl-C in
//! the Python bindings) asks for cancellation, and the long loops (the code generator's
//! searches, the run loops of checks) look at the request between steps and wind down,
//! returning whatever they hold. The request is process-wide, as an interrupt is; the
//! caller that asked discards what the interrupted calls return. The command line never
//! asks, so its results do not depend on this.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks every long call in progress to stop soon.
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Withdraws the request (once the interrupted calls are over).
pub fn clear() {
    REQUESTED.store(false, Ordering::Relaxed);
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}
