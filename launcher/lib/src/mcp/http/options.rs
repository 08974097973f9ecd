//! The flags of `mcp --http` and what they are checked against before a
//! socket is bound: where to listen, who may connect (a token, origins,
//! host names) and the caps on sessions, calls and bodies. Every setting
//! of the HTTP server is declared here, once.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;

/// The shortest token `--token-file` takes.
pub const MIN_TOKEN: usize = 32;

/// How to serve MCP over streamable HTTP (`mcp --http ADDR:PORT`).
#[derive(Debug, Clone, Default, Args)]
pub struct HttpArgs {
    /// Serve MCP over streamable HTTP at http://ADDR:PORT/mcp instead of
    /// stdin/stdout; a PORT alone means 127.0.0.1:PORT (port 0 picks a
    /// free one, printed). TLS is the proxy's in front (see the book's HTTP
    /// page).
    #[arg(long, value_name = "ADDR:PORT")]
    pub http: Option<String>,

    /// Serve each request on its own, with no MCP session (and a fresh
    /// sandbox session per request): any number of such servers can sit
    /// behind a load balancer.
    #[arg(long, requires = "http")]
    pub stateless: bool,

    /// Require `Authorization: Bearer TOKEN`, TOKEN being the first line
    /// of FILE (at least 32 characters; only its owner may read or change
    /// it, as for the trusted-keys file). Make one with
    /// `openssl rand -hex 32 > FILE && chmod 600 FILE`.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub token_file: Option<PathBuf>,

    /// Serve on an address beyond loopback without a token: anyone who can
    /// reach the port can call the plugins' tools.
    #[arg(long, requires = "http", conflicts_with = "token_file")]
    pub no_auth: bool,

    /// A browser origin allowed to call (scheme://host:port; repeatable).
    /// A request with any other `Origin` header gets 403; requests without
    /// one (not from a browser) are not affected.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub allow_origin: Vec<String>,

    /// A `Host` name clients may use besides localhost and the bound
    /// address (the server's public name behind a proxy; repeatable).
    /// Others get 403: that stops DNS rebinding.
    #[arg(long, value_name = "NAME", requires = "http")]
    pub allow_host: Vec<String>,

    /// At most this many MCP sessions at once; a client that would open one
    /// more gets 503.
    #[arg(long, value_name = "N", default_value_t = 64, requires = "http")]
    pub max_sessions: usize,

    /// Close an MCP session idle for this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600, requires = "http")]
    pub session_idle: u64,

    /// At most this many requests of one client address in progress at
    /// once; more get 429. Behind a proxy every client is the proxy: raise
    /// it, and cap clients in the proxy.
    #[arg(long, value_name = "N", default_value_t = 16, requires = "http")]
    pub max_client_calls: usize,

    /// The largest request body taken, in bytes; a larger one gets 413.
    #[arg(long, value_name = "BYTES", default_value_t = 4 << 20, requires = "http")]
    pub max_body: usize,
}

/// The HTTP server's settings, checked.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen.
    pub listen: SocketAddr,
    /// No MCP sessions.
    pub stateless: bool,
    /// The bearer token, if one is required.
    pub token: Option<Vec<u8>>,
    /// Origins allowed.
    pub allow_origin: Vec<String>,
    /// `Host` names allowed.
    pub allow_host: Vec<String>,
    /// Sessions at once.
    pub max_sessions: usize,
    /// An idle session's life.
    pub session_idle: Duration,
    /// Requests of one client address at once.
    pub max_client_calls: usize,
    /// The largest body.
    pub max_body: usize,
}

impl HttpArgs {
    /// The checked options, or `None` without `--http`.
    pub fn options(&self) -> Result<Option<HttpOptions>> {
        let Some(address) = &self.http else {
            return Ok(None);
        };
        // Loopback unless an address is said.
        let address = match address.bytes().all(|b| b.is_ascii_digit()) {
            true => format!("127.0.0.1:{address}"),
            false => address.clone(),
        };
        let listen = address
            .to_socket_addrs()
            .ok()
            .and_then(|mut found| found.next())
            .with_context(|| {
                format!("--http {address} is not an address and port to listen on; give one like 127.0.0.1:8080 or [::1]:8080")
            })?;
        let token = self.token_file.as_deref().map(read_token).transpose()?;
        // An IPv4 address mapped into IPv6 is judged as itself.
        let loopback = listen.ip().to_canonical().is_loopback();
        if token.is_none() && !self.no_auth && !loopback {
            bail!(
                "refusing to serve MCP on {listen} without a token: anyone who can reach it could call the plugins' tools. Pass --token-file FILE (a private file holding a random token: `openssl rand -hex 32 > FILE && chmod 600 FILE`), or --no-auth to serve it to anyone on purpose"
            );
        }
        for (flag, value) in [
            ("--max-sessions", self.max_sessions),
            ("--max-client-calls", self.max_client_calls),
            ("--max-body", self.max_body),
            ("--session-idle", self.session_idle as usize),
        ] {
            if value == 0 {
                bail!("{flag} 0 would refuse every request; give a number above 0");
            }
        }
        let mut allow_host: Vec<String> =
            ["localhost", "127.0.0.1", "::1"].map(String::from).into();
        if !listen.ip().is_unspecified() {
            allow_host.push(listen.ip().to_string());
        }
        allow_host.extend(self.allow_host.iter().cloned());
        for origin in &self.allow_origin {
            let parsed = http::Uri::try_from(origin.as_str()).ok();
            let ok = parsed.is_some_and(|u| {
                u.scheme().is_some()
                    && u.host().is_some()
                    && u.path_and_query().is_none_or(|p| p == "/")
            });
            if !ok && origin != "null" {
                bail!(
                    "--allow-origin {origin} is not an origin; give scheme://host:port, like https://app.example.com:443"
                );
            }
        }
        Ok(Some(HttpOptions {
            listen,
            stateless: self.stateless,
            token,
            allow_origin: self.allow_origin.clone(),
            allow_host,
            max_sessions: self.max_sessions,
            session_idle: Duration::from_secs(self.session_idle),
            max_client_calls: self.max_client_calls,
            max_body: self.max_body,
        }))
    }
}

/// The token in `path`: its first line, from a file only its owner may
/// read or change.
fn read_token(path: &Path) -> Result<Vec<u8>> {
    let named = || format!("--token-file {}", path.display());
    match std::fs::metadata(path) {
        Err(error) => bail!("cannot read {}: {error}", named()),
        Ok(meta) if !meta.is_file() => bail!("{} is not a file", named()),
        Ok(_) => {}
    }
    let resolved = crate::private::check(path).with_context(|| {
        format!(
            "{}: only its owner may change it (chmod 600, in folders only you may write)",
            named()
        )
    })?;
    let access = lingxi_wasm_host::policy::owner::access(&resolved)
        .with_context(|| format!("{}: cannot tell who may read it", named()))?;
    if access.others_may_read {
        bail!(
            "{}: others may read it, and it holds a secret; make it private (chmod 600; on Windows, remove other users from its permissions)",
            named()
        );
    }
    let text = std::fs::read(&resolved).with_context(|| format!("cannot read {}", named()))?;
    let line = text.split(|&b| b == b'\n').next().unwrap_or_default();
    let token = line.strip_suffix(b"\r").unwrap_or(line).to_vec();
    if token.len() < MIN_TOKEN || !token.iter().all(|b| b.is_ascii_graphic()) {
        bail!(
            "{}: its first line must be a token of at least {MIN_TOKEN} visible ASCII characters (no spaces); make one with `openssl rand -hex 32`",
            named()
        );
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(address: &str) -> HttpArgs {
        HttpArgs {
            http: Some(address.into()),
            max_sessions: 64,
            session_idle: 600,
            max_client_calls: 16,
            max_body: 1 << 20,
            ..HttpArgs::default()
        }
    }

    #[test]
    fn beyond_loopback_needs_a_token_or_no_auth() {
        assert!(args("127.0.0.1:0").options().unwrap().is_some());
        let port_alone = args("0").options().unwrap().unwrap();
        assert!(port_alone.listen.ip().is_loopback(), "{port_alone:?}");
        assert!(args("[::1]:0").options().unwrap().is_some());
        let open = args("0.0.0.0:0").options().unwrap_err().to_string();
        assert!(
            open.contains("--token-file") && open.contains("--no-auth"),
            "{open}"
        );
        assert!(args("[::ffff:127.0.0.1]:0").options().unwrap().is_some());
        let said = HttpArgs {
            no_auth: true,
            ..args("0.0.0.0:0")
        };
        assert!(said.options().unwrap().is_some());
        assert!(HttpArgs::default().options().unwrap().is_none());
    }

    // On Windows the same rule reads the file's ACL (`owner::access`);
    // what Wine's default ACLs say is not Windows', so this runs on Unix.
    #[cfg(unix)]
    #[test]
    fn tokens_come_from_private_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        let good = "a".repeat(MIN_TOKEN);
        std::fs::write(&file, format!("{good}\r\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = |m| std::fs::Permissions::from_mode(m);
        std::fs::set_permissions(dir.path(), mode(0o700)).unwrap();
        std::fs::set_permissions(&file, mode(0o644)).unwrap();
        let open = read_token(&file).unwrap_err().to_string();
        assert!(open.contains("others may read"), "{open}");
        std::fs::set_permissions(&file, mode(0o600)).unwrap();
        assert_eq!(read_token(&file).unwrap(), good.as_bytes());
        std::fs::write(&file, "short\n").unwrap();
        let short = read_token(&file).unwrap_err().to_string();
        assert!(short.contains("at least"), "{short}");
    }
}
