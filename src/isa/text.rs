//! Pieces of user text and numbers as messages show them: short enough to read, whatever
//! the input (a 1 MB identifier is not echoed whole, 1e300 is not 301 digits).

use std::borrow::Cow;

/// Longest piece of user text a message quotes, in characters.
pub const QUOTE_CHARS: usize = 40;

/// `s`, or its first [`QUOTE_CHARS`] characters and how long it was.
pub fn quote(s: &str) -> Cow<'_, str> {
    cut(s, QUOTE_CHARS)
}

/// `s`, or its first `max` characters followed by `...` and its length in bytes.
pub fn cut(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some((end, _)) => Cow::Owned(format!("{}... ({} bytes)", &s[..end], s.len())),
    }
}

/// `x` with at most 6 significant digits: plain between 1e-4 and 1e6, in exponent
/// notation outside (`1e300`, not 301 digits).
pub fn number(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let a = x.abs();
    if a == 0.0 || (1e-4..1e6).contains(&a) {
        let digits = (5 - a.log10().floor() as i32).clamp(0, 10) as usize;
        let s = format!("{x:.digits$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        let s = format!("{x:.5e}");
        match s.split_once('e') {
            Some((m, e)) if m.contains('.') => {
                format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
            }
            _ => s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short() {
        assert_eq!(number(1e300), "1e300");
        assert_eq!(number(-2.5e-7), "-2.5e-7");
        assert_eq!(number(0.015624999999999944), "0.015625");
        assert_eq!(number(1.0), "1");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(123456.0), "123456");
        assert_eq!(number(1234567.0), "1.23457e6");
        assert_eq!(number(f64::NAN), "NaN");
    }

    #[test]
    fn long_text_is_cut() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "abc... (4 bytes)");
        let long = "x".repeat(1 << 20);
        assert!(quote(&long).len() < 80);
        assert_eq!(cut("ééé", 2), "éé... (6 bytes)");
    }
}
