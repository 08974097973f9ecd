//! The front door of `mcp --http`: what every request passes before rmcp's
//! streamable-HTTP service sees it.
//!
//! 1. The endpoint is `/mcp` (404); one `Host` header, a valid authority,
//!    and no request target naming another host (400).
//! 2. A required token, checked in constant time (401).
//! 3. A body declared larger than `--max-body` is refused before it is read
//!    (413).
//! 4. One client address has at most `--max-client-calls` POSTs in
//!    progress (429); a new session past `--max-sessions` is refused (503);
//!    a DELETE names a live session (404).
//! 5. The body is read whole, within `--max-body` (413) and [`BODY_WAIT`]
//!    (408); in a session, a request whose JSON-RPC id is that of one in
//!    progress is refused (400).
//!
//! rmcp then checks `Host` and `Origin` against the allowed names (403),
//! the protocol and the session.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use subtle::ConstantTimeEq;

use super::replies::{CountedBody, Reply, explained, plain};
use super::usage::{Activity, Clients, Sessions};
use crate::mcp::handler::Handler;

/// How long a client may take to send a request's body.
pub const BODY_WAIT: Duration = Duration::from_secs(30);

/// The MCP endpoint's path.
pub const ENDPOINT: &str = "/mcp";

/// The header that names a request's session.
const SESSION: &str = "mcp-session-id";

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
    /// What each session is doing.
    pub activity: Arc<Activity>,
}

impl Door {
    /// Answers `request` from `peer`.
    pub async fn serve(&self, peer: IpAddr, request: Request<Incoming>) -> Reply {
        if let Some(refused) = self.refused(&request) {
            return refused;
        }
        let method = request.method().clone();
        // Calls are counted; a GET's event stream lives as long as its
        // session and is not a call.
        let turn = match method == Method::POST {
            true => match self.clients.admit(peer, self.max_client_calls) {
                Some(turn) => Some(turn),
                None => return self.busy(peer),
            },
            false => None,
        };
        let session = request
            .headers()
            .get(SESSION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // A POST without a session may open one, unless it is of 2026-07-28
        // or later (no sessions: each such request is served on its own).
        let sessionless = request
            .headers()
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v >= "2026-07-28");
        let opens_session = method == Method::POST && session.is_none() && !sessionless;
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
        if method == Method::DELETE && !self.live(session.as_deref()).await {
            return plain(
                StatusCode::NOT_FOUND,
                "no such MCP session (it ended, or was never opened here)",
            );
        }
        let (parts, body) = request.into_parts();
        let body = match self.read(body).await {
            Ok(body) => body,
            Err(refused) => return *refused,
        };
        let busy = match (&session, method == Method::POST) {
            (Some(id), true) => match self.activity.begin(id, request_id(&body)) {
                Ok(busy) => Some(busy),
                Err(_) => {
                    return plain(
                        StatusCode::BAD_REQUEST,
                        "a request of this session with the same id is in progress; an id is never used twice in a session (MCP): give each request an id of its own",
                    );
                }
            },
            _ => None,
        };
        let request = Request::from_parts(parts, Full::new(body));
        let reply = match tower_service::Service::call(&mut self.rmcp.clone(), request).await {
            Ok(reply) => explained(reply, &method).await,
            Err(never) => match never {},
        };
        self.note(&method, session.as_deref(), &reply);
        // The turn ends when the answer (maybe a stream) has been sent.
        reply.map(|body| {
            let held = CountedBody {
                body,
                _turn: turn,
                _busy: busy,
            };
            held.boxed()
        })
    }

    /// Steps 1 to 3 of the module documentation: the refusal, if any.
    fn refused(&self, request: &Request<Incoming>) -> Option<Reply> {
        if request.uri().path() != ENDPOINT {
            return Some(plain(
                StatusCode::NOT_FOUND,
                "not found: the MCP endpoint of this server is /mcp",
            ));
        }
        if let Err(why) = one_host(request) {
            return Some(plain(StatusCode::BAD_REQUEST, why));
        }
        if !self.authorized(request) {
            let mut reply = plain(
                StatusCode::UNAUTHORIZED,
                "unauthorized: this MCP server requires `Authorization: Bearer TOKEN`, TOKEN being the one in the server's --token-file",
            );
            let challenge = header::HeaderValue::from_static("Bearer realm=\"lingxi-wasm\"");
            reply
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, challenge);
            return Some(reply);
        }
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        declared
            .filter(|&n| n > self.max_body as u64)
            .map(|_| self.too_large())
    }

    /// The body, read whole within the cap and [`BODY_WAIT`].
    async fn read(&self, body: Incoming) -> Result<bytes::Bytes, Box<Reply>> {
        let limited = Limited::new(body, self.max_body).collect();
        let refused = match tokio::time::timeout(BODY_WAIT, limited).await {
            Ok(Ok(collected)) => return Ok(collected.to_bytes()),
            Err(_) => plain(
                StatusCode::REQUEST_TIMEOUT,
                &format!("the request body did not arrive within {BODY_WAIT:?}"),
            ),
            Ok(Err(error)) if error.is::<LengthLimitError>() => self.too_large(),
            Ok(Err(error)) => plain(
                StatusCode::BAD_REQUEST,
                &format!("the request body could not be read: {error}"),
            ),
        };
        Err(Box::new(refused))
    }

    /// Keeps track of sessions opened and closed by `reply`.
    fn note(&self, method: &Method, session: Option<&str>, reply: &Reply) {
        let success = reply.status().is_success();
        match (method, session) {
            (&Method::POST, None) => {
                let opened = reply.headers().get(SESSION).and_then(|v| v.to_str().ok());
                if let Some(id) = opened.filter(|_| success) {
                    self.activity.opened(id);
                }
            }
            (&Method::DELETE, Some(id)) if success => self.activity.closed(id),
            _ => {}
        }
    }

    fn too_large(&self) -> Reply {
        plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "the request body is larger than {} bytes (--max-body)",
                self.max_body
            ),
        )
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

    /// Whether `session` names a live session.
    async fn live(&self, session: Option<&str>) -> bool {
        let Some(id) = session else {
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

/// One `Host` header holding `host[:port]` (a number), and a request
/// target that names no other host: what the `Host` check then judges is
/// the host the request is for.
fn one_host(request: &Request<Incoming>) -> Result<(), &'static str> {
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let (Some(host), None) = (hosts.next(), hosts.next()) else {
        return Err("a request needs exactly one Host header");
    };
    let host = host
        .to_str()
        .ok()
        .filter(|h| port_is_a_number(h))
        .and_then(|h| http::uri::Authority::try_from(h).ok())
        .filter(|a| !a.as_str().contains('@'))
        .ok_or("the Host header is not host[:port]")?;
    match request.uri().authority() {
        Some(target) if !target.as_str().eq_ignore_ascii_case(host.as_str()) => {
            Err("the request target names another host than the Host header")
        }
        _ => Ok(()),
    }
}

/// Whether `host` (`name`, `name:port`, `[v6]` or `[v6]:port`) has no
/// port or a port that is a number.
fn port_is_a_number(host: &str) -> bool {
    let port = match host.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((_, rest)) => rest.strip_prefix(':').or(rest.is_empty().then_some("0")),
            None => None,
        },
        None => match host.split_once(':') {
            Some((_, port)) => Some(port),
            None => Some("0"),
        },
    };
    port.is_some_and(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The JSON-RPC id of the request in `body`, if it is a request.
fn request_id(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<serde_json::Value>,
        method: Option<serde::de::IgnoredAny>,
    }
    let head: Head = serde_json::from_slice(body).ok()?;
    head.method?;
    head.id.map(|id| id.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_ports_are_numbers() {
        for good in [
            "localhost",
            "127.0.0.1:8080",
            "[::1]",
            "[::1]:9",
            "mcp.example.com:443",
        ] {
            assert!(super::port_is_a_number(good), "{good}");
        }
        for bad in [
            "localhost:abc",
            "localhost:",
            "a:1:2",
            "[::1]x",
            "[::1",
            "h:123456",
        ] {
            assert!(!super::port_is_a_number(bad), "{bad}");
        }
    }
}
