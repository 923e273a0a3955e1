//! The search's tuning knobs, in one place with their defaults and the reasons for them.
//!
//! None of them changes which programs are correct, only how the budget is spent; the
//! defaults are what the benchmarks (`benches/cain_search.rs`) were tuned with.

/// How a search spends its budget (see [`super::search`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Tuning {
    /// Under the error objective's strict half, values other than the outputs stay
    /// within this multiple of the register limit for any input. Default 1.5: values a
    /// little beyond the limit clip only on strong edges.
    pub(crate) strict_range: f64,
    /// Children kept in memory per node; the rest are regenerated when needed.
    /// Default 8: ranking is dear, and few nodes ever get past their eighth child.
    pub(crate) chunk: usize,
    /// Share of the budget a structured worker spends before it turns plain. Default
    /// 0.3: the structured generator finds shared work early or not at all.
    pub(crate) structured_share: f64,
    /// Iterations between checks of the clock and the shared counters. Default 128.
    pub(crate) check_every: u64,
    /// Iterations a worker runs before handing its thread to the next worker on it
    /// (more workers than cores). Default 512 (four checks).
    pub(crate) turn: u64,
    /// Largest ranking jitter of a worker: beyond it the ranking is mostly noise.
    /// Default 2.0.
    pub(crate) max_jitter: f32,
    /// Shortest distinct plans polished by window re-search after the search.
    /// Default 4.
    pub(crate) finalists: usize,
    /// Share of a clock budget kept for the polish. Default 0.3.
    pub(crate) polish_share: f64,
    /// Bags the polish may expand per finalist, per node of work (deterministic mode)
    /// or of the node limit. Default 1.
    pub(crate) polish_per_work: u64,
    /// Largest window the error objective's polish re-routes (see
    /// [`super::window::reroute`]). Default 4: the bundled programs gained nothing
    /// from 3 to 4 on Gaussians; larger windows have too many routes to offer.
    pub(crate) reroute_window: usize,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            strict_range: 1.5,
            chunk: 8,
            structured_share: 0.3,
            check_every: 128,
            turn: 512,
            max_jitter: 2.0,
            finalists: 4,
            polish_share: 0.3,
            polish_per_work: 1,
            reroute_window: 4,
        }
    }
}
