//! Reading the text files users give (programs, filter specs, noise profiles): a size
//! limit checked before anything is read, UTF-8 checked with the position of the first bad
//! byte, and a leading byte-order mark dropped.

use super::program::Pos;
use std::io::Read;
use std::path::Path;

/// Largest program file, in bytes (4 MiB, some 200 000 statements). The parser holds the
/// whole program in memory, a few hundred bytes per statement.
pub const MAX_PROGRAM_BYTES: u64 = 4 << 20;

/// Largest filter spec, in bytes (1 MiB). Six 31x31 kernels written out in full take
/// under 200 KB; the YAML reader keeps every event of the document in memory.
pub const MAX_SPEC_BYTES: u64 = 1 << 20;

/// Largest noise profile, in bytes (1 MiB; a full profile is about 3 KB).
pub const MAX_PROFILE_BYTES: u64 = 1 << 20;

/// Why a text file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The file could not be opened or read.
    #[error("cannot read {what}: {source}")]
    Io {
        /// What the file was meant to be (`program`, `spec`, ...).
        what: &'static str,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The file is larger than the limit for its kind.
    #[error("the {what} is larger than {limit} bytes, the most accepted")]
    TooLarge {
        /// What the file was meant to be.
        what: &'static str,
        /// The limit in bytes.
        limit: u64,
    },
    /// The text is not UTF-8.
    #[error("{pos}: the {what} is not UTF-8 text")]
    NotUtf8 {
        /// What the file was meant to be.
        what: &'static str,
        /// Line and column of the first byte that is not UTF-8.
        pos: Pos,
    },
}

impl SourceError {
    /// The position in the file, when the error has one.
    pub fn pos(&self) -> Option<Pos> {
        match self {
            SourceError::NotUtf8 { pos, .. } => Some(*pos),
            _ => None,
        }
    }
}

/// Reads `path` as text of at most `limit` bytes. The limit is checked on the file's size
/// before reading and again while reading (for pipes and files that grow).
pub fn read_text(path: &Path, limit: u64, what: &'static str) -> Result<String, SourceError> {
    let bytes = read_at_most(path, limit).map_err(|source| SourceError::Io { what, source })?;
    if bytes.len() as u64 > limit {
        return Err(SourceError::TooLarge { what, limit });
    }
    decode(bytes, what)
}

/// The bytes of `path` up to `limit` + 1: a longer file, or one without end such as
/// `/dev/zero` or a FIFO, gives `limit` + 1 bytes for the caller to refuse, so memory
/// never exceeds the limit. A folder is an error.
pub(crate) fn read_at_most(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(std::io::Error::other("it is a folder, not a file"));
    }
    let cap = limit.saturating_add(1);
    let mut bytes = Vec::with_capacity(meta.len().min(cap) as usize);
    file.take(cap).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The text of `bytes`, without a leading byte-order mark.
pub fn decode(bytes: Vec<u8>, what: &'static str) -> Result<String, SourceError> {
    match String::from_utf8(bytes) {
        Ok(s) => Ok(strip_bom(&s).to_string()),
        Err(e) => {
            let bytes = e.as_bytes();
            let before = &bytes[..e.utf8_error().valid_up_to()];
            let line_start = before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            // Columns count characters, as in every other position.
            let col = String::from_utf8_lossy(&before[line_start..])
                .chars()
                .count()
                + 1;
            Err(SourceError::NotUtf8 {
                what,
                pos: Pos {
                    line: u32::try_from(line).unwrap_or(u32::MAX),
                    col: u32::try_from(col).unwrap_or(u32::MAX),
                },
            })
        }
    }
}

/// `text` without a leading UTF-8 byte-order mark (some editors write one).
pub(crate) fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_bytes_are_positioned_and_boms_dropped() {
        let e = decode(b"ab\ncd\xffe".to_vec(), "spec").unwrap_err();
        assert_eq!(e.pos(), Some(Pos { line: 2, col: 3 }));
        assert_eq!(e.to_string(), "2:3: the spec is not UTF-8 text");
        let mut b = "é\n\u{e9}".as_bytes().to_vec();
        b.push(0xc3);
        assert_eq!(
            decode(b, "p").unwrap_err().pos(),
            Some(Pos { line: 2, col: 2 })
        );
        assert_eq!(
            decode("\u{feff}mov(A, B)".as_bytes().to_vec(), "p").unwrap(),
            "mov(A, B)"
        );
    }

    #[test]
    fn sizes_are_limited() {
        let dir = std::env::temp_dir().join(format!("scamp-source-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("big.txt");
        std::fs::write(&f, vec![b'x'; 101]).unwrap();
        assert!(matches!(
            read_text(&f, 100, "spec"),
            Err(SourceError::TooLarge { limit: 100, .. })
        ));
        assert_eq!(read_text(&f, 101, "spec").unwrap().len(), 101);
        assert!(matches!(
            read_text(&dir.join("missing"), 100, "spec"),
            Err(SourceError::Io { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
