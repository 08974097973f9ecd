//! The examples beyond the probe: `config-check-py` (Python) and
//! `md-outline-js` (JavaScript), each through the launcher on a scratch
//! workspace, with path parameters enforced by the host.

use serde_json::{Value, json};

use crate::support::{Lang, Session, polyglot, spec_snapshot, tool};

/// Starts example `name` of `lang` on `workspace` (snapshot sent).
fn start(lang: Lang, name: &str, workspace: &std::path::Path) -> Session {
    let mut s = Session::start(&polyglot(lang, name), &[]);
    let r = s.call(
        "snap",
        "host.snapshot",
        spec_snapshot(workspace.to_str().unwrap()),
    );
    assert_eq!(r["error"], Value::Null, "{r}");
    s
}

fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn config_check_reports_each_file_with_line_and_column() {
    let ws = workspace(&[
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
        ("conf/bad.toml", "[a]\nb = \n"),
        ("conf/good.json", "{\"a\": [1, 2]}"),
        ("conf/bad.json", "{\"a\": [1, 2}"),
        ("target/skipped.json", "{"),
        (".hidden/skipped.toml", "="),
    ]);
    let root = ws.path().canonicalize().unwrap();
    let mut s = start(Lang::Python, "config-check", &root);
    let r = s.call("1", "tool.execute", tool("config.check", "{}"));
    let report: Value =
        serde_json::from_str(r["result"].as_str().unwrap_or_else(|| panic!("{r}"))).unwrap();
    assert_eq!(report["checked"], 4, "{report}");
    assert_eq!(report["errors"], 2, "{report}");
    let files = report["files"].as_array().unwrap();
    let bad_toml = files
        .iter()
        .find(|f| f["file"] == "conf/bad.toml")
        .expect("bad.toml listed");
    assert_eq!(
        (bad_toml["status"].as_str(), bad_toml["line"].as_u64()),
        (Some("error"), Some(2))
    );
    let bad_json = files
        .iter()
        .find(|f| f["file"] == "conf/bad.json")
        .expect("bad.json listed");
    assert_eq!(
        (bad_json["line"].as_u64(), bad_json["column"].as_u64()),
        (Some(1), Some(12))
    );
    assert!(
        !report.to_string().contains("skipped.json"),
        "target/ is skipped"
    );
    assert!(
        !report.to_string().contains("skipped.toml"),
        "hidden folders are skipped"
    );

    // A sub-path, then paths the host refuses before the tool runs.
    let r = s.call(
        "2",
        "tool.execute",
        tool("config.check", &json!({"path": "conf"}).to_string()),
    );
    let report: Value = serde_json::from_str(r["result"].as_str().unwrap()).unwrap();
    assert_eq!(report["checked"], 3, "{report}");
    for (path, why) in [
        ("../", "leads outside"),
        ("/etc", "is outside the granted directories"),
    ] {
        let r = s.call(
            "3",
            "tool.execute",
            tool("config.check", &json!({"path": path}).to_string()),
        );
        let error = r["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{path} was not refused: {r}"));
        assert!(error.contains(why), "{path}: {error}");
    }
    let r = s.call(
        "4",
        "command.execute",
        json!({"commandName": "config-check", "arguments": []}),
    );
    let text = r["result"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"));
    assert!(text.contains("conf/bad.toml:2:"), "{text}");
}

#[test]
fn md_outline_lists_headings_outside_code_blocks() {
    let ws = workspace(&[(
        "docs/guide.md",
        "# Guide\n\nIntro\n\n## Install\n\n```sh\n# not a heading\n```\n\nUsage\n-----\n\n### Deep\n",
    )]);
    let root = ws.path().canonicalize().unwrap();
    let mut s = start(Lang::JavaScript, "md-outline", &root);
    let r = s.call(
        "1",
        "tool.execute",
        tool("markdown.outline", r#"{"path": "docs/guide.md"}"#),
    );
    let outline: Value =
        serde_json::from_str(r["result"].as_str().unwrap_or_else(|| panic!("{r}"))).unwrap();
    let text = outline.to_string();
    for heading in ["Guide", "Install", "Usage", "Deep"] {
        assert!(text.contains(heading), "{heading} missing: {text}");
    }
    assert!(!text.contains("not a heading"), "{text}");
    let r = s.call(
        "2",
        "tool.execute",
        tool("markdown.outline", r#"{"path": "../x.md"}"#),
    );
    assert!(
        r["error"]
            .as_str()
            .is_some_and(|e| e.contains("leads outside")),
        "{r}"
    );
}
