use super::*;

fn spec(set: impl FnOnce(&mut PolicySpec)) -> PolicySpec {
    let mut spec = PolicySpec::default();
    set(&mut spec);
    spec
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn shown(increases: Vec<Increase>) -> Vec<String> {
    increases.iter().map(ToString::to_string).collect()
}

#[test]
fn a_new_version_that_declares_more_is_an_increase_under_the_same_grant() {
    // "As declared" both times: the grant did not change, the reach did.
    let grant = PolicySpec::default();
    let old = Reach::of_spec(&names(&["projectRead"]), &grant);
    let new = Reach::of_spec(&names(&["projectRead", "networkAccess"]), &grant);
    assert_eq!(shown(increases(&old, &new)), ["capability networkAccess"]);
    assert!(
        increases(&new, &old).is_empty(),
        "a decrease is not an increase"
    );
    assert!(increases(&old, &old).is_empty());
}

#[test]
fn each_kind_of_increase_is_named() {
    let declared = names(&["projectRead", "projectWrite", "networkAccess"]);
    let old = Reach::of_spec(
        &declared,
        &spec(|s| {
            s.workspace = Some("/ws".into());
            s.allow_read = vec!["/data".into()];
            s.allow_write = vec!["/out".into()];
            s.allow_net = names(&["api.example.com:443"]);
            s.env = names(&["LANG"]);
            s.no_storage = true;
        }),
    );
    let new = Reach::of_spec(
        &declared,
        &spec(|s| {
            s.workspace = Some("/".into());
            s.allow_read = vec!["/data/sub".into(), "/out/x".into(), "/etc".into()];
            s.allow_write = vec!["/out/y".into(), "/home".into()];
            s.allow_net = names(&["api.example.com:443", "*:*"]);
            s.env = names(&["LANG", "TOKEN=x"]);
            s.no_validate = true;
        }),
    );
    assert_eq!(
        shown(increases(&old, &new)),
        [
            "workspace /",
            "writes folder /home",
            "reads folder /etc",
            "every network destination (*:*)",
            "environment variable TOKEN",
            "storage under the default data root",
            "tool arguments not validated against their schemas",
        ]
    );
}

#[test]
fn narrower_grants_are_no_increase() {
    let declared = names(&["projectRead", "networkAccess"]);
    let old = Reach::of_spec(
        &declared,
        &spec(|s| {
            s.workspace = Some("/ws".into());
            s.allow_net = names(&["*:*"]);
        }),
    );
    let new = Reach::of_spec(
        &declared,
        &spec(|s| {
            s.workspace = Some("/ws/src".into());
            s.allow_net = names(&["api.example.com:443"]);
        }),
    );
    // An empty list reaches nothing: narrower than any rule.
    let offline = Reach::of_spec(&declared, &spec(|s| s.workspace = Some("/ws/src".into())));
    assert!(increases(&new, &offline).is_empty());
    assert_eq!(
        shown(increases(&offline, &new)),
        ["network destination api.example.com:443"]
    );
    assert!(
        increases(&old, &new).is_empty(),
        "{:?}",
        increases(&old, &new)
    );
    // Folders and hosts the plugin cannot use (no capability) are nothing.
    let reader = Reach::of_spec(
        &names(&["projectRead"]),
        &spec(|s| s.allow_write = vec!["/x".into()]),
    );
    let plain = Reach::of_spec(&names(&["projectRead"]), &PolicySpec::default());
    assert!(increases(&plain, &reader).is_empty());
}

#[test]
fn writing_covers_reading_and_paths_compare_as_written() {
    let writer = Reach::of_spec(
        &names(&["projectRead", "projectWrite"]),
        &spec(|s| {
            s.grant = Some(names(&["projectWrite"]));
            s.allow_write = vec!["/ws/out".into()];
        }),
    );
    let reader = Reach::of_spec(
        &names(&["projectRead", "projectWrite"]),
        &spec(|s| {
            s.grant = Some(names(&["projectRead"]));
            s.allow_read = vec!["/ws/out/../out/x".into()];
        }),
    );
    assert!(
        increases(&writer, &reader).is_empty(),
        "{:?}",
        increases(&writer, &reader)
    );
    let escape = Reach::of_spec(
        &names(&["projectRead", "projectWrite"]),
        &spec(|s| {
            s.grant = Some(names(&["projectWrite"]));
            s.allow_write = vec!["/ws/out/../../etc".into()];
        }),
    );
    assert_eq!(shown(increases(&writer, &escape)), ["writes folder /etc"]);
    assert_eq!(
        shown(increases(&Reach::nothing(), &writer)),
        [
            "capability projectWrite",
            "writes folder /ws/out",
            "storage under the default data root"
        ]
    );
}

#[test]
fn folders_under_the_hosts_root_compare_with_the_root() {
    let declared = names(&["projectRead", "projectWrite"]);
    let default = Reach::of_spec(&declared, &PolicySpec::default());
    let learned = Reach::of_spec(
        &declared,
        &spec(|s| {
            s.workspace = Some("{root}/out".into());
            s.allow_read = vec!["{root}/src".into()];
        }),
    );
    // A learned policy is narrower than the host's whole root.
    assert!(increases(&default, &learned).is_empty());
    assert_eq!(
        shown(decreases(&default, &learned)),
        ["workspace the host's workspace root"]
    );
    // A folder under the root is not a fixed folder, either way.
    let pinned = Reach::of_spec(&declared, &spec(|s| s.workspace = Some("/ws/out".into())));
    assert_eq!(shown(increases(&learned, &pinned)), ["workspace /ws/out"]);
    assert_eq!(
        shown(increases(&pinned, &learned)),
        ["workspace {root}/out", "reads folder {root}/src"]
    );
    // Deeper is narrower; a way out of the root counts as new.
    let deeper = Reach::of_spec(
        &declared,
        &spec(|s| s.workspace = Some("{root}/out/x".into())),
    );
    assert!(increases(&learned, &deeper).is_empty());
    let escape = Reach::of_spec(
        &declared,
        &spec(|s| s.workspace = Some("{root}/../etc".into())),
    );
    assert_eq!(
        shown(increases(&default, &escape)),
        ["workspace {root}/../etc"]
    );
}

#[test]
fn a_new_secret_a_new_host_for_one_and_an_unbound_one_are_increases() {
    let declared = names(&["networkAccess"]);
    let with = |secrets: &[&str]| Reach::of_spec(&declared, &spec(|s| s.secret = names(secrets)));
    let old = with(&[
        "A@api.example.com",
        "B@b.example.com",
        "C",
        "D@d.example.com",
    ]);
    let new = with(&[
        "A@api.example.com",
        "A@collect.example.net",
        "B",
        "C",
        "D@d.example.com",
        "E",
    ]);
    assert_eq!(
        shown(increases(&old, &new)),
        [
            "secret A sent to collect.example.net",
            "secret B no longer bound to its hosts",
            "secret E",
        ]
    );
    // Binding an unbound secret, dropping one, or a host: narrower.
    let narrower = with(&["C@c.example.com", "D@d.example.com"]);
    assert!(increases(&old, &narrower).is_empty());
}
