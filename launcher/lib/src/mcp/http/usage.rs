//! What the HTTP server counts: the live MCP sessions (`--max-sessions`),
//! the calls in progress per client address (`--max-client-calls`) and in
//! all (what a stopping server waits for), and what each session is doing:
//! when it last had a request, which requests are in progress (a session
//! with a call in progress, or waiting for its user's approval, is not
//! idle), and their JSON-RPC ids (an id in use is not taken twice).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// The live MCP sessions, counted by the tickets their handlers hold.
pub struct Sessions {
    live: AtomicUsize,
    pub max: usize,
}

impl Sessions {
    pub fn new(max: usize) -> Arc<Sessions> {
        Arc::new(Sessions {
            live: AtomicUsize::new(0),
            max,
        })
    }

    pub fn full(&self) -> bool {
        self.live.load(Ordering::Acquire) >= self.max
    }

    /// A ticket for one more handler. The cap is the door's: a request
    /// that would open a session past it is refused before rmcp makes one
    /// (a 2026-07-28 request's handler lives as long as the request).
    pub fn ticket(self: &Arc<Self>) -> Ticket {
        self.live.fetch_add(1, Ordering::AcqRel);
        Ticket(self.clone())
    }
}

/// One live session; dropped with its handler.
pub struct Ticket(Arc<Sessions>);

impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.live.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Requests in progress: per client address, and in all (what a stopping
/// server waits for).
#[derive(Default)]
pub struct Clients {
    per_address: Mutex<HashMap<IpAddr, usize>>,
    total: AtomicUsize,
    idle: Notify,
}

impl Clients {
    /// A turn for one more request of `peer`, unless it has `max` already.
    pub fn admit(self: &Arc<Self>, peer: IpAddr, max: usize) -> Option<Turn> {
        let mut counts = self.per_address.lock().ok()?;
        let count = counts.entry(peer).or_default();
        if *count >= max {
            return None;
        }
        *count += 1;
        self.total.fetch_add(1, Ordering::AcqRel);
        Some(Turn {
            clients: self.clone(),
            peer,
        })
    }

    /// Waits until no request is in progress.
    pub async fn drained(&self) {
        loop {
            let idle = self.idle.notified();
            if self.total.load(Ordering::Acquire) == 0 {
                return;
            }
            idle.await;
        }
    }
}

/// One request in progress.
pub struct Turn {
    clients: Arc<Clients>,
    peer: IpAddr,
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let Ok(mut counts) = self.clients.per_address.lock()
            && let Some(count) = counts.get_mut(&self.peer)
        {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.peer);
            }
        }
        if self.clients.total.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.clients.idle.notify_waiters();
        }
    }
}

/// What each MCP session is doing.
pub struct Activity {
    sessions: Mutex<HashMap<String, Use>>,
    idle: Duration,
}

/// One session's use.
struct Use {
    last: Instant,
    /// JSON-RPC ids of its requests in progress (`None`: a POST that is
    /// not a request, still being answered).
    in_progress: Vec<Option<String>>,
}

/// Why a request cannot be taken.
pub struct IdInUse;

impl Activity {
    pub fn new(idle: Duration) -> Arc<Activity> {
        Arc::new(Activity {
            sessions: Mutex::default(),
            idle,
        })
    }

    /// Session `id` was opened.
    pub fn opened(&self, id: &str) {
        if let Ok(mut sessions) = self.sessions.lock() {
            let fresh = Use {
                last: Instant::now(),
                in_progress: Vec::new(),
            };
            sessions.insert(id.to_owned(), fresh);
        }
    }

    /// Session `id` was closed.
    pub fn closed(&self, id: &str) {
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.remove(id);
        }
    }

    /// A POST in session `session`, a request with JSON-RPC id `rpc` or
    /// not; in progress until the returned value drops. A request whose id
    /// is that of one in progress is refused.
    pub fn begin(self: &Arc<Self>, session: &str, rpc: Option<String>) -> Result<Busy, IdInUse> {
        let Ok(mut sessions) = self.sessions.lock() else {
            return Err(IdInUse);
        };
        // A session opened before this process counted it (or by rmcp's
        // restore) is counted from now.
        let entry = sessions.entry(session.to_owned()).or_insert_with(|| Use {
            last: Instant::now(),
            in_progress: Vec::new(),
        });
        if rpc.is_some() && entry.in_progress.contains(&rpc) {
            return Err(IdInUse);
        }
        entry.last = Instant::now();
        entry.in_progress.push(rpc.clone());
        Ok(Busy {
            activity: self.clone(),
            session: session.to_owned(),
            rpc,
        })
    }

    /// The sessions idle for longer than the idle time with nothing in
    /// progress, forgotten here (the caller closes them).
    pub fn take_idle(&self) -> Vec<String> {
        let Ok(mut sessions) = self.sessions.lock() else {
            return Vec::new();
        };
        let idle: Vec<String> = sessions
            .iter()
            .filter(|(_, u)| u.in_progress.is_empty() && u.last.elapsed() > self.idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &idle {
            sessions.remove(id);
        }
        idle
    }
}

/// A POST in progress in a session.
pub struct Busy {
    activity: Arc<Activity>,
    session: String,
    rpc: Option<String>,
}

impl Drop for Busy {
    fn drop(&mut self) {
        if let Ok(mut sessions) = self.activity.sessions.lock()
            && let Some(entry) = sessions.get_mut(&self.session)
        {
            if let Some(at) = entry.in_progress.iter().position(|r| *r == self.rpc) {
                entry.in_progress.swap_remove(at);
            }
            entry.last = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_with_a_call_in_progress_is_not_idle_and_ids_are_not_taken_twice() {
        let activity = Activity::new(Duration::ZERO);
        activity.opened("s");
        let call = activity.begin("s", Some("7".into())).ok();
        assert!(call.is_some());
        assert!(
            activity.begin("s", Some("7".into())).is_err(),
            "id 7 is in use"
        );
        let other = activity.begin("s", Some("8".into()));
        assert!(other.is_ok());
        drop(other);
        std::thread::sleep(Duration::from_millis(2));
        assert!(activity.take_idle().is_empty(), "a call is in progress");
        drop(call);
        assert!(
            activity.begin("s", Some("7".into())).is_ok(),
            "7 is free again"
        );
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(activity.take_idle(), ["s"]);
        assert!(activity.take_idle().is_empty(), "taken once");
    }
}
