//! Which executable a packed plugin is built on: the runtime-only
//! `lingxi-wasm-rt` when it is installed beside this launcher (or given
//! with `--base`), else this launcher itself. The runtime-only base has no
//! compiler: it is smaller and starts faster, and it can only run the
//! precompiled code it carries, so a file packed on it is started once
//! before it is used.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// The runtime-only base's file name.
pub const RUNTIME: &str = "lingxi-wasm-rt";

/// A base to pack on.
pub struct Base {
    /// Its file.
    pub path: PathBuf,
    /// What it says of itself (`lingxi-wasm-rt 0.1.0 (runtime-only)`).
    pub version: String,
    /// Whether the user named it (a failed check is then an error, not a
    /// quiet fall-back to this launcher).
    pub explicit: bool,
}

impl Base {
    /// Whether it is the running launcher itself (nothing to check).
    pub fn is_this_launcher(&self) -> bool {
        let me = std::env::current_exe().and_then(std::fs::canonicalize).ok();
        me.is_some() && std::fs::canonicalize(&self.path).ok() == me
    }
}

/// `--base FILE`, else `lingxi-wasm-rt` beside this launcher when it is of
/// this version, else this launcher.
pub fn choose(explicit: Option<&Path>) -> Result<Base> {
    let me = std::env::current_exe().context("cannot locate the running executable")?;
    let this = this_launcher;
    if let Some(path) = explicit {
        let version = version_of(path).with_context(|| {
            format!(
                "--base {}: not a {RUNTIME} or lingxi-wasm-run of version {}",
                path.display(),
                env!("CARGO_PKG_VERSION")
            )
        })?;
        return Ok(Base {
            path: path.to_owned(),
            version,
            explicit: true,
        });
    }
    let sibling = me.with_file_name(format!("{RUNTIME}{}", std::env::consts::EXE_SUFFIX));
    if !sibling.is_file() {
        return this();
    }
    match version_of(&sibling) {
        Ok(version) => Ok(Base {
            path: sibling,
            version,
            explicit: false,
        }),
        Err(e) => {
            eprintln!(
                "note: not packing on {} ({e:#}); packing on this launcher instead",
                sibling.display()
            );
            this()
        }
    }
}

/// This launcher, as a base.
pub fn this_launcher() -> Result<Base> {
    Ok(Base {
        path: std::env::current_exe().context("cannot locate the running executable")?,
        version: format!("lingxi-wasm-run {}", env!("CARGO_PKG_VERSION")),
        explicit: false,
    })
}

/// What `path --version` says, if it is a native executable that is a
/// base of this version (a script printing the words is not: its file,
/// followed by a payload, would be run by a shell).
fn version_of(path: &Path) -> Result<String> {
    if !is_native_executable(path) {
        bail!("it is not a native executable");
    }
    let out = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", path.display()))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let ours = [
        format!("{RUNTIME} {} (runtime-only)", env!("CARGO_PKG_VERSION")),
        format!("lingxi-wasm-run {}", env!("CARGO_PKG_VERSION")),
    ];
    if !out.status.success() || !ours.contains(&text) {
        bail!("it says {text:?}, not {:?}", ours[0]);
    }
    Ok(text)
}

/// Whether `path` starts as this platform's executables do.
fn is_native_executable(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic));
    if read.is_err() {
        return false;
    }
    if cfg!(target_os = "linux") {
        magic == *b"\x7fELF"
    } else if cfg!(target_os = "macos") {
        matches!(magic, [0xcf, 0xfa, 0xed, 0xfe] | [0xca, 0xfe, 0xba, 0xbe])
    } else if cfg!(windows) {
        magic[..2] == *b"MZ"
    } else {
        // No rule for this platform's executables: no base passes.
        false
    }
}

/// The request a trial start is asked: one the serving loop answers itself,
/// so the plugin's own code does not run at pack time.
const TRIAL: &str = "lingxi-wasm.trial";
/// How long a trial start may take: a base of ours answers in milliseconds.
const TRIAL_TIME: Duration = Duration::from_secs(10);
/// Most output a trial start may write (its answer is one short line).
const TRIAL_OUTPUT: u64 = 64 * 1024;

/// Starts the packed file `bytes` once, as LingXi would, and asks it one
/// request: it must load its precompiled code, answer as our serving loop
/// answers, and exit cleanly at EOF. Says why not.
pub fn smoke_start(bytes: &[u8]) -> Result<()> {
    let dir = tempfile::tempdir().context("cannot make a temporary folder")?;
    let exe = dir
        .path()
        .join(format!("packed{}", std::env::consts::EXE_SUFFIX));
    crate::executable::write_executable(&exe, bytes)?;
    let log = dir.path().join("stderr");
    let (input, output) = (dir.path().join("in"), dir.path().join("out"));
    std::fs::write(
        &input,
        format!("{{\"id\":\"trial\",\"method\":\"{TRIAL}\"}}\n"),
    )?;
    let mut child = Command::new(&exe)
        .current_dir(dir.path())
        .stdin(std::fs::File::open(&input)?)
        .stdout(std::fs::File::create(&output)?)
        .stderr(std::fs::File::create(&log)?)
        .spawn()
        .context("cannot start the packed file")?;
    let deadline = Instant::now() + TRIAL_TIME;
    let written = |path: &Path| std::fs::metadata(path).map_or(0, |m| m.len());
    loop {
        if let Some(status) = child.try_wait()? {
            let answer = read_start(&output);
            let expected = format!("Unknown IPC method: {TRIAL}");
            let answered = serde_json::from_slice::<serde_json::Value>(
                answer.split(|b| *b == b'\n').next().unwrap_or_default(),
            )
            .is_ok_and(|v| v["id"] == "trial" && v["error"] == expected.as_str());
            if status.success() && answered {
                return Ok(());
            }
            if status.success() {
                bail!("it started but did not answer as lingxi-wasm does");
            }
            let stderr = read_start(&log);
            let stderr = String::from_utf8_lossy(&stderr);
            bail!("it did not start ({status}): {}", stderr.trim());
        }
        if written(&output) + written(&log) > TRIAL_OUTPUT {
            let _ = child.kill();
            let _ = child.wait();
            bail!("it wrote more than {TRIAL_OUTPUT} bytes instead of one answer");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!("it did not start within {} s", TRIAL_TIME.as_secs());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The first 4 KiB of the file at `path` (empty if it cannot be read).
fn read_start(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut start = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(4096).read_to_end(&mut start);
    }
    start
}
