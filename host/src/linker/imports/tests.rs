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
fn files_come_with_the_writes_that_feed_the_quota() {
    // Without the marking wrappers a plugin could write past its data
    // directory's quota unseen: they come with every import of the
    // filesystem types, never without it.
    let set = set_of(["wasi:filesystem/types@0.2.3"].into_iter());
    assert_eq!(names(set), ["wasi:filesystem/types", FILESYSTEM_WRITES]);
    assert_eq!(
        OFFERED.last().map(|(name, _)| *name),
        Some(FILESYSTEM_WRITES)
    );
    assert!(
        names(set_of(["wasi:filesystem/preopens@0.2.3"].into_iter()))
            == ["wasi:filesystem/preopens"]
    );
}

#[test]
fn name_lookups_are_always_the_judged_ones() {
    // The lookup interface is offered once, with the allow-list's
    // replacement in the same step: it cannot be linked without it.
    let lookup: Vec<_> = OFFERED
        .iter()
        .filter(|(n, _)| n.contains("ip-name-lookup"))
        .collect();
    assert_eq!(lookup.len(), 1);
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
