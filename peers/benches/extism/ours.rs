//! The project's side: plugins in a `PluginSet` on a pooled runtime, called
//! through sessions as an embedding agent host calls them.

use std::path::Path;
use std::time::{Duration, Instant};

use lingxi_wasm_host::{
    CallOptions, PluginOptions, PluginSet, Runtime, RuntimeConfig, Session, no_grant,
};

use crate::common::{median, rss};

/// A set of `guests` on a pooled runtime with room for `instances`.
pub async fn set(guests: &[&Path], instances: usize) -> PluginSet {
    let config = RuntimeConfig::pooled(u32::try_from(instances).expect("instances"));
    let runtime = Runtime::with_config(config).expect("runtime");
    let mut set = PluginSet::new(runtime);
    for guest in guests {
        set.load_file(guest, PluginOptions::grant(no_grant()))
            .await
            .expect("load");
    }
    set
}

/// µs per warm `call_tool` of `probe.echo`, median of `rounds` × `calls`.
pub async fn cost(session: &Session, calls: usize, rounds: usize, arguments: &str) -> f64 {
    let mut samples = Vec::new();
    for round in 0..=rounds {
        let start = Instant::now();
        for _ in 0..calls {
            let answer = session
                .call_tool("probe.echo", arguments, CallOptions::default())
                .await
                .expect("call");
            assert!(answer.starts_with("echo:"));
        }
        if round > 0 {
            samples.push(start.elapsed().as_secs_f64() * 1e6 / calls as f64);
        }
    }
    median(samples)
}

/// Median µs of a new session's first `call_tool` (which instantiates and
/// initializes its plugin), over `n` sessions.
pub async fn first_calls(set: &PluginSet, n: usize, arguments: &str) -> f64 {
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let start = Instant::now();
        let session = set.session(format!("first-{i}"), None).expect("session");
        session
            .call_tool("probe.echo", arguments, CallOptions::default())
            .await
            .expect("call");
        times.push(start.elapsed().as_secs_f64() * 1e6);
        session.close().await;
    }
    median(times)
}

/// Bytes of RSS each of `n` live sessions adds, each having answered a call.
pub async fn memory(probe: &Path, n: usize, arguments: &str) -> f64 {
    let set = set(&[probe], n + 16).await;
    let before = rss();
    let mut sessions = Vec::with_capacity(n);
    for i in 0..n {
        let session = set.session(format!("s{i}"), None).expect("session");
        session
            .call_tool("probe.echo", arguments, CallOptions::default())
            .await
            .expect("call");
        sessions.push(session);
    }
    let each = rss().saturating_sub(before) as f64 / n as f64;
    for session in sessions {
        session.close().await;
    }
    each
}

/// The testbed's `spin`, `sleep-ms 2000` and `alloc-mib 512`, each within
/// `limit` (and the default 256 MiB memory cap): after how long each call
/// ended, and what it said.
pub async fn enforcement(testbed: &Path, limit: Duration) -> [(Duration, String); 3] {
    let set = set(&[testbed], 16).await;
    let mut outcomes = Vec::new();
    for (tool, arguments) in [("spin", ""), ("sleep-ms", "2000"), ("alloc-mib", "512")] {
        let session = set
            .session(format!("enforce-{tool}"), None)
            .expect("session");
        let start = Instant::now();
        let answer = session
            .call_tool(tool, arguments, CallOptions::within(limit))
            .await;
        let took = start.elapsed();
        outcomes.push((
            took,
            match answer {
                Ok(text) => format!("returned: {text}"),
                Err(e) => format!("error: {e}"),
            },
        ));
        session.close().await;
    }
    outcomes.try_into().expect("three cases")
}
