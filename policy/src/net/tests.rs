//! The allow-list's rules, matching and denial texts.

use super::*;

fn rule(s: &str) -> NetRule {
    s.parse().unwrap()
}

#[test]
fn rules_parse_and_print_back() {
    for text in [
        "*:443",
        "*.example.com:*",
        "api.example.com:443",
        "127.0.0.1:8000-8100",
        "[::1]:80",
    ] {
        assert_eq!(rule(text).to_string(), text);
    }
    for bad in [
        "example.com",
        "a b:80",
        "x:99999",
        "x:9-1",
        "*.:1",
        "a.*.com:1",
        "[zz]:1",
        // Found by fuzzing (fuzz/regressions/net/): these printed back as
        // another rule, and could never match a name.
        "*. .:0",
        "*.\u{c}.:0",
        "*.a b:1",
        "*.bücher.example:1",
    ] {
        assert!(bad.parse::<NetRule>().is_err(), "{bad}");
    }
}

#[test]
fn names_match_exactly_or_by_suffix() {
    assert!(rule("api.example.com:443").allows_name("API.example.com."));
    assert!(!rule("api.example.com:443").allows_name("evil.com"));
    assert!(rule("*.example.com:*").allows_name("a.b.example.com"));
    assert!(!rule("*.example.com:*").allows_name("example.com.evil.org"));
}

#[test]
fn addresses_need_a_rule_with_a_matching_port() {
    let guard = NetGuard::new("p", &[rule("127.0.0.1:8000-8100")]);
    assert!(guard.check_addr("127.0.0.1:8080".parse().unwrap(), false));
    assert!(!guard.check_addr("127.0.0.1:9000".parse().unwrap(), false));
    assert!(!guard.check_addr("10.0.0.1:8080".parse().unwrap(), false));
    assert!(guard.check_addr("0.0.0.0:0".parse().unwrap(), true));
    assert!(!guard.check_addr("0.0.0.0:8080".parse().unwrap(), true));
    let none = NetGuard::new("p", &[]);
    assert!(
        !none.check_addr("192.0.2.1:1".parse().unwrap(), false),
        "an empty list allows nothing"
    );
    let any = NetGuard::new("p", &[rule(ANY_DESTINATION)]);
    assert!(any.check_addr("192.0.2.1:1".parse().unwrap(), false));
}

#[test]
fn learnt_addresses_allow_their_rules_ports_only() {
    let guard = NetGuard::new("p", &[rule("localhost:7000"), rule("*:9")]);
    assert!(!guard.check_addr("127.0.0.1:7000".parse().unwrap(), false));
    let rules = guard.check_lookup("localhost").unwrap();
    assert_eq!(rules, vec![0], "only the name rule learns addresses");
    guard.learn("127.0.0.1".parse().unwrap(), &rules);
    assert!(guard.check_addr("127.0.0.1:7000".parse().unwrap(), false));
    assert!(!guard.check_addr("127.0.0.1:7001".parse().unwrap(), false));
    // An IPv4 address learnt also allows its IPv4-mapped IPv6 form.
    assert!(guard.check_addr("[::ffff:127.0.0.1]:7000".parse().unwrap(), false));
}

#[test]
fn http_requests_need_a_rule_for_their_host_and_port() {
    let guard = NetGuard::new(
        "p",
        &[
            rule("api.example.com:443"),
            rule("127.0.0.1:8000-8100"),
            rule("[::1]:80"),
        ],
    );
    assert!(guard.check_http("api.example.com", 443));
    assert!(guard.check_http("API.Example.COM", 443));
    assert!(!guard.check_http("api.example.com", 80));
    assert!(!guard.check_http("api.example.com.evil.net", 443));
    assert!(guard.check_http("127.0.0.1", 8080));
    assert!(
        !guard.check_http("localhost", 8080),
        "an IP rule allows no name"
    );
    assert!(!guard.check_http("127.0.0.2", 8080));
    assert!(guard.check_http("[::1]", 80));
    assert!(!guard.check_http("[::2]", 80));
    let none = NetGuard::new("p", &[]);
    assert!(
        !none.check_http("example.org", 8443),
        "an empty list allows nothing"
    );
    let any = NetGuard::new("p", &[rule(ANY_DESTINATION)]);
    assert!(any.check_http("example.org", 8443));
}

#[test]
fn wildcards_never_match_addresses_and_unspecified_is_no_destination() {
    let guard = NetGuard::new(
        "p",
        &[rule("*.0.0.1:80"), rule("*.1:80"), rule("0.0.0.0:80")],
    );
    assert!(!guard.check_http("127.0.0.1", 80));
    assert!(guard.check_http("a.0.0.1", 80), "names still match");
    assert!(!guard.check_http("0.0.0.0", 80));
    assert!(!NetGuard::new("p", &[]).check_http("[::]", 80));
    assert!(guard.check_lookup("127.0.0.1").is_none());
}

#[test]
fn rules_with_a_trailing_dot_are_the_same_name() {
    let guard = NetGuard::new("p", &[rule("localhost.:8080")]);
    assert!(guard.check_http("localhost", 8080));
    assert!(guard.check_http("localhost.", 8080));
    assert_eq!(rule("example.com.:1").to_string(), "example.com:1");
}

#[test]
fn denial_logs_are_bounded() {
    let long = "x".repeat(1 << 20);
    assert!(shown(&long).len() < 300);
    assert!(allow_hint(&long, "80").contains("is not one any allow-net rule can allow"));
    let guard = NetGuard::new("p", &[rule("a.example:1")]);
    let logged = (0..100).filter(|_| guard.may_log()).count();
    assert_eq!(logged, MAX_LOGGED_DENIALS as usize);
}

#[test]
fn denials_name_a_rule_that_parses() {
    assert_eq!(
        allow_hint("::1", "PORT"),
        r#"allow it with allow-net = ["[::1]:PORT"]"#
    );
    assert_eq!(
        allow_hint("[::1]", "80"),
        r#"allow it with allow-net = ["[::1]:80"]"#
    );
    assert_eq!(
        allow_hint("Example.COM", "443"),
        r#"allow it with allow-net = ["example.com:443"]"#
    );
    assert_eq!(
        allow_hint("127.1", "80"),
        r#"allow it with allow-net = ["127.0.0.1:80"]"#
    );
    assert!(allow_hint("user:pw@host", "80").contains("is not a host name"));
    for hint in ["[::1]:80", "example.com:443", "127.0.0.1:80"] {
        assert!(hint.parse::<NetRule>().is_ok(), "{hint}");
    }
}

#[test]
fn names_are_judged_as_wasi_will_resolve_them() {
    let guard = NetGuard::new(
        "p",
        &[rule("example.com:443"), rule("*.xn--bcher-kva.example:*")],
    );
    // Percent-encoding and case are undone before the check, as WASI does.
    assert!(guard.check_lookup("EX%61mple.com").is_some());
    assert!(guard.check_lookup("example.com.evil.org").is_none());
    // Unicode names are checked in their punycode form.
    assert!(guard.check_lookup("a.bücher.example").is_some());
    assert!(guard.check_lookup("еxample.com").is_none(), "Cyrillic е");
}
