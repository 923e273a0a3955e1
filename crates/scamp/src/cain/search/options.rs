//! The search's inputs and outputs: its budget and shape ([`SearchOptions`]), the range
//! goals are held to, live counters, and what a search reports.

use super::tuning::Tuning;
use crate::cain::moves::goal::Bag;
use crate::cain::moves::rule::RuleCounts;
use crate::cain::moves::step::Step;
use crate::cain::score::clipping::ClipModel;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::time::Duration;

/// Budget and shape of a search.
#[derive(Clone, Debug)]
pub(crate) struct SearchOptions {
    /// Wall-clock budget.
    pub(crate) time_limit: Duration,
    /// Largest number of nodes expanded over all workers.
    pub(crate) node_limit: Option<u64>,
    /// Worker threads.
    pub(crate) workers: usize,
    /// Seed of the ordering perturbation (worker 0 uses it for ties only).
    pub(crate) seed: u64,
    /// Memory cap in bytes (search nodes and the seen table, estimated).
    pub(crate) memory_limit: u64,
    /// Deterministic mode: nodes per worker. Each worker then searches on its own
    /// (its own seen table and best length, nothing shared while it runs; unless the
    /// work is [`shared`](Self::shared)) until it has expanded this many nodes, and the
    /// results are merged by (instructions, cycles, worker number), so the same
    /// problem, seed and work give the same plan whatever the load. The time limit
    /// stays as a safety cap (if it strikes, the result may vary; the stop reason says
    /// `time`).
    pub(crate) work: Option<u64>,
    /// With [`work`](Self::work): the workers search together instead, as under a
    /// clock budget (one seen table and best length, racing), and stop when their
    /// combined nodes reach `work` times the workers (the node limit, the clock and the
    /// memory cap stop them too). With two or more workers not reproducible: which
    /// worker finds what depends on the load. A calibrated length phase of a clock
    /// budget searches so; a given work budget (`--work N`) never does.
    pub(crate) shared: bool,
    /// Length slack of the error objective: plans up to `(1 + slack)` times the
    /// shortest found are kept, and the one with the lowest score wins (0: shortest).
    pub(crate) slack: f64,
    /// Values every goal must stay within (bags holding a goal outside are pruned).
    pub(crate) range: Option<GoalRange>,
    /// The clipping a plan causes on the bundled images, added to the finisher's score
    /// under the error objective (see `crate::cain::score::clipping`).
    pub(crate) clip: Option<ClipModel>,
    /// How the budget is spent (chunk sizes, phase shares, polish).
    pub(crate) tuning: Tuning,
}

/// The values a goal (atoms over `2^depth`, times input pixels in `lo..=hi`) may reach:
/// it and its negation (negated copies are made on the way) within `low..=high`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct GoalRange {
    /// Common depth of the goals.
    pub(crate) depth: u32,
    /// Lowest input pixel.
    pub(crate) lo: f64,
    /// Highest input pixel.
    pub(crate) hi: f64,
    /// Largest magnitude a register may hold.
    pub(crate) limit: f64,
    /// Goals exempt from the limit: the outputs themselves (an output that cannot fit
    /// clips whatever the program does; everything leading to it still must fit).
    pub(crate) exempt: Vec<crate::cain::moves::goal::Goal>,
}

impl GoalRange {
    /// Whether `g` and `-g` stay within the limit.
    pub(crate) fn fits(&self, g: &crate::cain::moves::goal::Goal) -> bool {
        self.exempt.iter().any(|e| e == g) || self.magnitude(g) <= self.limit * (1.0 + 1e-12)
    }

    /// The same range with every goal, the outputs too, held to `limit`.
    pub(crate) fn held_to(&self, limit: f64) -> GoalRange {
        GoalRange {
            limit,
            exempt: Vec::new(),
            ..self.clone()
        }
    }

    /// Whether one instruction of at most `sources` sources can make `g` from values
    /// within the limit (exempt or not). Where an output cannot be, no plan holds
    /// everything else within the limit, and a search that asks for it is futile.
    pub(crate) fn reachable(&self, g: &crate::cain::moves::goal::Goal, sources: usize) -> bool {
        self.magnitude(g) <= sources as f64 * self.limit * (1.0 + 1e-12)
    }

    /// The largest magnitude `g` reaches for inputs in the range.
    fn magnitude(&self, g: &crate::cain::moves::goal::Goal) -> f64 {
        let (mut low, mut high) = (0.0, 0.0);
        for t in &g.0 {
            let n = f64::from(t.n);
            low += (n * self.lo).min(n * self.hi);
            high += (n * self.lo).max(n * self.hi);
        }
        // Exact: a power of two.
        low.abs().max(high.abs()) / 2f64.powi(self.depth.min(1000) as i32)
    }

    /// Whether every goal of `bag` fits.
    pub(crate) fn fits_bag(&self, bag: &Bag) -> bool {
        bag.0.iter().all(|g| self.fits(g))
    }
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            time_limit: Duration::from_secs(10),
            node_limit: None,
            workers: 1,
            seed: 0,
            memory_limit: 2 << 30,
            work: None,
            shared: false,
            slack: 0.0,
            range: None,
            clip: None,
            tuning: Tuning::default(),
        }
    }
}

/// Why the search stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// Every node was expanded or pruned: no shorter plan exists for this generator.
    Exhausted,
    /// The time budget ran out.
    Time,
    /// The node limit was reached.
    Nodes,
    /// The memory cap was reached.
    Memory,
}

impl StopReason {
    /// Lower-case name for reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            StopReason::Exhausted => "exhausted",
            StopReason::Time => "time",
            StopReason::Nodes => "nodes",
            StopReason::Memory => "memory",
        }
    }
}

/// Live counters of a running search, readable from another thread (progress display).
#[derive(Debug)]
pub struct Stats {
    /// Nodes expanded so far.
    pub nodes: AtomicU64,
    /// Instructions of the best program so far (`usize::MAX` before the first).
    pub best: AtomicUsize,
    /// Plans found (before register allocation).
    pub(crate) plans: AtomicU64,
    /// Estimated bytes in use.
    pub(crate) memory: AtomicU64,
    /// Children taken, by the rule that made them.
    pub(crate) rules: RuleCounts,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            nodes: AtomicU64::new(0),
            best: AtomicUsize::new(usize::MAX),
            plans: AtomicU64::new(0),
            memory: AtomicU64::new(0),
            rules: RuleCounts::default(),
        }
    }
}

/// The best result of a search.
#[derive(Clone, Debug)]
pub(crate) struct Found<T> {
    /// What the finisher made of the plan (e.g. an allocated program).
    pub(crate) value: T,
    /// Its instruction count.
    pub(crate) instructions: usize,
    /// Its cycle count (ties between equal lengths go to fewer cycles).
    pub(crate) cycles: u64,
    /// Its score under the error objective (lower is better; 0 for length only).
    pub(crate) score: f64,
    /// When it was found, from the start of the search.
    pub(crate) at: Duration,
}

/// Everything a search reports.
#[derive(Clone, Debug)]
pub(crate) struct Outcome<T> {
    /// The best result, if any plan could be finished.
    pub(crate) best: Option<Found<T>>,
    /// Nodes expanded.
    pub(crate) nodes: u64,
    /// Plans reaching the input (finished or not).
    pub(crate) plans_found: u64,
    /// Wall-clock seconds spent.
    pub(crate) seconds: f64,
    /// Why it stopped.
    pub(crate) stop: StopReason,
}

/// What a finisher makes of a plan: the result, its instruction and cycle counts and
/// its score under the error objective (lower is better).
pub(crate) type Finished<T> = (T, usize, u64, f64);

/// Turns a plan (instructions in program order) into a result, or rejects it (e.g.
/// registers cannot be allocated, a value leaves the register range).
pub(crate) type Finisher<'a, T> = dyn Fn(&[Step]) -> Option<Finished<T>> + Sync + 'a;
