//! Runs every data-driven simulator case under `sim-tests/` (one `.case` file, any depth,
//! is one test of the standard harness, named `sim_case::FOLDER/FILE.case`). The format is
//! described in `sim-tests/README.md`; adding a case never needs Rust code.

use scamp::{isa::parse_program, isa::DReg, isa::Device, isa::Program, isa::Reg};
use scamp::{run, Array, EdgeMode, RunReport, DEFAULT_CLOCK_HZ, N, PES};
use scamp::{GreyImage, PlaneValues, Preload, Setup, Watched};
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------
// Expressions: numbers, `row`, `col`, `img`, registers (at this PE or `REG[r, c]`),
// + - * / %, comparisons (1 or 0), && || !, `c ? a : b`, min/max/abs/floor.
// ---------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Ident(String),
    Op(&'static str),
}

fn lex(s: &str) -> Result<Vec<Tok>, String> {
    const OPS: &[&str] = &[
        "..", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "(", ")", "[", "]", ",",
        "<", ">", "!", "?", ":",
    ];
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    'outer: while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && b.get(i + 1).is_some_and(char::is_ascii_digit)) {
            let start = i;
            while i < b.len()
                && (b[i].is_ascii_digit()
                    || (b[i] == '.' && b.get(i + 1) != Some(&'.'))
                    || b[i] == 'e'
                    || ((b[i] == '-' || b[i] == '+') && i > start && b[i - 1] == 'e'))
            {
                i += 1;
            }
            let t: String = b[start..i].iter().collect();
            out.push(Tok::Num(
                t.parse().map_err(|_| format!("bad number `{t}`"))?,
            ));
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(b[start..i].iter().collect()));
            continue;
        }
        for op in OPS {
            let oc: Vec<char> = op.chars().collect();
            if b[i..].starts_with(&oc) {
                out.push(Tok::Op(op));
                i += oc.len();
                continue 'outer;
            }
        }
        return Err(format!("unexpected character `{c}` in `{s}`"));
    }
    Ok(out)
}

/// A location the expressions and expectations can name.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Loc {
    Analog(Reg),
    Digital(DReg),
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Loc::Analog(r) => r.fmt(f),
            Loc::Digital(d) => d.fmt(f),
        }
    }
}

fn parse_loc(name: &str) -> Option<Loc> {
    if let Some(d) = DReg::parse(name) {
        return Some(Loc::Digital(d));
    }
    match Reg::parse(name)? {
        r @ (Reg::Gen(_) | Reg::News | Reg::Pix) => Some(Loc::Analog(r)),
        _ => None,
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

impl Op {
    fn of(s: &str) -> Op {
        match s {
            "+" => Op::Add,
            "-" => Op::Sub,
            "*" => Op::Mul,
            "/" => Op::Div,
            "%" => Op::Rem,
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            "==" => Op::Eq,
            "!=" => Op::Ne,
            "&&" => Op::And,
            "||" => Op::Or,
            _ => unreachable!("operator {s}"),
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Fun {
    Min,
    Max,
    Abs,
    Floor,
}

#[derive(Clone, Debug)]
enum Expr {
    Num(f64),
    Row,
    Col,
    Img(Option<Box<(Expr, Expr)>>),
    Reg(Loc, Option<Box<(Expr, Expr)>>),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(Op, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Call(Fun, Vec<Expr>),
}

struct P<'a> {
    t: &'a [Tok],
    i: usize,
}

impl P<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }
    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Op(o)) if *o == op) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn want(&mut self, op: &str) -> Result<(), String> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(format!("expected `{op}`, found {:?}", self.peek()))
        }
    }
    fn expr(&mut self) -> Result<Expr, String> {
        let c = self.bin(0)?;
        if self.eat("?") {
            let a = self.expr()?;
            self.want(":")?;
            let b = self.expr()?;
            return Ok(Expr::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }
    fn bin(&mut self, level: usize) -> Result<Expr, String> {
        const LEVELS: &[&[&str]] = &[
            &["||"],
            &["&&"],
            &["==", "!="],
            &["<", "<=", ">", ">="],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.bin(level + 1)?;
        'again: loop {
            for op in LEVELS[level] {
                if self.eat(op) {
                    let rhs = self.bin(level + 1)?;
                    lhs = Expr::Bin(Op::of(op), Box::new(lhs), Box::new(rhs));
                    continue 'again;
                }
            }
            return Ok(lhs);
        }
    }
    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat("-") {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        if self.eat("+") {
            return self.unary();
        }
        if self.eat("!") {
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        self.atom()
    }
    fn index(&mut self) -> Result<Option<Box<(Expr, Expr)>>, String> {
        if !self.eat("[") {
            return Ok(None);
        }
        let r = self.expr()?;
        self.want(",")?;
        let c = self.expr()?;
        self.want("]")?;
        Ok(Some(Box::new((r, c))))
    }
    fn atom(&mut self) -> Result<Expr, String> {
        match self.peek().cloned() {
            Some(Tok::Num(v)) => {
                self.i += 1;
                Ok(Expr::Num(v))
            }
            Some(Tok::Op("(")) => {
                self.i += 1;
                let e = self.expr()?;
                self.want(")")?;
                Ok(e)
            }
            Some(Tok::Ident(name)) => {
                self.i += 1;
                match name.as_str() {
                    "row" => return Ok(Expr::Row),
                    "col" => return Ok(Expr::Col),
                    "img" => return Ok(Expr::Img(self.index()?)),
                    "min" | "max" | "abs" | "floor" => {
                        self.want("(")?;
                        let mut args = vec![self.expr()?];
                        while self.eat(",") {
                            args.push(self.expr()?);
                        }
                        self.want(")")?;
                        let ok = match name.as_str() {
                            "abs" | "floor" => args.len() == 1,
                            _ => args.len() >= 2,
                        };
                        if !ok {
                            return Err(format!("wrong number of arguments to {name}"));
                        }
                        let f = match name.as_str() {
                            "min" => Fun::Min,
                            "max" => Fun::Max,
                            "abs" => Fun::Abs,
                            _ => Fun::Floor,
                        };
                        return Ok(Expr::Call(f, args));
                    }
                    _ => {}
                }
                let loc = parse_loc(&name).ok_or_else(|| format!("unknown name `{name}`"))?;
                Ok(Expr::Reg(loc, self.index()?))
            }
            other => Err(format!("expected a value, found {other:?}")),
        }
    }
}

fn parse_expr(s: &str) -> Result<Expr, String> {
    let t = lex(s)?;
    let mut p = P { t: &t, i: 0 };
    let e = p.expr()?;
    if p.i != t.len() {
        return Err(format!("unexpected {:?} in `{s}`", t[p.i]));
    }
    Ok(e)
}

/// What an expression is evaluated against.
struct Env<'a> {
    array: &'a Array,
    image: &'a [u8],
}

fn pe_index(r: f64, c: f64) -> Result<usize, String> {
    let ok = |v: f64| v.fract() == 0.0 && (0.0..N as f64).contains(&v);
    if ok(r) && ok(c) {
        Ok(r as usize * N + c as usize)
    } else {
        Err(format!("PE [{r}, {c}] is outside the array"))
    }
}

fn read_loc(array: &Array, loc: Loc, i: usize) -> Result<f64, String> {
    match loc {
        Loc::Analog(r) => array
            .plane(r)
            .map(|p| f64::from(p[i]))
            .ok_or_else(|| format!("no register {r} on this device")),
        Loc::Digital(d) => Ok(f64::from(array.bits(d)[i])),
    }
}

fn at(ix: &Option<Box<(Expr, Expr)>>, env: &Env, r: usize, c: usize) -> Result<usize, String> {
    match ix {
        None => Ok(r * N + c),
        Some(b) => pe_index(eval(&b.0, env, r, c)?, eval(&b.1, env, r, c)?),
    }
}

fn truth(v: bool) -> f64 {
    if v {
        1.0
    } else {
        0.0
    }
}

fn eval(e: &Expr, env: &Env, r: usize, c: usize) -> Result<f64, String> {
    Ok(match e {
        Expr::Num(v) => *v,
        Expr::Row => r as f64,
        Expr::Col => c as f64,
        Expr::Img(ix) => f64::from(env.image[at(ix, env, r, c)?]),
        Expr::Reg(loc, ix) => read_loc(env.array, *loc, at(ix, env, r, c)?)?,
        Expr::Neg(x) => -eval(x, env, r, c)?,
        Expr::Not(x) => truth(eval(x, env, r, c)? == 0.0),
        Expr::Cond(k, x, y) => {
            if eval(k, env, r, c)? != 0.0 {
                eval(x, env, r, c)?
            } else {
                eval(y, env, r, c)?
            }
        }
        Expr::Bin(op, x, y) => {
            let x = eval(x, env, r, c)?;
            let y = eval(y, env, r, c)?;
            match op {
                Op::Add => x + y,
                Op::Sub => x - y,
                Op::Mul => x * y,
                Op::Div => x / y,
                Op::Rem => {
                    // Integer fast path (fmod is slow and most uses are `col % 2`).
                    if x.fract() == 0.0 && y.fract() == 0.0 && x.abs() < 1e15 && y != 0.0 {
                        (x as i64).rem_euclid(y as i64) as f64
                    } else {
                        x.rem_euclid(y)
                    }
                }
                Op::Lt => truth(x < y),
                Op::Le => truth(x <= y),
                Op::Gt => truth(x > y),
                Op::Ge => truth(x >= y),
                Op::Eq => truth(x == y),
                Op::Ne => truth(x != y),
                Op::And => truth(x != 0.0 && y != 0.0),
                Op::Or => truth(x != 0.0 || y != 0.0),
            }
        }
        Expr::Call(f, args) => {
            let mut acc = eval(&args[0], env, r, c)?;
            for a in &args[1..] {
                let v = eval(a, env, r, c)?;
                acc = match f {
                    Fun::Min => acc.min(v),
                    _ => acc.max(v),
                };
            }
            match f {
                Fun::Abs => acc.abs(),
                Fun::Floor => acc.floor(),
                _ => acc,
            }
        }
    })
}

// ---------------------------------------------------------------------------------------
// Targets: `A`, `A[3, 4]`, `A[0..3, *]`, `R5[255, 0..255]` (inclusive ranges).
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct Span(usize, usize);

#[derive(Clone, Debug)]
struct Target {
    loc: Loc,
    rows: Span,
    cols: Span,
    text: String,
}

fn parse_span(s: &str) -> Result<Span, String> {
    let s = s.trim();
    let num = |t: &str| -> Result<usize, String> {
        let v: usize = t
            .trim()
            .parse()
            .map_err(|_| format!("bad index `{t}` (expected 0..255, a..b or *)"))?;
        if v >= N {
            return Err(format!("index {v} is outside the array"));
        }
        Ok(v)
    };
    if s == "*" {
        return Ok(Span(0, N - 1));
    }
    if let Some((a, b)) = s.split_once("..") {
        let (a, b) = (num(a)?, num(b)?);
        if a > b {
            return Err(format!("empty range `{s}`"));
        }
        return Ok(Span(a, b));
    }
    let v = num(s)?;
    Ok(Span(v, v))
}

fn parse_target(s: &str) -> Result<Target, String> {
    let s = s.trim();
    let (name, rows, cols) = match s.split_once('[') {
        None => (s, Span(0, N - 1), Span(0, N - 1)),
        Some((name, rest)) => {
            let inner = rest
                .strip_suffix(']')
                .ok_or_else(|| format!("missing `]` in `{s}`"))?;
            let (r, c) = inner
                .split_once(',')
                .ok_or_else(|| format!("expected [ROW, COL] in `{s}`"))?;
            (name.trim(), parse_span(r)?, parse_span(c)?)
        }
    };
    let loc = parse_loc(name).ok_or_else(|| format!("unknown register `{name}`"))?;
    Ok(Target {
        loc,
        rows,
        cols,
        text: s.to_string(),
    })
}

// ---------------------------------------------------------------------------------------
// Case files.
// ---------------------------------------------------------------------------------------

enum Expect {
    Value(Target, Expr, String),
    Cycles(u64),
    Instructions(u64),
    Warning(String),
    Error(u32, u32, String),
}

enum ProgramSrc {
    Inline(String),
    File(PathBuf),
}

enum ImageSrc {
    File(PathBuf),
    Expr(Expr, String),
}

struct Case {
    edge: EdgeMode,
    general: usize,
    tolerance: f64,
    image: Option<ImageSrc>,
    sets: Vec<(usize, Target, Expr)>,
    program: ProgramSrc,
    expects: Vec<(usize, Expect)>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Reads a `.case` file (sim-tests/README.md): header keys, `set` lines, the program
/// and the `expect:` section; an error names its line.
fn parse_case(text: &str) -> Result<Case, String> {
    let mut p = CaseParser::default();
    for (n, raw) in text.lines().enumerate() {
        let ln = n + 1;
        p.line(ln, raw).map_err(|e| format!("line {ln}: {e}"))?;
    }
    p.finish()
}

/// [`parse_case`] between lines: the case so far, which section the next line belongs
/// to, and the inline program read so far.
struct CaseParser {
    case: Case,
    have_program: bool,
    have_expect: bool,
    in_program: bool,
    in_expect: bool,
    prog: String,
}

impl Default for CaseParser {
    fn default() -> Self {
        CaseParser {
            case: Case {
                edge: EdgeMode::Zero,
                general: Device::default().general,
                tolerance: 1e-4,
                image: None,
                sets: Vec::new(),
                program: ProgramSrc::Inline(String::new()),
                expects: Vec::new(),
            },
            have_program: false,
            have_expect: false,
            in_program: false,
            in_expect: false,
            prog: String::new(),
        }
    }
}

impl CaseParser {
    /// Reads line `ln` (`raw`, untrimmed); errors come without the line number.
    fn line(&mut self, ln: usize, raw: &str) -> Result<(), String> {
        let trimmed = raw.trim();
        if self.in_program && trimmed != "expect:" {
            self.prog.push_str(raw);
            self.prog.push('\n');
            return Ok(());
        }
        // Outside the program, `#` starts a comment (at the start or after a space).
        let trimmed = match trimmed.find(" #") {
            Some(i) => trimmed[..i].trim_end(),
            None if trimmed.starts_with('#') => "",
            None => trimmed,
        };
        if trimmed.is_empty() {
            return Ok(());
        }
        if self.in_expect {
            let e = parse_expect(trimmed)?;
            self.case.expects.push((ln, e));
            return Ok(());
        }
        if trimmed == "expect:" {
            if self.in_program {
                self.case.program = ProgramSrc::Inline(std::mem::take(&mut self.prog));
                self.in_program = false;
            }
            self.in_expect = true;
            self.have_expect = true;
            return Ok(());
        }
        if let Some(rest) = trimmed.strip_prefix("set ") {
            let (lhs, rhs) = rest
                .split_once('=')
                .ok_or_else(|| "expected `set REG = EXPR`".to_string())?;
            let t = parse_target(lhs)?;
            if matches!(t.loc, Loc::Analog(Reg::Pix)) {
                return Err("PIX is set through `image:`".into());
            }
            self.case.sets.push((ln, t, parse_expr(rhs)?));
            return Ok(());
        }
        let (key, value) = trimmed
            .split_once(':')
            .ok_or_else(|| format!("cannot read `{trimmed}`"))?;
        self.key(key.trim(), value.trim())
    }

    /// One `key: value` line of the header.
    fn key(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "edge" => {
                self.case.edge = value
                    .parse()
                    .map_err(|e: scamp::ValueError| e.to_string())?
            }
            "registers" => {
                self.case.general = value
                    .parse()
                    .ok()
                    .filter(|g| (1..=26).contains(g))
                    .ok_or_else(|| format!("`{value}` is not a register count"))?
            }
            "tolerance" => {
                self.case.tolerance = value
                    .parse()
                    .map_err(|_| format!("`{value}` is not a number"))?
            }
            "image" => self.case.image = Some(parse_image(value)?),
            "program" => {
                self.first_program()?;
                if value.is_empty() {
                    self.in_program = true;
                } else {
                    self.case.program = ProgramSrc::Inline(value.to_string());
                }
            }
            "program-file" => {
                self.first_program()?;
                self.case.program = ProgramSrc::File(root().join(value));
            }
            other => return Err(format!("unknown key `{other}`")),
        }
        Ok(())
    }

    /// Refuses a second `program:` or `program-file:`.
    fn first_program(&mut self) -> Result<(), String> {
        if self.have_program {
            return Err("a second program".into());
        }
        self.have_program = true;
        Ok(())
    }

    /// The case, once every line is read.
    fn finish(mut self) -> Result<Case, String> {
        if self.in_program {
            self.case.program = ProgramSrc::Inline(self.prog);
        }
        if !self.have_program {
            return Err("no `program:` or `program-file:`".into());
        }
        if !self.have_expect || self.case.expects.is_empty() {
            return Err("no expectations (an `expect:` section is required)".into());
        }
        Ok(self.case)
    }
}

/// One line of the `expect:` section.
fn parse_expect(line: &str) -> Result<Expect, String> {
    if let Some(rest) = line.strip_prefix("error:") {
        let mut parts = rest.trim().splitn(3, ':');
        let l = parts.next().unwrap_or("").trim().parse();
        let c = parts.next().unwrap_or("").trim().parse();
        let msg = parts.next().unwrap_or("").trim().to_string();
        return match (l, c) {
            (Ok(l), Ok(c)) if !msg.is_empty() => Ok(Expect::Error(l, c, msg)),
            _ => Err("expected `error: LINE:COL: message`".into()),
        };
    }
    if let Some(rest) = line.strip_prefix("warning:") {
        return Ok(Expect::Warning(rest.trim().to_string()));
    }
    let (lhs, rhs) = line
        .split_once('=')
        .ok_or_else(|| format!("cannot read expectation `{line}`"))?;
    let (lhs, rhs) = (lhs.trim(), rhs.trim());
    let count =
        || -> Result<u64, String> { rhs.parse().map_err(|_| format!("`{rhs}` is not a count")) };
    Ok(match lhs {
        "cycles" => Expect::Cycles(count()?),
        "instructions" => Expect::Instructions(count()?),
        _ => Expect::Value(parse_target(lhs)?, parse_expr(rhs)?, rhs.to_string()),
    })
}

/// The value of `image:`: an image file (in `images/` unless a path is given) or an
/// expression in `row` and `col`.
fn parse_image(value: &str) -> Result<ImageSrc, String> {
    let lower = value.to_ascii_lowercase();
    if [".png", ".jpg", ".jpeg", ".pgm"]
        .iter()
        .any(|e| lower.ends_with(e))
    {
        let p = if value.contains('/') {
            root().join(value)
        } else {
            root().join("images").join(value)
        };
        Ok(ImageSrc::File(p))
    } else {
        Ok(ImageSrc::Expr(parse_expr(value)?, value.to_string()))
    }
}

fn build_image(src: &Option<ImageSrc>) -> Result<Vec<u8>, String> {
    match src {
        None => Ok(vec![0; PES]),
        Some(ImageSrc::File(p)) => scamp::load_image(p)
            .map(|g| g.pixels)
            .map_err(|e| e.to_string()),
        Some(ImageSrc::Expr(e, text)) => {
            let empty = Array::new(1, EdgeMode::Zero);
            let zeros = vec![0u8; PES];
            let env = Env {
                array: &empty,
                image: &zeros,
            };
            let mut out = vec![0u8; PES];
            for r in 0..N {
                for c in 0..N {
                    let v = eval(e, &env, r, c)?;
                    if !(0.0..=255.0).contains(&v) || v.fract() != 0.0 {
                        return Err(format!(
                            "image `{text}` gives {v} at [{r}, {c}]; pixels are integers 0..255"
                        ));
                    }
                    out[r * N + c] = v as u8;
                }
            }
            Ok(out)
        }
    }
}

/// Runs one case; returns the failures (empty when it passes).
fn run_case(path: &Path) -> Vec<String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return vec![format!("cannot read: {e}")],
    };
    let case = match parse_case(&text) {
        Ok(c) => c,
        Err(e) => return vec![format!("malformed case: {e}")],
    };
    let program = match load_program(&case) {
        Ok(Some(p)) => p,
        Ok(None) => return Vec::new(),
        Err(fails) => return fails,
    };
    let image = match build_image(&case.image) {
        Ok(i) => i,
        Err(e) => return vec![format!("image: {e}")],
    };
    let mut array = match prepared(&case, &image) {
        Ok(a) => a,
        Err(e) => return vec![e],
    };
    let report = match run(&mut array, &program, 1, DEFAULT_CLOCK_HZ) {
        Ok(r) => r,
        Err(e) => return vec![format!("run failed: {}: {}", e.pos, e.cause)],
    };
    let env = Env {
        array: &array,
        image: &image,
    };
    let mut fails = Vec::new();
    for (ln, e) in &case.expects {
        if let Err(f) = check(*ln, e, &env, &report, case.tolerance) {
            fails.push(f);
        }
    }
    let warned = case
        .expects
        .iter()
        .any(|(_, e)| matches!(e, Expect::Warning(_)));
    if !warned && !report.warnings.is_empty() {
        fails.push(format!(
            "unexpected warnings (add `warning: TEXT` if intended): {:?}",
            report
                .warnings
                .iter()
                .map(|w| format!("{}: {}", w.pos, w.kind))
                .collect::<Vec<_>>()
        ));
    }
    fails
}

/// The case's program, or `None` when it is rejected as the case expects.
fn load_program(case: &Case) -> Result<Option<Program>, Vec<String>> {
    let program_text = match &case.program {
        ProgramSrc::Inline(t) => t.clone(),
        ProgramSrc::File(p) => std::fs::read_to_string(p)
            .map_err(|e| vec![format!("cannot read {}: {e}", p.display())])?,
    };
    let device = Device {
        general: case.general,
    };
    let expected_error = case.expects.iter().find_map(|(ln, e)| match e {
        Expect::Error(l, c, m) => Some((*ln, *l, *c, m.clone())),
        _ => None,
    });
    match (parse_program(&program_text, device), expected_error) {
        (Err(e), Some((ln, l, c, m))) => {
            if (e.pos.line, e.pos.col) != (l, c) || !e.cause.to_string().contains(&m) {
                return Err(vec![format!(
                    "line {ln}: expected rejection `{l}:{c}: ...{m}...`, got `{}: {}`",
                    e.pos, e.cause
                )]);
            }
            Ok(None)
        }
        (Err(e), None) => Err(vec![format!("program rejected: {}: {}", e.pos, e.cause)]),
        (Ok(_), Some((ln, l, c, m))) => Err(vec![format!(
            "line {ln}: expected rejection `{l}:{c}: ...{m}...`, but the program parsed"
        )]),
        (Ok(p), None) => Ok(Some(p)),
    }
}

/// The case's array: the image exposed, then the `set` lines applied in order, each
/// computed on the array the lines before it left. Each line becomes a whole-plane
/// preload of a `Setup`, the way the command and Python preload a run.
fn prepared(case: &Case, image: &[u8]) -> Result<Array, String> {
    let mut setup = Setup::new(GreyImage {
        pixels: image.to_vec(),
        resized_from: None,
    });
    setup.general = case.general;
    setup.edge = case.edge;
    let mut array = setup.array();
    for (ln, t, e) in &case.sets {
        let mut vals = Vec::new();
        let env = Env {
            array: &array,
            image,
        };
        for r in t.rows.0..=t.rows.1 {
            for c in t.cols.0..=t.cols.1 {
                let v = eval(e, &env, r, c)
                    .map_err(|err| format!("line {ln}: set {}: {err}", t.text))?;
                vals.push((r * N + c, v));
            }
        }
        let preload = match t.loc {
            Loc::Analog(reg) => {
                let mut plane = match (reg, array.plane(reg)) {
                    (Reg::Gen(_) | Reg::News, Some(p)) => p.to_vec(),
                    _ => return Err(format!("line {ln}: cannot preload {reg}")),
                };
                for (i, v) in vals {
                    plane[i] = v as f32;
                }
                Preload {
                    register: Watched::Analogue(reg),
                    values: PlaneValues::Analogue(plane),
                }
            }
            Loc::Digital(d) => {
                if let Some((_, v)) = vals.iter().find(|(_, v)| *v != 0.0 && *v != 1.0) {
                    return Err(format!("line {ln}: {d} takes 0 or 1, got {v}"));
                }
                let mut plane = array.bits(d).to_vec();
                for (i, v) in vals {
                    plane[i] = v as u8;
                }
                Preload {
                    register: Watched::Digital(d),
                    values: PlaneValues::Bits(plane),
                }
            }
        };
        setup.preloads.push(preload);
        array = setup.array();
    }
    Ok(array)
}

/// Checks one expectation (from line `ln`) against the run.
fn check(ln: usize, e: &Expect, env: &Env, report: &RunReport, tol: f64) -> Result<(), String> {
    match e {
        Expect::Error(..) => Ok(()),
        Expect::Cycles(n) if report.cycles != *n => Err(format!(
            "line {ln}: cycles: expected {n}, got {}",
            report.cycles
        )),
        Expect::Instructions(n) if report.instructions != *n => Err(format!(
            "line {ln}: instructions: expected {n}, got {}",
            report.instructions
        )),
        Expect::Warning(m)
            if !report
                .warnings
                .iter()
                .any(|w| w.kind.to_string().contains(m.as_str())) =>
        {
            Err(format!(
                "line {ln}: expected a warning containing `{m}`, got {:?}",
                report.warnings.iter().map(|w| &w.kind).collect::<Vec<_>>()
            ))
        }
        Expect::Value(t, ex, text) => check_value(t, ex, env, tol)
            .map_err(|m| format!("line {ln}: `{} = {text}`: {m}", t.text)),
        _ => Ok(()),
    }
}

/// Compares every PE of `t` with `ex`; on a difference says how many and where first.
fn check_value(t: &Target, ex: &Expr, env: &Env, tol: f64) -> Result<(), String> {
    let mut bad = 0usize;
    let mut first = None;
    for r in t.rows.0..=t.rows.1 {
        for c in t.cols.0..=t.cols.1 {
            let want = eval(ex, env, r, c)?;
            let got = read_loc(env.array, t.loc, r * N + c)?;
            if !((got - want).abs() <= tol || (got.is_nan() && want.is_nan())) {
                bad += 1;
                first.get_or_insert((r, c, got, want));
            }
        }
    }
    match first {
        None => Ok(()),
        Some((r, c, got, want)) => {
            let n = (t.rows.1 - t.rows.0 + 1) * (t.cols.1 - t.cols.0 + 1);
            Err(format!(
                "{bad} of {n} PEs differ; first at {}[{r}, {c}]: expected {want}, got {got}",
                t.loc
            ))
        }
    }
}

/// The failures of one case, printed one per line (the harness shows an error's `Debug`).
struct Failures(Vec<String>);

impl std::fmt::Display for Failures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join("\n"))
    }
}

impl std::fmt::Debug for Failures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Failures {}

/// One case as one test: its failures are the test's error.
fn sim_case(path: &Path) -> datatest_stable::Result<()> {
    let fails = run_case(path);
    if fails.is_empty() {
        Ok(())
    } else {
        Err(Box::new(Failures(fails)))
    }
}

datatest_stable::harness! {
    { test = sim_case, root = "sim-tests", pattern = r"\.case$" },
}
