//! An agent host in a page: every sandboxed plugin of a folder in one
//! process, as a host author would embed them.
//!
//! ```text
//! cargo build --target wasm32-wasip2 --profile guest --target-dir target/guests \
//!     -p probe -p quickstart -p testbed -p workspace-stats -p impostor
//! cargo run -p agent-host -- target/guests/wasm32-wasip2/guest
//! ```

use lingxi_wasm_host::CallOptions;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lingxi_wasm_host::types::{HookEvent, HookPayload};
use lingxi_wasm_host::{Limits, PluginOptions, PluginSet, Runtime, RuntimeConfig, no_grant};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let folder = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/guests/wasm32-wasip2/guest".into());

    // One runtime per process: room for 256 live instances, pooled.
    let runtime = Runtime::with_config(RuntimeConfig::pooled(256))?;
    let limits = Limits {
        call_timeout: Duration::from_secs(1),
        ..Limits::default()
    };
    let mut set = PluginSet::new(runtime).with_limits(limits);

    // Every plugin of the folder, each granted nothing: no files, no
    // network, no environment. (A real host asks its user here.)
    println!("loading {folder}");
    let grant_nothing = |_: &_| PluginOptions::grant(no_grant());
    for (path, loaded) in set.load_dir(folder.as_ref(), grant_nothing).await? {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        match loaded {
            Ok(id) => println!("  {name:<22} {id}"),
            Err(e) => println!("  {name:<22} not loaded: {e}"),
        }
    }

    // The catalog: what a model may call, and who answers.
    let catalog = set.catalog();
    let (tools, commands) = (catalog.tools.len(), catalog.commands.len());
    println!("catalog: {tools} tools, {commands} commands");
    for id in set.ids() {
        let owned: Vec<_> = catalog.tools.iter().filter(|t| t.owner == id).collect();
        let names = owned.iter().take(3).map(|t| t.descriptor.name.as_str());
        let names: Vec<_> = names.collect();
        let more = if owned.len() > 3 { ", …" } else { "" };
        let list = if names.is_empty() {
            String::new()
        } else {
            format!(": {}{more}", names.join(", "))
        };
        println!("  {id:<27} {:>2} tools{list}", owned.len());
    }

    // Two sessions: each plugin gets an instance of its own in each.
    let alice = Arc::new(set.session("alice", None)?);
    let bob = set.session("bob", None)?;

    // Calls to different plugins and sessions run in parallel when each
    // runs on a task of its own (here, on the runtime's worker threads).
    let bob = Arc::new(bob);
    let call =
        |session: &Arc<lingxi_wasm_host::Session>, tool: &'static str, args: &'static str| {
            let session = session.clone();
            tokio::spawn(async move { session.call_tool(tool, args, CallOptions::default()).await })
        };
    let a = call(&alice, "probe.echo", r#"{"q":"hi"}"#);
    let b = call(&bob, "echo", r#"{"text":"hello"}"#);
    let c = call(&bob, "ok", "x");
    println!(
        "parallel calls: {:?} {:?} {:?}",
        a.await??,
        b.await??,
        c.await??
    );

    // A hook reaches every plugin that subscribed to it, concurrently.
    let start = HookPayload {
        event: HookEvent::SessionStart,
        subject_id: "alice".into(),
        metadata: vec![],
    };
    for outcome in alice.emit(start, CallOptions::default()).await {
        let result = outcome.result.map(|()| "ok");
        println!("sessionStart → {}: {result:?}", outcome.plugin);
    }

    // A runaway plugin is stopped at its deadline; the others keep
    // answering meanwhile (the runaway call runs on a task of its own, as
    // every call a host starts should).
    let started = Instant::now();
    let runaway = tokio::spawn({
        let alice = alice.clone();
        async move { alice.call_tool("spin", "", CallOptions::default()).await }
    });
    let mut answered = 0;
    while started.elapsed() < Duration::from_millis(900) {
        bob.call_tool("probe.echo", "{}", CallOptions::default())
            .await?;
        answered += 1;
    }
    let stopped = runaway.await?.err().map(|e| e.to_string());
    let after = started.elapsed().as_secs_f64();
    println!(
        "runaway stopped after {after:.1} s: {}",
        stopped.unwrap_or_default()
    );
    println!("meanwhile bob's probe answered {answered} calls");

    // A crash is isolated to its instance: alice's testbed restarts, bob's
    // keeps what it held in memory.
    bob.call_tool("mem-append", "bob's note", CallOptions::default())
        .await?;
    let crash = alice
        .call_tool("panic", "", CallOptions::default())
        .await
        .err()
        .map(|e| e.to_string());
    println!("crash in alice: {}", crash.unwrap_or_default());
    println!(
        "alice again: {}",
        alice
            .call_tool("ok", "after", CallOptions::default())
            .await?
    );
    println!(
        "bob's memory: {}",
        bob.call_tool("mem-get", "", CallOptions::default()).await?
    );

    for id in set.ids() {
        if let Some(s) = set.stats(id) {
            println!(
                "stats {id:<27} {:>5} calls, {} errors, {} traps, {} timeouts, {} instances",
                s.calls, s.errors, s.traps, s.timeouts, s.instances
            );
        }
    }
    // Deactivate and free every instance now (dropping the sessions would
    // do it in the background).
    bob.deactivate().await;
    alice.deactivate().await;
    Ok(())
}
