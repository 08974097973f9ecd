//! Network: sockets and name lookups without the grant or outside the allow-list.

use std::net::UdpSocket;

use super::{Tree, allowed, attempt, denied, pong_server, start};

#[test]
fn net_tcp_without_the_grant() {
    let t = Tree::new();
    let port = pong_server();
    let mut s = start(&t, &["--grant", "projectRead"]);
    denied(
        &attempt(&mut s, "tcp", &format!("127.0.0.1:{port}")),
        "Permission denied",
    );
}

#[test]
fn net_tcp_with_the_grant_works() {
    let t = Tree::new();
    let port = pong_server();
    let mut s = start(&t, &["--grant", "networkAccess"]);
    assert_eq!(
        allowed(&attempt(&mut s, "tcp", &format!("127.0.0.1:{port}"))),
        "pong"
    );
}

#[test]
fn net_tcp_in_the_allow_list_works() {
    let t = Tree::new();
    let port = pong_server();
    let rule = format!("127.0.0.1:{port}");
    let mut s = start(&t, &["--grant", "networkAccess", "--allow-net", &rule]);
    assert_eq!(allowed(&attempt(&mut s, "tcp", &rule)), "pong");
}

#[test]
fn net_tcp_to_a_port_outside_the_allow_list() {
    let t = Tree::new();
    let port = pong_server();
    let rule = format!("127.0.0.1:{}", port.wrapping_add(1));
    let mut s = start(&t, &["--grant", "networkAccess", "--allow-net", &rule]);
    denied(
        &attempt(&mut s, "tcp", &format!("127.0.0.1:{port}")),
        "Permission denied",
    );
    let (_, stderr) = s.finish();
    assert!(
        stderr.contains(&format!("allow it with --allow-net 127.0.0.1:{port}")),
        "{stderr}"
    );
}

#[test]
fn net_tcp_to_a_host_outside_the_allow_list() {
    let t = Tree::new();
    let port = pong_server();
    let mut s = start(
        &t,
        &["--grant", "networkAccess", "--allow-net", "127.0.0.2:*"],
    );
    denied(
        &attempt(&mut s, "tcp", &format!("127.0.0.1:{port}")),
        "Permission denied",
    );
}

#[test]
fn net_dns_lookup_without_the_grant() {
    let t = Tree::new();
    denied(
        &attempt(
            &mut start(&t, &["--grant", "projectRead"]),
            "dns",
            "localhost",
        ),
        "Non-recoverable",
    );
}

#[test]
fn net_dns_lookup_of_a_name_outside_the_allow_list() {
    // `localhost` really resolves (the positive control below shows it), so
    // only the allow-list can refuse it.
    let t = Tree::new();
    let mut s = start(
        &t,
        &["--grant", "networkAccess", "--allow-net", "example.com:80"],
    );
    denied(&attempt(&mut s, "dns", "localhost"), "Permission denied");
    let (_, stderr) = s.finish();
    assert!(
        stderr.contains("name lookup of \"localhost\" denied")
            && stderr.contains("--allow-net localhost:PORT"),
        "{stderr}"
    );
}

#[test]
fn net_allowed_name_resolves_and_connects() {
    let t = Tree::new();
    let port = pong_server();
    let rule = format!("localhost:{port}");
    let mut s = start(&t, &["--grant", "networkAccess", "--allow-net", &rule]);
    assert!(allowed(&attempt(&mut s, "dns", "localhost")).contains("127.0.0.1"));
    assert_eq!(
        allowed(&attempt(&mut s, "tcp", &format!("127.0.0.1:{port}"))),
        "pong"
    );
}

#[test]
fn net_udp_without_the_grant() {
    let t = Tree::new();
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = sink.local_addr().unwrap().to_string();
    denied(
        &attempt(&mut start(&t, &["--grant", "projectRead"]), "udp", &addr),
        "Permission denied",
    );
}

#[test]
fn net_udp_outside_the_allow_list() {
    let t = Tree::new();
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sink.local_addr().unwrap().port();
    let rule = format!("127.0.0.1:{}", port.wrapping_add(1));
    let mut s = start(&t, &["--grant", "networkAccess", "--allow-net", &rule]);
    denied(
        &attempt(&mut s, "udp", &format!("127.0.0.1:{port}")),
        "Permission denied",
    );
}

#[test]
fn net_listen_is_refused_even_on_an_ephemeral_port() {
    // No allow-list: every destination may be reached, but a plugin is a
    // client only.
    let t = Tree::new();
    let mut s = start(&t, &["--grant", "networkAccess"]);
    denied(&attempt(&mut s, "listen", ""), "Permission denied");
    let (_, stderr) = s.finish();
    assert!(
        stderr.contains("plugins may not accept connections"),
        "{stderr}"
    );
}
