//! `mcp --http`: MCP over streamable HTTP with rmcp's service, behind the
//! front door (`door.rs`), on hyper's HTTP/1.1 server. Sessions by default
//! (`Mcp-Session-Id`, a sandbox session each, closed on DELETE or when
//! idle); `--stateless` serves every request on its own. A connection that
//! sends no request head within [`HEAD_WAIT`] (slow or idle) is closed; at
//! most [`MAX_CONNECTIONS`] are open at once. SIGTERM or Ctrl-C: no new
//! connection is taken, calls in progress finish (within their deadline),
//! then sessions close and the process exits.

mod door;
mod options;
mod replies;
mod usage;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::handler::{Channel, Handler, ServerState};
use door::{Door, ENDPOINT};
use usage::{Activity, Clients, Sessions};

pub use options::{HttpArgs, HttpOptions};

/// How long a connection may take to send a request's head, and stay
/// idle between requests.
pub const HEAD_WAIT: Duration = Duration::from_secs(10);

/// Connections open at once; more wait in the listen backlog.
pub const MAX_CONNECTIONS: usize = 1024;

/// How long a stopping server waits, beyond the longest call deadline,
/// for calls in progress.
const DRAIN_MARGIN: Duration = Duration::from_secs(5);

/// Serves `shared` over HTTP as `options` say, until a signal stops it.
pub async fn serve(shared: Arc<ServerState>, options: HttpOptions) -> Result<()> {
    let listener = TcpListener::bind(options.listen)
        .await
        .with_context(|| format!("cannot listen on {}", options.listen))?;
    let local = listener
        .local_addr()
        .context("cannot read the bound address")?;
    let stop = CancellationToken::new();
    let door = Arc::new(door(shared.clone(), &options, &stop));
    tokio::spawn(reap(door.clone(), options.session_idle, stop.clone()));
    let mode = match options.stateless {
        true => "stateless",
        false => "sessions",
    };
    let auth = match options.token {
        Some(_) => "bearer token required",
        None => "no token",
    };
    // Said on stderr whatever the log level: how a client (or a test)
    // learns a port picked with :0.
    eprintln!("lingxi-wasm-run: serving MCP at http://{local}{ENDPOINT} ({mode}, {auth})");
    if options.token.is_none() {
        let who = match local.ip().is_loopback() {
            true => "any program of any user on this machine",
            false => "anyone who can reach this address",
        };
        tracing::warn!("without --token-file, {who} can call the plugins' tools with their grants");
    }
    let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let signal = stopped();
    tokio::pin!(signal);
    loop {
        let permit = tokio::select! {
            permit = connections.clone().acquire_owned() => permit.context("the connection limit closed")?,
            () = &mut signal => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of descriptors, a reset before accept: go on.
                    tracing::warn!("cannot accept a connection: {error}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut signal => break,
        };
        // An event stream is written in pieces (a priming event, then the
        // answer): without this, Nagle's algorithm holds the answer until
        // the client's delayed ACK, ~40 ms a call.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY for {peer}: {error}");
        }
        let door = door.clone();
        let service = hyper::service::service_fn(move |request| {
            let door = door.clone();
            async move { Ok::<_, Infallible>(door.serve(peer.ip(), request).await) }
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HEAD_WAIT)
            .serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!("connection from {peer}: {error}");
            }
            drop(permit);
        });
    }
    drop(listener);
    eprintln!("lingxi-wasm-run: stopping: no new connections; waiting for calls in progress");
    let drain = shared.call_timeout + DRAIN_MARGIN;
    if tokio::time::timeout(drain, door.clients.drained())
        .await
        .is_err()
    {
        tracing::warn!("calls still in progress after {drain:?}; stopping them");
    }
    // Ends the sessions and their event streams, then the connections.
    stop.cancel();
    let _ = tokio::time::timeout(DRAIN_MARGIN, graceful.shutdown()).await;
    Ok(())
}

/// The front door with rmcp's service behind it.
fn door(shared: Arc<ServerState>, options: &HttpOptions, stop: &CancellationToken) -> Door {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!options.stateless)
        .with_json_response(options.stateless)
        .with_allowed_hosts(options.allow_host.clone())
        .with_allowed_origins(options.allow_origin.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_body)
        .with_cancellation_token(stop.child_token());
    let mut manager = LocalSessionManager::default();
    // Idle sessions are ended by `reap`, which knows a session with a call
    // in progress (or waiting for its user) is not idle. rmcp's own timer
    // counts only messages, so it is kept as a backstop that no call can
    // reach: the longest approval wait plus the longest call, and more.
    let quiet = crate::mcp::approval::ANSWER_WAIT + shared.call_timeout + Duration::from_secs(60);
    manager.session_config.keep_alive = Some(options.session_idle.max(quiet));
    let sessions = (!options.stateless).then(|| Sessions::new(options.max_sessions));
    let counted = sessions.clone();
    let opened = AtomicU64::new(0);
    let factory = move || {
        let n = opened.fetch_add(1, Ordering::Relaxed) + 1;
        let (id, channel) = match &counted {
            None => (format!("mcp-request-{n}"), Channel::Request),
            Some(sessions) => {
                let ticket = sessions.ticket();
                (
                    format!("mcp-session-{n}"),
                    Channel::Session(Box::new(ticket)),
                )
            }
        };
        Handler::open(shared.clone(), id, channel).map_err(std::io::Error::other)
    };
    let manager = Arc::new(manager);
    Door {
        rmcp: StreamableHttpService::new(factory, manager.clone(), config),
        manager,
        token: options.token.clone(),
        max_client_calls: options.max_client_calls,
        max_body: options.max_body,
        sessions,
        clients: Arc::new(Clients::default()),
        activity: Activity::new(options.session_idle),
    }
}

/// Ends the sessions idle for `idle` with nothing in progress, until `stop`.
async fn reap(door: Arc<Door>, idle: Duration, stop: CancellationToken) {
    use rmcp::transport::streamable_http_server::session::SessionManager;
    let every = (idle / 4).clamp(Duration::from_millis(250), Duration::from_secs(5));
    loop {
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            () = stop.cancelled() => return,
        }
        for id in door.activity.take_idle() {
            tracing::debug!("MCP session {id} idle for {idle:?}: closed");
            let _ = door.manager.close_session(&id.into()).await;
        }
    }
}

/// Resolves on SIGTERM or Ctrl-C (Ctrl-Break on Windows).
async fn stopped() {
    let interrupted = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::warn!("cannot watch for Ctrl-C: {error}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminated = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(error) => {
                tracing::warn!("cannot watch for SIGTERM: {error}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(windows)]
    let terminated = async {
        match tokio::signal::windows::ctrl_break() {
            Ok(mut brk) => {
                brk.recv().await;
            }
            Err(error) => {
                tracing::warn!("cannot watch for Ctrl-Break: {error}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(any(unix, windows)))]
    let terminated = std::future::pending::<()>();
    tokio::select! {
        () = interrupted => {}
        () = terminated => {}
    }
}
