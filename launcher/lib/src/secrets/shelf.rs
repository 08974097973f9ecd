//! The secrets file, `~/.lingxiagent/secrets.json`: every secret's plugin,
//! name and store, and the values of those the user chose to keep in the
//! file (`--store file`). Private: it is read only when it and every
//! folder above it are the user's and writable by nobody else
//! ([`crate::private::check`]), written with mode 0600 in a folder made
//! 0700, atomically (a temporary file renamed over it).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use lingxi_wasm_host::policy::secrets::SecretValue;

use super::{SecretError, keyring};

/// Longest secrets file read.
const MAX_FILE: u64 = 4 << 20;

/// Where a secret's value is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Store {
    /// The platform's keyring.
    Keyring,
    /// The private secrets file (where no keyring is reachable).
    File,
}

/// One secret as the file lists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The plugin's id.
    pub plugin: String,
    /// The secret's name.
    pub name: String,
    /// Where its value is.
    pub store: Store,
    /// The value, for the file store only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<String>,
}

#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: u32,
    secrets: Vec<Entry>,
}

/// The secrets file, as read.
pub struct Shelf {
    path: PathBuf,
    file: File,
}

/// The secrets file's path as messages show it.
pub(super) fn file_shown() -> String {
    path().map_or_else(
        |_| "~/.lingxiagent/secrets.json".into(),
        |p| p.display().to_string(),
    )
}

fn path() -> Result<PathBuf, SecretError> {
    let home = lingxi_wasm_host::policy::places::lingxi_home().ok_or(SecretError::NoHome)?;
    Ok(home.join("secrets.json"))
}

impl Shelf {
    /// The secrets file (empty if there is none yet).
    pub fn open() -> Result<Shelf, SecretError> {
        let path = path()?;
        let fail = |why: String| SecretError::File {
            path: path.clone(),
            why,
        };
        if !path.exists() {
            return Ok(Shelf {
                path,
                file: File::default(),
            });
        }
        crate::private::check(&path).map_err(|e| fail(format!("not used: {e}")))?;
        let text = read_capped(&path).map_err(|e| fail(e.to_string()))?;
        let file: File =
            serde_json::from_str(&text).map_err(|e| fail(format!("not valid: {e}")))?;
        // Where it holds values, nobody else may read it either (names
        // alone are no secret).
        if file.secrets.iter().any(|e| e.store == Store::File) {
            let access =
                lingxi_wasm_host::policy::owner::access(&path).map_err(|e| fail(e.to_string()))?;
            if access.others_may_read {
                return Err(fail(
                    "not used: others may read it, and it holds secrets' values; make it readable by you alone (chmod 600)".into(),
                ));
            }
        }
        Ok(Shelf { path, file })
    }

    /// Every secret listed, of `plugin` or of all.
    pub fn list(&self, plugin: Option<&str>) -> Vec<&Entry> {
        (self.file.secrets.iter())
            .filter(|e| plugin.is_none_or(|p| p == e.plugin))
            .collect()
    }

    /// Whether the file itself keeps the value of `name` of `plugin`.
    pub fn in_file(&self, plugin: &str, name: &str) -> bool {
        self.find(plugin, name)
            .is_some_and(|e| e.store == Store::File)
    }

    fn find(&self, plugin: &str, name: &str) -> Option<&Entry> {
        (self.file.secrets.iter()).find(|e| e.plugin == plugin && e.name == name)
    }

    /// The value of `name` for `plugin`: from the store the file names
    /// (the keyring when the file does not list it, a secret set by
    /// another tool).
    pub fn get(
        &self,
        plugin: &str,
        name: &str,
        wait: std::time::Duration,
    ) -> Result<Option<SecretValue>, SecretError> {
        match self.find(plugin, name) {
            Some(Entry {
                store: Store::File,
                value,
                ..
            }) => value.as_deref().map(super::value_of).transpose(),
            _ => keyring::get(plugin, name, wait),
        }
    }

    /// Keeps `value` as `name` of `plugin` in `store`, and lists it (a
    /// value kept before in the other store is removed from it).
    pub fn set(
        &mut self,
        plugin: &str,
        name: &str,
        value: &SecretValue,
        store: Store,
    ) -> Result<(), SecretError> {
        let before = self.find(plugin, name).map(|e| e.store);
        match store {
            Store::Keyring => keyring::set(plugin, name, value)?,
            Store::File => {
                if before == Some(Store::Keyring) {
                    keyring::delete(plugin, name)?;
                }
            }
        }
        self.file
            .secrets
            .retain(|e| !(e.plugin == plugin && e.name == name));
        self.file.secrets.push(Entry {
            plugin: plugin.to_owned(),
            name: name.to_owned(),
            store,
            value: (store == Store::File).then(|| value.expose().to_owned()),
        });
        self.save()
    }

    /// Removes `name` of `plugin` wherever it is kept; whether it was.
    pub fn remove(&mut self, plugin: &str, name: &str) -> Result<bool, SecretError> {
        let listed = self.find(plugin, name).map(|e| e.store);
        let in_keyring = match listed {
            Some(Store::File) => false,
            _ => keyring::delete(plugin, name)?,
        };
        if listed.is_none() {
            return Ok(in_keyring);
        }
        self.file
            .secrets
            .retain(|e| !(e.plugin == plugin && e.name == name));
        self.save()?;
        Ok(true)
    }

    fn save(&mut self) -> Result<(), SecretError> {
        let fail = |why: String| SecretError::File {
            path: self.path.clone(),
            why,
        };
        let dir = self
            .path
            .parent()
            .ok_or_else(|| fail("has no folder".into()))?;
        if !dir.exists() {
            lingxi_wasm_host::policy::owner::create_private_dir(dir)
                .map_err(|e| fail(format!("cannot make its folder: {e}")))?;
        }
        crate::private::check(dir).map_err(|e| fail(format!("its folder is not used: {e}")))?;
        self.file.version = 1;
        self.file
            .secrets
            .sort_by(|a, b| (&a.plugin, &a.name).cmp(&(&b.plugin, &b.name)));
        let text = serde_json::to_string_pretty(&self.file).map_err(|e| fail(e.to_string()))?;
        let mut temporary =
            tempfile::NamedTempFile::new_in(dir).map_err(|e| fail(e.to_string()))?;
        std::io::Write::write_all(&mut temporary, text.as_bytes())
            .map_err(|e| fail(e.to_string()))?;
        // A named temporary file is made 0600 on Unix; on Windows it
        // inherits the folder's ACL, which `private::check` judged.
        temporary
            .persist(&self.path)
            .map_err(|e| fail(format!("cannot write it: {}", e.error)))?;
        Ok(())
    }
}

/// A file's text, refused past [`MAX_FILE`].
fn read_capped(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    let file = std::fs::File::open(path)?;
    file.take(MAX_FILE + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_FILE {
        return Err(std::io::Error::other(format!(
            "longer than {MAX_FILE} bytes"
        )));
    }
    Ok(text)
}
