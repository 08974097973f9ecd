//! Network: sockets and name lookups without the grant or outside the
//! allow-list. The attacks of one call each are data
//! (`tests/attacks/net.toml`); here are the others.

use super::{Tree, allowed, attempt, pong_server, start};

/// Two calls in one session: a name the allow-list names resolves, and the
/// address it resolves to is reached.
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
