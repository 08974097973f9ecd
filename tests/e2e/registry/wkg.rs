//! Interop with wasm-pkg-tools: what `wkg oci push` pushed we pull,
//! install and run; what we pushed `wkg oci pull` gets byte for byte.
//! wkg is the pinned version `scripts/toolchains wkg` builds into target/.

use std::path::PathBuf;
use std::process::Command;

use super::{Options, Registry, User, s};
use crate::support::{guest, workspace_root};

/// `wkg`, built by `scripts/toolchains wkg` if it is not yet.
fn wkg() -> PathBuf {
    let root = workspace_root();
    let status = Command::new(root.join("scripts/toolchains"))
        .arg("wkg")
        .status()
        .expect("cannot run scripts/toolchains");
    assert!(
        status.success(),
        "scripts/toolchains wkg failed (is crates.io reachable?)"
    );
    root.join("target/toolchains/wkg/bin/wkg")
}

#[test]
fn wkg_and_we_read_each_others_artifacts() {
    let wkg = wkg();
    let registry = Registry::start(Options::default());
    let host = format!("127.0.0.1:{}", registry.port);
    let probe = guest("probe");
    let user = User::new();
    let run_wkg = |args: &[&str]| {
        let out = Command::new(&wkg)
            .args(["oci"])
            .args(args)
            .env("HOME", user.home.path())
            .env("WKG_OCI_INSECURE", &host)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "wkg {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };

    // wkg pushes; we pull, install and run.
    run_wkg(&["push", &format!("{host}/by-wkg/probe:1"), s(&probe)]);
    let theirs = registry.reference("by-wkg/probe:1");
    let installed = user.run(&["install", &theirs]).ok();
    assert!(
        installed
            .out
            .contains("installed com.lingxi.test-probe 0.1.0"),
        "{}",
        installed.out
    );
    assert!(
        installed.out.contains(&format!("from           {theirs}")),
        "{}",
        installed.out
    );
    let called = user
        .run(&["call", &theirs, "probe.echo", r#"{"text":"wkg"}"#])
        .ok();
    assert!(called.out.contains("wkg"), "{}", called.out);

    // We push; wkg pulls the same bytes.
    user.run(&["push", s(&probe), &registry.reference("by-us/probe:1")])
        .ok();
    let pulled = user.home.path().join("pulled.wasm");
    run_wkg(&["pull", &format!("{host}/by-us/probe:1"), "-o", s(&pulled)]);
    assert_eq!(
        std::fs::read(&pulled).unwrap(),
        std::fs::read(&probe).unwrap()
    );
}
