//! `/tutorial`: the tutorial's chapters (docs/tutorial, built into the binary) as
//! pages, each `scamp` code block with a link that opens it in the playground.

use crate::report::html::escape;
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

/// The chapters by file name, as they sit in docs/tutorial.
const CHAPTERS: [(&str, &str); 9] = [
    ("README.md", include_str!("../../docs/tutorial/README.md")),
    (
        "01-pe-array.md",
        include_str!("../../docs/tutorial/01-pe-array.md"),
    ),
    (
        "02-macros.md",
        include_str!("../../docs/tutorial/02-macros.md"),
    ),
    (
        "03-neighbours.md",
        include_str!("../../docs/tutorial/03-neighbours.md"),
    ),
    ("04-flag.md", include_str!("../../docs/tutorial/04-flag.md")),
    (
        "05-hand-filter.md",
        include_str!("../../docs/tutorial/05-hand-filter.md"),
    ),
    (
        "06-code-generator.md",
        include_str!("../../docs/tutorial/06-code-generator.md"),
    ),
    (
        "07-analogue-error.md",
        include_str!("../../docs/tutorial/07-analogue-error.md"),
    ),
    (
        "exercises/README.md",
        include_str!("../../docs/tutorial/exercises/README.md"),
    ),
];

/// The page of the chapter at `path` (`/tutorial`, `/tutorial/`, `/tutorial/NAME.md`),
/// or `None` when there is no such chapter.
pub fn page(path: &str) -> Option<String> {
    let name = match path
        .strip_prefix("/tutorial")
        .map(|p| p.trim_start_matches('/'))
    {
        Some("") => "README.md",
        Some(name) => name,
        None => return None,
    };
    let (_, text) = CHAPTERS.iter().find(|(n, _)| *n == name)?;
    Some(render(name, text))
}

/// A chapter's Markdown as a self-contained page.
fn render(name: &str, markdown: &str) -> String {
    let mut body = String::new();
    let mut code: Option<String> = None;
    let events = Parser::new(markdown).map(|e| match e {
        Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(lang))) if lang.as_ref() == "scamp" => {
            code = Some(String::new());
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(lang)))
        }
        Event::Text(t) => {
            if let Some(c) = code.as_mut() {
                c.push_str(&t);
            }
            Event::Text(t)
        }
        Event::End(TagEnd::CodeBlock) => match code.take() {
            Some(program) => Event::Html(
                format!(
                    "</code></pre>\n<p class=\"try\"><a href=\"/?program={}\">open in the playground</a></p>\n",
                    encode(&program)
                )
                .into(),
            ),
            None => Event::End(TagEnd::CodeBlock),
        },
        other => other,
    });
    pulldown_cmark::html::push_html(&mut body, events);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <base href=\"/tutorial/\">\n<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n\
         <body>\n<nav><a href=\"/\">playground</a> · <a href=\"/tutorial/\">tutorial</a></nav>\n\
         <main>\n{body}</main>\n</body>\n</html>\n",
        title = escape(&format!("scamp tutorial: {name}"))
    )
}

const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;max-width:52em;margin:1em auto;padding:0 1em;color:#222}\
pre{background:#f4f4f4;padding:.6em;overflow-x:auto}code{font-family:ui-monospace,monospace}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em}\
p.try{margin-top:-.6em;font-size:90%}nav{margin-bottom:1em}";

/// `text` percent-encoded for a query value (everything but unreserved characters).
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chapter_is_served_and_links_its_blocks_to_the_playground() {
        let index = page("/tutorial").expect("the index");
        assert_eq!(page("/tutorial/"), Some(index.clone()));
        assert!(index.contains("<a href=\"01-pe-array.md\">"), "{index}");
        for (name, _) in CHAPTERS {
            let p = page(&format!("/tutorial/{name}")).expect(name);
            assert!(p.contains("<h1>"), "{name}");
        }
        let first = page("/tutorial/01-pe-array.md").unwrap();
        assert!(first.contains("open in the playground"));
        assert_eq!(page("/tutorial/../Cargo.toml"), None);
        assert_eq!(page("/tutorials"), None);
        assert_eq!(encode("add(A, B)\n"), "add%28A%2C%20B%29%0A");
    }
}
