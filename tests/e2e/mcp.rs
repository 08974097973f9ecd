//! The same sandboxed plugin over MCP, driven by a client nobody here wrote:
//! the official MCP Python SDK (pinned in tests/mcp/requirements.lock),
//! through `lingxi-wasm-run mcp`, through a packed plugin started with
//! `mcp`, and through an exported Agent Plugins package loaded and launched
//! as the spec says a client must (tests/mcp/agent_plugins.py).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::packed::pack_component;
use crate::support::{guest, runtime_base, test_home, workspace_root};

/// The pinned client's Python, installed on first use.
pub(crate) fn client_python() -> PathBuf {
    let root = workspace_root();
    let status = Command::new(root.join("scripts").join("toolchains"))
        .arg("mcp")
        .status()
        .expect("cannot run scripts/toolchains");
    assert!(
        status.success(),
        "scripts/toolchains mcp failed (is python3 installed, and PyPI reachable?)"
    );
    root.join("target/toolchains/mcp/bin/python")
}

/// Runs the client with `args`; its report and exit status.
pub(crate) fn client(args: &[&str], cwd: &Path) -> (Value, i32) {
    let root = workspace_root();
    let out = Command::new(client_python())
        .arg(root.join("tests/mcp/client.py"))
        .args(args)
        .current_dir(cwd)
        .env("HOME", test_home())
        .env("LINGXI_WASM_CACHE", root.join("target/e2e-cache"))
        .output()
        .expect("cannot run the MCP client");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no report from the client ({e}); stderr:\n{stderr}"));
    (report, out.status.code().unwrap_or(-1))
}

/// The client's report of a run that must succeed.
fn served(args: &[&str], cwd: &Path) -> Value {
    let (report, status) = client(args, cwd);
    assert_eq!(status, 0, "{report}");
    report
}

/// The report of `calls` to the server `server` (a command and its
/// arguments), for a client that offers the MCP root `root`.
fn with_root(root: &Path, calls: &str, server: &[&str], cwd: &Path) -> Value {
    let uri = file_uri(root);
    let mut args = vec!["--roots", &uri, "--calls", calls, "--"];
    args.extend_from_slice(server);
    served(&args, cwd)
}

fn launcher() -> &'static str {
    env!("CARGO_BIN_EXE_lingxi-wasm-run")
}

fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// What every way of serving the probe must answer.
fn check_probe(report: &Value, root: &Path) {
    assert_eq!(
        report["serverInfo"]["name"], "com.lingxi.test-probe",
        "{report}"
    );
    let tools = report["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{report}");
    assert_eq!(tools[0]["name"], "probe.echo");
    assert!(tools[0]["inputSchema"].is_object());
    // Only projectRead: the sandbox vouches that it cannot write or connect.
    assert_eq!(tools[0]["annotations"]["readOnlyHint"], true);
    assert_eq!(tools[0]["annotations"]["openWorldHint"], false);
    assert_eq!(report["prompts"][0]["name"], "probe", "{report}");
    let results = &report["results"];
    assert_eq!(results[0]["isError"], false, "{report}");
    assert_eq!(results[0]["text"], r#"echo:{"text":"hi"}"#);
    let root = root.canonicalize().unwrap();
    assert_eq!(
        results[1]["messages"][0]["text"],
        format!("root={}", root.display()),
        "the workspace root is the client's MCP root: {report}"
    );
    assert_eq!(
        results[2]["error"]["code"], -32602,
        "unknown tool: {report}"
    );
}

const PROBE_CALLS: &str = r#"[{"tool": "probe.echo", "arguments": {"text": "hi"}},
    {"prompt": "pb", "arguments": "a b"}, {"tool": "probe.nope", "arguments": {}}]"#;

#[test]
fn an_mcp_client_lists_and_calls_the_probe_through_the_launcher() {
    let dir = tempfile::tempdir().unwrap();
    let probe = guest("probe");
    let root = dir.path().join("project");
    std::fs::create_dir(&root).unwrap();
    let uri = file_uri(&root);
    let server = ["--", launcher(), "mcp", probe.to_str().unwrap()];
    let mut args = vec!["--roots", &uri, "--calls", PROBE_CALLS];
    args.extend(server);
    let report = served(&args, dir.path());
    assert_eq!(report["protocolVersion"], "2025-11-25", "{report}");
    check_probe(&report, &root);

    // The 2026-07-28 revision (no handshake, no roots): the working
    // directory is the root.
    let mut args = vec!["--modern", "--calls", PROBE_CALLS];
    args.extend(server);
    let report = served(&args, &root);
    assert_eq!(report["protocolVersion"], "2026-07-28", "{report}");
    check_probe(&report, &root);
}

#[test]
fn an_mcp_client_lists_and_calls_a_packed_probe_started_with_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let exe = pack_component(dir.path(), &guest("probe"), "probe", &[]);
    let root = dir.path().join("project");
    std::fs::create_dir(&root).unwrap();
    let server = [exe.to_str().unwrap(), "mcp"];
    check_probe(&with_root(&root, PROBE_CALLS, &server, dir.path()), &root);
}

fn export(input: &Path, out: &Path, grants: &[&str]) {
    let status = crate::support::launcher()
        .args(["export", "--format", "agent-plugin", "-o"])
        .arg(out)
        .arg(input)
        .args(grants)
        .status()
        .unwrap();
    assert!(status.success());
}

pub(crate) fn schemas() -> String {
    workspace_root()
        .join("tests/agent-plugins/schemas/1.0.0")
        .display()
        .to_string()
}

#[test]
fn an_exported_package_validates_and_serves_as_a_client_launches_it() {
    let dir = tempfile::tempdir().unwrap();
    let package = dir.path().join("package");
    // On the runtime-only base, as a package is best shipped.
    let base = runtime_base();
    export(
        &guest("probe"),
        &package,
        &["--base", base.to_str().unwrap()],
    );
    let root = dir.path().join("project");
    std::fs::create_dir(&root).unwrap();
    let (uri, data) = (file_uri(&root), dir.path().join("data"));
    let (schemas, data_arg) = (schemas(), data.display().to_string());
    let args = [
        "--package",
        package.to_str().unwrap(),
        "--data",
        &data_arg,
        "--schemas",
        &schemas,
        "--roots",
        &uri,
        "--calls",
        PROBE_CALLS,
    ];
    let report = served(&args, dir.path());
    let loaded = &report["package"];
    assert_eq!(loaded["ok"], true, "{loaded}");
    assert_eq!(loaded["manifest"]["name"], "com.lingxi.test-probe");
    assert_eq!(loaded["manifest"]["version"], "0.1.0");
    let ours = &loaded["manifest"]["extensions"]["dev.lingxi-wasm"];
    assert_eq!(ours["declared"], json!(["projectRead"]), "{loaded}");
    assert_eq!(ours["granted"], json!(["projectRead"]), "{loaded}");
    assert_eq!(
        loaded["skills"][0]["name"], "com-lingxi-test-probe",
        "{loaded}"
    );
    assert_eq!(loaded["launch"]["args"], json!(["mcp"]));
    assert_eq!(
        loaded["launch"]["cwd"],
        data.canonicalize().unwrap().display().to_string()
    );
    check_probe(&report, &root);
    let skill =
        std::fs::read_to_string(package.join("skills/com-lingxi-test-probe/SKILL.md")).unwrap();
    assert!(
        skill.contains("### `probe.echo`") && skill.contains("Echoes its raw arguments"),
        "{skill}"
    );
}

/// The loader refuses what Lime refuses: each broken copy of a package is
/// rejected for its own fault, so the checks the exported package passes
/// are not vacuous.
#[test]
fn the_package_checks_refuse_broken_packages() {
    let dir = tempfile::tempdir().unwrap();
    let package = dir.path().join("package");
    export(&guest("probe"), &package, &["--grant", "none"]);
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(package.join(name)).unwrap()).unwrap()
    };
    let (plugin, mcp) = (read("plugin.json"), read("mcp.json"));
    let server = plugin["name"].as_str().unwrap().to_owned();
    // (what, file, where, new value, the problem the loader must name)
    let cases = [
        (
            "bad name",
            "plugin.json",
            "name",
            json!("Bad--Name"),
            "plugin.json name",
        ),
        (
            "closed manifest",
            "plugin.json",
            "unknownField",
            json!(1),
            "unknownField",
        ),
        (
            "other version",
            "plugin.json",
            "$schema",
            json!("https://agent-plugins.org/schemas/0.9.0/plugin.schema.json"),
            "$schema must be exactly",
        ),
        (
            "field of another variant",
            "mcp.json",
            "url",
            json!("https://x.example"),
            "mcp.json mcpServers",
        ),
        (
            "reserved env",
            "mcp.json",
            "env",
            json!({"PLUGIN_ROOT": "/"}),
            "PLUGIN_ROOT",
        ),
        (
            "command outside",
            "mcp.json",
            "command",
            json!("./outside"),
            "outside the plugin root",
        ),
        (
            "cwd form",
            "mcp.json",
            "cwd",
            json!("/tmp"),
            "mcp.json mcpServers",
        ),
        (
            "versions differ",
            "mcp.json top",
            "$schema",
            json!("https://agent-plugins.org/schemas/1.1.0/mcp.schema.json"),
            "the version of plugin.json's",
        ),
    ];
    for (what, file, key, value, expected) in cases {
        let (mut plugin, mut mcp) = (plugin.clone(), mcp.clone());
        match file {
            "plugin.json" => plugin[key] = value,
            "mcp.json top" => mcp[key] = value,
            _ => mcp["mcpServers"][&server][key] = value,
        }
        let broken = dir.path().join(what.replace(' ', "-"));
        std::fs::create_dir(&broken).unwrap();
        std::fs::write(broken.join("plugin.json"), plugin.to_string()).unwrap();
        std::fs::write(broken.join("mcp.json"), mcp.to_string()).unwrap();
        // `./outside` is a link out of the package to a real executable.
        std::os::unix::fs::symlink(launcher(), broken.join("outside")).unwrap();
        let data = dir.path().join("data").display().to_string();
        let schemas = schemas();
        let args = [
            "--package",
            broken.to_str().unwrap(),
            "--data",
            &data,
            "--schemas",
            &schemas,
        ];
        let (report, status) = client(&args, dir.path());
        assert_eq!(status, 3, "{what}: {report}");
        let problems = report["package"]["problems"].to_string();
        assert!(problems.contains(expected), "{what}: {problems}");
    }
}

/// The attack rows that make sense over MCP, and the contract checks: the
/// same sandbox, and the server keeps serving after each.
#[test]
fn the_sandbox_holds_over_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("inside.txt"), "inside").unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "TOP-SECRET-CONTENT").unwrap();
    let calls = json!([
        {"tool": "read-file", "arguments": {"input": secret.display().to_string()}},
        {"tool": "spin", "arguments": {"input": ""}},
        {"tool": "ok", "arguments": {"input": "after spin"}},
        {"tool": "sleep", "arguments": {"input": "30"}},
        {"tool": "big-result", "arguments": {"input": "20"}},
        {"tool": "contract.strict", "arguments": {"text": "far too long a text"}},
        {"tool": "contract.read", "arguments": {"path": secret.display().to_string()}},
        {"tool": "contract.read", "arguments": {"path": "inside.txt"}},
        {"tool": "contract.approve", "arguments": {}},
        {"tool": "contract.calls", "arguments": {}},
    ])
    .to_string();
    let testbed = guest("testbed");
    let server = [
        launcher(),
        "mcp",
        testbed.to_str().unwrap(),
        "--grant",
        "projectRead",
        "--timeout",
        "1",
    ];
    let report = with_root(&project, &calls, &server, dir.path());
    let r = &report["results"];
    let error_text = |i: usize| {
        assert_eq!(r[i]["isError"], true, "call {i}: {report}");
        r[i]["text"].as_str().unwrap().to_owned()
    };
    assert!(
        !error_text(0).contains("TOP-SECRET"),
        "file escape: {report}"
    );
    for (i, what) in [(1, "spin"), (3, "sleep")] {
        let text = error_text(i);
        assert!(text.contains("--timeout"), "{what}: {text}");
        let ms = r[i]["ms"].as_f64().unwrap();
        assert!(ms < 10_000.0, "{what} answered after {ms} ms");
    }
    assert_eq!(
        r[2]["text"], "ok:after spin",
        "serving after the deadline: {report}"
    );
    assert!(error_text(4).contains("MiB"), "huge result: {report}");
    assert!(
        error_text(5).contains("was not run"),
        "validation: {report}"
    );
    assert!(
        error_text(6).contains("was not run"),
        "path parameter: {report}"
    );
    assert_eq!(r[7]["isError"], false, "a path inside: {report}");
    let inside = project.canonicalize().unwrap().join("inside.txt");
    assert!(
        r[7]["text"]
            .as_str()
            .unwrap()
            .contains(inside.to_str().unwrap()),
        "{report}"
    );
    assert_eq!(
        r[8]["error"]["code"], -32602,
        "approval cannot be asked: {report}"
    );
    assert!(!crate::mcp_http::listed(&report, "contract.approve"));
    // Only the in-workspace read reached the plugin.
    assert_eq!(
        r[9]["text"], "1",
        "refused calls never reach the plugin: {report}"
    );
}

/// `PLUGIN_DATA` is the plugin's data directory.
#[test]
fn plugin_data_is_the_data_directory_over_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("instance-data");
    let calls = json!([{"tool": "kv-set", "arguments": {"input": "k=v"}}]).to_string();
    let testbed = guest("testbed");
    let root = workspace_root();
    let out = Command::new(client_python())
        .arg(root.join("tests/mcp/client.py"))
        .args([
            "--calls",
            &calls,
            "--",
            launcher(),
            "mcp",
            testbed.to_str().unwrap(),
        ])
        .current_dir(dir.path())
        .env("HOME", test_home())
        .env("LINGXI_WASM_CACHE", root.join("target/e2e-cache"))
        .env("PLUGIN_DATA", &data)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["results"][0]["isError"], false, "{report}");
    let written: Vec<_> = walk(&data);
    assert!(
        !written.is_empty(),
        "nothing was stored under PLUGIN_DATA: {report}"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// A packed plugin keeps its grants when a flag changes one setting: a
/// limit given to `mcp` never widens what it was packed with.
#[test]
fn flags_are_laid_over_a_packed_plugins_grants() {
    let dir = tempfile::tempdir().unwrap();
    let exe = pack_component(
        dir.path(),
        &guest("testbed"),
        "testbed",
        &["--grant", "none"],
    );
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("f.txt"), "CONTENT").unwrap();
    let file = project.join("f.txt").display().to_string();
    let calls = json!([{"tool": "read-file", "arguments": {"input": file}}]).to_string();
    let server = [launcher(), "mcp", exe.to_str().unwrap(), "--timeout", "5"];
    let report = with_root(&project, &calls, &server, dir.path());
    let result = &report["results"][0];
    assert_eq!(result["isError"], true, "{report}");
    assert!(
        !result["text"].as_str().unwrap().contains("CONTENT"),
        "{report}"
    );
}

/// Started in `/` or the home folder with no root from the client (what
/// GUI hosts do), the server mounts no workspace rather than all of it.
#[test]
fn a_working_directory_too_broad_to_be_a_workspace_is_not_mounted() {
    let home = test_home();
    std::fs::create_dir_all(&home).unwrap();
    let probe = guest("probe");
    let calls = r#"[{"prompt": "probe"}]"#;
    for cwd in [Path::new("/"), home.as_path()] {
        let args = [
            "--calls",
            calls,
            "--",
            launcher(),
            "mcp",
            probe.to_str().unwrap(),
        ];
        let report = served(&args, cwd);
        let error = report["results"][0]["error"]["message"].to_string();
        assert!(error.contains("unavailable"), "{}: {report}", cwd.display());
        // Said in an MCP user's words: which flag gives the workspace.
        assert!(
            error.contains("this MCP server has no workspace: start it with --workspace DIR"),
            "{}: {report}",
            cwd.display()
        );
    }
}

/// `PLUGIN_DATA` must name the plugin's own folder: never `/`, the home
/// folder or a link.
#[test]
fn plugin_data_that_is_not_a_plugins_own_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(dir.path(), &link).unwrap();
    for (data, why) in [
        (PathBuf::from("/"), "holds the home folder"),
        (test_home(), "holds the home folder"),
        (link, "symbolic link"),
        (PathBuf::from("/tmp"), "directly under /"),
        (PathBuf::from("relative"), "absolute"),
    ] {
        let out = crate::support::launcher()
            .args(["mcp", guest("probe").to_str().unwrap()])
            .env("PLUGIN_DATA", &data)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}: {stderr}", data.display());
        assert!(
            stderr.contains("PLUGIN_DATA") && stderr.contains(why),
            "{stderr}"
        );
    }
}

/// A client that asks for a call's receipt (`_meta` key
/// `dev.lingxi-wasm/effects`) gets it in the result's `_meta`; one that
/// does not gets none.
#[test]
fn a_receipt_rides_in_the_results_meta_when_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("inside.txt"), "inside").unwrap();
    let inside = project.canonicalize().unwrap().join("inside.txt");
    let path = inside.display().to_string();
    let calls = json!([
        {"tool": "read-file", "arguments": {"input": path}, "meta": {"dev.lingxi-wasm/effects": true}},
        {"tool": "read-file", "arguments": {"input": path}},
    ])
    .to_string();
    let testbed = guest("testbed");
    let server = [
        launcher(),
        "mcp",
        testbed.to_str().unwrap(),
        "--grant",
        "projectRead",
    ];
    let report = with_root(&project, &calls, &server, dir.path());
    let r = &report["results"];
    assert_eq!(r[0]["text"], "inside", "{report}");
    let receipt = &r[0]["meta"]["dev.lingxi-wasm/effects"];
    assert_eq!(receipt["call"], "tool.execute 'read-file'", "{report}");
    let files = receipt["files"].as_array().unwrap();
    let file = files.iter().find(|f| f["path"] == path.as_str());
    assert_eq!(file.map(|f| &f["bytesRead"]), Some(&json!(6)), "{report}");
    assert!(r[1].get("meta").is_none(), "not asked: {report}");
}
