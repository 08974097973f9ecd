//! `learn`, as a user runs it: the testbed driven through a recorded
//! session (`--replay`) and a named call (`--call`) under a ceiling; the
//! learned policy is then used as `--policy` for the same calls: it must
//! be sufficient (every call succeeds) and minimal (dropping any one rule
//! makes one of them fail), and it never holds what the ceiling did not
//! grant.

use std::path::{Path, PathBuf};
use std::process::Output;

use lingxi_wasm_host::PolicySpec;
use serde_json::json;

use crate::support::{Session, guest, launcher, pong_server, spec_snapshot, tool};

/// A project: sources to read, docs to list, a folder to write into.
struct Project {
    _dir: tempfile::TempDir,
    ws: String,
    data: PathBuf,
}

fn project() -> Project {
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    for sub in ["ws/src", "ws/docs", "ws/out", "data"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    std::fs::write(root.join("ws/src/a.txt"), "source").unwrap();
    std::fs::write(root.join("ws/docs/guide.md"), "guide").unwrap();
    Project {
        ws: root.join("ws").display().to_string(),
        data: root.join("data"),
        _dir: dir,
    }
}

/// The calls the test learns from and checks against (tool, arguments).
fn calls(p: &Project, port: u16) -> Vec<(&'static str, String)> {
    vec![
        ("read-file", format!("{}/src/a.txt", p.ws)),
        ("list-dir", format!("{}/docs", p.ws)),
        ("write-file", format!("{}/out/new.txt", p.ws)),
        ("tcp", format!("127.0.0.1:{port}")),
        ("getenv", "LANG".into()),
        ("kv-set", "k=v".into()),
    ]
}

/// A recording (the transcript format) that sends `calls`.
fn recording(dir: &Path, calls: &[(&str, String)]) -> PathBuf {
    let path = dir.join("session.jsonl");
    let mut text = json!({"case": "learned session"}).to_string() + "\n";
    for (i, (name, arguments)) in calls.iter().enumerate() {
        let request = json!({"id": format!("r{i}"), "method": "tool.execute", "params": tool(name, arguments)});
        text += &(json!({"send": request.to_string()}).to_string() + "\n");
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn learn(args: &[&str]) -> Output {
    launcher()
        .arg("learn")
        .args(args)
        .env("LANG", "C")
        .output()
        .unwrap()
}

/// Which of `calls` fail under `policy`, with `root` the workspace root a
/// host's snapshot sends.
fn failures(policy: &Path, root: &str, calls: &[(&str, String)]) -> Vec<String> {
    let policy = policy.display().to_string();
    let mut command = Session::command(&guest("testbed"), &["--policy", &policy], "warn");
    command.env("LANG", "C");
    let mut session = Session::spawn(command);
    let snapshot = session.call("s", "host.snapshot", spec_snapshot(root));
    assert!(snapshot["error"].is_null(), "{snapshot}");
    let init = session.call("i", "plugin.initialize", json!({"hostIPCVersion": 1}));
    assert!(init["error"].is_null(), "{init}\n{}", session.stderr());
    let mut failed = Vec::new();
    for (i, (name, arguments)) in calls.iter().enumerate() {
        let answer = session.call(&format!("c{i}"), "tool.execute", tool(name, arguments));
        if !answer["error"].is_null() {
            failed.push(format!("{name}: {}", answer["error"]));
        }
    }
    failed
}

#[test]
fn a_learned_policy_is_sufficient_and_every_rule_is_needed() {
    let p = project();
    let port = pong_server();
    let calls = calls(&p, port);
    let session = recording(p.data.parent().unwrap(), &calls);
    let policy = p.data.parent().unwrap().join("learned.toml");
    let out = learn(&[
        guest("testbed").to_str().unwrap(),
        "--workspace",
        &p.ws,
        "--env",
        "LANG",
        "--data-root",
        p.data.to_str().unwrap(),
        "--allow-net",
        &format!("127.0.0.1:{port}"),
        "--timeout",
        "20",
        "--replay",
        session.to_str().unwrap(),
        "--call",
        "ok",
        "{\"x\":1}",
        "-o",
        policy.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let text = std::fs::read_to_string(&policy).unwrap();
    assert!(
        text.contains("grant = [\"projectWrite\", \"networkAccess\"]"),
        "{text}"
    );
    // Folders of the project are named under the host's root.
    assert!(text.contains("workspace = \"{root}/out\""), "{text}");
    assert!(
        text.contains(&format!(
            "# tool.execute 'read-file' read {}/src/a.txt\n  \"{{root}}/src\",",
            p.ws
        )),
        "{text}"
    );
    assert!(text.contains(&format!("\"127.0.0.1:{port}\"")), "{text}");
    assert!(text.contains("  \"LANG\","), "{text}");
    assert!(!text.contains("no-storage"), "kv-set used storage: {text}");
    // The --call after the recording ran too, and the output says so.
    assert!(stderr.contains("tool.execute ok: ok"), "{stderr}");
    assert!(stderr.contains("tool.execute write-file: ok"), "{stderr}");

    assert_eq!(
        failures(&policy, &p.ws, &calls),
        Vec::<String>::new(),
        "sufficient:\n{text}"
    );
    // Dropping each rule makes some call fail.
    let drops: Vec<(String, String)> = vec![
        (
            "projectWrite".into(),
            text.replace("\"projectWrite\", ", ""),
        ),
        (
            "networkAccess".into(),
            text.replace(", \"networkAccess\"", ""),
        ),
        (
            "workspace".into(),
            text.replace("workspace = \"{root}/out\"", "workspace = \"{root}/docs\""),
        ),
        (
            "allow-read src".into(),
            text.replace("  \"{root}/src\",", ""),
        ),
        (
            "allow-read docs".into(),
            text.replace("  \"{root}/docs\",", ""),
        ),
        (
            "allow-net".into(),
            text.replace(&format!("  \"127.0.0.1:{port}\","), "  \"127.0.0.1:1\","),
        ),
        ("env".into(), text.replace("  \"LANG\",", "")),
        ("storage".into(), format!("{text}\nno-storage = true\n")),
    ];
    for (rule, variant) in drops {
        assert_ne!(variant, text, "the rule {rule} was not in the file");
        let path = p
            .data
            .parent()
            .unwrap()
            .join(format!("without-{}.toml", rule.replace(' ', "-")));
        std::fs::write(&path, &variant).unwrap();
        assert!(
            !failures(&path, &p.ws, &calls).is_empty(),
            "without {rule} every call still succeeds:\n{variant}"
        );
    }
}

#[test]
fn learning_never_exceeds_the_ceiling_and_reports_what_it_refused() {
    let p = project();
    let port = pong_server();
    let calls = calls(&p, port);
    let session = recording(p.data.parent().unwrap(), &calls);
    let policy = p.data.parent().unwrap().join("learned.toml");
    let etc = vec![("read-file", "/etc/hostname".to_owned())];
    let outside = recording(&p.data, &etc);
    let out = learn(&[
        guest("testbed").to_str().unwrap(),
        "--workspace",
        &p.ws,
        "--grant",
        "projectRead",
        "--no-storage",
        "--replay",
        session.to_str().unwrap(),
        "--replay",
        outside.to_str().unwrap(),
        "-o",
        policy.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let text = std::fs::read_to_string(&policy).unwrap();
    let spec = PolicySpec::from_toml(&text, &policy).unwrap();
    assert_eq!(spec.grant, Some(vec!["projectRead".to_owned()]), "{text}");
    assert!(
        spec.allow_net.is_empty() && spec.allow_write.is_empty(),
        "{text}"
    );
    assert!(spec.env.is_empty() && spec.no_storage, "{text}");
    for refused in [
        format!("write {}/out/new.txt", p.ws),
        format!("connect to 127.0.0.1:{port} (tcp)"),
        "read /etc/hostname".to_owned(),
    ] {
        assert!(
            stderr.contains(&refused),
            "{refused} not reported:\n{stderr}"
        );
        assert!(
            text.contains(&refused),
            "{refused} not in the file:\n{text}"
        );
    }
    assert!(
        text.contains("--allow-read /etc (with projectRead)"),
        "{text}"
    );
    assert!(
        stderr.contains("grant it with --grant networkAccess"),
        "{stderr}"
    );
    // The file refuses to be overwritten without --force.
    let again = learn(&[
        guest("testbed").to_str().unwrap(),
        "--workspace",
        &p.ws,
        "--call",
        "ok",
        "{}",
        "-o",
        policy.to_str().unwrap(),
    ]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
}

/// A tool whose path parameters resolve against the workspace root keeps
/// the root whole: the same call works under the learned policy.
#[test]
fn a_root_that_path_parameters_need_stays_the_workspace() {
    let p = project();
    let policy = p.data.parent().unwrap().join("stats.toml");
    let out = learn(&[
        guest("workspace-stats").to_str().unwrap(),
        "--workspace",
        &p.ws,
        "--call",
        "workspace.stats",
        "{\"path\":\"src\"}",
        "-o",
        policy.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let text = std::fs::read_to_string(&policy).unwrap();
    assert!(text.contains("workspace = \"{root}\""), "{text}");
    assert!(text.contains("takes paths relative to it"), "{text}");
    let call = launcher()
        .arg("call")
        .arg(guest("workspace-stats"))
        .args(["workspace.stats", "{\"path\":\"src\"}", "--policy"])
        .arg(&policy)
        .output()
        .unwrap();
    assert!(
        call.status.success(),
        "{}",
        String::from_utf8_lossy(&call.stderr)
    );
}

/// A learned policy names the project's folders under the root the host
/// sends: it serves another project as it served this one (and reaches
/// nothing of the first), and installing it over a default install is a
/// narrowing, shown as one, not an escalation.
#[test]
fn a_learned_policy_serves_every_project_and_installs_as_a_narrowing() {
    let (first, second) = (project(), project());
    let policy = first.data.parent().unwrap().join("learned.toml");
    let calls = |p: &Project| {
        vec![
            ("read-file", format!("{}/src/a.txt", p.ws)),
            ("write-file", format!("{}/out/new.txt", p.ws)),
        ]
    };
    let session = recording(&first.data, &calls(&first));
    let out = learn(&[
        guest("testbed").to_str().unwrap(),
        "--workspace",
        &first.ws,
        "--replay",
        session.to_str().unwrap(),
        "--no-storage",
        "-o",
        policy.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&policy).unwrap();
    assert!(text.contains("workspace = \"{root}/out\""), "{text}");
    let spec = PolicySpec::from_toml(&text, &policy).unwrap();
    let folders = (spec.workspace.iter())
        .chain(&spec.allow_read)
        .chain(&spec.allow_write);
    for folder in folders {
        assert!(
            !folder.starts_with(&first.ws),
            "{} is pinned:\n{text}",
            folder.display()
        );
    }

    assert_eq!(
        failures(&policy, &second.ws, &calls(&second)),
        Vec::<String>::new()
    );
    assert!(
        std::path::Path::new(&second.ws)
            .join("out/new.txt")
            .exists()
    );
    let across = failures(&policy, &second.ws, &calls(&first));
    assert_eq!(
        across.len(),
        2,
        "the first project is reachable: {across:?}"
    );

    // Installed as declared, then under the learned policy: narrower.
    let home = tempfile::tempdir().unwrap();
    let install = |extra: &[&str]| {
        let testbed = guest("testbed");
        let base = ["install", testbed.to_str().unwrap(), "--no-storage"];
        crate::packed::launcher(home.path(), home.path(), &[&base[..], extra].concat())
    };
    let (ok, _, err) = install(&["--grant", "projectRead,projectWrite"]);
    assert!(ok, "{err}");
    let (ok, out, err) = install(&["--policy", policy.to_str().unwrap()]);
    assert!(ok, "a learned policy was refused as an escalation: {err}");
    assert!(out.contains("workspace      {root}/out"), "{out}");
    // Widening back names what it gains and what it loses.
    let (ok, _, err) = install(&["--grant", "projectRead,projectWrite"]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("  + workspace the host's workspace root"),
        "{err}"
    );
}

/// `learn --replay` of a session this launcher recorded takes what the
/// session was granted as its ceiling: what the session was refused is
/// reported, never learned.
#[test]
fn a_replay_learns_within_what_the_recorded_session_was_granted() {
    let p = project();
    let dir = p.data.parent().unwrap();
    let session = dir.join("granted.jsonl");
    let requests = [
        json!({"id": "s", "method": "host.snapshot", "params": spec_snapshot(&p.ws)}),
        json!({"id": "r", "method": "tool.execute", "params": tool("read-file", &format!("{}/src/a.txt", p.ws))}),
        json!({"id": "w", "method": "tool.execute", "params": tool("write-file", &format!("{}/out/new.txt", p.ws))}),
    ];
    let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
    let testbed = guest("testbed");
    let grant = ["--grant", "projectRead", "--no-storage"].map(Path::new);
    let out = crate::record::record(&session, &[&testbed, grant[0], grant[1], grant[2]], &input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recorded = std::fs::read_to_string(&session).unwrap();
    assert!(
        recorded.contains(r#""grants":{"grant":["projectRead"]"#),
        "{recorded}"
    );

    let policy = dir.join("from-session.toml");
    let out = learn(&[
        testbed.to_str().unwrap(),
        "--workspace",
        &p.ws,
        "--replay",
        session.to_str().unwrap(),
        "-o",
        policy.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("the ceiling is what"), "{stderr}");
    let text = std::fs::read_to_string(&policy).unwrap();
    let spec = PolicySpec::from_toml(&text, &policy).unwrap();
    assert_eq!(spec.grant, Some(vec!["projectRead".to_owned()]), "{text}");
    assert!(spec.no_storage, "{text}");
    let refused = format!("write {}/out/new.txt", p.ws);
    assert!(
        stderr.contains(&refused) && text.contains(&refused),
        "{stderr}\n{text}"
    );
}
