//! # lingxi-plugin-wit
//!
//! The `lingxi:plugin@0.1.0` WIT world (`wit/lingxi-plugin.wit` of the
//! lingxi-wasm repository, the one source of it) as text, so that every
//! crate generating bindings from it (the host's wasmtime bindings, the
//! guest SDK's wit-bindgen bindings) and every tool that hands it to a new
//! project reads the same bytes, from inside a package of its own.
//!
//! ```
//! assert!(lingxi_plugin_wit::WIT.contains("world lingxi-plugin"));
//! assert_eq!(lingxi_plugin_wit::WORLD, "lingxi-plugin");
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

/// The text of `lingxi-plugin.wit`.
pub const WIT: &str = include_str!("../lingxi-plugin.wit");

/// The world plugins implement.
pub const WORLD: &str = "lingxi-plugin";

/// The file name projects keep it under (`wit/lingxi-plugin.wit`).
pub const FILE_NAME: &str = "lingxi-plugin.wit";
