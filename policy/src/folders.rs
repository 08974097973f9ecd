//! The folder settings of a policy (`workspace`, `allow-read`,
//! `allow-write`), checked: each is an existing folder named by an
//! absolute path, or a folder under the root the host sends (`{root}/out`,
//! see `under_root.rs`), which is resolved per snapshot instead.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::settings::Setting;
use super::under_root::{self, UnderRoot};
use crate::error::PolicyError;

/// The folder settings of one policy, checked.
pub(super) struct Folders {
    /// The fixed workspace, if one is given as a path.
    pub(super) workspace: Option<PathBuf>,
    pub(super) allow_read: Vec<PathBuf>,
    pub(super) allow_write: Vec<PathBuf>,
    /// The folders named under the host's root.
    pub(super) in_root: UnderRoot,
    /// Where each folder named through a link is (see `Grant::mounted_from`).
    pub(super) mounted_from: BTreeMap<PathBuf, PathBuf>,
}

/// Checks the folder settings of a policy: its `workspace`, `allow-read`
/// and `allow-write`.
pub(super) fn resolve(
    workspace: &[PathBuf],
    allow_read: &[PathBuf],
    allow_write: &[PathBuf],
) -> Result<Folders, PolicyError> {
    let mut in_root = UnderRoot::default();
    let mut mounted_from = BTreeMap::new();
    let mut folders = |setting, paths: &mut dyn Iterator<Item = &PathBuf>| {
        let mut absolute = Vec::new();
        for path in paths {
            let Some(relative) = under_root::parse(path) else {
                let (named, canonical) = folder(setting, path)?;
                if named != canonical {
                    mounted_from.insert(named.clone(), canonical);
                }
                absolute.push(named);
                continue;
            };
            let relative = relative.map_err(|()| PolicyError::UnderRoot {
                setting,
                path: path.clone(),
            })?;
            match setting {
                Setting::Workspace => in_root.workspace = Some(relative),
                Setting::AllowRead => in_root.read.push(relative),
                _ => in_root.write.push(relative),
            }
        }
        Ok::<_, PolicyError>(absolute)
    };
    let workspace = folders(Setting::Workspace, &mut workspace.iter())?;
    let allow_read = folders(Setting::AllowRead, &mut allow_read.iter())?;
    let allow_write = folders(Setting::AllowWrite, &mut allow_write.iter())?;
    Ok(Folders {
        workspace: workspace.into_iter().next(),
        allow_read,
        allow_write,
        in_root,
        mounted_from,
    })
}

/// An absolute path to an existing folder: where the plugin finds it, and
/// the folder it is (opened on the host). The plugin finds it at the path
/// the user wrote (a link stays a link, so `/tmp/x` on macOS, where /tmp
/// leads to /private/tmp, is where the plugin finds it); written with
/// `..`, where a link would make the words mean another folder, at the
/// folder it is.
fn folder(setting: Setting, path: &Path) -> Result<(PathBuf, PathBuf), PolicyError> {
    if !path.is_absolute() {
        return Err(PolicyError::Relative {
            setting,
            path: path.to_owned(),
        });
    }
    let error = |source| PolicyError::Directory {
        setting,
        path: path.to_owned(),
        source,
    };
    let canonical = dunce::canonicalize(path).map_err(error)?;
    if !canonical.is_dir() {
        return Err(error(std::io::Error::other("not a folder")));
    }
    let plain = path.components().all(|c| c != Component::ParentDir);
    let named = match plain {
        true => path.components().collect(),
        false => canonical.clone(),
    };
    Ok((named, canonical))
}
