//! Filter specs: the YAML format of docs/spec-format.md, read into [`Spec`] with every rejection
//! positioned at the offending node.

use super::approx;
use super::yaml::{self, Kind, Node, NodeError, YamlError};
use crate::isa::source::{strip_bom, MAX_SPEC_BYTES};
use crate::isa::Reg;
use crate::verify::range::InputRange;

/// Which instructions the generator may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Ops {
    /// Every linear macro of docs/isa.md.
    #[default]
    All,
    /// AUKE's set: `mov`, `movx`, two-source `add`, `sub`, `neg`, `divq`, `res`.
    Basic,
}

impl Ops {
    /// Parses `all` / `basic`.
    pub fn parse(s: &str) -> Option<Ops> {
        match s {
            "all" => Some(Ops::All),
            "basic" => Some(Ops::Basic),
            _ => None,
        }
    }
}

/// One kernel of a spec.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelSpec {
    /// Register that must hold the result.
    pub out: Reg,
    /// Common factor applied to every weight.
    pub scale: f64,
    /// Rows north to south, columns west to east.
    pub weights: Vec<Vec<f64>>,
}

/// `approximation:` settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ApproxParams {
    /// Largest power-of-two denominator exponent tried.
    pub max_depth: u32,
    /// Largest summed absolute error accepted per kernel.
    pub max_error: f64,
}

impl Default for ApproxParams {
    fn default() -> Self {
        ApproxParams {
            max_depth: 8,
            max_error: 0.0,
        }
    }
}

/// `search:` settings (each may be overridden on the command line).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct SearchParams {
    /// Wall-clock budget in seconds.
    pub time_limit: Option<f64>,
    /// Worker threads.
    pub workers: Option<usize>,
    /// Instruction set.
    pub ops: Option<Ops>,
    /// Largest number of search nodes.
    pub node_limit: Option<u64>,
    /// Seed for ordering ties.
    pub seed: Option<u64>,
    /// Memory cap in MiB.
    pub memory_limit_mb: Option<u64>,
    /// Deterministic work budget: search nodes per worker.
    pub work: Option<u64>,
}

/// A filter spec.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// Name used in the program header.
    pub name: String,
    /// Register holding the captured image.
    pub input: Reg,
    /// Registers the program may use (may be more than six).
    pub registers: Vec<Reg>,
    /// Kernels to compute.
    pub kernels: Vec<KernelSpec>,
    /// Approximation settings.
    pub approximation: ApproxParams,
    /// Search settings.
    pub search: SearchParams,
    /// The values input pixels can take (`input_range: [lo, hi]`, default -128..127).
    pub input_range: InputRange,
}

impl Spec {
    /// Number of general registers the device needs so that every listed one exists.
    pub fn general_count(&self) -> usize {
        self.registers
            .iter()
            .map(|r| match r {
                Reg::Gen(i) => usize::from(*i) + 1,
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }
}

/// Largest kernel side accepted (the search could not handle more anyway).
pub const MAX_SIDE: usize = 31;

/// Largest search budget accepted, in seconds (one day). The budget is a timer the search
/// polls; a longer one is almost certainly a typo, and infinity would never stop.
pub const MAX_TIME_LIMIT: f64 = 86_400.0;

/// Largest number of search workers (workers beyond the cores take turns on them).
pub const MAX_WORKERS: usize = 1024;

type R<T> = Result<T, NodeError>;

fn map_items<'a>(n: &'a Node, what: &str) -> R<&'a [(Node, Node)]> {
    match &n.kind {
        Kind::Map(items) => Ok(items),
        _ => Err(NodeError::at(
            n,
            format!("{what} must be a mapping, found {}", n.type_name()),
        )),
    }
}

fn seq_items<'a>(n: &'a Node, what: &str) -> R<&'a [Node]> {
    match &n.kind {
        Kind::Seq(items) => Ok(items),
        _ => Err(NodeError::at(
            n,
            format!("{what} must be a list, found {}", n.type_name()),
        )),
    }
}

/// Checks keys against `allowed` (unknown and repeated keys are errors) and returns the
/// entries by key.
fn fields<'a>(n: &'a Node, what: &str, allowed: &[&str]) -> R<Vec<(&'a str, &'a Node, &'a Node)>> {
    let mut out: Vec<(&str, &Node, &Node)> = Vec::new();
    for (k, v) in map_items(n, what)? {
        let Some(key) = k.as_str() else {
            return Err(NodeError::at(k, format!("keys of {what} must be names")));
        };
        if !allowed.contains(&key) {
            return Err(NodeError::at(
                k,
                format!(
                    "unknown key `{key}` in {what} (expected one of: {})",
                    allowed.join(", ")
                ),
            ));
        }
        if out.iter().any(|(seen, _, _)| *seen == key) {
            return Err(NodeError::at(k, format!("key `{key}` given twice")));
        }
        out.push((key, k, v));
    }
    Ok(out)
}

fn get<'a>(f: &[(&'a str, &'a Node, &'a Node)], key: &str) -> Option<(&'a Node, &'a Node)> {
    f.iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, k, v)| (*k, *v))
}

/// General registers of SCAMP-5 (`A..F`): what a spec may name unless it declares a
/// larger register file with `general_registers`.
pub const DEVICE_GENERAL: usize = 6;

/// Largest register file a spec may declare (`A..Z`).
pub const MAX_GENERAL: usize = 26;

fn register(n: &Node, general: usize) -> R<Reg> {
    let s = match &n.kind {
        Kind::Str(s) => s.as_str(),
        _ => {
            return Err(NodeError::at(
                n,
                format!(
                    "a register name (A, B, ...) expected, found {}",
                    n.type_name()
                ),
            ))
        }
    };
    let last = Reg::general_name(general - 1);
    match Reg::parse(s) {
        Some(r @ Reg::Gen(i)) if usize::from(i) < general => Ok(r),
        Some(Reg::Gen(_)) if general == DEVICE_GENERAL => Err(NodeError::at(
            n,
            format!(
                "`{s}` is not a register of SCAMP-5 (A..{last}); a spec for a larger register \
                 file declares it with `general_registers: N`"
            ),
        )),
        Some(Reg::Gen(_)) => Err(NodeError::at(
            n,
            format!("`{s}` is beyond the declared register file (A..{last})"),
        )),
        _ => Err(NodeError::at(
            n,
            format!("`{s}` is not a general register (A..{last})"),
        )),
    }
}

/// A number written as an integer, a decimal or a fraction string such as `1/16`.
fn number(n: &Node, what: &str) -> R<f64> {
    let v = match &n.kind {
        Kind::Int(i) => *i as f64,
        Kind::Float(f) => *f,
        Kind::Str(s) => parse_fraction(s).ok_or_else(|| {
            NodeError::at(n, format!("{what}: `{s}` is not a number or a fraction"))
        })?,
        _ => {
            return Err(NodeError::at(
                n,
                format!("{what} must be a number, found {}", n.type_name()),
            ))
        }
    };
    if !v.is_finite() {
        return Err(NodeError::at(n, format!("{what} must be finite, got {v}")));
    }
    Ok(v)
}

/// Parses `p/q`, `-p/q` or a plain decimal.
pub fn parse_fraction(s: &str) -> Option<f64> {
    let s = s.trim();
    match s.split_once('/') {
        Some((p, q)) => {
            let p: f64 = p.trim().parse().ok()?;
            let q: f64 = q.trim().parse().ok()?;
            (q != 0.0).then_some(p / q).filter(|v| v.is_finite())
        }
        None => s.parse().ok(),
    }
}

fn integer(n: &Node, what: &str, lo: i128, hi: i128) -> R<i128> {
    match &n.kind {
        Kind::Int(i) if (lo..=hi).contains(i) => Ok(*i),
        Kind::Int(i) => Err(NodeError::at(
            n,
            format!("{what} must be between {lo} and {hi}, got {i}"),
        )),
        _ => Err(NodeError::at(
            n,
            format!("{what} must be an integer, found {}", n.type_name()),
        )),
    }
}

/// A kernel and the nodes errors found later point at: its `out` and its weight rows.
struct KernelNodes<'a> {
    out: &'a Node,
    rows: &'a [Node],
}

/// `[lo, hi]` with `-128 <= lo < hi <= 128`.
fn input_range(n: &Node) -> R<InputRange> {
    let items = seq_items(n, "input_range")?;
    let [lo, hi] = items else {
        return Err(NodeError::at(
            n,
            format!("input_range must be [lo, hi], got {} value(s)", items.len()),
        ));
    };
    let (l, h) = (number(lo, "input_range")?, number(hi, "input_range")?);
    for (node, v) in [(lo, l), (hi, h)] {
        if !(-128.0..=128.0).contains(&v) {
            return Err(NodeError::at(
                node,
                format!("input_range: {v} is outside the capture's -128..128"),
            ));
        }
    }
    if l >= h {
        return Err(NodeError::at(
            n,
            format!("input_range [{l}, {h}] is empty or reversed (lo must be below hi)"),
        ));
    }
    Ok(InputRange { lo: l, hi: h })
}

fn kernel<'a>(n: &'a Node, registers: &[Reg], general: usize) -> R<(KernelSpec, KernelNodes<'a>)> {
    let f = fields(n, "a kernel", &["out", "scale", "weights"])?;
    let (_, out_node) =
        get(&f, "out").ok_or_else(|| NodeError::at(n, "kernel without `out` register"))?;
    let out = register(out_node, general)?;
    if !registers.contains(&out) {
        return Err(NodeError::at(
            out_node,
            format!("output register {out} is not in `registers`"),
        ));
    }
    let scale = match get(&f, "scale") {
        Some((_, v)) => number(v, "scale")?,
        None => 1.0,
    };
    let (_, wn) = get(&f, "weights").ok_or_else(|| NodeError::at(n, "kernel without `weights`"))?;
    let rows = seq_items(wn, "weights")?;
    if rows.is_empty() {
        return Err(NodeError::at(wn, "weights are empty"));
    }
    if rows.len() > MAX_SIDE {
        return Err(NodeError::at(
            wn,
            format!("at most {MAX_SIDE} rows of weights are supported"),
        ));
    }
    let mut weights = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let cells = seq_items(row, "a row of weights")?;
        if cells.is_empty() {
            return Err(NodeError::at(
                row,
                format!("row {} of weights is empty", i + 1),
            ));
        }
        if cells.len() > MAX_SIDE {
            return Err(NodeError::at(
                row,
                format!("at most {MAX_SIDE} columns of weights are supported"),
            ));
        }
        if let Some(first) = weights.first().map(Vec::len) {
            if cells.len() != first {
                return Err(NodeError::at(
                    row,
                    format!(
                        "ragged weights: row {} has {} entries, row 1 has {first}",
                        i + 1,
                        cells.len()
                    ),
                ));
            }
        }
        let mut w = Vec::with_capacity(cells.len());
        for c in cells {
            w.push(number(c, "a weight")?);
        }
        weights.push(w);
    }
    Ok((
        KernelSpec {
            out,
            scale,
            weights,
        },
        KernelNodes {
            out: out_node,
            rows,
        },
    ))
}

/// Rejects, at the offending weight, a kernel that cannot be approximated with these
/// settings (a weight times the scale and 2^depth beyond [`approx::MAX_WEIGHT`]).
fn check_approximation(k: &KernelSpec, nodes: &KernelNodes, params: &ApproxParams) -> R<()> {
    let Err(e) = approx::approximate(&k.weights, k.scale, params.max_depth, params.max_error)
    else {
        return Ok(());
    };
    let f = k.scale * f64::from(1u32 << e.depth.min(30));
    for (row, cells) in k.weights.iter().zip(nodes.rows) {
        let Kind::Seq(cells) = &cells.kind else {
            continue;
        };
        for (w, cell) in row.iter().zip(cells) {
            let x = w * f;
            if !x.is_finite() || x.abs() > approx::MAX_WEIGHT {
                return Err(NodeError::at(
                    cell,
                    format!(
                        "weight {w} too large: |weight x scale x 2^{}| must be at most 2^20",
                        e.depth
                    ),
                ));
            }
        }
    }
    Err(NodeError::at(nodes.out, e.to_string()))
}

/// Rejects names that would not stay on one line of the program header.
fn check_name(n: &Node, name: &str) -> R<()> {
    match name.chars().find(|c| c.is_control()) {
        Some(c) => Err(NodeError::at(
            n,
            format!(
                "name must be one line of text without control characters, found {}",
                c.escape_default()
            ),
        )),
        None => Ok(()),
    }
}

fn build(root: &Node) -> R<Spec> {
    let f = fields(
        root,
        "the filter spec",
        &[
            "name",
            "input",
            "registers",
            "kernels",
            "approximation",
            "search",
            "general_registers",
            "input_range",
        ],
    )?;
    let name = match get(&f, "name") {
        Some((_, v)) => match &v.kind {
            Kind::Str(s) => {
                check_name(v, s)?;
                s.clone()
            }
            Kind::Int(i) => i.to_string(),
            _ => return Err(NodeError::at(v, "name must be a string")),
        },
        None => "filter".to_string(),
    };
    let general = match get(&f, "general_registers") {
        Some((_, v)) => integer(v, "general_registers", 1, MAX_GENERAL as i128)? as usize,
        None => DEVICE_GENERAL,
    };
    let registers = match get(&f, "registers") {
        Some((_, v)) => {
            let items = seq_items(v, "registers")?;
            if items.is_empty() {
                return Err(NodeError::at(v, "the register list is empty"));
            }
            let mut regs = Vec::new();
            for it in items {
                let r = register(it, general)?;
                if regs.contains(&r) {
                    return Err(NodeError::at(it, format!("register {r} listed twice")));
                }
                regs.push(r);
            }
            regs
        }
        None => (0..DEVICE_GENERAL as u8).map(Reg::Gen).collect(),
    };
    let input = match get(&f, "input") {
        Some((_, v)) => {
            let r = register(v, general)?;
            if !registers.contains(&r) {
                return Err(NodeError::at(
                    v,
                    format!("input register {r} is not in `registers`"),
                ));
            }
            r
        }
        None => registers[0],
    };
    let (_, kn) = get(&f, "kernels").ok_or_else(|| NodeError::at(root, "no `kernels` given"))?;
    let items = seq_items(kn, "kernels")?;
    if items.is_empty() {
        return Err(NodeError::at(kn, "the kernel list is empty"));
    }
    let mut kernels: Vec<KernelSpec> = Vec::new();
    let mut kernel_nodes = Vec::new();
    // Banks may have more kernels than registers, and kernels may share an output
    // register: the compiler splits them into groups (see `cain::group`).
    for it in items {
        let (k, nodes) = kernel(it, &registers, general)?;
        kernels.push(k);
        kernel_nodes.push(nodes);
    }
    let mut approximation = ApproxParams::default();
    if let Some((_, v)) = get(&f, "approximation") {
        let af = fields(v, "approximation", &["max_depth", "max_error"])?;
        if let Some((_, d)) = get(&af, "max_depth") {
            approximation.max_depth = integer(d, "max_depth", 0, 20)? as u32;
        }
        if let Some((_, e)) = get(&af, "max_error") {
            let x = number(e, "max_error")?;
            if x < 0.0 {
                return Err(NodeError::at(e, "max_error must not be negative"));
            }
            approximation.max_error = x;
        }
    }
    let mut search = SearchParams::default();
    if let Some((_, v)) = get(&f, "search") {
        let sf = fields(
            v,
            "search",
            &[
                "time_limit",
                "workers",
                "ops",
                "node_limit",
                "seed",
                "memory_limit",
                "work",
            ],
        )?;
        if let Some((_, t)) = get(&sf, "time_limit") {
            let x = number(t, "time_limit")?;
            if !(x > 0.0 && x <= MAX_TIME_LIMIT) {
                return Err(NodeError::at(
                    t,
                    format!("time_limit must be more than 0 and at most {MAX_TIME_LIMIT} seconds"),
                ));
            }
            search.time_limit = Some(x);
        }
        if let Some((_, w)) = get(&sf, "workers") {
            search.workers = Some(integer(w, "workers", 1, MAX_WORKERS as i128)? as usize);
        }
        if let Some((_, o)) = get(&sf, "ops") {
            search.ops = Some(
                o.as_str()
                    .and_then(Ops::parse)
                    .ok_or_else(|| NodeError::at(o, "ops must be `all` or `basic`"))?,
            );
        }
        if let Some((_, n)) = get(&sf, "node_limit") {
            search.node_limit = Some(integer(n, "node_limit", 1, i128::from(u64::MAX))? as u64);
        }
        if let Some((_, n)) = get(&sf, "seed") {
            search.seed = Some(integer(n, "seed", 0, i128::from(u64::MAX))? as u64);
        }
        if let Some((_, n)) = get(&sf, "work") {
            search.work = Some(integer(n, "work", 1, i128::from(u64::MAX))? as u64);
        }
        if let Some((_, n)) = get(&sf, "memory_limit") {
            search.memory_limit_mb = Some(integer(n, "memory_limit (MiB)", 1, 1 << 40)? as u64);
        }
    }
    for (k, nodes) in kernels.iter().zip(&kernel_nodes) {
        check_approximation(k, nodes, &approximation)?;
    }
    let input_range = match get(&f, "input_range") {
        Some((_, v)) => input_range(v)?,
        None => InputRange::default(),
    };
    Ok(Spec {
        name,
        input,
        registers,
        kernels,
        approximation,
        search,
        input_range,
    })
}

/// Reads a filter spec from YAML text. Errors carry the 1-based line and column of the
/// offending node.
/// Text longer than [`MAX_SPEC_BYTES`] is refused before parsing; a leading byte-order
/// mark is skipped.
pub fn parse_spec(text: &str) -> Result<Spec, YamlError> {
    if text.len() as u64 > MAX_SPEC_BYTES {
        return Err(YamlError {
            pos: crate::isa::Pos { line: 1, col: 1 },
            msg: format!("the spec is larger than {MAX_SPEC_BYTES} bytes, the most accepted"),
        });
    }
    let text = strip_bom(text);
    let root = yaml::parse(text)?;
    build(&root).map_err(|e| yaml::locate(text, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Pos;

    const GAUSS: &str = "name: gauss3x3\ninput: A\nregisters: [A, B, C, D, E, F]\n\
        kernels:\n  - out: A\n    scale: 1/16\n    weights:\n      - [1, 2, 1]\n      \
        - [2, 4, 2]\n      - [1, 2, 1]\napproximation: { max_depth: 4, max_error: 0.0 }\n\
        search: { time_limit: 10, workers: 2, ops: all }\n";

    #[test]
    fn reads_the_example() {
        let s = parse_spec(GAUSS).unwrap();
        assert_eq!(s.name, "gauss3x3");
        assert_eq!(s.kernels[0].scale, 1.0 / 16.0);
        assert_eq!(s.kernels[0].weights[1], vec![2.0, 4.0, 2.0]);
        assert_eq!(s.approximation.max_depth, 4);
        assert_eq!(s.search.ops, Some(Ops::All));
        assert_eq!(s.general_count(), 6);
    }

    fn err(text: &str) -> (Pos, String) {
        let e = parse_spec(text).unwrap_err();
        (e.pos, e.msg)
    }

    #[test]
    fn registers_beyond_the_device_need_a_declaration() {
        let (pos, msg) = err(&GAUSS.replace("[A, B, C, D, E, F]", "[A, G, H, Z]"));
        assert_eq!(pos, Pos { line: 3, col: 16 });
        assert!(msg.contains("A..F"), "{msg}");
        let wide = GAUSS.replace("[A, B, C, D, E, F]", "[A, G, H]");
        let s = parse_spec(&format!("general_registers: 8\n{wide}")).unwrap();
        assert_eq!(s.general_count(), 8);
        let (pos, msg) = err(&format!("general_registers: 7\n{wide}"));
        assert_eq!(pos, Pos { line: 4, col: 19 });
        assert!(msg.contains("A..G"), "{msg}");
    }

    #[test]
    fn names_stay_on_one_line() {
        let (pos, msg) = err(&GAUSS.replace("name: gauss3x3", "name: \"blur\\nres(A); //\""));
        assert_eq!(pos, Pos { line: 1, col: 7 });
        assert!(msg.contains("control"), "{msg}");
        assert!(parse_spec(&GAUSS.replace("gauss3x3", "flou gaussien 3×3")).is_ok());
    }

    #[test]
    fn oversized_weights_are_positioned() {
        let (pos, msg) = err(&GAUSS.replace("[2, 4, 2]", "[2, 4e9, 2]"));
        assert_eq!(pos, Pos { line: 9, col: 13 });
        assert!(msg.contains("too large"), "{msg}");
        // Fine at depth 0, too large at the depth the approximation needs.
        let deep = "kernels:\n  - out: A\n    weights: [[500000.3, 1]]\n";
        let (pos, msg) = err(deep);
        assert_eq!(pos, Pos { line: 3, col: 16 });
        assert!(msg.contains("2^"), "{msg}");
    }

    #[test]
    fn byte_order_mark_and_size() {
        assert!(parse_spec(&format!("\u{feff}{GAUSS}")).is_ok());
        let big = format!("{GAUSS}#{}\n", "x".repeat(MAX_SPEC_BYTES as usize));
        assert!(err(&big).1.contains("larger than"));
    }

    #[test]
    fn rejections_are_positioned() {
        let ragged = GAUSS.replace("- [2, 4, 2]", "- [2, 4]");
        let (pos, msg) = err(&ragged);
        assert_eq!(pos, Pos { line: 9, col: 9 });
        assert!(msg.contains("ragged"), "{msg}");
        let (pos, msg) = err(&GAUSS.replace("out: A", "out: G"));
        assert_eq!(pos, Pos { line: 5, col: 10 });
        assert!(msg.contains("not a register of SCAMP-5"), "{msg}");
        let few = GAUSS.replace("[A, B, C, D, E, F]", "[A, B, C]");
        let (pos, msg) = err(&few.replace("out: A", "out: E"));
        assert_eq!(pos, Pos { line: 5, col: 10 });
        assert!(msg.contains("not in `registers`"), "{msg}");
        let (pos, _) = err(&GAUSS.replace("[1, 2, 1]\n      - [2", "[1, .nan, 1]\n      - [2"));
        assert_eq!(pos, Pos { line: 8, col: 13 });
        let (pos, msg) = err(&GAUSS.replace("input: A", "input: Q"));
        assert_eq!(pos, Pos { line: 2, col: 8 });
        assert!(msg.contains("`Q`"), "{msg}");
        let (pos, msg) = err(&few.replace("input: A", "input: D"));
        assert_eq!(pos, Pos { line: 2, col: 8 });
        assert!(msg.contains("input"), "{msg}");
        let (pos, _) = err(&GAUSS.replace(
            "weights:\n      - [1, 2, 1]\n      - [2, 4, 2]\n      - [1, 2, 1]",
            "weights: []",
        ));
        assert_eq!(pos.line, 7);
        // A bank: more kernels than registers, sharing output registers.
        let many = "registers: [A]\nkernels:\n  - { out: A, weights: [[1]] }\n  - { out: A, weights: [[2]] }\n";
        assert_eq!(parse_spec(many).map(|s| s.kernels.len()), Ok(2));
        let (pos, _) = err("kernels: [\n");
        assert!(pos.line >= 1);
        let (pos, msg) = err("kernels:\n  - out: A\n    weights: [[1]]\n    wieghts: 2\n");
        assert_eq!(pos, Pos { line: 4, col: 5 });
        assert!(msg.contains("unknown key"), "{msg}");
    }

    #[test]
    fn input_range_is_read_and_checked() {
        assert_eq!(
            parse_spec(GAUSS).unwrap().input_range,
            InputRange::default()
        );
        let half = format!("{GAUSS}input_range: [0, 127]\n");
        assert_eq!(
            parse_spec(&half).unwrap().input_range,
            InputRange { lo: 0.0, hi: 127.0 }
        );
        for bad in ["[5, -5]", "[3, 3]", "[]", "[0, 300]"] {
            let (pos, msg) = err(&format!("{GAUSS}input_range: {bad}\n"));
            assert_eq!(pos.line, 13, "{bad}: {msg}");
            assert!(msg.contains("input_range"), "{bad}: {msg}");
        }
    }
}
