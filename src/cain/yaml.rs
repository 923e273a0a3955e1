//! A YAML document as a tree of numbered nodes, so that checks made after parsing can
//! still report the line and column of the node they reject.
//!
//! serde_yaml does not expose node positions, but it does attach the position of the
//! node being deserialised to any error raised while visiting it. So every node gets a
//! number in document order; to report an error at node `k`, the text is parsed again
//! with a request to fail when node `k` is visited, and serde_yaml supplies the position.
//! The numbering and the request travel in the visitor itself (no global state), so
//! parses on different threads or nested in each other cannot disturb each other.

use crate::isa::Pos;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use std::cell::Cell;
use std::fmt;

/// What a node holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// `null` or an empty value.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i128),
    /// A floating-point number (possibly `.inf` / `.nan`).
    Float(f64),
    /// A string scalar.
    Str(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in document order.
    Map(Vec<(Node, Node)>),
}

/// One YAML node and its number in document order.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Document-order number, used to find the node's position again.
    pub id: u32,
    /// The value.
    pub kind: Kind,
}

impl Node {
    /// Short description of the node's type for error messages.
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            Kind::Null => "null",
            Kind::Bool(_) => "a boolean",
            Kind::Int(_) => "an integer",
            Kind::Float(_) => "a number",
            Kind::Str(_) => "a string",
            Kind::Seq(_) => "a list",
            Kind::Map(_) => "a mapping",
        }
    }

    /// The string of a string scalar.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// A rejection of one node: its number and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeError {
    /// Number of the offending node.
    pub id: u32,
    /// What is wrong with it.
    pub msg: String,
}

impl NodeError {
    /// An error at `node`.
    pub fn at(node: &Node, msg: impl Into<String>) -> NodeError {
        NodeError {
            id: node.id,
            msg: msg.into(),
        }
    }
}

/// A positioned error in a YAML document.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: {msg}")]
pub struct YamlError {
    /// Where (1-based line and column).
    pub pos: Pos,
    /// What.
    pub msg: String,
}

/// The walk through one parse: the number the next node gets, and the node (with the
/// message) at which to fail so that serde_yaml reports its position.
struct Walk {
    next: Cell<u32>,
    fail_at: Option<(u32, String)>,
}

impl Walk {
    fn enter<E: de::Error>(&self) -> Result<u32, E> {
        let id = self.next.get();
        self.next.set(id + 1);
        match &self.fail_at {
            Some((at, msg)) if *at == id => Err(E::custom(msg)),
            _ => Ok(id),
        }
    }
}

/// Builds a [`Node`] from whatever serde_yaml visits, numbering nodes in `walk`.
#[derive(Clone, Copy)]
struct NodeVisitor<'w>(&'w Walk);

impl NodeVisitor<'_> {
    fn leaf<E: de::Error>(self, kind: Kind) -> Result<Node, E> {
        Ok(Node {
            id: self.0.enter()?,
            kind,
        })
    }
}

impl<'de> Visitor<'de> for NodeVisitor<'_> {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
        self.leaf(Kind::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        self.leaf(Kind::Int(i128::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        self.leaf(Kind::Int(i128::from(v)))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Node, E> {
        self.leaf(Kind::Int(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        self.leaf(Kind::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        self.leaf(Kind::Str(v.to_string()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        self.leaf(Kind::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let id = self.0.enter()?;
        let mut items = Vec::new();
        while let Some(n) = seq.next_element_seed(self)? {
            items.push(n);
        }
        Ok(Node {
            id,
            kind: Kind::Seq(items),
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let id = self.0.enter()?;
        let mut items = Vec::new();
        while let Some(k) = map.next_key_seed(self)? {
            let v = map.next_value_seed(self)?;
            items.push((k, v));
        }
        Ok(Node {
            id,
            kind: Kind::Map(items),
        })
    }
}

impl<'de> de::DeserializeSeed<'de> for NodeVisitor<'_> {
    type Value = Node;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(self)
    }
}

fn location(e: &serde_yaml::Error) -> Pos {
    e.location()
        .map(|l| Pos {
            line: l.line() as u32,
            col: l.column() as u32,
        })
        .unwrap_or(Pos { line: 1, col: 1 })
}

/// serde_yaml's message without its trailing " at line L column C".
fn bare_message(e: &serde_yaml::Error) -> String {
    let s = e.to_string();
    match s.find(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn run(text: &str, fail_at: Option<(u32, String)>) -> Result<Node, serde_yaml::Error> {
    let walk = Walk {
        next: Cell::new(0),
        fail_at,
    };
    serde_yaml::Deserializer::from_str(text).deserialize_any(NodeVisitor(&walk))
}

/// Parses a YAML document into numbered nodes; syntax errors come with their position.
pub fn parse(text: &str) -> Result<Node, YamlError> {
    if text.trim().is_empty() {
        return Err(YamlError {
            pos: Pos { line: 1, col: 1 },
            msg: "the document is empty".into(),
        });
    }
    run(text, None).map_err(|e| YamlError {
        pos: location(&e),
        msg: bare_message(&e),
    })
}

/// Turns a rejection of node `err.id` of `text` into an error with that node's position.
pub fn locate(text: &str, err: NodeError) -> YamlError {
    match run(text, Some((err.id, err.msg.clone()))) {
        Err(e) => YamlError {
            pos: location(&e),
            msg: err.msg,
        },
        // Cannot happen for a node number taken from a parse of the same text; keep the
        // message anyway.
        Ok(_) => YamlError {
            pos: Pos { line: 1, col: 1 },
            msg: err.msg,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_are_found_again() {
        let text = "a: 1\nb:\n  - [1, 2]\n  - x: .nan\n";
        let root = parse(text).unwrap();
        let Kind::Map(items) = &root.kind else {
            panic!("map expected")
        };
        let Kind::Seq(list) = &items[1].1.kind else {
            panic!("seq expected")
        };
        let e = locate(text, NodeError::at(&list[1], "bad"));
        assert_eq!(e.pos, Pos { line: 4, col: 5 });
        let Kind::Seq(inner) = &list[0].kind else {
            panic!("seq expected")
        };
        let e = locate(text, NodeError::at(&inner[1], "bad"));
        assert_eq!(e.pos, Pos { line: 3, col: 9 });
        let e = parse("a: [1, 2\n").unwrap_err();
        assert!(e.pos.line >= 1, "{e}");
    }
}
