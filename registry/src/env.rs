//! The environment variables that carry registry credentials, over the
//! docker config's: read by the client, named by every message that says
//! how to log in.

/// The user name a registry is asked with.
pub const USERNAME_ENV: &str = "LINGXI_WASM_REGISTRY_USERNAME";
/// The password (or token) a registry is asked with; see [`USERNAME_ENV`].
pub const PASSWORD_ENV: &str = "LINGXI_WASM_REGISTRY_PASSWORD";
