//! A progress line on stderr every tenth of a run.

use std::time::Instant;

use crate::Config;

/// Prints how far a run got, at each tenth of it.
#[derive(Debug)]
pub struct Ticker {
    label: &'static str,
    total: u64,
    next: u64,
    started: Instant,
    enabled: bool,
}

impl Ticker {
    /// A ticker for `config`'s run of mode `label`.
    pub fn new(config: &Config, label: &'static str) -> Self {
        let step = (config.requests / 10).max(1);
        Ticker {
            label,
            total: config.requests,
            next: step,
            started: Instant::now(),
            enabled: config.progress,
        }
    }

    /// `done` requests were answered.
    pub fn tick(&mut self, done: u64) {
        if !self.enabled || done < self.next {
            return;
        }
        let step = (self.total / 10).max(1);
        while self.next <= done {
            self.next += step;
        }
        let secs = self.started.elapsed().as_secs_f64();
        eprintln!(
            "{}: {done}/{} answered, {secs:.0} s, {:.0}/s",
            self.label,
            self.total,
            done as f64 / secs.max(1e-9)
        );
    }
}
