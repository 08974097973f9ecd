//! The launcher and packed plugins built for another platform, run here as
//! that platform's users run them: Windows builds under Wine, aarch64 Linux
//! builds under qemu-user. `scripts/cross-test TARGET` builds them and runs
//! these tests (ignored by a plain `cargo test`: they need the cross build
//! and its runner), with:
//! - `LINGXI_WASM_CROSS_TARGET`: the target triple;
//! - `LINGXI_WASM_CROSS_BIN`: the folder holding its `lingxi-wasm-run` and
//!   `lingxi-wasm-rt` (`.exe` on Windows);
//! - `LINGXI_WASM_CROSS_RUNNER`: the command that runs its programs
//!   (`wine64`, `qemu-aarch64 -L /usr/aarch64-linux-gnu`);
//! - `LINGXI_WASM_CROSS_PROFILE` (Windows): the user's profile folder, as a
//!   path of this machine (in the Wine prefix).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::attacks::Tree;
use crate::conformance::{replay_each, replay_judged};
use crate::support::{Session, guest, launcher, spec_snapshot, tool, workspace_root};

/// The cross build under test.
struct Cross {
    target: String,
    bin: PathBuf,
    runner: Vec<String>,
}

fn cross() -> Cross {
    let var = |key: &str| {
        std::env::var(key).unwrap_or_else(|_| {
            panic!("{key} is not set: run the cross tests with scripts/cross-test TARGET")
        })
    };
    Cross {
        target: var("LINGXI_WASM_CROSS_TARGET"),
        bin: PathBuf::from(var("LINGXI_WASM_CROSS_BIN")),
        runner: var("LINGXI_WASM_CROSS_RUNNER")
            .split_whitespace()
            .map(str::to_owned)
            .collect(),
    }
}

impl Cross {
    fn windows(&self) -> bool {
        self.target.contains("-windows")
    }

    /// `name` with the target's executable suffix.
    fn exe_name(&self, name: &str) -> String {
        lingxi_wasm_launcher::identity::exe_name_for(name, &self.target)
    }

    fn exe(&self, name: &str) -> PathBuf {
        self.bin.join(self.exe_name(name))
    }

    /// Runs `program` (a file of the target's) through the runner.
    fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(&self.runner[0]);
        command.args(&self.runner[1..]).arg(program);
        // Linux reads HOME; Windows its profile (in the test Wine prefix).
        command.env("HOME", crate::support::test_home());
        command
    }

    /// The cross launcher with `args`.
    fn launcher(&self, args: &[&str]) -> Command {
        let mut command = self.command(&self.exe("lingxi-wasm-run"));
        command.args(args);
        command
    }

    /// A path of this machine as the target's programs name it (Wine maps
    /// `/` to drive `Z:`).
    fn path(&self, path: &Path) -> String {
        let text = path.to_string_lossy();
        if self.windows() {
            format!("Z:{}", text.replace('/', "\\"))
        } else {
            text.into_owned()
        }
    }

    /// Spawns a packed file as LingXi does: no arguments, its own folder as
    /// working directory, an allow-list environment (plus what the runner
    /// itself needs).
    fn spawn_as_lingxi(&self, packed: &Path) -> Session {
        let mut command = self.command(packed);
        command
            .current_dir(packed.parent().unwrap())
            .env_clear()
            .env("HOME", crate::support::test_home());
        let keep = [
            "PATH",
            "LANG",
            "TMPDIR",
            "WINEPREFIX",
            "WINEDEBUG",
            "WINESERVER",
            "USER",
        ];
        for key in keep {
            if let Ok(value) = std::env::var(key) {
                command.env(key, value);
            }
        }
        Session::spawn(command)
    }

    /// Whether Wine, not the program, ended a process. wineserver kills a
    /// process whose Unix side is still there about 0.48 s after its last
    /// Windows thread ended (Wine 8's `process_sigkill`, server/process.c:
    /// it checks after 1/64 s, doubling, and sends SIGKILL at 1/2 s), which
    /// the teardown of a process on a loaded machine can exceed; a Windows
    /// program cannot send a Unix signal. By then the program has ended and
    /// written all it wrote: only its exit code is lost, and the caller's
    /// checks of its output decide.
    fn ended_by_wine(&self, status: ExitStatus) -> bool {
        use std::os::unix::process::ExitStatusExt;
        self.windows() && status.signal() == Some(9)
    }

    /// Whether `what` ended well: exit code 0, or ended by Wine (above,
    /// said on stderr) with its output left to the caller's checks.
    fn ended_well(&self, status: ExitStatus, what: &str) -> bool {
        let by_wine = self.ended_by_wine(status);
        if by_wine {
            eprintln!(
                "{what}: Wine ended the process by SIGKILL after its Windows side ended; its exit code is lost, its output is checked"
            );
        }
        status.success() || by_wine
    }

    /// Replays `transcript` with `start`: every response must match, and
    /// nothing more come after the end of the input; the exit status is
    /// judged by [`Cross::ended_well`].
    fn replay(
        &self,
        transcript: &Path,
        start: impl FnOnce(&str, &[&str]) -> Session,
    ) -> Result<(), String> {
        replay_judged(transcript, start, |status| {
            self.ended_well(status, &transcript.display().to_string())
        })
    }

    /// Replays `transcript` against `packed` spawned as LingXi spawns it.
    fn replay_packed(&self, transcript: &Path, packed: &Path) -> Result<(), String> {
        self.replay(transcript, |_, _| self.spawn_as_lingxi(packed))
    }

    /// Runs the target's `command` to its end; its stdout, or a panic with
    /// its status and output.
    fn run_ok(&self, mut command: Command) -> String {
        let shown = format!("{command:?}");
        let (status, out, err) = run(command.stdin(Stdio::null()));
        assert!(
            self.ended_well(status, &shown),
            "{shown} failed ({status}):\n{out}\n{err}"
        );
        out
    }
}

/// Runs `command` to its end; its status, stdout and stderr. Output goes
/// through files: Wine's service processes inherit pipes and hold them
/// open past the program's exit.
fn run(command: &mut Command) -> (std::process::ExitStatus, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let status = command
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .status()
        .expect("run");
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    (status, read(&out), read(&err))
}

/// Runs this machine's `command` to its end; its stdout, or a panic with
/// its status and output.
fn run_ok(mut command: Command) -> String {
    let shown = format!("{command:?}");
    let (status, out, err) = run(command.stdin(Stdio::null()));
    assert!(status.success(), "{shown} failed ({status}):\n{out}\n{err}");
    out
}

fn core_transcript() -> PathBuf {
    workspace_root().join("tests/conformance/spec7-core-dialect.jsonl")
}

fn doc_transcript() -> PathBuf {
    workspace_root().join("tests/conformance/spec7-doc-dialect.jsonl")
}

#[test]
#[ignore = "cross build: scripts/cross-test"]
fn cross_conformance_transcripts_both_dialects() {
    let cross = cross();
    replay_each(|transcript| {
        cross.replay(transcript, |plugin, args| {
            let mut command = cross.launcher(args);
            command.arg(guest(plugin));
            Session::spawn(command)
        })
    });
}

/// Lines end in `\n` only (the reader above would hide a `\r`).
#[test]
#[ignore = "cross build: scripts/cross-test"]
fn cross_stdout_lines_end_in_newline_only() {
    let cross = cross();
    let text = std::fs::read_to_string(core_transcript()).unwrap();
    let sends: Vec<String> = text
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|s| s["send"].as_str().map(str::to_owned))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::write(&input, sends.join("\n") + "\n").unwrap();
    let mut command = cross.launcher(&[]);
    command.arg(guest("probe"));
    // stdin is a file: its end ends the session.
    let (status, stdout, stderr) = run(command.stdin(std::fs::File::open(&input).unwrap()));
    assert!(cross.ended_well(status, "probe"), "{status}: {stderr}");
    assert!(
        !stdout.contains('\r'),
        "a carriage return on stdout: {stdout:?}"
    );
    assert_eq!(stdout.matches('\n').count(), 11, "{stdout}");
}

/// A plugin packed here, by the Linux launcher, for the target, on the
/// target's runtime-only base, spawned as LingXi spawns it: both dialects.
#[test]
#[ignore = "cross build: scripts/cross-test"]
fn cross_packed_here_for_the_target_runs_there() {
    let cross = cross();
    let dir = tempfile::tempdir().unwrap();
    let packed = dir.path().join(cross.exe_name("probe"));
    let base = cross.exe("lingxi-wasm-rt");
    let mut pack = launcher();
    pack.arg("pack").arg(guest("probe")).arg("-o").arg(&packed);
    pack.args(["--target", &cross.target, "--base"]).arg(&base);
    run_ok(pack);
    for transcript in [core_transcript(), doc_transcript()] {
        cross
            .replay_packed(&transcript, &packed)
            .unwrap_or_else(|e| panic!("{}: {e}", transcript.display()));
    }
}

/// The target's own launcher packs on its sibling runtime-only base (and
/// starts the file once to check it, there).
#[test]
#[ignore = "cross build: scripts/cross-test"]
fn cross_launcher_packs_on_its_own_platform() {
    let cross = cross();
    let dir = tempfile::tempdir().unwrap();
    let packed = dir.path().join(cross.exe_name("probe"));
    let mut pack = cross.launcher(&["pack"]);
    pack.arg(guest("probe")).arg("-o").arg(cross.path(&packed));
    cross.run_ok(pack);
    cross.replay_packed(&core_transcript(), &packed).unwrap();
}

/// `install` puts `<id>.exe` in the profile's `.lingxiagent\plugins`, where
/// LingXi finds it; it answers there; `list` shows it; `uninstall` removes it.
#[test]
#[ignore = "cross build: scripts/cross-test"]
fn cross_install_list_uninstall_in_the_users_home() {
    let cross = cross();
    if !cross.windows() {
        return; // the Linux code is the same as this machine's
    }
    let profile = PathBuf::from(std::env::var("LINGXI_WASM_CROSS_PROFILE").unwrap());
    let installed = profile.join(".lingxiagent/plugins/com.lingxi.test-probe.exe");
    let _ = std::fs::remove_file(&installed);
    let mut install = cross.launcher(&["install"]);
    install.arg(guest("probe"));
    let said = cross.run_ok(install);
    assert!(said.contains("installed com.lingxi.test-probe"), "{said}");
    assert!(
        installed.is_file(),
        "not at {}:\n{said}",
        installed.display()
    );
    cross.replay_packed(&core_transcript(), &installed).unwrap();
    let listed = cross.run_ok(cross.launcher(&["list"]));
    assert!(
        listed.contains("com.lingxi.test-probe 0.1.0 (global)"),
        "{listed}"
    );
    assert!(listed.contains("com.lingxi.test-probe.exe"), "{listed}");
    let removed = cross.run_ok(cross.launcher(&["uninstall", "com.lingxi.test-probe"]));
    assert!(removed.contains("removed"), "{removed}");
    assert!(!installed.exists());
}

/// Starts the cross launcher on the testbed with `args`, workspace `tree.ws`.
fn testbed(cross: &Cross, tree: &Tree, args: &[&str]) -> Session {
    let mut command = cross.launcher(args);
    command.arg(guest("testbed"));
    let mut s = Session::spawn(command);
    let r = s.call(
        "snap",
        "host.snapshot",
        spec_snapshot(&cross.path(&tree.ws)),
    );
    assert_eq!(r["error"], Value::Null, "{r}");
    s
}

#[test]
#[ignore = "cross build: scripts/cross-test"]
fn cross_a_file_outside_the_grants_is_refused() {
    let cross = cross();
    let tree = Tree::new();
    let mut s = testbed(&cross, &tree, &[]);
    // The workspace is mounted at the path the target names it by; a
    // plugin joins names to it with `/` (as Rust's `Path::join` does there).
    let ws = cross.path(&tree.ws);
    let inside = s.call(
        "in",
        "tool.execute",
        tool("read-file", &format!("{ws}/notes.txt")),
    );
    assert_eq!(inside["result"], "inside", "{inside}");
    let outside = cross.path(&tree.top.join("secret.txt"));
    let up = format!("{ws}/../secret.txt");
    // The tree's symbolic links only where the target sees them: Wine
    // resolves Unix links itself, so a Windows program cannot see them as
    // links (README, Platforms).
    let mut refused = vec![outside.as_str(), &up, "C:\\windows\\win.ini"];
    let (link, through) = (format!("{ws}/link"), format!("{ws}/up/secret.txt"));
    if !cross.windows() {
        refused.extend([link.as_str(), through.as_str()]);
    }
    for path in refused {
        let r = s.call("out", "tool.execute", tool("read-file", path));
        assert!(r["error"].is_string(), "{path}: {r}");
        assert!(!r.to_string().contains("secret\""), "{path}: {r}");
    }
}

#[test]
#[ignore = "cross build: scripts/cross-test"]
fn cross_a_sleeping_guest_is_stopped_at_its_deadline() {
    let cross = cross();
    let tree = Tree::new();
    let mut s = testbed(&cross, &tree, &["--timeout", "1"]);
    let started = Instant::now();
    let r = s.call("sleep", "tool.execute", tool("sleep", "3600"));
    let took = started.elapsed();
    assert!(
        r["error"].as_str().is_some_and(|e| e.contains("--timeout")),
        "{r}"
    );
    assert!(took < Duration::from_secs(10), "answered after {took:?}");
    let next = s.call("next", "tool.execute", tool("ok", "alive"));
    assert_eq!(next["result"], "ok:alive", "{next}");
}

/// A compile cache others may write is not used (it would run their code);
/// a private one is. Windows judges the folder's ACL (Wine derives it from
/// the mode bits).
#[test]
#[ignore = "cross build: scripts/cross-test"]
fn cross_a_cache_folder_others_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let cross = cross();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let run = |cache: &Path| {
        let mut command = cross.launcher(&["inspect", "--cache-dir", &cross.path(cache)]);
        command.arg(guest("probe"));
        let (status, stdout, stderr) = run(command.stdin(Stdio::null()));
        assert!(cross.ended_well(status, "inspect"), "{status}: {stderr}");
        assert!(
            stdout.contains("com.lingxi.test-probe"),
            "{stdout}\n{stderr}"
        );
        stderr
    };
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let stderr = run(&cache);
    assert!(stderr.contains("not using the compile cache"), "{stderr}");
    assert!(stderr.contains("others may write to it"), "{stderr}");
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 0);
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o700)).unwrap();
    let stderr = run(&cache);
    assert!(!stderr.contains("not using the compile cache"), "{stderr}");
    // The compiled component, and the folder of its compiled functions.
    let mut kept: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    assert_eq!(kept.len(), 2, "{kept:?} {stderr}");
    assert!(
        kept[0].ends_with(".cwasm") && kept[1] == "functions",
        "{kept:?}"
    );
}

/// The compile cache's other rules on Windows: a compiled function's entry
/// others may write is never used (here in the valid format, with another
/// function's code; Wine derives the file's ACL from its mode bits), and a
/// compile into a full cache removes what was used least recently.
#[test]
#[ignore = "cross build: scripts/cross-test"]
fn cross_a_function_entry_others_can_write_is_refused_and_the_cache_bounded() {
    use std::os::unix::fs::PermissionsExt;
    let cross = cross();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o700)).unwrap();
    let inspect = || {
        let mut command = cross.launcher(&["inspect", "--cache-dir", &cross.path(&cache)]);
        command.arg(guest("probe")).env("LINGXI_WASM_LOG", "debug");
        let (status, stdout, stderr) = run(command.stdin(Stdio::null()));
        assert!(cross.ended_well(status, "inspect"), "{status}: {stderr}");
        (stdout, stderr)
    };
    // The Windows launcher's own entries, then only its functions kept.
    let (first, stderr) = inspect();
    assert!(first.contains("com.lingxi.test-probe"), "{first}\n{stderr}");
    for entry in std::fs::read_dir(&cache).unwrap().flatten() {
        if entry.path().extension().is_some_and(|x| x == "cwasm") {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
    let functions = cache.join("functions");
    crate::function_cache::swap_code(&functions);
    for (path, _, _) in crate::function_cache::entries(&functions) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666)).unwrap();
    }
    // And the cache over its bound: an old component of 1 100 MiB (sparse).
    let oldest = cache.join(format!("{}-{}.cwasm", "0".repeat(64), "0".repeat(16)));
    let file = std::fs::File::create(&oldest).unwrap();
    file.set_len(1100 << 20).unwrap();
    file.set_modified(std::time::SystemTime::now() - Duration::from_secs(86_400))
        .unwrap();
    drop(file);

    let (stdout, stderr) = inspect();
    assert!(
        stdout.contains("com.lingxi.test-probe"),
        "planted code ran:\n{stdout}\n{stderr}"
    );
    assert!(stderr.contains("others may write it"), "{stderr}");
    assert!(stderr.contains("over its bound of 1024 MiB"), "{stderr}");
    assert!(!oldest.exists());
}

#[path = "../support/macho_verify.rs"]
mod macho_verify;

/// A plugin packed here for macOS (which cannot run here) carries an ad
/// hoc signature whose page hashes cover every byte before it, the
/// payload included: what an arm64 Mac checks before it runs a page.
#[test]
#[ignore = "cross build: scripts/cross-test"]
fn macos_a_packed_file_is_signed_over_every_byte() {
    let cross = cross();
    let dir = tempfile::tempdir().unwrap();
    let packed = dir.path().join("probe");
    let mut pack = launcher();
    pack.arg("pack").arg(guest("probe")).arg("-o").arg(&packed);
    pack.args(["--target", &cross.target, "--base"])
        .arg(cross.exe("lingxi-wasm-rt"));
    run_ok(pack);
    let bytes = std::fs::read(&packed).unwrap();
    let report = macho_verify::verify(&bytes).unwrap_or_else(|e| panic!("{e}"));
    // The trailer, the end of the payload, lies under the code limit.
    let limit = report.code_limit as usize;
    assert_eq!(
        &bytes[limit - 56..limit - 40],
        b"LINGXI-WASM-PK01",
        "{report}"
    );
    assert_eq!(report.identifier, "com.lingxi.test-probe");
    // One byte of the payload changed: a page no longer matches.
    let mut changed = bytes.clone();
    changed[limit - 100] ^= 1;
    assert!(macho_verify::verify(&changed).is_err());
    // The file reads back as the packed plugin it is.
    let mut inspect = launcher();
    inspect.arg("inspect").arg(&packed);
    let said = run_ok(inspect);
    assert!(said.contains("com.lingxi.test-probe"), "{said}");
}

/// A path parameter reaches the plugin as its sandbox names it (the mount's
/// own path, then names joined with `/`), and the plugin can open it; a
/// path out of the workspace, or on another drive, is refused.
#[test]
#[ignore = "cross build: scripts/cross-test"]
fn cross_a_path_parameter_is_resolved_as_the_sandbox_names_it() {
    let cross = cross();
    let tree = Tree::new();
    std::fs::create_dir_all(tree.ws.join("src")).unwrap();
    std::fs::write(tree.ws.join("src/a.txt"), "a").unwrap();
    let mut s = testbed(&cross, &tree, &["--grant", "projectRead"]);
    let ws = cross.path(&tree.ws);
    let r = s.call(
        "p",
        "tool.execute",
        tool("contract.read", r#"{"path": "src/a.txt"}"#),
    );
    let got: Value = serde_json::from_str(r["result"].as_str().unwrap_or("null")).unwrap();
    let path = got["path"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert_eq!(path, format!("{ws}/src/a.txt"));
    let read = s.call("r", "tool.execute", tool("read-file", path));
    assert_eq!(read["result"], "a", "{read}");
    for (given, why) in [
        ("../secret.txt", "leads outside"),
        ("C:\\windows\\win.ini", "outside the granted"),
    ] {
        let args = serde_json::json!({ "path": given }).to_string();
        let out = s.call("o", "tool.execute", tool("contract.read", &args));
        let error = out["error"].as_str().unwrap_or_default();
        if cross.windows() || !given.starts_with("C:") {
            assert!(error.contains(why), "{given}: {out}");
        }
    }
}

/// A recordings folder others may write is refused (they could delete or
/// replace recordings); a private one is taken. Windows judges it and every
/// folder above it by their ACLs. In the Wine prefix, so that the folders
/// above are the user's.
#[test]
#[ignore = "cross build: scripts/cross-test"]
fn cross_a_record_folder_others_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let cross = cross();
    if !cross.windows() {
        return; // the Linux code is the same as this machine's
    }
    let profile = PathBuf::from(std::env::var("LINGXI_WASM_CROSS_PROFILE").unwrap());
    let top = tempfile::tempdir_in(&profile).unwrap();
    let (project, records) = (top.path().join("project"), top.path().join("records"));
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&records).unwrap();
    let windows_path = |p: &Path| {
        let rest = p
            .strip_prefix(&profile)
            .unwrap()
            .to_string_lossy()
            .replace('/', "\\");
        format!(
            "C:\\users\\{}\\{rest}",
            profile.file_name().unwrap().to_string_lossy()
        )
    };
    let install = || {
        let mut command = cross.launcher(&["install", "--force", "--project"]);
        command
            .arg(windows_path(&project))
            .arg("--record")
            .arg(windows_path(&records));
        command.arg(guest("probe"));
        run(command.stdin(Stdio::null()))
    };
    std::fs::set_permissions(&records, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (status, _, stderr) = install();
    assert!(
        !status.success(),
        "installed with an open record folder ({status})"
    );
    assert!(stderr.contains("can be written by others"), "{stderr}");
    std::fs::set_permissions(&records, std::fs::Permissions::from_mode(0o700)).unwrap();
    let (status, out, stderr) = install();
    assert!(
        cross.ended_well(status, "install"),
        "{status}: {out}\n{stderr}"
    );
    assert!(
        out.contains("installed com.lingxi.test-probe"),
        "{out}\n{stderr}"
    );
}

/// A secret kept with `secret set` goes into the Windows Credential
/// Manager (Wine's), `secret list` names it, and the launcher reads it
/// back for a plugin granted it, which sees only `[secret NAME]` of its
/// value in its own output. Windows only: the Linux builds' Secret Service
/// is tested natively (tests/e2e/secrets/).
#[test]
#[ignore = "cross build: scripts/cross-test"]
fn cross_a_secret_is_kept_in_the_credential_manager_and_read_back() {
    let cross = cross();
    if !cross.windows() {
        eprintln!(
            "the Credential Manager is Windows': nothing to test on {}",
            cross.target
        );
        return;
    }
    let value = "w1ndows-secret-value-42";
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("value");
    std::fs::write(&input, format!("{value}\r\n")).unwrap();
    let mut set = cross.launcher(&["secret", "set", "com.lingxi.testbed", "API_TOKEN"]);
    set.stdin(std::fs::File::open(&input).unwrap());
    let (status, out, err) = run(&mut set);
    assert!(
        cross.ended_well(status, "secret set"),
        "{status}: {out}\n{err}"
    );
    assert!(err.contains("kept in the keyring"), "{err}");
    let listed = cross.run_ok(cross.launcher(&["secret", "list", "com.lingxi.testbed"]));
    assert_eq!(listed.trim(), "com.lingxi.testbed\tAPI_TOKEN\tkeyring");
    let testbed = cross.path(&guest("testbed"));
    let call = |tool: &str| {
        let args = [
            "call",
            testbed.as_str(),
            tool,
            r#"{"name":"API_TOKEN"}"#,
            "--secret",
            "API_TOKEN",
        ];
        cross.run_ok(cross.launcher(&args))
    };
    assert_eq!(
        call("secret-length").trim(),
        format!("length {}", value.len())
    );
    let returned = call("secret-return");
    assert_eq!(returned.trim(), "the value is [secret API_TOKEN]");
    cross.run_ok(cross.launcher(&["secret", "rm", "com.lingxi.testbed", "API_TOKEN"]));
    let gone = cross.run_ok(cross.launcher(&["secret", "list"]));
    assert!(!gone.contains("API_TOKEN"), "{gone}");
}
