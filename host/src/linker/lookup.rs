//! Name lookups under the network allow-list: two functions of
//! `wasi:sockets/ip-name-lookup` replaced so that the instance's
//! [`NetGuard`](crate::policy::NetGuard) judges every name and learns every
//! address WASI's own lookup answers (see `policy/src/net.rs` for the rules),
//! and the lookups and their answers are recorded while a call is.

use std::net::IpAddr;

/// The interface whose lookup functions are replaced; the version must be
/// the one wasmtime-wasi registers.
const NAME_LOOKUP_INTERFACE: &str = "wasi:sockets/ip-name-lookup@0.2.12";

/// Replaces two functions of `wasi:sockets/ip-name-lookup` in `linker`:
/// `resolve-addresses` first asks the instance's [`NetGuard`], and
/// `resolve-next-address` teaches the guard each address WASI's lookup
/// hands the guest. Must run after WASI was added to the linker. Both are
/// synchronous in wasmtime-wasi: the lookup itself runs on tokio's blocking
/// pool and the guest waits for it through a pollable, so a slow resolver
/// never holds the thread that owns the call's deadline.
pub(super) fn link_name_lookup(
    linker: &mut wasmtime::component::Linker<crate::state::HostState>,
) -> wasmtime::Result<()> {
    use wasmtime::component::Resource;
    use wasmtime_wasi::p2::bindings::sockets::ip_name_lookup::{
        Host, HostResolveAddressStream, ResolveAddressStream,
    };
    use wasmtime_wasi::p2::bindings::sockets::network::{ErrorCode, IpAddress, Network};
    use wasmtime_wasi::sockets::WasiSocketsView;

    type Stream = Resource<ResolveAddressStream>;

    linker.allow_shadowing(true);
    let mut instance = linker.instance(NAME_LOOKUP_INTERFACE)?;
    instance.func_wrap(
        "resolve-addresses",
        |mut store: wasmtime::StoreContextMut<'_, crate::state::HostState>,
         (network, name): (Resource<Network>, String)|
         -> wasmtime::Result<(Result<Stream, ErrorCode>,)> {
            let state = store.data_mut();
            let learn = match &state.net {
                Some(guard) => match guard.check_lookup(&name) {
                    Some(rules) => {
                        state.effects.lookup(&name);
                        rules
                    }
                    None => {
                        state.effects.refused(
                            || format!("look up {name}"),
                            || crate::policy::net::allow_hint(&name, "PORT"),
                        );
                        return Ok((Err(ErrorCode::AccessDenied),));
                    }
                },
                // No network: WASI's lookup refuses it; said here like
                // every refusal (receipt, log line, the call's note).
                None => {
                    state.report_refusal("look up", &name, super::refusals::offline());
                    Vec::new()
                }
            };
            let recorded = if state.effects.active() {
                name.clone()
            } else {
                String::new()
            };
            match Host::resolve_addresses(&mut state.sockets(), network, name) {
                Ok(stream) => {
                    state.lookups.insert(stream.rep(), (recorded, learn));
                    Ok((Ok(stream),))
                }
                Err(error) => Ok((Err(error.downcast()?),)),
            }
        },
    )?;
    instance.func_wrap(
        "[method]resolve-address-stream.resolve-next-address",
        |mut store: wasmtime::StoreContextMut<'_, crate::state::HostState>,
         (stream,): (Stream,)|
         -> wasmtime::Result<(Result<Option<IpAddress>, ErrorCode>,)> {
            let state = store.data_mut();
            let rep = stream.rep();
            match HostResolveAddressStream::resolve_next_address(&mut state.sockets(), stream) {
                Ok(Some(address)) => {
                    if let Some((name, rules)) = state.lookups.get(&rep) {
                        if let Some(guard) = &state.net {
                            guard.learn(ip_of(address), rules);
                        }
                        state.effects.answered(name, ip_of(address));
                    }
                    Ok((Ok(Some(address)),))
                }
                Ok(None) => Ok((Ok(None),)),
                Err(error) => Ok((Err(error.downcast()?),)),
            }
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// The host's form of a WASI IP address.
fn ip_of(address: wasmtime_wasi::p2::bindings::sockets::network::IpAddress) -> IpAddr {
    use wasmtime_wasi::p2::bindings::sockets::network::IpAddress;
    match address {
        IpAddress::Ipv4((a, b, c, d)) => IpAddr::from([a, b, c, d]),
        IpAddress::Ipv6((a, b, c, d, e, f, g, h)) => IpAddr::from([a, b, c, d, e, f, g, h]),
    }
}
