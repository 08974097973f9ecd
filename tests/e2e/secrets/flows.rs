//! A secret from `secret set` to a plugin LingXi spawns, and a plugin
//! that tries to let it out.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::json;

use super::{Keyring, Service, holds};
use crate::packed::lingxi_spawn;
use crate::registry::User;
use crate::support::{Lang, Session, guest, polyglot, tool};

const ID: &str = "com.lingxi.testbed";
const VALUE: &str = "tok-5ecret-0f-the-test-7731";
const SHOWN: &str = "[secret API_TOKEN]";
/// The testbed's secret tools' arguments.
const NAMED: &str = r#"{"name":"API_TOKEN"}"#;

/// `lingxi-wasm-run secret set ID NAME [more]` with the value on stdin.
fn secret_set(user: &User, name: &str, value: &str) -> std::process::Output {
    secret_set_with(user, name, value, &[])
}

fn secret_set_with(user: &User, name: &str, value: &str, more: &[&str]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lingxi-wasm-run"))
        .args(["secret", "set", ID, name])
        .args(more)
        .env("HOME", user.home.path())
        .envs(user.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{value}").unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// The installed file `exe` started as LingXi starts it (no arguments, an
/// allow-list environment), in a desktop session whose runtime folder is
/// `runtime_dir` (where the session bus is).
fn spawn_as_lingxi(exe: &std::path::Path, user: &User, runtime_dir: &str) -> Session {
    let mut spawn = lingxi_spawn(exe, user.home.path());
    spawn.env("XDG_RUNTIME_DIR", runtime_dir);
    Session::spawn(spawn)
}

#[test]
fn an_installed_plugin_spawned_as_lingxi_spawns_it_uses_its_keyring_secret_and_lets_it_out_nowhere()
{
    let keyring = Keyring::start();
    let service = Service::start();
    let mut user = User::new();
    // The desktop session's variable; the session bus is found under it.
    let runtime_dir = keyring.runtime_dir().display().to_string();
    user.env = vec![("XDG_RUNTIME_DIR".into(), runtime_dir.clone())];

    let set = secret_set(&user, "API_TOKEN", VALUE);
    let said = String::from_utf8_lossy(&set.stderr);
    assert!(set.status.success(), "{said}");
    assert!(said.contains("kept in the keyring"), "{said}");
    // Another client of the Secret Service reads what was stored.
    let service_name = format!("lingxi-wasm/{ID}");
    assert_eq!(
        keyring.lookup(&["service", &service_name, "username", "API_TOKEN"]),
        VALUE
    );
    let listed = user.run(&["secret", "list"]).ok();
    assert_eq!(listed.out.trim(), format!("{ID}\tAPI_TOKEN\tkeyring"));
    // A value on the command line is not taken; a short one is refused.
    let short = secret_set(&user, "SHORT", "abc");
    assert!(!short.status.success());
    assert!(String::from_utf8_lossy(&short.stderr).contains("at least 8 bytes"));

    // Installed with the secret bound to the service's host.
    let testbed = guest("testbed");
    let recordings = user.home.path().join("recordings");
    let allow = format!("127.0.0.1:{}", service.port);
    let installed = user
        .run(&[
            "install",
            testbed.to_str().unwrap(),
            "--secret",
            "API_TOKEN@127.0.0.1",
            "--grant",
            "networkAccess,projectRead",
            "--allow-net",
            &allow,
            "--allow-net",
            &format!("localhost:{}", service.port),
            "--record",
            recordings.to_str().unwrap(),
        ])
        .ok();
    assert!(
        installed.out.contains("secret         API_TOKEN@127.0.0.1"),
        "{}",
        installed.out
    );
    let exe = user.installed(ID);
    assert!(!holds(&exe, VALUE), "the value is in the installed file");

    // A packed file's own secret grants are not the user's: `call` does
    // not read the keyring for it (the file may claim any plugin id).
    let packed = user.home.path().join("packed");
    let args = [
        "pack",
        testbed.to_str().unwrap(),
        "--secret",
        "API_TOKEN",
        "-o",
    ];
    user.run(&[&args[..], &[packed.to_str().unwrap()]].concat())
        .ok();
    let self_granted = user.run(&["call", packed.to_str().unwrap(), "secret-length", NAMED]);
    assert!(!self_granted.ok, "{}", self_granted.out);
    assert!(
        self_granted
            .err
            .contains("grants itself the secrets API_TOKEN: not used here"),
        "{}",
        self_granted.err
    );
    assert!(
        self_granted.err.contains("secret API_TOKEN is not granted"),
        "{}",
        self_granted.err
    );

    // Spawned as LingXi spawns it: no arguments, an allow-list environment.
    let mut session = spawn_as_lingxi(&exe, &user, &runtime_dir);
    let init = session.call("1", "plugin.initialize", json!({"hostIPCVersion": 1}));
    assert_eq!(init["result"]["manifest"]["id"], ID, "{init}");
    let url = format!("http://127.0.0.1:{}/v1/items", service.port);
    let args =
        |via: &str, url: &str| json!({"name": "API_TOKEN", "url": url, "via": via}).to_string();
    let sent = session.call(
        "2",
        "tool.execute",
        tool("secret-http", &args("header", &url)),
    );
    assert_eq!(sent["result"], "status 200", "{sent}\n{}", session.stderr());
    let seen = service.seen.lock().unwrap().clone();
    assert!(
        seen.iter()
            .any(|r| r.contains(&format!("authorization: Bearer {VALUE}"))),
        "{seen:?}"
    );

    // Every channel: the value becomes its name, or the request is refused.
    let returned = session.call("3", "tool.execute", tool("secret-return", NAMED));
    assert_eq!(
        returned["result"],
        format!("the value is {SHOWN}"),
        "{returned}"
    );
    let printed = session.call("4", "tool.execute", tool("secret-print", NAMED));
    assert_eq!(printed["result"], "printed", "{printed}");
    let failed = session.call("5", "tool.execute", tool("secret-fail", NAMED));
    assert!(
        failed["error"]
            .as_str()
            .unwrap_or("")
            .contains(&format!("failing with {SHOWN}")),
        "{failed}"
    );
    let file = session.call("6", "tool.execute", tool("secret-file", NAMED));
    assert_eq!(file["result"], "opened: false", "{file}");
    let before = service.seen.lock().unwrap().len();
    let elsewhere = format!("http://localhost:{}/collect", service.port);
    for (id, via) in [
        ("7", "header"),
        ("8", "basic"),
        ("9", "query"),
        ("10", "body"),
    ] {
        let refused = session.call(
            id,
            "tool.execute",
            tool("secret-http", &args(via, &elsewhere)),
        );
        let error = refused["error"].as_str().unwrap_or("");
        assert!(error.contains("HttpRequestDenied"), "{via}: {refused}");
        assert!(
            error.contains("refused before it was sent: secret API_TOKEN is in"),
            "{via}: {refused}"
        );
        assert!(
            error.contains("--secret API_TOKEN@localhost"),
            "{via}: {refused}"
        );
    }
    assert_eq!(
        service.seen.lock().unwrap().len(),
        before,
        "a refused request reached the service"
    );
    let (status, stderr) = session.finish();
    assert!(status.success(), "{stderr}");
    for line in [
        format!("stdout has {SHOWN}"),
        format!("stderr has {SHOWN}"),
        format!("the log has {SHOWN}"),
        format!("/exfil/{SHOWN}"),
        "refused before it was sent".to_owned(),
    ] {
        assert!(stderr.contains(&line), "{line}:\n{stderr}");
    }
    assert!(!stderr.contains(VALUE), "the value is on stderr:\n{stderr}");
    // The session's recording (requests, responses, stderr, receipts).
    assert!(recordings.is_dir());
    assert!(!holds(&recordings, VALUE), "the value is in a recording");
    assert!(holds(&recordings, SHOWN));

    // Every line the launcher logs hides the value, a dependency's trace
    // lines too (wasi:http's name the request's path and query).
    user.env.push(("LINGXI_WASM_LOG".into(), "trace".into()));
    let query = args("query", &url);
    let traced = user.run(&[
        "call",
        testbed.to_str().unwrap(),
        "secret-http",
        &query,
        "--secret",
        "API_TOKEN@127.0.0.1",
        "--grant",
        "networkAccess",
        "--allow-net",
        &allow,
    ]);
    user.env.pop();
    assert_eq!(traced.out.trim(), "status 200", "{}", traced.err);
    assert!(
        traced.err.contains("TRACE"),
        "no trace lines:\n{}",
        traced.err
    );
    assert!(!traced.err.contains(VALUE), "the value is in a trace line");

    // `learn` writes the secret's name as granted, never its value.
    let policy = user.home.path().join("learned.toml");
    let learned = user
        .run(&[
            "learn",
            testbed.to_str().unwrap(),
            "--secret",
            "API_TOKEN@127.0.0.1",
            "--call",
            "secret-length",
            NAMED,
            "-o",
            policy.to_str().unwrap(),
        ])
        .ok();
    let text = std::fs::read_to_string(&policy).unwrap();
    assert!(
        text.contains("secret = [\n  # tool.execute 'secret-length' read the secret\n  \"API_TOKEN@127.0.0.1\",\n]"),
        "{text}\n{}",
        learned.err
    );
    assert!(!text.contains(VALUE) && !learned.out.contains(VALUE) && !learned.err.contains(VALUE));

    // Removed: the next start says how to set it; the plugin is told.
    user.run(&["secret", "rm", ID, "API_TOKEN"]).ok();
    assert_eq!(
        keyring.lookup(&["service", &service_name, "username", "API_TOKEN"]),
        ""
    );
    let mut session = spawn_as_lingxi(&exe, &user, &runtime_dir);
    let gone = session.call("1", "tool.execute", tool("secret-return", NAMED));
    assert!(
        gone["error"]
            .as_str()
            .unwrap_or("")
            .contains("secret set com.lingxi.testbed API_TOKEN"),
        "{gone}"
    );
}

/// The Python and JavaScript SDKs' `ctx.secret`, in real components: the
/// value of a granted secret (kept in the private file: no keyring here),
/// hidden in the result; a secret not granted names the flag.
#[test]
fn python_and_javascript_plugins_read_a_granted_secret_through_their_sdk() {
    let user = User::new();
    let set = secret_set_with(&user, "API_TOKEN", VALUE, &["--store", "file"]);
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    for lang in [Lang::Python, Lang::JavaScript] {
        let plugin = polyglot(lang, "testbed");
        let plugin = plugin.to_str().unwrap();
        let read = user
            .run(&["call", plugin, "secret", NAMED, "--secret", "API_TOKEN"])
            .ok();
        assert_eq!(read.out.trim(), format!("the value is {SHOWN}"), "{lang:?}");
        let refused = user.run(&["call", plugin, "secret", NAMED]);
        assert!(!refused.ok, "{lang:?}: {}", refused.out);
        assert!(
            refused.err.contains("grant it with --secret API_TOKEN"),
            "{lang:?}: {}",
            refused.err
        );
    }
}
