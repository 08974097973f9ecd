//! `wasi:http` as an instance's store offers it: the context and the gate
//! ([`super::HttpGate`], in `http_gate.rs`) that judges each outgoing request.

use wasmtime_wasi_http::{WasiHttpCtxView, WasiHttpView};

use crate::state::HostState;

impl WasiHttpView for HostState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http.ctx,
            table: &mut self.table,
            hooks: &mut self.http.hooks,
        }
    }
}
