//! The snapshot a launcher publishes when no LingXi host sends one (`call`,
//! MCP serving): the workspace folder's path, whether it is in a git
//! repository and on which branch. Every other section is left out, so the
//! plugin's info hub answers "unavailable" for it, honestly.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The snapshot of `root` a host would send, as protocol JSON.
pub fn snapshot(root: &Path) -> Value {
    let git = root
        .ancestors()
        .map(|dir| dir.join(".git"))
        .find(|g| g.exists());
    let branch = git.as_deref().and_then(branch);
    let since_2001 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() - 978_307_200.0)
        .unwrap_or(0.0);
    json!({
        "observedAt": since_2001,
        "ipcVersion": 1,
        "workspace": {
            "rootPath": root.to_string_lossy(),
            "isGitRepository": git.is_some(),
            "currentGitBranch": branch,
            "coreVersion": env!("CARGO_PKG_VERSION"),
        }
    })
}

/// The same as the host's WIT type, for a [`lingxi_wasm_host::Session`].
pub fn wit_snapshot(root: &Path) -> Option<lingxi_wasm_host::types::RuntimeSnapshot> {
    let dto = serde_json::from_value(snapshot(root)).ok()?;
    Some(lingxi_wasm_host::convert::snapshot(dto))
}

/// The branch `HEAD` names, from a `.git` folder (or a worktree's `.git`
/// file pointing at one). Only regular files are read, at most 4 KiB.
fn branch(git: &Path) -> Option<String> {
    let dir: PathBuf = if git.is_file() {
        let text = small_file(git)?;
        let target = text.strip_prefix("gitdir:")?.trim();
        git.parent()?.join(target)
    } else {
        git.to_owned()
    };
    let head = small_file(&dir.join("HEAD"))?;
    head.trim()
        .strip_prefix("ref: refs/heads/")
        .map(str::to_owned)
}

/// The text of a regular file of at most 4 KiB (a FIFO or a huge file
/// planted in a repository is not read).
fn small_file(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 4096 {
        return None;
    }
    std::fs::read_to_string(path).ok()
}
