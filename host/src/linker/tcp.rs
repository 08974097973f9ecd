//! TCP bytes, recorded: `finish-connect` hands the guest a connection's two
//! streams; while a call is recorded they are wrapped (in place, so the
//! handles and their parent stay) to count what is sent and received for
//! the connection's peer. Whether the connection may be made at all was
//! decided before, by the network guard (`wasi.rs`).

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::p2::bindings::sockets::tcp::{HostTcpSocket, TcpSocket};
use wasmtime_wasi::sockets::WasiSocketsView;

use crate::effects::{Target, count_input, count_output};
use crate::state::HostState;

/// The interface whose function is wrapped; the version must be the one
/// wasmtime-wasi registers.
const TCP_INTERFACE: &str = "wasi:sockets/tcp@0.2.12";

/// Replaces `finish-connect` with a counting wrapper.
pub(super) fn link(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut i = linker.instance(TCP_INTERFACE)?;
    i.func_wrap(
        "[method]tcp-socket.finish-connect",
        |mut store: StoreContextMut<'_, HostState>, (socket,): (Resource<TcpSocket>,)| {
            let state = store.data_mut();
            let rep = socket.rep();
            let (input, output) = match HostTcpSocket::finish_connect(&mut state.sockets(), socket)
            {
                Ok(streams) => streams,
                Err(error) => return Ok((Err(error.downcast()?),)),
            };
            if state.effects.active() {
                let peer = Resource::new_borrow(rep);
                if let Ok(peer) = HostTcpSocket::remote_address(&mut state.sockets(), peer) {
                    let peer = std::net::SocketAddr::from(peer);
                    let effects = state.effects.clone();
                    count_input(&mut state.table, &input, &effects, Target::Tcp(peer))?;
                    count_output(&mut state.table, &output, &effects, Target::Tcp(peer))?;
                }
            }
            Ok((Ok((input, output)),))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}
