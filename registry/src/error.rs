//! Everything that can go wrong between this machine and a registry, as
//! data: which reference, what was refused and why, and — where a setting
//! would allow it — which one. No variant carries a credential: what a
//! user typed as a password or a registry sent as a token is never put in
//! an error.

use std::path::PathBuf;

use lingxi_wasm_policy::settings::Setting;

/// A registry operation that did not happen.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The reference itself is malformed.
    #[error(
        "{reference} is not a registry reference: {why} (write oci://HOST[:PORT]/REPOSITORY[:TAG][@sha256:HEX])"
    )]
    BadReference {
        /// The reference as given (shown printable and capped).
        reference: String,
        /// What is wrong with it.
        why: String,
    },
    /// What the registry sent is not what a plugin's artifact must be, or
    /// not what was asked for; nothing of it was kept.
    #[error("{reference}: refused what the registry sent: {why}; nothing was kept or run")]
    Refused {
        /// The reference.
        reference: String,
        /// What was wrong.
        why: String,
    },
    /// The registry answered with an error status.
    #[error("{reference}: the registry answered {status} to {what}{hint}")]
    Status {
        /// The reference.
        reference: String,
        /// The HTTP status.
        status: u16,
        /// What was asked (`the manifest`, `blob sha256:…`, `the upload`).
        what: String,
        /// What to do about it, if known (starts with `; `).
        hint: String,
    },
    /// The registry could not be reached or the connection broke.
    #[error("{reference}: cannot reach the registry: {why}")]
    Transport {
        /// The reference.
        reference: String,
        /// What failed (the connection, TLS, a read).
        why: String,
    },
    /// The operation did not finish within its deadline.
    #[error(
        "{reference}: the registry did not finish within {seconds} s (a slow or stalled registry); nothing was kept or run (a longer deadline: {})",
        Setting::RegistryTimeout
    )]
    Deadline {
        /// The reference.
        reference: String,
        /// The deadline.
        seconds: u64,
    },
    /// Plain HTTP to a host that is not this machine.
    #[error(
        "{reference}: refusing plain HTTP to {host}, which is not this machine (allow it with {} {host}, only on a network you trust)",
        Setting::AllowHttpRegistry
    )]
    PlainHttp {
        /// The reference.
        reference: String,
        /// The registry host.
        host: String,
    },
    /// A credential could not be read, or the registry refused it.
    #[error("{reference}: {why}")]
    Credentials {
        /// The reference.
        reference: String,
        /// What went wrong (never the secret itself).
        why: String,
    },
    /// The store folder cannot be used, or a file in it cannot be written.
    #[error("the registry store {}: {why} (choose another folder with {})", path.display(), Setting::CacheDir)]
    Store {
        /// The folder or file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// A file to push cannot be read.
    #[error("{}: {why}", path.display())]
    Input {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
}
