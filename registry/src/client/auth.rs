//! Authentication with a registry: anonymous first; on a 401, what its
//! `WWW-Authenticate` asks for — HTTP basic with the user's credentials,
//! or the registry token flow (a bearer token from the realm it names,
//! asked with the credentials if there are any, anonymously otherwise).
//!
//! Credentials come from `LINGXI_WASM_REGISTRY_USERNAME` and
//! `LINGXI_WASM_REGISTRY_PASSWORD` when both are set (for the registry of
//! the one reference a command names), else from the docker `config.json`
//! the user already has (`$DOCKER_CONFIG` or `~/.docker`, and the
//! credential helpers it names). They are sent only over HTTPS, or plain
//! HTTP to this machine or a host the user allowed, and never appear in a
//! log line or an error: an error says where they came from, not what
//! they are.

use base64::Engine as _;
use lingxi_wasm_policy::limits::MAX_REGISTRY_SMALL_BODY;
use reqwest::header::HeaderValue;

use super::RegistryOptions;
use crate::error::RegistryError;
use crate::reference::Reference;

use crate::env::{PASSWORD_ENV, USERNAME_ENV};

/// Longest docker config file read.
const MAX_DOCKER_CONFIG: u64 = 1 << 20;

/// What a session may do in its repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Read.
    Pull,
    /// Read and write.
    Push,
}

/// Where a credential came from (what an error names).
#[derive(Debug, Clone)]
enum Source {
    Environment,
    DockerConfig,
}

impl Source {
    fn describe(&self) -> String {
        match self {
            Source::Environment => format!("{USERNAME_ENV} and {PASSWORD_ENV}"),
            Source::DockerConfig => "the docker config.json ($DOCKER_CONFIG or ~/.docker)".into(),
        }
    }
}

/// A user's credential for one registry.
#[derive(Clone)]
enum Credential {
    Password { username: String, password: String },
    IdentityToken(String),
}

/// The authentication state of one session.
pub(super) struct Auth {
    registry: String,
    repository: String,
    scope: Scope,
    header: Option<HeaderValue>,
    /// Looked up on the first challenge; `Some(None)`: there is none.
    credential: Option<Option<(Credential, Source)>>,
}

impl Auth {
    pub(super) fn new(reference: &Reference, scope: Scope) -> Self {
        Auth {
            registry: reference.registry().to_owned(),
            repository: reference.repository().to_owned(),
            scope,
            header: None,
            credential: None,
        }
    }

    /// The `Authorization` header to send, once there is one.
    pub(super) fn header(&self) -> Option<HeaderValue> {
        self.header.clone()
    }

    /// The error for a registry that refused what was sent.
    pub(super) fn refused(&self, reference: &Reference) -> RegistryError {
        let why = match &self.credential {
            Some(Some((_, source))) => format!(
                "the registry refused the credentials from {} for {}",
                source.describe(),
                self.registry
            ),
            _ => format!(
                "the registry asks for credentials and none are set for {}: log in with docker login {} (or set {USERNAME_ENV} and {PASSWORD_ENV})",
                self.registry, self.registry
            ),
        };
        RegistryError::Credentials {
            reference: reference.to_string(),
            why,
        }
    }

    /// Answers a challenge: sets the header the next request sends.
    pub(super) async fn answer(
        &mut self,
        http: &reqwest::Client,
        options: &RegistryOptions,
        challenge: &str,
        registry_https: bool,
    ) -> Result<(), RegistryError> {
        let credentials_error = |why: String| RegistryError::Credentials {
            reference: format!("{}{}", crate::reference::SCHEME, self.registry),
            why,
        };
        let challenges = http_auth::parse_challenges(challenge).map_err(|_| {
            credentials_error("the registry's authentication challenge does not parse".into())
        })?;
        if self.credential.is_none() {
            self.credential = Some(
                lookup_within_deadline(&self.registry)
                    .await
                    .map_err(credentials_error)?,
            );
        }
        let credential = self.credential.clone().flatten();
        let param = |c: &http_auth::ChallengeRef<'_>, name: &str| {
            c.params
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.to_unescaped())
        };
        if let Some(bearer) = challenges
            .iter()
            .find(|c| c.scheme.eq_ignore_ascii_case("bearer"))
        {
            let realm = param(bearer, "realm").ok_or_else(|| {
                credentials_error("the registry's token challenge names no realm".into())
            })?;
            let service = param(bearer, "service");
            let token = self
                .token(
                    http,
                    options,
                    &realm,
                    service.as_deref(),
                    credential.as_ref(),
                    registry_https,
                )
                .await
                .map_err(credentials_error)?;
            self.header = Some(secret_header(&format!("Bearer {token}")));
            return Ok(());
        }
        if challenges
            .iter()
            .any(|c| c.scheme.eq_ignore_ascii_case("basic"))
        {
            let Some((Credential::Password { username, password }, _)) = credential else {
                // Nothing to answer with: the next 401 says so.
                self.header = None;
                return Ok(());
            };
            self.header = Some(basic(&username, &password));
            return Ok(());
        }
        Err(credentials_error(format!(
            "the registry asks for an authentication this client does not speak ({})",
            crate::shown(challenge.split_whitespace().next().unwrap_or("none"))
        )))
    }

    /// A bearer token from `realm`.
    async fn token(
        &self,
        http: &reqwest::Client,
        options: &RegistryOptions,
        realm: &str,
        service: Option<&str>,
        credential: Option<&(Credential, Source)>,
        registry_https: bool,
    ) -> Result<String, String> {
        let mut url = reqwest::Url::parse(realm)
            .map_err(|_| "the registry's token realm is not a URL".to_owned())?;
        let host = url.host_str().unwrap_or("").to_owned();
        let realm_local = host == "localhost"
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        let realm_allowed = options
            .plain_http
            .iter()
            .any(|h| h.eq_ignore_ascii_case(&host));
        // Plain HTTP only where the registry itself is spoken to so (this
        // machine, or a host named to allow it): a registry reached over
        // HTTPS does not get a credential sent in the clear.
        let plain_allowed = !registry_https && (realm_local || realm_allowed);
        if url.scheme() != "https" && !(url.scheme() == "http" && plain_allowed) {
            return Err(format!(
                "the registry's token realm {}://{host} is not HTTPS{}; no credential is sent there",
                url.scheme(),
                if registry_https {
                    ", though the registry is"
                } else {
                    ""
                }
            ));
        }
        let actions = match self.scope {
            Scope::Pull => "pull",
            Scope::Push => "pull,push",
        };
        {
            let mut query = url.query_pairs_mut();
            if let Some(service) = service {
                query.append_pair("service", service);
            }
            query.append_pair(
                "scope",
                &format!("repository:{}:{actions}", self.repository),
            );
        }
        let mut request = http.get(url.clone());
        match credential {
            Some((Credential::Password { username, password }, _)) => {
                request = request.header(reqwest::header::AUTHORIZATION, basic(username, password));
            }
            Some((Credential::IdentityToken(token), _)) => {
                // An identity token is a refresh token: the OAuth2 form.
                request = http.post(url).form(&[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", token),
                    ("service", service.unwrap_or("")),
                    (
                        "scope",
                        &format!("repository:{}:{actions}", self.repository),
                    ),
                    ("client_id", "lingxi-wasm"),
                ]);
            }
            None => {}
        }
        let response = request.send().await.map_err(|e| {
            format!(
                "cannot get a token from the registry's realm ({})",
                super::error_chain(&e)
            )
        })?;
        let status = response.status();
        if !status.is_success() {
            return Err(match credential {
                Some((_, source)) => format!(
                    "the registry's token realm refused the credentials from {} ({status})",
                    source.describe()
                ),
                None => format!(
                    "the registry's token realm refused an anonymous token ({status}): log in with docker login {} (or set {USERNAME_ENV} and {PASSWORD_ENV})",
                    self.registry
                ),
            });
        }
        if response
            .content_length()
            .is_some_and(|n| n > MAX_REGISTRY_SMALL_BODY as u64)
        {
            return Err("the registry's token answer is too long".into());
        }
        let body = read_small(response).await?;
        #[derive(serde::Deserialize)]
        struct TokenAnswer {
            token: Option<String>,
            access_token: Option<String>,
        }
        let answer: TokenAnswer = serde_json::from_slice(&body)
            .map_err(|_| "the registry's token answer is not JSON with a token".to_owned())?;
        let token = answer
            .token
            .or(answer.access_token)
            .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_graphic()))
            .ok_or_else(|| "the registry's token answer has no usable token".to_owned())?;
        Ok(token)
    }
}

async fn read_small(response: reqwest::Response) -> Result<Vec<u8>, String> {
    use futures_util::StreamExt;
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| format!("the registry's token answer broke off ({e})"))?;
        if body.len() + chunk.len() > MAX_REGISTRY_SMALL_BODY {
            return Err("the registry's token answer is too long".into());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn basic(username: &str, password: &str) -> HeaderValue {
    let encoded =
        base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
    secret_header(&format!("Basic {encoded}"))
}

/// A header value marked sensitive (never shown by reqwest's `Debug`).
fn secret_header(value: &str) -> HeaderValue {
    let mut header = HeaderValue::from_str(value).unwrap_or_else(|_| HeaderValue::from_static(""));
    header.set_sensitive(true);
    header
}

/// [`lookup`] on a thread of its own: a docker credential helper is a
/// program that may never answer, and the pull's deadline (which this is
/// awaited within) must still hold. A helper left running ends with it.
async fn lookup_within_deadline(registry: &str) -> Result<Option<(Credential, Source)>, String> {
    let (send, receive) = tokio::sync::oneshot::channel();
    let registry = registry.to_owned();
    std::thread::Builder::new()
        .name("docker-credentials".into())
        .spawn(move || {
            let _ = send.send(lookup(&registry));
        })
        .map_err(|e| format!("cannot start looking up the credentials ({e})"))?;
    receive
        .await
        .map_err(|_| "looking up the credentials failed".to_owned())?
}

/// The user's credential for `registry`, if any.
fn lookup(registry: &str) -> Result<Option<(Credential, Source)>, String> {
    if let (Ok(username), Ok(password)) = (std::env::var(USERNAME_ENV), std::env::var(PASSWORD_ENV))
    {
        return Ok(Some((
            Credential::Password { username, password },
            Source::Environment,
        )));
    }
    let Some(dir) = std::env::var_os("DOCKER_CONFIG")
        .map(std::path::PathBuf::from)
        .or_else(|| lingxi_wasm_policy::places::home().map(|h| h.join(".docker")))
    else {
        return Ok(None);
    };
    let path = dir.join("config.json");
    let Ok(meta) = std::fs::metadata(&path) else {
        return Ok(None);
    };
    if !meta.is_file() || meta.len() > MAX_DOCKER_CONFIG {
        return Err(format!(
            "{} is not a docker config file of at most {MAX_DOCKER_CONFIG} bytes",
            path.display()
        ));
    }
    let text = std::fs::read(&path).map_err(|e| format!("cannot read {} ({e})", path.display()))?;
    use docker_credential::{CredentialRetrievalError as E, DockerCredential};
    // docker names Docker Hub by its old index URL.
    let server = match registry {
        "docker.io" | "index.docker.io" | "registry-1.docker.io" => "https://index.docker.io/v1/",
        other => other,
    };
    match docker_credential::get_credential_from_reader(text.as_slice(), server) {
        Ok(DockerCredential::UsernamePassword(username, password)) => Ok(Some((
            Credential::Password { username, password },
            Source::DockerConfig,
        ))),
        Ok(DockerCredential::IdentityToken(token)) => Ok(Some((
            Credential::IdentityToken(token),
            Source::DockerConfig,
        ))),
        Err(E::NoCredentialConfigured) => Ok(None),
        // The helper's own output may hold the secret: only its name is said.
        Err(E::HelperFailure { helper, .. }) => Err(format!(
            "the credential helper {helper} named in {} failed",
            path.display()
        )),
        // The other errors name a kind, never a secret.
        Err(e) => Err(format!(
            "the credentials for {registry} in {} cannot be read ({e})",
            path.display()
        )),
    }
}
