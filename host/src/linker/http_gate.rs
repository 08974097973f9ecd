//! `wasi:http` outgoing requests under the network allow-list. Components
//! built by some toolchains (componentize-js always) import `wasi:http`;
//! linking it lets them instantiate. Every request is judged before it is
//! sent: without `networkAccess` none goes out, with it the request's host
//! and port must be allowed by `--allow-net` (see `policy/src/net.rs`), exactly
//! as a socket connection would be; each request (method, authority,
//! status) is recorded while a call is. There is no incoming handler: a
//! plugin never serves HTTP.

use std::sync::Arc;

use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpHooks};

use crate::effects::Effects;
use crate::policy::NetGuard;

/// The HTTP side of one instance: the allow-list it is judged by.
pub(crate) struct HttpGate {
    pub(crate) ctx: WasiHttpCtx,
    pub(crate) hooks: Gate,
}

/// Decides each outgoing request (the [`WasiHttpHooks`] of an instance).
pub(crate) struct Gate {
    plugin: Arc<str>,
    /// The allow-list, when the plugin may use the network.
    net: Option<Arc<NetGuard>>,
    /// Where requests are recorded while a call is.
    effects: Arc<Effects>,
    /// Requests refused for want of the network (their log lines are
    /// bounded as the guard's are).
    offline_denials: std::sync::atomic::AtomicU32,
    /// The running call's first such refusal, for its error text.
    note: Option<String>,
}

impl HttpGate {
    /// A gate that refuses every request until [`HttpGate::allow`] is given
    /// the instance's network guard.
    pub(crate) fn new(plugin: Arc<str>) -> Self {
        HttpGate {
            ctx: WasiHttpCtx::new(),
            hooks: Gate {
                plugin,
                net: None,
                effects: Effects::new(),
                offline_denials: Default::default(),
                note: None,
            },
        }
    }

    /// The running call's first request refused for want of the network,
    /// worded for its error text (taken: the next call starts without).
    pub(crate) fn take_note(&mut self) -> Option<String> {
        self.hooks.note.take()
    }

    /// Lets requests through that `net` allows, recording them in `effects`.
    pub(crate) fn allow(&mut self, net: Option<Arc<NetGuard>>, effects: Arc<Effects>) {
        self.hooks.net = net;
        self.hooks.effects = effects;
    }
}

impl Gate {
    /// Whether a request to `uri` may be sent (each refusal is logged with
    /// what would allow it).
    fn allows(&self, uri: &http::Uri) -> bool {
        let Some(authority) = uri.authority() else {
            return false;
        };
        let https = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
        let port = authority.port_u16().unwrap_or(if https { 443 } else { 80 });
        match &self.net {
            Some(guard) => guard.check_http(authority.host(), port),
            None => {
                let n = (self.offline_denials).fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let plugin = &self.plugin;
                if n < crate::limits::MAX_LOGGED_DENIALS {
                    tracing::warn!(
                        plugin = %plugin,
                        "HTTP request to {authority} denied: the plugin has no network access ({})",
                        super::refusals::needs_network(),
                    );
                } else if n == crate::limits::MAX_LOGGED_DENIALS {
                    tracing::warn!(plugin = %plugin, "more HTTP denials follow; they are not logged");
                }
                false
            }
        }
    }
}

impl WasiHttpHooks for Gate {
    fn send_request(
        &mut self,
        request: http::Request<wasmtime_wasi_http::WasiBody>,
        options: Option<wasmtime_wasi_http::RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
    ) -> Box<
        dyn Future<
                Output = Result<
                    (
                        http::Response<wasmtime_wasi_http::WasiBody>,
                        Box<dyn Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
                    ),
                    wasmtime_wasi_http::Error,
                >,
            > + Send,
    > {
        let uri = request.uri();
        let authority = || {
            let scheme = uri.scheme_str().unwrap_or("http");
            let host = uri.authority().map_or("", |a| a.as_str());
            format!("{scheme}://{host}")
        };
        if !self.allows(uri) {
            if self.net.is_none() && self.note.is_none() {
                let refused = format!("{} {}", request.method(), authority());
                self.note = Some(format!(
                    "{}: the plugin has no network access; {}",
                    super::refusals::shown(&refused, crate::limits::MAX_LOGGED_PATH),
                    super::refusals::needs_network()
                ));
            }
            self.effects.refused(
                || format!("{} {}", request.method(), authority()),
                || match (&self.net, uri.authority()) {
                    (None, _) => super::refusals::needs_network(),
                    (Some(_), Some(a)) => {
                        let https = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
                        let port = a.port_u16().unwrap_or(if https { 443 } else { 80 });
                        crate::policy::net::allow_hint(a.host(), &port.to_string())
                    }
                    (Some(_), None) => "nothing: the request names no host".into(),
                },
            );
            return Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) });
        }
        let recorded = if self.effects.active() {
            self.effects
                .http(request.method().as_str(), &authority())
                .map(|index| (index, self.effects.clone()))
        } else {
            None
        };
        // The default sender, as the crate's own default hook does.
        _ = fut;
        Box::new(async move {
            use http_body_util::BodyExt;
            let (response, io) = wasmtime_wasi_http::default_send_request(request, options).await?;
            if let Some((index, effects)) = recorded {
                effects.http_status(index, response.status().as_u16());
            }
            Ok((
                response.map(BodyExt::boxed_unsync),
                Box::new(io) as Box<dyn Future<Output = _> + Send>,
            ))
        })
    }
}
