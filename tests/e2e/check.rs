//! `lingxi-wasm-run check`: one deliberately broken guest per rule (the
//! `misfit` guest, built to break it), each with its exact diagnostic and
//! exit status, and the JSON report.

use std::path::Path;

use serde_json::Value;

use crate::support::{guest, launcher, misfit};

/// Runs `check` on `file`: (exit status, stdout).
fn check(file: &Path, json: bool) -> (i32, String) {
    let mut command = launcher();
    command.arg("check").arg(file);
    if json {
        command.arg("--json");
    }
    let out = command.output().expect("cannot run the launcher");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), stdout)
}

/// Each rule, the misfit build that breaks it, and its exact diagnostic.
const RULES: [(&str, &[&str], &str); 18] = [
    (
        "command",
        &[],
        "error[world]: it does not export lingxi:plugin/plugin@0.1.x; it exports wasi:cli/run@0.2.0 (it is a command, a program with a main function): build it with a LingXi SDK (Rust: a cdylib that calls lingxi-plugin-sdk's export_plugin!; Python: lingxi_plugin.export; JavaScript: definePlugin), or against world lingxi-plugin-base of wit/lingxi-plugin.wit",
    ),
    (
        "foreign",
        &["foreign"],
        "error[imports]: it imports example:foreign/oracle@0.1.0, which this host does not provide; plugins may import only WASI 0.2 (cli, clocks, filesystem, io, random, sockets, outgoing http) and lingxi:plugin interfaces: remove the dependency that brings it in",
    ),
    (
        "http",
        &["http"],
        "warning[capabilities]: it imports wasi:http but does not declare networkAccess: every request it sends will be denied; declare networkAccess, or remove the code that sends HTTP requests (fetch)",
    ),
    (
        "id",
        &[],
        "error[manifest.id]: id \"Com.Example..Misfit\" cannot be installed: ids must be 1-64 characters of a-z, 0-9, '.' and '-', start and end with a letter or digit, and contain no '..' or '--' (e.g. com.example.my-plugin)",
    ),
    (
        "version",
        &[],
        "error[manifest.version]: version \"1.0\" is not a semantic version (unexpected end of input while parsing minor version number); use MAJOR.MINOR.PATCH, e.g. 0.1.0",
    ),
    (
        "name",
        &[],
        "error[manifest.name]: name is empty; give the plugin a name people read",
    ),
    (
        "description",
        &[],
        "error[manifest.description]: description is empty; say in one line what the plugin does",
    ),
    (
        "ipc-version",
        &[],
        "error[handshake]: ipcVersion is 2; LingXi speaks IPC version 1 only: report 1 (build with a current SDK)",
    ),
    (
        "duplicate-tool",
        &[],
        "error[handshake]: tool 'misfit.echo' is registered more than once; give each tool its own name",
    ),
    (
        "duplicate-alias",
        &[],
        "error[handshake]: alias 'GO' of command 'walk' is also an alias of command 'run' (names match without regard to case); rename one",
    ),
    (
        "alias-is-a-name",
        &[],
        "error[handshake]: alias 'run' of command 'stop' is the name of command 'run' (names match without regard to case); rename one",
    ),
    (
        "hooks-twice",
        &[],
        "error[handshake]: supportedHooks lists sessionStart more than once; list each event once",
    ),
    (
        "hooks-unsorted",
        &[],
        "warning[handshake]: supportedHooks is not sorted ascending (sessionStart, sessionEnd); the protocol lists them sorted",
    ),
    (
        "schema-not-json",
        &[],
        "error[schema]: tool 'misfit.broken': inputSchema is not valid JSON (key must be a string at line 1 column 2); its arguments are not validated",
    ),
    (
        "schema-invalid",
        &[],
        "error[schema]: tool 'misfit.broken': inputSchema is not a valid JSON Schema (\"objekt\" is not valid under any of the schemas listed in the 'anyOf' keyword); its arguments are not validated",
    ),
    (
        "annotation",
        &[],
        "error[annotation]: tool 'misfit.paths': x-lingxi-path at /properties/p is \"rw\"; it must be \"read\" or \"write\"",
    ),
    (
        "initialize-fails",
        &[],
        "error[smoke]: plugin.initialize failed: cannot start: misfit on purpose",
    ),
    (
        "net-unused",
        &[],
        "warning[capabilities]: it declares networkAccess but imports neither wasi:sockets nor wasi:http: it cannot use the network; remove networkAccess so users are not asked to grant it",
    ),
];

#[test]
fn each_rule_has_its_exact_diagnostic_and_only_errors_fail() {
    let mut failures = Vec::new();
    for (rule, features, expected) in RULES {
        let file = misfit(rule, features);
        let (status, out) = check(&file, false);
        let findings: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with("error[") || l.starts_with("warning["))
            .collect();
        let want_status = if expected.starts_with("error") { 1 } else { 0 };
        if !findings.contains(&expected) || findings.len() != 1 || status != want_status {
            failures.push(format!(
                "{rule}: status {status}, want {want_status}; want only\n  {expected}\ngot\n{out}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_sockets_import_without_network_access_is_a_warning() {
    let (status, out) = check(&misfit("", &["sockets"]), false);
    assert_eq!(status, 0, "{out}");
    let warning = "warning[capabilities]: it imports wasi:sockets but does not declare networkAccess: every connection it tries will be denied; declare networkAccess, or remove the code that opens sockets";
    assert!(out.lines().any(|l| l == warning), "{out}");
}

#[test]
fn running_a_plugin_with_a_foreign_import_names_the_import() {
    // Not only `check`: the launcher says what is missing, and does not
    // call it "not a LingXi plugin" (it is one, with an import too many).
    let out = launcher()
        .arg(misfit("foreign", &["foreign"]))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("imports example:foreign/oracle@0.1.0, which this host does not provide"),
        "{stderr}"
    );
    assert!(!stderr.contains("is not a LingXi plugin"), "{stderr}");
}

#[test]
fn a_core_module_is_not_a_component() {
    let dir = tempfile::tempdir().unwrap();
    let core = dir.path().join("core.wasm");
    // The smallest core module: the magic number and version 1.
    std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
    let (status, out) = check(&core, false);
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("error[component]: ") && out.contains("is a core WebAssembly module"),
        "{out}"
    );
}

#[test]
fn a_good_plugin_passes_and_the_json_report_lists_its_contracts() {
    let (status, out) = check(&misfit("", &[]), false);
    assert_eq!(status, 0, "{out}");
    assert!(out.ends_with("ok: no errors, 0 warning(s)\n"), "{out}");
    let (status, out) = check(&guest("testbed"), true);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(status, 0, "{report}");
    assert_eq!(report["ok"], true);
    assert_eq!(report["plugin"]["id"], "com.lingxi.testbed");
    assert!(report["sizeBytes"].as_u64().unwrap() > 10_000);
    assert!(report["compileMs"].as_u64().is_some());
    assert!(report["memoryBytes"].as_u64().unwrap() > 0);
    // It declares processExecution, which WASI can never honour.
    assert_eq!(report["warnings"], 1, "{report}");
    let tool = |name: &str| {
        let tools = report["tools"].as_array().unwrap();
        tools.iter().find(|t| t["name"] == name).cloned().unwrap()
    };
    let read = tool("contract.read");
    assert_eq!(read["validated"], true);
    assert_eq!(read["paths"][1]["parameter"], "/files/*");
    assert_eq!(read["paths"][1]["access"], "read");
    assert_eq!(tool("contract.slow")["timeoutMs"], 300);
    assert_eq!(tool("contract.approve")["requiresApproval"], true);
    assert_eq!(tool("contract.safe")["concurrencySafe"], true);
    assert_eq!(tool("ok")["validated"], false);
}

/// The code `check` compiled fills the compile cache, so the first `call`
/// after it loads it instead of compiling again.
#[test]
fn check_fills_the_compile_cache_for_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let testbed = guest("testbed");
    let out = launcher()
        .args(["check", testbed.to_str().unwrap(), "--cache-dir"])
        .arg(&cache)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The compiled component, beside the folder of compiled functions.
    let kept: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name != "functions")
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].ends_with(".cwasm"), "{kept:?}");
    assert!(cache.join("functions").is_dir());
    let call = launcher()
        .args(["call", testbed.to_str().unwrap(), "ok", "{}", "--cache-dir"])
        .arg(&cache)
        .current_dir(dir.path())
        .env("LINGXI_WASM_LOG", "debug")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&call.stderr);
    assert!(call.status.success(), "{stderr}");
    assert!(stderr.contains("loaded precompiled component"), "{stderr}");
}
