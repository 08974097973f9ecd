//! # lingxi-wasm-registry
//!
//! lingxi-wasm plugins in OCI registries, without an engine: a component
//! is pushed as the Wasm OCI artifact wkg and Wassette read, with the
//! plugin's id, version and declared capabilities as annotations and its
//! package signature as an OCI 1.1 referrer; it is pulled by tag or digest
//! with every answer capped and every blob checked against its digest as it
//! streams in, into a content-addressed store that a second use reads
//! without the network.
//!
//! Where things are decided:
//! - [`Reference`]: what `oci://HOST[:PORT]/REPOSITORY[:TAG][@sha256:HEX]`
//!   names; [`Digest`]: content digests and checking bytes against them;
//! - [`layout`]: the artifact's documents (media types, config, manifest,
//!   annotations, the signature's manifest, the referrers fallback tag);
//! - [`component`]: whether bytes are a component, and its imports and
//!   exports;
//! - [`Client`] and [`RegistryOptions`]: reaching a registry (schemes,
//!   redirects, caps, credentials, TLS roots in `tls`); every number is in
//!   `lingxi_wasm_policy::limits`;
//! - [`pull()`] and [`push()`]; [`Store`]: what was pulled, by digest;
//! - [`RegistryError`]: what went wrong, as data, never with a credential.
//!
//! What a signature proves, and when an install trusts it, is the
//! launcher's (its `signing` module); this crate only carries signatures.

#![warn(missing_docs)]

mod client;
pub mod component;
mod digest;
mod env;
mod error;
pub mod layout;
mod pull;
mod push;
mod reference;
mod store;
mod tls;

pub use client::{Client, RegistryOptions};
pub use digest::{Digest, Mismatch, Verifier};
pub use env::{PASSWORD_ENV, USERNAME_ENV};
pub use error::RegistryError;
pub use pull::{Pulled, Tags, pull};
pub use push::{PushRequest, Pushed, push};
pub use reference::{DEFAULT_TAG, Reference, SCHEME};
pub use store::Store;

/// Text from a registry or a user as a message shows it: printable, and
/// cut after [`MAX_SHOWN_REFERENCE`](lingxi_wasm_policy::limits::MAX_SHOWN_REFERENCE) bytes.
pub(crate) fn shown(text: &str) -> String {
    lingxi_wasm_policy::text::shown_within(text, lingxi_wasm_policy::limits::MAX_SHOWN_REFERENCE)
}
