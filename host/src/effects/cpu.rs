//! The CPU time of a recorded call: the thread's own CPU clock read around
//! each poll of the call's future, so that a call that hops threads (a
//! multi-thread runtime) or waits is charged only for the time it ran.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use cpu_time::ThreadTime;

/// A future whose polls are timed.
pub(crate) struct Metered<F> {
    inner: Pin<Box<F>>,
    spent: Option<Duration>,
}

impl<F: Future> Metered<F> {
    /// `inner`, timed.
    pub(crate) fn new(inner: F) -> Self {
        Metered {
            inner: Box::pin(inner),
            spent: Some(Duration::ZERO),
        }
    }
}

impl<F: Future> Future for Metered<F> {
    type Output = (F::Output, Option<Duration>);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let start = self.spent.and_then(|_| ThreadTime::try_now().ok());
        let polled = self.inner.as_mut().poll(cx);
        if let (Some(start), Some(spent)) = (start, self.spent.as_mut()) {
            *spent += start.try_elapsed().unwrap_or_default();
        }
        match polled {
            Poll::Ready(output) => Poll::Ready((output, self.spent)),
            Poll::Pending => Poll::Pending,
        }
    }
}
