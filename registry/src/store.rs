//! The content-addressed store of what was pulled: `blobs/sha256/HEX` for
//! every manifest, config, component and signature by its digest, and
//! `tags/HEX` for what a tag resolved to (named by the SHA-256 of the
//! reference, so that no registry or repository name becomes a path). A
//! second use of a reference reads the store, not the network.
//!
//! The store decides nothing by itself: every blob is hashed again when it
//! is read and must have the digest it is filed under, and a tag's entry
//! only names a digest. Still, the folder must be the user's and writable
//! by nobody else, as the compile cache's (`lingxi_wasm_policy::owner`); a
//! folder that is not is refused, naming it, and so is one whose parent lets
//! others rename it. Each file read, and each folder down to it, must be so
//! too: one that is not is not used. Files are written to a
//! temporary name and renamed into place once complete and checked, so a
//! failed or hostile pull leaves nothing under a digest.

use std::io::Write;
use std::path::{Path, PathBuf};

use lingxi_wasm_policy::owner::{self, Access, Owner, create_private_dir};

use crate::digest::Digest;
use crate::error::RegistryError;
use crate::reference::Reference;

/// Longest tag entry read (a digest and a reference).
const MAX_TAG_ENTRY: u64 = 4096;

/// A store folder.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The store in `dir` (created private on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Store { dir: dir.into() }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Checks the folder may be used (see the module documentation),
    /// creating it private if it does not exist.
    pub fn open(&self) -> Result<(), RegistryError> {
        let refuse = |why: String| RegistryError::Store {
            path: self.dir.clone(),
            why,
        };
        if std::fs::symlink_metadata(&self.dir).is_err() {
            create_private_dir(&self.dir).map_err(|e| refuse(format!("cannot create it: {e}")))?;
        }
        let meta = std::fs::symlink_metadata(&self.dir)
            .map_err(|e| refuse(format!("cannot examine it: {e}")))?;
        if !meta.is_dir() {
            return Err(refuse(
                "it is not a directory (a symbolic link is not followed)".into(),
            ));
        }
        match owner::access(&self.dir) {
            Err(e) => Err(refuse(format!("cannot tell who may write to it: {e}"))),
            Ok(Access {
                owner: Owner::Other(who),
                ..
            }) => Err(refuse(format!("it is owned by {who}, not by this user"))),
            Ok(Access {
                others_may_write: true,
                ..
            }) => Err(refuse(
                "others may write to it; make it private (chmod 700; on Windows, remove other users from its permissions)".into(),
            )),
            Ok(_) => Ok(()),
        }?;
        // Whoever may rename entries of the folder holding it, or replace
        // that folder (its owner, or whoever a link there leads to), could
        // put another store in its place: the folder must be as the compile
        // cache's own (which it is, in the launcher).
        if let Some(parent) = self.dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            let linked = std::fs::symlink_metadata(parent).map_or(true, |m| m.is_symlink());
            let open = owner::access(parent).map_or(true, |a| {
                a.others_may_rename_entries || matches!(a.owner, Owner::Other(_))
            });
            if linked || open {
                return Err(refuse(format!(
                    "its folder {} is a symbolic link, another user's, or lets others rename what it holds; make that folder a private folder of yours (chmod 700; on Windows, remove other users from its permissions)",
                    parent.display()
                )));
            }
        }
        Ok(())
    }

    /// Whether `path`, a file in the store, may be read: it and every
    /// folder from the store's down to it are no symbolic link, this user's
    /// (or the system's) and writable by nobody else. One that is not is not used
    /// (and not removed: it is not ours to remove), and the reason logged.
    fn private(&self, path: &Path) -> bool {
        let Ok(inside) = path.strip_prefix(&self.dir) else {
            return false;
        };
        let mut at = self.dir.clone();
        let mut places = vec![at.clone()];
        for part in inside.components() {
            at.push(part);
            places.push(at.clone());
        }
        for place in places {
            // A link is not followed: what it leads to is not checked here.
            let linked = std::fs::symlink_metadata(&place).map_or(true, |m| m.is_symlink());
            let mine = owner::access(&place)
                .is_ok_and(|a| !matches!(a.owner, Owner::Other(_)) && !a.others_may_write);
            if linked || !mine {
                tracing::warn!(
                    "not using {} from the registry store: it is a symbolic link, another user's, or others may write to it; make the store private (chmod -R go-w {})",
                    place.display(),
                    self.dir.display()
                );
                return false;
            }
        }
        true
    }

    /// Where blob `digest` is kept.
    pub fn blob_path(&self, digest: &Digest) -> PathBuf {
        self.dir.join("blobs").join("sha256").join(digest.hex())
    }

    /// Blob `digest`, if the store has it whole: its bytes are hashed
    /// again, and a file that does not match is removed.
    pub fn blob(&self, digest: &Digest, max: u64) -> Option<Vec<u8>> {
        let path = self.blob_path(digest);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if !meta.is_file() || meta.len() > max || !self.private(&path) {
            return None;
        }
        let bytes = std::fs::read(&path).ok()?;
        if Digest::of(&bytes) != *digest {
            tracing::warn!(
                "removing {} from the registry store: its bytes do not match its name",
                path.display()
            );
            let _ = std::fs::remove_file(&path);
            return None;
        }
        Some(bytes)
    }

    /// Files `bytes`, which must have `digest`; returns where.
    pub fn put_blob(&self, digest: &Digest, bytes: &[u8]) -> Result<PathBuf, RegistryError> {
        if Digest::of(bytes) != *digest {
            return Err(RegistryError::Store {
                path: self.blob_path(digest),
                why: "the bytes to keep do not have the digest they are filed under".into(),
            });
        }
        let path = self.blob_path(digest);
        self.write_atomically(&path, bytes)?;
        Ok(path)
    }

    /// Where blob `digest` of `size` bytes is kept, if the file there is
    /// whole: it is hashed again (streaming), and one that does not match
    /// is removed.
    pub fn checked_blob_path(&self, digest: &Digest, size: u64) -> Option<PathBuf> {
        use std::io::Read;
        let path = self.blob_path(digest);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if !meta.is_file() || meta.len() != size || !self.private(&path) {
            return None;
        }
        let mut file = std::fs::File::open(&path).ok()?;
        let mut verifier = crate::digest::Verifier::new(*digest, size);
        let mut buffer = vec![0u8; 1 << 16];
        loop {
            let n = file.read(&mut buffer).ok()?;
            if n == 0 {
                break;
            }
            verifier.update(&buffer[..n]).ok()?;
        }
        if verifier.finish().is_err() {
            tracing::warn!(
                "removing {} from the registry store: its bytes do not match its name",
                path.display()
            );
            let _ = std::fs::remove_file(&path);
            return None;
        }
        Some(path)
    }

    /// A temporary file beside the blobs, to be renamed to its digest once
    /// checked (dropped, it is removed).
    pub fn temporary(&self) -> Result<tempfile::NamedTempFile, RegistryError> {
        self.open()?;
        let dir = self.dir.join("blobs").join("sha256");
        let fail = |e: std::io::Error| RegistryError::Store {
            path: dir.clone(),
            why: format!("cannot write in it: {e}"),
        };
        create_private_dir(&dir).map_err(fail)?;
        tempfile::Builder::new()
            .prefix(".partial-")
            .tempfile_in(&dir)
            .map_err(fail)
    }

    /// The signatures (their blobs' digests) kept for manifest `digest`;
    /// `None` if it was never pulled whole.
    pub fn referrers(&self, digest: &Digest) -> Option<Vec<Digest>> {
        let path = self.dir.join("referrers").join(digest.hex());
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if !meta.is_file() || meta.len() > MAX_TAG_ENTRY * 16 || !self.private(&path) {
            return None;
        }
        let text = std::fs::read_to_string(&path).ok()?;
        text.lines().map(|l| Digest::parse(l).ok()).collect()
    }

    /// Keeps the signatures (their blobs' digests) of manifest `digest`.
    pub fn put_referrers(
        &self,
        digest: &Digest,
        signatures: &[Digest],
    ) -> Result<(), RegistryError> {
        let text: String = signatures.iter().map(|d| format!("{d}\n")).collect();
        let path = self.dir.join("referrers").join(digest.hex());
        self.write_atomically(&path, text.as_bytes())
    }

    /// What `reference`'s tag resolved to when it was last pulled.
    pub fn tag(&self, reference: &Reference) -> Option<Digest> {
        let path = self.tag_path(reference);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if !meta.is_file() || meta.len() > MAX_TAG_ENTRY || !self.private(&path) {
            return None;
        }
        let text = std::fs::read_to_string(&path).ok()?;
        let (digest, named) = text.split_once('\n')?;
        // The entry names its reference: another's is not used.
        (named.trim_end() == tag_key(reference))
            .then(|| Digest::parse(digest).ok())
            .flatten()
    }

    /// Remembers that `reference`'s tag resolved to `digest`.
    pub fn put_tag(&self, reference: &Reference, digest: &Digest) -> Result<(), RegistryError> {
        let text = format!("{digest}\n{}\n", tag_key(reference));
        self.write_atomically(&self.tag_path(reference), text.as_bytes())
    }

    fn tag_path(&self, reference: &Reference) -> PathBuf {
        let key = Digest::of(tag_key(reference).as_bytes());
        self.dir.join("tags").join(key.hex())
    }

    fn write_atomically(&self, path: &Path, bytes: &[u8]) -> Result<(), RegistryError> {
        let fail = |why: String| RegistryError::Store {
            path: path.to_owned(),
            why,
        };
        self.open()?;
        let parent = path.parent().unwrap_or(&self.dir);
        create_private_dir(parent).map_err(|e| fail(format!("cannot create its folder: {e}")))?;
        let mut tmp = tempfile::NamedTempFile::new_in(parent)
            .map_err(|e| fail(format!("cannot write it: {e}")))?;
        tmp.write_all(bytes)
            .and_then(|()| tmp.as_file().sync_all())
            .map_err(|e| fail(format!("cannot write it: {e}")))?;
        tmp.persist(path)
            .map_err(|e| fail(format!("cannot write it: {}", e.error)))?;
        Ok(())
    }
}

/// A tag entry's key: the reference without a digest, with its tag.
fn tag_key(reference: &Reference) -> String {
    format!(
        "{}{}/{}:{}",
        crate::reference::SCHEME,
        reference.registry(),
        reference.repository(),
        reference.tag().unwrap_or(crate::reference::DEFAULT_TAG)
    )
}

#[cfg(test)]
mod tests;
