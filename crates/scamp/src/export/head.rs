//! The host side of an exported network in plain C++: the event readout of each binary
//! map inside the network's window, the cap applied in the documented scan order, the
//! counts per pooling block or bin, and the head (softmax regression or an MLP) with
//! its weights as arrays, printing the class of every frame.
//!
//! The arithmetic follows the library's, operation for operation, so that the C++
//! classifies a frame's events exactly as [`crate::eval::readout::Layout`] and
//! [`crate::eval::head::Head::predict`] do: each feature is `count as f32 / group
//! size`, each layer's output the weights times its inputs summed left to right in
//! `f32` plus the bias, ReLU between layers, and the first of equal scores wins.

use crate::eval::head::{Dense, Head};
use crate::eval::network::{Bin, Grouping};
use crate::eval::readout::Layout;
use crate::isa::DReg;
use std::fmt::Write;

/// Where the network looks on the array and what the host does with what it reads.
#[derive(Clone, Debug)]
pub struct NetworkHost {
    /// Top-left PE (row, column) of the image window.
    pub origin: (usize, usize),
    /// Window size, maps, groups (blocks or bins) and cap.
    pub(crate) layout: Layout,
    /// The digital registers holding the binary maps, in feature order.
    pub(crate) maps: Vec<DReg>,
    /// The head.
    pub(crate) head: Head,
}

impl NetworkHost {
    /// Position of `map` among the maps (0 when it is not one: never, by construction).
    pub(crate) fn map_index(&self, map: DReg) -> usize {
        self.maps.iter().position(|m| *m == map).unwrap_or(0)
    }

    /// Events the host asks the device for per map: every pixel of the window, so that
    /// the cap is applied in the documented scan order whatever order the device's
    /// scan takes.
    pub(crate) fn event_buffer(&self) -> usize {
        self.layout.rows * self.layout.cols
    }

    /// The rectangles counted in each map, in feature order: the pooling blocks (row by
    /// row, the last ones possibly smaller) or the bins.
    pub(crate) fn groups(&self) -> Vec<Bin> {
        let l = &self.layout;
        match &l.readout.grouping {
            Grouping::Bins(b) => b.clone(),
            Grouping::Pool(p) => {
                let (down, across) = (l.rows.div_ceil(*p), l.cols.div_ceil(*p));
                (0..down * across)
                    .map(|b| {
                        let (row, col) = ((b / across) * p, (b % across) * p);
                        Bin {
                            row,
                            col,
                            height: (*p).min(l.rows - row),
                            width: (*p).min(l.cols - col),
                        }
                    })
                    .collect()
            }
        }
    }

    /// Constants, the groups, the head's layers and the two host functions
    /// (`scan_map`, `classify`).
    pub(crate) fn cpp_globals(&self) -> String {
        let l = &self.layout;
        let groups = self.groups();
        let mut s =
            String::from("\n// The network's window on the array, its readout and its head.\n");
        let _ = writeln!(
            s,
            "static const int WIN_ROW = {}, WIN_COL = {}, ROWS = {}, COLS = {};",
            self.origin.0, self.origin.1, l.rows, l.cols
        );
        let _ = writeln!(
            s,
            "static const int MAPS = {}, GROUPS = {}, EVENT_BUFFER = {}, MAP_CAP = {};",
            l.maps,
            groups.len(),
            self.event_buffer(),
            l.readout.cap.unwrap_or(self.event_buffer())
        );
        s += "static const int FEATURES = MAPS * GROUPS;\n";
        s += &groups_text(&groups);
        s += SCAN;
        s += &head_text(&self.head);
        s
    }
}

fn groups_text(groups: &[Bin]) -> String {
    let rects: Vec<String> = groups
        .iter()
        .map(|b| format!("{{{}, {}, {}, {}}}", b.row, b.col, b.height, b.width))
        .collect();
    let sizes: Vec<String> = groups
        .iter()
        .map(|b| format!("{}.0f", b.height * b.width))
        .collect();
    format!(
        "// Each map's counted rectangles {{row, col, height, width}} in window pixels, and their sizes.\n\
         static const int GROUP[GROUPS][4] = {{\n{}\n}};\n\
         static const float GROUP_SIZE[GROUPS] = {{\n{}\n}};\n",
        wrapped(&rects),
        wrapped(&sizes)
    )
}

/// `items` joined by commas, a few per line.
fn wrapped(items: &[String]) -> String {
    items
        .chunks(6)
        .map(|c| format!("    {}", c.join(", ")))
        .collect::<Vec<_>>()
        .join(",\n")
}

fn layer_text(i: usize, d: &Dense) -> String {
    let values: Vec<String> = d.weights.iter().map(|v| format!("{v:e}f")).collect();
    format!(
        "// Layer {}: {} outputs x ({} inputs + bias), row-major.\n\
         static const float LAYER{}[{} * {}] = {{\n{}\n}};\n",
        i + 1,
        d.outputs,
        d.inputs,
        i + 1,
        d.outputs,
        d.inputs + 1,
        wrapped(&values)
    )
}

/// The layers' weights and `classify`, which runs them in order.
fn head_text(head: &Head) -> String {
    let mut s = String::from("\n// The head: dense layers, ReLU between them.\n");
    for (i, d) in head.layers.iter().enumerate() {
        s += &layer_text(i, d);
    }
    s += DENSE;
    s += "\n// The class of one frame: features are each count over its rectangle's size; the\n\
          // first of equal scores wins. (Compile without floating-point contraction, e.g.\n\
          // -ffp-contract=off, to get the simulator's classes bit for bit.)\n\
          static int classify(const uint32_t* counts) {\n\
          \x20   float x0[FEATURES];\n\
          \x20   for (int k = 0; k < FEATURES; k++) {\n\
          \x20       x0[k] = (float)counts[k] / GROUP_SIZE[k % GROUPS];\n\
          \x20   }\n";
    let last = head.layers.len();
    for (i, d) in head.layers.iter().enumerate() {
        let _ = writeln!(
            s,
            "    float x{}[{}];\n    dense(LAYER{}, {}, {}, x{i}, x{}, {});",
            i + 1,
            d.outputs,
            i + 1,
            d.inputs,
            d.outputs,
            i + 1,
            i + 1 < last
        );
    }
    let classes = head.layers.last().map_or(0, |d| d.outputs);
    let _ = write!(
        s,
        "    int best = 0;\n    for (int k = 1; k < {classes}; k++) {{\n        \
         if (x{last}[k] > x{last}[best]) {{\n            best = k;\n        }}\n    }}\n    \
         return best;\n}}\n"
    );
    s
}

/// One dense layer in C++, the same for every network.
const DENSE: &str = r#"
// y[k] = w[k][0..inputs] . x + w[k][inputs], then ReLU when asked.
static void dense(const float* w, int inputs, int outputs, const float* x, float* y, bool relu) {
    for (int k = 0; k < outputs; k++) {
        const float* row = w + k * (inputs + 1);
        float s = 0.0f;
        for (int j = 0; j < inputs; j++) {
            s += row[j] * x[j];
        }
        s += row[inputs];
        y[k] = relu && !(s > 0.0f) ? 0.0f : s;
    }
}
"#;

/// The event readout, the same for every network (the constants above set it).
const SCAN: &str = r#"
// Reads the set bits of one binary map inside the window as events (column, row), marks
// them on a window-sized plane, then takes them in row-major scan order (row 0 from
// column 0 eastwards, then row 1, ...), at most MAP_CAP of them, adding each to the
// count of every rectangle it lies in. The vendor fills unused entries with (0, 0),
// which is outside the window (it starts at row and column 1 or more).
template <class Map>
static void scan_map(const Map& map, int index, uint32_t* counts) {
    static uint8_t events[2 * EVENT_BUFFER];
    static uint8_t set[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++) {
        set[i] = 0;
    }
    scamp5_scan_events(map, events, EVENT_BUFFER, WIN_ROW, WIN_COL, WIN_ROW + ROWS - 1,
                       WIN_COL + COLS - 1, 1, 1);
    for (int i = 0; i < EVENT_BUFFER; i++) {
        int col = events[2 * i], row = events[2 * i + 1];
        if (col == 0 && row == 0) {
            break;
        }
        int r = row - WIN_ROW, c = col - WIN_COL;
        if (r >= 0 && r < ROWS && c >= 0 && c < COLS) {
            set[r * COLS + c] = 1;
        }
    }
    int taken = 0;
    for (int p = 0; p < ROWS * COLS && taken < MAP_CAP; p++) {
        if (!set[p]) {
            continue;
        }
        taken++;
        int r = p / COLS, c = p % COLS;
        for (int g = 0; g < GROUPS; g++) {
            const int* b = GROUP[g];
            if (r >= b[0] && r < b[0] + b[2] && c >= b[1] && c < b[1] + b[3]) {
                counts[index * GROUPS + g] += 1;
            }
        }
    }
}
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::network::Readout;

    fn host(rows: usize, cols: usize, grouping: Grouping, cap: Option<usize>) -> NetworkHost {
        let readout = Readout { grouping, cap };
        NetworkHost {
            origin: (1, 1),
            layout: Layout::new(rows, cols, 1, &readout).expect("fits"),
            maps: vec![DReg::R(1)],
            head: Head { layers: Vec::new() },
        }
    }

    #[test]
    fn pooling_blocks_are_the_rectangles_the_library_counts() {
        let h = host(7, 5, Grouping::Pool(3), None);
        let g: Vec<[usize; 4]> = h
            .groups()
            .iter()
            .map(|b| [b.row, b.col, b.height, b.width])
            .collect();
        assert_eq!(
            g,
            vec![
                [0, 0, 3, 3],
                [0, 3, 3, 2],
                [3, 0, 3, 3],
                [3, 3, 3, 2],
                [6, 0, 1, 3],
                [6, 3, 1, 2]
            ]
        );
        // Every pixel set: each block counts its own size, as the C++'s GROUP_SIZE says.
        let sizes: Vec<u32> = g.iter().map(|b| (b[2] * b[3]) as u32).collect();
        assert_eq!(h.layout.counts(&[1; 35]), sizes);
        assert!(h.cpp_globals().contains("MAP_CAP = 35;"));
    }

    #[test]
    fn bins_and_their_cap_reach_the_cpp() {
        let bin = Bin {
            row: 1,
            col: 2,
            height: 3,
            width: 2,
        };
        let h = host(6, 6, Grouping::Bins(vec![bin]), Some(4));
        assert_eq!(h.groups(), vec![bin]);
        let cpp = h.cpp_globals();
        assert!(cpp.contains("GROUPS = 1, EVENT_BUFFER = 36, MAP_CAP = 4;"));
        assert!(cpp.contains("{1, 2, 3, 2}") && cpp.contains("6.0f"));
    }
}
