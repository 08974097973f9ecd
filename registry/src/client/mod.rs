//! Talking to one registry: which scheme (HTTPS, or plain HTTP only for
//! this machine or a host the user names), which redirects are followed
//! (a few, to the same host and scheme), how answers are read (streamed,
//! capped before they are kept), and authentication ([`auth`]: anonymous,
//! HTTP basic and the registry token flow, with one try each: a registry
//! that answers 401 again is refused, not asked in a loop).
//!
//! Requests go through `reqwest` (a maintained HTTP client) with a TLS
//! configuration of our own ([`crate::tls`]). `oci-client` was measured
//! against the hostile cases this crate must refuse and does not fit: it
//! reads a manifest's and a token's whole body whatever its length and
//! follows any redirect reqwest's default policy follows, and neither can
//! be configured; so the distribution API's few requests are made here,
//! over reqwest, with the caps in `lingxi_wasm_policy::limits`.

mod auth;

use std::path::PathBuf;
use std::time::Duration;

use futures_util::StreamExt;
use lingxi_wasm_policy::limits::{MAX_REGISTRY_REDIRECTS, REGISTRY_IDLE, REGISTRY_TIMEOUT};
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode};

use crate::error::RegistryError;
use crate::reference::Reference;

pub(crate) use auth::Scope;

/// How registries are reached.
#[derive(Debug, Clone)]
pub struct RegistryOptions {
    /// How long one pull or push may take, from its first request to its
    /// last byte.
    pub timeout: Duration,
    /// Registry hosts (`HOST` or `HOST:PORT`) that may be reached over
    /// plain HTTP. This machine's (`localhost`, loopback addresses) may be
    /// anyway.
    pub plain_http: Vec<String>,
    /// A PEM file whose CA certificates alone verify registries' TLS,
    /// instead of the system's roots.
    pub ca_file: Option<PathBuf>,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        RegistryOptions {
            timeout: REGISTRY_TIMEOUT,
            plain_http: Vec::new(),
            ca_file: None,
        }
    }
}

/// A client of registries.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    options: RegistryOptions,
}

impl Client {
    /// A client with `options` (its TLS roots read now).
    pub fn new(options: RegistryOptions) -> Result<Self, RegistryError> {
        let tls = crate::tls::client_config(options.ca_file.as_deref()).map_err(|why| {
            RegistryError::Transport {
                reference: "registries".into(),
                why,
            }
        })?;
        let http = reqwest::Client::builder()
            .use_preconfigured_tls(tls)
            .no_proxy()
            .connect_timeout(REGISTRY_IDLE)
            .read_timeout(REGISTRY_IDLE)
            .redirect(redirect_policy())
            .user_agent(concat!("lingxi-wasm/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| RegistryError::Transport {
                reference: "registries".into(),
                why: format!("cannot set up the HTTP client ({e})"),
            })?;
        Ok(Client { http, options })
    }

    /// The options.
    pub fn options(&self) -> &RegistryOptions {
        &self.options
    }

    /// Runs `work` within the options' deadline.
    pub(crate) async fn within<T>(
        &self,
        reference: &Reference,
        work: impl Future<Output = Result<T, RegistryError>>,
    ) -> Result<T, RegistryError> {
        match tokio::time::timeout(self.options.timeout, work).await {
            Ok(done) => done,
            Err(_) => Err(RegistryError::Deadline {
                reference: reference.to_string(),
                seconds: self.options.timeout.as_secs().max(1),
            }),
        }
    }

    /// A conversation with `reference`'s registry.
    pub(crate) async fn session<'a>(
        &'a self,
        reference: &'a Reference,
        scope: Scope,
    ) -> Result<Session<'a>, RegistryError> {
        let plain_named = self.options.plain_http.iter().any(|allowed| {
            allowed.eq_ignore_ascii_case(reference.registry())
                || allowed.eq_ignore_ascii_case(reference.host())
        });
        let mut session = Session {
            client: self,
            reference,
            base: format!("https://{}", reference.registry()),
            auth: auth::Auth::new(reference, scope),
        };
        if plain_named {
            session.base = format!("http://{}", reference.registry());
        } else if reference.is_loopback() {
            // This machine's registry: HTTPS if it speaks it, else plain
            // HTTP (nothing leaves the machine), as docker does for it.
            // HTTPS failing is not enough: plain HTTP must answer as a
            // registry does (200, or 401 asking for credentials), or the
            // HTTPS error (an unknown CA, say) is the one to report — an
            // HTTPS server answers plain HTTP with 400.
            // Only when it answered HTTPS in plain HTTP (never after an
            // alert, a reset or a certificate error: it speaks TLS, and that
            // is what to report), and never when a CA is named for it.
            let plain = format!("http://{}", reference.registry());
            let probe = |base: &str| self.http.get(format!("{base}/v2/")).send();
            let speaks_no_tls = match probe(&session.base).await {
                Ok(_) => false,
                Err(e) => error_chain(&e).contains(PLAIN_HTTP_ANSWER),
            };
            if speaks_no_tls
                && self.options.ca_file.is_none()
                && probe(&plain)
                    .await
                    .is_ok_and(|r| matches!(r.status().as_u16(), 200 | 401))
            {
                session.base = plain;
            }
        }
        Ok(session)
    }
}

/// What rustls says when the server answers its hello with plain HTTP
/// (not a TLS record): the one failure after which this machine's registry
/// is asked again in plain HTTP. An alert, a reset, a closed connection or
/// a certificate that does not verify all come from a server that speaks
/// TLS, and are reported.
const PLAIN_HTTP_ANSWER: &str = "InvalidContentType";

/// A few redirects, each to the same host, port and scheme: a registry
/// that sends a request elsewhere (another host, a downgrade to plain
/// HTTP) or around in a loop is refused.
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(first) = attempt.previous().first() else {
            return attempt.follow();
        };
        let to = attempt.url();
        if attempt.previous().len() > MAX_REGISTRY_REDIRECTS {
            let error = format!("it redirected more than {MAX_REGISTRY_REDIRECTS} times (a loop?)");
            return attempt.error(error);
        }
        let same = to.scheme() == first.scheme()
            && to.host_str() == first.host_str()
            && to.port_or_known_default() == first.port_or_known_default();
        if !same {
            let error = format!(
                "it redirected to {}://{}, not the registry it was asked at",
                to.scheme(),
                to.host_str().unwrap_or("?")
            );
            return attempt.error(error);
        }
        attempt.follow()
    })
}

/// One reference's conversation with its registry.
pub(crate) struct Session<'a> {
    client: &'a Client,
    reference: &'a Reference,
    base: String,
    auth: auth::Auth,
}

impl Session<'_> {
    /// `https://HOST/v2/REPOSITORY/` + `rest`.
    pub(crate) fn url(&self, rest: &str) -> String {
        format!("{}/v2/{}/{rest}", self.base, self.reference.repository())
    }

    /// The reference this session is about.
    pub(crate) fn reference(&self) -> &Reference {
        self.reference
    }

    /// Sends a request, authenticating once if the registry asks to.
    pub(crate) async fn send(
        &mut self,
        method: Method,
        url: &str,
        headers: HeaderMap,
        body: Option<Vec<u8>>,
    ) -> Result<reqwest::Response, RegistryError> {
        self.check_same_registry(url)?;
        let mut tried_auth = false;
        loop {
            let mut request = self.client.http.request(method.clone(), url);
            request = request.headers(headers.clone());
            if let Some(value) = self.auth.header() {
                request = request.header(reqwest::header::AUTHORIZATION, value);
            }
            if let Some(body) = &body {
                request = request.body(body.clone());
            }
            let response = request.send().await.map_err(|e| self.transport(e))?;
            if response.status() != StatusCode::UNAUTHORIZED {
                return Ok(response);
            }
            if tried_auth {
                return Err(self.auth.refused(self.reference));
            }
            tried_auth = true;
            let challenge = response
                .headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned();
            self.auth
                .answer(
                    &self.client.http,
                    &self.client.options,
                    &challenge,
                    self.base.starts_with("https://"),
                )
                .await?;
        }
    }

    /// A redirect or an upload location must stay on the registry.
    fn check_same_registry(&self, url: &str) -> Result<(), RegistryError> {
        if url.starts_with(&format!("{}/", self.base)) {
            return Ok(());
        }
        Err(self.refused(format!(
            "it sent the request elsewhere ({}), not to the registry it was asked at",
            crate::shown(url)
        )))
    }

    /// A refusal of what this registry sent.
    pub(crate) fn refused(&self, why: String) -> RegistryError {
        RegistryError::Refused {
            reference: self.reference.to_string(),
            why,
        }
    }

    /// An error status for `what`.
    pub(crate) fn status(&self, status: StatusCode, what: &str) -> RegistryError {
        let hint = match status {
            StatusCode::NOT_FOUND => "; check the repository and tag".to_owned(),
            StatusCode::FORBIDDEN => "; the credentials in use may not do this".to_owned(),
            s if s.is_redirection() => {
                "; a redirect is followed only with a Location on the same scheme, host and port"
                    .to_owned()
            }
            _ => String::new(),
        };
        RegistryError::Status {
            reference: self.reference.to_string(),
            status: status.as_u16(),
            what: what.to_owned(),
            hint,
        }
    }

    /// What a failed exchange says: what the registry did wrong (a stall,
    /// an answer broken off, a redirect refused) is a refusal; not reaching
    /// it is a transport error, with the setting that may help.
    pub(crate) fn transport(&self, error: reqwest::Error) -> RegistryError {
        let mut why = error_chain(&error);
        if error.is_redirect() {
            return self.refused(why);
        }
        if error.is_timeout() && !error.is_connect() {
            return self.refused(format!(
                "it sent nothing for {} s ({why}); a registry that is slow as a whole has {} seconds",
                REGISTRY_IDLE.as_secs(),
                lingxi_wasm_policy::settings::Setting::RegistryTimeout
            ));
        }
        if error.is_body() || error.is_decode() {
            return self.refused(format!("its answer broke off or does not decode ({why})"));
        }
        if error.is_timeout() {
            why.push_str(&format!(
                " (no connection within {} s)",
                REGISTRY_IDLE.as_secs()
            ));
        } else if why.contains(PLAIN_HTTP_ANSWER) {
            why.push_str(&format!(
                " (it does not speak HTTPS: if it serves plain HTTP and you trust the network to it, allow that with {} {})",
                lingxi_wasm_policy::settings::Setting::AllowHttpRegistry,
                self.reference.host()
            ));
        } else if why.contains("certificate") {
            why.push_str(&format!(
                " (a registry whose CA the system does not trust: name its CA's PEM file with {})",
                lingxi_wasm_policy::settings::Setting::RegistryCa
            ));
        }
        RegistryError::Transport {
            reference: self.reference.to_string(),
            why,
        }
    }

    /// Reads a whole answer of at most `cap` bytes; a longer one is refused
    /// as soon as it is known to be (its length, or the bytes that pass it).
    pub(crate) async fn read_capped(
        &self,
        response: reqwest::Response,
        cap: usize,
        what: &str,
    ) -> Result<Vec<u8>, RegistryError> {
        let too_long = || self.refused(format!("{what} is longer than the {cap} bytes accepted"));
        if response.content_length().is_some_and(|n| n > cap as u64) {
            return Err(too_long());
        }
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| self.transport(e))?;
            if body.len() + chunk.len() > cap {
                return Err(too_long());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// An error with its causes, as one line (reqwest's own text says only
/// "error sending request").
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    crate::shown(&text)
}

/// A header value of text this crate made (a media type, a digest).
pub(crate) fn header(value: &str) -> HeaderValue {
    HeaderValue::from_str(value).unwrap_or_else(|_| HeaderValue::from_static(""))
}
