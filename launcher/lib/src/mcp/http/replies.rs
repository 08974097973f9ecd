//! What the HTTP server answers besides rmcp's answers: refusals as
//! JSON-RPC errors that say what happened and which flag allows more,
//! rmcp's own plain-text refusals put the same way, and a reply body that
//! keeps its request counted until it has been sent.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Method, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, SizeHint};

use super::usage::{Busy, Turn};

/// What answers travel as.
pub type Reply = Response<BoxBody<Bytes, Infallible>>;

/// JSON-RPC: the request is not a valid request object.
const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: the body is not JSON.
const PARSE_ERROR: i64 = -32700;

/// A refusal: `status`, and a JSON-RPC error (id `null`: the request was
/// not read) whose message is `text`, which MCP clients show as it is.
pub fn plain(status: StatusCode, text: &str) -> Reply {
    refusal(status, INVALID_REQUEST, text)
}

fn refusal(status: StatusCode, code: i64, text: &str) -> Reply {
    let error = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": code,
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

/// rmcp's reply to a `method` request, put as a client reads it best:
/// its plain-text refusals become JSON-RPC errors (a 403 naming the flag
/// that allows the `Host` or `Origin`; a body that is not one JSON-RPC
/// message a 400 parse error), except a 404 for a session that ended,
/// which clients look for as it is; a DELETE's 202 is a 200.
pub async fn explained(reply: Reply, method: &Method) -> Reply {
    let status = reply.status();
    if *method == Method::DELETE && status == StatusCode::ACCEPTED {
        let (mut parts, body) = reply.into_parts();
        parts.status = StatusCode::OK;
        return Reply::from_parts(parts, body);
    }
    let json = reply
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !status.is_client_error() || status == StatusCode::NOT_FOUND || json {
        return reply;
    }
    let said = match reply.into_body().collect().await {
        Ok(body) => String::from_utf8_lossy(&body.to_bytes()).trim().to_owned(),
        Err(never) => match never {},
    };
    match status {
        StatusCode::FORBIDDEN => {
            let flag = match said.contains("Origin") {
                true => "--allow-origin",
                false => "--allow-host",
            };
            plain(
                status,
                &format!("{said} (the server allows more with {flag})"),
            )
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE if said.starts_with("fail to deserialize") => refusal(
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            &format!("the body is not one JSON-RPC message ({said})"),
        ),
        _ => plain(status, &said),
    }
}

/// A reply's body that keeps its request counted (its client's turn, its
/// session's activity) until it ends.
pub struct CountedBody {
    pub body: BoxBody<Bytes, Infallible>,
    pub _turn: Option<Turn>,
    pub _busy: Option<Busy>,
}

impl Body for CountedBody {
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
