//! Path parameters: a string marked `x-lingxi-path` is resolved inside a
//! root the plugin is granted for that access, the way WASI resolves it
//! (cap-std: `..` and symbolic links followed, never out of the root;
//! a link with an absolute target is refused, as the sandbox refuses it),
//! and handed to the plugin canonical and absolute, as the sandbox mounts it.
//!
//! This is an early, readable refusal and a normalisation, not the
//! boundary: the plugin's file access is confined by its mounts whatever
//! path it is given.

use std::io;
use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use super::annotations::PathAccess;
use crate::policy::Capability;
use crate::policy::{Access, Grant, Policy};

/// The directories a plugin may be given paths in, as they are mounted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roots {
    /// The workspace root, against which relative paths resolve (if known
    /// and mounted).
    workspace: Option<PathBuf>,
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
}

impl Roots {
    /// The roots `policy` mounts for `grant`, with the workspace at
    /// `workspace` (`--workspace`, or the snapshot's `rootPath`).
    pub fn of(policy: &Policy, grant: &Grant, workspace: Option<&Path>) -> Roots {
        let mut roots = Roots::default();
        let access = policy.workspace_access();
        if let (Some(access), Some(root)) = (access, workspace) {
            roots.workspace = Some(root.to_path_buf());
            roots.read.push(root.to_path_buf());
            if access == Access::ReadWrite {
                roots.write.push(root.to_path_buf());
            }
        }
        if access.is_some() {
            roots.read.extend(grant.allow_read.iter().cloned());
        }
        if policy.allows(Capability::ProjectWrite) {
            roots.read.extend(grant.allow_write.iter().cloned());
            roots.write.extend(grant.allow_write.iter().cloned());
        }
        let absolute = |dirs: &mut Vec<PathBuf>| dirs.retain(|d| d.is_absolute());
        absolute(&mut roots.read);
        absolute(&mut roots.write);
        roots
    }

    /// A directory mounted read-only that holds `path` and lies deeper
    /// than the writable `root` (the sandbox resolves into the deepest
    /// mount, so a write there fails).
    fn read_only_over(&self, root: &Path, path: &Path) -> Option<&PathBuf> {
        // Compared in canonical form: a root given through a symbolic link
        // or with `..` in it is the same directory.
        let canonical = |p: &Path| dunce::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let (root, path) = (canonical(root), canonical_prefix(path));
        self.read
            .iter()
            .filter(|dir| !self.write.contains(dir))
            .find(|dir| {
                let dir = canonical(dir);
                dir.starts_with(&root) && dir != root && path.starts_with(&dir)
            })
    }

    fn for_access(&self, access: PathAccess) -> &[PathBuf] {
        match access {
            PathAccess::Read => &self.read,
            PathAccess::Write => &self.write,
        }
    }

    /// The roots for `access`, for messages.
    fn listed(&self, access: PathAccess) -> String {
        let roots = self.for_access(access);
        if roots.is_empty() {
            return format!("the plugin is granted no directory to {access}");
        }
        let shown: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        format!("the plugin may {access} only in {}", shown.join(", "))
    }
}

/// Resolves `given` for `access`: the canonical absolute path the plugin
/// gets, or the rule it breaks (blocking: it reads the filesystem).
pub(crate) fn resolve(given: &str, access: PathAccess, roots: &Roots) -> Result<String, String> {
    let path = Path::new(given);
    let allowed = roots.for_access(access);
    let (root, inside) = if path.is_absolute() {
        match allowed.iter().find_map(|root| strip_root(path, root)) {
            Some(found) => found,
            None => {
                let write = matches!(access, PathAccess::Write);
                let rule = crate::policy::files::outside_rule(
                    // The caller's path, not the plugin's: looked at as
                    // the contract looks at every path parameter.
                    crate::policy::files::folder_of(given, path.is_dir()),
                    write,
                );
                return Err(format!(
                    "is outside the granted directories: {}; allow it with {rule}",
                    roots.listed(access)
                ));
            }
        }
    } else {
        match roots.workspace.as_ref().filter(|w| allowed.contains(w)) {
            Some(root) => (root.clone(), path.to_path_buf()),
            None if roots.workspace.is_none() => {
                return Err(format!(
                    "is relative, and no workspace root is known to resolve it against; give an absolute path ({})",
                    roots.listed(access)
                ));
            }
            None => {
                return Err(format!(
                    "is relative to the workspace, which the plugin may not {access}; {}",
                    roots.listed(access)
                ));
            }
        }
    };
    let dir = Dir::open_ambient_dir(&root, ambient_authority()).map_err(|e| {
        format!(
            "cannot be checked: its root {} cannot be opened ({e})",
            root.display()
        )
    })?;
    let inside = if inside.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        inside
    };
    let canonical = match dir.canonicalize(&inside) {
        Ok(canonical) => canonical,
        Err(e) if e.kind() == io::ErrorKind::NotFound && access == PathAccess::Write => {
            to_create(&dir, &inside, &root)?
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(format!("does not exist in {}", root.display()));
        }
        Err(e) => return Err(escape_or(e, &root)),
    };
    let full = joined(&root, &canonical);
    if access == PathAccess::Write
        && let Some(read_only) = roots.read_only_over(&root, &full)
    {
        return Err(format!(
            "lies in {}, which is mounted read-only inside the writable {}",
            read_only.display(),
            root.display()
        ));
    }
    guest_path(&root, &canonical)
        .ok_or_else(|| "resolves to a path that is not valid UTF-8".to_owned())
}

/// How the plugin names `rest` (relative, canonical) under `root`: the
/// root as it is mounted (at its own path), then each name after a `/`,
/// the separator of WASI on every platform (on Unix this is the host's
/// path; on Windows `C:\project/src/a.rs`, which the guest resolves).
fn guest_path(root: &Path, rest: &Path) -> Option<String> {
    let mut out = root.to_str()?.to_owned();
    for component in rest.components() {
        if let Component::Normal(name) = component {
            if !out.ends_with('/') {
                out.push('/');
            }
            out.push_str(name.to_str()?);
        }
    }
    Some(out)
}

/// `path` with its longest existing ancestor canonical (a file to be
/// created does not exist yet).
fn canonical_prefix(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(found) = dunce::canonicalize(at) {
            return rest.into_iter().rev().fold(found, |p, c| p.join(c));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                at = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// `rest` (canonical, relative) under `root`, without `.` components.
fn joined(root: &Path, rest: &Path) -> PathBuf {
    let mut full = root.to_path_buf();
    full.extend(rest.components().filter(|c| *c != Component::CurDir));
    full
}

/// A file to be created: its parent must exist inside the root, and it
/// must not be a symbolic link (whose target is then missing).
fn to_create(dir: &Dir, inside: &Path, root: &Path) -> Result<PathBuf, String> {
    if dir.symlink_metadata(inside).is_ok() {
        return Err(format!(
            "is a symbolic link whose target does not exist in {}; give the path of the file itself",
            root.display()
        ));
    }
    let (Some(parent), Some(Component::Normal(name))) =
        (inside.parent(), inside.components().next_back())
    else {
        return Err(format!(
            "does not name a file to create in {}",
            root.display()
        ));
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    match dir.canonicalize(parent) {
        Ok(parent) => Ok(parent.join(name)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(format!(
            "does not exist, and neither does its parent directory in {}; a file to be created needs an existing parent",
            root.display()
        )),
        Err(e) => Err(escape_or(e, root)),
    }
}

fn escape_or(e: io::Error, root: &Path) -> String {
    if e.kind() == io::ErrorKind::PermissionDenied {
        format!(
            "leads outside {} (through '..', a symbolic link out of it, or a symbolic link with an absolute target, which the sandbox never follows); the plugin may only be given paths inside it",
            root.display()
        )
    } else {
        format!("cannot be resolved in {}: {e}", root.display())
    }
}

/// `path` as (root, the rest) if it lies under `root` as given or as the
/// root's canonical form.
fn strip_root(path: &Path, root: &Path) -> Option<(PathBuf, PathBuf)> {
    if let Ok(rest) = path.strip_prefix(root) {
        return Some((root.to_path_buf(), rest.to_path_buf()));
    }
    let canonical = dunce::canonicalize(root).ok()?;
    let rest = path.strip_prefix(&canonical).ok()?;
    Some((root.to_path_buf(), rest.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixture {
        _dir: tempfile::TempDir,
        ws: PathBuf,
        outside: PathBuf,
        roots: Roots,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let ws = base.join("ws");
        let outside = base.join("outside");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(ws.join("src/a.rs"), "x").unwrap();
        std::fs::write(outside.join("secret"), "s").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("../outside/secret", ws.join("out-link")).unwrap();
            std::os::unix::fs::symlink("src/a.rs", ws.join("in-link")).unwrap();
            std::os::unix::fs::symlink(ws.join("src"), ws.join("abs-link")).unwrap();
        }
        let roots = Roots {
            workspace: Some(ws.clone()),
            read: vec![ws.clone()],
            write: Vec::new(),
        };
        Fixture {
            _dir: dir,
            ws,
            outside,
            roots,
        }
    }

    #[test]
    fn paths_inside_resolve_to_canonical_absolute_ones() {
        let f = fixture();
        let want = f.ws.join("src/a.rs").display().to_string();
        for given in ["src/a.rs", "./src/../src/a.rs", &want, "in-link"] {
            assert_eq!(
                resolve(given, PathAccess::Read, &f.roots),
                Ok(want.clone()),
                "{given}"
            );
        }
        let root = f.ws.display().to_string();
        assert_eq!(resolve(".", PathAccess::Read, &f.roots), Ok(root.clone()));
        assert_eq!(resolve(&root, PathAccess::Read, &f.roots), Ok(root));
    }

    #[test]
    fn paths_outside_are_refused_with_the_rule() {
        let f = fixture();
        let outside = f.outside.join("secret").display().to_string();
        let cases = [
            ("../outside/secret", "leads outside"),
            ("src/../../outside/secret", "leads outside"),
            ("out-link", "leads outside"),
            ("abs-link/a.rs", "leads outside"),
            (outside.as_str(), "is outside the granted directories"),
            ("missing.txt", "does not exist"),
        ];
        for (given, rule) in cases {
            let error = resolve(given, PathAccess::Read, &f.roots).unwrap_err();
            assert!(error.contains(rule), "{given}: {error}");
        }
    }

    #[test]
    fn writes_need_a_writable_root_and_an_existing_parent() {
        let mut f = fixture();
        let error = resolve("src/new.txt", PathAccess::Write, &f.roots).unwrap_err();
        assert!(error.contains("which the plugin may not write"), "{error}");
        f.roots.write.push(f.ws.clone());
        let created = resolve("src/new.txt", PathAccess::Write, &f.roots);
        assert_eq!(created, Ok(f.ws.join("src/new.txt").display().to_string()));
        let error = resolve("nope/new.txt", PathAccess::Write, &f.roots).unwrap_err();
        assert!(error.contains("needs an existing parent"), "{error}");
        let error = resolve("../outside/new.txt", PathAccess::Write, &f.roots).unwrap_err();
        assert!(error.contains("leads outside"), "{error}");
        let top = resolve("new.txt", PathAccess::Write, &f.roots);
        assert_eq!(top, Ok(f.ws.join("new.txt").display().to_string()), "no ./");
        #[cfg(unix)]
        std::os::unix::fs::symlink("src/none/x", f.ws.join("dangling")).unwrap();
        let error = resolve("dangling", PathAccess::Write, &f.roots).unwrap_err();
        assert!(
            error.contains("symbolic link whose target does not exist"),
            "{error}"
        );
        // A read-only mount inside the writable workspace is refused, also
        // when the workspace is named through a link.
        f.roots.read.push(f.ws.join("src"));
        let error = resolve("src/new.txt", PathAccess::Write, &f.roots).unwrap_err();
        assert!(error.contains("which is mounted read-only"), "{error}");
        #[cfg(unix)]
        {
            let link = f.ws.parent().unwrap().join("ws-link");
            std::os::unix::fs::symlink(&f.ws, &link).unwrap();
            f.roots.workspace = Some(link.clone());
            f.roots.write = vec![link.clone()];
            f.roots.read = vec![link, f.ws.join("src")];
            let error = resolve("src/new.txt", PathAccess::Write, &f.roots).unwrap_err();
            assert!(error.contains("which is mounted read-only"), "{error}");
        }
    }

    #[test]
    fn relative_paths_need_a_known_workspace() {
        let mut f = fixture();
        f.roots.workspace = None;
        let error = resolve("src/a.rs", PathAccess::Read, &f.roots).unwrap_err();
        assert!(error.contains("no workspace root is known"), "{error}");
    }
}
