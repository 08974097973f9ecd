//! A pooled runtime's unit is one instance of any plugin: `pooled(n)` holds
//! n live sessions of a Rust, a Python and a JavaScript plugin alike (a
//! componentize-py component has more core instances than a Rust one),
//! the n+1th is refused naming the setting, and a pool whose unit cannot
//! hold one instance of a plugin refuses it at load with the numbers.

use std::path::PathBuf;

use lingxi_wasm_host::{
    CallError, CompileCache, InstanceShape, LoadError, PluginOptions, PluginSet, Pooling, Runtime,
    RuntimeConfig, SetError, no_grant,
};

use crate::support::{Lang, guest, polyglot, tokio, workspace_root};

const SESSIONS: u32 = 100;
const PROBE: &str = "com.lingxi.test-probe";

/// A runtime built as `config` says, with the tests' compile cache (a
/// debug host takes many seconds to compile the Python component).
fn runtime(config: RuntimeConfig) -> Runtime {
    let cache = CompileCache::new(workspace_root().join("target").join("e2e-cache"));
    Runtime::with_config(config)
        .unwrap()
        .with_cache(Some(cache))
}

/// The probe in each language the SDKs build.
fn probes() -> [(&'static str, PathBuf); 3] {
    [
        ("Rust", guest("probe")),
        ("Python", polyglot(Lang::Python, "probe")),
        ("JavaScript", polyglot(Lang::JavaScript, "probe")),
    ]
}

#[test]
fn a_pool_made_for_n_sessions_holds_n_sessions_of_a_plugin_in_any_language() {
    for (lang, probe) in probes() {
        tokio().block_on(async {
            let runtime = runtime(RuntimeConfig::pooled(SESSIONS));
            let mut set = PluginSet::new(runtime);
            let options = PluginOptions::grant(no_grant());
            set.load_file(&probe, options).await.unwrap();
            let mut sessions = Vec::new();
            for i in 0..SESSIONS {
                let session = set.session(format!("s{i}"), None).unwrap();
                if let Err(e) = session.start(PROBE).await {
                    panic!("{lang}: session {i} of {SESSIONS} did not start: {e}");
                }
                sessions.push(session);
            }
            // Every session's instance is live and answers.
            let answer = sessions[SESSIONS as usize - 1]
                .call_tool("probe.echo", "x", Default::default())
                .await
                .unwrap();
            assert_eq!(answer, "echo:x", "{lang}");
            // One more is refused, naming what reserves more.
            let extra = set.session("one-more", None).unwrap();
            let error = extra.start(PROBE).await.unwrap_err();
            assert!(
                matches!(error, CallError::Instantiate { .. })
                    && error.to_string().contains("RuntimeConfig::pooled"),
                "{lang}: {error}"
            );
            // A closed session gives its slot back.
            sessions.pop().unwrap().close().await;
            extra.start(PROBE).await.unwrap();
        });
    }
}

#[test]
fn a_pool_whose_unit_cannot_hold_one_instance_refuses_the_plugin_at_load_with_the_numbers() {
    // A unit of 2 core instances cannot hold the Rust probe (3).
    let narrow = RuntimeConfig {
        pooling: Some(Pooling {
            per_instance: InstanceShape {
                core_instances: 2,
                ..InstanceShape::default()
            },
            ..Pooling::for_instances(8)
        }),
        ..RuntimeConfig::default()
    };
    tokio().block_on(async {
        let mut set = PluginSet::new(runtime(narrow));
        let options = PluginOptions::grant(no_grant());
        let error = set.load_file(&guest("probe"), options).await.unwrap_err();
        let text = error.to_string();
        assert!(
            matches!(error, SetError::Load(LoadError::Pool { .. })),
            "{text}"
        );
        assert!(
            text.contains("3 core module instances")
                && text.contains("maximum of 2")
                && text.contains("Pooling::per_instance"),
            "{text}"
        );
        assert!(set.ids().next().is_none(), "nothing was added");
    });
}
