//! Counting what happened (requests, answers, faults) and saying whether
//! the run passed.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::time::Duration;

use crate::expect::{check, response_id};
use crate::fault::Fault;
use crate::mix::{Request, What};
use crate::sample::{Sample, Summary};

/// Counts of one line or of a whole run.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// Requests sent.
    pub sent: u64,
    /// Responses that answered a request in flight.
    pub answered: u64,
    /// Requests that never got an answer.
    pub lost: u64,
    /// Answers that overtook an earlier request's.
    pub misordered: u64,
    /// Answers of the wrong kind or content.
    pub wrong: u64,
    /// Lines on the protocol channel that answered no request in flight
    /// (unknown or repeated ids, not a response at all).
    pub stray: u64,
    /// Faults injected, by kind.
    pub faults: BTreeMap<Fault, u64>,
    /// Times the breaker disabled the testbed and a probe confirmed it.
    pub trips: u64,
    /// Times a line started over (launcher restarts, session deactivations).
    pub restarts: u64,
    /// The first problems, to show.
    pub problems: Vec<String>,
}

impl Tally {
    /// Notes a problem (the first 20 are kept).
    pub fn problem(&mut self, text: String) {
        if self.problems.len() < 20 {
            self.problems.push(text);
        }
    }

    /// A request went out.
    pub fn sent(&mut self, request: &Request) {
        self.sent += 1;
        if let What::Fault(fault) = request.what {
            *self.faults.entry(fault).or_default() += 1;
        }
    }

    /// Matches `line` to the request in flight it answers and checks it:
    /// that request and whether its answer was right, or `None` for a
    /// line that answers nothing in flight.
    pub fn receive(
        &mut self,
        inflight: &mut VecDeque<Request>,
        line: &str,
    ) -> Option<(Request, bool)> {
        let Some(id) = response_id(line) else {
            self.stray += 1;
            self.problem(format!("a line that is not a response: {}", cut(line)));
            return None;
        };
        let Some(position) = inflight.iter().position(|r| r.id == id) else {
            self.stray += 1;
            self.problem(format!("a response to no request in flight: {}", cut(line)));
            return None;
        };
        if position > 0 {
            self.misordered += 1;
            self.problem(format!("{id} answered before {}", inflight[0].id));
        }
        let request = inflight.remove(position)?;
        self.answered += 1;
        let right = match check(line, request.dialect, &request.expect) {
            Ok(()) => true,
            Err(why) => {
                self.wrong += 1;
                self.problem(format!("{why}; request: {}", cut(&request.line)));
                false
            }
        };
        Some((request, right))
    }

    /// Every request still in flight is lost.
    pub fn lose(&mut self, inflight: &mut VecDeque<Request>, why: &str) {
        if let Some(first) = inflight.front() {
            let text = format!(
                "{} requests lost ({why}), first {}",
                inflight.len(),
                first.id
            );
            self.problem(text);
        }
        self.lost += inflight.len() as u64;
        inflight.clear();
    }

    /// Adds `other`.
    pub fn merge(&mut self, other: Tally) {
        self.sent += other.sent;
        self.answered += other.answered;
        self.lost += other.lost;
        self.misordered += other.misordered;
        self.wrong += other.wrong;
        self.stray += other.stray;
        for (fault, n) in other.faults {
            *self.faults.entry(fault).or_default() += n;
        }
        self.trips += other.trips;
        self.restarts += other.restarts;
        for problem in other.problems {
            self.problem(problem);
        }
    }
}

fn cut(line: &str) -> String {
    crate::expect::cut(line, 240).to_owned()
}

/// What may grow after warm-up before the run fails (`None`: not checked).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// RSS growth, in percent.
    pub max_rss_growth_pct: Option<f64>,
    /// Open descriptors added.
    pub max_fd_growth: Option<i64>,
}

/// The outcome of one mode's run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// `launcher` or `embed`.
    pub mode: &'static str,
    /// The counts.
    pub tally: Tally,
    /// How long it took.
    pub wall: Duration,
    /// RSS and descriptors of the process soaked (the launcher's, or this one's).
    pub samples: Vec<Sample>,
    /// Samples from this many answered requests on are after warm-up.
    pub warm_from: u64,
    /// Launcher processes started.
    pub processes: u64,
    /// Launcher processes that did not exit 0 at EOF.
    pub bad_exits: u64,
    /// Bytes the launchers wrote to stderr.
    pub stderr_bytes: u64,
    /// Raw escape bytes among them (guest output must arrive made printable).
    pub stderr_escapes: u64,
    /// Guest lines a set's log sink got.
    pub log_lines: u64,
    /// Guest lines with control characters the sink got.
    pub unprintable_lines: u64,
    /// How the run was set up, for the report.
    pub notes: Vec<String>,
}

impl Report {
    /// Why the run failed; empty if it passed.
    pub fn failures(&self, limits: &Thresholds) -> Vec<String> {
        let t = &self.tally;
        let mut failures = Vec::new();
        let mut fail = |bad: bool, text: String| {
            if bad {
                failures.push(format!("{}: {text}", self.mode));
            }
        };
        fail(t.lost > 0, format!("{} requests lost", t.lost));
        fail(
            t.misordered > 0,
            format!("{} answers out of order", t.misordered),
        );
        fail(
            t.wrong > 0,
            format!("{} answers of the wrong kind", t.wrong),
        );
        fail(
            t.stray > 0,
            format!("{} stray lines on the protocol channel", t.stray),
        );
        fail(
            t.sent != t.answered + t.lost,
            "requests and answers do not add up".into(),
        );
        fail(
            self.bad_exits > 0,
            format!("{} launchers did not exit 0 at EOF", self.bad_exits),
        );
        fail(
            self.stderr_escapes > 0,
            format!("{} raw escape bytes on stderr", self.stderr_escapes),
        );
        fail(
            self.unprintable_lines > 0,
            format!("{} unprintable guest lines", self.unprintable_lines),
        );
        if let Some(summary) = Summary::of(&self.samples, self.warm_from) {
            if let Some(max) = limits.max_rss_growth_pct {
                let growth = summary.rss_growth_pct();
                fail(
                    growth > max,
                    format!("RSS (floor) grew {growth:.1}% after warm-up (limit {max}%)"),
                );
            }
            if let Some(max) = limits.max_fd_growth {
                let growth = summary.fd_growth();
                fail(
                    growth > max,
                    format!(
                        "{growth} more open descriptors after warm-up (limit {max}): {}",
                        summary.fd_changes().join(" ")
                    ),
                );
            }
        }
        failures
    }

    /// The figures, as printed at the end of a run.
    pub fn render(&self) -> String {
        let t = &self.tally;
        let mut out = String::new();
        let secs = self.wall.as_secs_f64().max(1e-9);
        let _ = writeln!(out, "== {} soak", self.mode);
        for note in &self.notes {
            let _ = writeln!(out, "  {note}");
        }
        let _ = writeln!(
            out,
            "  requests {}  responses {}  lost {}  misordered {}  wrong-kind {}  stray {}",
            t.sent, t.answered, t.lost, t.misordered, t.wrong, t.stray
        );
        let faults: Vec<String> = (t.faults.iter())
            .map(|(f, n)| format!("{} {n}", f.tool()))
            .collect();
        let total: u64 = t.faults.values().sum();
        let _ = writeln!(out, "  faults injected {total}: {}", faults.join(", "));
        let _ = write!(
            out,
            "  breaker: {} trips confirmed, {} restarts",
            t.trips, t.restarts
        );
        if self.processes > 0 {
            let (n, bad) = (self.processes, self.bad_exits);
            let _ = write!(out, "; {n} launcher processes, {bad} did not exit 0");
        }
        out.push('\n');
        let _ = writeln!(
            out,
            "  wall {secs:.1} s, throughput {:.0} requests/s",
            t.answered as f64 / secs
        );
        if self.stderr_bytes > 0 || self.log_lines > 0 {
            let _ = writeln!(
                out,
                "  guest output: {} bytes on stderr ({} raw escapes), {} sink lines ({} unprintable)",
                self.stderr_bytes, self.stderr_escapes, self.log_lines, self.unprintable_lines
            );
        }
        match Summary::of(&self.samples, self.warm_from) {
            Some(s) => {
                let mib = |kib: u64| kib as f64 / 1024.0;
                let _ = writeln!(
                    out,
                    "  RSS {:.1} MiB after warm-up (first sample after {} answers) -> {:.1} MiB at the end ({:+.1}%); peak {:.1} MiB, first {:.1} MiB; {} samples",
                    mib(s.warm.rss_kib),
                    s.warm.done,
                    mib(s.last.rss_kib),
                    s.rss_growth_sampled_pct(),
                    mib(s.peak_rss_kib),
                    mib(s.first.rss_kib),
                    self.samples.len()
                );
                let _ = writeln!(
                    out,
                    "  RSS floor (lowest sample) of the stretch after warm-up -> of the last stretch as long: {:.1} -> {:.1} MiB ({:+.1}%, judged)",
                    mib(s.warm_floor_kib),
                    mib(s.end_floor_kib),
                    s.rss_growth_pct()
                );
                let _ = writeln!(
                    out,
                    "  fds {} first, {} after warm-up, {} last",
                    s.first.fds, s.warm.fds, s.last.fds
                );
            }
            None => out.push_str("  no RSS/fd samples (no /proc?)\n"),
        }
        for problem in &t.problems {
            let _ = writeln!(out, "  problem: {problem}");
        }
        out
    }
}
