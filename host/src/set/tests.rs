use super::*;

use crate::contract::tests::handshake_of as handshake;

/// Hosts share sets and sessions across tasks (`Arc`, `tokio::spawn`).
#[test]
fn sets_and_sessions_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<PluginSet>();
    send_sync::<Session>();
    send_sync::<Catalog>();
}

#[test]
fn names_a_catalog_cannot_hold() {
    assert_eq!(bad_names(&handshake(&["a", "b.c"], &[("x", &["y"])])), None);
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a [&'a str])], &'a str);
    let cases: [Case; 4] = [
        (&["evil\nline"], &[], "control characters"),
        (&["two words"], &[], "spaces"),
        (&["probe.echo\u{200B}"], &[], "invisible"),
        (&[""], &[], "empty"),
    ];
    for (tools, commands, expected) in cases {
        let reason = bad_names(&handshake(tools, commands)).unwrap_or_default();
        assert!(
            reason.contains(expected),
            "{tools:?} {commands:?}: {reason}"
        );
    }
    let long = "x".repeat(MAX_NAME + 1);
    assert!(bad_names(&handshake(&[&long], &[])).is_some());
}
