//! A host of the previous release, 0.1.0 with tasks: bindings generated
//! from that release's WIT (frozen in `wit/history/0.1.0-tasks`), linked
//! on the pinned wasmtime as that release's host linked them. What the
//! versioning rules promise there (`wit/CHANGELOG.md`): a Rust plugin of
//! today's SDK imports only what it calls, so it loads and answers
//! (wasmtime matches its `@0.1.2` imports and exports to the host's
//! `@0.1.0`); a Python or JavaScript plugin imports every function of its
//! world, and `host-info` gained `secret` in 0.1.2, so the older host
//! refuses it, naming what it lacks.

use std::path::Path;

use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store};

use crate::support::{Lang, guest, polyglot, tokio};

mod previous {
    wasmtime::component::bindgen!({
        world: "lingxi-plugin",
        path: "../wit/history/0.1.0-tasks",
        imports: {
            "lingxi:plugin/logging.log": trappable,
            "lingxi:plugin/tasks.report-progress": trappable,
        },
        exports: { default: async },
    });

    /// A host of 0.1.0 has nothing `host-info` gained since.
    macro_rules! host_info_since_0_1_0 {
        () => {};
    }

    include!("../../../host/benches/embed/bare_imports.rs");
}

use previous::lingxi::plugin::types;

/// What the previous host sees of `component`: its manifest id, the
/// answer of `probe.echo` and its task kinds; the error if it does not
/// load or answer.
async fn in_previous_host(component: &Path) -> wasmtime::Result<(String, String, usize)> {
    let config = Config::new();
    let engine = Engine::new(&config)?;
    let component = Component::from_file(&engine, component)?;
    let mut linker = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    previous::LingxiPlugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    let state = previous::State {
        wasi: wasmtime_wasi::WasiCtx::builder().build(),
        table: ResourceTable::new(),
    };
    let mut store = Store::new(&engine, state);
    let plugin = previous::LingxiPlugin::instantiate_async(&mut store, &component, &linker).await?;
    let request = types::InitializeRequest {
        host_ipc_version: Some(1),
        core_version: None,
    };
    let exports = plugin.lingxi_plugin_plugin();
    let handshake = exports.call_initialize(&mut store, &request).await?;
    let handshake = handshake.map_err(wasmtime::Error::msg)?;
    let call = types::ToolCall {
        tool_name: "probe.echo".into(),
        arguments: "hi".into(),
        session_id: "s".into(),
        tool_call_id: "c".into(),
    };
    let echo =
        (exports.call_execute_tool(&mut store, &call).await?).map_err(wasmtime::Error::msg)?;
    let runner = plugin.lingxi_plugin_task_runner();
    let kinds = runner.call_kinds(&mut store).await?;
    Ok((handshake.manifest.id, echo, kinds.len()))
}

#[test]
fn todays_sdk_plugins_load_in_a_host_of_the_previous_release_when_they_use_nothing_new() {
    let plugins = [
        ("Rust", guest("probe"), true),
        ("Python", polyglot(Lang::Python, "probe"), false),
        ("JavaScript", polyglot(Lang::JavaScript, "probe"), false),
    ];
    let today = format!("lingxi:plugin/plugin@{}", lingxi_plugin_wit::VERSION);
    for (language, component, loads) in plugins {
        // Built against today's version, not the previous one.
        let bytes = std::fs::read(&component).unwrap();
        let needle = today.as_bytes();
        assert!(
            bytes.windows(needle.len()).any(|w| w == needle),
            "the {language} probe does not export {today}"
        );
        let seen = tokio().block_on(in_previous_host(&component));
        if !loads {
            // It imports `host-info.secret`, which 0.1.0 does not have.
            let error = format!("{:?}", seen.expect_err("refused"));
            assert!(error.contains("secret"), "{language}: {error}");
            continue;
        }
        let (id, echo, _kinds) =
            seen.unwrap_or_else(|e| panic!("the {language} probe in the 0.1.0 host: {e:?}"));
        assert_eq!(
            (id.as_str(), echo.as_str()),
            ("com.lingxi.test-probe", "echo:hi"),
            "{language}"
        );
    }
}
