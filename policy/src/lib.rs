//! # lingxi-wasm-policy
//!
//! What a sandboxed LingXi plugin may touch, decided without an engine.
//! `lingxi-wasm-host` runs plugins in wasmtime and asks this crate every
//! question of *what is allowed*; front ends (the launcher, a fuzz target,
//! an agent host's settings screen) use it without building a compiler.
//!
//! Where things are decided:
//! - [`Capability`]: the four capabilities by their wire names;
//! - [`Grant`] and [`Policy`]: what the user allows, and what a plugin gets
//!   of what it declares (declared ∩ granted); the lines a front end says
//!   where the two differ;
//! - [`settings`]: every setting, declared once ([`PolicySpec`]: the
//!   policy file's keys, and with the `cli` feature a front end's flags;
//!   [`Setting`]: its name in messages); [`mod@file`]: reading a policy
//!   file and resolving a spec into a [`Grant`] and [`Limits`];
//! - [`wording`]: the setting a message names, as data, in the front end's
//!   words ([`Setting`], [`set_wording`]);
//! - [`net`]: the network allow-list (`HOST:PORT` rules, lookups, the
//!   refusals' notes); [`files`] and [`under_root`]: folders, mounts and
//!   why a path was refused ([`Grant::folders`]: what a grant mounts under
//!   a snapshot's root);
//! - [`upgrade`]: what a replacement could reach that the one in place
//!   could not (no silent escalation);
//! - [`learn`]: the narrowest policy that covers what recorded calls did;
//! - [`receipt`]: what one call did, as data;
//! - [`secrets`]: the secrets a plugin is granted by name, the hosts they
//!   are bound to, and hiding their values in what a host writes;
//! - [`limits`]: every number a plugin can run into;
//! - [`places`] and [`storage`]: the user's folders, and where a plugin's
//!   data directory is; [`owner`]: who owns a file and who else may change
//!   it (what every folder that decides what runs is checked against);
//!   [`text`]: text as it is shown (printable, capped).
//!
//! ```
//! use lingxi_wasm_policy::{Capability, Grant, Policy};
//!
//! // The user grants projectRead only; the plugin declares more.
//! let grant = Grant {
//!     capabilities: Some(vec![Capability::ProjectRead]),
//!     ..Grant::default()
//! };
//! let declared = [Capability::ProjectRead, Capability::NetworkAccess];
//! let policy = Policy::decide(&declared, &grant);
//! assert!(policy.allows(Capability::ProjectRead));
//! assert!(!policy.allows(Capability::NetworkAccess));
//! // Worded as the policy file says it, unless a front end sets its own
//! // words (`set_wording`).
//! assert_eq!(
//!     policy.differences(),
//!     [r#"declares networkAccess but it is not granted (grant it with grant = ["networkAccess"])"#]
//! );
//! ```

#![warn(missing_docs)]

mod capability;
mod error;
pub mod file;
pub mod files;
mod folders;
mod grant;
pub mod learn;
pub mod limits;
mod mounts;
pub mod net;
pub mod owner;
pub mod places;
pub mod receipt;
pub mod secrets;
pub mod settings;
pub mod storage;
pub mod text;
pub mod under_root;
pub mod upgrade;
pub mod wording;

pub use capability::Capability;
pub use file::{PolicyError, PolicySpec};
pub use grant::{Access, Grant, Policy};
pub use limits::Limits;
pub use mounts::Folders;
pub use net::{NetGuard, NetRule, NetRuleError};
pub use settings::Setting;
pub use under_root::{RootFolderError, UnderRoot};
pub use wording::{PolicyFileWording, Wording, set_wording};

/// The crate's README (what crates.io shows), its example compiled and run
/// as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
