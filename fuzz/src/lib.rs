//! Fuzz targets for every parser of untrusted bytes in lingxi-wasm.
//!
//! Each target is a `fn(&[u8])` that feeds the bytes to the real parsers
//! (nothing is re-implemented here) and checks the invariants that must
//! hold whatever the bytes are. A broken invariant panics, which afl-fuzz
//! records as a crash; the same functions replay the seeds in
//! `fuzz/corpus/<target>/` and the reproducers in `fuzz/regressions/<target>/`
//! in `cargo test` (`tests/seeds.rs`). Each target also has a `check_*`
//! twin that returns the broken invariant as a [`Violation`] instead.
//!
//! | target | parser | where |
//! |---|---|---|
//! | [`request`] | one JSONL request line, both dialects, as the server decodes it | `protocol/src/wire.rs`, `host/src/server.rs` |
//! | [`dto`] | the params DTOs, the manifest, plugin answers and their WIT conversion | `protocol/src/dto.rs`, `protocol/src/convert.rs` |
//! | [`pack`] | a packed executable's trailer, header and blob layout | `pack/src/lib.rs` |
//! | [`policy`] | a TOML policy file, resolved into grants and limits | `policy/src/file.rs` |
//! | [`net`] | `allow-net` rules (`--allow-net`), and the guard judging guest host names | `policy/src/net.rs` |

#[cfg(feature = "engine")]
mod dto;
mod json;
mod net;
mod pack;
mod policy;
#[cfg(feature = "engine")]
mod request;

#[cfg(feature = "engine")]
pub use dto::check as check_dto;
pub use net::check as check_net;
pub use pack::check as check_pack;
pub use pack::pack_file;
pub use policy::check as check_policy;
#[cfg(feature = "engine")]
pub use request::check as check_request;

/// An invariant that the input broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{target}: {what}")]
pub struct Violation {
    /// The target that found it.
    pub target: &'static str,
    /// The invariant and the values that broke it.
    pub what: String,
}

/// Returns a [`Violation`] from the enclosing `check` unless `$cond` holds.
macro_rules! ensure {
    ($cond:expr, $($what:tt)+) => {{
        let holds: bool = $cond;
        if !holds {
            return Err($crate::Violation {
                target: TARGET,
                what: format!($($what)+),
            });
        }
    }};
}
pub(crate) use ensure;

/// A fuzz target: panics if the bytes break an invariant.
pub type Target = fn(&[u8]);

/// The targets by name, as the corpus folders and `scripts/fuzz` name them.
#[cfg(feature = "engine")]
pub const TARGETS: &[(&str, Target)] = &[
    ("request", request),
    ("dto", dto),
    ("pack", pack),
    ("policy", policy),
    ("net", net),
];

/// The targets that need no engine (the `engine` feature off).
#[cfg(not(feature = "engine"))]
pub const TARGETS: &[(&str, Target)] = &[("pack", pack), ("policy", policy), ("net", net)];

/// Panics with the violation, if any: how afl-fuzz sees a broken invariant.
fn or_crash(result: Result<(), Violation>) {
    if let Err(violation) = result {
        panic!("{violation}");
    }
}

/// One JSONL request line (several if `data` holds `\n`), decoded as the
/// server decodes it; see `request.rs` for the invariants.
#[cfg(feature = "engine")]
pub fn request(data: &[u8]) {
    or_crash(check_request(data));
}

/// JSON params and plugin answers through the DTOs and the WIT conversion;
/// see `dto.rs` for the invariants.
#[cfg(feature = "engine")]
pub fn dto(data: &[u8]) {
    or_crash(check_dto(data));
}

/// A packed executable's bytes, or a payload given a valid trailer; see
/// `pack.rs` for the invariants.
pub fn pack(data: &[u8]) {
    or_crash(check_pack(data));
}

/// The text of a policy file; see `policy.rs` for the invariants.
pub fn policy(data: &[u8]) {
    or_crash(check_policy(data));
}

/// `allow-net` rules and guest host names, one a line; see `net.rs` for
/// the invariants.
pub fn net(data: &[u8]) {
    or_crash(check_net(data));
}
