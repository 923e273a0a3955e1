//! Self-contained HTML pages for teaching and reports: the step-through of a program
//! (`scamp trace --html`) and the check report (`scamp check --html`). Each page is one
//! file with its styles, script and pictures inline, so it opens offline and can be
//! mailed or pasted as it is. The plain-text reports are in
//! [`crate::bank::text`], beside the report types they print.

pub mod check;
pub mod html;
pub mod planes;
pub mod trace;

pub use check::{check_page, CheckPage, ImagePanels, KernelPanel, KernelSummary};
pub use trace::{trace_page, TraceInput};
