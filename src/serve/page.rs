//! The playground's one page: markup, style sheet and script built into the binary,
//! with the data the page needs from the start (macro names for highlighting, the
//! exercises, the bundled images, the noise profiles) embedded as JSON.

use super::exercises;
use crate::report::html::{escape, script_json};
use scamp::images;
use scamp::isa::table;
use scamp::BUILTINS;
use serde::Serialize;

const MARKUP: &str = include_str!("assets/index.html");
const STYLE: &str = include_str!("assets/app.css");
const SCRIPT: &str = include_str!("assets/app.js");

/// A macro the editor highlights, with its one-line summary as a tooltip.
#[derive(Serialize)]
struct Macro {
    name: &'static str,
    summary: &'static str,
}

#[derive(Serialize)]
struct PageData {
    macros: Vec<Macro>,
    exercises: Vec<super::api::ExerciseInfo>,
    images: Vec<&'static str>,
    noises: Vec<&'static str>,
    max_step_cycles: u64,
}

/// The whole page.
pub fn html() -> String {
    let mut macros: Vec<Macro> = table()
        .iter()
        .map(|d| Macro {
            name: d.name,
            summary: d.summary,
        })
        .collect();
    // The table lists some macros once per form (`SET` of one register or several):
    // each name once, in the table's order.
    let mut seen = std::collections::HashSet::new();
    macros.retain(|m| seen.insert(m.name));
    let data = PageData {
        macros,
        exercises: exercises::list(),
        images: images::names(),
        noises: BUILTINS.to_vec(),
        max_step_cycles: super::session::MAX_STEP_CYCLES,
    };
    let json = serde_json::to_value(&data).map_or_else(|_| "{}".to_string(), |v| script_json(&v));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n{MARKUP}\n\
         <script id=\"page-data\" type=\"application/json\">{json}</script>\n\
         <script>\n{SCRIPT}</script>\n</body>\n</html>\n",
        title = escape("scamp playground")
    )
}
