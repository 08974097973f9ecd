//! End-to-end tests: they build the guest components from source and drive
//! the real `lingxi-wasm-run` binary over stdin/stdout as a LingXi host would;
//! `embed*` test the library's embedding API (plugin sets, sessions) through
//! its public surface only.

mod attacks;
mod cache_bound;
mod cache_trust;
mod check;
mod compat;
mod compiler;
mod conformance;
mod contracts;
mod cross;
mod embed;
mod embed_contracts;
mod embed_load;
mod embed_mounts;
mod embed_pool;
mod first_hour;
mod function_cache;
mod isolation;
mod learn;
mod lifecycle;
mod mcp;
mod mcp_http;
mod newcomer;
mod packed;
mod packed_trust;
mod polyglot;
mod receipts;
mod record;
mod registry;
mod runtime_base;
mod secrets;
mod signing;
mod soak;
mod support;
mod tasks;
mod upgrades;
mod workspace_stats;
