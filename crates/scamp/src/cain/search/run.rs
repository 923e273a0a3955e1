//! Running the workers: the error objective's two halves, one search over the whole
//! budget (shared or, with a work budget not shared, apart), the thread pool and the
//! outcome.

use super::*;
use crate::cain::moves::goal::Bag;
use crate::cain::moves::reverse::{is_initial, Ctx};
use crate::cain::score::clipping::ClipModel;
use crate::cain::search::heuristic::Estimator;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The search proper (see [`search`]), the error objective's two halves included.
pub(super) fn search_phases<T: Send>(
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
pub(super) fn pick<T>(bests: Vec<Found<T>>, slack: f64) -> Option<Found<T>> {
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
pub(super) struct Crew<'i> {
    /// Their numbers (which set their roles).
    pub(super) ids: &'i [usize],
    /// Workers in all.
    pub(super) workers: usize,
    /// See [`Shared::strict`].
    pub(super) strict: bool,
}

/// One search over the whole budget (`strict`: see [`Shared::strict`]): the workers
/// together, or with a work budget not [shared](SearchOptions::shared) each on its own.
pub(super) fn search_once<T: Send>(
    root: &Bag,
    ctx: &Ctx,
    opts: &SearchOptions,
    stats: &Stats,
    finish: &Finisher<'_, T>,
    strict: bool,
) -> Outcome<T> {
    let workers = opts.workers.max(1);
    let Some(work) = opts.work.filter(|_| !opts.shared) else {
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
pub(super) fn search_pool() -> Option<&'static rayon::ThreadPool> {
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
pub(super) fn search_ids<T: Send>(
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
        nodes: AtomicU64::new(0),
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
pub(super) fn run_crew<T: Send>(sh: &Shared<'_, T>, root: &Bag, ids: &[usize], workers: usize) {
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
pub(super) fn conclude<T>(sh: Shared<'_, T>) -> Outcome<T> {
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
