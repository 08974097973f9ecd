//! Test support: builds the guest components from source (once per test
//! binary) and drives the real `lingxi-wasm-run` binary over pipes, as a
//! LingXi host would.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

/// How long a test waits for one response before it fails (not a speed goal:
/// only a guard so that a broken host fails the test instead of hanging it).
pub const RESPONSE_GUARD: Duration = Duration::from_secs(60);

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ has a parent")
        .to_path_buf()
}

/// Runs `cargo build <args>` in the workspace with its own target directory
/// `target/<dir>` (so the nested cargo never waits for the lock of the outer
/// `cargo test`) and returns that directory.
fn cargo_build(dir: &str, args: &[&str], hint: &str) -> PathBuf {
    cargo_build_with(dir, args, &[], hint)
}

fn cargo_build_with(dir: &str, args: &[&str], envs: &[(&str, &str)], hint: &str) -> PathBuf {
    try_cargo_build(dir, args, envs)
        .unwrap_or_else(|e| panic!("cargo build {args:?} failed; {hint}\n{e}"))
}

/// [`cargo_build`] with `envs` set; the error is cargo's output.
pub fn try_cargo_build(dir: &str, args: &[&str], envs: &[(&str, &str)]) -> Result<PathBuf, String> {
    let root = workspace_root();
    let target = root.join("target").join(dir);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(&root)
        .envs(envs.iter().copied())
        .arg("build")
        .args(args)
        .arg("--target-dir")
        .arg(&target)
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    Ok(target)
}

/// The cargo arguments of a guest build: a component for wasm32-wasip2,
/// with the `guest` profile.
pub const GUEST_BUILD: [&str; 4] = ["--target", "wasm32-wasip2", "--profile", "guest"];

/// The built component of guest crate `name` (`probe`, `quickstart`,
/// `testbed`, `workspace-stats`, `indexer`), all built once per test binary with the
/// `guest` profile into `target/guests`.
pub fn guest(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        let crates = [
            "-p",
            "probe",
            "-p",
            "quickstart",
            "-p",
            "testbed",
            "-p",
            "workspace-stats",
            "-p",
            "impostor",
            "-p",
            "indexer",
        ];
        let args = [&GUEST_BUILD[..], &crates].concat();
        cargo_build(
            "guests",
            &args,
            "is the target installed? (rustup target add wasm32-wasip2)",
        )
        .join("wasm32-wasip2")
        .join("guest")
    });
    let path = dir.join(format!("{}.wasm", name.replace('-', "_")));
    assert!(path.exists(), "no component at {}", path.display());
    path
}

/// A language other than Rust that plugins are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    Python,
    JavaScript,
}

impl Lang {
    /// The name `scripts/componentize` and the folder suffixes use.
    pub fn code(self) -> &'static str {
        match self {
            Lang::Python => "py",
            Lang::JavaScript => "js",
        }
    }
}

/// The pinned toolchain of `lang`, installed by `scripts/toolchains` if it
/// is not yet (`target/toolchains/<code>`).
pub fn toolchain(lang: Lang) -> PathBuf {
    let root = workspace_root();
    let status = Command::new(root.join("scripts").join("toolchains"))
        .arg(lang.code())
        .status()
        .expect("cannot run scripts/toolchains");
    assert!(
        status.success(),
        "scripts/toolchains {} failed (are python3 and npm installed, and the package registries reachable?)",
        lang.code()
    );
    root.join("target").join("toolchains").join(lang.code())
}

/// The component of plugin `name` written in `lang`: `examples/<name>-<code>`
/// or else `tests/guests/<name>-<code>`, built by `scripts/componentize`
/// (which installs the pinned toolchain on first use) once per test binary
/// into `target/polyglot/`, and compiled once into the tests' compile cache
/// (an 18 MB component takes seconds to compile in a debug host: tests
/// that start it at the same time would each compile it).
pub fn polyglot(lang: Lang, name: &str) -> PathBuf {
    static BUILT: Mutex<Vec<((Lang, String), PathBuf)>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    let key = (lang, name.to_owned());
    if let Some((_, path)) = built.iter().find(|(k, _)| *k == key) {
        return path.clone();
    }
    let root = workspace_root();
    let folder = format!("{name}-{}", lang.code());
    let source = [root.join("examples"), root.join("tests").join("guests")]
        .into_iter()
        .map(|dir| dir.join(&folder))
        .find(|dir| dir.is_dir())
        .unwrap_or_else(|| panic!("no plugin folder {folder} in examples/ or tests/guests/"));
    let out = root
        .join("target")
        .join("polyglot")
        .join(format!("{folder}.wasm"));
    let status = Command::new(root.join("scripts").join("componentize"))
        .arg(lang.code())
        .arg(&source)
        .arg(&out)
        .status()
        .expect("cannot run scripts/componentize");
    assert!(
        status.success(),
        "scripts/componentize {} {} failed (are python3 and npm installed, and the package registries reachable?)",
        lang.code(),
        source.display()
    );
    let warmed = launcher()
        .arg("inspect")
        .arg(&out)
        .stdout(Stdio::null())
        .status()
        .expect("cannot run lingxi-wasm-run inspect");
    assert!(warmed.success(), "{} does not load", out.display());
    built.push((key, out.clone()));
    out
}

/// The `misfit` test guest built to break `rule` (see its src/lib.rs;
/// `""` breaks none) with cargo `features`, or its `misfit-command` when
/// `rule` is `"command"`: a copy of its own, as builds of other rules
/// overwrite the build output. Builds run one at a time.
pub fn misfit(rule: &str, features: &[&str]) -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let _one_at_a_time = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let features = features.join(",");
    let mut args = vec![
        "--target",
        "wasm32-wasip2",
        "--profile",
        "guest",
        "-p",
        "misfit",
    ];
    if !features.is_empty() {
        args.extend(["--features", &features]);
    }
    let env = [("MISFIT_RULE", rule)];
    let dir = cargo_build_with("guests", &args, &env, "the misfit guest does not build");
    let built = dir.join("wasm32-wasip2").join("guest");
    let built = match rule {
        "command" => built.join("misfit-command.wasm"),
        _ => built.join("misfit.wasm"),
    };
    let copies = workspace_root().join("target").join("misfits");
    std::fs::create_dir_all(&copies).expect("cannot create target/misfits");
    let copy = copies.join(format!("{rule}{features}.wasm"));
    std::fs::copy(&built, &copy).expect("cannot copy the misfit guest");
    copy
}

/// The native build (SDK feature `native`) of guest crate `name` (`probe`,
/// `testbed`): the same plugin as a native JSONL executable, the baseline.
pub fn native(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        let args = [
            "-p",
            "probe",
            "-p",
            "testbed",
            "--features",
            "native",
            "--bins",
        ];
        cargo_build("native", &args, "the native plugins do not build").join("debug")
    });
    dir.join(format!("{name}-native"))
}

/// The runtime-only base of packed plugins (`lingxi-wasm-rt`, no
/// compiler), built on its own into `target/rt` so that no other package's
/// features are unified in (and so that `pack` never finds it beside the
/// launcher under test: tests that want it say `--base`).
pub fn runtime_base() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let args = ["-p", "lingxi-wasm-rt"];
            cargo_build("rt", &args, "the runtime-only base does not build").join("debug")
        })
        .join("lingxi-wasm-rt")
}

/// The HOME every process a test starts gets (it decides the default data
/// root and plugin folders): never the user's, and outside this checkout,
/// which tests use as a workspace (a folder that holds the home folder is
/// a shared place, never mounted as a workspace). One per checkout, made
/// before any launcher starts, so what a test sees never depends on
/// which test made it first.
pub fn test_home() -> PathBuf {
    use std::hash::{Hash, Hasher};
    static HOME: OnceLock<PathBuf> = OnceLock::new();
    HOME.get_or_init(|| {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        workspace_root().hash(&mut hasher);
        let home =
            std::env::temp_dir().join(format!("lingxi-wasm-e2e-home-{:016x}", hasher.finish()));
        std::fs::create_dir_all(&home).expect("the tests' HOME folder can be made");
        home
    })
    .clone()
}

/// `lingxi-wasm-run` with HOME and the compile cache set to folders of the
/// test run. Every test that starts the launcher starts it from here (or
/// sets both itself), so `cargo test` never writes into the user's home.
pub fn launcher() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lingxi-wasm-run"));
    command.env("HOME", test_home()).env(
        "LINGXI_WASM_CACHE",
        workspace_root().join("target").join("e2e-cache"),
    );
    command
}

/// A running `lingxi-wasm-run` with pipes on all three streams.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl Session {
    /// Starts `lingxi-wasm-run <args…> <component>`.
    pub fn start(component: &Path, args: &[&str]) -> Session {
        Session::start_with_log(component, args, "info")
    }

    /// The same with `LINGXI_WASM_LOG` set to `log`. The compile cache is a
    /// folder of the test run (target/e2e-cache), never the user's.
    pub fn start_with_log(component: &Path, args: &[&str], log: &str) -> Session {
        Session::spawn(Session::command(component, args, log))
    }

    /// The command [`Session::start_with_log`] spawns, to add to it.
    pub fn command(component: &Path, args: &[&str], log: &str) -> Command {
        let mut command = launcher();
        command
            .args(args)
            .arg(component)
            .env("LINGXI_WASM_LOG", log);
        command
    }

    /// Spawns a prepared command with all three streams piped.
    pub fn spawn(mut command: Command) -> Session {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot spawn the plugin process");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");
        let (tx, lines) = channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stderr_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let stdin = child.stdin.take();
        Session {
            child,
            stdin,
            lines,
            stderr,
        }
    }

    /// Sends one raw line.
    pub fn send_raw(&mut self, line: &str) {
        self.send_bytes(line.as_bytes());
    }

    /// Sends one line of raw bytes (a newline is appended).
    pub fn send_bytes(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Closes stdin (EOF) without waiting.
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// Reads the next response line as JSON.
    pub fn recv(&mut self) -> Value {
        let line = self.recv_line(RESPONSE_GUARD).unwrap_or_else(|| {
            panic!(
                "no response within {RESPONSE_GUARD:?}; stderr:\n{}",
                self.stderr()
            )
        });
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("response is not JSON ({e}): {line}"))
    }

    /// Reads the next raw line, or `None` after `wait` or at EOF.
    pub fn recv_line(&mut self, wait: Duration) -> Option<String> {
        self.lines.recv_timeout(wait).ok()
    }

    /// Sends a doc-dialect request (nested params) and returns the response.
    pub fn call(&mut self, id: &str, method: &str, params: Value) -> Value {
        let line = serde_json::json!({"id": id, "method": method, "params": params});
        self.send_raw(&line.to_string());
        self.recv()
    }

    /// Sends a Core-dialect request (base64 params) and returns the response
    /// with its `result` decoded.
    pub fn call_core(&mut self, id: &str, method: &str, params: Value) -> Value {
        self.send_raw(&core_line(id, method, &params));
        decode_core(self.recv())
    }

    /// Closes stdin (EOF) and waits for the process to exit.
    pub fn finish(mut self) -> (ExitStatus, String) {
        drop(self.stdin.take());
        let deadline = Instant::now() + RESPONSE_GUARD;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "lingxi-wasm-run did not exit after EOF; stderr:\n{}",
                    self.stderr()
                );
            }
            thread::sleep(Duration::from_millis(10));
        };
        // Let the stderr reader drain.
        thread::sleep(Duration::from_millis(50));
        (status, self.stderr())
    }

    /// Everything written to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Core-dialect request line.
pub fn core_line(id: &str, method: &str, params: &Value) -> String {
    serde_json::json!({"id": id, "method": method, "params": STANDARD.encode(params.to_string())})
        .to_string()
}

/// Replaces a base64 `result` by the JSON it encodes (`""` becomes `null`).
pub fn decode_core(mut response: Value) -> Value {
    if let Some(Value::String(encoded)) = response.get("result") {
        let decoded = if encoded.is_empty() {
            Value::Null
        } else {
            let bytes = STANDARD.decode(encoded).expect("result is base64");
            serde_json::from_slice(&bytes).expect("result is base64 of JSON")
        };
        response["result"] = decoded;
    }
    response
}

/// The spec §7 snapshot: `/repo`, branch `main`, Unix 1 800 000 000.
pub fn spec_snapshot(root: &str) -> Value {
    serde_json::json!({
        "observedAt": 821692800,
        "ipcVersion": 1,
        "workspace": {"rootPath": root, "isGitRepository": true, "currentGitBranch": "main",
                      "dirtyFileCount": 3, "coreVersion": "1.1.0"}
    })
}

/// `tool.execute` params.
pub fn tool(name: &str, arguments: &str) -> Value {
    serde_json::json!({"toolName": name, "arguments": arguments, "sessionID": "s-1", "toolCallID": "c-1"})
}

/// A runtime like an agent host's, for the library tests: tokio's worker
/// threads (two), time and I/O.
pub fn tokio() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// A server on loopback that answers each connection's first line with
/// `pong` (for the network tools of the testbed); its port.
pub fn pong_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut line = String::new();
            if BufReader::new(&stream).read_line(&mut line).is_ok() {
                let _ = (&stream).write_all(b"pong\n");
            }
        }
    });
    port
}
