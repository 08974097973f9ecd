//! The parts of `lingxi-wasm-run` that the runtime-only base of packed
//! plugins (`lingxi-wasm-rt`, in `runtime/`) shares with it: serving the
//! protocol (JSONL, and MCP for a packed plugin started with `mcp`),
//! logging, and recording sessions. Nothing here compiles wasm.

#![warn(missing_docs)]

pub mod identity;
pub mod logfmt;
pub mod mcp;
pub mod private;
pub mod record;
pub mod secrets;
pub mod serve;
pub mod words;
pub mod workspace;
