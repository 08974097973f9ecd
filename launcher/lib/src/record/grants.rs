//! What a recorded session was granted: a serving launcher writes it into
//! its recording (the `grants` line), and `learn --replay` takes it as its
//! ceiling, so that a learned policy never allows what the recorded
//! session was refused.

use std::path::Path;

use anyhow::{Context, Result};
use lingxi_wasm_host::PolicySpec;
use serde_json::Value;

/// `spec` as a recording keeps it: the policy-file keys, each variable
/// without its value (a value given with `--env KEY=VALUE` may be a
/// secret, and a recording is shared).
pub fn written(spec: &PolicySpec) -> Value {
    let mut spec = spec.clone();
    for entry in &mut spec.env {
        entry.truncate(entry.find('=').unwrap_or(entry.len()));
    }
    serde_json::to_value(spec).unwrap_or_default()
}

/// One line of a recording, as far as its grants go (everything else is
/// skipped unread).
#[derive(serde::Deserialize)]
struct Line {
    grants: Option<Value>,
}

/// The grants `file` records (its first `grants` line), or `None` if it
/// records none (a plugin not run by this launcher, or an older
/// recording).
pub fn recorded_grants(file: &Path) -> Result<Option<PolicySpec>> {
    let text = super::replay::read_recording(file)?;
    let mut lines = text.lines().enumerate().skip(1);
    let found = lines.find_map(|(i, line)| {
        let grants = serde_json::from_str::<Line>(line).ok()?.grants?;
        Some((i, grants))
    });
    let Some((i, grants)) = found else {
        return Ok(None);
    };
    let spec = serde_json::from_value(grants).with_context(|| {
        format!(
            "{}:{}: the grants recorded are not a policy",
            file.display(),
            i + 1
        )
    })?;
    Ok(Some(spec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_are_recorded_without_values_and_read_back() {
        let spec = PolicySpec {
            grant: Some(vec!["projectRead".into()]),
            env: vec!["LANG".into(), "TOKEN=hunter2-value".into()],
            allow_net: vec!["api.example.com:443".into()],
            ..PolicySpec::default()
        };
        let line = serde_json::json!({"grants": written(&spec), "t": 0.1});
        assert!(!line.to_string().contains("hunter2"), "{line}");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        let text = format!("{{\"case\":\"x\"}}\n{{\"send\":\"{{}}\",\"t\":0}}\n{line}\n");
        std::fs::write(&file, text).unwrap();
        let read = recorded_grants(&file).unwrap().unwrap();
        assert_eq!(read.env, ["LANG", "TOKEN"]);
        assert_eq!(read.grant, spec.grant);
        assert_eq!(read.allow_net, spec.allow_net);
        std::fs::write(&file, "{\"case\":\"x\"}\n{\"grants\":{\"grant\":1}}\n").unwrap();
        assert!(recorded_grants(&file).is_err());
        std::fs::write(&file, "{\"case\":\"x\"}\n{\"send\":\"{}\"}\n").unwrap();
        assert!(recorded_grants(&file).unwrap().is_none());
    }
}
