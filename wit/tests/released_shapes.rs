//! The versioning rules of `CHANGELOG.md`, checked against every released
//! shape of the package (`history/shapes.toml`): a change to
//! `lingxi-plugin.wit` that breaks a plugin a rule protects fails here, and
//! the failure says which rule and what to do instead.
//!
//! - A released version never changes: today's WIT has the same worlds,
//!   of the same shape, as its frozen copy in `history/<version>/`.
//! - In a version line (0.1.x) a world keeps its shape for the plugins
//!   written against it: every world of an earlier shape maps to a world
//!   of today's WIT whose imports hold all it imported, unchanged, and
//!   whose exports are exactly its exports. Then a guest written against
//!   the old world builds against today's, and its component loads in
//!   today's host.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use wit_parser::{PackageId, Resolve, UnresolvedPackageGroup, WorldId};

/// One released shape, as `history/shapes.toml` lists it.
#[derive(Debug, Deserialize)]
struct Shape {
    name: String,
    version: String,
    what: String,
    /// A world of the shape → the world of today's WIT it maps to.
    worlds: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct Shapes {
    shape: Vec<Shape>,
}

fn wit_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

fn shapes() -> Vec<Shape> {
    let path = wit_dir().join("history").join("shapes.toml");
    let text = std::fs::read_to_string(&path).expect("history/shapes.toml is readable");
    toml::from_str::<Shapes>(&text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .shape
}

fn frozen(shape: &Shape) -> String {
    let path = (wit_dir().join("history").join(&shape.name)).join("lingxi-plugin.wit");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `old` (a released shape, its version set apart so that both fit in one
/// resolve) and `new` in one resolve.
fn resolve(old: &str, new: &str) -> Result<(Resolve, PackageId, PackageId), String> {
    let parse = |name: &str, text: &str| {
        UnresolvedPackageGroup::parse(name, text).map_err(|(_, e)| format!("{name}: {e}"))
    };
    let mut released = parse("released.wit", old)?;
    released.main.name.version = Some(semver::Version::parse("0.0.0-released").unwrap());
    let mut resolve = Resolve::default();
    let old = (resolve.push_group(released)).map_err(|e| format!("released: {e}"))?;
    let new_group = parse("lingxi-plugin.wit", new)?;
    let new = (resolve.push_group(new_group)).map_err(|e| format!("lingxi-plugin.wit: {e}"))?;
    Ok((resolve, old, new))
}

fn world(resolve: &Resolve, package: PackageId, name: &str) -> Option<WorldId> {
    resolve.packages[package].worlds.get(name).copied()
}

/// The exported interfaces of `world` and their functions, by name
/// without version.
fn exports(resolve: &Resolve, world: WorldId) -> BTreeMap<String, BTreeSet<String>> {
    let world = &resolve.worlds[world];
    (world.exports.iter())
        .map(|(key, item)| {
            let name = resolve.name_world_key(key);
            let name = name.split('@').next().unwrap_or(&name).to_owned();
            let functions = match item {
                wit_parser::WorldItem::Interface { id, .. } => {
                    resolve.interfaces[*id].functions.keys().cloned().collect()
                }
                wit_parser::WorldItem::Function(f) => BTreeSet::from([f.name.clone()]),
                wit_parser::WorldItem::Type { .. } => BTreeSet::new(),
            };
            (name, functions)
        })
        .collect()
}

/// Why a guest of `old` world would not build against `new` world, or its
/// component would not load in a host of `new`; none if neither.
fn breaks(old: &str, old_world: &str, new: &str, new_world: &str) -> Result<(), String> {
    let (resolve, old_pkg, new_pkg) = resolve(old, new)?;
    let Some(prev) = world(&resolve, old_pkg, old_world) else {
        return Err(format!("the released shape has no world {old_world}"));
    };
    let Some(next) = world(&resolve, new_pkg, new_world) else {
        return Err(format!("today's WIT has no world {new_world}"));
    };
    let (before, after) = (exports(&resolve, prev), exports(&resolve, next));
    if before != after {
        return Err(format!(
            "its exports were {before:?} and would be {after:?}: a guest implements exactly its world's exports"
        ));
    }
    // Imports may only grow, and every type must keep its structure:
    // wit-component's check that a component of `prev` fits `next`.
    wit_component::semver_check(resolve, prev, next).map_err(|e| format!("{e:#}"))
}

/// Every break of the rules by `current` (the text of `lingxi-plugin.wit`),
/// each said with the rule and what to do.
fn rule_breaks(current: &str, shapes: &[Shape], frozen: impl Fn(&Shape) -> String) -> Vec<String> {
    let mut found = Vec::new();
    let version = match UnresolvedPackageGroup::parse("lingxi-plugin.wit", current) {
        Ok(group) => group.main.name.version.map(|v| v.to_string()),
        Err((_, e)) => return vec![format!("lingxi-plugin.wit does not parse: {e}")],
    };
    let version = version.unwrap_or_default();
    let line = |v: &str| match v.split('.').collect::<Vec<_>>().as_slice() {
        ["0", "0", patch] => format!("0.0.{patch}"),
        ["0", minor, _] => format!("0.{minor}"),
        [major, ..] => (*major).to_owned(),
        _ => v.to_owned(),
    };
    let Some(latest) = shapes.last() else {
        return vec!["history/shapes.toml lists no shape".into()];
    };
    if latest.version != version {
        found.push(format!(
            "lingxi-plugin.wit declares version {version}, and the newest released shape in history/shapes.toml is {} ({}): freeze {version} as history/{version}/lingxi-plugin.wit, add its [[shape]] and its entry in CHANGELOG.md",
            latest.name, latest.version
        ));
    } else {
        let old = frozen(latest);
        let worlds = |text: &str| {
            (UnresolvedPackageGroup::parse("w.wit", text).ok())
                .map(|g| {
                    g.main
                        .worlds
                        .iter()
                        .map(|(_, w)| w.name.clone())
                        .collect::<BTreeSet<_>>()
                })
                .unwrap_or_default()
        };
        let (before, after) = (worlds(&old), worlds(current));
        let mut changed: Vec<String> = Vec::new();
        if before != after {
            changed.push(format!("its worlds were {before:?} and are {after:?}"));
        }
        let interfaces = |text: &str| {
            (UnresolvedPackageGroup::parse("i.wit", text).ok())
                .map(|g| {
                    (g.main.interfaces.iter())
                        .filter_map(|(_, i)| i.name.clone())
                        .collect::<BTreeSet<_>>()
                })
                .unwrap_or_default()
        };
        let (had, has) = (interfaces(&old), interfaces(current));
        if had != has {
            changed.push(format!("its interfaces were {had:?} and are {has:?}"));
        }
        for name in before.intersection(&after) {
            // The same shape: each fits the other.
            for (a, b) in [(&old, current), (&current.to_owned(), &old)] {
                if let Err(e) = breaks(a, name, b, name) {
                    changed.push(format!("world {name}: {e}"));
                    break;
                }
            }
        }
        if !changed.is_empty() {
            found.push(format!(
                "lingxi-plugin.wit changes lingxi:plugin@{version} in place, a version released as history/{}/: {}. A released version never changes: give the change a new version (the next patch, 0.1.x, if it only adds: a world, an interface, a function in an interface plugins only import; the next line, 0.2.0, otherwise), freeze it in history/<version>/, and add its [[shape]] and its CHANGELOG.md entry",
                latest.name,
                changed.join("; ")
            ));
        }
    }
    for shape in shapes.iter().filter(|s| line(&s.version) == line(&version)) {
        let old = frozen(shape);
        for (old_world, new_world) in &shape.worlds {
            // Since the rules began, a world keeps its name too: a guest
            // names its world.
            if old_world != new_world && !before_the_rules(&shape.version) {
                found.push(format!(
                    "history/shapes.toml maps world {old_world} of {} to {new_world}: a released world keeps its name (guests build with `-w {old_world}`); keep {old_world} in lingxi-plugin.wit",
                    shape.name
                ));
            }
            if let Err(e) = breaks(&old, old_world, current, new_world) {
                found.push(format!(
                    "lingxi-plugin.wit breaks plugins written against world {old_world} of {} ({}; history/{}/), which must keep building as world {new_world}: {e}. In a version line a world never loses or changes an import and never gains, loses or changes an export: give the new shape a new world (it may `include` {new_world}), or start the next version line (0.2.0 after 0.1.x) and keep linking this one (CHANGELOG.md)",
                    shape.name, shape.what, shape.name,
                ));
            }
        }
    }
    found
}

/// Whether `version` was released before the rules began (0.1.1): 0.1.0
/// changed in place, and its world before tasks lives on by another name.
fn before_the_rules(version: &str) -> bool {
    version == "0.1.0"
}

#[test]
fn todays_wit_keeps_every_rule() {
    let shapes = shapes();
    assert!(shapes.len() >= 4, "the released shapes: {shapes:?}");
    let breaks = rule_breaks(lingxi_plugin_wit::WIT, &shapes, frozen);
    assert!(breaks.is_empty(), "\n{}", breaks.join("\n\n"));
}

/// The check fails on the breaks it exists for, each with its rule: the
/// tasks change itself, a new export, a changed record, a new world or
/// function without a new version.
#[test]
fn the_check_catches_each_break() {
    let shapes = shapes();
    let wit = lingxi_plugin_wit::WIT;
    let replace = |from: &str, to: &str| {
        assert!(wit.contains(from), "{from}");
        wit.replacen(from, to, 1)
    };
    let cases = [
        // The break of c4cbaf2: tasks added to the base world in place.
        (
            replace(
                "    import logging;\n    export plugin;",
                "    import logging;\n    import tasks;\n    export plugin;\n    export task-runner;",
            ),
            "which must keep building as world lingxi-plugin-base",
        ),
        // A record field changed type.
        (
            replace("        ipc-version: u32,", "        ipc-version: u64,"),
            "which must keep building as world lingxi-plugin",
        ),
        // A function added to an exported interface.
        (
            replace(
                "    deactivate: func();",
                "    deactivate: func();\n    ping: func();",
            ),
            "a guest implements exactly its world's exports",
        ),
        // A function added to an import, without a new version.
        (
            replace(
                "    data-dir: func() -> option<string>;",
                "    data-dir: func() -> option<string>;\n    clock: func() -> u64;",
            ),
            "changes lingxi:plugin@0.1.2 in place",
        ),
        // A new world, without a new version.
        (
            format!("{wit}\nworld lingxi-plugin-tools {{\n    include lingxi-plugin-base;\n}}\n"),
            "its worlds were",
        ),
        // A new interface no world uses, without a new version.
        (
            format!("{wit}\ninterface clock {{\n    now: func() -> u64;\n}}\n"),
            "its interfaces were",
        ),
        // A new version nobody froze.
        (
            replace(
                "package lingxi:plugin@0.1.2;",
                "package lingxi:plugin@0.1.3;",
            ),
            "freeze 0.1.3",
        ),
    ];
    for (changed, rule) in cases {
        let found = rule_breaks(&changed, &shapes, frozen).join("\n");
        assert!(found.contains(rule), "{rule}:\n{found}");
    }
}

/// An addition in a new patch version, frozen as the rules ask, passes.
#[test]
fn an_addition_in_a_new_version_passes() {
    let mut shapes = shapes();
    let next = lingxi_plugin_wit::WIT
        .replacen(
            "package lingxi:plugin@0.1.2;",
            "package lingxi:plugin@0.1.3;",
            1,
        )
        .replacen(
            "    data-dir: func() -> option<string>;",
            "    data-dir: func() -> option<string>;\n    clock: func() -> u64;",
            1,
        );
    let frozen_next = next.clone();
    shapes.push(Shape {
        name: "0.1.3".into(),
        version: "0.1.3".into(),
        what: "a test's addition".into(),
        worlds: BTreeMap::from([("lingxi-plugin".into(), "lingxi-plugin".into())]),
    });
    let found = rule_breaks(&next, &shapes, |s| {
        if s.name == "0.1.3" {
            frozen_next.clone()
        } else {
            frozen(s)
        }
    });
    assert!(found.is_empty(), "{found:?}");
}

/// A released world of 0.1.1 mapped to another name breaks every guest
/// that names it: refused, even when that world has the same shape.
#[test]
fn a_released_world_keeps_its_name() {
    let mut shapes = shapes();
    let Some(latest) = shapes.last_mut() else {
        panic!("no shapes");
    };
    latest
        .worlds
        .insert("lingxi-plugin-base".into(), "lingxi-plugin-core".into());
    let renamed = lingxi_plugin_wit::WIT.replace("lingxi-plugin-base", "lingxi-plugin-core");
    let found = rule_breaks(&renamed, &shapes, frozen).join("\n");
    assert!(found.contains("a released world keeps its name"), "{found}");
}
