//! Positions in the YAML inputs (filter specs and noise profiles).
//!
//! Both loaders derive serde for their documents, with unknown keys denied, and check
//! single values inside deserialisation: serde_yaml attaches the position of the value
//! it stands on to any error raised there. A check that needs several values (a register
//! that must also be listed elsewhere, a ragged row) runs after deserialising and names
//! the offending node by its path; [`locate`] finds that node's position by reading the
//! text again down the path and failing at the node, which makes serde_yaml report where
//! it is (serde_yaml exposes node positions in no other way).

use super::program::Pos;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A positioned error in a YAML document.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: {msg}")]
pub struct YamlError {
    /// Where (1-based line and column).
    pub pos: Pos,
    /// What.
    pub msg: String,
}

impl YamlError {
    /// An error about the document as a whole, placed at its start.
    pub(crate) fn at_start(msg: impl Into<String>) -> YamlError {
        YamlError {
            pos: Pos { line: 1, col: 1 },
            msg: msg.into(),
        }
    }

    /// The message without the path serde_yaml puts in front of errors inside the
    /// document (`kernels[0].weights[1][2]: `), for a loader whose messages name the value
    /// themselves and whose position already says where.
    pub(crate) fn without_path(mut self) -> YamlError {
        let is_path = |head: &str| {
            !head.is_empty()
                && head
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.[]?".contains(c))
        };
        if let Some((head, rest)) = self.msg.split_once(": ") {
            if is_path(head) {
                self.msg = rest.to_string();
            }
        }
        self
    }
}

impl From<&serde_yaml::Error> for YamlError {
    /// serde_yaml's position (1:1 when it has none), and its message without the trailing
    /// " at line L column C" (the position goes in front instead).
    fn from(e: &serde_yaml::Error) -> YamlError {
        let pos = e.location().map_or(Pos { line: 1, col: 1 }, |l| Pos {
            line: l.line().max(1) as u32,
            col: l.column().max(1) as u32,
        });
        let full = e.to_string();
        let msg = match full.rfind(" at line ") {
            Some(i) => full[..i].to_string(),
            None => full,
        };
        YamlError { pos, msg }
    }
}

/// One step from a node to one of its children.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// The value of a mapping's key.
    Key(&'static str),
    /// An item of a sequence (0-based).
    Index(usize),
}

/// A rejection found after deserialising: the path of the offending node and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Misplaced {
    /// Steps from the document's root to the node.
    pub path: Vec<Step>,
    /// What is wrong with it.
    pub msg: String,
}

impl Misplaced {
    /// A rejection of the node at `path`.
    pub(crate) fn at(path: &[Step], msg: impl Into<String>) -> Misplaced {
        Misplaced {
            path: path.to_vec(),
            msg: msg.into(),
        }
    }
}

/// The position of the node `err.path` of `text`, with `err`'s message. A path that does
/// not lead to a node (never the case for a path taken from a parse of the same text)
/// stops at the last node it reaches.
pub(crate) fn locate(text: &str, err: Misplaced) -> YamlError {
    let reached = serde_yaml::Deserializer::from_str(text).deserialize_any(Seek(&err.path));
    let pos = match reached {
        Err(e) => YamlError::from(&e).pos,
        Ok(()) => Pos { line: 1, col: 1 },
    };
    YamlError { pos, msg: err.msg }
}

/// Walks down the remaining path, skipping everything else, and fails on arrival.
#[derive(Clone, Copy)]
struct Seek<'p>(&'p [Step]);

impl<'de> DeserializeSeed<'de> for Seek<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seek<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        // Scalars take serde's default: an error at the scalar, which is the node sought
        // (or the nearest one when the path runs into a scalar).
        f.write_str("the node sought")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some((Step::Key(want), rest)) = self.0.split_first() else {
            return Err(de::Error::custom("here"));
        };
        while let Some(key) = map.next_key::<serde_yaml::Value>()? {
            if key.as_str() == Some(*want) {
                return map.next_value_seed(Seek(rest));
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Some((Step::Index(want), rest)) = self.0.split_first() else {
            return Err(de::Error::custom("here"));
        };
        for _ in 0..*want {
            if seq.next_element::<IgnoredAny>()?.is_none() {
                return Ok(());
            }
        }
        seq.next_element_seed(Seek(rest)).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Step::{Index, Key};

    #[test]
    fn nodes_are_found_again() {
        let text = "a: 1\nb:\n  - [1, 2]\n  - x: .nan\n";
        let pos = |path: &[Step]| locate(text, Misplaced::at(path, "bad")).pos;
        assert_eq!(pos(&[Key("b"), Index(1)]), Pos { line: 4, col: 5 });
        assert_eq!(
            pos(&[Key("b"), Index(0), Index(1)]),
            Pos { line: 3, col: 9 }
        );
        assert_eq!(
            pos(&[Key("b"), Index(1), Key("x")]),
            Pos { line: 4, col: 8 }
        );
        assert_eq!(pos(&[Key("a")]), Pos { line: 1, col: 4 });
        let e = locate(text, Misplaced::at(&[Key("a")], "bad"));
        assert_eq!(e.msg, "bad");
    }

    #[test]
    fn serde_errors_keep_their_position() {
        let e = serde_yaml::from_str::<Vec<u8>>("[1,\n 2, x]\n").unwrap_err();
        let y = YamlError::from(&e);
        assert_eq!(y.pos, Pos { line: 2, col: 5 });
        assert!(!y.msg.contains(" at line "), "{y}");
        let e = serde_yaml::from_str::<Vec<Vec<u8>>>("[[1], [x]]").unwrap_err();
        let y = YamlError::from(&e);
        assert!(y.msg.starts_with(".[1][0]: invalid type"), "{y}");
        assert!(y.without_path().msg.starts_with("invalid type"));
    }
}
