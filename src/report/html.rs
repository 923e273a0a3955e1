//! The parts every page shares: escaping, the page shell with the inline style sheet,
//! data embedded as JSON, and pictures as `data:` URIs.

use base64::Engine;

/// The style sheet of every page.
const STYLE: &str = include_str!("assets/style.css");

/// `s` with the characters HTML gives meaning to replaced by entities.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Bytes as standard base64.
pub fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A JSON value that can sit inside a `<script>` element: `<` is written as `\u003c`
/// so no `</script>` inside a string can end the element early.
pub fn script_json(value: &serde_json::Value) -> String {
    value.to_string().replace('<', "\\u003c")
}

/// A whole page: title, inline style, body and optional inline script.
pub fn page(title: &str, body: &str, script: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n{body}\n\
         <script>\n{script}</script>\n</body>\n</html>\n",
        escape(title)
    )
}

/// A picture as a PNG `data:` URI (no file beside the page).
pub fn png_data_uri(img: &image::DynamicImage) -> Result<String, image::ImageError> {
    let mut bytes = Vec::new();
    img.write_to(
        &mut std::io::Cursor::new(&mut bytes),
        image::ImageFormat::Png,
    )?;
    Ok(format!("data:image/png;base64,{}", base64(&bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_replaces_markup() {
        assert_eq!(
            escape("a<b & \"c\">'"),
            "a&lt;b &amp; &quot;c&quot;&gt;&#39;"
        );
    }

    #[test]
    fn script_json_cannot_close_the_script() {
        let v = serde_json::json!({"s": "</script><script>alert(1)"});
        assert!(!script_json(&v).contains("</script"));
        let back: serde_json::Value =
            serde_json::from_str(&script_json(&v)).expect("still valid JSON");
        assert_eq!(back, v);
    }
}
