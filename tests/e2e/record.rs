//! `record` and `replay` on real sessions: the probe as a component, packed,
//! and native; a packed plugin installed with `--record`; the conformance
//! transcripts through `replay`; and what a difference looks like.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::packed::{lingxi_spawn, pack as pack_plugin};
use crate::support::{Session, guest, launcher, native, tool, workspace_root};

/// The spec §7 Core-dialect requests (every `send` of the transcript).
fn spec7_requests() -> String {
    let file = workspace_root().join("tests/conformance/spec7-core-dialect.jsonl");
    let text = std::fs::read_to_string(file).unwrap();
    let sends: Vec<String> = text
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|s| s["send"].as_str().map(str::to_owned))
        .collect();
    sends.join("\n") + "\n"
}

/// Runs `command` with `input` on stdin.
fn run(mut command: Command, input: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // From another thread (stdout is read meanwhile); a plugin that stops
    // reading early closes the pipe, which is not an error here.
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

pub(crate) fn record(out: &Path, plugin: &[&Path], input: &str) -> Output {
    let mut command = launcher();
    command
        .arg("record")
        .arg("--out")
        .arg(out)
        .arg("--")
        .args(plugin);
    run(command, input)
}

fn replay(file: &Path, extra: &[&str], plugin: &[&Path]) -> (i32, String) {
    let out = launcher()
        .arg("replay")
        .arg(file)
        .args(extra)
        .arg("--")
        .args(plugin)
        .stderr(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn events(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn record_is_transparent_and_replays_against_every_build_of_the_probe() {
    let dir = tempfile::tempdir().unwrap();
    let component = guest("probe");
    let packed = pack_plugin(dir.path(), "probe", &[]);
    let native = native("probe");
    let input = spec7_requests();
    // What the probe answers without a proxy in between.
    let mut direct = launcher();
    direct.arg(&component);
    let direct = run(direct, &input);
    assert!(direct.status.success());

    let builds: [(&str, PathBuf); 3] = [
        ("component", component.clone()),
        ("packed", packed.clone()),
        ("native", native.clone()),
    ];
    for (name, plugin) in &builds {
        let file = dir.path().join(format!("{name}.jsonl"));
        let out = record(&file, &[plugin], &input);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            out.stdout, direct.stdout,
            "{name}: record changed the bytes"
        );
        let events = events(&file);
        assert_eq!(
            events[0]["recorded"]["command"][0],
            plugin.to_str().unwrap()
        );
        let sends = events.iter().filter(|e| e.get("send").is_some()).count();
        let recvs: Vec<&Value> = events.iter().filter(|e| e.get("recv").is_some()).collect();
        assert_eq!((sends, recvs.len()), (input.lines().count(), 11), "{name}");
        assert!(
            recvs
                .iter()
                .all(|e| e["ms"].as_f64().is_some_and(|ms| ms >= 0.0))
        );
        assert_eq!(events.last().unwrap()["exit"], 0);

        // Each recording replays against each build: the same answers.
        for (other, plugin) in &builds {
            let (code, report) = replay(&file, &[], &[plugin]);
            assert_eq!(code, 0, "{name} recording against {other}:\n{report}");
            assert!(
                report.contains("11 responses compared: all match"),
                "{report}"
            );
        }
    }
    // Without a command, nothing runs: a recording is data, and the
    // command it names is only shown.
    let out = launcher()
        .arg("replay")
        .arg(dir.path().join("native.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("this recording was made with: ") && stderr.contains("probe-native"),
        "{stderr}"
    );
}

#[test]
fn replay_shows_a_readable_diff_and_masks_what_is_volatile() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("probe.jsonl");
    assert!(
        record(&file, &[&guest("probe")], &spec7_requests())
            .status
            .success()
    );
    // Another build answers differently: edit the recorded echo.
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("ImVjaG86aGki")); // base64 of "echo:hi"
    let changed = dir.path().join("changed.jsonl");
    std::fs::write(&changed, text.replace("ImVjaG86aGki", "ImVjaG86aG8i")).unwrap();
    let (code, report) = replay(&changed, &[], &[&guest("probe")]);
    assert_eq!(code, 1, "{report}");
    assert!(
        report.contains("response to \"C\" (tool.execute): differs")
            && report.contains("/result: recorded \"echo:ho\", now \"echo:hi\"")
            && report.contains("1 differs"),
        "{report}"
    );
    let (code, report) = replay(&changed, &["--mask", "/result"], &[&guest("probe")]);
    assert_eq!(code, 0, "{report}");

    // A plugin that never answers: the replay stops at the timeout.
    let (code, report) = replay(
        &file,
        &["--timeout", "1"],
        &[Path::new("/bin/cat"), Path::new("/dev/null")],
    );
    assert_eq!(code, 1, "{report}");
    assert!(report.contains("stopped early"), "{report}");
    // A plugin that never stops answering cannot keep the replay going.
    let one = dir.path().join("one.jsonl");
    std::fs::write(&one, "{\"case\":\"x\"}\n{\"send\":\"{}\"}\n").unwrap();
    let (code, report) = replay(&one, &[], &[Path::new("/usr/bin/yes"), Path::new("{}")]);
    assert_eq!(code, 1, "{report}");
    assert!(report.contains("the replay stops here"), "{report}");
    // A plugin that is not there: exit 2.
    let (code, _) = replay(&file, &[], &[&dir.path().join("nothing")]);
    assert_eq!(code, 2);
}

#[test]
fn the_conformance_transcripts_replay_through_replay() {
    let dir = workspace_root().join("tests/conformance");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 5);
    for file in files {
        let header: Value = serde_json::from_str(
            std::fs::read_to_string(&file)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        let plugin = guest(header["plugin"].as_str().unwrap());
        let (code, report) = replay(&file, &[], &[&plugin]);
        assert_eq!(code, 0, "{}:\n{report}", file.display());
    }
}

#[test]
fn record_passes_the_exit_status_through() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("exit.jsonl");
    let out = record(
        &file,
        &[
            Path::new("/bin/sh"),
            Path::new("-c"),
            Path::new("echo out; echo err >&2; exit 3"),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout, b"out\n");
    assert_eq!(out.stderr, b"err\n");
    let events = events(&file);
    assert!(events.iter().any(|e| e["recv"] == "out"), "{events:?}");
    assert!(events.iter().any(|e| e["stderr"] == "err"), "{events:?}");
    assert_eq!(events.last().unwrap()["exit"], 3);
    // The plugin ends while the host is still sending: the recording ends
    // with whole lines and the exit, and nothing sent after it is recorded.
    let many: String = (0..20_000)
        .map(|i| format!("{{\"id\":\"{i}\"}}\n"))
        .collect();
    for n in 0..3 {
        let file = dir.path().join(format!("early-{n}.jsonl"));
        let plugin = [
            Path::new("/bin/sh"),
            Path::new("-c"),
            Path::new("head -c 100 >/dev/null; exit 7"),
        ];
        let out = record(&file, &plugin, &many);
        assert_eq!(out.status.code(), Some(7));
        let recorded = self::events(&file); // every line parses
        assert_eq!(recorded.last().unwrap()["exit"], 7);
    }
    // An existing recording is never overwritten.
    let out = record(&file, &[Path::new("/bin/true")], "");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("never overwrites"));
}

#[test]
fn an_installed_plugin_records_the_sessions_lingxi_runs() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let sessions = home.path().join("sessions");
    let out = launcher()
        .args(["install", guest("probe").to_str().unwrap(), "--project"])
        .arg(project.path())
        .arg("--record")
        .arg(&sessions)
        .env("HOME", home.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("records        every session into"),
        "{stdout}"
    );

    // A folder others can write into is refused.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let shared = home.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let out = launcher()
            .args([
                "install",
                guest("probe").to_str().unwrap(),
                "--force",
                "--project",
            ])
            .arg(project.path())
            .arg("--record")
            .arg(&shared)
            .env("HOME", home.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(stderr.contains("can be written by others"), "{stderr}");
    }

    let installed = project.path().join(".lingxi/plugins/com.lingxi.test-probe");
    let mut session = Session::spawn(lingxi_spawn(&installed, home.path()));
    let r = session.call("1", "tool.execute", tool("probe.echo", "hi"));
    assert_eq!(r["result"], "echo:hi");
    session.finish();

    let recordings: Vec<PathBuf> = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(recordings.len(), 1, "{recordings:?}");
    let name = recordings[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("com.lingxi.test-probe-"), "{name}");
    let events = events(&recordings[0]);
    let responses: Vec<&Value> = events.iter().filter(|e| e.get("recv").is_some()).collect();
    assert_eq!(responses.len(), 1);
    // Each response is kept with its call's receipt.
    let receipt = &responses[0]["receipt"];
    assert_eq!(receipt["call"], "tool.execute 'probe.echo'", "{events:?}");
    assert!(receipt["wallMicros"].as_u64().is_some(), "{receipt}");
    // The session replays against the component it was installed from.
    let (code, report) = replay(&recordings[0], &[], &[&guest("probe")]);
    assert_eq!(code, 0, "{report}");
    // And a policy is learned from it, as from any recording.
    let policy = home.path().join("learned.toml");
    let out = launcher()
        .args(["learn", guest("probe").to_str().unwrap(), "--workspace"])
        .arg(project.path())
        .arg("--replay")
        .arg(&recordings[0])
        .arg("-o")
        .arg(&policy)
        .env("HOME", home.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("tool.execute probe.echo: ok"), "{stderr}");
    let text = std::fs::read_to_string(&policy).unwrap();
    assert!(
        text.contains("grant = [\"none\"]"),
        "probe.echo uses nothing: {text}"
    );
}

/// `replay FILE -- PLUGIN…` with a wall-clock limit: `None` if it was
/// still running after `limit` (then killed).
fn replay_within(file: &Path, plugin: &[&str], limit: Duration) -> Option<(i32, String)> {
    let mut child = launcher()
        .arg("replay")
        .arg(file)
        .args(["--timeout", "1", "--"])
        .args(plugin)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
        text
    });
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some((status.code().unwrap_or(-1), reader.join().unwrap()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn hostile_recordings_and_plugins_cannot_hang_flood_or_fool_the_replay() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let limit = Duration::from_secs(60);

    // A plugin that never reads its input, sent more than a pipe holds:
    // the replay still stops at its response timeout.
    let big = format!(
        "{{\"id\":\"1\",\"method\":\"x\",\"pad\":\"{}\"}}",
        "a".repeat(200_000)
    );
    let mut text = String::from("{\"case\":\"deaf\"}\n");
    for _ in 0..4 {
        text += &format!("{}\n", serde_json::json!({ "send": big }));
    }
    text += "{\"recv\":\"{}\"}\n";
    let deaf = d.join("deaf.jsonl");
    std::fs::write(&deaf, text).unwrap();
    let (code, report) = replay_within(&deaf, &["/bin/sleep", "3600"], limit)
        .expect("the replay hung on a plugin that does not read");
    assert_eq!(code, 1, "{report}");
    assert!(
        report.contains("1 of 1 recorded responses missing"),
        "{report}"
    );

    // An endless response line: cut at what a recording can hold.
    let one = d.join("one.jsonl");
    std::fs::write(
        &one,
        "{\"case\":\"x\"}\n{\"send\":\"{}\"}\n{\"recv\":\"{}\"}\n",
    )
    .unwrap();
    let (code, report) = replay_within(&one, &["/bin/cat", "/dev/zero"], limit)
        .expect("the replay hung on an endless line");
    assert_eq!(code, 1, "{report}");
    assert!(report.contains("longer than 67108864 bytes"), "{report}");

    // Escape sequences in a recording or a response never reach the
    // terminal as such.
    let evil = d.join("evil.jsonl");
    let send = r#"{"id":"1","method":"\u001b]0;PWNED\u0007\u001b[2J"}"#;
    let lines = [
        serde_json::json!({"case": "evil"}),
        serde_json::json!({ "send": send }),
        serde_json::json!({"recv": "{\"id\":\"1\",\"result\":1}"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&evil, text).unwrap();
    // Valid JSON whose key holds an escape character once parsed.
    let answer = r#"{"id":"1","result":2,"\u001b[31m":1}"#;
    let (code, report) = replay_within(&evil, &["/bin/echo", answer], limit).unwrap();
    assert_eq!(code, 1, "{report}");
    assert!(report.contains("(?]0;PWNED?"), "{report}");
    assert!(
        !report.contains('\u{1b}') && !report.contains('\u{7}'),
        "{report:?}"
    );

    // A request longer than any recording holds: refused, exit 2.
    let long = d.join("long.jsonl");
    let huge = "b".repeat(64 * 1024 * 1024 + 16);
    std::fs::write(
        &long,
        format!(
            "{{\"case\":\"x\"}}\n{}\n",
            serde_json::json!({ "send": huge })
        ),
    )
    .unwrap();
    drop(huge);
    let (code, _) = replay(&long, &[], &[Path::new("/bin/cat")]);
    assert_eq!(code, 2);
}

/// `record` around this launcher (a component, or a packed plugin) keeps
/// each response's receipt, passed through a private file; a native
/// plugin has none, and the bytes passed through are the same.
#[test]
fn record_keeps_each_responses_receipt_from_a_plugin_of_this_launcher() {
    let dir = tempfile::tempdir().unwrap();
    let input = [
        r#"{"id":"1","method":"tool.execute","params":{"toolName":"probe.echo","arguments":"hi","sessionID":"s","toolCallID":"c"}}"#,
        r#"{"id":"2","method":"tool.execute","params":{"toolName":"nope","arguments":"","sessionID":"s","toolCallID":"c"}}"#,
    ]
    .join("\n")
        + "\n";
    let wasm = dir.path().join("wasm.jsonl");
    let out = record(&wasm, &[&guest("probe")], &input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recorded = events(&wasm);
    let responses: Vec<&Value> = recorded
        .iter()
        .filter(|e| e.get("recv").is_some())
        .collect();
    assert_eq!(responses.len(), 2, "{recorded:?}");
    assert_eq!(
        responses[0]["receipt"]["call"], "tool.execute 'probe.echo'",
        "{recorded:?}"
    );
    assert_eq!(
        responses[1]["receipt"]["call"], "tool.execute 'nope'",
        "{recorded:?}"
    );
    let native_file = dir.path().join("native.jsonl");
    let native_out = record(&native_file, &[&native("probe")], &input);
    assert_eq!(native_out.stdout, out.stdout, "the same answers either way");
    let events = events(&native_file);
    assert!(
        events.iter().all(|e| e.get("receipt").is_none()),
        "{events:?}"
    );
}
