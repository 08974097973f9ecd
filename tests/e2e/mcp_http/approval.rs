//! A tool that requires the user's approval (`x-lingxi-requires-approval`,
//! the testbed's `contract.approve`) is served to a client that can ask
//! its user (MCP elicitation), over stdio and HTTP, in both protocol eras:
//! it runs on accept, answers "declined" otherwise, and the user is shown
//! the tool, its arguments and the file it resolved.

use serde_json::{Value, json};

use super::{Server, client};
use crate::support::guest;

/// Approve `a.txt` in `project`, then count the contract calls that ran.
fn calls() -> String {
    json!([
        {"tool": "contract.approve", "arguments": {"path": "a.txt"}},
        {"tool": "contract.calls", "arguments": {}},
    ])
    .to_string()
}

/// Checks what the client `answer`ed led to. `counted`: the second call
/// runs in the same sandbox session as the first (not so for a 2026-07-28
/// client over HTTP, each of whose requests has one of its own).
fn check(report: &Value, answer: &str, project: &std::path::Path, how: &str, counted: bool) {
    let r = &report["results"];
    let asked = report["elicitations"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{how}: {report}");
    let message = asked[0].as_str().unwrap();
    let file = project.canonicalize().unwrap().join("a.txt");
    assert!(
        message.contains("contract.approve")
            && message.contains("com.lingxi.testbed")
            && message.contains(&format!("read {}", file.display())),
        "{how}: the user must see the tool, plugin and file: {message}"
    );
    match answer {
        "accept" => {
            assert_eq!(r[0]["isError"], false, "{how}: {report}");
            let ran = r[0]["text"].as_str().unwrap();
            assert!(ran.contains(file.to_str().unwrap()), "{how}: {report}");
            if counted {
                assert_eq!(r[1]["text"], "1", "{how}: the call ran once: {report}");
            }
        }
        _ => {
            assert_eq!(r[0]["isError"], true, "{how}: {report}");
            let text = r[0]["text"].as_str().unwrap();
            let said = if answer == "decline" {
                "declined"
            } else {
                "dismissed"
            };
            assert!(
                text.contains(said) && text.contains("did not run"),
                "{how}: {text}"
            );
            assert_eq!(r[1]["text"], "0", "{how}: it ran anyway: {report}");
        }
    }
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "A").unwrap();
    dir
}

#[test]
fn approval_over_stdio_in_both_protocol_eras() {
    let project = project();
    let testbed = guest("testbed");
    let workspace = project.path().to_str().unwrap();
    let launcher = env!("CARGO_BIN_EXE_lingxi-wasm-run");
    let server = [
        launcher,
        "mcp",
        testbed.to_str().unwrap(),
        "--workspace",
        workspace,
    ];
    for modern in [false, true] {
        for answer in ["accept", "decline", "cancel"] {
            let calls = calls();
            let mut args = vec!["--elicit", answer, "--calls", &calls];
            if modern {
                args.push("--modern");
            }
            args.push("--");
            args.extend(server);
            let (report, status) = client(&args);
            assert_eq!(status, 0, "{report}");
            check(
                &report,
                answer,
                project.path(),
                &format!("stdio modern={modern} {answer}"),
                true,
            );
        }
    }
}

#[test]
fn approval_over_http_sessions_and_stateless() {
    let project = project();
    let testbed = guest("testbed");
    let workspace = ["--workspace", project.path().to_str().unwrap()];
    for stateless in [false, true] {
        let mut args = workspace.to_vec();
        if stateless {
            args.push("--stateless");
        }
        let server = Server::launcher(&testbed, &args);
        let url = server.url();
        for (modern, answer) in [
            (false, "accept"),
            (false, "decline"),
            (true, "accept"),
            (true, "decline"),
        ] {
            let how = format!("stateless={stateless} modern={modern} {answer}");
            let calls = calls();
            let mut args = vec!["--url", &url, "--elicit", answer, "--calls", &calls];
            if modern {
                args.push("--modern");
            }
            let (report, status) = client(&args);
            assert_eq!(status, 0, "{how}: {report}");
            if stateless && !modern {
                // No channel back to an initialize-era client without a
                // session: it cannot be asked, so it is not served the tool.
                assert_eq!(
                    report["results"][0]["error"]["code"], -32602,
                    "{how}: {report}"
                );
                assert!(!super::listed(&report, "contract.approve"), "{how}");
                continue;
            }
            check(&report, answer, project.path(), &how, !modern);
        }
    }
}

/// An answer is for the call it was asked about: a retry whose arguments
/// changed is refused, and a client without elicitation is told why.
#[test]
fn an_answer_approves_only_the_call_asked_about() {
    let project = project();
    std::fs::write(project.path().join("b.txt"), "B").unwrap();
    let server = Server::launcher(
        &guest("testbed"),
        &[
            "--stateless",
            "--workspace",
            project.path().to_str().unwrap(),
        ],
    );
    let calls = json!([{"tool": "contract.approve", "arguments": {"path": "a.txt"}, "swap": {"path": "b.txt"}}, {"tool": "contract.calls", "arguments": {}}]).to_string();
    let (report, _) = client(&[
        "--url",
        &server.url(),
        "--modern",
        "--elicit",
        "accept",
        "--calls",
        &calls,
    ]);
    let error = &report["results"][0]["error"];
    assert_eq!(error["code"], -32602, "{report}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("not for this call"),
        "{report}"
    );
    assert_eq!(report["results"][1]["text"], "0", "{report}");
}
