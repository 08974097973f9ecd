//! Target `policy`: the text of a `--policy` file through
//! `PolicySpec::from_toml` (what `from_file` runs on the file's text), then
//! `resolve`, as the launcher does before a start or a pack
//! (`policy/src/file.rs`). Directories are only canonicalized: the
//! target never writes anything.
//!
//! Invariants: no panic (nor stack overflow, whatever the nesting); a parse
//! error names the file; a spec that resolves round-trips through JSON, as
//! it is kept in a packed file's header, and is unchanged when merged with
//! the empty spec on either side; resolving it grants no capability twice
//! (and re-parsing their wire names gives the same list), one network rule
//! per `allow-net` entry whose text parses back to it, environment entries
//! with a non-empty key free of `=` and NUL, absolute directories, no data
//! directory under `no-storage`, a timeout in (0, 3600] s and at least one
//! MiB of memory.

use std::path::Path;
use std::time::Duration;

use lingxi_wasm_policy::file::parse_capabilities;
use lingxi_wasm_policy::net::NetRule;
use lingxi_wasm_policy::{PolicyError, PolicySpec};

use crate::json::close;
use crate::{Violation, ensure};

const TARGET: &str = "policy";
const NAME: &str = "fuzz-policy.toml";

/// See the module documentation.
pub fn check(data: &[u8]) -> Result<(), Violation> {
    // `from_file` reads the file as UTF-8 text first.
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    let spec = match PolicySpec::from_toml(text, Path::new(NAME)) {
        Ok(spec) => spec,
        Err(e) => {
            ensure!(
                matches!(e, PolicyError::Parse { .. }) && e.to_string().contains(NAME),
                "parse error {e} does not name the file"
            );
            return Ok(());
        }
    };
    let _ = spec.resolve(|_| None);
    let (grant, limits) = match spec.resolve(|key| Some(format!("from-env-{key}"))) {
        Ok(resolved) => resolved,
        Err(e) => {
            ensure!(!e.to_string().is_empty(), "an error without a message");
            return Ok(());
        }
    };
    // The spec as a packed header keeps it.
    let json = serde_json::to_value(&spec).unwrap_or_default();
    let back: Option<PolicySpec> = serde_json::from_value(json).ok();
    ensure!(
        back.as_ref().is_some_and(|back| same_spec(back, &spec)),
        "{spec:?} came back from JSON as {back:?}"
    );
    ensure!(
        same_spec(&spec.clone().merge(PolicySpec::default()), &spec)
            && same_spec(&PolicySpec::default().merge(spec.clone()), &spec),
        "merging {spec:?} with the empty spec changed it"
    );
    if let Some(capabilities) = &grant.capabilities {
        let names: Vec<String> = capabilities
            .iter()
            .map(|c| c.wire_name().to_owned())
            .collect();
        let again = parse_capabilities(&names).ok();
        ensure!(
            (1..capabilities.len()).all(|i| !capabilities[..i].contains(&capabilities[i]))
                && again.as_ref() == Some(capabilities),
            "granted {capabilities:?}, which parse back as {again:?}"
        );
    }
    ensure!(
        grant.capabilities.is_some() == spec.grant.is_some(),
        "grant {:?} became {:?}",
        spec.grant,
        grant.capabilities
    );
    ensure!(
        grant.allow_net.len() == spec.allow_net.len()
            && grant
                .allow_net
                .iter()
                .all(|rule| rule.to_string().parse::<NetRule>().as_ref() == Ok(rule)),
        "rules {:?} became {:?}",
        spec.allow_net,
        grant.allow_net
    );
    ensure!(
        grant.env.len() == spec.env.len()
            && grant
                .env
                .iter()
                .all(|(k, _)| !k.is_empty() && !k.contains(['=', '\0'])),
        "environment {:?} became {:?}",
        spec.env,
        grant.env
    );
    let dirs = (grant.workspace.iter())
        .chain(&grant.allow_read)
        .chain(&grant.allow_write)
        .chain(&grant.data_root);
    ensure!(
        dirs.clone().all(|d| d.is_absolute()),
        "relative directories in {:?}",
        dirs.collect::<Vec<_>>()
    );
    ensure!(
        !spec.no_storage || grant.data_root.is_none(),
        "no-storage with a data root {:?}",
        grant.data_root
    );
    ensure!(
        limits.call_timeout > Duration::ZERO
            && limits.call_timeout <= Duration::from_secs(3600)
            && limits.max_memory_bytes >= 1024 * 1024,
        "limits {limits:?} from {spec:?}"
    );
    Ok(())
}

/// Specs are equal, the timeout up to JSON's float precision.
fn same_spec(a: &PolicySpec, b: &PolicySpec) -> bool {
    let timeouts = match (a.timeout, b.timeout) {
        (Some(x), Some(y)) => close(x, y),
        (x, y) => x == y,
    };
    let mut a = a.clone();
    a.timeout = b.timeout;
    timeouts && a == *b
}
