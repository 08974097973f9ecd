//! When one request must be answered by: the deadline every step of a
//! request runs under, on tokio's timer (the numbers are in
//! [`limits`](crate::limits)).

use std::time::Duration;

/// When one request must be answered by. It is set when the request
/// arrives and shared by every step of it (a fresh instance, the replayed
/// `initialize`, the call itself), so a request never takes longer than
/// [`Limits::call_timeout`] however many steps it needs.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    at: Option<tokio::time::Instant>,
    budget: Duration,
    /// When the request arrived, until the first step claims it as its
    /// start (one clock read fewer on the way of every call).
    unclaimed_start: Option<std::time::Instant>,
}

/// A [`Deadline`] passed.
#[derive(Debug, Clone, Copy)]
pub struct Expired;

impl Deadline {
    /// `timeout` from now; one too far to represent is no deadline at all.
    pub fn after(timeout: Duration) -> Self {
        let now = tokio::time::Instant::now();
        Deadline {
            at: now.checked_add(timeout),
            budget: timeout,
            unclaimed_start: Some(now.into_std()),
        }
    }

    /// When a step of the request starts: the request's arrival for the
    /// first step that asks, now for later ones.
    pub fn step_start(&mut self) -> std::time::Instant {
        self.unclaimed_start
            .take()
            .unwrap_or_else(std::time::Instant::now)
    }

    /// The deadline `limit` from now, if that is sooner than this one (a
    /// tool's own timeout, counted from when the tool starts); `None` if
    /// this one comes first (a deadline never moves later).
    pub fn within(self, limit: Duration) -> Option<Self> {
        let sooner = tokio::time::Instant::now().checked_add(limit)?;
        self.at.is_none_or(|at| sooner < at).then_some(Deadline {
            at: Some(sooner),
            budget: limit,
            ..self
        })
    }

    /// The timeout it was made with (for messages).
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Runs `step` until it finishes or the deadline passes (`step` is then
    /// dropped where it stands). The timer is armed only once `step` has to
    /// wait: a step that finishes in its first poll (most calls) costs no
    /// timer at all, and one that spins or blocks is stopped all the same.
    pub async fn run<F: Future>(self, step: F) -> Result<F::Output, Expired> {
        let Some(at) = self.at else {
            return Ok(step.await);
        };
        let mut step = std::pin::pin!(step);
        let mut timer: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
        std::future::poll_fn(|cx| {
            if let std::task::Poll::Ready(done) = step.as_mut().poll(cx) {
                return std::task::Poll::Ready(Ok(done));
            }
            let timer = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
            timer.as_mut().poll(cx).map(|()| Err(Expired))
        })
        .await
    }
}
