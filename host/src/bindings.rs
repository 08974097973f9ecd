//! The generated host bindings of the `lingxi:plugin` WIT world
//! (`wit/lingxi-plugin.wit`, through the `lingxi-plugin-wit` crate; the
//! bindgen call and its options are written by `build.rs`). Private: the
//! crate re-exports an explicit list of these types from `lib.rs`.
//!
//! Exports are async: every call into a plugin is a future that the caller
//! bounds with its deadline (see `plugin/mod.rs`), so a guest blocked in WASI
//! is stopped as surely as one spinning. Imports stay synchronous: they only
//! read host memory and never block.

include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
