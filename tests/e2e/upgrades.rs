//! No silent escalation in the embedding API: `PluginSet::replace` puts a
//! new version (or new grants) in place of a plugin only if it reaches no
//! more, or the caller accepts the increase explicitly.

use lingxi_wasm_host::{Grant, NewGrants, PluginOptions, PluginSet, Runtime, SetError, no_grant};

use crate::support::{guest, misfit, tokio};

#[test]
fn a_replacement_that_reaches_more_is_refused_unless_accepted() {
    // The same plugin id twice: the second declares networkAccess too.
    let v1 = misfit("", &[]);
    let v2 = misfit("net-unused", &[]);
    tokio().block_on(async {
        let runtime = Runtime::new().unwrap();
        let load = |path: std::path::PathBuf| {
            let runtime = runtime.clone();
            async move { runtime.load_file(&path).await.unwrap() }
        };
        let mut set = PluginSet::new(runtime.clone());
        let as_declared = || PluginOptions::grant(Grant::default());
        set.add(load(v1.clone()).await, "v1", as_declared())
            .await
            .unwrap();

        // Under the same grant (as declared) it would get the network.
        let refused = set.replace(
            load(v2.clone()).await,
            "v2",
            as_declared(),
            NewGrants::Refuse,
        );
        match refused.await {
            Err(SetError::NewGrants { increases, .. }) => {
                let shown: Vec<String> = increases.iter().map(ToString::to_string).collect();
                assert_eq!(shown, ["capability networkAccess"]);
            }
            other => panic!("not refused: {:?}", other.map(|m| m.id.clone())),
        }
        // The set is unchanged: the plugin in place still answers.
        let session = set.session("s", None).unwrap();
        let options = lingxi_wasm_host::CallOptions::default();
        assert!(
            session
                .call_tool("misfit.echo", "{}", options.clone())
                .await
                .is_ok()
        );

        // Less is no increase; accepted, more goes in.
        let narrower = PluginOptions::grant(no_grant());
        set.replace(load(v1.clone()).await, "v1", narrower, NewGrants::Refuse)
            .await
            .unwrap();
        let accepted = set.replace(
            load(v2.clone()).await,
            "v2",
            as_declared(),
            NewGrants::Accept,
        );
        let manifest = accepted.await.unwrap();
        assert_eq!(manifest.capabilities.len(), 2);
        assert_eq!(set.ids().collect::<Vec<_>>(), ["com.example.misfit"]);

        // Nothing to replace.
        let other = set.replace(
            load(guest("probe")).await,
            "probe",
            as_declared(),
            NewGrants::Accept,
        );
        let error = other.await.unwrap_err();
        assert!(matches!(error, SetError::NotInSet { .. }), "{error}");
    });
}

/// `export` into the folder of an earlier export of the same plugin
/// updates it, under the same rule as `install`.
#[test]
fn an_export_update_that_reaches_more_is_refused_unless_accepted() {
    let v1 = misfit("", &[]);
    let v2 = misfit("net-unused", &[]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("package");
    let export = |component: &std::path::Path, extra: &[&str]| {
        let output = crate::support::launcher()
            .args(["export", "--format", "agent-plugin", "-o"])
            .arg(&out)
            .arg(component)
            .args(extra)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        (output.status.success(), text)
    };
    assert!(export(&v1, &[]).0);
    let (ok, text) = export(&v2, &[]);
    assert!(
        !ok && text.contains("  + capability networkAccess"),
        "{text}"
    );
    assert!(text.contains("--accept-new-grants"), "{text}");
    let (ok, text) = export(&v2, &["--accept-new-grants"]);
    assert!(ok, "{text}");
    let plugin_json = std::fs::read_to_string(out.join("plugin.json")).unwrap();
    assert!(plugin_json.contains("networkAccess"), "{plugin_json}");
    // Another plugin's package, or any other folder, is not written into.
    let (ok, text) = export(&guest("probe"), &[]);
    assert!(
        !ok && text.contains("holds the package of another plugin"),
        "{text}"
    );
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let (ok, text) = export(&v1, &[]);
    assert!(
        !ok && text.contains("neither an empty folder nor a package"),
        "{text}"
    );
}
