//! The generated guest bindings of the `lingxi:plugin` WIT world
//! (`wit/lingxi-plugin.wit`, through the `lingxi-plugin-wit` crate; the
//! wit-bindgen call and its options are written by `build.rs`). Private:
//! the SDK re-exports an explicit list of these types from `lib.rs`, and
//! plugin authors never touch wit-bindgen directly.

// Generated items carry the WIT's own docs where it has them.
#![allow(missing_docs)]

include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
