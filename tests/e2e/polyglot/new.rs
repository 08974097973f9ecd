//! `lingxi-wasm-run new <DIR> --lang rust|python|js`: the generated project
//! builds with its own build command, passes `check`, and its own test
//! (one exchange replayed through the launcher) passes.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Lang, launcher, toolchain, workspace_root};

/// Runs `new` for `lang` into a fresh folder and returns (tempdir, project).
fn create(lang: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("my-plugin");
    let out = launcher()
        .args(["new", project.to_str().unwrap(), "--lang", lang])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("created") && said.contains("com.example.my-plugin"),
        "{said}"
    );
    (tmp, project)
}

/// Runs `command` in `dir`, failing with its output.
fn run(mut command: Command, dir: &Path) {
    let out = command.current_dir(dir).output().unwrap();
    assert!(
        out.status.success(),
        "{command:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `lingxi-wasm-run check` passes on the built component.
fn check(component: &Path) {
    let out = launcher().arg("check").arg(component).output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "check failed:\n{report}");
    assert!(
        report.contains("plugin   com.example.my-plugin 0.1.0"),
        "{report}"
    );
    assert!(report.contains("tool     greet"), "{report}");
    // A new project is fine as it is: nothing to warn about (componentize-py
    // imports sockets whatever the plugin does).
    assert!(!report.contains("warning["), "{report}");
}

/// The project's own test command, with this build of the launcher.
fn own_test(program: &str, args: &[&str], dir: &Path) {
    let mut command = if program == "npm" {
        npm()
    } else {
        Command::new(program)
    };
    command
        .args(args)
        .env("LINGXI_WASM_RUN", env!("CARGO_BIN_EXE_lingxi-wasm-run"))
        .env("HOME", crate::support::test_home())
        .env(
            "LINGXI_WASM_CACHE",
            workspace_root().join("target/e2e-cache"),
        );
    run(command, dir);
}

/// The `sh` block of the book that follows `marker`.
fn book_block(page: &str, marker: &str) -> String {
    let text = std::fs::read_to_string(workspace_root().join(page)).unwrap();
    let after = &text[text
        .find(marker)
        .unwrap_or_else(|| panic!("{page}: no {marker:?}"))..];
    let start = after.find("```sh\n").expect("an sh block") + "```sh\n".len();
    let end = after[start..].find("\n```").expect("the block's end");
    after[start..start + end].to_owned()
}

/// The book's whole loop for Rust (docs/src/plugins/rust.md), run as it is
/// written: `new`, the build, the project's own test, check, call, a raw
/// session, pack and install. Built into a target folder of its own (so
/// the project's test must find the component there), without a warning.
#[test]
fn new_rust_project_and_the_books_loop_run_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let block = book_block("docs/src/plugins/rust.md", "The whole loop");
    let launcher_dir = Path::new(env!("CARGO_BIN_EXE_lingxi-wasm-run"))
        .parent()
        .unwrap();
    let path = std::env::join_paths(std::iter::once(launcher_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &block])
        .current_dir(tmp.path())
        .env("PATH", path)
        .env("HOME", &home)
        .env("CARGO_TARGET_DIR", workspace_root().join("target/new-rust"))
        .env(
            "LINGXI_WASM_CACHE",
            workspace_root().join("target/e2e-cache"),
        )
        .env_remove("LINGXI_WASM_LOG")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "the loop failed:\n{stdout}\n{stderr}");
    for said in [
        "Hello, Ada!",
        "plugin   com.example.my-plugin 0.1.0",
        "\"result\":\"Hello, Ada!\"",
    ] {
        assert!(stdout.contains(said), "{said:?} not in:\n{stdout}");
    }
    assert!(!stdout.contains("warning["), "{stdout}");
    assert!(!stderr.contains("warning:"), "{stderr}");
    assert!(tmp.path().join("my-plugin/greeter").is_file());
    assert!(
        home.join(".lingxiagent/plugins/com.example.my-plugin")
            .is_file()
    );
}

#[test]
fn new_python_project_builds_checks_and_passes_its_test() {
    let (_tmp, project) = create("python");
    // The pinned componentize-py the tests already installed (the script
    // would otherwise make a .venv of its own from requirements.lock).
    let componentize = toolchain(Lang::Python).join("bin/componentize-py");
    let mut build = Command::new(project.join("build.sh"));
    build.env("COMPONENTIZE_PY", componentize);
    run(build, &project);
    check(&project.join("build/plugin.wasm"));
    own_test(
        "python3",
        &["-m", "unittest", "-q", "test_exchange"],
        &project,
    );
}

#[test]
fn new_refuses_a_folder_in_use_and_bad_ids() {
    let (_tmp, project) = create("rust");
    let out = launcher()
        .args(["new", project.to_str().unwrap(), "--lang", "python"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not an empty folder"));
    let out = launcher()
        .args([
            "new",
            project.with_file_name("other").to_str().unwrap(),
            "--lang",
            "js",
            "--id",
            "Bad Id",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("reverse-DNS id"));
}

#[test]
fn new_js_project_builds_checks_and_passes_its_test() {
    let (_tmp, project) = create("js");
    // `npm install` would fetch what the tests already installed from the
    // same pins: link it instead.
    let modules = toolchain(Lang::JavaScript).join("node_modules");
    std::os::unix::fs::symlink(modules, project.join("node_modules")).unwrap();
    let mut build = npm();
    build.args(["run", "--silent", "build"]);
    run(build, &project);
    check(&project.join("build/plugin.wasm"));
    own_test("npm", &["test", "--silent"], &project);
}

/// npm with its cache and logs in the test run's folders, never in HOME.
fn npm() -> Command {
    let mut command = Command::new("npm");
    command.env("HOME", crate::support::test_home()).env(
        "npm_config_cache",
        workspace_root().join("target/toolchains/cache/npm"),
    );
    command
}
