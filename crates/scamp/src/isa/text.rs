//! Pieces of user text and numbers as messages show them: short enough to read, whatever
//! the input (a 1 MB identifier is not echoed whole, 1e300 is not 301 digits).

use std::borrow::Cow;

/// Longest piece of user text a message quotes, in characters.
pub(crate) const QUOTE_CHARS: usize = 40;

/// `s`, or its first `QUOTE_CHARS` characters and how long it was.
pub fn quote(s: &str) -> Cow<'_, str> {
    cut(s, QUOTE_CHARS)
}

/// `s`, or its first `max` characters followed by `...` and its length in bytes.
pub(crate) fn cut(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some((end, _)) => Cow::Owned(format!("{}... ({} bytes)", &s[..end], s.len())),
    }
}

/// `x` with at most 6 significant digits: plain between 1e-4 and 1e6, in exponent
/// notation outside (`1e300`, not 301 digits).
pub(crate) fn number(x: f64) -> String {
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

/// Edit distance between `a` and `b` (insertions, deletions, substitutions; case
/// ignored), or `None` once it exceeds `most`.
fn distance(a: &str, b: &str, most: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().flat_map(char::to_lowercase).collect();
    let b: Vec<char> = b.chars().flat_map(char::to_lowercase).collect();
    if a.len().abs_diff(b.len()) > most {
        return None;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(here + 1);
            prev = here;
        }
    }
    row.last().copied().filter(|&d| d <= most)
}

/// The candidate closest to `word` if one is near enough to be a slip of the keyboard
/// (half the word's letters, at least one): for "did you mean" hints.
pub(crate) fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    if word.len() > 64 {
        return None;
    }
    let most = (word.chars().count() / 2).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != word)
        .filter_map(|c| distance(word, c, most).map(|d| (d, c)))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_names_are_suggested() {
        let names = ["movx", "mov2x", "add", "divq", "north", "east"];
        assert_eq!(closest("movz", names), Some("movx"));
        assert_eq!(closest("ad", names), Some("add"));
        assert_eq!(closest("nrth", names), Some("north"));
        assert_eq!(closest("EAST", names), Some("east"));
        assert_eq!(closest("frobnicate", names), None);
    }

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
