//! The injected faults: testbed tools that trap, spin to the deadline or
//! flood output, each with the answer the host documents for it, and the
//! crash breaker they may trip.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::expect::Expect;

/// Where requests go: the launcher over pipes, or a plugin set in-process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `lingxi-wasm-run` serving the testbed.
    Launcher,
    /// A `PluginSet` session; `probe` and `quickstart` tell which plugins
    /// besides the testbed it holds.
    Embed { probe: bool, quickstart: bool },
}

/// One kind of injected fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    /// `panic`: a Rust panic (an `unreachable` trap with panic=abort).
    Panic,
    /// `unreachable`: a wasm `unreachable` instruction.
    Unreachable,
    /// `abort`: `std::process::abort`.
    Abort,
    /// `spin`: an endless loop, stopped at the deadline.
    Spin,
    /// `log-flood 20000`: 20 000 log lines of 1 KiB, past the 16 MiB output cap.
    LogFlood,
    /// `big-result 17`: a 17 MiB result, past the 16 MiB result cap.
    BigResult,
    /// `print-escapes 200000`: 200 000 escape bytes on stderr (under the
    /// output cap: answered normally, the escapes never reach a terminal).
    PrintEscapes,
}

impl Fault {
    /// Every fault kind.
    pub const ALL: [Fault; 7] = [
        Fault::Panic,
        Fault::Unreachable,
        Fault::Abort,
        Fault::Spin,
        Fault::LogFlood,
        Fault::BigResult,
        Fault::PrintEscapes,
    ];

    /// The testbed tool that causes it (also its name on the command line).
    pub fn tool(self) -> &'static str {
        match self {
            Fault::Panic => "panic",
            Fault::Unreachable => "unreachable",
            Fault::Abort => "abort",
            Fault::Spin => "spin",
            Fault::LogFlood => "log-flood",
            Fault::BigResult => "big-result",
            Fault::PrintEscapes => "print-escapes",
        }
    }

    /// The fault named `name` (its tool's name).
    pub fn parse(name: &str) -> Option<Fault> {
        Fault::ALL.into_iter().find(|f| f.tool() == name)
    }

    /// The tool's arguments.
    pub fn arguments(self) -> &'static str {
        match self {
            Fault::LogFlood => "20000",
            Fault::BigResult => "17",
            Fault::PrintEscapes => "200000",
            _ => "",
        }
    }

    /// Whether the host counts it toward the crash breaker: traps and
    /// output floods always; reaching the deadline only when it is the
    /// plugin's own (the launcher's `--timeout`), not a shorter one a
    /// caller chose (the embedding soak's deadline for `spin`).
    pub fn counts(self, target: Target) -> bool {
        match self {
            Fault::Panic | Fault::Unreachable | Fault::Abort | Fault::LogFlood => true,
            Fault::Spin => target == Target::Launcher,
            Fault::BigResult | Fault::PrintEscapes => false,
        }
    }

    /// Whether it costs the plugin its instance (and so what it kept in memory).
    pub fn resets(self) -> bool {
        !matches!(self, Fault::BigResult | Fault::PrintEscapes)
    }

    /// The documented answer.
    pub fn expect(self) -> Expect {
        let call = format!("tool.execute '{}' ", self.tool());
        let has = |parts: &[&str]| {
            let mut all = vec![call.clone()];
            all.extend(parts.iter().map(|p| (*p).to_owned()));
            Expect::ErrorHas(all)
        };
        match self {
            Fault::Panic | Fault::Unreachable | Fault::Abort => has(&[
                "crashed the plugin (",
                "the plugin was restarted and will answer the next request",
            ]),
            Fault::Spin => has(&["did not finish within", "and was stopped"]),
            Fault::LogFlood => has(&["wrote more than 16 MiB of output"]),
            Fault::BigResult => {
                has(&["returned 17825792 bytes, more than the 16 MiB result limit"])
            }
            Fault::PrintEscapes => Expect::Text("printed 200000".into()),
        }
    }
}

/// The answer once the breaker has disabled the testbed.
pub fn disabled() -> Expect {
    Expect::ErrorHas(vec![
        "plugin com.lingxi.testbed is disabled: it crashed".into(),
        "times within".into(),
    ])
}

/// How the soak lives with the host's crash breaker (`Limits::max_traps`
/// traps within `Limits::trap_window` disable a plugin: in the launcher
/// until it restarts, in a set for that session).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerPolicy {
    /// Inject every fault; once as many counting faults as trip the
    /// breaker went to one plugin instance line, check that the next call
    /// is refused as disabled (when all fell within the window), then start
    /// over as documented: restart the launcher, `Session::deactivate`.
    Restart,
    /// Keep one launcher process and one session for the whole run: a
    /// counting fault is injected only while fewer than `max - 1` were in
    /// the window; otherwise a fault that does not count takes its place.
    Pace,
}

/// The soak's model of one breaker.
#[derive(Debug)]
pub struct Breaker {
    policy: BreakerPolicy,
    /// Counting faults that disable the plugin; 0: no breaker.
    max: usize,
    window: Duration,
    /// When counting faults were sent (for pacing) since the last restart.
    sent: VecDeque<Instant>,
    /// When counting faults were answered as expected since the last restart.
    done: Vec<Instant>,
    /// The plugin was found disabled when it should not have been.
    forced: bool,
}

/// How far the soak's clock may be from the host's when a fault is counted.
const MARGIN: Duration = Duration::from_secs(30);

impl Breaker {
    /// A breaker of `max` faults within `window` (`max` 0: none).
    pub fn new(policy: BreakerPolicy, max: usize, window: Duration) -> Self {
        Breaker {
            policy,
            max,
            window,
            sent: VecDeque::new(),
            done: Vec::new(),
            forced: false,
        }
    }

    /// Whether a counting fault may be sent now.
    pub fn allows_counting(&mut self, now: Instant) -> bool {
        if self.max == 0 {
            return true;
        }
        match self.policy {
            BreakerPolicy::Restart => self.sent.len() < self.max,
            BreakerPolicy::Pace => {
                let horizon = self.window + MARGIN;
                while self
                    .sent
                    .front()
                    .is_some_and(|t| now.duration_since(*t) > horizon)
                {
                    self.sent.pop_front();
                }
                self.sent.len() + 1 < self.max
            }
        }
    }

    /// A counting fault was sent.
    pub fn sent(&mut self, now: Instant) {
        if self.max > 0 {
            self.sent.push_back(now);
        }
    }

    /// A counting fault was answered as documented.
    pub fn done(&mut self, now: Instant) {
        if self.max > 0 {
            self.done.push(now);
        }
    }

    /// Whether the line must start over before anything else is sent.
    pub fn must_restart(&self) -> bool {
        self.forced
            || (self.max > 0
                && self.policy == BreakerPolicy::Restart
                && self.sent.len() >= self.max)
    }

    /// A wrong answer: keeps the model in step with what the host did, so
    /// that one surprise does not turn every later answer wrong. A call the
    /// host stopped or lost to a crash counts toward its breaker; a plugin
    /// found disabled must start over now.
    pub fn surprise(&mut self, answer: &str, now: Instant) {
        if answer.contains("is disabled: it crashed") {
            self.forced = true;
        } else if [
            "and was stopped",
            "crashed the plugin",
            "made the plugin exit",
        ]
        .iter()
        .any(|s| answer.contains(s))
        {
            self.sent(now);
            self.done(now);
        }
    }

    /// Whether the host has certainly disabled the plugin: the last `max`
    /// counting faults were all answered well within one window.
    pub fn tripped(&self) -> bool {
        self.done.len() >= self.max
            && self.max > 0
            && self.done[self.done.len() - 1].duration_since(self.done[self.done.len() - self.max])
                + MARGIN
                < self.window
    }

    /// The line started over (a new process, a deactivated session).
    pub fn reset(&mut self) {
        self.sent.clear();
        self.done.clear();
        self.forced = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restart_policy_trips_after_max_counting_faults() {
        let mut b = Breaker::new(BreakerPolicy::Restart, 3, Duration::from_secs(60));
        let now = Instant::now();
        for _ in 0..3 {
            assert!(b.allows_counting(now) && !b.must_restart());
            b.sent(now);
            b.done(now);
        }
        assert!(b.must_restart() && b.tripped());
        b.reset();
        assert!(!b.must_restart() && !b.tripped());
    }

    #[test]
    fn surprises_keep_the_model_in_step() {
        let mut b = Breaker::new(BreakerPolicy::Pace, 3, Duration::from_secs(60));
        let now = Instant::now();
        b.surprise(
            "tool.execute 'kv-set' did not finish within 0.3 s and was stopped",
            now,
        );
        assert!(!b.must_restart() && b.done.len() == 1);
        b.surprise("plugin p is disabled: it crashed 5 times within 60 s", now);
        assert!(b.must_restart() && !b.tripped());
        b.reset();
        assert!(!b.must_restart());
    }

    #[test]
    fn pace_policy_keeps_under_the_limit() {
        let mut b = Breaker::new(BreakerPolicy::Pace, 3, Duration::from_secs(60));
        let now = Instant::now();
        assert!(b.allows_counting(now));
        b.sent(now);
        assert!(b.allows_counting(now));
        b.sent(now);
        assert!(!b.allows_counting(now));
        assert!(!b.must_restart());
        assert!(b.allows_counting(now + Duration::from_secs(91)));
    }

    #[test]
    fn fault_names_round_trip() {
        for fault in Fault::ALL {
            assert_eq!(Fault::parse(fault.tool()), Some(fault));
        }
    }
}
