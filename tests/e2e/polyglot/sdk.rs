//! The helper libraries' own unit tests (runtime semantics, exact texts,
//! schema builders), run natively: Python's `unittest`, Node's test runner.

use std::process::Command;

use crate::support::workspace_root;

fn run(program: &str, args: &[&str], toolchain: &str) {
    let root = workspace_root();
    let installed = Command::new(root.join("scripts").join("toolchains"))
        .arg(toolchain)
        .status()
        .expect("cannot run scripts/toolchains");
    assert!(installed.success(), "scripts/toolchains {toolchain} failed");
    let out = Command::new(program)
        .args(args)
        .current_dir(&root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report = String::from_utf8_lossy(&out.stderr);
    assert!(
        !report.contains("skipped="),
        "tests were skipped:\n{report}"
    );
}

#[test]
fn python_helper_unit_tests() {
    run(
        "python3",
        &["-m", "unittest", "discover", "-s", "sdk/python/tests"],
        "py",
    );
}

#[test]
fn javascript_helper_unit_tests() {
    run("node", &["--test", "sdk/js/test/"], "js");
}
