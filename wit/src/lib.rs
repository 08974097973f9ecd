//! # lingxi-plugin-wit
//!
//! The `lingxi:plugin` WIT package (`wit/lingxi-plugin.wit` of the
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

/// The package version of [`WIT`] (`package lingxi:plugin@VERSION;`).
pub const VERSION: &str = "0.1.2";

/// The world of a plugin that may run background tasks: the base world
/// plus the `tasks` import and the `task-runner` export. The SDKs build
/// against it.
pub const WORLD: &str = "lingxi-plugin";

/// The world of a plugin that runs no background tasks.
pub const BASE_WORLD: &str = "lingxi-plugin-base";

/// The package's name, without its version.
pub const PACKAGE: &str = "lingxi:plugin";

/// The full name of interface `name` of this version, as a component
/// imports or exports it: `interface("plugin")` is
/// `lingxi:plugin/plugin@0.1.2`.
pub fn interface(name: &str) -> String {
    format!("{PACKAGE}/{name}@{VERSION}")
}

/// The interface a component's import or export `name` names, if it is one
/// of this package at a version a host of [`VERSION`] links
/// ([`compatible`]): `lingxi:plugin/plugin@0.1.0` gives `Some("plugin")`.
pub fn interface_of(name: &str) -> Option<&str> {
    let (interface, version) = split(name)?;
    compatible(version).then_some(interface)
}

/// The version of this package that a component's import or export
/// `name` names, whatever it is: `lingxi:plugin/plugin@0.2.0` gives
/// `Some("0.2.0")`; `None` for a name of another package, or none.
pub fn version_of(name: &str) -> Option<&str> {
    split(name).map(|(_, version)| version)
}

/// Whether `version` is in [`VERSION`]'s line and later than it: a
/// component built against it may use what this version lacks.
pub fn later(version: &str) -> bool {
    compatible(version) && numbers(version) > numbers(VERSION)
}

fn split(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix(PACKAGE)?
        .strip_prefix('/')?
        .split_once('@')
}

/// `major.minor.patch` as numbers; none for anything else (a prerelease).
fn numbers(v: &str) -> Option<(u64, u64, u64)> {
    let mut parts = v.split('.');
    let numbers = (
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
    );
    parts.next().is_none().then_some(numbers)
}

/// Whether a component built against `version` of this package is in
/// [`VERSION`]'s compatibility line, the component model's semver rule
/// that wasmtime links by: the same major version (from 1.0.0), the same
/// minor version while the major is 0 (0.1.0 to 0.1.x), the exact version
/// below 0.1. Inside a line, a later version only adds (see
/// `CHANGELOG.md`), so a host of the line links every earlier component,
/// and a later component that uses nothing new.
pub fn compatible(version: &str) -> bool {
    match (numbers(version), numbers(VERSION)) {
        (Some((0, 0, patch)), Some((0, 0, ours))) => patch == ours,
        (Some((0, minor, _)), Some((0, ours, _))) => minor == ours && minor > 0,
        (Some((major, ..)), Some((ours, ..))) => major == ours && major > 0,
        _ => false,
    }
}

/// The interface every LingXi plugin component exports.
pub const PLUGIN_INTERFACE: &str = "plugin";

/// The interface a plugin that runs background tasks exports as well.
pub const TASK_RUNNER_INTERFACE: &str = "task-runner";

/// The plugin export in words, at any version of the line a host of
/// [`VERSION`] links: `lingxi:plugin/plugin@0.1.x`.
pub fn plugin_export() -> String {
    format!("{PACKAGE}/{PLUGIN_INTERFACE}@{}", line())
}

/// The versions of this package's line, in words: `0.1.x`.
pub fn line() -> String {
    match VERSION.split('.').collect::<Vec<_>>().as_slice() {
        ["0", "0", _] => VERSION.to_owned(),
        ["0", minor, _] => format!("0.{minor}.x"),
        [major, ..] => format!("{major}.x"),
        _ => VERSION.to_owned(),
    }
}

/// The file name projects keep it under (`wit/lingxi-plugin.wit`).
pub const FILE_NAME: &str = "lingxi-plugin.wit";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_constants_say_what_the_wit_says() {
        assert!(WIT.contains(&format!("package {PACKAGE}@{VERSION};")));
        assert!(WIT.contains(&format!("world {WORLD} {{")));
        assert!(WIT.contains(&format!("world {BASE_WORLD} {{")));
        assert_eq!(line(), "0.1.x");
    }

    #[test]
    fn versions_link_by_the_component_model_semver_line() {
        for (version, links) in [
            ("0.1.0", true),
            ("0.1.1", true),
            ("0.1.9", true),
            ("0.2.0", false),
            ("0.0.1", false),
            ("1.1.0", false),
            ("0.1.0-rc1", false),
            ("0.1", false),
            ("", false),
        ] {
            assert_eq!(compatible(version), links, "{version}");
        }
        assert_eq!(interface_of("lingxi:plugin/plugin@0.1.0"), Some("plugin"));
        assert_eq!(interface_of("lingxi:plugin/tasks@0.1.7"), Some("tasks"));
        assert_eq!(interface_of("lingxi:plugin/plugin@0.2.0"), None);
        assert_eq!(interface_of("lingxi:pluginx/plugin@0.1.0"), None);
        assert_eq!(interface_of("wasi:cli/run@0.2.0"), None);
        assert_eq!(interface("plugin"), "lingxi:plugin/plugin@0.1.2");
        assert_eq!(version_of("lingxi:plugin/plugin@0.2.0"), Some("0.2.0"));
        assert_eq!(version_of("lingxi:plugin/plugin"), None);
        assert_eq!(version_of("wasi:cli/run@0.2.0"), None);
        assert!(
            later("0.1.9")
                && !later("0.1.2")
                && !later("0.1.1")
                && !later("0.1.0")
                && !later("0.2.0")
        );
    }
}
