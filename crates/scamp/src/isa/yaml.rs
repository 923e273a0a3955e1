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
use crate::cain::SpecProblem;
use crate::eval::NetworkProblem;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::sync::Arc;

/// A positioned error in a YAML document.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: {cause}")]
pub struct YamlError {
    /// Where (1-based line and column).
    pub pos: Pos,
    /// What.
    pub cause: YamlCause,
}

/// What is wrong with a YAML document.
#[derive(Clone, Debug, thiserror::Error)]
pub enum YamlCause {
    /// serde_yaml's error: the text is not YAML, a key is unknown, or a value is not what
    /// its key takes (a value's own check runs inside deserialisation, where serde_yaml
    /// knows its position). Shown without the position serde_yaml appends and, unless
    /// `with_path`, without the path to the value it puts in front (for a loader whose
    /// messages name the value themselves).
    #[error("{}", serde_text(error, *with_path))]
    Serde {
        /// serde_yaml's error.
        error: Arc<serde_yaml::Error>,
        /// Whether the path to the value is shown.
        with_path: bool,
    },
    /// A filter spec's check across values.
    #[error(transparent)]
    Spec(#[from] SpecProblem),
    /// A network file's check across values.
    #[error(transparent)]
    Network(#[from] NetworkProblem),
}

/// Two causes are equal when they are of one kind and say the same (serde_yaml's and the
/// layer files' errors have no equality of their own).
impl PartialEq for YamlCause {
    fn eq(&self, other: &YamlCause) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl Eq for YamlCause {}

impl YamlError {
    /// An error about the document as a whole, placed at its start.
    pub(crate) fn at_start(cause: impl Into<YamlCause>) -> YamlError {
        YamlError {
            pos: Pos { line: 1, col: 1 },
            cause: cause.into(),
        }
    }

    /// serde_yaml's error at its position; `with_path` keeps the path to the value in
    /// the message.
    pub(crate) fn of_serde(error: serde_yaml::Error, with_path: bool) -> YamlError {
        YamlError {
            pos: position(&error),
            cause: YamlCause::Serde {
                error: Arc::new(error),
                with_path,
            },
        }
    }
}

/// serde_yaml's position of `e` (1:1 when it has none).
pub(crate) fn position(e: &serde_yaml::Error) -> Pos {
    e.location().map_or(Pos { line: 1, col: 1 }, |l| Pos {
        line: l.line().max(1) as u32,
        col: l.column().max(1) as u32,
    })
}

/// serde_yaml's message without the trailing " at line L column C" (the position goes
/// in front instead).
pub(crate) fn serde_message(e: &serde_yaml::Error) -> String {
    let full = e.to_string();
    match full.rfind(" at line ") {
        Some(i) => full[..i].to_string(),
        None => full,
    }
}

/// [`serde_message`], without the path serde_yaml puts in front of errors inside the
/// document (`kernels[0].weights[1][2]: `) unless `with_path`.
fn serde_text(e: &serde_yaml::Error, with_path: bool) -> String {
    let msg = serde_message(e);
    if with_path {
        return msg;
    }
    let is_path = |head: &str| {
        !head.is_empty()
            && head
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.[]?".contains(c))
    };
    match msg.split_once(": ") {
        Some((head, rest)) if is_path(head) => rest.to_string(),
        _ => msg,
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

/// A rejection found after deserialising: the path of the offending node and what is
/// wrong with it (a loader's cause, `P`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Misplaced<P> {
    /// Steps from the document's root to the node.
    pub(crate) path: Vec<Step>,
    /// What is wrong with it.
    pub(crate) problem: P,
}

impl<P> Misplaced<P> {
    /// A rejection of the node at `path`.
    pub(crate) fn at(path: &[Step], problem: impl Into<P>) -> Misplaced<P> {
        Misplaced {
            path: path.to_vec(),
            problem: problem.into(),
        }
    }
}

/// The position of the node `err.path` of `text`, with `err`'s cause. A path that does
/// not lead to a node (never the case for a path taken from a parse of the same text)
/// stops at the last node it reaches.
pub(crate) fn locate<P: Into<YamlCause>>(text: &str, err: Misplaced<P>) -> YamlError {
    YamlError {
        pos: node_position(text, &err.path),
        cause: err.problem.into(),
    }
}

/// The position of the node at `path` of `text` (see [`locate`]).
pub(crate) fn node_position(text: &str, path: &[Step]) -> Pos {
    match serde_yaml::Deserializer::from_str(text).deserialize_any(Seek(path)) {
        Err(e) => position(&e),
        Ok(()) => Pos { line: 1, col: 1 },
    }
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
        let pos = |path: &[Step]| node_position(text, path);
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
        let e = locate(
            text,
            Misplaced::<NetworkProblem>::at(&[Key("a")], NetworkProblem::ZeroPool),
        );
        assert_eq!(e.cause.to_string(), "pool must be at least 1");
        assert_eq!(e.pos, Pos { line: 1, col: 4 });
    }

    #[test]
    fn serde_errors_keep_their_position() {
        let e = serde_yaml::from_str::<Vec<u8>>("[1,\n 2, x]\n").unwrap_err();
        let y = YamlError::of_serde(e, true);
        assert_eq!(y.pos, Pos { line: 2, col: 5 });
        assert!(!y.cause.to_string().contains(" at line "), "{y}");
        let e = serde_yaml::from_str::<Vec<Vec<u8>>>("[[1], [x]]").unwrap_err();
        let with = YamlError::of_serde(e, true).cause.to_string();
        assert!(with.starts_with(".[1][0]: invalid type"), "{with}");
        let e = serde_yaml::from_str::<Vec<Vec<u8>>>("[[1], [x]]").unwrap_err();
        let without = YamlError::of_serde(e, false).cause.to_string();
        assert!(without.starts_with("invalid type"), "{without}");
    }
}
