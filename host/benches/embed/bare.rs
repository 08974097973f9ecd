//! The floor of an in-process call: wasmtime calling the probe's
//! `execute-tool` export on one instance, with bindings of its own and no
//! sandbox bookkeeping (no deadline timer, no output budget, no counters,
//! no memory limiter, no epoch ticker, no session routing), on an engine
//! configured as a `Runtime`'s in what a call touches: async calls, epoch
//! interruption, 256 MiB memory reservations without guard pages. Its
//! instances are allocated on demand, not pooled (the pooling allocator
//! measured the same per call: the book, `performance/in-process.md`), and
//! its code is in wasmtime's own code memory.

use std::path::Path;
use std::time::Instant;

use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store};
use wasmtime_wasi::WasiCtx;

wasmtime::component::bindgen!({
    world: "lingxi-plugin",
    path: "../wit",
    imports: {
        "lingxi:plugin/logging.log": trappable,
        "lingxi:plugin/tasks.report-progress": trappable,
    },
    exports: { default: async },
});

// The imports of the floor: nothing to read, a log that goes nowhere, no
// tasks (shared with the e2e suite's host of the previous release).
/// `host-info.secret` (since 0.1.2): the floor grants no secret.
macro_rules! host_info_since_0_1_0 {
    () => {
        fn secret(&mut self, name: String) -> Result<String, String> {
            Err(format!("secret {name} is not granted"))
        }
    };
}

include!("bare_imports.rs");

/// A compiled component and its linker, on an engine of its own.
pub struct Prepared {
    engine: Engine,
    component: Component,
    linker: Linker<State>,
}

impl Prepared {
    pub fn new(component: &Path) -> Prepared {
        let mut config = Config::new();
        config.epoch_interruption(true);
        config.memory_reservation(256 << 20);
        config.memory_guard_size(0);
        config.memory_reservation_for_growth(0);
        let engine = Engine::new(&config).expect("engine");
        let component = Component::from_file(&engine, component).expect("component");
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).expect("wasi");
        LingxiPlugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s).expect("link");
        Prepared {
            engine,
            component,
            linker,
        }
    }
}

/// One initialized instance of a component.
pub struct Bare {
    store: Store<State>,
    bindings: LingxiPlugin,
}

impl Bare {
    pub async fn new(component: &Path) -> Bare {
        Bare::instance(&Prepared::new(component)).await
    }

    /// A fresh initialized instance of a prepared component.
    pub async fn instance(prepared: &Prepared) -> Bare {
        let Prepared {
            engine,
            component,
            linker,
        } = prepared;
        let state = State {
            wasi: WasiCtx::builder().build(),
            table: ResourceTable::new(),
        };
        let mut store = Store::new(engine, state);
        // Never reached within a call: the epoch is not advanced here.
        store.set_epoch_deadline(1);
        store.epoch_deadline_async_yield_and_update(1);
        let bindings = LingxiPlugin::instantiate_async(&mut store, component, linker)
            .await
            .expect("instantiate");
        let request = types::InitializeRequest {
            host_ipc_version: Some(1),
            core_version: None,
        };
        bindings
            .lingxi_plugin_plugin()
            .call_initialize(&mut store, &request)
            .await
            .expect("initialize call")
            .expect("initialize");
        Bare { store, bindings }
    }

    /// One call of `execute-tool` (the peers bench's first call).
    #[allow(dead_code)]
    pub async fn call_once(&mut self, arguments: &str) {
        let call = echo_call(arguments);
        let plugin = self.bindings.lingxi_plugin_plugin();
        let answer = plugin.call_execute_tool(&mut self.store, &call).await;
        assert!(matches!(answer, Ok(Ok(_))), "{answer:?}");
    }

    /// µs per warm call of `execute-tool`, median of `rounds` × `calls`.
    pub async fn cost(&mut self, calls: usize, rounds: usize, arguments: &str) -> f64 {
        let call = echo_call(arguments);
        let plugin = self.bindings.lingxi_plugin_plugin();
        let mut samples = Vec::new();
        for round in 0..=rounds {
            let start = Instant::now();
            for _ in 0..calls {
                let answer = plugin.call_execute_tool(&mut self.store, &call).await;
                assert!(matches!(answer, Ok(Ok(_))), "{answer:?}");
            }
            if round > 0 {
                samples.push(start.elapsed().as_secs_f64() * 1e6 / calls as f64);
            }
        }
        crate::common::median(samples)
    }
}

/// A call of `probe.echo` with `arguments`.
fn echo_call(arguments: &str) -> types::ToolCall {
    types::ToolCall {
        tool_name: "probe.echo".into(),
        arguments: arguments.into(),
        session_id: "bench".into(),
        tool_call_id: "bench-1".into(),
    }
}

/// Calls per second of bare calls from `threads` threads at once, each on
/// its own instance of `component`, all on one engine (as a set's plugins
/// are): the scaling the machine and wasmtime allow, to read the set's
/// figure against.
pub fn throughput(component: &Path, threads: usize, calls: usize) -> f64 {
    let prepared = std::sync::Arc::new(Prepared::new(component));
    let ready = std::sync::Arc::new(std::sync::Barrier::new(threads + 1));
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let ready = ready.clone();
            let prepared = prepared.clone();
            std::thread::spawn(move || {
                let tokio = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio");
                tokio.block_on(async {
                    let mut bare = Bare::instance(&prepared).await;
                    bare.cost(1000, 1, "{}").await;
                    ready.wait();
                    bare.cost(calls, 1, "{}").await
                })
            })
        })
        .collect();
    ready.wait();
    let start = Instant::now();
    for worker in workers {
        worker.join().expect("worker");
    }
    (threads * calls * 2) as f64 / start.elapsed().as_secs_f64()
}
