//! The backward search over goal bags.
//!
//! Child-generator deque traversal (Cain): take the node at the front, produce its next
//! child (children are ranked by the local heuristic and produced lazily, a few at a
//! time), push the child on the front and the parent on the back. The front keeps
//! diving along the best children while every earlier node waits its turn at the back
//! for its next-best child, so the search does not drown in one subtree.
//!
//! Pruning: a bag seen before at equal or lower cost (table shared by all workers);
//! cost plus the lower bound reaching the best length found (shared); bags that do not
//! fit the registers or grow too many atoms (in the generator). Workers differ by a
//! seeded perturbation of the ranking. The budget is wall-clock time, an optional node
//! count and a memory cap; the best plan so far is returned when it runs out.

pub mod heuristic;
pub mod tuning;
pub mod window;

use crate::cain::moves::goal::{fingerprint_of, Bag};
use crate::cain::moves::reverse::{expand, is_initial, Cand, Ctx, PassThrough};
use crate::cain::moves::rule::RuleCounts;
use crate::cain::moves::step::Step;
use crate::cain::score::risk::ClipModel;
use crate::cain::search::heuristic::{lower_bound, Estimator};
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tuning::Tuning;
use window::WindowOptions;

/// Budget and shape of a search.
#[derive(Clone, Debug)]
pub struct SearchOptions {
    /// Wall-clock budget.
    pub time_limit: Duration,
    /// Largest number of nodes expanded over all workers.
    pub node_limit: Option<u64>,
    /// Worker threads.
    pub workers: usize,
    /// Seed of the ordering perturbation (worker 0 uses it for ties only).
    pub seed: u64,
    /// Memory cap in bytes (search nodes and the seen table, estimated).
    pub memory_limit: u64,
    /// Deterministic mode: nodes per worker. Each worker then searches on its own
    /// (its own seen table and best length, nothing shared while it runs) until it has
    /// expanded this many nodes, and the results are merged by (instructions, cycles,
    /// worker number), so the same problem, seed and work give the same plan whatever
    /// the load. The time limit stays as a safety cap (if it strikes, the result may
    /// vary; the stop reason says `time`).
    pub work: Option<u64>,
    /// Length slack of the error objective: plans up to `(1 + slack)` times the
    /// shortest found are kept, and the one with the lowest score wins (0: shortest).
    pub slack: f64,
    /// Values every goal must stay within (bags holding a goal outside are pruned).
    pub range: Option<GoalRange>,
    /// Saturation risk on textured images, added to the finisher's score under the
    /// error objective (see [`crate::cain::score::risk`]).
    pub clip: Option<ClipModel>,
    /// How the budget is spent (chunk sizes, phase shares, polish).
    pub tuning: Tuning,
}

/// The values a goal (atoms over `2^depth`, times input pixels in `lo..=hi`) may reach:
/// it and its negation (negated copies are made on the way) within `low..=high`.
#[derive(Clone, Debug, PartialEq)]
pub struct GoalRange {
    /// Common depth of the goals.
    pub depth: u32,
    /// Lowest input pixel.
    pub lo: f64,
    /// Highest input pixel.
    pub hi: f64,
    /// Largest magnitude a register may hold.
    pub limit: f64,
    /// Goals exempt from the limit: the outputs themselves (an output that cannot fit
    /// clips whatever the program does; everything leading to it still must fit).
    pub exempt: Vec<crate::cain::moves::goal::Goal>,
}

impl GoalRange {
    /// Whether `g` and `-g` stay within the limit.
    pub fn fits(&self, g: &crate::cain::moves::goal::Goal) -> bool {
        self.exempt.iter().any(|e| e == g) || self.magnitude(g) <= self.limit * (1.0 + 1e-12)
    }

    /// The same range with every goal, the outputs too, held to `limit`.
    pub fn held_to(&self, limit: f64) -> GoalRange {
        GoalRange {
            limit,
            exempt: Vec::new(),
            ..self.clone()
        }
    }

    /// Whether one instruction of at most `sources` sources can make `g` from values
    /// within the limit (exempt or not). Where an output cannot be, no plan holds
    /// everything else within the limit, and a search that asks for it is futile.
    pub fn reachable(&self, g: &crate::cain::moves::goal::Goal, sources: usize) -> bool {
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
    pub fn fits_bag(&self, bag: &Bag) -> bool {
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
    pub fn name(self) -> &'static str {
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
    pub plans: AtomicU64,
    /// Estimated bytes in use.
    pub memory: AtomicU64,
    /// Children taken, by the rule that made them.
    pub rules: RuleCounts,
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
pub struct Found<T> {
    /// What the finisher made of the plan (e.g. an allocated program).
    pub value: T,
    /// Its instruction count.
    pub instructions: usize,
    /// Its cycle count (ties between equal lengths go to fewer cycles).
    pub cycles: u64,
    /// Its score under the error objective (lower is better; 0 for length only).
    pub score: f64,
    /// When it was found, from the start of the search.
    pub at: Duration,
}

/// Everything a search reports.
#[derive(Clone, Debug)]
pub struct Outcome<T> {
    /// The best result, if any plan could be finished.
    pub best: Option<Found<T>>,
    /// Nodes expanded.
    pub nodes: u64,
    /// Plans reaching the input (finished or not).
    pub plans_found: u64,
    /// Wall-clock seconds spent.
    pub seconds: f64,
    /// Why it stopped.
    pub stop: StopReason,
}

/// What a finisher makes of a plan: the result, its instruction and cycle counts and
/// its score under the error objective (lower is better).
pub type Finished<T> = (T, usize, u64, f64);

/// Turns a plan (instructions in program order) into a result, or rejects it (e.g.
/// registers cannot be allocated, a value leaves the register range).
pub type Finisher<'a, T> = dyn Fn(&[Step]) -> Option<Finished<T>> + Sync + 'a;

struct Link {
    step: Step,
    next: Option<Arc<Link>>,
}

struct Node {
    bag: Bag,
    g: u32,
    lb: u32,
    path: Option<Arc<Link>>,
    /// Ranked children not yet produced, best last.
    cands: Vec<Cand>,
    /// Children produced so far.
    taken: usize,
    /// Number of children in total, once generated.
    total: Option<usize>,
}

impl Node {
    /// The search's starting point: the kernels' goals, nothing done yet.
    fn root(bag: &Bag, ctx: &Ctx) -> Node {
        Node {
            bag: bag.clone(),
            g: 0,
            lb: lower_bound(bag, ctx),
            path: None,
            cands: Vec::new(),
            taken: 0,
            total: None,
        }
    }
}

type Shard = Mutex<HashMap<u64, u32, BuildHasherDefault<PassThrough>>>;

/// Bags seen so far with the lowest cost they were reached at, shared by all workers.
struct Seen {
    shards: Vec<Shard>,
    len: AtomicU64,
}

impl Seen {
    fn new() -> Seen {
        Seen {
            shards: (0..64).map(|_| Mutex::new(HashMap::default())).collect(),
            len: AtomicU64::new(0),
        }
    }

    /// Records `g` for `fp`; false if the bag was already reached at cost <= g.
    fn improve(&self, fp: u64, g: u32) -> bool {
        let shard = &self.shards[(fp >> 58) as usize];
        let mut m = match shard.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        match m.get_mut(&fp) {
            Some(old) if *old <= g => false,
            Some(old) => {
                *old = g;
                true
            }
            None => {
                m.insert(fp, g);
                self.len.fetch_add(1, Ordering::Relaxed);
                true
            }
        }
    }

    fn bytes(&self) -> u64 {
        // A hashbrown entry of (u64, u32) with control byte and load factor.
        self.len.load(Ordering::Relaxed) * 24
    }
}

struct Shared<'a, T> {
    ctx: &'a Ctx,
    opts: &'a SearchOptions,
    stats: &'a Stats,
    seen: Seen,
    start: Instant,
    stop: AtomicBool,
    reason: Mutex<Option<StopReason>>,
    best: Mutex<Option<Found<T>>>,
    /// Per instruction count, the finished plan with the lowest score (error objective).
    pool: Mutex<std::collections::BTreeMap<usize, Found<T>>>,
    worker_memory: Vec<AtomicU64>,
    finish: &'a Finisher<'a, T>,
    /// The final goals (the root bag), for the saturation risk.
    finals: &'a [crate::cain::moves::goal::Goal],
    /// Whether values other than the final goals are held to [`Tuning::strict_range`] times
    /// the register limit (the first half of an error-objective search).
    strict: bool,
}

impl<T> Shared<'_, T> {
    fn halt(&self, why: StopReason) {
        if let Ok(mut r) = self.reason.lock() {
            r.get_or_insert(why);
        }
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Under the error objective, whether the values `cand` needs stay within the
    /// register limit on flat image regions (where a value is its coefficient sum times
    /// the level): no new value beyond it, and no final output that cannot fit read by
    /// another instruction (it would pass on its clipped value).
    fn flat_fits(&self, cand: &Cand) -> bool {
        flat_fits(self.opts, self.finals, self.strict, cand)
    }

    fn best_len(&self) -> usize {
        self.stats.best.load(Ordering::Relaxed)
    }

    /// Plans and partial plans reaching this many instructions are not worth pursuing:
    /// the best length, or with a slack every length up to `(1 + slack)` times it.
    fn length_limit(&self) -> usize {
        let best = self.best_len();
        if self.opts.slack <= 0.0 || best == usize::MAX {
            return best;
        }
        (best as f64 * (1.0 + self.opts.slack)).floor() as usize + 1
    }
}

fn bag_bytes(b: &Bag) -> u64 {
    24 + b.0.iter().map(|g| 24 + 8 * g.0.len() as u64).sum::<u64>()
}

fn node_bytes(n: &Node) -> u64 {
    96 + bag_bytes(&n.bag)
        + n.cands
            .iter()
            .map(|c| {
                96 + bag_bytes(&c.child)
                    + c.step
                        .ins
                        .iter()
                        .map(|g| 24 + 8 * g.0.len() as u64)
                        .sum::<u64>()
            })
            .sum::<u64>()
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Where one worker's walk stands: its deque of open nodes and its counters, kept apart
/// from the worker so that several workers can take turns on one thread.
struct Walk {
    deque: VecDeque<Node>,
    iter: u64,
    reported: u64,
    bytes: u64,
}

impl Walk {
    fn new(root: &Bag, ctx: &Ctx) -> Walk {
        let root_node = Node::root(root, ctx);
        let bytes = node_bytes(&root_node);
        Walk {
            deque: VecDeque::from([root_node]),
            iter: 0,
            reported: 0,
            bytes,
        }
    }
}

struct Worker<'s, 'a, T> {
    sh: &'s Shared<'a, T>,
    /// The problem as this worker generates it (structured or not).
    ctx: Ctx,
    id: usize,
    rng: Rng,
    /// Relative jitter of the ranking (0 for worker 0).
    jitter: f32,
    scratch: Vec<Cand>,
    est: Estimator,
}

impl<T> Worker<'_, '_, T> {
    /// Ranks all children of `node` and keeps the next chunk.
    fn refill(&mut self, node: &mut Node) {
        let ctx = &self.ctx;
        self.scratch.clear();
        expand(&node.bag, ctx, &mut self.scratch);
        let seed = self.sh.opts.seed;
        let mut scored: Vec<(f32, u64, usize)> = Vec::with_capacity(self.scratch.len());
        for (i, c) in self.scratch.iter().enumerate() {
            let mut e = self.est.estimate(&c.child, ctx) + 0.05 * c.step.kind.cycles() as f32;
            if self.jitter > 0.0 {
                e *= 1.0 + self.jitter * self.rng.unit();
            }
            scored.push((e, c.child.fingerprint() ^ seed, i));
        }
        scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        node.total = Some(scored.len());
        let end = (node.taken + self.sh.opts.tuning.chunk).min(scored.len());
        let mut keep: Vec<Cand> = Vec::with_capacity(end.saturating_sub(node.taken));
        let mut slots: Vec<Option<Cand>> = self.scratch.drain(..).map(Some).collect();
        for &(_, _, i) in scored.get(node.taken..end).unwrap_or(&[]) {
            if let Some(c) = slots[i].take() {
                keep.push(c);
            }
        }
        keep.reverse();
        node.cands = keep;
    }

    fn next_child(&mut self, node: &mut Node) -> Option<Cand> {
        if node.cands.is_empty() {
            if node.total.is_some_and(|t| node.taken >= t) {
                return None;
            }
            self.refill(node);
        }
        let c = node.cands.pop()?;
        node.taken += 1;
        self.sh.stats.rules.add(c.rule);
        Some(c)
    }

    fn plan(step: &Step, path: &Option<Arc<Link>>) -> Vec<Step> {
        let mut steps = vec![step.clone()];
        let mut cur = path.as_ref();
        while let Some(l) = cur {
            steps.push(l.step.clone());
            cur = l.next.as_ref();
        }
        steps
    }

    fn offer(&self, steps: &[Step]) {
        self.sh.stats.plans.fetch_add(1, Ordering::Relaxed);
        self.record(steps);
    }

    /// Finishes `steps` and keeps the result if it is the best so far (of its length,
    /// under the error objective).
    fn record(&self, steps: &[Step]) {
        let sh = self.sh;
        if steps.len() >= sh.length_limit() {
            return;
        }
        let Some((value, instructions, cycles, score)) = (sh.finish)(steps) else {
            return;
        };
        let score = score + plan_risk(sh.opts, steps, sh.finals);
        let found = Found {
            value,
            instructions,
            cycles,
            score,
            at: sh.start.elapsed(),
        };
        if sh.opts.slack > 0.0 {
            // The error objective keeps the best plan of every length; the shortest
            // length is all the pruning needs.
            if let Ok(mut pool) = sh.pool.lock() {
                let better = pool
                    .get(&instructions)
                    .is_none_or(|b| (score, cycles) < (b.score, b.cycles));
                if better {
                    pool.insert(instructions, found);
                }
            }
            sh.stats.best.fetch_min(instructions, Ordering::Relaxed);
            return;
        }
        let Ok(mut best) = sh.best.lock() else {
            return;
        };
        let better = match best.as_ref() {
            None => true,
            Some(b) => (instructions, cycles, score) < (b.instructions, b.cycles, b.score),
        };
        if better {
            *best = Some(found);
            sh.stats.best.fetch_min(instructions, Ordering::Relaxed);
        }
    }

    /// Runs until the search stops or this worker has nothing left.
    fn run(&mut self, root: &Bag) {
        let mut state = Walk::new(root, self.sh.ctx);
        while self.run_slice(root, &mut state, u64::MAX) {}
    }

    /// Runs at most `slice` iterations of the walk `state`; false once this worker is
    /// done (the search stopped, or its deque ran dry).
    fn run_slice(&mut self, root: &Bag, state: &mut Walk, slice: u64) -> bool {
        let sh = self.sh;
        let ctx = sh.ctx;
        let end = state.iter.saturating_add(slice);
        while state.iter < end {
            let Some(mut node) = state.deque.pop_front() else {
                self.check(state.iter - state.reported, state.bytes);
                return false;
            };
            state.iter += 1;
            let iter = state.iter;
            let tuning = &sh.opts.tuning;
            if iter.is_multiple_of(tuning.check_every) {
                let stop = self.check(iter - state.reported, state.bytes);
                state.reported = iter;
                if stop {
                    return false;
                }
            } else if self.out_of_time() {
                // On large kernels one iteration (ranking every child of a big bag,
                // allocating a long plan) can take tens of milliseconds, so waiting
                // for the next full check would overrun the budget by seconds.
                self.check(iter - state.reported, state.bytes);
                return false;
            }
            // The structured phase has its share of the budget; then the worker starts
            // again from the root with the plain generator and estimate.
            let phase_over = match sh.opts.work {
                Some(w) => iter as f64 >= tuning.structured_share * w as f64,
                None => {
                    sh.start.elapsed().as_secs_f64()
                        >= tuning.structured_share * sh.opts.time_limit.as_secs_f64()
                }
            };
            if self.ctx.structured && iter.is_multiple_of(tuning.check_every) && phase_over {
                self.ctx.structured = false;
                self.est = Estimator::default();
                state.deque.clear();
                node = Node::root(root, ctx);
                state.bytes = 0;
            }
            let before = node_bytes(&node);
            state.bytes = state.bytes.saturating_sub(before);
            if (node.g + node.lb) as usize >= sh.length_limit() {
                continue;
            }
            let Some(cand) = self.next_child(&mut node) else {
                continue;
            };
            let g = node.g + 1;
            let in_range = sh
                .opts
                .range
                .as_ref()
                .is_none_or(|r| r.fits_bag(&cand.child))
                && sh.flat_fits(&cand);
            if !in_range {
                // A value out of range: no program through this bag is wanted.
            } else if is_initial(&cand.child, ctx) {
                self.offer(&Self::plan(&cand.step, &node.path));
            } else if sh.seen.improve(cand.child.fingerprint(), g) {
                let lb = lower_bound(&cand.child, ctx);
                if ((g + lb) as usize) < sh.length_limit() {
                    let child = Node {
                        path: Some(Arc::new(Link {
                            step: cand.step,
                            next: node.path.clone(),
                        })),
                        bag: cand.child,
                        g,
                        lb,
                        cands: Vec::new(),
                        taken: 0,
                        total: None,
                    };
                    state.bytes += node_bytes(&child);
                    state.deque.push_front(child);
                }
            }
            state.bytes += node_bytes(&node);
            state.deque.push_back(node);
        }
        true
    }

    /// Whether the search must stop now: stopped by another worker or out of time.
    fn out_of_time(&self) -> bool {
        let sh = self.sh;
        if sh.stop.load(Ordering::Relaxed) {
            return true;
        }
        if sh.start.elapsed() >= sh.opts.time_limit || crate::cancel::requested() {
            sh.halt(StopReason::Time);
            return true;
        }
        false
    }

    /// Publishes counters (`fresh` iterations since the last report) and checks the
    /// budget; true when the worker must stop.
    fn check(&mut self, fresh: u64, bytes: u64) -> bool {
        let sh = self.sh;
        let nodes = sh.stats.nodes.fetch_add(fresh, Ordering::Relaxed);
        sh.worker_memory[self.id].store(bytes, Ordering::Relaxed);
        let mem: u64 = sh
            .worker_memory
            .iter()
            .map(|m| m.load(Ordering::Relaxed))
            .sum::<u64>()
            + sh.seen.bytes();
        sh.stats.memory.store(mem, Ordering::Relaxed);
        if sh.stop.load(Ordering::Relaxed) {
            return true;
        }
        if sh.start.elapsed() >= sh.opts.time_limit || crate::cancel::requested() {
            sh.halt(StopReason::Time);
        } else if sh.opts.node_limit.is_some_and(|l| nodes >= l) {
            sh.halt(StopReason::Nodes);
        } else if mem >= sh.opts.memory_limit {
            sh.halt(StopReason::Memory);
        }
        sh.stop.load(Ordering::Relaxed)
    }
}

/// Searches backwards from `root` (the final goals) to the input goal of `ctx`.
/// Every plan reaching the input is handed to `finish`; the best finished one is kept,
/// then improved window by window (see [`crate::cain::search::window`]) in the last part of the
/// budget. With [`SearchOptions::work`] the workers search apart and the result is
/// reproducible; otherwise they share what they learn and race on the clock.
pub fn search<T: Send>(
    root: &Bag,
    ctx: &Ctx,
    opts: &SearchOptions,
    stats: &Stats,
    finish: &Finisher<'_, T>,
) -> Outcome<T> {
    let start = Instant::now();
    // The shortest plans finished (under the error objective the lowest scored), kept
    // to be improved by windows afterwards: a plan a little longer than the best may
    // polish into a shorter one, one scored a little worse into a better one.
    let by_score = opts.slack > 0.0;
    let finalists: Mutex<Vec<Finalist>> = Mutex::new(Vec::new());
    let keep = |steps: &[Step]| {
        let done = finish(steps)?;
        if let Ok(mut f) = finalists.lock() {
            let plan = Finalist::of(steps, &done, opts, &root.0);
            admit(&mut f, plan, opts.tuning.finalists, by_score);
        }
        Some(((done.0, steps.to_vec()), done.1, done.2, done.3))
    };
    let first = SearchOptions {
        time_limit: opts.time_limit.mul_f64(1.0 - opts.tuning.polish_share),
        ..opts.clone()
    };
    let out = search_phases(root, ctx, &first, stats, &keep);
    let mut finalists = finalists.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some(b) = &out.best {
        // The chosen plan is always polished (under the error objective it need not
        // be among the lowest scored: those may lie beyond the slack).
        let chosen = Finalist {
            instructions: b.instructions,
            cycles: b.cycles,
            score: b.score,
            plan: b.value.1.clone(),
        };
        admit(
            &mut finalists,
            chosen.clone(),
            opts.tuning.finalists,
            by_score,
        );
        if !finalists.iter().any(|f| f.plan == chosen.plan) {
            finalists.insert(0, chosen);
            finalists.truncate(opts.tuning.finalists.max(1));
        }
    }
    let polish = Polish::new(root, ctx, opts, stats, finish, start);
    let polished = polish.all(&finalists);
    // Polishing keeps a result only where it beats the search's: shorter, or under the
    // error objective lower scored (within the slack: see `all`).
    let best = match (out.best, polished) {
        (Some(b), Some(p)) => {
            let better = if by_score {
                p.score < b.score
            } else {
                (p.instructions, p.cycles) < (b.instructions, b.cycles)
            };
            Some(unplan(if better { p } else { b }))
        }
        (b, p) => b.or(p).map(unplan),
    };
    Outcome {
        best,
        nodes: out.nodes,
        plans_found: out.plans_found,
        seconds: start.elapsed().as_secs_f64(),
        stop: polish.stop(out.stop),
    }
}

/// Polishes a plan found by another search (under the error objective, the length
/// search's shortest) as [`search`] polishes its finalists, within `opts`' budget.
/// The outcome's best is the polished result where polishing improved the plan (never
/// the plan itself), and its stop is `time` where the clock cut a work budget short.
pub fn polish<T: Send>(
    root: &Bag,
    ctx: &Ctx,
    opts: &SearchOptions,
    stats: &Stats,
    finish: &Finisher<'_, T>,
    plan: &[Step],
) -> Outcome<T> {
    let start = Instant::now();
    let finalist = finish(plan).map(|done| Finalist::of(plan, &done, opts, &root.0));
    let polish = Polish::new(root, ctx, opts, stats, finish, start);
    Outcome {
        best: finalist.and_then(|f| polish.all(&[f])).map(unplan),
        nodes: 0,
        plans_found: 0,
        seconds: start.elapsed().as_secs_f64(),
        stop: polish.stop(StopReason::Exhausted),
    }
}

/// A result with the plan it was finished from.
type Polished<T> = Found<(T, Vec<Step>)>;

/// The result without its plan.
fn unplan<T>(f: Polished<T>) -> Found<T> {
    Found {
        value: f.value.0,
        instructions: f.instructions,
        cycles: f.cycles,
        score: f.score,
        at: f.at,
    }
}

/// What polishing compares results by: instructions, cycles and score.
type Rank = (usize, u64, f64);

/// A finished plan waiting to be polished.
#[derive(Clone)]
struct Finalist {
    instructions: usize,
    cycles: u64,
    /// Its score under the error objective (saturation risk included).
    score: f64,
    plan: Vec<Step>,
}

impl Finalist {
    /// `plan` as finished (`done`), its score with the saturation risk of the error
    /// objective added.
    fn of<T>(
        plan: &[Step],
        done: &Finished<T>,
        opts: &SearchOptions,
        finals: &[crate::cain::moves::goal::Goal],
    ) -> Finalist {
        Finalist {
            instructions: done.1,
            cycles: done.2,
            score: done.3 + plan_risk(opts, plan, finals),
            plan: plan.to_vec(),
        }
    }
}

/// Keeps `f` the `most` best distinct plans: the shortest (then fewest cycles), or
/// `by_score` the lowest scored; ties by content, so that the set does not depend on
/// the order plans arrive in.
fn admit(f: &mut Vec<Finalist>, plan: Finalist, most: usize, by_score: bool) {
    if f.iter().any(|x| x.plan == plan.plan) {
        return;
    }
    f.push(plan);
    f.sort_by(|a, b| {
        let rank = |x: &Finalist| (x.instructions, x.cycles, fingerprint_of(&x.plan));
        let order = if by_score {
            a.score.total_cmp(&b.score)
        } else {
            std::cmp::Ordering::Equal
        };
        order.then(rank(a).cmp(&rank(b)))
    });
    f.truncate(most);
}

/// What polishing the finalists reads: the problem, the budget and how plans are
/// finished and scored.
struct Polish<'a, 'f, T> {
    root: &'a Bag,
    ctx: &'a Ctx,
    opts: &'a SearchOptions,
    stats: &'a Stats,
    finish: &'a Finisher<'f, T>,
    /// When the search started (the budget counts from it).
    start: Instant,
    /// Whether the time limit cut a polish short (the result then depends on the
    /// machine's load, in the deterministic mode too).
    struck: AtomicBool,
}

impl<'a, 'f, T: Send> Polish<'a, 'f, T> {
    /// A polish of plans of the problem `root`, `ctx` whose budget counts from `start`.
    fn new(
        root: &'a Bag,
        ctx: &'a Ctx,
        opts: &'a SearchOptions,
        stats: &'a Stats,
        finish: &'a Finisher<'f, T>,
        start: Instant,
    ) -> Self {
        Polish {
            root,
            ctx,
            opts,
            stats,
            finish,
            start,
            struck: AtomicBool::new(false),
        }
    }

    /// `time` where the clock cut a polish short, else `otherwise`.
    fn stop(&self, otherwise: StopReason) -> StopReason {
        if self.struck.load(Ordering::Relaxed) {
            StopReason::Time
        } else {
            otherwise
        }
    }

    /// The longest plan within the slack of a plan of `shortest` instructions.
    fn slack_bound(&self, shortest: usize) -> usize {
        (shortest as f64 * (1.0 + self.opts.slack)).floor() as usize
    }

    /// Polishes every finalist (spread over the workers' threads, each with its share
    /// of the budget) and returns the best result, ties to the earlier finalist.
    fn all(&self, finalists: &[Finalist]) -> Option<Polished<T>> {
        let (opts, start) = (self.opts, self.start);
        let threads = opts
            .workers
            .max(1)
            .min(finalists.len())
            .min(std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1);
        let from = start.elapsed();
        let span = opts.time_limit.saturating_sub(from);
        // The shortest length as the polish begins: each finalist's bound on length
        // comes from it and its own progress, never from what another thread found
        // meanwhile, so that a work budget gives the same program under any load.
        let least = self.stats.best.load(Ordering::Relaxed);
        let run = |t: usize| -> Vec<(usize, Option<Polished<T>>)> {
            let mine: Vec<usize> = (t..finalists.len()).step_by(threads).collect();
            let m = mine.len() as f64;
            mine.iter()
                .enumerate()
                .map(|(r, &k)| {
                    // Each finalist of this thread gets an equal slice of the time left.
                    let until = from + span.mul_f64((r as f64 + 1.0) / m);
                    // Kept while it shortens on its own; whether it beats the best is
                    // decided at the end.
                    let f = &finalists[k];
                    let own = (f.instructions, f.cycles, f.score);
                    (k, self.one(&f.plan, own, least, until))
                })
                .collect()
        };
        let mut results: Vec<(usize, Option<Polished<T>>)> = if threads > 1 {
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..threads).map(|t| s.spawn(move || run(t))).collect();
                handles
                    .into_iter()
                    .flat_map(|h| h.join().unwrap_or_default())
                    .collect()
            })
        } else {
            run(0)
        };
        results.sort_by_key(|r| r.0);
        let results = results.into_iter().filter_map(|r| r.1);
        if opts.slack > 0.0 {
            let most = self.slack_bound(self.stats.best.load(Ordering::Relaxed));
            results
                .filter(|r| r.instructions <= most)
                .min_by(|a, b| a.score.total_cmp(&b.score))
        } else {
            results.min_by_key(|f| (f.instructions, f.cycles))
        }
    }

    /// Improves `plan` by window re-search until `until` (from the start) or its share
    /// of the work; returns its best result better than `own` (its instructions and
    /// cycles, the score not to exceed): shorter (then fewer cycles) without a higher
    /// score. Under the error objective the rest of the budget re-routes the result
    /// (see [`window::reroute`]): no longer than the slack allows of the shortest of
    /// `least` (the shortest length as the polish began) and this plan's own results,
    /// with a lower score.
    fn one(&self, plan: &[Step], own: Rank, least: usize, until: Duration) -> Option<Polished<T>> {
        let Polish {
            root,
            ctx,
            opts,
            stats,
            finish,
            start,
            ..
        } = *self;
        let finals = &root.0;
        let fits = |c: &Cand| {
            opts.range.as_ref().is_none_or(|r| r.fits_bag(&c.child))
                && flat_fits(opts, finals, false, c)
        };
        let node_limit = opts
            .work
            .or(opts.node_limit)
            .map_or(u64::MAX, |w| w.saturating_mul(opts.tuning.polish_per_work));
        let reroute = opts.slack > 0.0;
        // Under the error objective a clock budget is shared by the two polishes (a
        // work budget gives each its own work).
        let from = start.elapsed();
        let shorten_until = if reroute && node_limit == u64::MAX {
            from + until.saturating_sub(from) / 2
        } else {
            until
        };
        // A work budget whose polish the clock cuts short no longer gives the same
        // program on every machine: the outcome says so.
        let in_time = |end: Duration| {
            let left = start.elapsed() < end && !crate::cancel::requested();
            if !left && end == until && node_limit != u64::MAX {
                self.struck.store(true, Ordering::Relaxed);
            }
            left
        };
        let best: std::cell::RefCell<Option<Polished<T>>> = std::cell::RefCell::new(None);
        // Finishes `steps` and keeps it if `better` says so of (instructions, cycles,
        // score) against the best so far.
        let consider = |steps: &[Step], better: &dyn Fn(Rank, Rank) -> bool| {
            let Some((value, instructions, cycles, score)) = finish(steps) else {
                return false;
            };
            let score = score + plan_risk(opts, steps, finals);
            let mut best = best.borrow_mut();
            let now = best
                .as_ref()
                .map_or(own, |b| (b.instructions, b.cycles, b.score));
            if !better((instructions, cycles, score), now) {
                return false;
            }
            *best = Some(Found {
                value: (value, steps.to_vec()),
                instructions,
                cycles,
                score,
                at: start.elapsed(),
            });
            stats.best.fetch_min(instructions, Ordering::Relaxed);
            true
        };
        let shorten_in_time = || in_time(shorten_until);
        let mut shorter = |steps: &[Step]| {
            shorten_in_time()
                && consider(steps, &|(n, c, s), (n0, c0, s0)| {
                    (n, c) < (n0, c0) && s <= s0
                })
        };
        let window = WindowOptions {
            // Windows grow until the work runs out: the larger, the rarer and dearer.
            max_window: plan.len(),
            node_limit,
        };
        let (shortened, _) = window::improve(
            plan,
            root,
            ctx,
            window,
            &fits,
            &shorten_in_time,
            &mut shorter,
        );
        if reroute {
            let in_time = || in_time(until);
            // The risk model is coarse (it does not follow a clipped value to the
            // outputs): a re-routing may lower the predicted noise, never the risk.
            let risk = plan_risk(opts, &shortened, finals);
            let mut lower = |steps: &[Step]| {
                let mine = best.borrow().as_ref().map_or(own.0, |b| b.instructions);
                let most = self.slack_bound(least.min(own.0).min(mine));
                in_time()
                    && plan_risk(opts, steps, finals) <= risk * (1.0 + 1e-9)
                    && consider(steps, &|(n, _, s), (_, _, s0)| {
                        n <= most && s < s0 * (1.0 - 1e-9)
                    })
            };
            let window = WindowOptions {
                max_window: opts.tuning.reroute_window,
                node_limit,
            };
            window::reroute(&shortened, root, ctx, window, &fits, &in_time, &mut lower);
        }
        best.into_inner()
    }
}

/// The saturation risk the error objective adds to a plan's score (0 otherwise).
fn plan_risk(
    opts: &SearchOptions,
    steps: &[Step],
    finals: &[crate::cain::moves::goal::Goal],
) -> f64 {
    match &opts.clip {
        Some(m) if opts.slack > 0.0 => m.plan_risk(steps, finals),
        _ => 0.0,
    }
}

/// See [`Shared::flat_fits`].
fn flat_fits(
    opts: &SearchOptions,
    finals: &[crate::cain::moves::goal::Goal],
    strict: bool,
    cand: &Cand,
) -> bool {
    let Some(m) = opts.clip.as_ref().filter(|_| opts.slack > 0.0) else {
        return true;
    };
    cand.step
        .ins
        .iter()
        .all(|g| !finals.contains(g) || m.flat_fits(g))
        && cand.child.0.iter().all(|g| {
            finals.contains(g)
                || (m.flat_fits(g) && (!strict || m.peak_within(g, opts.tuning.strict_range)))
        })
}

/// The search proper (see [`search`]), the error objective's two halves included.
fn search_phases<T: Send>(
    root: &Bag,
    ctx: &Ctx,
    opts: &SearchOptions,
    stats: &Stats,
    finish: &Finisher<'_, T>,
) -> Outcome<T> {
    // Where an output is beyond what one instruction makes from values held near the
    // range (a 5x5 kernel in eighths), the first half below has nothing to find: one
    // search gets it all.
    let sources = crate::cain::moves::step::Kind::most_sources(ctx.ops);
    let halves = opts
        .clip
        .as_ref()
        .filter(|_| opts.slack > 0.0)
        .is_some_and(|m| {
            root.0
                .iter()
                .all(|g| m.reachable(g, sources, opts.tuning.strict_range))
        });
    if !halves {
        return search_once(root, ctx, opts, stats, finish, false);
    }
    // Error objective: half the budget looks among plans whose values stay near the
    // register range (they clip only on strong edges), the other half among all; the
    // better of the two wins, on the same rule as within one search. Kernels whose
    // work cannot stay near the range (Sobel's) lose half the budget, no more. Values
    // beyond the limit on flat images are refused in the first half, and in the second
    // too if the first found a plan; otherwise (outputs far beyond the range, as in CNN
    // layers) they are allowed up to the largest output's flat magnitude.
    let start = Instant::now();
    let within = |c: &ClipModel| ClipModel {
        unavoidable: 0.0,
        ..c.clone()
    };
    let first = SearchOptions {
        time_limit: opts.time_limit / 2,
        node_limit: opts.node_limit.map(|n| n / 2),
        work: opts.work.map(|w| (w / 2).max(1)),
        clip: opts.clip.as_ref().map(within),
        ..opts.clone()
    };
    let a = search_once(root, ctx, &first, stats, finish, true);
    let clip = match a.best {
        Some(_) => first.clip.clone(),
        None => opts.clip.clone(),
    };
    let second = SearchOptions {
        clip,
        time_limit: opts
            .time_limit
            .saturating_sub(start.elapsed())
            .max(Duration::from_millis(1)),
        node_limit: opts.node_limit.map(|n| n - n / 2),
        work: first.work,
        ..opts.clone()
    };
    let offset = start.elapsed();
    let b = search_once(root, ctx, &second, stats, finish, false);
    let stop = if a.stop == StopReason::Time || b.stop == StopReason::Exhausted {
        a.stop
    } else {
        b.stop
    };
    let bests: Vec<Found<T>> = a
        .best
        .into_iter()
        .chain(b.best.map(|f| Found {
            at: f.at + offset,
            ..f
        }))
        .collect();
    Outcome {
        best: pick(bests, opts.slack),
        nodes: a.nodes.max(b.nodes),
        plans_found: a.plans_found.max(b.plans_found),
        seconds: start.elapsed().as_secs_f64(),
        stop,
    }
}

/// The best of several results: the shortest (then fewest cycles), or with a slack the
/// lowest score within the slack of the shortest; ties to the earlier.
fn pick<T>(bests: Vec<Found<T>>, slack: f64) -> Option<Found<T>> {
    let shortest = bests.iter().map(|b| b.instructions).min()?;
    if slack > 0.0 {
        let bound = (shortest as f64 * (1.0 + slack)).floor() as usize;
        bests
            .into_iter()
            .filter(|b| b.instructions <= bound)
            .min_by(|a, b| {
                a.score
                    .total_cmp(&b.score)
                    .then((a.instructions, a.cycles).cmp(&(b.instructions, b.cycles)))
            })
    } else {
        bests.into_iter().min_by_key(|b| (b.instructions, b.cycles))
    }
}

/// Which workers one call of [`search_ids`] runs.
struct Crew<'i> {
    /// Their numbers (which set their roles).
    ids: &'i [usize],
    /// Workers in all.
    workers: usize,
    /// See [`Shared::strict`].
    strict: bool,
}

/// One search over the whole budget (`strict`: see [`Shared::strict`]).
fn search_once<T: Send>(
    root: &Bag,
    ctx: &Ctx,
    opts: &SearchOptions,
    stats: &Stats,
    finish: &Finisher<'_, T>,
    strict: bool,
) -> Outcome<T> {
    let workers = opts.workers.max(1);
    let Some(work) = opts.work else {
        let ids: Vec<usize> = (0..workers).collect();
        return search_ids(
            root,
            ctx,
            opts,
            stats,
            finish,
            Crew {
                ids: &ids,
                workers,
                strict,
            },
        );
    };
    let own = SearchOptions {
        node_limit: Some(work),
        memory_limit: opts.memory_limit / workers as u64,
        ..opts.clone()
    };
    let threads = workers.min(std::thread::available_parallelism().map_or(1, |n| n.get()));
    // Workers beyond the threads run after one another: each gets what is left of the
    // one time limit, so that it caps the whole search in this mode too.
    let begun = std::time::Instant::now();
    let one = |id: usize| {
        let own = SearchOptions {
            time_limit: own.time_limit.saturating_sub(begun.elapsed()),
            ..own.clone()
        };
        let own = &own;
        let s = Stats::default();
        s.best
            .store(stats.best.load(Ordering::Relaxed), Ordering::Relaxed);
        let crew = Crew {
            ids: &[id],
            workers,
            strict,
        };
        let out = search_ids(root, ctx, own, &s, finish, crew);
        stats
            .nodes
            .fetch_add(s.nodes.load(Ordering::Relaxed), Ordering::Relaxed);
        stats
            .plans
            .fetch_add(s.plans.load(Ordering::Relaxed), Ordering::Relaxed);
        stats.rules.absorb(&s.rules);
        out
    };
    let outs: Vec<Outcome<T>> = match search_pool().filter(|_| threads > 1) {
        Some(pool) => pool.install(|| {
            use rayon::prelude::*;
            (0..workers).into_par_iter().map(one).collect()
        }),
        None => (0..workers).map(one).collect(),
    };
    let mut merged = Outcome {
        best: None,
        nodes: 0,
        plans_found: 0,
        seconds: 0.0,
        stop: StopReason::Exhausted,
    };
    let mut bests: Vec<Found<T>> = Vec::with_capacity(outs.len());
    for o in outs {
        merged.nodes += o.nodes;
        merged.plans_found += o.plans_found;
        merged.seconds = merged.seconds.max(o.seconds);
        // The clock striking anywhere makes the result time-dependent: say so first.
        if o.stop == StopReason::Time || merged.stop == StopReason::Exhausted {
            merged.stop = o.stop;
        }
        if let Some(b) = o.best {
            bests.push(b);
        }
    }
    // The same rule as inside one search (ties to the lower worker).
    merged.best = pick(bests, opts.slack);
    if let Some(b) = &merged.best {
        stats.best.fetch_min(b.instructions, Ordering::Relaxed);
    }
    merged
}

/// The process's one pool of search threads, built on first use with a thread per core:
/// searches take whole threads for their budget, so they get their own pool rather
/// than rayon's global one (which the simulator's bands use), and one pool per process
/// rather than one per search. `None` if the threads cannot be made.
fn search_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        rayon::ThreadPoolBuilder::new()
            .num_threads(cores)
            .thread_name(|i| format!("scamp-search-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs the workers `ids` (of `workers` in all, which sets their roles) sharing one
/// seen table and best length.
fn search_ids<T: Send>(
    root: &Bag,
    ctx: &Ctx,
    opts: &SearchOptions,
    stats: &Stats,
    finish: &Finisher<'_, T>,
    crew: Crew<'_>,
) -> Outcome<T> {
    let Crew {
        ids,
        workers,
        strict,
    } = crew;
    let sh = Shared {
        ctx,
        opts,
        stats,
        seen: Seen::new(),
        start: Instant::now(),
        stop: AtomicBool::new(false),
        reason: Mutex::new(None),
        best: Mutex::new(None),
        pool: Mutex::new(std::collections::BTreeMap::new()),
        worker_memory: (0..workers).map(|_| AtomicU64::new(0)).collect(),
        finish,
        finals: &root.0,
        strict,
    };
    if is_initial(root, ctx) {
        // Nothing to compute (e.g. the identity kernel already in its register).
        let w = Worker {
            sh: &sh,
            ctx: ctx.clone(),
            id: 0,
            rng: Rng(1),
            jitter: 0.0,
            scratch: Vec::new(),
            est: Estimator::default(),
        };
        w.offer(&[]);
    } else {
        run_crew(&sh, root, ids, workers);
    }
    conclude(sh)
}

/// Runs the workers `ids` (of `workers` in all) of the search `sh` from `root`.
fn run_crew<T: Send>(sh: &Shared<'_, T>, root: &Bag, ids: &[usize], workers: usize) {
    let (ctx, opts) = (sh.ctx, sh.opts);
    sh.seen.improve(root.fingerprint(), 0);
    // When two kernels split into a common half-sum and half-difference (as Sobel x
    // and y do), worker 1 starts by generating and ranking structurally (work shared
    // between kernels); the others keep the plain generator and estimate.
    let butterfly = root.0.iter().enumerate().any(|(i, g)| {
        root.0[i + 1..]
            .iter()
            .any(|h| g.plus(h).halved().is_some() && g.minus(h).halved().is_some())
    });
    let structured = |id: usize| ctx.structured || (workers >= 2 && id == 1 && butterfly);
    let worker = |id: usize| Worker {
        sh,
        ctx: Ctx {
            structured: structured(id),
            ..ctx.clone()
        },
        id,
        rng: Rng((opts.seed ^ (id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1),
        jitter: if id == 0 {
            0.0
        } else {
            (0.1 + 0.1 * id as f32).min(opts.tuning.max_jitter)
        },
        scratch: Vec::new(),
        est: Estimator::default(),
    };
    // More workers than cores would only make threads wait for each other (and for
    // the clock check): thread t runs workers t, t + threads, ... in turns instead.
    let threads = match search_pool() {
        Some(pool) => ids.len().min(pool.current_num_threads()),
        None => 1,
    };
    let body = |t: usize| {
        let mut mine: Vec<(Worker<'_, '_, T>, Walk)> = ids
            .iter()
            .skip(t)
            .step_by(threads)
            .map(|&id| (worker(id), Walk::new(root, ctx)))
            .collect();
        if let [(w, _)] = mine.as_mut_slice() {
            w.run(root);
            return;
        }
        while !mine.is_empty() {
            mine.retain_mut(|(w, walk)| w.run_slice(root, walk, opts.tuning.turn));
        }
    };
    match search_pool().filter(|_| threads > 1) {
        Some(pool) => pool.scope(|s| {
            for t in 0..threads {
                let body = &body;
                s.spawn(move |_| body(t));
            }
        }),
        // One thread (or no pool: resources exhausted): the workers take turns here.
        None => body(0),
    }
}

/// The search's outcome once its workers are done: the shortest plan, or under the
/// error objective the lowest score within the slack of the shortest.
fn conclude<T>(sh: Shared<'_, T>) -> Outcome<T> {
    let (opts, stats) = (sh.opts, sh.stats);
    let stop = match sh.reason.lock() {
        Ok(r) => r.unwrap_or(StopReason::Exhausted),
        Err(_) => StopReason::Exhausted,
    };
    let shortest = match sh.best.into_inner() {
        Ok(b) => b,
        Err(p) => p.into_inner(),
    };
    let pool = match sh.pool.into_inner() {
        Ok(p) => p,
        Err(p) => p.into_inner(),
    };
    // Error objective: the lowest score among the plans within the slack of the
    // shortest.
    let best = match pool.keys().next() {
        Some(&shortest_len) if opts.slack > 0.0 => {
            let bound = (shortest_len as f64 * (1.0 + opts.slack)).floor() as usize;
            pool.into_iter()
                .filter(|(n, _)| *n <= bound)
                .map(|(_, f)| f)
                .min_by(|a, b| {
                    a.score
                        .total_cmp(&b.score)
                        .then((a.instructions, a.cycles).cmp(&(b.instructions, b.cycles)))
                })
        }
        _ => shortest,
    };
    Outcome {
        best,
        nodes: stats.nodes.load(Ordering::Relaxed),
        plans_found: stats.plans.load(Ordering::Relaxed),
        seconds: sh.start.elapsed().as_secs_f64(),
        stop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cain::moves::goal::fixtures::grid;
    use crate::cain::moves::goal::Goal;
    use crate::cain::moves::step::Kind;
    use crate::cain::spec::Ops;

    #[test]
    fn structured_search_shares_work_between_the_sobel_pair() {
        let ctx = Ctx {
            init: Goal::single(0, 0, 1),
            others: Vec::new(),
            regs: 6,
            ops: Ops::All,
            depth: 0,
            max_atoms: 1000,
            structured: true,
        };
        let root = Bag::new(vec![
            grid(&[&[-1, 0, 1], &[-2, 0, 2], &[-1, 0, 1]]),
            grid(&[&[-1, -2, -1], &[0, 0, 0], &[1, 2, 1]]),
        ]);
        let opts = SearchOptions {
            time_limit: Duration::from_secs(60),
            node_limit: Some(20_000),
            ..SearchOptions::default()
        };
        let finish = |steps: &[Step]| {
            assert!(steps.iter().all(Step::is_consistent));
            Some((steps.len(), steps.len(), 0, 0.0))
        };
        let out = search(&root, &ctx, &opts, &Stats::default(), &finish);
        let best = out.best.expect("a plan");
        // Separately the pair takes 10 (5 each); sharing brings it to 9 here (8 with
        // two workers, see programs/sobel_xy.scamp).
        assert!(best.instructions <= 9, "{}", best.instructions);
    }

    #[test]
    fn reachable_asks_for_at_most_the_sources_times_the_limit() {
        // Quarters of inputs -128..127 against a limit of 128: a goal of 12 atoms
        // reaches 3 x 128, made by adding three values of 4 atoms each.
        let range = GoalRange {
            depth: 2,
            lo: -128.0,
            hi: 127.0,
            limit: 128.0,
            exempt: Vec::new(),
        };
        let three = grid(&[&[4, -4, 4]]);
        assert!(!range.fits(&three));
        assert!(range.reachable(&three, 3) && !range.reachable(&three, 2));
        assert!(!range.reachable(&grid(&[&[4, -4, 5]]), 3));
        assert!(range.reachable(&grid(&[&[4]]), 1) && range.fits(&grid(&[&[4]])));
        assert_eq!(Kind::most_sources(Ops::All), 3);
        assert_eq!(Kind::most_sources(Ops::Basic), 2);
    }

    #[test]
    fn polishing_a_plan_returns_only_improvements() {
        let ctx = Ctx {
            init: Goal::single(0, 0, 1),
            others: Vec::new(),
            regs: 6,
            ops: Ops::All,
            depth: 0,
            max_atoms: 100,
            structured: false,
        };
        let x = ctx.init.clone();
        let east = |g: &Goal, s: usize| Step {
            kind: Kind::Shift(crate::cain::moves::goal::SHIFTS[s]),
            outs: vec![g
                .shifted(crate::cain::moves::goal::SHIFTS[s])
                .expect("in reach")],
            ins: vec![g.clone()],
        };
        // x moved two east by two one-step moves; `mov2x` does it in one.
        let first = east(&x, 1);
        let second = east(&first.outs[0], 1);
        let root = Bag::new(second.outs.clone());
        let plan = vec![first, second];
        let opts = SearchOptions {
            node_limit: Some(10_000),
            slack: 0.25,
            ..SearchOptions::default()
        };
        // Scored by the one-step moves it makes (the error objective's role).
        let finish = |steps: &[Step]| {
            assert!(steps.iter().all(Step::is_consistent));
            let singles = steps
                .iter()
                .filter(|s| s.kind.shift().is_some_and(|d| d.is_single()))
                .count();
            Some((
                steps.to_vec(),
                steps.len(),
                steps.len() as u64,
                singles as f64,
            ))
        };
        let out = polish(&root, &ctx, &opts, &Stats::default(), &finish, &plan);
        let best = out.best.expect("an improvement");
        assert_eq!((best.instructions, best.score), (1, 0.0));
        assert_eq!(best.value[0].outs, root.0);
        assert_eq!(out.stop, StopReason::Exhausted);
        // The improved plan cannot be improved again: nothing is returned, never the
        // plan itself.
        let again = polish(&root, &ctx, &opts, &Stats::default(), &finish, &best.value);
        assert!(again.best.is_none());
    }
}
