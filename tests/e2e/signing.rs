//! Signed packages end to end: `keygen`, `pack --sign`, and what `install`,
//! `list` and `inspect` make of a good, a bad, an unknown and a missing
//! signature.

use std::path::{Path, PathBuf};

use lingxi_wasm_host::pack;

use crate::packed::{launcher, lingxi_spawn, pack as pack_plugin};
use crate::support::{Session, tool};

/// `keygen -o DIR/NAME --no-password`: the key pair's paths.
fn keygen(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let prefix = dir.join(name);
    let (ok, out, err) = launcher(dir, dir, &["keygen", "-o", s(&prefix), "--no-password"]);
    assert!(ok, "{err}");
    assert!(out.contains("public key"), "{out}");
    (
        dir.join(format!("{name}.key")),
        dir.join(format!("{name}.pub")),
    )
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A copy of the packed file `from` whose component got one more custom
/// section (still a valid component), with a valid digest: what anyone who
/// edits a signed file can produce.
fn tamper(from: &Path, to: &Path) {
    let packed = pack::read(from).unwrap().unwrap();
    let launcher = pack::launcher_bytes(from).unwrap();
    let mut component = packed.component().to_vec();
    // Custom section: id 0, size, name length, name, contents.
    component.extend_from_slice(&[0, 5, 3, b'e', b'v', b'l', b'!']);
    let mut header = packed.header.clone();
    header.component_sha256 = pack::sha256_hex(&component);
    header.component_len = component.len() as u64;
    let bytes = pack::build(&launcher, &header, &component, packed.precompiled()).unwrap();
    std::fs::write(to, bytes).unwrap();
}

/// Writes to `to` the packed file `from` (read as `packed`) with `header`
/// instead of its own, and a valid digest: what anyone can make of it.
fn repack(from: &Path, packed: &pack::Packed, header: &pack::PackHeader, to: &Path) {
    let bytes = pack::build(
        &pack::launcher_bytes(from).unwrap(),
        header,
        packed.component(),
        packed.precompiled(),
    )
    .unwrap();
    std::fs::write(to, bytes).unwrap();
}

#[test]
fn signed_install_list_and_inspect_show_who_signed() {
    let dir = tempfile::tempdir().unwrap();
    let (d, project) = (dir.path(), tempfile::tempdir().unwrap());
    let (key, public) = keygen(d, "alice");
    let signed = pack_plugin(d, "probe", &["--sign", s(&key)]);

    let install = |extra: &[&str]| {
        let mut args = vec!["install", s(&signed), "--project", s(project.path())];
        args.extend_from_slice(extra);
        launcher(d, d, &args)
    };
    let (ok, out, err) = install(&["--signed-only", "--trust", s(&public)]);
    assert!(ok, "{err}");
    assert!(out.contains("signature      signed by key "), "{out}");
    assert!(out.contains("verified"), "{out}");

    // The installed file keeps the signature: list verifies it again, with
    // the key in the user's trusted-keys file (named by its comment).
    std::fs::create_dir_all(d.join(".lingxiagent")).unwrap();
    std::fs::copy(&public, d.join(".lingxiagent/lingxi-wasm-trusted-keys")).unwrap();
    let (ok, out, err) = launcher(d, d, &["list", "--project", s(project.path())]);
    assert!(ok, "{err}");
    assert!(
        out.contains("signature      signed by key") && out.contains("lingxi-wasm public key"),
        "{out}"
    );
    let (ok, out, _) = launcher(d, d, &["inspect", s(&signed)]);
    assert!(ok);
    assert!(out.contains("signature    signed by key"), "{out}");
    assert!(out.contains(", verified"), "{out}");
    // Without the key, nothing is proven and inspect says so.
    std::fs::remove_file(d.join(".lingxiagent/lingxi-wasm-trusted-keys")).unwrap();
    let (_, out, _) = launcher(d, d, &["inspect", s(&signed)]);
    assert!(
        out.contains("which you do not trust: not verified"),
        "{out}"
    );
    // A trusted-keys file someone else can write is not used.
    let keys = d.join(".lingxiagent/lingxi-wasm-trusted-keys");
    std::fs::copy(&public, &keys).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o666)).unwrap();
    let (ok, _, err) = launcher(d, d, &["list"]);
    assert!(!ok);
    assert!(
        err.contains("are not used") && err.contains("chmod go-w"),
        "{err}"
    );
    std::fs::remove_file(&keys).unwrap();

    // It still runs as LingXi runs it.
    let installed = project.path().join(".lingxi/plugins/com.lingxi.test-probe");
    let mut session = Session::spawn(lingxi_spawn(&installed, d));
    let r = session.call("1", "tool.execute", tool("probe.echo", "hi"));
    assert_eq!(r["result"], "echo:hi", "{r}");
    session.finish();
}

#[test]
fn signed_only_refuses_unsigned_and_unknown_keys() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, alice) = keygen(d, "alice");
    let (mallory_key, _) = keygen(d, "mallory");
    let unsigned = pack_plugin(d, "probe", &[]);
    let by_mallory = d.join("by-mallory");
    let (ok, _, err) = launcher(
        d,
        d,
        &[
            "pack",
            s(&crate::support::guest("probe")),
            "-o",
            s(&by_mallory),
            "--sign",
            s(&mallory_key),
        ],
    );
    assert!(ok, "{err}");

    for (file, what) in [
        (&unsigned, "unsigned"),
        (&by_mallory, "which you do not trust"),
    ] {
        let project = tempfile::tempdir().unwrap();
        let args = ["install", s(file), "--project", s(project.path())];
        let (ok, out, err) = launcher(
            d,
            d,
            &[&args[..], &["--signed-only", "--trust", s(&alice)]].concat(),
        );
        assert!(!ok, "{what} was installed under --signed-only:\n{out}");
        assert!(
            err.contains(what) && err.contains("--signed-only refuses it"),
            "{err}"
        );
        assert!(!project.path().join(".lingxi/plugins").exists());
        // Without --signed-only it installs, with a note.
        let (ok, _, err) = launcher(d, d, &[&args[..], &["--trust", s(&alice)]].concat());
        assert!(ok, "{err}");
        assert!(
            err.contains(&format!("note: {}", file.display())) && err.contains(what),
            "{err}"
        );
    }
    // A bare component is not a signed package either.
    let project = tempfile::tempdir().unwrap();
    let probe = crate::support::guest("probe");
    let (ok, _, err) = launcher(
        d,
        d,
        &[
            "install",
            s(&probe),
            "--project",
            s(project.path()),
            "--signed-only",
        ],
    );
    assert!(!ok);
    assert!(err.contains("not a signed package"), "{err}");
}

#[test]
fn a_tampered_signed_payload_is_never_installed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (key, public) = keygen(d, "alice");
    let signed = pack_plugin(d, "probe", &["--sign", s(&key)]);
    let tampered = d.join("tampered");
    tamper(&signed, &tampered);
    // The file itself is well-formed (its digest matches): only the
    // signature tells.
    assert!(pack::read(&tampered).unwrap().is_some());

    for extra in [&["--signed-only"][..], &[]] {
        let project = tempfile::tempdir().unwrap();
        let args = [
            "install",
            s(&tampered),
            "--project",
            s(project.path()),
            "--trust",
            s(&public),
        ];
        let (ok, out, err) = launcher(d, d, &[&args[..], extra].concat());
        assert!(!ok, "a tampered package was installed:\n{out}");
        assert!(
            err.contains("BAD SIGNATURE") && err.contains("not installed"),
            "{err}"
        );
        assert!(!project.path().join(".lingxi/plugins").exists());
    }
    let (ok, out, err) = launcher(d, d, &["inspect", s(&tampered), "--trust", s(&public)]);
    assert!(out.contains("signature    BAD SIGNATURE"), "{out}");
    assert!(
        !ok && err.contains("do not install or run this file"),
        "{err}"
    );

    // A signature moved onto another plugin's package.
    let other = pack_plugin(d, "quickstart", &[]);
    let moved = d.join("moved");
    let packed = pack::read(&other).unwrap().unwrap();
    let mut header = packed.header.clone();
    header.signature = pack::read(&signed).unwrap().unwrap().header.signature;
    repack(&other, &packed, &header, &moved);
    let project = tempfile::tempdir().unwrap();
    let (ok, _, err) = launcher(
        d,
        d,
        &[
            "install",
            s(&moved),
            "--project",
            s(project.path()),
            "--trust",
            s(&public),
        ],
    );
    assert!(!ok);
    assert!(err.contains("BAD SIGNATURE"), "{err}");
    // Even when nobody trusts the key: the signature names another plugin.
    let project = tempfile::tempdir().unwrap();
    let args = ["install", s(&moved), "--project", s(project.path())];
    let (ok, _, err) = launcher(d, d, &args);
    assert!(!ok);
    assert!(
        err.contains("BAD SIGNATURE") && err.contains("signed plugin com.lingxi.test-probe"),
        "{err}"
    );
}

#[test]
fn password_protected_keys_sign_with_the_right_password_only() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = |password: &str, args: &[&str]| {
        let out = crate::support::launcher()
            .args(args)
            .env("HOME", d)
            .env("LINGXI_WASM_KEY_PASSWORD", password)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let prefix = d.join("team");
    let (ok, err) = run("correct horse", &["keygen", "-o", s(&prefix)]);
    assert!(ok, "{err}");
    let key = d.join("team.key");
    assert!(
        std::fs::read_to_string(&key)
            .unwrap()
            .contains("lingxi-wasm secret key")
    );
    let probe = crate::support::guest("probe");
    let out = d.join("signed");
    let (ok, err) = run(
        "wrong",
        &["pack", s(&probe), "-o", s(&out), "--sign", s(&key)],
    );
    assert!(!ok);
    assert!(
        err.contains("cannot open the secret key") && err.contains("LINGXI_WASM_KEY_PASSWORD"),
        "{err}"
    );
    assert!(!out.exists());
    let (ok, err) = run(
        "correct horse",
        &["pack", s(&probe), "-o", s(&out), "--sign", s(&key)],
    );
    assert!(ok, "{err}");
    let (_, stdout, _) = launcher(
        d,
        d,
        &["inspect", s(&out), "--trust", s(&d.join("team.pub"))],
    );
    assert!(stdout.contains(", verified"), "{stdout}");
}

/// A signature by `key` over `component` whose signed comment names
/// `id` and `version`, as anyone holding the key can make one.
fn sign_as(key: &Path, component: &[u8], id: &str, version: &str) -> String {
    let text = std::fs::read_to_string(key).unwrap();
    let boxed = minisign::SecretKeyBox::from_string(&text).unwrap();
    let secret = minisign::SecretKey::from_unencrypted_box(boxed).unwrap();
    let comment = format!(
        "lingxi-wasm plugin={id} version={version} component-sha256={} timestamp=1",
        pack::sha256_hex(component)
    );
    let signature = minisign::sign(
        None,
        &secret,
        std::io::Cursor::new(component),
        Some(&comment),
        None,
    )
    .unwrap();
    signature.into_string()
}

#[test]
fn a_header_edited_to_match_a_signature_for_another_plugin_is_caught() {
    // Mallory signs the probe's component as "com.mallory.tool" and edits
    // the (unsigned) header to say so: the comment then matches the header,
    // but not the component's own manifest, which is what gets installed.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (key, public) = keygen(d, "mallory");
    let plain = pack_plugin(d, "probe", &[]);
    let packed = pack::read(&plain).unwrap().unwrap();
    let mut header = packed.header.clone();
    header.plugin_id = "com.mallory.tool".into();
    header.signature = Some(sign_as(
        &key,
        packed.component(),
        "com.mallory.tool",
        &header.plugin_version,
    ));
    let forged = d.join("forged");
    repack(&plain, &packed, &header, &forged);

    let project = tempfile::tempdir().unwrap();
    let args = [
        "install",
        s(&forged),
        "--project",
        s(project.path()),
        "--trust",
        s(&public),
        "--signed-only",
    ];
    let (ok, out, err) = launcher(d, d, &args);
    assert!(!ok, "installed a plugin signed as another:\n{out}");
    assert!(
        err.contains("BAD SIGNATURE")
            && err.contains("signed plugin com.mallory.tool")
            && err.contains("not installed"),
        "{err}"
    );
    assert!(!project.path().join(".lingxi/plugins").exists());

    // `inspect` compares the header with the component and says so.
    let (ok, out, err) = launcher(d, d, &["inspect", s(&forged), "--trust", s(&public)]);
    assert!(!ok, "{out}");
    assert!(
        err.contains("its header says com.mallory.tool")
            && err.contains("its component is com.lingxi.test-probe")
            && err.contains("do not run it"),
        "{err}"
    );

    // The header's manifest swapped for another plugin's (what a file
    // running that plugin's native code would carry): caught the same way.
    let other = pack::read(&pack_plugin(d, "quickstart", &[]))
        .unwrap()
        .unwrap();
    let mut header = packed.header.clone();
    header.manifest = other.header.manifest.clone();
    let swapped = d.join("swapped");
    repack(&plain, &packed, &header, &swapped);
    let (ok, _, err) = launcher(d, d, &["inspect", s(&swapped)]);
    assert!(!ok);
    assert!(
        err.contains(
            "the manifest in its header (what a start answers with) is not its component's"
        ),
        "{err}"
    );
    // No manifest at all, and declared capabilities that only read alike.
    let mut header = packed.header.clone();
    header.manifest = None;
    repack(&plain, &packed, &header, &swapped);
    let (ok, _, err) = launcher(d, d, &["inspect", s(&swapped)]);
    assert!(!ok && err.contains("its header has no manifest"), "{err}");
    let mut header = packed.header.clone();
    header.declared = vec!["projectRead, networkAccess".into()];
    repack(&plain, &packed, &header, &swapped);
    let (ok, _, err) = launcher(d, d, &["inspect", s(&swapped)]);
    assert!(!ok && err.contains("its header says"), "{err}");
    // Header text reaches the terminal only through `printable`.
    let mut header = packed.header.clone();
    header.plugin_id = "com.x\u{1b}]0;PWNED\u{7}".into();
    repack(&plain, &packed, &header, &swapped);
    let (ok, out, err) = launcher(d, d, &["inspect", s(&swapped)]);
    assert!(
        !ok && err.contains("its header says com.x?]0;PWNED?"),
        "{err}"
    );
    assert!(!format!("{out}{err}").contains('\u{1b}'), "{out}{err}");
    // `list` too, of a forged file dropped into a project's plugins.
    let project = tempfile::tempdir().unwrap();
    let plugins = project.path().join(".lingxi/plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(&swapped, plugins.join("evil\u{1b}[2J")).unwrap();
    let (ok, out, err) = launcher(d, d, &["list", "--project", s(project.path())]);
    assert!(ok, "{err}");
    assert!(
        out.contains("com.x?]0;PWNED?") && out.contains("evil?[2J"),
        "{out}"
    );
    assert!(!out.contains('\u{1b}'), "{out:?}");
}
