//! A host of the previous release, 0.1.0 with tasks: bindings generated
//! from that release's WIT (frozen in `wit/history/0.1.0-tasks`), linked
//! on the pinned wasmtime as that release's host linked them. Today's
//! SDK-built plugins (of 0.1.1) load there and answer, as the versioning
//! rules promise for a component of a world that existed in 0.1.0 whose
//! imports gained nothing since (`wit/CHANGELOG.md`): wasmtime matches
//! their `@0.1.1` imports and exports to the `@0.1.0` of the host.

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
fn todays_sdk_plugins_load_in_a_host_of_the_previous_release() {
    let plugins = [
        ("Rust", guest("probe")),
        ("Python", polyglot(Lang::Python, "probe")),
        ("JavaScript", polyglot(Lang::JavaScript, "probe")),
    ];
    let today = format!("lingxi:plugin/plugin@{}", lingxi_plugin_wit::VERSION);
    for (language, component) in plugins {
        // Built against today's version, not the previous one.
        let bytes = std::fs::read(&component).unwrap();
        let needle = today.as_bytes();
        assert!(
            bytes.windows(needle.len()).any(|w| w == needle),
            "the {language} probe does not export {today}"
        );
        let seen = tokio().block_on(in_previous_host(&component));
        let (id, echo, _kinds) =
            seen.unwrap_or_else(|e| panic!("the {language} probe in the 0.1.0 host: {e:?}"));
        assert_eq!(
            (id.as_str(), echo.as_str()),
            ("com.lingxi.test-probe", "echo:hi"),
            "{language}"
        );
    }
}
