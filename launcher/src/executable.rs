//! Writing an executable file: atomically (a temporary file in the same
//! folder, renamed), mode 0755 on Unix, and on Windows over a copy that is
//! running.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};

/// Writes atomically (temporary file in the same folder, renamed), mode 0755.
pub fn write_executable(path: &Path, bytes: &[u8]) -> Result<()> {
    if path.is_dir() {
        bail!(
            "{} is a folder; give the file to write, e.g. {}",
            path.display(),
            path.join("my-plugin").display()
        );
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        bail!(
            "cannot write {}: the folder {} does not exist",
            path.display(),
            dir.display()
        );
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write into {}", dir.display()))?;
    tmp.write_all(bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o755))?;
    }
    let placed = tmp.persist(path);
    // Windows cannot replace an executable that is running (LingXi may be
    // running the plugin), but it can rename it: it is moved aside first.
    #[cfg(windows)]
    let placed = match placed {
        Err(e) if path.is_file() => replace_running(path, e.file),
        placed => placed.map_err(|e| e.error),
    };
    #[cfg(not(windows))]
    let placed = placed.map_err(|e| e.error);
    placed.with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Moves the executable at `path` into a hidden folder beside its folder
/// (where LingXi does not look for plugins) and puts `new` in its place.
/// Copies moved aside earlier are removed when they no longer run.
#[cfg(windows)]
fn replace_running(path: &Path, new: tempfile::NamedTempFile) -> std::io::Result<std::fs::File> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let aside = dir.parent().unwrap_or(dir).join(".lingxi-wasm-replaced");
    std::fs::create_dir_all(&aside)?;
    if let Ok(entries) = std::fs::read_dir(&aside) {
        for entry in entries.flatten() {
            let _ = std::fs::remove_file(entry.path()); // fails while it runs
        }
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let moved = aside.join(format!("{}-{name}", std::process::id()));
    std::fs::rename(path, &moved)?;
    let placed = new.persist(path).map_err(|e| e.error);
    if placed.is_err() {
        let _ = std::fs::rename(&moved, path);
    }
    let _ = std::fs::remove_file(&moved);
    placed
}
