//! The embedding soak: the testbed and the other guests in one `PluginSet`
//! in this process, on tokio, several sessions at once, each a stream of
//! wire requests answered through the set's session API (see `front`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result};
use lingxi_wasm_host::observe::{LogLine, LogSink, LogSource};
use lingxi_wasm_host::{
    CallOptions, CompileCache, Grant, Limits, PluginOptions, PluginSet, Runtime, RuntimeConfig,
    Session, no_grant,
};

use crate::Config;
use crate::fault::{Breaker, Target};
use crate::front::Front;
use crate::mix::{Line, Request, What};
use crate::progress::Ticker;
use crate::report::{Report, Tally};
use crate::sample::{Sample, sample, trim_own_heap};

/// What the session tasks share: answers so far, samples, progress, and a
/// gate: every exchange holds it shared, a sample holds it alone, so that
/// samples are taken with no call in progress (a call may hold a 17 MiB
/// result for a moment).
struct Shared {
    done: AtomicU64,
    sample_every: u64,
    samples: Mutex<Vec<Sample>>,
    ticker: Mutex<Ticker>,
    gate: tokio::sync::RwLock<()>,
    sessions: Mutex<Vec<Arc<Session>>>,
}

impl Shared {
    /// Runs `step` (within the gate), then counts the answers it got.
    async fn step<F: Future<Output = u64>>(&self, step: F) {
        let gate = self.gate.read().await;
        let answered = step.await;
        drop(gate);
        let before = self.done.fetch_add(answered, Ordering::Relaxed);
        let done = before + answered;
        if done / self.sample_every > before / self.sample_every {
            self.sample(done).await;
        }
        if done / 1000 > before / 1000 {
            let mut ticker = self.ticker.lock().unwrap_or_else(|e| e.into_inner());
            ticker.tick(done);
        }
    }

    /// Samples this process with no call in progress, every session's
    /// testbed instance live (each holds its data directory open: a
    /// session just deactivated would have one descriptor fewer) and freed
    /// memory given back (see `trim_own_heap`).
    async fn sample(&self, done: u64) {
        let _alone = self.gate.write().await;
        let sessions = self
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for session in sessions {
            // A call, not `Session::start`: after a crash the instance is
            // made again only by the next call.
            let _ = session
                .call_tool("ok", "warm", CallOptions::default())
                .await;
        }
        trim_own_heap();
        if let Some(s) = sample(None, done) {
            self.samples
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(s);
        }
    }
}

/// Guest lines the log sink got.
#[derive(Default)]
struct Lines {
    all: AtomicU64,
    unprintable: AtomicU64,
}

/// Runs the embedding soak on a tokio runtime of its own (two workers).
pub fn run(config: &Config) -> Result<Report> {
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start tokio")?;
    tokio.block_on(soak(config))
}

async fn soak(config: &Config) -> Result<Report> {
    let started = Instant::now();
    let cache = CompileCache::new(config.work_dir.join("cache"));
    let runtime = Runtime::with_config(RuntimeConfig::pooled(64))?.with_cache(Some(cache));
    let limits = Limits {
        max_traps: if config.max_traps == 0 {
            usize::MAX
        } else {
            config.max_traps
        },
        trap_window: config.trap_window,
        ..Limits::default()
    };
    let lines = Arc::new(Lines::default());
    let counted = lines.clone();
    let sink: LogSink = Arc::new(move |line: &LogLine<'_>| {
        counted.all.fetch_add(1, Ordering::Relaxed);
        // Only printed output can carry raw control bytes: check those.
        if matches!(line.source, LogSource::Stdout | LogSource::Stderr)
            && line.text.chars().any(|c| c.is_control() && c != '\t')
        {
            counted.unprintable.fetch_add(1, Ordering::Relaxed);
        }
    });
    let mut set = PluginSet::new(runtime).with_limits(limits.clone());
    let options = |grant: Grant| PluginOptions {
        grant,
        limits: Some(limits.clone()),
        log_sink: Some(sink.clone()),
        validate_arguments: true,
    };
    let data = Grant {
        data_root: Some(config.work_dir.join("data")),
        ..no_grant()
    };
    let mut ids = Vec::new();
    for (path, grant) in std::iter::once((&config.component, data))
        .chain(config.plugins.iter().map(|p| (p, no_grant())))
    {
        let manifest = set.load_file(path, options(grant)).await;
        let manifest = manifest.with_context(|| format!("cannot add {}", path.display()))?;
        ids.push(manifest.id.clone());
    }
    let has = |id: &str| ids.iter().any(|i| i == id);
    let target = Target::Embed {
        probe: has("com.lingxi.test-probe"),
        quickstart: has("com.example.my-plugin"),
    };
    let sessions = config.sessions.max(1) as u64;
    let shared = Arc::new(Shared {
        done: AtomicU64::new(0),
        sample_every: (config.requests / config.samples.max(1)).max(1),
        samples: Mutex::new(Vec::from_iter(sample(None, 0))),
        ticker: Mutex::new(Ticker::new(config, "embed")),
        gate: tokio::sync::RwLock::new(()),
        sessions: Mutex::new(Vec::new()),
    });
    let mut tasks = tokio::task::JoinSet::new();
    for k in 0..sessions {
        let n = config.requests / sessions + u64::from(k < config.requests % sessions);
        let session = Arc::new(set.session(format!("soak-{k}"), None)?);
        let sessions = &shared.sessions;
        sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(session.clone());
        let front = Front::new(session, config.spin_deadline);
        let seed = config.seed ^ (k + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let line = Line::new(
            target,
            seed,
            &format!("s{k}"),
            config.fault_ppm,
            &config.faults,
        );
        let breaker = Breaker::new(config.breaker, config.max_traps, config.trap_window);
        tasks.spawn(session_soak(
            front,
            line,
            breaker,
            n,
            target,
            shared.clone(),
        ));
    }
    let mut tally = Tally::default();
    while let Some(joined) = tasks.join_next().await {
        tally.merge(joined.context("a session task failed")?);
    }
    shared.sample(tally.answered).await;
    let samples = std::mem::take(&mut *shared.samples.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(Report {
        mode: "embed",
        tally,
        wall: started.elapsed(),
        samples,
        warm_from: (config.requests as f64 * config.warmup) as u64,
        log_lines: lines.all.load(Ordering::Relaxed),
        unprintable_lines: lines.unprintable.load(Ordering::Relaxed),
        notes: vec![format!(
            "plugins {ids:?}; {sessions} sessions; spin deadline {} s (the caller's, so spins do not count toward the breaker); breaker {} traps within {} s, policy {:?}",
            config.spin_deadline.as_secs_f64(),
            limits.max_traps,
            limits.trap_window.as_secs(),
            config.breaker
        )],
        ..Report::default()
    })
}

/// One session's stream: requests one after another, as a conversation
/// makes them.
async fn session_soak(
    mut front: Front,
    mut line: Line,
    mut breaker: Breaker,
    requests: u64,
    target: Target,
    shared: Arc<Shared>,
) -> Tally {
    let mut tally = Tally::default();
    let mut queue: VecDeque<Request> = line.opening().into();
    while tally.sent < requests {
        let request = match queue.pop_front() {
            Some(request) => request,
            None => line.next(breaker.allows_counting(Instant::now())),
        };
        if let What::Fault(fault) = request.what
            && fault.counts(target)
        {
            breaker.sent(Instant::now());
        }
        let (front, tally, breaker, line) = (&mut front, &mut tally, &mut breaker, &mut line);
        shared
            .step(async move {
                exchange(front, request, tally, breaker, line, target).await;
                if !breaker.must_restart() {
                    return 1;
                }
                // The breaker must have disabled the testbed: one call it
                // refuses, then, as documented, the session starts over. In
                // the same step, so that no sample sees it disabled.
                let mut answered = 1;
                if breaker.tripped() && tally.sent < requests {
                    let probe = line.probe();
                    exchange(front, probe, tally, breaker, line, target).await;
                    answered += 1;
                }
                front.session().deactivate().await;
                tally.restarts += 1;
                line.instance_reset();
                breaker.reset();
                answered
            })
            .await;
    }
    tally
}

async fn exchange(
    front: &mut Front,
    request: Request,
    tally: &mut Tally,
    breaker: &mut Breaker,
    line: &mut Line,
    target: Target,
) {
    tally.sent(&request);
    let text = request.line.clone();
    let mut inflight = VecDeque::from([request]);
    let Some(answer) = front.answer(&text).await else {
        tally.lose(&mut inflight, "no answer");
        return;
    };
    match tally.receive(&mut inflight, &answer) {
        Some((request, true)) => match request.what {
            What::Fault(fault) if fault.counts(target) => breaker.done(Instant::now()),
            What::Probe => tally.trips += 1,
            _ => {}
        },
        Some((_, false)) => {
            line.desync();
            breaker.surprise(&answer, Instant::now());
        }
        None => tally.lose(&mut inflight, "an answer to another request"),
    }
}
