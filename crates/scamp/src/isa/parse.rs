//! Program text: `name(arg, ...)` statements with optional `;`, `//` and `/* */`
//! comments, and the vendor's kernel delimiters, parsed with source positions.

use super::program::{Device, IsaCause, IsaError, Pos, Program, Stmt};
use super::reg::{DReg, Dir, DirSet, Reg};
use super::source::{strip_bom, MAX_PROGRAM_BYTES};
use super::table::{Operand, IGNORED};
use super::text::closest;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Int(i64),
    Open,
    Close,
    Comma,
    Semi,
    Pipe,
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    pos: Pos,
}

impl Lexer<'_> {
    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        // `\n`, `\r\n` and a lone `\r` (old Mac files) each end a line.
        let ends_line = c == '\n' || (c == '\r' && self.chars.peek() != Some(&'\n'));
        if ends_line {
            self.pos.line += 1;
            self.pos.col = 1;
        } else if c != '\r' {
            self.pos.col += 1;
        }
        Some(c)
    }

    fn tokens(mut self) -> Result<Vec<(Tok, Pos)>, IsaError> {
        let mut out = Vec::new();
        while let Some(&c) = self.chars.peek() {
            let start = self.pos;
            match c {
                c if c.is_whitespace() => {
                    self.bump();
                }
                '/' => {
                    self.bump();
                    match self.bump() {
                        Some('/') => {
                            while self.chars.peek().is_some_and(|&c| c != '\n' && c != '\r') {
                                self.bump();
                            }
                        }
                        Some('*') => {
                            let mut prev = ' ';
                            loop {
                                match self.bump() {
                                    Some('/') if prev == '*' => break,
                                    Some(c) => prev = c,
                                    None => {
                                        return Err(IsaError::new(
                                            start,
                                            IsaCause::UnterminatedComment,
                                        ))
                                    }
                                }
                            }
                        }
                        _ => return Err(IsaError::new(start, IsaCause::UnexpectedSlash)),
                    }
                }
                '(' | ')' | ',' | ';' | '|' => {
                    self.bump();
                    let t = match c {
                        '(' => Tok::Open,
                        ')' => Tok::Close,
                        ',' => Tok::Comma,
                        ';' => Tok::Semi,
                        _ => Tok::Pipe,
                    };
                    out.push((t, start));
                }
                c if c.is_ascii_alphabetic() || c == '_' => {
                    let mut s = String::new();
                    while let Some(&c) = self.chars.peek() {
                        if c.is_ascii_alphanumeric() || c == '_' {
                            s.push(c);
                            self.bump();
                        } else {
                            break;
                        }
                    }
                    out.push((Tok::Ident(s), start));
                }
                c if c.is_ascii_digit() || c == '-' || c == '+' => {
                    let mut s = String::new();
                    s.push(c);
                    self.bump();
                    while let Some(&c) = self.chars.peek() {
                        if c.is_ascii_digit() {
                            s.push(c);
                            self.bump();
                        } else {
                            break;
                        }
                    }
                    let v: i64 = s.parse().map_err(|_| {
                        IsaError::new(start, IsaCause::BadInteger { text: s.clone() })
                    })?;
                    out.push((Tok::Int(v), start));
                }
                other => {
                    return Err(IsaError::new(
                        start,
                        IsaCause::UnexpectedChar { found: other },
                    ))
                }
            }
        }
        Ok(out)
    }
}

/// A token as written.
fn token_text(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => s.clone(),
        Tok::Int(v) => v.to_string(),
        Tok::Open => "(".into(),
        Tok::Close => ")".into(),
        Tok::Comma => ",".into(),
        Tok::Semi => ";".into(),
        Tok::Pipe => "|".into(),
    }
}

fn operand(name: &str, pos: Pos) -> Result<Operand, IsaError> {
    if let Some(d) = Dir::parse(name) {
        return Ok(Operand::Dir(d));
    }
    if let Some(r) = Reg::parse(name) {
        return Ok(Operand::Reg(r));
    }
    if let Some(r) = DReg::parse(name) {
        return Ok(Operand::DReg(r));
    }
    let numbered = name
        .strip_prefix('R')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if numbered {
        return Err(IsaError::new(
            pos,
            IsaCause::UnknownDigital {
                name: name.to_string(),
                last: DReg::COUNT - 1,
            },
        ));
    }
    let known = [
        "north", "east", "south", "west", "NEWS", "PIX", "IN", "XN", "XE", "XS", "XW", "FLAG",
    ];
    Err(IsaError::new(
        pos,
        IsaCause::UnknownOperand {
            name: name.to_string(),
            suggestion: closest(name, known),
        },
    ))
}

/// Parses program text for `device`, checking every statement against the table.
/// Longer text is refused before parsing
/// ([`super::source::MAX_PROGRAM_BYTES`]), and a leading byte-order
/// mark is skipped.
///
/// ```
/// use scamp::{isa::Device, isa::parse_program};
/// let p = parse_program("mov(B, A);\nadd(C, A, B);", Device::default()).unwrap();
/// assert_eq!(p.instructions(), 2);
/// // An error names its line and column.
/// let e = parse_program("mov(B, A);\nadd(C, A, Q);", Device::default()).unwrap_err();
/// assert_eq!((e.pos.line, e.pos.col), (2, 11));
/// ```
pub fn parse_program(text: &str, device: Device) -> Result<Program, IsaError> {
    if text.len() as u64 > MAX_PROGRAM_BYTES {
        return Err(IsaError::new(
            Pos { line: 1, col: 1 },
            IsaCause::TooLarge {
                limit: MAX_PROGRAM_BYTES,
            },
        ));
    }
    let text = strip_bom(text);
    let toks = Lexer {
        chars: text.chars().peekable(),
        pos: Pos { line: 1, col: 1 },
    }
    .tokens()?;
    let mut calls = Cursor {
        toks: &toks,
        i: 0,
        end: end_pos(text),
    };
    let mut stmts = Vec::new();
    let mut kernel_open: Option<Pos> = None;
    while let Some(call) = calls.call()? {
        if IGNORED.contains(&call.name.as_str()) {
            kernel_open = delimiter(&call, kernel_open)?;
        } else {
            stmts.push(statement(call, device)?);
        }
    }
    if let Some(open) = kernel_open {
        return Err(IsaError::new(open, IsaCause::KernelNotClosed));
    }
    Ok(Program { stmts })
}

/// One `name(operand, ...)` as written, before the table checks it.
struct Call {
    name: String,
    pos: Pos,
    args: Vec<(Operand, Pos)>,
}

/// Checks `call` against the table; an error about one operand points at that operand.
fn statement(call: Call, device: Device) -> Result<Stmt, IsaError> {
    let (ops, poss): (Vec<Operand>, Vec<Pos>) = call.args.into_iter().unzip();
    Stmt::build(&call.name, ops, device, call.pos).map_err(|mut e| {
        if let Some(p) = e.operand.and_then(|n| poss.get(n)) {
            e.pos = *p;
        }
        e
    })
}

/// The tokens of a program and the reading position among them.
struct Cursor<'t> {
    toks: &'t [(Tok, Pos)],
    i: usize,
    /// Where the text ends, for errors about a missing token.
    end: Pos,
}

impl<'t> Cursor<'t> {
    fn peek(&self) -> Option<&'t (Tok, Pos)> {
        self.toks.get(self.i)
    }

    fn at(&self, want: &Tok) -> bool {
        self.peek().map(|t| &t.0) == Some(want)
    }

    /// "expected `what`, found ..." at the current token, or at the end of the text.
    fn unexpected(&self, what: &'static str) -> IsaError {
        let found = self.peek();
        IsaError::new(
            found.map_or(self.end, |t| t.1),
            IsaCause::Expected {
                expected: what,
                found: found.map(|t| token_text(&t.0)),
            },
        )
    }

    fn expect(&mut self, want: Tok, what: &'static str) -> Result<(), IsaError> {
        if !self.at(&want) {
            return Err(self.unexpected(what));
        }
        self.i += 1;
        Ok(())
    }

    /// The next call, skipping `;`; `None` at the end of the text.
    fn call(&mut self) -> Result<Option<Call>, IsaError> {
        while self.at(&Tok::Semi) {
            self.i += 1;
        }
        let Some((tok, pos)) = self.peek() else {
            return Ok(None);
        };
        let (Tok::Ident(name), pos) = (tok, *pos) else {
            return Err(self.unexpected("an instruction name"));
        };
        let name = name.clone();
        self.i += 1;
        self.expect(Tok::Open, "`(`")?;
        let args = self.operands()?;
        Ok(Some(Call { name, pos, args }))
    }

    /// Operands up to and including the closing `)`.
    fn operands(&mut self) -> Result<Vec<(Operand, Pos)>, IsaError> {
        let mut args = Vec::new();
        if self.at(&Tok::Close) {
            self.i += 1;
            return Ok(args);
        }
        loop {
            args.push(self.operand()?);
            match self.peek() {
                Some((Tok::Comma, _)) => self.i += 1,
                Some((Tok::Close, _)) => {
                    self.i += 1;
                    return Ok(args);
                }
                _ => return Err(self.unexpected("`,` or `)`")),
            }
        }
    }

    /// One operand: an integer, a name, or directions joined by `|`.
    fn operand(&mut self) -> Result<(Operand, Pos), IsaError> {
        match self.peek() {
            Some((Tok::Int(v), p)) => {
                self.i += 1;
                Ok((Operand::Int(*v), *p))
            }
            Some((Tok::Ident(s), p)) => {
                let p = *p;
                self.i += 1;
                let op = operand(s, p)?;
                if !self.at(&Tok::Pipe) {
                    return Ok((op, p));
                }
                let Operand::Dir(first) = op else {
                    return Err(IsaError::new(
                        p,
                        IsaCause::NotADirection { word: s.clone() },
                    ));
                };
                Ok((Operand::Dirs(self.more_directions(first)?), p))
            }
            _ => Err(self.unexpected("an operand")),
        }
    }

    /// The directions after `first`, each following a `|`.
    fn more_directions(&mut self, first: Dir) -> Result<DirSet, IsaError> {
        let mut set = DirSet::default();
        set.0[first.index()] = true;
        while self.at(&Tok::Pipe) {
            self.i += 1;
            match self.peek() {
                Some((Tok::Ident(s), p)) => match Dir::parse(s) {
                    Some(d) => set.0[d.index()] = true,
                    None => {
                        return Err(IsaError::new(
                            *p,
                            IsaCause::NotADirection { word: s.clone() },
                        ))
                    }
                },
                _ => return Err(self.unexpected("a direction after `|`")),
            }
            self.i += 1;
        }
        Ok(set)
    }
}

/// Opens the vendor's kernel delimiter.
pub(crate) const KERNEL_BEGIN: &str = "scamp5_kernel_begin";
/// Closes it.
pub(crate) const KERNEL_END: &str = "scamp5_kernel_end";

/// Checks a kernel delimiter, which takes no operands, and its pairing with the kernel
/// opened at `open`, if any. Returns where the kernel now stands open.
fn delimiter(call: &Call, open: Option<Pos>) -> Result<Option<Pos>, IsaError> {
    let (name, pos) = (call.name.as_str(), call.pos);
    if let Some((_, p)) = call.args.first() {
        return Err(IsaError::new(
            *p,
            IsaCause::TakesNoOperands {
                name: name.to_string(),
            },
        ));
    }
    match (name == KERNEL_BEGIN, open) {
        (true, None) => Ok(Some(pos)),
        (true, Some(opened)) => Err(IsaError::new(pos, IsaCause::NestedKernel { opened })),
        (false, Some(_)) => Ok(None),
        (false, None) => Err(IsaError::new(pos, IsaCause::KernelEndAlone)),
    }
}

fn end_pos(text: &str) -> Pos {
    // Lines end at `\n`, `\r\n` or a lone `\r`, as the lexer counts them.
    let lines: Vec<&str> = text
        .split("\r\n")
        .flat_map(|l| l.split(['\r', '\n']))
        .collect();
    let line = lines.len().max(1) as u32;
    let col = lines.last().map_or(0, |l| l.chars().count()) as u32 + 1;
    Pos { line, col }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Program, IsaError> {
        parse_program(s, Device::default())
    }

    #[test]
    fn causes_hold_the_values_involved() {
        let e = parse("add(A, B)").unwrap_err();
        let want = IsaCause::OperandCount {
            instruction: "add".into(),
            takes: vec![3, 4],
            got: 2,
        };
        assert_eq!(*e.cause, want);
        let e = parse("add(A, B, G)").unwrap_err();
        assert!(
            matches!(
                *e.cause,
                IsaCause::UnknownGeneral {
                    index: 3,
                    register: Reg::Gen(6),
                    general: 6,
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(e.operand, Some(2));
        let e = parse("mov(A, B) /*").unwrap_err();
        assert_eq!(*e.cause, IsaCause::UnterminatedComment);
        let e = parse("mov(A, B").unwrap_err();
        let want = IsaCause::Expected {
            expected: "`,` or `)`",
            found: None,
        };
        assert_eq!((*e.cause).clone(), want);
        assert_eq!(e.to_string(), "1:9: expected `,` or `)`, found end of file");
        let e = parse("divqq(C, A)").unwrap_err();
        assert!(
            matches!(&*e.cause, IsaCause::UnknownInstruction { name, .. } if name == "divqq"),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .starts_with("1:1: unknown instruction `divqq`"),
            "{e}"
        );
    }

    #[test]
    fn parses_vendor_text() {
        let p = parse(
            "scamp5_kernel_begin();\n// c\nget_image(A, D);\n/* x\n */ divq(B, A)\nmovx(D, B, east); \
             DNEWS(R5, R6, north|west, 1)\nscamp5_kernel_end();",
        )
        .unwrap();
        assert_eq!(p.instructions(), 4);
        assert_eq!(p.cycles(), 6 + 2 + 2 + 3);
        assert_eq!(p.stmts[1].pos, Pos { line: 5, col: 5 });
        assert_eq!(p.stmts[3].to_string(), "DNEWS(R5, R6, north|west, 1)");
    }

    #[test]
    fn edge_reach_counts_neighbour_steps() {
        let p = parse("movx(B, A, east); mov2x(C, B, north, west); add(D, A, B)").unwrap();
        assert_eq!(p.edge_reach(6), vec![0, 1, 3, 1, 0, 0]);
    }

    #[test]
    fn rejects_with_positions() {
        let e = parse("mov(A, B);\nfoo(A)").unwrap_err();
        assert_eq!((e.pos.line, e.pos.col), (2, 1));
        let e = parse("movx(A, B, up)").unwrap_err();
        assert_eq!(e.pos.col, 12);
        let e = parse("divq(C, C)").unwrap_err();
        assert!(
            e.cause.to_string().contains("appears twice"),
            "{}",
            e.cause.to_string()
        );
        let e = parse("add(A, B, G)").unwrap_err();
        assert!(
            e.cause.to_string().contains("unknown register `G`"),
            "{}",
            e.cause.to_string()
        );
        assert_eq!(e.pos.col, 11);
        let e = parse("in(A, 128)").unwrap_err();
        assert!(
            e.cause.to_string().contains("-128..127"),
            "{}",
            e.cause.to_string()
        );
        let e = parse("add(A, B)").unwrap_err();
        assert!(
            e.cause.to_string().contains("takes 3 or 4"),
            "{}",
            e.cause.to_string()
        );
        assert!(parse("mov(A, B").is_err());
        assert!(parse("mov(A, B) /*").is_err());
        assert!(parse("\u{0}").is_err());
    }

    #[test]
    fn kernel_delimiters_pair_up_and_take_nothing() {
        assert!(parse("scamp5_kernel_begin(); mov(A, B); scamp5_kernel_end();\nscamp5_kernel_begin(); scamp5_kernel_end()").is_ok());
        let e = parse("scamp5_kernel_begin(A);").unwrap_err();
        assert_eq!((e.pos.line, e.pos.col), (1, 21));
        let e = parse("mov(A, B);\n  scamp5_kernel_end();").unwrap_err();
        assert_eq!((e.pos.line, e.pos.col), (2, 3));
        assert!(
            e.cause.to_string().contains("without"),
            "{}",
            e.cause.to_string()
        );
        let e = parse("scamp5_kernel_begin();\nscamp5_kernel_begin();").unwrap_err();
        assert_eq!(e.pos.line, 2);
        let e = parse("mov(A, B);\n scamp5_kernel_begin(); mov(A, B);").unwrap_err();
        assert_eq!((e.pos.line, e.pos.col), (2, 2));
        assert!(
            e.cause.to_string().contains("never closed"),
            "{}",
            e.cause.to_string()
        );
        let e = parse("scamp5_kernel_end(east)").unwrap_err();
        assert!(
            e.cause.to_string().contains("takes no operands"),
            "{}",
            e.cause.to_string()
        );
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        let p = parse("\u{feff}mov(A, B);\nfoo(A)").unwrap_err();
        assert_eq!((p.pos.line, p.pos.col), (2, 1));
        assert_eq!(parse("\u{feff}mov(A, B)").unwrap().instructions(), 1);
    }
    #[test]
    fn messages_read_well_whatever_the_input() {
        // A lone CR ends a line: the third statement is at 3:1, not 1:23.
        let e = parse("mov(B, A);\rmov(C, B);\rfoo(A)").unwrap_err();
        assert_eq!((e.pos.line, e.pos.col), (3, 1));
        let e = parse("mov(B, A);\r\nfoo(A)").unwrap_err();
        assert_eq!((e.pos.line, e.pos.col), (2, 1));
        // A digital register beyond R12 is named as a register, like `G`.
        let e = parse("SET(R13)").unwrap_err();
        assert!(
            e.cause
                .to_string()
                .contains("unknown register `R13` (this device has R0..R12 and FLAG)"),
            "{}",
            e.cause.to_string()
        );
        // Slips are answered with the nearest name.
        let e = parse("movz(A, B, east)").unwrap_err();
        assert!(
            e.cause.to_string().contains("did you mean `mov"),
            "{}",
            e.cause.to_string()
        );
        let e = parse("movx(A, B, esat)").unwrap_err();
        assert!(
            e.cause.to_string().contains("did you mean `east`?"),
            "{}",
            e.cause.to_string()
        );
        // A 1 MB identifier is not echoed whole.
        let long = "x".repeat(1 << 20);
        let e = parse(&format!("{long}(A)")).unwrap_err();
        assert!(
            e.cause.to_string().len() < 200,
            "{}",
            e.cause.to_string().len()
        );
        let e = parse(&format!("mov(A, {long})")).unwrap_err();
        assert!(
            e.cause.to_string().len() < 200,
            "{}",
            e.cause.to_string().len()
        );
    }
}
