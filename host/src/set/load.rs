//! Loading plugins into a set from files and folders: components
//! (`.wasm`), packed executables (their component is read out and compiled
//! here; their native code never runs, their precompiled code is never
//! used, and the grants packed into them are ignored: the host decides),
//! and LingXi plugin folders laid out as spec §6 says.

use std::path::{Path, PathBuf};

use super::{PluginOptions, PluginSet};
use crate::bindings::lingxi::plugin::types as wit;
use crate::engine::PluginComponent;
use crate::error::{LoadError, SetError};

impl PluginSet {
    /// Loads the component or packed plugin at `path` and adds it.
    pub async fn load_file(
        &mut self,
        path: &Path,
        options: PluginOptions,
    ) -> Result<&wit::Manifest, SetError> {
        let component = self.load_component(path).await?;
        self.add(component, &path.display().to_string(), options)
            .await
    }

    /// Compiles the component at `path`, or the one packed in it.
    async fn load_component(&self, path: &Path) -> Result<PluginComponent, SetError> {
        let name = path.display().to_string();
        crate::engine::regular_file(path)?;
        Ok(match crate::pack::read(path) {
            Ok(Some(packed)) => self.runtime.load_packed(&packed, &name).await?,
            Ok(None) => self.runtime.load_file(path).await?,
            Err(e) => {
                return Err(SetError::Load(LoadError::Compile {
                    name,
                    reason: e.to_string(),
                }));
            }
        })
    }

    /// Loads every plugin in `dir`, in name order, skipping hidden entries:
    /// component files (`*.wasm`), packed executables, and folders holding
    /// `<folder>/<folder>`, `<folder>/bin/<folder>`, `<folder>/main` or
    /// `<folder>/<folder>.wasm`. `options` decides each one's grant, limits
    /// and log sink from its manifest. One result per plugin found: a
    /// plugin that fails to load or clashes is reported and the rest go on.
    /// Names belong to the plugin added first: load the plugins you trust
    /// most (with [`PluginSet::load_file`]) before a folder.
    pub async fn load_dir(
        &mut self,
        dir: &Path,
        options: impl Fn(&wit::Manifest) -> PluginOptions,
    ) -> Result<Vec<(PathBuf, Result<String, SetError>)>, SetError> {
        let folder_error = |source| SetError::Folder {
            path: dir.to_owned(),
            source,
        };
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(folder_error)? {
            let entry = entry.map_err(folder_error)?;
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if let Some(path) = plugin_file(&entry.path()) {
                entries.push(path);
            }
        }
        entries.sort();
        let mut results = Vec::new();
        for path in entries {
            let result = self.load_with(&path, &options).await;
            results.push((path, result));
        }
        Ok(results)
    }

    async fn load_with(
        &mut self,
        path: &Path,
        options: &impl Fn(&wit::Manifest) -> PluginOptions,
    ) -> Result<String, SetError> {
        let component = self.load_component(path).await?;
        let options = options(component.manifest());
        let name = path.display().to_string();
        let manifest = self.add(component, &name, options).await?;
        Ok(manifest.id.clone())
    }
}

/// The plugin file an entry of a plugin folder stands for, if any.
fn plugin_file(entry: &Path) -> Option<PathBuf> {
    let meta = std::fs::metadata(entry).ok()?;
    if meta.is_file() {
        let is_wasm = entry.extension().is_some_and(|e| e == "wasm");
        return (is_wasm || is_executable(&meta)).then(|| entry.to_owned());
    }
    if !meta.is_dir() {
        return None;
    }
    let name = entry.file_name()?;
    let mut wasm = name.to_owned();
    wasm.push(".wasm");
    [
        entry.join(name),
        entry.join("bin").join(name),
        entry.join("main"),
        entry.join(wasm),
    ]
    .into_iter()
    .find(|candidate| candidate.is_file())
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &std::fs::Metadata) -> bool {
    true
}
