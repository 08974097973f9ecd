//! Signed packages: `keygen`, `pack --sign`, and the checks of `install`,
//! `list` and `inspect`.
//!
//! A signature is a standard minisign signature (Ed25519 over the BLAKE2b-512
//! hash of the signed bytes) of the plugin's **portable component**, the
//! bytes its author built. Its trusted comment (signed too) names the plugin
//! id, version, the component's SHA-256 and the capabilities the plugin
//! declares, so a signature cannot be moved to another plugin or version,
//! and a re-packed file cannot claim other capabilities under it (the
//! header's list and manifest must match). Signatures made before the
//! capabilities were named still verify, and say they do not cover them.
//! It is stored in the pack header; `install` keeps it, because the
//! installed file carries the same component.
//!
//! What it does not cover: the grants packed into a file (a user states or
//! keeps them at install, where they are all printed) and the native
//! launcher part of a packed file (`install` replaces it with the user's
//! own launcher; a downloaded packed file run directly trusts its native
//! part whatever the signature says).

use std::io::Cursor;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use lingxi_wasm_host::pack::sha256_hex;
use minisign::{PublicKey, SecretKey, SecretKeyBox};

/// The environment variable a key's password can come from (CI); without
/// it, the password is asked on the terminal.
pub const PASSWORD_ENV: &str = "LINGXI_WASM_KEY_PASSWORD";
/// Longest signature text read from a file (a real one is ~350 bytes).
const MAX_SIGNATURE: usize = 4096;
/// Longest trusted-keys file read.
const MAX_KEYS_FILE: u64 = 1 << 20;

/// `keygen -o PREFIX`: writes `PREFIX.key` (secret, mode 0600) and
/// `PREFIX.pub`, refusing to replace either.
pub fn keygen(prefix: &Path, no_password: bool) -> Result<()> {
    let stem = prefix
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty() && !prefix.is_dir())
        .with_context(|| {
            format!(
                "-o {}: give a path prefix such as ~/keys/alice (writes alice.key and alice.pub)",
                prefix.display()
            )
        })?;
    let secret_path = with_suffix(prefix, "key");
    let public_path = with_suffix(prefix, "pub");
    for path in [&secret_path, &public_path] {
        // A dangling link exists too: it is never followed.
        if path.symlink_metadata().is_ok() {
            bail!(
                "{} exists; choose another -o PREFIX (keys are never overwritten)",
                path.display()
            );
        }
    }
    let pair = if no_password {
        minisign::KeyPair::generate_unencrypted_keypair()
    } else {
        minisign::KeyPair::generate_encrypted_keypair(std::env::var(PASSWORD_ENV).ok())
    }
    .map_err(|e| anyhow::anyhow!("cannot generate a key pair: {e}"))?;
    let id = key_id(pair.pk.keynum());
    // The comment names the key in `list` and `inspect`.
    let public = format!(
        "untrusted comment: {stem} (lingxi-wasm public key {id})\n{}\n",
        pair.pk.to_base64()
    );
    let secret = pair
        .sk
        .to_box(Some(&format!("lingxi-wasm secret key {id}")))
        .map_err(|e| anyhow::anyhow!("cannot encode the secret key: {e}"))?
        .to_string();
    write_new(&secret_path, secret.as_bytes(), 0o600)?;
    write_new(&public_path, public.as_bytes(), 0o644)?;
    println!("key {id}");
    println!(
        "secret key  {} (keep it private; sign with `pack --sign {}`)",
        secret_path.display(),
        secret_path.display()
    );
    println!(
        "public key  {} (give it to users: `install --trust {}`)",
        public_path.display(),
        public_path.display()
    );
    Ok(())
}

fn with_suffix(prefix: &Path, suffix: &str) -> PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push(".");
    name.push(suffix);
    PathBuf::from(name)
}

fn write_new(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The secret key at `path`, decrypted with the password from
/// [`PASSWORD_ENV`] or the terminal.
pub fn load_secret_key(path: &Path) -> Result<SecretKey> {
    let text = read_small(path)
        .with_context(|| format!("cannot read the secret key {}", path.display()))?;
    #[cfg(unix)]
    if let Ok(meta) = std::fs::metadata(path) {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            eprintln!(
                "warning: the secret key {} can be read by other users; make it private (chmod 600)",
                path.display()
            );
        }
    }
    let boxed = || {
        SecretKeyBox::from_string(&text)
            .map_err(|e| anyhow::anyhow!("{} is not a minisign secret key: {e}", path.display()))
    };
    // A key made with --no-password opens as it is; any other needs its
    // password.
    if let Ok(key) = SecretKey::from_unencrypted_box(boxed()?) {
        return Ok(key);
    }
    SecretKey::from_box(boxed()?, std::env::var(PASSWORD_ENV).ok()).map_err(|e| {
        anyhow::anyhow!(
            "cannot open the secret key {} ({e}); give its password on the terminal or in {PASSWORD_ENV}",
            path.display()
        )
    })
}

/// What a package is signed as: the plugin, its version, and the
/// capabilities it declares.
pub struct Signed<'a> {
    pub id: &'a str,
    pub version: &'a str,
    /// Wire names, as the manifest declares them.
    pub capabilities: &'a [String],
}

/// Signs `component` as `what`: the text of a minisign signature, for the
/// pack header. The signed comment names the plugin, its version, the
/// component's SHA-256 and the capabilities it declares.
pub fn sign(key: &SecretKey, component: &[u8], what: Signed<'_>) -> Result<String> {
    let Signed {
        id,
        version,
        capabilities,
    } = what;
    let comment = format!(
        "lingxi-wasm plugin={id} version={version} component-sha256={} capabilities={} timestamp={}",
        sha256_hex(component),
        capabilities.join(","),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    );
    let untrusted = format!("signature of {id} {version} by lingxi-wasm pack");
    let signature = minisign::sign(
        None,
        key,
        Cursor::new(component),
        Some(&comment),
        Some(&untrusted),
    )
    .map_err(|e| anyhow::anyhow!("cannot sign: {e}"))?;
    Ok(signature.into_string())
}

/// The public keys a user trusts: `--trust` flags and the trusted-keys file.
#[derive(Default)]
pub struct Trust {
    keys: Vec<(PublicKey, String)>,
}

/// Where `--trusted-keys` points by default.
pub fn default_keys_file() -> Option<PathBuf> {
    lingxi_wasm_policy::places::lingxi_home().map(|home| home.join("lingxi-wasm-trusted-keys"))
}

impl Trust {
    /// Keys from `file` (if it exists; an explicit one must) and `given`
    /// (a `.pub` file, or a key's base64 text).
    pub fn load(file: Option<&Path>, given: &[String]) -> Result<Trust> {
        let mut trust = Trust::default();
        match file {
            Some(file) => trust.read_file(file, true)?,
            None => {
                if let Some(file) = default_keys_file().filter(|f| f.exists()) {
                    trust.read_file(&file, true)?;
                }
            }
        }
        for key in given {
            if Path::new(key).is_file() {
                // A key file named on the command line is the user's choice.
                trust.read_file(Path::new(key), false)?;
            } else {
                let parsed = PublicKey::from_base64(key.trim()).map_err(|_| {
                    anyhow::anyhow!(
                        "--trust {key:?} is neither a public key file nor a key (the line that starts with RW in a .pub file)"
                    )
                })?;
                trust.keys.push((parsed, "given with --trust".into()));
            }
        }
        Ok(trust)
    }

    /// Reads minisign public keys, one per line (blank lines and `#` comments
    /// skipped); an `untrusted comment:` line names the key after it. A
    /// `shared` file (the trusted-keys file) must be the user's alone.
    fn read_file(&mut self, path: &Path, shared: bool) -> Result<()> {
        // Through a link, the file read is the one checked.
        let resolved;
        let path = if shared {
            resolved = only_mine(path)?;
            resolved.as_path()
        } else {
            path
        };
        let text = read_small(path)
            .with_context(|| format!("cannot read trusted keys from {}", path.display()))?;
        let mut name = None;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(comment) = line.strip_prefix("untrusted comment:") {
                name = Some(comment.trim().to_owned());
                continue;
            }
            let key = PublicKey::from_base64(line).map_err(|_| {
                anyhow::anyhow!(
                    "{}:{}: not a minisign public key; a trusted-keys file holds lines such as those of a .pub file",
                    path.display(),
                    n + 1
                )
            })?;
            let name = name.take().unwrap_or_else(|| path.display().to_string());
            self.keys.push((key, name));
        }
        Ok(())
    }
}

/// A key file's text: a regular file of at most [`MAX_KEYS_FILE`] bytes.
fn read_small(path: &Path) -> Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    if !file.metadata()?.is_file() {
        bail!("not a regular file");
    }
    let mut bytes = Vec::new();
    file.take(MAX_KEYS_FILE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_KEYS_FILE {
        bail!("larger than {MAX_KEYS_FILE} bytes");
    }
    String::from_utf8(bytes).context("not text")
}

/// Refuses a trusted-keys file that someone else could have written (see
/// [`lingxi_wasm_launcher::private`]); returns the file to read (a link
/// resolved).
fn only_mine(path: &Path) -> Result<std::path::PathBuf> {
    use lingxi_wasm_launcher::private;
    private::check(path).map_err(|e| {
        anyhow::anyhow!(
            "trusted keys in {} are not used: {e}, or pass keys with --trust",
            path.display()
        )
    })
}

mod verify;
pub use verify::{Verdict, choose, verify};

/// A minisign key id as minisign prints it.
fn key_id(keynum: &[u8]) -> String {
    let mut bytes = [0u8; 8];
    let n = keynum.len().min(8);
    bytes[..n].copy_from_slice(&keynum[..n]);
    format!("{:016X}", u64::from_le_bytes(bytes))
}

#[cfg(test)]
mod tests;

/// The id of the key that made the signature `text`, if it is one.
pub fn signer(text: &str) -> Option<String> {
    minisign::SignatureBox::from_string(text)
        .ok()
        .map(|s| key_id(s.keynum()))
}
