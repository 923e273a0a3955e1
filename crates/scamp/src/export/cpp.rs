//! The C++17 source for the SCAMP-5d host API: includes, device set-up, the frame loop,
//! each block as `scamp5_kernel_begin(); ... scamp5_kernel_end();` in the vendor's
//! macro names, the readouts and, for a network, the host-side head.

use super::head::NetworkHost;
use super::plan::{Block, Plan, Readout};
use crate::energy::{self, FrameEnergy};
use crate::isa::{AnyReg, Program, Stmt};
use std::fmt::Write;

/// Statements the vendor runs from the host rather than inside a kernel block: the DAC
/// loads (`scamp5_in`, `scamp5_load_in`), with the name the host calls.
fn host_call(s: &Stmt) -> Option<&'static str> {
    match s.def.name {
        "in" | "scamp5_in" => Some("scamp5_in"),
        "load_in" | "scamp5_load_in" => Some("scamp5_load_in"),
        _ => None,
    }
}

/// One statement as a C++ call (`movx(C, A, south);`).
pub(crate) fn call(s: &Stmt) -> String {
    let args: Vec<String> = s.args.iter().map(ToString::to_string).collect();
    format!(
        "{}({});",
        host_call(s).unwrap_or(s.def.name),
        args.join(", ")
    )
}

/// The statements of `program` as kernel blocks, indented by `pad`: consecutive kernel
/// statements share one `scamp5_kernel_begin(); ... scamp5_kernel_end();`, and the DAC
/// loads run between blocks, as the vendor's host functions do.
pub(crate) fn kernel_blocks(program: &Program, pad: &str) -> String {
    let mut s = String::new();
    let mut open = false;
    for stmt in &program.stmts {
        let host = host_call(stmt).is_some();
        if host && open {
            s += &format!("{pad}scamp5_kernel_end();\n");
            open = false;
        } else if !host && !open {
            s += &format!("{pad}scamp5_kernel_begin();\n");
            open = true;
        }
        let indent = if host { "" } else { "    " };
        s += &format!("{pad}{indent}{}\n", call(stmt));
    }
    if open {
        s += &format!("{pad}scamp5_kernel_end();\n");
    }
    s
}

/// A name usable in C++ for the display of `r`.
fn display_name(r: AnyReg) -> String {
    format!("display_{r}")
}

/// Every register some block reads back as an image, once, in order.
fn displayed(plan: &Plan) -> Vec<AnyReg> {
    let mut out: Vec<AnyReg> = Vec::new();
    for r in plan.blocks.iter().flat_map(|b| &b.readout) {
        if let Readout::Image(_) | Readout::Bits(_) = r {
            if !out.contains(&r.register()) {
                out.push(r.register());
            }
        }
    }
    out
}

fn comment_lines(lines: &[String], pad: &str) -> String {
    lines
        .iter()
        .flat_map(|l| l.lines())
        .map(|l| format!("{pad}// {l}\n"))
        .collect()
}

fn energy_lines(e: &FrameEnergy) -> Vec<String> {
    vec![
        format!(
            "energy (a model from published power figures, not a measurement): {} cycles per frame \
             ({} analogue, {} digital, {} control) at {:.4} uJ each = {:.2} uJ per frame; \
             {} readouts per frame, not charged",
            e.cycles(),
            e.analogue_cycles,
            e.digital_cycles,
            e.control_cycles,
            energy::instruction_uj(),
            e.energy_uj_per_frame,
            e.readouts
        ),
        "  (1.9 pJ per operation per processing element: Carey et al., VLSI Symposium 2013; docs/export.md)".into(),
    ]
}

fn block_text(b: &Block, net: Option<&NetworkHost>) -> String {
    let pad = "        ";
    let mut s = format!("\n{pad}// {}\n", b.title);
    s += &comment_lines(&b.notes, pad);
    if let Some(c) = &b.capture {
        s += &format!("{pad}// capture: the image the block starts from\n");
        s += &kernel_blocks(c, pad);
    }
    s += &kernel_blocks(&b.program, pad);
    for r in &b.readout {
        match r {
            Readout::Image(_) | Readout::Bits(_) => {
                let reg = r.register();
                s += &format!("{pad}scamp5_output_image({reg}, {});\n", display_name(reg));
            }
            Readout::Events(d) => {
                let map = net.map_or(0, |n| n.map_index(*d));
                s += &format!("{pad}scan_map({d}, {map}, counts);\n");
            }
        }
    }
    s
}

/// The whole C++ source of `plan` (with the host head of a network, when given).
pub fn source(plan: &Plan, net: Option<&NetworkHost>) -> String {
    let mut s = format!(
        "// {}: exported by `scamp export` for the SCAMP-5d host API.\n",
        plan.name.lines().next().unwrap_or("")
    );
    s += &comment_lines(&plan.notes, "");
    s += &comment_lines(&energy_lines(&plan.energy()), "");
    s += "// The noise profile and seeds are the simulator's, not the device's: none is here.\n";
    s += "#include <scamp5.hpp>\n#include <cstdint>\n\nusing namespace SCAMP5_PE;\n";
    if let Some(n) = net {
        s += &n.cpp_globals();
    }
    s += "\nint main() {\n    vs_init();\n";
    for (i, r) in displayed(plan).iter().enumerate() {
        let _ = writeln!(
            s,
            "    vs_handle {} = vs_gui_add_display(\"{r}\", {}, {});",
            display_name(*r),
            i / 4,
            i % 4
        );
    }
    s += "    while (true) {\n        vs_frame_loop_control();\n";
    if net.is_some() {
        s += "        uint32_t counts[FEATURES] = {};\n";
    }
    for b in &plan.blocks {
        s += &block_text(b, net);
    }
    if net.is_some() {
        s += "        vs_post_text(\"class %d\\n\", classify(counts));\n";
    }
    s += "    }\n    return 0;\n}\n";
    s
}
