//! The helper libraries' own unit tests (runtime semantics, exact texts,
//! schema builders), run natively: Python's `unittest`, Node's test runner.

use std::process::Command;

use crate::support::{Lang, toolchain, workspace_root};

fn run(program: &str, args: &[&str], lang: Lang) {
    toolchain(lang);
    let root = workspace_root();
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
        Lang::Python,
    );
}

/// The TypeScript declarations compile (strict), with the toolchain's tsc.
#[test]
fn javascript_declarations_type_check() {
    let tsc = toolchain(Lang::JavaScript).join("node_modules/.bin/tsc");
    let tsc = tsc.to_str().expect("a UTF-8 path");
    run(
        tsc,
        &["--noEmit", "--strict", "sdk/js/lingxi-plugin.d.ts"],
        Lang::JavaScript,
    );
}

#[test]
fn javascript_helper_unit_tests() {
    run("node", &["--test", "sdk/js/test/"], Lang::JavaScript);
}
