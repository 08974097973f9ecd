//! Where the plugin's workspace root comes from over MCP: the first
//! `file://` root the client offers (MCP roots), else `--workspace`, else
//! the working directory unless it is a place many things share (`/`, a
//! folder directly under it, the home folder or above: then none). A root list with no usable root, or no answer, keeps the
//! root in force. The root reaches the plugin as its snapshot's
//! `workspace.rootPath`, and is mounted only if the plugin is granted
//! `projectRead` or `projectWrite`. Calls wait (a bounded time) for the
//! client's answer, so the first call already sees the client's root.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use lingxi_wasm_host::Session;
use rmcp::{Peer, RoleServer};
use tokio::sync::watch;

/// How long a call waits for the client to answer `roots/list`.
const ROOTS_WAIT: Duration = Duration::from_secs(5);

/// How long an answer is still taken (calls no longer wait for it).
const ROOTS_ANSWER: Duration = Duration::from_secs(120);

/// The session's workspace root, as the client's roots say.
pub(super) struct Roots {
    session: Arc<Session>,
    /// `true` once the root is settled (no roots offered, or asked for).
    settled: watch::Sender<bool>,
    /// How many times the roots were asked for: only the answer to the
    /// latest request counts (answers may come in any order).
    asked: AtomicU64,
}

impl Roots {
    pub(super) fn new(session: Arc<Session>) -> Roots {
        Roots {
            session,
            settled: watch::Sender::new(true),
            asked: AtomicU64::new(0),
        }
    }

    /// At `initialize`: whether the client offers roots, to be asked for
    /// once it says it is initialized.
    pub(super) fn expect(&self, offered: bool) {
        self.settled.send_replace(!offered);
    }

    /// Asks the client for its roots (if it offers them) and publishes the
    /// first usable one; with none usable, or no answer, the root in force
    /// stays. The answer to an older request than the latest is ignored.
    // Roots are deprecated by the 2026-07-28 revision (SEP-2577), but they
    // are how clients of 2025-11-25 and before say where they work.
    #[allow(deprecated)]
    pub(super) async fn fetch(&self, peer: &Peer<RoleServer>) {
        let offered = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if offered {
            // Calls wait from now until the answer: none runs on a root
            // the client has just withdrawn.
            self.settled.send_replace(false);
            let mine = self.asked.fetch_add(1, Ordering::SeqCst) + 1;
            // Calls wait for the answer at most ROOTS_WAIT; a later answer
            // still counts when it comes.
            let asked = tokio::time::timeout(ROOTS_ANSWER, peer.list_roots()).await;
            if self.asked.load(Ordering::SeqCst) != mine {
                // A newer request was made: its answer decides, and settles.
                return;
            }
            let keeping = "keeping the workspace root in force";
            match asked {
                Ok(Ok(list)) => match list.roots.iter().find_map(|r| usable(&r.uri)) {
                    Some(root) => self.publish(&root),
                    None => {
                        tracing::warn!("none of the MCP client's roots is a folder here; {keeping}")
                    }
                },
                Ok(Err(e)) => {
                    tracing::warn!("the MCP client did not list its roots ({e}); {keeping}")
                }
                Err(_) => tracing::warn!(
                    "the MCP client did not list its roots within {ROOTS_ANSWER:?}; {keeping}"
                ),
            }
        }
        self.settled.send_replace(true);
    }

    /// Waits until the root is settled, at most [`ROOTS_WAIT`].
    pub(super) async fn ready(&self) {
        let mut settled = self.settled.subscribe();
        let _ = tokio::time::timeout(ROOTS_WAIT, settled.wait_for(|s| *s)).await;
    }

    fn publish(&self, root: &Path) {
        tracing::info!("workspace root: {}", root.display());
        if let Some(snapshot) = crate::workspace::wit_snapshot(root)
            && let Err(e) = self.session.set_snapshot(snapshot)
        {
            tracing::warn!("cannot publish the workspace root {}: {e}", root.display());
        }
    }
}

/// Whether `dir` is too broad to be a workspace nobody chose (see
/// [`shared_place`]; MCP hosts often start servers in such a folder). Says
/// so when it is.
pub(super) fn too_broad(dir: &Path, what: &str) -> bool {
    let resolved = dunce::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
    let broad = shared_place(&resolved);
    if broad {
        tracing::warn!(
            "{what} {} is too broad to be the workspace: none is mounted until the MCP client gives a root; give --workspace DIR to choose one",
            resolved.display()
        );
    }
    broad
}

pub use lingxi_wasm_policy::places::shared_place;

/// The folder a root URI names, if it is a `file://` URI of an existing
/// directory (resolved: links followed).
fn usable(uri: &str) -> Option<PathBuf> {
    let path = file_uri_path(uri);
    if path.is_none() {
        tracing::warn!(
            "ignoring MCP root {}: not a file:// URI of an absolute path",
            lingxi_wasm_host::printable(uri)
        );
    }
    let path = dunce::canonicalize(path?).ok().filter(|p| p.is_dir());
    if path.is_none() {
        tracing::warn!(
            "ignoring MCP root {}: no such folder",
            lingxi_wasm_host::printable(uri)
        );
    }
    path
}

/// The path of a `file://` URI (`file:///a%20b` → `/a b`; the host part
/// must be empty or `localhost`), percent-decoded.
fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') || rest.contains(['?', '#']) {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    if out.contains(&0) {
        return None;
    }
    #[cfg(unix)]
    let path = {
        use std::os::unix::ffi::OsStringExt;
        PathBuf::from(std::ffi::OsString::from_vec(out))
    };
    // `file:///C:/Users/x` names `C:/Users/x` on Windows.
    #[cfg(not(unix))]
    let path = {
        let text = String::from_utf8(out).ok()?;
        let drive = text
            .as_bytes()
            .get(1..3)
            .filter(|d| d[0].is_ascii_alphabetic() && d[1] == b':');
        PathBuf::from(if drive.is_some() {
            &text[1..]
        } else {
            &text[..]
        })
    };
    path.is_absolute().then_some(path)
}

#[cfg(test)]
mod tests {
    use super::file_uri_path;
    use std::path::Path;

    #[test]
    fn file_uris_become_paths() {
        // Paths as this platform writes them (Unix: `/home/u`; Windows:
        // `C:/Users/u`, where `/home/u` is not absolute).
        #[cfg(unix)]
        let absolute = [
            ("file:///home/u/proj", Some("/home/u/proj")),
            ("file://localhost/srv/a%20b", Some("/srv/a b")),
            ("file:///x/%E6%96%87", Some("/x/文")),
        ];
        #[cfg(windows)]
        let absolute = [
            ("file:///C:/Users/u/proj", Some("C:/Users/u/proj")),
            ("file://localhost/D:/a%20b", Some("D:/a b")),
            ("file:///home/u/proj", None),
        ];
        let refused = [
            ("file://other-host/x", None),
            ("https://example.com/x", None),
            ("file:///x%00y", None),
            ("file:///x%4", None),
            ("file:///x?y", None),
            ("file:relative", None),
        ];
        for (uri, path) in absolute.into_iter().chain(refused) {
            assert_eq!(file_uri_path(uri).as_deref(), path.map(Path::new), "{uri}");
        }
    }
}
