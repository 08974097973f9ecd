//! The example runs as the book shows it (`docs/src/embedding.md`): on the
//! guest components the end-to-end tests build (the same `cargo build`, so
//! whichever runs first builds them), it prints the catalog, runs calls in
//! parallel, stops a runaway plugin at its deadline, isolates a crash and
//! keeps each session's memory apart. Run by `cargo test` (the README's
//! command) with the binary `cargo test` built: no second build of the
//! engine for other features.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_agent_host_runs_as_the_book_shows() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // tests/e2e/support.rs builds the same crates with the same arguments.
    let built = Command::new(cargo)
        .current_dir(&root)
        .args(["build", "--target", "wasm32-wasip2", "--profile", "guest"])
        .args(["-p", "probe", "-p", "quickstart", "-p", "testbed"])
        .args(["-p", "workspace-stats", "-p", "impostor", "-p", "indexer"])
        .args(["--target-dir", "target/guests"])
        .output()
        .expect("cargo runs");
    assert!(
        built.status.success(),
        "the guests did not build (rustup target add wasm32-wasip2?):\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let home = tempfile_dir();
    let out = Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .arg(root.join("target/guests/wasm32-wasip2/guest"))
        .env("HOME", &home)
        .output()
        .expect("agent-host runs");
    let _ = std::fs::remove_dir_all(&home);
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    assert!(
        out.status.success(),
        "agent-host failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "catalog: ",
        "parallel calls: ",
        "runaway stopped after 1.0 s",
        "crash in alice: ",
        "alice again: ok:after",
        "bob's memory: bob's note,",
    ] {
        assert!(text.contains(line), "agent-host did not print {line:?}");
    }
}

/// A new empty folder for the example's HOME (its plugins' storage).
fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agent-host-home-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}
