//! What a plugin author and a user do with a registry.

use std::io::Cursor;

use base64::Engine;
use lingxi_wasm_host::pack;
use lingxi_wasm_registry::layout::{ComponentWorld, PluginLabels};
use lingxi_wasm_registry::{Client, PushRequest, Reference, RegistryOptions};

use super::{Options, Registry, User, keys, s};
use crate::conformance::replay_with;
use crate::packed::lingxi_spawn;
use crate::support::{guest, misfit, workspace_root};

const USER: &str = "alice";
const PASSWORD: &str = "s3cret-Pa55word";

/// The Done-when path: pushed with `--sign` to a registry with TLS and a
/// password, installed on a fresh HOME with `--signed-only` (credentials
/// from docker's config.json), it answers the Core transcripts as LingXi
/// spawns it, `list` says where it came from, and a second use needs no
/// registry. No output ever holds the password.
#[test]
fn a_signed_push_installs_signed_only_on_a_fresh_home_and_answers_the_core_transcripts() {
    let registry = Registry::start(Options {
        tls: true,
        auth: Some((USER, PASSWORD)),
    });
    let ca = registry.ca();
    let reference = registry.reference("team/probe:1.0");
    let probe = guest("probe");

    let mut author = User::new();
    let (secret, public) = keys(&author, "author");
    // Anonymous: refused, saying how to log in.
    author
        .run(&["push", s(&probe), &reference, "--registry-ca", s(&ca)])
        .refused("asks for credentials");
    // Without the CA: the TLS error, and the flag that would help.
    author
        .run(&["push", s(&probe), &reference])
        .refused("--registry-ca");
    author.env = vec![
        ("LINGXI_WASM_REGISTRY_USERNAME".into(), USER.into()),
        ("LINGXI_WASM_REGISTRY_PASSWORD".into(), PASSWORD.into()),
    ];
    let pushed = author
        .run(&[
            "push",
            s(&probe),
            &reference,
            "--sign",
            s(&secret),
            "--registry-ca",
            s(&ca),
        ])
        .ok();
    assert!(
        pushed.out.contains("digest         sha256:"),
        "{}",
        pushed.out
    );
    assert!(
        pushed.out.contains("signature      sha256:"),
        "{}",
        pushed.out
    );

    // A fresh machine with docker's credentials for the registry.
    let user = User::new();
    let docker = user.home.path().join(".docker");
    std::fs::create_dir_all(&docker).unwrap();
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"));
    let config =
        serde_json::json!({"auths": {format!("127.0.0.1:{}", registry.port): {"auth": auth}}});
    std::fs::write(docker.join("config.json"), config.to_string()).unwrap();
    // Without the author's key, --signed-only refuses it before it runs.
    let refused = user
        .run(&[
            "install",
            &reference,
            "--signed-only",
            "--registry-ca",
            s(&ca),
        ])
        .refused("--signed-only refuses it");
    assert!(refused.err.contains("--trust KEY.pub"), "{}", refused.err);
    let installed = user.installed("com.lingxi.test-probe");
    assert!(!installed.exists());
    let done = user
        .run(&[
            "install",
            &reference,
            "--signed-only",
            "--trust",
            s(&public),
            "--registry-ca",
            s(&ca),
        ])
        .ok();
    assert!(
        done.out.contains("signature      signed by key"),
        "{}",
        done.out
    );
    assert!(
        done.out
            .contains(&format!("from           {reference} (sha256:")),
        "{}",
        done.out
    );
    let packed = pack::read(&installed).unwrap().unwrap();
    let origin = packed
        .header
        .origin
        .clone()
        .expect("the origin is recorded");
    assert!(
        pushed.out.contains(&origin.digest),
        "{origin:?} {}",
        pushed.out
    );

    // The installed file is a LingXi plugin: the Core transcripts, spawned
    // as LingXi spawns it.
    let transcripts = workspace_root().join("tests/conformance");
    for name in ["spec7-core-dialect.jsonl", "spec7-doc-dialect.jsonl"] {
        replay_with(&transcripts.join(name), |_, _| {
            crate::support::Session::spawn(lingxi_spawn(&installed, user.home.path()))
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let listed = user.run(&["list"]).ok();
    assert!(
        listed
            .out
            .contains(&format!("from           {reference} ({})", origin.digest)),
        "{}",
        listed.out
    );

    // A second use reads the store: the registry is gone.
    drop(registry);
    let called = user
        .run(&["call", &reference, "probe.echo", r#"{"text":"again"}"#])
        .ok();
    assert!(called.out.contains("again"), "{}", called.out);
    assert!(called.err.contains("from the store"), "{}", called.err);
    for run in [&pushed, &done, &listed, &called, &refused] {
        assert!(!run.out.contains(PASSWORD) && !run.err.contains(PASSWORD));
    }
    let bytes = std::fs::read(&installed).unwrap();
    assert!(
        !bytes
            .windows(PASSWORD.len())
            .any(|w| w == PASSWORD.as_bytes())
    );
}

/// An artifact without a signature, and one whose signature (by a trusted
/// key, of these very bytes) claims other capabilities than the component
/// declares: both refused, nothing installed.
#[test]
fn unsigned_and_resigned_with_other_capabilities_artifacts_are_refused() {
    let registry = Registry::start(Options::default());
    let probe = guest("probe");
    let author = User::new();
    let (_, public) = keys(&author, "author");
    let unsigned = registry.reference("plugins/probe:unsigned");
    author.run(&["push", s(&probe), &unsigned]).ok();

    let user = User::new();
    let trust = ["--signed-only", "--trust", s(&public)];
    let refused = user
        .run(&[&["install", &unsigned][..], &trust].concat())
        .refused("has no signature in its registry");
    assert!(refused.err.contains("push --sign"), "{}", refused.err);
    assert!(!user.installed("com.lingxi.test-probe").exists());

    // Re-signed by the trusted key claiming one capability more.
    let secret = std::fs::read_to_string(author.home.path().join("author.key")).unwrap();
    let secret = minisign::SecretKeyBox::from_string(&secret)
        .and_then(minisign::SecretKey::from_unencrypted_box)
        .unwrap();
    let component = std::fs::read(&probe).unwrap();
    let comment = format!(
        "lingxi-wasm plugin=com.lingxi.test-probe version=0.1.0 component-sha256={} capabilities=networkAccess,projectRead timestamp=0",
        pack::sha256_hex(&component)
    );
    let forged = minisign::sign(None, &secret, Cursor::new(&component), Some(&comment), None)
        .unwrap()
        .into_string();
    let resigned = registry.reference("plugins/probe:resigned");
    let client = Client::new(RegistryOptions::default()).unwrap();
    let request = PushRequest {
        component: &component,
        world: ComponentWorld::default(),
        labels: PluginLabels {
            id: "com.lingxi.test-probe".into(),
            version: "0.1.0".into(),
            capabilities: vec!["networkAccess".into(), "projectRead".into()],
        },
        created: "2026-01-01T00:00:00Z".into(),
        signature: Some((forged, "key".into())),
    };
    let reference = Reference::parse(&resigned).unwrap();
    crate::support::tokio()
        .block_on(lingxi_wasm_registry::push(&client, &reference, request))
        .unwrap();
    let refused = user
        .run(&[&["install", &resigned][..], &trust].concat())
        .refused("declaring capabilities [networkAccess,projectRead], but this file declares [projectRead]");
    assert!(
        refused.err.contains("it was not installed"),
        "{}",
        refused.err
    );
    assert!(!user.installed("com.lingxi.test-probe").exists());
}

/// A newer tag of the same plugin that declares one capability more:
/// installing it shows the artifact's digest change and the increase,
/// and is refused until accepted.
#[test]
fn an_upgrade_by_tag_that_asks_for_more_is_refused_with_the_difference() {
    let registry = Registry::start(Options::default());
    let author = User::new();
    let (v1, v2) = (misfit("", &[]), misfit("net-unused", &[]));
    let (r1, r2) = (
        registry.reference("misfit:1"),
        registry.reference("misfit:2"),
    );
    author.run(&["push", s(&v1), &r1]).ok();
    author.run(&["push", s(&v2), &r2]).ok();

    let user = User::new();
    user.run(&["install", &r1]).ok();
    let refused = user
        .run(&["install", &r2])
        .refused("+ capability networkAccess");
    assert!(
        refused
            .out
            .contains(&format!("the artifact changes from {r1} (sha256:")),
        "{}",
        refused.out
    );
    let id = "com.example.misfit";
    let kept = pack::read(&user.installed(id)).unwrap().unwrap();
    assert!(kept.header.origin.unwrap().reference == r1);
    user.run(&["install", &r2, "--accept-new-grants"]).ok();
    let now = pack::read(&user.installed(id)).unwrap().unwrap();
    assert_eq!(now.header.origin.unwrap().reference, r2);

    // A tag moved in the registry: `install` asks it again (a call reads
    // the store).
    author.run(&["push", s(&v1), &r2]).ok();
    let again = user.run(&["install", &r2]).ok();
    assert!(
        again.out.contains("the artifact changes from"),
        "{}",
        again.out
    );
}
