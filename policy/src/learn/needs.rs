//! What the receipts needed: the folders (and whether written), storage,
//! and the `allow-net` rules; and how folders become the workspace and
//! the extra mounts.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Project, Rules};
use crate::receipt::Receipt;
use crate::storage::DATA_GUEST_PATH;
use crate::under_root;

/// A folder a call needed, and whether it wrote there.
pub(super) struct NeededFolder {
    pub(super) folder: PathBuf,
    pub(super) write: bool,
    why: String,
}

/// The folders and storage a receipt's files needed.
pub(super) fn files(
    call: &str,
    receipt: &Receipt,
    needs: &mut Vec<NeededFolder>,
    storage: &mut Rules,
) {
    for file in &receipt.files {
        let path = Path::new(&file.path);
        if path.starts_with(DATA_GUEST_PATH) {
            storage.add("used".into(), || format!("{call} used {}", file.path));
            continue;
        }
        if !path.is_absolute() {
            continue;
        }
        // A folder's own entries are changed in its parent; a file is
        // reached through the folder it is in.
        let entry_changed = file.created || file.removed;
        let directory = file.directory || file.listed;
        let (folder, write, did) = if entry_changed || (file.write && !directory) {
            let did = if file.created {
                "created"
            } else if file.removed {
                "removed"
            } else {
                "wrote"
            };
            (path.parent().unwrap_or(path), true, did)
        } else if directory {
            (path, false, if file.listed { "listed" } else { "read" })
        } else {
            (path.parent().unwrap_or(path), file.write, "read")
        };
        // A hard link is made within one mount: both folders under one.
        let folder = match &file.linked_from {
            Some(from) => common(folder, Path::new(from).parent().unwrap_or(folder)),
            None => folder.to_owned(),
        };
        needs.push(NeededFolder {
            folder,
            write,
            why: format!("{call} {did} {}", file.path),
        });
    }
}

/// The `allow-net` rules a receipt's connections and requests needed.
pub(super) fn network(call: &str, receipt: &Receipt, net: &mut Rules) {
    let host = |address: &str| match address.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(ip)) => format!("[{ip}]"),
        _ => address.to_owned(),
    };
    for c in &receipt.connections {
        let name = c.name.clone().unwrap_or_else(|| host(&c.address));
        net.add(format!("{name}:{}", c.port), || {
            format!(
                "{call} reached for {name} ({}:{}, {})",
                c.address, c.port, c.protocol
            )
        });
    }
    for r in &receipt.http {
        let (scheme, authority) = r
            .authority
            .split_once("://")
            .unwrap_or(("http", &r.authority));
        let default = if scheme == "https" { 443 } else { 80 };
        let (name, port) = match authority.rsplit_once(':') {
            Some((name, port)) if !name.ends_with(']') || port.parse::<u16>().is_ok() => {
                (name.to_owned(), port.parse().unwrap_or(default))
            }
            _ => (authority.to_owned(), default),
        };
        net.add(format!("{name}:{port}"), || {
            format!("{call} sent {} {}", r.method, r.authority)
        });
    }
}

/// A rule for each name looked up that no rule names (`lookups`: call and
/// name): port 0, which allows the lookup and no connection.
pub(super) fn lookups_only(lookups: &[(String, String)], net: &mut Rules) {
    let named: BTreeSet<String> = net
        .0
        .iter()
        .filter_map(|r| r.value.rsplit_once(':').map(|(host, _)| host.to_owned()))
        .collect();
    for (call, name) in lookups {
        if !named.contains(name) {
            net.add(format!("{name}:0"), || {
                format!("{call} looked up {name} (port 0: no connection)")
            });
        }
    }
}

/// The workspace (one folder), the extra read-only and read-write folders:
/// a folder under another needed one is left out, and the workspace is
/// the project's root if it must be kept whole (covering what is under
/// it), else the first folder written (or read, if none was). Folders in
/// the project are written under the host's root (`{root}/out`).
pub(super) fn folders(needs: Vec<NeededFolder>, project: Option<&Project>) -> [Rules; 3] {
    let shown = |folder: &Path| match project.and_then(|p| folder.strip_prefix(&p.root).ok()) {
        Some(relative) => under_root::shown(relative),
        None => folder.display().to_string(),
    };
    let mut workspace = Rules::default();
    let kept = project
        .and_then(|p| Some((&p.root, p.keep_whole.as_ref()?)))
        .filter(|(root, _)| needs.iter().any(|n| n.folder.starts_with(root)));
    if let Some((root, why)) = kept {
        workspace.add(shown(root), || why.clone());
    }
    let outside = |n: &&NeededFolder| kept.is_none_or(|(root, _)| !n.folder.starts_with(root));
    let writes: Vec<&NeededFolder> = needs.iter().filter(|n| n.write).filter(outside).collect();
    let reads: Vec<&NeededFolder> = needs.iter().filter(|n| !n.write).filter(outside).collect();
    let top = |list: &[&NeededFolder], others: &[&NeededFolder]| {
        let mut rules = Rules::default();
        for need in list {
            let covered = |other: &&NeededFolder| {
                other.folder != need.folder && need.folder.starts_with(&other.folder)
            };
            if list.iter().any(covered) || others.iter().any(|o| need.folder.starts_with(&o.folder))
            {
                continue;
            }
            rules.add(shown(&need.folder), || need.why.clone());
        }
        rules
    };
    let mut write = top(&writes, &[]);
    let mut read = top(&reads, &writes);
    if kept.is_none() {
        if !write.0.is_empty() {
            workspace.0.push(write.0.remove(0));
        } else if !read.0.is_empty() {
            workspace.0.push(read.0.remove(0));
        }
    }
    [workspace, read, write]
}

/// The deepest folder both `a` and `b` are in.
fn common(a: &Path, b: &Path) -> PathBuf {
    a.ancestors()
        .find(|ancestor| b.starts_with(ancestor))
        .unwrap_or(a)
        .to_owned()
}
