//! Checks on a plugin's handshake: it must describe the sandbox it runs in
//! (the manifest the policy was decided from), and it is held to the result
//! limit like any other answer.

use crate::bindings::lingxi::plugin::types as wit;

/// The fields in which `told` (the handshake's manifest) differs from
/// `enforced` (the one the sandbox was built from), each naming both
/// values; empty when they agree. Capabilities are compared as sets.
pub(super) fn manifest_differences(enforced: &wit::Manifest, told: &wit::Manifest) -> Vec<String> {
    let mut differences = Vec::new();
    let mut field = |name: &str, enforced: String, told: String| {
        if enforced != told {
            differences.push(format!(
                "{name} is {told} in the handshake but {enforced} in the manifest"
            ));
        }
    };
    field("id", quoted(&enforced.id), quoted(&told.id));
    field("name", quoted(&enforced.name), quoted(&told.name));
    field("version", quoted(&enforced.version), quoted(&told.version));
    field(
        "description",
        quoted(&enforced.description),
        quoted(&told.description),
    );
    let optional = |text: &Option<String>| text.as_deref().map_or("none".to_owned(), quoted);
    field("author", optional(&enforced.author), optional(&told.author));
    field(
        "minimumCoreVersion",
        optional(&enforced.minimum_core_version),
        optional(&told.minimum_core_version),
    );
    field(
        "capabilities",
        capabilities(&enforced.capabilities),
        capabilities(&told.capabilities),
    );
    differences
}

/// `text` quoted for a message, cut to 80 characters: a difference is
/// named, not repeated in full.
fn quoted(text: &str) -> String {
    const SHOWN: usize = crate::limits::MAX_QUOTED_DIFFERENCE;
    match text.char_indices().nth(SHOWN) {
        None => format!("{text:?}"),
        Some((end, _)) => format!("{:?}… ({} bytes)", &text[..end], text.len()),
    }
}

/// Capability wire names, sorted and without repeats, e.g. `[projectRead]`.
fn capabilities(caps: &[wit::Capability]) -> String {
    let mut names: Vec<&str> = caps.iter().map(|c| c.wire_name()).collect();
    names.sort_unstable();
    names.dedup();
    format!("[{}]", names.join(", "))
}

/// Bytes of text in a handshake: what it costs to pass on.
pub(super) fn handshake_size(h: &wit::Handshake) -> usize {
    let m = &h.manifest;
    let manifest = [&m.id, &m.name, &m.version, &m.description]
        .iter()
        .map(|s| s.len())
        .sum::<usize>()
        + m.author.as_ref().map_or(0, String::len)
        + m.minimum_core_version.as_ref().map_or(0, String::len);
    let tools: usize = h
        .tools
        .iter()
        .map(|t| t.name.len() + t.description.len() + t.input_schema.len())
        .sum();
    let commands: usize = h
        .commands
        .iter()
        .map(|c| {
            c.name.len()
                + c.description.len()
                + c.category.len()
                + c.argument_hint.len()
                + c.aliases.iter().map(String::len).sum::<usize>()
        })
        .sum();
    manifest + h.sdk_version.as_ref().map_or(0, String::len) + tools + commands
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(id: &str, caps: Vec<wit::Capability>) -> wit::Manifest {
        wit::Manifest {
            id: id.into(),
            name: "N".into(),
            version: "1".into(),
            description: "D".into(),
            author: None,
            capabilities: caps,
            minimum_core_version: None,
        }
    }

    #[test]
    fn differences_name_the_field_and_both_values() {
        use wit::Capability::*;
        let enforced = manifest("com.a", vec![ProjectRead, NetworkAccess]);
        let same = manifest("com.a", vec![NetworkAccess, ProjectRead, ProjectRead]);
        assert!(manifest_differences(&enforced, &same).is_empty());
        let lie = manifest("com.b", vec![ProjectRead, ProjectWrite, NetworkAccess]);
        let d = manifest_differences(&enforced, &lie);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(
            d[0].contains("\"com.b\" in the handshake but \"com.a\""),
            "{d:?}"
        );
        assert!(
            d[1].contains("[networkAccess, projectRead, projectWrite] in the handshake"),
            "{d:?}"
        );
    }

    #[test]
    fn long_values_are_named_not_repeated() {
        let enforced = manifest("com.a", vec![]);
        let mut told = manifest("com.a", vec![]);
        told.description = "\u{1}".repeat(1_000_000);
        let d = manifest_differences(&enforced, &told);
        assert!(d[0].len() < 1000, "{}", d[0].len());
        assert!(d[0].contains("(1000000 bytes)"), "{}", d[0]);
    }
}
