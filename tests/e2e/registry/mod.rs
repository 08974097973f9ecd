//! Plugins through OCI registries, end to end: a real CNCF distribution
//! registry (Debian's docker-registry, started by `scripts/registry-serve`
//! on a loopback port, one instance with TLS from a CA made for the test
//! and htpasswd authentication), `push --sign`, `install --signed-only` on
//! a fresh HOME, the installed file answering the Core transcripts as
//! LingXi spawns it, refusals of unsigned and re-signed artifacts, an
//! upgrade that asks for more, and the store serving a second use.
//! `hostile` has the misbehaving registry; `wkg` the interop.

mod credentials;
mod hostile;
mod wkg;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::workspace_root;

/// A registry serving on loopback until dropped.
pub struct Registry {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its configuration, storage and (with TLS) `ca.pem`.
    pub dir: tempfile::TempDir,
}

/// How a [`Registry`] is started.
#[derive(Default)]
pub struct Options<'a> {
    pub tls: bool,
    pub auth: Option<(&'a str, &'a str)>,
}

impl Registry {
    pub fn start(options: Options) -> Registry {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut command = Command::new(workspace_root().join("scripts/registry-serve"));
        command.arg(dir.path()).arg(port.to_string());
        if options.tls {
            command.arg("--tls");
        }
        if let Some((user, password)) = options.auth {
            command.args(["--auth", user, password]);
        }
        let log = std::fs::File::create(dir.path().join("log")).unwrap();
        let mut child = command
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("scripts/registry-serve runs");
        let deadline = Instant::now() + Duration::from_secs(120);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                let log = std::fs::read_to_string(dir.path().join("log")).unwrap_or_default();
                panic!("the registry ended ({status}) before it served:\n{log}");
            }
            assert!(Instant::now() < deadline, "the registry did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Registry { child, port, dir }
    }

    /// `oci://127.0.0.1:PORT/` + `path`.
    pub fn reference(&self, path: &str) -> String {
        format!("oci://127.0.0.1:{}/{path}", self.port)
    }

    /// The CA its TLS certificate is made by.
    pub fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A user of the launcher with a HOME and cache folder of their own (a
/// fresh machine: no plugins, no pulled artifacts, no compiled code).
pub struct User {
    pub home: tempfile::TempDir,
    /// The folder commands run in (a project's).
    pub work: tempfile::TempDir,
    pub cache: tempfile::TempDir,
    pub env: Vec<(String, String)>,
}

/// What a run of the launcher did.
pub struct Run {
    pub ok: bool,
    pub out: String,
    pub err: String,
}

impl Run {
    /// Panics unless it succeeded.
    #[track_caller]
    pub fn ok(self) -> Run {
        assert!(
            self.ok,
            "failed:\nstdout:\n{}\nstderr:\n{}",
            self.out, self.err
        );
        self
    }

    /// Panics unless it failed saying `what` on stderr.
    #[track_caller]
    pub fn refused(self, what: &str) -> Run {
        assert!(!self.ok, "not refused:\n{}\n{}", self.out, self.err);
        assert!(self.err.contains(what), "no {what:?} in:\n{}", self.err);
        self
    }
}

impl User {
    pub fn new() -> User {
        User {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
            cache: tempfile::tempdir().unwrap(),
            env: Vec::new(),
        }
    }

    /// Runs `lingxi-wasm-run args…` as this user.
    pub fn run(&self, args: &[&str]) -> Run {
        let out = Command::new(env!("CARGO_BIN_EXE_lingxi-wasm-run"))
            .args(args)
            .current_dir(self.work.path())
            .env("HOME", self.home.path())
            .env("LINGXI_WASM_CACHE", self.cache.path())
            .env_remove("LINGXI_WASM_REGISTRY_USERNAME")
            .env_remove("LINGXI_WASM_REGISTRY_PASSWORD")
            .env_remove("DOCKER_CONFIG")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        Run {
            ok: out.status.success(),
            out: String::from_utf8_lossy(&out.stdout).into_owned(),
            err: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The pulled artifacts' store.
    pub fn store(&self) -> PathBuf {
        self.cache.path().join("oci")
    }

    /// The files in the store's blobs folder.
    pub fn stored_blobs(&self) -> Vec<PathBuf> {
        let dir = self.store().join("blobs").join("sha256");
        match std::fs::read_dir(&dir) {
            Ok(entries) => entries.flatten().map(|e| e.path()).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Where `install` puts plugin `id`.
    pub fn installed(&self, id: &str) -> PathBuf {
        self.home.path().join(".lingxiagent/plugins").join(id)
    }
}

/// A minisign key pair: the secret key file and the public key file.
pub fn keys(user: &User, name: &str) -> (PathBuf, PathBuf) {
    let prefix = user.home.path().join(name);
    user.run(&["keygen", "-o", s(&prefix), "--no-password"])
        .ok();
    (
        user.home.path().join(format!("{name}.key")),
        user.home.path().join(format!("{name}.pub")),
    )
}

pub fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

mod flows;
