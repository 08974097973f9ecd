//! The front door of `mcp --http`: what every request passes before rmcp's
//! streamable-HTTP service sees it. The endpoint is `/mcp`; a required
//! token is checked in constant time (401); one client address has at
//! most `--max-client-calls` POSTs (calls) in progress (429); a new session
//! past `--max-sessions` is refused (503); a body is read whole, within
//! `--max-body` (413) and [`BODY_WAIT`] (408), before anything parses it.
//! rmcp then checks `Host` and `Origin` (403), the protocol and sessions.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use subtle::ConstantTimeEq;
use tokio::sync::Notify;

use crate::mcp::handler::Handler;

/// How long a client may take to send a request's body.
pub const BODY_WAIT: Duration = Duration::from_secs(30);

/// The MCP endpoint's path.
pub const ENDPOINT: &str = "/mcp";

/// What answers travel as.
pub type Reply = Response<BoxBody<Bytes, Infallible>>;

/// The front door, shared by every connection.
pub struct Door {
    pub rmcp: StreamableHttpService<Handler, LocalSessionManager>,
    /// rmcp's sessions (a DELETE names one of them, or is answered 404).
    pub manager: Arc<LocalSessionManager>,
    pub token: Option<Vec<u8>>,
    pub max_client_calls: usize,
    pub max_body: usize,
    /// The live MCP sessions (`None` with `--stateless`).
    pub sessions: Option<Arc<Sessions>>,
    /// Requests in progress, per client address.
    pub clients: Arc<Clients>,
}

impl Door {
    /// Answers `request` from `peer`.
    pub async fn serve(&self, peer: IpAddr, request: Request<Incoming>) -> Reply {
        if request.uri().path() != ENDPOINT {
            return plain(
                StatusCode::NOT_FOUND,
                "not found: the MCP endpoint of this server is /mcp",
            );
        }
        if !self.authorized(&request) {
            let mut reply = plain(
                StatusCode::UNAUTHORIZED,
                "unauthorized: this MCP server requires `Authorization: Bearer TOKEN`, TOKEN being the one in the server's --token-file",
            );
            let challenge = header::HeaderValue::from_static("Bearer realm=\"lingxi-wasm\"");
            reply
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, challenge);
            return reply;
        }
        // Calls are counted; a GET's event stream lives as long as its
        // session and is not a call.
        let turn = match request.method() == Method::POST {
            true => match self.clients.admit(peer, self.max_client_calls) {
                Some(turn) => Some(turn),
                None => return self.busy(peer),
            },
            false => None,
        };
        // A POST without a session may open one, unless it is of 2026-07-28
        // or later (no sessions: each such request is served on its own).
        let sessionless = request
            .headers()
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v >= "2026-07-28");
        let opens_session = request.method() == Method::POST
            && !request.headers().contains_key("mcp-session-id")
            && !sessionless;
        if let Some(sessions) = &self.sessions
            && opens_session
            && sessions.full()
        {
            return plain(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!(
                    "this server has {} MCP sessions open, its most (--max-sessions); close one (DELETE /mcp) or wait for an idle one to time out",
                    sessions.max
                ),
            );
        }
        if request.method() == Method::DELETE && !self.known(&request).await {
            return plain(
                StatusCode::NOT_FOUND,
                "no such MCP session (it ended, or was never opened here)",
            );
        }
        let (parts, body) = request.into_parts();
        let limited = Limited::new(body, self.max_body).collect();
        let body = match tokio::time::timeout(BODY_WAIT, limited).await {
            Err(_) => {
                return plain(
                    StatusCode::REQUEST_TIMEOUT,
                    &format!("the request body did not arrive within {BODY_WAIT:?}"),
                );
            }
            Ok(Err(error)) if error.is::<LengthLimitError>() => {
                return plain(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!(
                        "the request body is larger than {} bytes (--max-body)",
                        self.max_body
                    ),
                );
            }
            Ok(Err(error)) => {
                return plain(
                    StatusCode::BAD_REQUEST,
                    &format!("the request body could not be read: {error}"),
                );
            }
            Ok(Ok(collected)) => collected.to_bytes(),
        };
        let request = Request::from_parts(parts, Full::new(body));
        let reply = tower_service::Service::call(&mut self.rmcp.clone(), request).await;
        let reply = match reply {
            Ok(reply) => explained(reply).await,
            Err(never) => match never {},
        };
        // The turn ends when the answer (maybe a stream) has been sent.
        reply.map(|body| Held { body, _turn: turn }.boxed())
    }

    /// The reply to a client with too many requests in progress.
    fn busy(&self, peer: IpAddr) -> Reply {
        let mut reply = plain(
            StatusCode::TOO_MANY_REQUESTS,
            &format!(
                "too many requests in progress from {peer} (at most {} at once, --max-client-calls); wait for one to finish",
                self.max_client_calls
            ),
        );
        let retry = header::HeaderValue::from_static("1");
        reply.headers_mut().insert(header::RETRY_AFTER, retry);
        reply
    }

    /// Whether `request` names a live session.
    async fn known(&self, request: &Request<Incoming>) -> bool {
        use rmcp::transport::streamable_http_server::session::SessionManager;
        let Some(id) = request.headers().get("mcp-session-id") else {
            return false;
        };
        let Ok(id) = id.to_str() else {
            return false;
        };
        let id = id.to_owned().into();
        self.manager.has_session(&id).await.unwrap_or(false)
    }

    /// Whether `request` carries the token, when one is required.
    fn authorized(&self, request: &Request<Incoming>) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .map(|v| v.as_bytes())
            .and_then(|v| {
                v.get(..7)
                    .filter(|s| s.eq_ignore_ascii_case(b"bearer "))
                    .and(v.get(7..))
            })
            .unwrap_or_default();
        bool::from(given.ct_eq(token.as_slice()))
    }
}

/// A refusal: `status`, and a JSON-RPC error (id `null`: the request was
/// not read) whose message is `text`, which MCP clients show as it is.
pub fn plain(status: StatusCode, text: &str) -> Reply {
    let error = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32600,
            "message": text,
            "data": {"httpStatus": status.as_u16()},
        },
    });
    let mut reply = Response::new(Full::new(Bytes::from(error.to_string())).boxed());
    *reply.status_mut() = status;
    let kind = header::HeaderValue::from_static("application/json");
    reply.headers_mut().insert(header::CONTENT_TYPE, kind);
    reply
}

/// rmcp's 403 (a `Host` or `Origin` not allowed) as a refusal that says
/// which flag allows it; other replies as they are.
async fn explained(reply: Reply) -> Reply {
    if reply.status() != StatusCode::FORBIDDEN {
        return reply;
    }
    let said = match reply.into_body().collect().await {
        Ok(body) => String::from_utf8_lossy(&body.to_bytes()).into_owned(),
        Err(never) => match never {},
    };
    let flag = match said.contains("Origin") {
        true => "--allow-origin",
        false => "--allow-host",
    };
    plain(
        StatusCode::FORBIDDEN,
        &format!("{} (the server allows more with {flag})", said.trim()),
    )
}

/// The live MCP sessions, counted by the tickets their handlers hold.
pub struct Sessions {
    live: AtomicUsize,
    max: usize,
}

impl Sessions {
    pub fn new(max: usize) -> Arc<Sessions> {
        Arc::new(Sessions {
            live: AtomicUsize::new(0),
            max,
        })
    }

    fn full(&self) -> bool {
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
    fn admit(self: &Arc<Self>, peer: IpAddr, max: usize) -> Option<Turn> {
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

/// A reply's body that holds its request's turn until it ends.
struct Held {
    body: BoxBody<Bytes, Infallible>,
    _turn: Option<Turn>,
}

impl Body for Held {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
