//! Sockets of a plugin without the network: WASI refuses to make one
//! (`allow_tcp(false)` in `wasi.rs`); the two functions that make sockets
//! are wrapped so that the refusal is reported like any other (a bounded
//! log line naming the grant that would allow it, the call's error note, a
//! receipt entry), instead of reaching the plugin unseen.

use wasmtime::StoreContextMut;
use wasmtime::component::Linker;
use wasmtime_wasi::p2::bindings::sockets::network::{ErrorCode, IpAddressFamily};
use wasmtime_wasi::p2::bindings::sockets::{tcp_create_socket, udp_create_socket};
use wasmtime_wasi::sockets::WasiSocketsView;

use crate::state::HostState;

/// The interfaces whose functions are wrapped; the versions must be the
/// ones wasmtime-wasi registers.
const TCP_CREATE: &str = "wasi:sockets/tcp-create-socket@0.2.12";
const UDP_CREATE: &str = "wasi:sockets/udp-create-socket@0.2.12";

/// Reports `code`, WASI's answer to making a socket of `kind`, if it is
/// the refusal of a plugin without the network.
fn report(state: &mut HostState, kind: &str, code: ErrorCode) -> ErrorCode {
    if code == ErrorCode::AccessDenied && state.net.is_none() {
        let what = format!("a {kind} socket");
        state.report_refusal("open", &what, super::refusals::offline());
    }
    code
}

/// Wraps `create-tcp-socket`.
pub(super) fn link_tcp(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    linker.instance(TCP_CREATE)?.func_wrap(
        "create-tcp-socket",
        |mut store: StoreContextMut<'_, HostState>, (family,): (IpAddressFamily,)| {
            let state = store.data_mut();
            match tcp_create_socket::Host::create_tcp_socket(&mut state.sockets(), family) {
                Ok(socket) => Ok((Ok(socket),)),
                Err(error) => Ok((Err(report(state, "TCP", error.downcast()?)),)),
            }
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// Wraps `create-udp-socket`.
pub(super) fn link_udp(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    linker.instance(UDP_CREATE)?.func_wrap_async(
        "create-udp-socket",
        |mut store: StoreContextMut<'_, HostState>, (family,): (IpAddressFamily,)| {
            Box::new(async move {
                let state = store.data_mut();
                let made =
                    udp_create_socket::Host::create_udp_socket(&mut state.sockets(), family).await;
                match made {
                    Ok(socket) => Ok((Ok(socket),)),
                    Err(error) => Ok((Err(report(state, "UDP", error.downcast()?)),)),
                }
            })
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}
