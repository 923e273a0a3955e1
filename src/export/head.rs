//! The host side of an exported network in plain C++: the event readout of each binary
//! map inside the network's window, the pooling of the events into block counts, and
//! the dense head with its weights as arrays, printing the class of every frame.
//!
//! The arithmetic follows the library's, operation for operation, so that the C++
//! classifies a frame's counts exactly as [`crate::eval::head::Head::predict`] does:
//! each feature is `count as f32 / (block height * block width)`, each score the
//! weights times the features summed left to right in `f32`, plus the bias, and the
//! first of equal scores wins.

use crate::eval::frames::Pooling;
use crate::eval::head::Head;
use crate::isa::DReg;
use std::fmt::Write;

/// Where the network looks on the array and what the host does with what it reads.
#[derive(Clone, Debug)]
pub struct NetworkHost {
    /// Top-left PE (row, column) of the image window.
    pub origin: (usize, usize),
    /// Window size and pooling (rows, cols, maps, pool).
    pub pooling: Pooling,
    /// The digital registers holding the binary maps, in feature order.
    pub maps: Vec<DReg>,
    /// The head.
    pub head: Head,
}

impl NetworkHost {
    /// Position of `map` among the maps (0 when it is not one: never, by construction).
    pub fn map_index(&self, map: DReg) -> usize {
        self.maps.iter().position(|m| *m == map).unwrap_or(0)
    }

    /// Events one map can hold inside the window: every pixel of it, so none is lost.
    pub fn cap(&self) -> usize {
        self.pooling.rows * self.pooling.cols
    }

    /// The block counts of one image from its maps' bits (maps one after another, each
    /// `rows x cols`), as the C++ `scan_map` computes them from the events.
    pub fn counts(&self, bits: &[u8]) -> Vec<u32> {
        self.pooling.counts(bits)
    }

    fn weights_text(&self) -> String {
        let w = self.head.features + 1;
        let rows: Vec<String> = self
            .head
            .weights
            .chunks(w)
            .map(|row| {
                let lines: Vec<String> = row
                    .chunks(6)
                    .map(|c| {
                        c.iter()
                            .map(|v| format!("{v:e}f"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .collect();
                format!("    {{{}}}", lines.join(",\n     "))
            })
            .collect();
        rows.join(",\n")
    }

    /// Constants, weights and the two host functions (`scan_map`, `classify`).
    pub fn cpp_globals(&self) -> String {
        let p = &self.pooling;
        let (down, across) = p.blocks();
        let mut s =
            String::from("\n// The network's window on the array, its pooling and its head.\n");
        let _ = writeln!(
            s,
            "static const int WIN_ROW = {}, WIN_COL = {}, ROWS = {}, COLS = {}, POOL = {};",
            self.origin.0, self.origin.1, p.rows, p.cols, p.pool
        );
        let _ = writeln!(
            s,
            "static const int MAPS = {}, DOWN = {down}, ACROSS = {across}, EVENT_CAP = {};",
            p.maps,
            self.cap()
        );
        s += "static const int FEATURES = MAPS * DOWN * ACROSS, CLASSES = 10;\n";
        s += "// Softmax regression: score[k] = HEAD[k][0..FEATURES] . features + HEAD[k][FEATURES].\n";
        let _ = writeln!(
            s,
            "static const float HEAD[CLASSES][FEATURES + 1] = {{\n{}\n}};",
            self.weights_text()
        );
        s += SCAN_AND_CLASSIFY;
        s
    }
}

/// The host functions, the same for every network (the constants above set them).
const SCAN_AND_CLASSIFY: &str = r#"
// Reads the set bits of one binary map inside the window as events (column, row) and
// adds each to the count of its pooling block. The vendor fills unused entries with
// (0, 0), which is outside the window (it starts at row and column 1 or more).
template <class Map>
static void scan_map(const Map& map, int index, uint32_t* counts) {
    static uint8_t events[2 * EVENT_CAP];
    scamp5_scan_events(map, events, EVENT_CAP, WIN_ROW, WIN_COL, WIN_ROW + ROWS - 1,
                       WIN_COL + COLS - 1, 1, 1);
    for (int i = 0; i < EVENT_CAP; i++) {
        int col = events[2 * i], row = events[2 * i + 1];
        if (col == 0 && row == 0) {
            break;
        }
        int r = row - WIN_ROW, c = col - WIN_COL;
        if (r < 0 || r >= ROWS || c < 0 || c >= COLS) {
            continue;
        }
        counts[index * DOWN * ACROSS + (r / POOL) * ACROSS + c / POOL] += 1;
    }
}

// Pixels in pooling block b of a side n pixels long (the last block may be smaller).
static float block_side(int b, int n) {
    int rest = n - b * POOL;
    return (float)(rest < POOL ? rest : POOL);
}

// The class of one frame: features are the fraction of set bits per block; the first
// of equal scores wins. (Compile without floating-point contraction, e.g.
// -ffp-contract=off, to get the simulator's classes bit for bit.)
static int classify(const uint32_t* counts) {
    float x[FEATURES];
    for (int k = 0; k < FEATURES; k++) {
        int b = k % (DOWN * ACROSS);
        x[k] = (float)counts[k] / (block_side(b / ACROSS, ROWS) * block_side(b % ACROSS, COLS));
    }
    int best = 0;
    float best_score = 0.0f;
    for (int k = 0; k < CLASSES; k++) {
        float s = 0.0f;
        for (int j = 0; j < FEATURES; j++) {
            s += HEAD[k][j] * x[j];
        }
        s += HEAD[k][FEATURES];
        if (k == 0 || s > best_score) {
            best = k;
            best_score = s;
        }
    }
    return best;
}
"#;
