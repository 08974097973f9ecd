use super::*;

fn names(set: Set) -> Vec<&'static str> {
    OFFERED
        .iter()
        .enumerate()
        .filter(|(i, _)| set & (1 << i) != 0)
        .map(|(_, (name, _))| *name)
        .collect()
}

#[test]
fn a_set_has_room_for_every_offered_interface() {
    assert!(OFFERED.len() <= Set::BITS as usize);
}

#[test]
fn versions_are_ignored_and_unknown_imports_left_out() {
    let set = set_of(
        [
            "wasi:io/streams@0.2.6",
            "wasi:clocks/monotonic-clock@0.2.0",
            "lingxi:plugin/host@0.1.0",
            "wasi:keyvalue/store@0.2.0-draft",
            "wasi:io/error",
        ]
        .into_iter(),
    );
    assert_eq!(
        names(set),
        [
            "wasi:io/error",
            "wasi:io/streams",
            "wasi:clocks/monotonic-clock"
        ]
    );
}

#[test]
fn every_interface_is_offered_once() {
    // The filesystem types and the name lookups are linked with the host's
    // replacements in one step: a second entry would link them without.
    let mut names: Vec<_> = OFFERED.iter().map(|(name, _)| *name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), OFFERED.len());
}

/// A component that imports `wasi:random/insecure-seed` and nothing else.
#[cfg(feature = "compiler")]
const SEED_ONLY: &str = r#"(component
  (import "wasi:random/insecure-seed@0.2.0" (instance
    (export "insecure-seed" (func (result (tuple u64 u64))))))
)"#;

#[cfg(feature = "compiler")]
#[test]
fn a_component_gets_the_interfaces_it_imports_and_no_others() {
    let engine = Engine::new(&wasmtime::Config::new()).unwrap_or_else(|e| panic!("engine: {e}"));
    let bytes = wat::parse_str(SEED_ONLY).unwrap_or_else(|e| panic!("wat: {e}"));
    let component = Component::new(&engine, bytes).unwrap_or_else(|e| panic!("component: {e}"));

    let set = imported(&engine, &component);
    assert_eq!(names(set), ["wasi:random/insecure-seed"]);
    let linker = build(&engine, set).unwrap_or_else(|e| panic!("linker: {e}"));
    assert!(linker.instantiate_pre(&component).is_ok());
    // The guard: a linker without the interface refuses the component and
    // names the import; one with every interface takes it too.
    let Err(refused) = build(&engine, 0).and_then(|l| l.instantiate_pre(&component)) else {
        panic!("a component was linked without its import");
    };
    assert!(
        format!("{refused:#}").contains("wasi:random/insecure-seed"),
        "{refused:#}"
    );
    let every = Set::MAX >> (Set::BITS as usize - OFFERED.len());
    let full = build(&engine, every).unwrap_or_else(|e| panic!("every interface: {e}"));
    assert!(full.instantiate_pre(&component).is_ok());

    // One linker per set, shared.
    let linkers = Linkers::default();
    let (Ok(a), Ok(b)) = (linkers.get(&engine, set), linkers.get(&engine, set)) else {
        panic!("linkers");
    };
    assert!(Arc::ptr_eq(&a, &b));
}

#[test]
fn the_words_come_from_the_table() {
    assert_eq!(
        provided_in_words(),
        "WASI 0.2 cli, clocks, filesystem, io, random, sockets and outgoing http, and the lingxi:plugin 0.1.x imports"
    );
}

#[test]
fn wasi_0_2_and_outgoing_http_only() {
    for yes in [
        "wasi:cli/stdout@0.2.6",
        "wasi:sockets/tcp@0.2.0",
        "wasi:http/types@0.2.10",
        "wasi:http/outgoing-handler@0.2.0",
        "lingxi:plugin/logging@0.1.0",
        "lingxi:plugin/logging@0.1.1",
        "lingxi:plugin/tasks@0.1.0",
        // A later 0.1 version: the linker matches it, and type-checks what
        // the component uses.
        "lingxi:plugin/host-info@0.1.9",
    ] {
        assert!(provided(yes), "{yes}");
    }
    for no in [
        "wasi:cli/stdout@0.3.0",
        "wasi:http/incoming-handler@0.2.0",
        "wasi:http/types-extra@0.2.0",
        "wasi:keyvalue/store@0.2.0",
        "lingxi:plugin/logging@0.2.0",
        "lingxi:plugin/plugin@0.1.0",
        "lingxi:plugin/host@0.1.0",
        "lingxi:plugin/logging",
        // Not an interface of WASI 0.2 (the linker links exactly its list).
        "wasi:cli/environmenx@0.2.12",
        "wasi:io/streams",
    ] {
        assert!(!provided(no), "{no}");
    }
}

#[test]
fn versions_of_another_line_or_later_are_named() {
    let names = ["wasi:cli/stdout@0.2.6", "lingxi:plugin/types@0.2.0"];
    let found = unlinked_version(&names).map(|(found, _)| found);
    assert_eq!(found.as_deref(), Some("lingxi:plugin 0.2.0"));
    let names = ["lingxi:plugin/types@0.1.0", "lingxi:plugin/host-info@0.1.9"];
    assert_eq!(unlinked_version(&names), None);
    assert_eq!(
        later_version(&names).as_deref(),
        Some("lingxi:plugin 0.1.9")
    );
    assert_eq!(later_version(&["lingxi:plugin/logging@0.1.1"]), None);
    let found = unlinked_version(&["lingxi:plugin/types"]).map(|(found, _)| found);
    assert_eq!(found.as_deref(), Some("lingxi:plugin without a version"));
}
