//! One worker of the backward search: its nodes, the seen table and state all workers
//! share, and the child-generator deque walk itself.

use super::*;
use crate::cain::moves::goal::Bag;
use crate::cain::moves::reverse::{expand, is_initial, Cand, Ctx, PassThrough};
use crate::cain::moves::step::Step;
use crate::cain::search::heuristic::{lower_bound, Estimator};
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub(super) struct Link {
    pub(super) step: Step,
    pub(super) next: Option<Arc<Link>>,
}

pub(super) struct Node {
    pub(super) bag: Bag,
    pub(super) g: u32,
    pub(super) lb: u32,
    pub(super) path: Option<Arc<Link>>,
    /// Ranked children not yet produced, best last.
    pub(super) cands: Vec<Cand>,
    /// Children produced so far.
    pub(super) taken: usize,
    /// Number of children in total, once generated.
    pub(super) total: Option<usize>,
}

impl Node {
    /// The search's starting point: the kernels' goals, nothing done yet.
    pub(super) fn root(bag: &Bag, ctx: &Ctx) -> Node {
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

pub(super) type Shard = Mutex<HashMap<u64, u32, BuildHasherDefault<PassThrough>>>;

/// Bags seen so far with the lowest cost they were reached at, shared by all workers.
pub(super) struct Seen {
    pub(super) shards: Vec<Shard>,
    pub(super) len: AtomicU64,
}

impl Seen {
    pub(super) fn new() -> Seen {
        Seen {
            shards: (0..64).map(|_| Mutex::new(HashMap::default())).collect(),
            len: AtomicU64::new(0),
        }
    }

    /// Records `g` for `fp`; false if the bag was already reached at cost <= g.
    pub(super) fn improve(&self, fp: u64, g: u32) -> bool {
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

    pub(super) fn bytes(&self) -> u64 {
        // A hashbrown entry of (u64, u32) with control byte and load factor.
        self.len.load(Ordering::Relaxed) * 24
    }
}

pub(super) struct Shared<'a, T> {
    pub(super) ctx: &'a Ctx,
    pub(super) opts: &'a SearchOptions,
    pub(super) stats: &'a Stats,
    pub(super) seen: Seen,
    pub(super) start: Instant,
    pub(super) stop: AtomicBool,
    pub(super) reason: Mutex<Option<StopReason>>,
    pub(super) best: Mutex<Option<Found<T>>>,
    /// Per instruction count, the finished plan with the lowest score (error objective).
    pub(super) pool: Mutex<std::collections::BTreeMap<usize, Found<T>>>,
    pub(super) worker_memory: Vec<AtomicU64>,
    /// Nodes this search's workers expanded together (the live counter in `stats`
    /// may hold other searches' too): what a shared work budget is counted on.
    pub(super) nodes: AtomicU64,
    pub(super) finish: &'a Finisher<'a, T>,
    /// The final goals (the root bag), for the clipping cost.
    pub(super) finals: &'a [crate::cain::moves::goal::Goal],
    /// Whether values other than the final goals are held to [`Tuning::strict_range`] times
    /// the register limit (the first half of an error-objective search).
    pub(super) strict: bool,
}

impl<T> Shared<'_, T> {
    pub(super) fn halt(&self, why: StopReason) {
        if let Ok(mut r) = self.reason.lock() {
            r.get_or_insert(why);
        }
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Under the error objective, whether the values `cand` needs stay within the
    /// register limit on flat image regions (where a value is its coefficient sum times
    /// the level): no new value beyond it, and no final output that cannot fit read by
    /// another instruction (it would pass on its clipped value).
    pub(super) fn flat_fits(&self, cand: &Cand) -> bool {
        flat_fits(self.opts, self.finals, self.strict, cand)
    }

    /// The combined nodes that stop a shared work budget (see
    /// [`SearchOptions::shared`]): the work times the workers; `None` otherwise.
    pub(super) fn combined_work(&self) -> Option<u64> {
        let workers = self.worker_memory.len().max(1) as u64;
        let opts = self.opts;
        opts.work
            .filter(|_| opts.shared)
            .map(|w| w.saturating_mul(workers))
    }

    pub(super) fn best_len(&self) -> usize {
        self.stats.best.load(Ordering::Relaxed)
    }

    /// Plans and partial plans reaching this many instructions are not worth pursuing:
    /// the best length, or with a slack every length up to `(1 + slack)` times it.
    pub(super) fn length_limit(&self) -> usize {
        let best = self.best_len();
        if self.opts.slack <= 0.0 || best == usize::MAX {
            return best;
        }
        (best as f64 * (1.0 + self.opts.slack)).floor() as usize + 1
    }
}

pub(super) fn bag_bytes(b: &Bag) -> u64 {
    24 + b.0.iter().map(|g| 24 + 8 * g.0.len() as u64).sum::<u64>()
}

pub(super) fn node_bytes(n: &Node) -> u64 {
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

pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub(super) fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Where one worker's walk stands: its deque of open nodes and its counters, kept apart
/// from the worker so that several workers can take turns on one thread.
pub(super) struct Walk {
    pub(super) deque: VecDeque<Node>,
    pub(super) iter: u64,
    pub(super) reported: u64,
    pub(super) bytes: u64,
}

impl Walk {
    pub(super) fn new(root: &Bag, ctx: &Ctx) -> Walk {
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

pub(super) struct Worker<'s, 'a, T> {
    pub(super) sh: &'s Shared<'a, T>,
    /// The problem as this worker generates it (structured or not).
    pub(super) ctx: Ctx,
    pub(super) id: usize,
    pub(super) rng: Rng,
    /// Relative jitter of the ranking (0 for worker 0).
    pub(super) jitter: f32,
    pub(super) scratch: Vec<Cand>,
    pub(super) est: Estimator,
}

impl<T> Worker<'_, '_, T> {
    /// Ranks all children of `node` and keeps the next chunk.
    pub(super) fn refill(&mut self, node: &mut Node) {
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

    pub(super) fn next_child(&mut self, node: &mut Node) -> Option<Cand> {
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

    pub(super) fn plan(step: &Step, path: &Option<Arc<Link>>) -> Vec<Step> {
        let mut steps = vec![step.clone()];
        let mut cur = path.as_ref();
        while let Some(l) = cur {
            steps.push(l.step.clone());
            cur = l.next.as_ref();
        }
        steps
    }

    pub(super) fn offer(&self, steps: &[Step]) {
        self.sh.stats.plans.fetch_add(1, Ordering::Relaxed);
        self.record(steps);
    }

    /// Finishes `steps` and keeps the result if it is the best so far (of its length,
    /// under the error objective).
    pub(super) fn record(&self, steps: &[Step]) {
        let sh = self.sh;
        if steps.len() >= sh.length_limit() {
            return;
        }
        let Some((value, instructions, cycles, score)) = (sh.finish)(steps) else {
            return;
        };
        let score = score + plan_clipping(sh.opts, steps, sh.finals);
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
    pub(super) fn run(&mut self, root: &Bag) {
        let mut state = Walk::new(root, self.sh.ctx);
        while self.run_slice(root, &mut state, u64::MAX) {}
    }

    /// Runs at most `slice` iterations of the walk `state`; false once this worker is
    /// done (the search stopped, or its deque ran dry).
    pub(super) fn run_slice(&mut self, root: &Bag, state: &mut Walk, slice: u64) -> bool {
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
            // again from the root with the plain generator and estimate. A shared work
            // (a calibrated length phase) ends it at the earlier of its share of the
            // work and of the clock: never later than the clock race ends it.
            let of_work = |w: u64| iter as f64 >= tuning.structured_share * w as f64;
            let of_clock = || {
                sh.start.elapsed().as_secs_f64()
                    >= tuning.structured_share * sh.opts.time_limit.as_secs_f64()
            };
            let phase_over = match sh.opts.work {
                Some(w) if sh.opts.shared => of_work(w) || of_clock(),
                Some(w) => of_work(w),
                None => of_clock(),
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
    pub(super) fn out_of_time(&self) -> bool {
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
    pub(super) fn check(&mut self, fresh: u64, bytes: u64) -> bool {
        let sh = self.sh;
        let nodes = sh.stats.nodes.fetch_add(fresh, Ordering::Relaxed);
        let together = sh.nodes.fetch_add(fresh, Ordering::Relaxed) + fresh;
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
        } else if sh.opts.node_limit.is_some_and(|l| nodes >= l)
            || sh.combined_work().is_some_and(|w| together >= w)
        {
            sh.halt(StopReason::Nodes);
        } else if mem >= sh.opts.memory_limit {
            sh.halt(StopReason::Memory);
        }
        sh.stop.load(Ordering::Relaxed)
    }
}
