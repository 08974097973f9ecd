//! What a packed file may and may not make the launcher do when it is not
//! the running executable: its precompiled code is never run, its grants are
//! never applied unseen, and a relative directory in them is refused.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use lingxi_wasm_host::pack;

use crate::packed::{launcher, lingxi_spawn, pack as pack_plugin};
use crate::support::{Session, tool};

/// Rewrites the packed file `from` into `to` after `change` edited its header
/// and precompiled code, with a valid digest: anyone can do this.
fn forge(from: &Path, to: &Path, change: impl FnOnce(&mut pack::PackHeader, &mut Vec<u8>)) {
    let packed = pack::read(from).unwrap().unwrap();
    let launcher = pack::launcher_bytes(from).unwrap();
    let mut header = packed.header.clone();
    let mut precompiled = packed.precompiled().to_vec();
    change(&mut header, &mut precompiled);
    header.precompiled_len = precompiled.len() as u64;
    header.precompiled_blake3 = Some(pack::blake3_hex(&precompiled));
    let bytes = pack::build(&launcher, &header, packed.component(), &precompiled).unwrap();
    std::fs::write(to, bytes).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn foreign_precompiled_code_is_never_run_by_inspect_install_or_list() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let probe = pack_plugin(home, "probe", &[]);
    let other = pack_plugin(home, "quickstart", &[]);
    let other_code = pack::read(&other).unwrap().unwrap().precompiled().to_vec();
    // The probe's header and component, another plugin's native code.
    let forged = home.join("forged");
    forge(&probe, &forged, |_, code| *code = other_code);
    let forged_arg = forged.to_str().unwrap();
    let other_plugin = |text: &str| text.contains("my-plugin") || text.contains("status");

    let (ok, out, err) = launcher(home, home, &["inspect", forged_arg]);
    assert!(ok, "{err}");
    assert!(out.contains("plugin       com.lingxi.test-probe"), "{out}");
    assert!(out.contains("tool         probe.echo"), "{out}");
    assert!(
        !other_plugin(&out),
        "inspect ran the other plugin's code:\n{out}"
    );

    let project = tempfile::tempdir().unwrap();
    let install = [
        "install",
        forged_arg,
        "--project",
        project.path().to_str().unwrap(),
    ];
    let (ok, out, err) = launcher(home, home, &install);
    assert!(ok, "{err}");
    assert!(out.contains("installed com.lingxi.test-probe"), "{out}");
    let installed = project.path().join(".lingxi/plugins/com.lingxi.test-probe");
    let mut s = Session::spawn(lingxi_spawn(&installed, home));
    let r = s.call("1", "tool.execute", tool("probe.echo", "{}"));
    assert_eq!(
        r["result"], "echo:{}",
        "the installed file runs the probe: {r}"
    );

    let (ok, out, _) = launcher(home, project.path(), &["list"]);
    assert!(ok && out.contains("com.lingxi.test-probe 0.1.0"), "{out}");
    assert!(!other_plugin(&out), "{out}");
}

#[test]
fn install_never_applies_packed_grants_unseen() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let extra = home.join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    let testbed = pack_plugin(home, "testbed", &[]);
    // A file whose grants say: data under "../.." (resolved against the
    // plugin's folder by a LingXi host), and an extra folder to write.
    let smuggler = home.join("smuggler");
    forge(&testbed, &smuggler, |header, _| {
        header.policy.data_root = Some("../..".into());
        header.policy.allow_write = vec![extra.clone()];
    });
    let project = tempfile::tempdir().unwrap();
    let project_arg = project.path().to_str().unwrap();
    let smuggler_arg = smuggler.to_str().unwrap();

    // Without --keep-grants: installed with none of them.
    let (ok, out, err) = launcher(
        home,
        home,
        &["install", smuggler_arg, "--project", project_arg],
    );
    assert!(ok, "{err}");
    assert!(
        err.contains("are not kept") && err.contains("--keep-grants"),
        "{err}"
    );
    assert!(out.contains("allow-write    (none)"), "{out}");
    assert!(
        out.contains("data-root      ~/.lingxiagent/plugin-data (the default)"),
        "{out}"
    );
    let installed = project.path().join(".lingxi/plugins/com.lingxi.testbed");
    let mut s = Session::spawn(lingxi_spawn(&installed, home));
    let target = extra.join("written.txt");
    let r = s.call(
        "1",
        "tool.execute",
        tool("write-file", target.to_str().unwrap()),
    );
    let error = r["error"]
        .as_str()
        .unwrap_or_else(|| panic!("the write was allowed: {r}"));
    assert!(
        error.contains("[refused by the sandbox: write ")
            && error.contains(&format!("allow it with --allow-write {}", extra.display())),
        "{error}"
    );
    assert!(!target.exists());
    drop(s);

    // With it: every grant is printed, and the relative one refused.
    let keep = [
        "install",
        smuggler_arg,
        "--project",
        project_arg,
        "--keep-grants",
        "--force",
    ];
    let (ok, out, err) = launcher(home, home, &keep);
    assert!(
        out.contains("data-root      ../..")
            && out.contains(&format!("allow-write    {}", extra.display())),
        "{out}"
    );
    assert!(!ok && err.contains("must be absolute"), "{err}");

    // Spawned as it is, the file refuses to start on the relative path.
    let out = lingxi_spawn(&smuggler, home).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && stderr.contains("--data-root ../..: directories in a policy must be absolute"),
        "{stderr}"
    );
}

#[test]
fn a_non_utf8_argument_to_a_packed_plugin_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let exe = pack_plugin(dir.path(), "probe", &[]);
    let out = lingxi_spawn(&exe, dir.path())
        .arg(OsStr::from_bytes(b"inspect\xff"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is not valid UTF-8") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

/// A file packed before an empty allow-net reached nothing (format 3)
/// keeps the meaning it was packed with: every destination, now written
/// out as `*:*`. A file packed today with no destination reaches nothing.
#[test]
fn a_file_packed_before_explicit_destinations_keeps_its_meaning() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let today = pack_plugin(home, "testbed", &["--grant", "networkAccess"]);
    let old = home.join("old");
    forge(&today, &old, |header, _| {
        header.format = 3;
        header.policy.allow_net.clear();
    });
    let (ok, out, err) = launcher(home, home, &["inspect", old.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("allow-net      *:*"), "{out}");
    let port = crate::attacks::pong_server();
    let target = format!("127.0.0.1:{port}");
    let mut s = Session::spawn(lingxi_spawn(&old, home));
    let r = s.call("1", "tool.execute", tool("tcp", &target));
    assert_eq!(r["result"], "pong", "{r}");
    drop(s);
    let mut s = Session::spawn(lingxi_spawn(&today, home));
    let r = s.call("1", "tool.execute", tool("tcp", &target));
    let error = r["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&format!("allow it with --allow-net {target}")),
        "{r}"
    );
    let (_, stderr) = s.finish();
    assert!(
        stderr.contains("networkAccess is granted but no destination is"),
        "{stderr}"
    );
}
