//! The launcher soak: the real `lingxi-wasm-run` serving the testbed over
//! pipes, driven as a LingXi host drives a plugin (a snapshot, then
//! `plugin.initialize`, then calls), with a window of requests in flight.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::fault::{Breaker, BreakerPolicy, Target};
use crate::mix::{Line, Request, What};
use crate::report::{Report, Tally};
use crate::sample::sample;
use crate::{Config, progress};

/// What a launcher wrote to stderr.
#[derive(Default)]
struct Stderr {
    bytes: AtomicU64,
    escapes: AtomicU64,
    tail: Mutex<Vec<u8>>,
}

/// One running launcher.
struct Proc {
    child: Child,
    stdin: Option<BufWriter<ChildStdin>>,
    lines: Receiver<String>,
    stderr: Arc<Stderr>,
    drain: Option<JoinHandle<()>>,
}

impl Proc {
    fn spawn(config: &Config) -> Result<Proc> {
        let data = config.work_dir.join("data");
        let mut command = Command::new(&config.launcher);
        command
            .arg("--grant")
            .arg("none")
            .arg("--data-root")
            .arg(&data)
            .arg("--timeout")
            .arg(format!("{}", config.timeout.as_secs_f64()))
            .arg(&config.component)
            .envs(config.launcher_env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .with_context(|| format!("cannot start {}", config.launcher.display()))?;
        let stdout = child.stdout.take().context("no stdout pipe")?;
        let mut err = child.stderr.take().context("no stderr pipe")?;
        let stdin = child.stdin.take().map(BufWriter::new);
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Stderr::default());
        let sink = stderr.clone();
        let drain = std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let chunk = &buf[..n];
                sink.bytes.fetch_add(n as u64, Ordering::Relaxed);
                let escapes = chunk.iter().filter(|b| **b == 0x1b).count();
                sink.escapes.fetch_add(escapes as u64, Ordering::Relaxed);
                let mut tail = sink.tail.lock().unwrap_or_else(|e| e.into_inner());
                tail.extend_from_slice(chunk);
                let excess = tail.len().saturating_sub(4096);
                tail.drain(..excess);
            }
        });
        Ok(Proc {
            child,
            stdin,
            lines,
            stderr,
            drain: Some(drain),
        })
    }

    fn send(&mut self, line: &str) -> std::io::Result<()> {
        let stdin = self.stdin.as_mut().ok_or(std::io::ErrorKind::BrokenPipe)?;
        stdin.write_all(line.as_bytes())?;
        stdin.write_all(b"\n")
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.stdin.as_mut() {
            Some(stdin) => stdin.flush(),
            None => Ok(()),
        }
    }

    fn stderr_tail(&self) -> String {
        let tail = self.stderr.tail.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&tail).into_owned()
    }

    /// Closes stdin and waits for the exit (killing the launcher after
    /// `guard`); lines it still writes are stray. True if it exited 0.
    fn finish(mut self, guard: Duration, tally: &mut Tally, report: &mut Report) -> bool {
        drop(self.stdin.take());
        let deadline = Instant::now() + guard;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2))
                }
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break None;
                }
            }
        };
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            tally.stray += 1;
            tally.problem(format!("a line after EOF: {line}"));
        }
        if let Some(drain) = self.drain.take() {
            let _ = drain.join();
        }
        report.stderr_bytes += self.stderr.bytes.load(Ordering::Relaxed);
        report.stderr_escapes += self.stderr.escapes.load(Ordering::Relaxed);
        let ok = status.is_some_and(|s| s.success());
        if !ok {
            report.bad_exits += 1;
            tally.problem(format!(
                "launcher exit {status:?} at EOF; stderr ends: {}",
                self.stderr_tail()
            ));
        }
        ok
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the launcher soak.
pub fn run(config: &Config) -> Result<Report> {
    anyhow::ensure!(
        config.max_traps == 5 && config.trap_window == Duration::from_secs(60),
        "the launcher's crash breaker is fixed at 5 traps within 60 s (it has no flag): \
         run the launcher mode with --max-traps 5 --trap-window 60"
    );
    let started = Instant::now();
    let mut soak = Soak {
        config,
        proc: Proc::spawn(config)?,
        line: Line::new(
            Target::Launcher,
            config.seed,
            "L",
            config.fault_ppm,
            &config.faults,
        ),
        breaker: Breaker::new(config.breaker, config.max_traps, config.trap_window),
        tally: Tally::default(),
        inflight: VecDeque::new(),
        queue: VecDeque::new(),
        report: Report {
            mode: "launcher",
            warm_from: (config.requests as f64 * config.warmup) as u64,
            processes: 1,
            ..Report::default()
        },
    };
    soak.queue.extend(soak.line.opening());
    soak.run();
    soak.proc
        .finish(config.guard, &mut soak.tally, &mut soak.report);
    let mut report = soak.report;
    report.wall = started.elapsed();
    report.tally = soak.tally;
    report.notes.push(format!(
        "{} with --timeout {} s; breaker policy {:?} (the launcher's breaker: 5 traps within 60 s)",
        config.launcher.display(),
        config.timeout.as_secs_f64(),
        config.breaker
    ));
    Ok(report)
}

/// A launcher soak in progress.
struct Soak<'a> {
    config: &'a Config,
    proc: Proc,
    line: Line,
    breaker: Breaker,
    tally: Tally,
    inflight: VecDeque<Request>,
    /// Requests to send before drawing new ones (a new launcher's opening).
    queue: VecDeque<Request>,
    report: Report,
}

impl Soak<'_> {
    fn run(&mut self) {
        let config = self.config;
        let sample_every = (config.requests / config.samples.max(1)).max(1);
        // Under the restart policy a launcher lives a few hundred requests:
        // each is sampled at the end of its life, right after the fault that
        // tripped the breaker (no instance is live then). Otherwise the one
        // launcher is sampled with an instance live. Either way nothing is
        // in flight: a call in progress may hold a file open for a moment.
        let at_restart = config.breaker == BreakerPolicy::Restart
            && config.faults.iter().any(|f| f.counts(Target::Launcher));
        let (mut due, mut next_sample) = (false, sample_every);
        let mut ticker = progress::Ticker::new(config, "launcher");
        loop {
            if self.breaker.must_restart() {
                self.drain();
                if due {
                    self.sample();
                    due = false;
                }
                // One call the breaker must refuse, then a new launcher, as
                // the refusal says.
                if self.breaker.tripped() && self.tally.sent < config.requests {
                    let probe = self.line.probe();
                    self.send(probe);
                    self.drain();
                }
                if self.tally.sent >= config.requests {
                    break;
                }
                self.tally.restarts += 1;
                self.respawn();
            }
            while self.inflight.len() < config.window
                && self.tally.sent < config.requests
                && !self.breaker.must_restart()
            {
                let request = match self.queue.pop_front() {
                    Some(request) => request,
                    None => self.line.next(self.breaker.allows_counting(Instant::now())),
                };
                if let What::Fault(fault) = request.what
                    && fault.counts(Target::Launcher)
                {
                    self.breaker.sent(Instant::now());
                }
                self.send(request);
            }
            self.proc.flush().ok();
            if self.inflight.is_empty() {
                if self.tally.sent >= config.requests {
                    break;
                }
                continue;
            }
            if !self.receive_one() {
                // The launcher died or stopped answering: what was in flight
                // is lost; start a new one and go on.
                self.respawn();
            }
            ticker.tick(self.tally.answered);
            if self.tally.answered >= next_sample {
                next_sample += sample_every;
                if at_restart {
                    due = true;
                } else {
                    self.sample_live();
                }
            }
        }
        if !at_restart || self.report.samples.is_empty() {
            self.sample_live();
        }
    }

    /// Ends this launcher (EOF) and starts the next, which gets a snapshot
    /// and `plugin.initialize` first.
    fn respawn(&mut self) {
        let next = match Proc::spawn(self.config) {
            Ok(next) => next,
            Err(e) => {
                self.tally
                    .problem(format!("cannot restart the launcher: {e:#}"));
                return;
            }
        };
        let done = std::mem::replace(&mut self.proc, next);
        done.finish(self.config.guard, &mut self.tally, &mut self.report);
        self.report.processes += 1;
        self.line.new_process();
        self.breaker.reset();
        self.queue.extend(self.line.opening());
    }

    fn sample(&mut self) {
        let pid = self.proc.child.id();
        self.report
            .samples
            .extend(sample(Some(pid), self.tally.answered));
    }

    /// Samples with the testbed's instance live (it holds its data
    /// directory open) and nothing in flight.
    fn sample_live(&mut self) {
        // (Not when the breaker may have disabled the testbed.)
        if !self.breaker.must_restart() {
            let warm = self.line.warm();
            self.send(warm);
        }
        self.drain();
        self.sample();
    }

    fn send(&mut self, request: Request) {
        self.tally.sent(&request);
        // A write to a launcher that died fails here; its answers are then
        // missing, which the reader sees.
        let _ = self.proc.send(&request.line);
        self.inflight.push_back(request);
    }

    /// Receives until nothing is in flight.
    fn drain(&mut self) {
        self.proc.flush().ok();
        while !self.inflight.is_empty() {
            if !self.receive_one() {
                break;
            }
        }
    }

    /// Receives and checks one answer; false if none came (EOF or the
    /// guard time passed), in which case what was in flight is lost.
    fn receive_one(&mut self) -> bool {
        match self.proc.lines.recv_timeout(self.config.guard) {
            Ok(text) => {
                if let Some((request, right)) = self.tally.receive(&mut self.inflight, &text) {
                    match (request.what, right) {
                        (What::Fault(fault), true) if fault.counts(Target::Launcher) => {
                            self.breaker.done(Instant::now());
                        }
                        (What::Probe, true) => self.tally.trips += 1,
                        (_, false) => {
                            self.line.desync();
                            self.breaker.surprise(&text, Instant::now());
                        }
                        _ => {}
                    }
                }
                true
            }
            Err(RecvTimeoutError::Timeout) => {
                let inflight = &mut self.inflight;
                self.tally.lose(inflight, "no answer within the guard time");
                false
            }
            Err(RecvTimeoutError::Disconnected) => {
                let inflight = &mut self.inflight;
                self.tally.lose(inflight, "the launcher closed stdout");
                false
            }
        }
    }
}
