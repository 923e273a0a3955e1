//! Human-readable explanations: a failed proof shown as the expected and computed
//! kernels side by side, with the offsets that differ.

use super::proof::Target;
use super::symbolic::{execute, Coef, LinComb};
use crate::isa::{Program, Wiring};
use num_traits::Zero;

/// Renders `lin` as a grid over rows `r0..=r1` and columns `c0..=c1` (north up, west
/// left), each cell the exact coefficient.
pub(crate) fn grid(lin: &LinComb, rows: (i32, i32), cols: (i32, i32)) -> Vec<String> {
    let zero = Coef::zero();
    let cells: Vec<Vec<String>> = (rows.0..=rows.1)
        .map(|r| {
            (cols.0..=cols.1)
                .map(|c| lin.terms.get(&(r, c)).unwrap_or(&zero).to_string())
                .collect()
        })
        .collect();
    let width = cells.iter().flatten().map(String::len).max().unwrap_or(1);
    cells
        .iter()
        .map(|row| {
            let parts: Vec<String> = row.iter().map(|c| format!("{c:>width$}")).collect();
            format!("[ {} ]", parts.join("  "))
        })
        .collect()
}

fn bounds(a: &LinComb, b: &LinComb) -> ((i32, i32), (i32, i32)) {
    let keys: Vec<(i32, i32)> = a.terms.keys().chain(b.terms.keys()).copied().collect();
    let r0 = keys.iter().map(|k| k.0).min().unwrap_or(0).min(0);
    let r1 = keys.iter().map(|k| k.0).max().unwrap_or(0).max(0);
    let c0 = keys.iter().map(|k| k.1).min().unwrap_or(0).min(0);
    let c1 = keys.iter().map(|k| k.1).max().unwrap_or(0).max(0);
    ((r0, r1), (c0, c1))
}

/// For every target whose register does not hold its kernel: both kernels as grids
/// (centred on the PE) and the offsets that differ, as lines of text.
pub(crate) fn explain_mismatch(
    program: &Program,
    wiring: Wiring,
    targets: &[Target],
) -> Vec<String> {
    let pe = match execute(program, wiring) {
        Ok(pe) => pe,
        Err(e) => return vec![format!("symbolic execution stopped at {e}")],
    };
    let mut out = Vec::new();
    for t in targets {
        let want = t.expected();
        let got = pe.value(t.out);
        if want == got {
            continue;
        }
        let (rows, cols) = bounds(&want, &got);
        out.push(format!(
            "register {}: kernel rows {}..{} (north to south), columns {}..{} (west to east)",
            t.out, rows.0, rows.1, cols.0, cols.1
        ));
        let g_want = grid(&want, rows, cols);
        let g_got = grid(&got, rows, cols);
        let w = g_want.iter().map(String::len).max().unwrap_or(0);
        out.push(format!("  {:<w$}    {}", "expected", "computed"));
        for (a, b) in g_want.iter().zip(&g_got) {
            out.push(format!("  {a:<w$}    {b}"));
        }
        let zero = Coef::zero();
        for r in rows.0..=rows.1 {
            for c in cols.0..=cols.1 {
                let a = want.terms.get(&(r, c)).unwrap_or(&zero);
                let b = got.terms.get(&(r, c)).unwrap_or(&zero);
                if a != b {
                    out.push(format!(
                        "  offset (row {r:+}, col {c:+}): expected {a}, computed {b}"
                    ));
                }
            }
        }
        if !got.constant.is_zero() {
            out.push(format!("  constant term {} (expected 0)", got.constant));
        }
    }
    if out.is_empty() {
        // The kernels match with unknowns at 0: the proof failed on what they leave out
        // (a register read before any write).
        if let Err(e) = super::proof::prove_rational(program, wiring, targets, None) {
            out.push(format!("proof failed: {e}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{parse_program, Device, Reg};

    #[test]
    fn shows_grids_and_differing_offsets() {
        // Computes in(r, c-1) but the target wants in(r, c+1).
        let p = parse_program("movx(B, A, west)", Device::default()).unwrap();
        let t = Target {
            out: Reg::B,
            depth: 0,
            weights: vec![vec![0, 0, 1]],
        };
        let lines = explain_mismatch(&p, Wiring::new(Reg::A, 6), &[t]);
        assert!(lines[0].starts_with("register B"), "{lines:?}");
        assert!(
            lines[2].contains("[ 0  0  1 ]") && lines[2].contains("[ 1  0  0 ]"),
            "{lines:?}"
        );
        assert!(lines.contains(&"  offset (row +0, col -1): expected 0, computed 1".to_string()));
        assert!(lines.contains(&"  offset (row +0, col +1): expected 1, computed 0".to_string()));
    }
}
