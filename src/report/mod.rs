//! Self-contained HTML pages for teaching and reports: the step-through of a program
//! (`scamp trace --html`), the check report (`scamp check --html`) and the evaluation
//! report (`scamp eval --html`), all made from the library's reports. Each page is one
//! file with its styles, script and pictures inline, so it opens offline and can be
//! mailed or pasted as it is. The plain-text reports are in
//! [`scamp::bank_text`], beside the report types they print.

pub mod check;
pub mod check_page;
pub mod eval;
pub mod html;
pub mod planes;
mod plot;
pub mod trace;

pub use check::{check_page, CheckPage, ImagePanels, KernelPanel, KernelSummary};
pub use check_page::{bank_page, PageError};
pub use trace::{trace_page, TraceInput};
