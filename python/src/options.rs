//! The declared options of `check` and `eval` (`scamp::options`) as the Python tests
//! read them (`scamp._scamp.CHECK_OPTIONS`, `EVAL_OPTIONS`), to hold the signatures,
//! their defaults and the stub to the one declaration.

use scamp::{FrontOption, InPython};

/// Each option as `(name, where, python default)`: `where` is `keyword`, `via NAME`
/// (a keyword of the function NAME), or `output`.
pub fn declared(options: &[FrontOption]) -> Vec<(&'static str, String, &'static str)> {
    options
        .iter()
        .map(|o| {
            let at = match o.python {
                InPython::Keyword => "keyword".to_string(),
                InPython::Via(f) => format!("via {f}"),
                InPython::Output => "output".to_string(),
            };
            (o.name, at, o.py_default)
        })
        .collect()
}
