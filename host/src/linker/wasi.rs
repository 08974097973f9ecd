//! A policy as a WASI context: directories mounted at their own absolute
//! paths, the environment given, sockets allowed only under the network
//! guard (each destination recorded while a call is), everything else
//! denied.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use wasmtime_wasi::sockets::SocketAddrUse;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use crate::effects::Effects;
use crate::policy::Capability;
use crate::policy::settings::Setting;
use crate::policy::{Access, Grant, NetGuard, Policy};

/// Turns the decision into WASI grants on a context that starts out
/// denying everything, and returns the network guard when networking is
/// allowed. Directories are mounted at the same absolute path inside the
/// guest, so `workspace.rootPath` works unchanged. A directory that cannot
/// be opened is logged and left out; the plugin still runs.
pub(crate) fn apply(
    policy: &Policy,
    grant: &Grant,
    wasi: &mut WasiCtxBuilder,
    origin: &crate::observe::Origin,
    workspace: Option<&Path>,
    effects: &Arc<Effects>,
    learning: bool,
) -> Option<Arc<NetGuard>> {
    let mut mount = |what: &str, dir: &Path, perms| {
        let host = grant
            .mounted_from
            .get(dir)
            .map_or(dir, |from| from.as_path());
        mount(wasi, &origin.plugin, what, dir, host, perms);
    };
    if let (Some(perms), Some(root)) = (policy.workspace_access().map(perms), workspace) {
        mount("workspace root", root, perms);
    }
    if policy.workspace_access().map(perms).is_some() {
        for dir in &grant.allow_read {
            mount(&Setting::AllowRead.to_string(), dir, FsPerms::ReadOnly);
        }
    }
    if policy.allows(Capability::ProjectWrite) {
        for dir in &grant.allow_write {
            mount(&Setting::AllowWrite.to_string(), dir, FsPerms::ReadWrite);
        }
    }
    for (key, value) in &grant.env {
        wasi.env(key, value);
    }
    if !policy.allows(Capability::NetworkAccess) {
        wasi.allow_ip_name_lookup(false);
        if learning {
            // Sockets are made so that the address each one is for is
            // seen and refused: learning records what the plugin tried.
            let effects = effects.clone();
            wasi.allow_tcp(true)
                .allow_udp(true)
                .socket_addr_check(move |addr, usage| {
                    let allowed = matches!(usage, SocketAddrUse::TcpBind | SocketAddrUse::UdpBind)
                        && addr.port() == 0;
                    record(&effects, addr, usage, allowed, false);
                    Box::pin(async move { allowed })
                });
        } else {
            wasi.allow_tcp(false).allow_udp(false);
        }
        return None;
    }
    // The plugin's redactor, made once: a denial names the host the plugin
    // named, which may hold a secret.
    let guard = NetGuard::hiding(&origin.plugin, &grant.allow_net, origin.redactor.clone());
    let check = guard.clone();
    let effects = effects.clone();
    wasi.allow_tcp(true)
        .allow_udp(true)
        .allow_ip_name_lookup(true)
        .socket_addr_check(move |addr, usage| {
            let allowed = check_use(&check, addr, usage);
            record(&effects, addr, usage, allowed, true);
            Box::pin(async move { allowed })
        });
    Some(guard)
}

/// Records a destination the guest connected or sent to, or was refused
/// (`network`: whether the plugin has the network at all).
fn record(effects: &Effects, addr: SocketAddr, usage: SocketAddrUse, allowed: bool, network: bool) {
    use SocketAddrUse::*;
    if !effects.active() {
        return;
    }
    let protocol = match usage {
        TcpConnect => "tcp",
        UdpSend => "udp",
        TcpListen | TcpAccept if !allowed => {
            return effects.refused(
                || format!("listen on {addr}"),
                || "nothing: plugins may not accept connections".into(),
            );
        }
        _ => return,
    };
    if allowed {
        return effects.connect(protocol, addr);
    }
    effects.refused(
        || format!("connect to {addr} ({protocol})"),
        || {
            if network {
                crate::policy::net::allow(match addr {
                    SocketAddr::V6(a) => format!("[{}]:{}", a.ip(), a.port()),
                    SocketAddr::V4(a) => a.to_string(),
                })
            } else {
                super::refusals::needs_network()
            }
        },
    );
}

/// Checks one use of a socket address, as wasmtime-wasi reports it. A
/// plugin is a client only: it may never listen or accept, bind only
/// ephemeral ports, and reach (send to, receive from) what the rules allow.
fn check_use(guard: &NetGuard, addr: SocketAddr, usage: SocketAddrUse) -> bool {
    use SocketAddrUse::*;
    match usage {
        TcpListen | TcpAccept => guard.deny_listen(addr),
        TcpBind | UdpBind => guard.check_addr(addr, true),
        TcpConnect | UdpSend | UdpReceive => guard.check_addr(addr, false),
        // A use added by a later wasmtime-wasi: denied until reviewed.
        #[allow(unreachable_patterns)]
        _ => false,
    }
}

/// The WASI form of an access.
pub(crate) fn perms(access: Access) -> FsPerms {
    match access {
        Access::ReadOnly => FsPerms::ReadOnly,
        Access::ReadWrite => FsPerms::ReadWrite,
    }
}

/// Mounts the folder at `host` at `dir` (its own absolute path, or the
/// path it was named by through a link), or logs why it cannot.
fn mount(
    wasi: &mut WasiCtxBuilder,
    plugin_id: &str,
    what: &str,
    dir: &Path,
    host: &Path,
    perms: FsPerms,
) {
    if !dir.is_absolute() {
        tracing::warn!(
            plugin = %plugin_id,
            "{what} {} is not an absolute path; not mounted",
            dir.display()
        );
        return;
    }
    let guest_path = dir.to_string_lossy();
    if let Err(e) = wasi.preopened_dir(host, guest_path.as_ref(), perms) {
        tracing::warn!(
            plugin = %plugin_id,
            "cannot mount {what} {}: {e}; the plugin runs without it",
            dir.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugins_may_never_listen_or_accept() {
        let any = NetGuard::new("p", &["*:*".parse().unwrap()]);
        assert!(!check_use(
            &any,
            "0.0.0.0:0".parse().unwrap(),
            SocketAddrUse::TcpListen
        ));
        let accept = SocketAddrUse::TcpAccept;
        assert!(!check_use(&any, "127.0.0.1:4000".parse().unwrap(), accept));
        let connect = SocketAddrUse::TcpConnect;
        assert!(check_use(&any, "192.0.2.1:1".parse().unwrap(), connect));
    }
}
