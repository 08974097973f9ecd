//! `wasi:http` outgoing requests under the network allow-list. Components
//! built by some toolchains (componentize-js always) import `wasi:http`;
//! linking it lets them instantiate. Every request is judged before it is
//! sent: without `networkAccess` none goes out, with it the request's host
//! and port must be allowed by `--allow-net` (see `policy/src/net.rs`), exactly
//! as a socket connection would be; each request (method, authority,
//! status) is recorded while a call is. There is no incoming handler: a
//! plugin never serves HTTP.
//!
//! A secret bound to hosts (`--secret NAME@HOST`) is looked for in every
//! request to another host before it is sent: its URL and headers at once,
//! its body held back (up to [`MAX_INSPECTED_BODY`]) and read whole. A
//! request that carries the value (or its base64, URL-encoded or hex form)
//! is refused, logged with the setting that would allow it, and never
//! leaves the host. A request to a host every secret may go to streams as
//! it is.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpHooks};

use crate::effects::Effects;
use crate::limits::MAX_INSPECTED_BODY;
use crate::policy::NetGuard;
use crate::policy::secrets::Redactor;

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
    /// The running call's first such refusal, for its error text (set from
    /// a request's future too, when its body is refused).
    note: Arc<CallNote>,
    /// The plugin's secrets: hidden in what a refusal says, and looked
    /// for in requests to hosts a secret is not bound to.
    redactor: Option<Arc<Redactor>>,
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
                note: Default::default(),
                redactor: None,
            },
        }
    }

    /// The running call's first request refused for want of the network,
    /// worded for its error text (taken: the next call starts without).
    pub(crate) fn take_note(&mut self) -> Option<String> {
        self.hooks.note.take()
    }

    /// Lets requests through that `net` allows, recording them in
    /// `effects`, and none that carries a bound secret of `redactor`'s
    /// elsewhere.
    pub(crate) fn allow(
        &mut self,
        net: Option<Arc<NetGuard>>,
        effects: Arc<Effects>,
        redactor: Option<Arc<Redactor>>,
    ) {
        self.hooks.net = net;
        self.hooks.effects = effects;
        self.hooks.redactor = redactor;
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
                    let authority = self.hide(authority.as_str());
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

impl Gate {
    /// `text` with the plugin's secrets hidden.
    fn hide(&self, text: &str) -> String {
        match &self.redactor {
            Some(redactor) => redactor.redact(text).into_owned(),
            None => text.to_owned(),
        }
    }

    /// Whether the request's URL or headers carry a secret bound away
    /// from `host`: the refusal, logged and recorded.
    fn carries_bound_secret(
        &self,
        host: &str,
        request: &http::Request<wasmtime_wasi_http::WasiBody>,
    ) -> Option<String> {
        let redactor = self.redactor.as_ref()?;
        let mut seen = request.uri().to_string().into_bytes();
        for (name, value) in request.headers() {
            seen.push(b'\n');
            seen.extend_from_slice(name.as_str().as_bytes());
            seen.extend_from_slice(b": ");
            seen.extend_from_slice(value.as_bytes());
        }
        let (name, hosts) = redactor.bound_elsewhere(host, &seen)?;
        let refusal = BoundRefusal {
            plugin: &self.plugin,
            effects: &self.effects,
            redactor,
            method: request.method().as_str(),
            host,
        };
        Some(refusal.say("its URL or headers", name, hosts))
    }
}

/// A call's first refused request, worded for its error text. A flag says
/// whether one was put, so that a call that made no request (most calls)
/// takes nothing under a lock.
#[derive(Default)]
struct CallNote {
    put: AtomicBool,
    text: std::sync::Mutex<Option<String>>,
}

impl CallNote {
    /// Puts the note `text` makes, unless the call has one already.
    fn put_first(&self, text: impl FnOnce() -> String) {
        let mut slot = self.slot();
        if slot.is_none() {
            *slot = Some(text());
            self.put.store(true, Ordering::Release);
        }
    }

    /// The note, taken: the next call starts without one.
    fn take(&self) -> Option<String> {
        if !self.put.load(Ordering::Acquire) {
            return None;
        }
        let mut slot = self.slot();
        self.put.store(false, Ordering::Relaxed);
        slot.take()
    }

    /// The slot, whatever a panicking holder left.
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.text.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A request refused for carrying a bound secret to a host it may not go
/// to: logged and recorded with the setting that would allow it.
struct BoundRefusal<'a> {
    plugin: &'a str,
    effects: &'a Effects,
    /// The plugin's secrets: the host the plugin named may hold one.
    redactor: &'a Redactor,
    method: &'a str,
    host: &'a str,
}

impl BoundRefusal<'_> {
    /// Says that `part` of the request carries secret `name`, bound to
    /// `hosts`; the text is the call's note.
    fn say(&self, part: &str, name: &str, hosts: &[String]) -> String {
        let BoundRefusal { plugin, method, .. } = self;
        let host = self
            .redactor
            .redact(&crate::policy::text::shown_name(self.host))
            .into_owned();
        let allow = crate::policy::wording::worded(
            crate::policy::Setting::Secret,
            format!("{name}@{host}"),
        );
        let line = format!(
            "HTTP {method} to {host} refused before it was sent: secret {name} is in {part}, and it may only go to {} (to send it there too: {allow})",
            hosts.join(", ")
        );
        tracing::warn!(plugin = %plugin, "{line}");
        (self.effects).refused(
            || format!("{method} {host} carrying secret {name}"),
            || allow,
        );
        line
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
            if self.net.is_none() {
                self.note.put_first(|| {
                    let refused = format!("{} {}", request.method(), authority());
                    format!(
                        "{}: the plugin has no network access; {}",
                        super::refusals::shown(&refused, crate::limits::MAX_LOGGED_PATH),
                        super::refusals::needs_network()
                    )
                });
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
        let host = uri.host().unwrap_or("").to_owned();
        if let Some(refusal) = self.carries_bound_secret(&host, &request) {
            self.note.put_first(|| refusal);
            return Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) });
        }
        // The body is read whole before anything is sent when a secret
        // must not go to this host.
        let inspect = (self.redactor.clone()).filter(|r| r.binds_away_from(&host));
        let (plugin, effects) = (self.plugin.clone(), self.effects.clone());
        let call_note = self.note.clone();
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
            let request = match inspect {
                Some(redactor) => {
                    let method = request.method().to_string();
                    let (parts, body) = request.into_parts();
                    let limited = http_body_util::Limited::new(body, MAX_INSPECTED_BODY);
                    let body = match limited.collect().await {
                        Ok(body) => body.to_bytes(),
                        Err(_) => {
                            tracing::warn!(
                                plugin = %plugin,
                                "HTTP {method} to {} refused: its body could not be read whole to look for a bound secret (at most {MAX_INSPECTED_BODY} bytes are held back)",
                                redactor.redact(&crate::policy::text::shown_name(&host)),
                            );
                            return Err(wasmtime_wasi_http::Error::HttpRequestDenied);
                        }
                    };
                    if let Some((name, hosts)) = redactor.bound_elsewhere(&host, &body) {
                        let refusal = BoundRefusal {
                            plugin: &plugin,
                            effects: &effects,
                            redactor: &redactor,
                            method: &method,
                            host: &host,
                        }
                        .say("its body", name, hosts);
                        call_note.put_first(|| refusal);
                        return Err(wasmtime_wasi_http::Error::HttpRequestDenied);
                    }
                    let body = http_body_util::Full::new(body).map_err(|never| match never {});
                    http::Request::from_parts(parts, body.boxed_unsync())
                }
                None => request,
            };
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

#[cfg(test)]
mod tests {
    use super::CallNote;

    #[test]
    fn a_call_note_keeps_the_first_refusal_and_is_taken_once() {
        let note = CallNote::default();
        assert_eq!(note.take(), None);
        note.put_first(|| "first".into());
        note.put_first(|| panic!("a second refusal is not worded"));
        assert_eq!(note.take().as_deref(), Some("first"));
        assert_eq!(note.take(), None, "taken: the next call starts without");
        note.put_first(|| "next".into());
        assert_eq!(note.take().as_deref(), Some("next"));
    }
}
