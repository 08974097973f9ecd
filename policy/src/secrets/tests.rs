use super::*;
use base64::Engine as _;

fn grants(written: &[&str]) -> Result<Vec<SecretGrant>, String> {
    parse_secret_rules(&written.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

fn with_values(mut grants: Vec<SecretGrant>, values: &[&str]) -> Arc<Redactor> {
    for (grant, value) in grants.iter_mut().zip(values) {
        grant.value = Some(SecretValue::new(value).unwrap());
    }
    Redactor::of(&grants).unwrap()
}

#[test]
fn names_and_hosts_are_read_and_gathered_per_name() {
    let read = grants(&[
        "GH_TOKEN@api.github.com",
        "GH_TOKEN@*.GitHub.com",
        "jira.key",
    ])
    .unwrap();
    assert_eq!(read.len(), 2);
    assert_eq!(read[0].name, "GH_TOKEN");
    assert_eq!(read[0].hosts, ["api.github.com", "*.github.com"]);
    assert!(read[1].hosts.is_empty() && read[1].value.is_none());
}

#[test]
fn bad_names_hosts_and_mixed_bindings_are_refused_naming_the_setting() {
    for (written, says) in [
        (&["_X"][..], "a secret's name is"),
        (&["A B"], "a secret's name is"),
        (&[""], "a secret's name is"),
        (&["X@"], "bind a secret to a host name"),
        (&["X@https://a.example"], "bind a secret to a host name"),
        (&["X@a.example:443"], "bind a secret to a host name"),
        (&["X@*"], "bind a secret to a host name"),
        (&["X", "X@a.example"], "both bound to a host and unbound"),
        (&["X@a.example", "X"], "both bound to a host and unbound"),
    ] {
        let error = grants(written).unwrap_err();
        assert!(error.contains(says), "{written:?}: {error}");
        assert!(error.contains("secret"), "{error}");
    }
    assert!(grants(&[&"N".repeat(MAX_SECRET_NAME)]).is_ok());
    assert!(grants(&[&"N".repeat(MAX_SECRET_NAME + 1)]).is_err());
}

#[test]
fn a_value_is_checked_and_never_shown_by_debug() {
    assert!(SecretValue::new("short").is_err());
    assert!(SecretValue::new("two\nlines-here").is_err());
    assert!(SecretValue::new(&"x".repeat(MAX_SECRET_BYTES + 1)).is_err());
    let value = SecretValue::new("s3cr3t-value\n").unwrap();
    assert_eq!(value.expose(), "s3cr3t-value");
    let grant = SecretGrant {
        name: "K".into(),
        hosts: vec![],
        value: Some(value),
        unread: None,
    };
    assert!(!format!("{grant:?}").contains("s3cr3t"));
}

#[test]
fn every_value_is_replaced_by_its_name_in_text_and_json() {
    let redactor = with_values(
        grants(&["SHORT", "LONG"]).unwrap(),
        &["abcdefgh", "abcdefgh-and-more"],
    );
    assert_eq!(
        redactor.redact("x abcdefgh-and-more y abcdefgh z"),
        "x [secret LONG] y [secret SHORT] z"
    );
    assert!(matches!(redactor.redact("nothing here"), Cow::Borrowed(_)));
    let mut json = serde_json::json!({"a": ["abcdefgh"], "abcdefgh": 1, "n": 2});
    assert!(redactor.redact_json(&mut json));
    assert_eq!(
        json,
        serde_json::json!({"a": ["[secret SHORT]"], "[secret SHORT]": 1, "n": 2})
    );
    assert!(!format!("{redactor:?}").contains("abcdefgh"));
}

/// `value` with every byte percent-escaped, hex digits in upper or lower case.
fn every_byte_escaped(value: &str, upper: bool) -> String {
    let escaped = value
        .bytes()
        .map(|b| format!("%{b:02x}"))
        .collect::<String>();
    if upper {
        escaped.to_uppercase()
    } else {
        escaped
    }
}

#[test]
fn a_bound_secret_is_found_in_any_usual_encoding_toward_another_host() {
    let value = "tok_12345/+?&=x";
    let redactor = with_values(
        grants(&["T@api.example.com", "FREE"]).unwrap(),
        &[value, "free-value-1"],
    );
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let url: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
    let hex: String = value.bytes().map(|b| format!("{b:02x}")).collect();
    let carriers = [
        format!("Authorization: Bearer {value}"),
        format!("Authorization: Basic {}", b64(&format!("user:{value}"))),
        format!("Authorization: Basic {}", b64(&format!("us:{value}"))),
        format!("Authorization: Basic {}", b64(&format!("u:{value}"))),
        format!("q={url}"),
        format!("h={hex}"),
        format!("h={}", hex.to_uppercase()),
        format!("q={}", every_byte_escaped(value, true)),
        format!("q={}", every_byte_escaped(value, false)),
        format!(
            "q={}",
            url::form_urlencoded::byte_serialize(b64(value).as_bytes()).collect::<String>()
        ),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("ab{value}cd")),
    ];
    for carrier in &carriers {
        let found = redactor.bound_elsewhere("evil.example", carrier.as_bytes());
        assert_eq!(found.map(|(n, _)| n), Some("T"), "{carrier}");
        assert_eq!(
            redactor.bound_elsewhere("API.example.com", carrier.as_bytes()),
            None
        );
    }
    // An unbound secret goes wherever the network allow-list allows.
    assert_eq!(
        redactor.bound_elsewhere("evil.example", b"free-value-1"),
        None
    );
    assert!(redactor.binds_away_from("evil.example"));
    assert!(!redactor.binds_away_from("api.example.com"));
}

#[test]
fn a_wildcard_binding_covers_the_names_under_it_only() {
    let redactor = with_values(grants(&["T@*.example.com"]).unwrap(), &["the-value-1"]);
    assert!(!redactor.binds_away_from("api.example.com"));
    assert!(redactor.binds_away_from("example.com"));
    assert!(redactor.binds_away_from("api.example.com.evil"));
    assert!(redactor.binds_away_from("evilexample.com"));
}

#[test]
fn a_value_is_hidden_in_any_case_cut_at_its_slashes_and_where_two_overlap() {
    let redactor = with_values(
        grants(&["AWS", "OA", "OB"]).unwrap(),
        &[
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "XXXXXXXXYYYYYYYY",
            "YYYYYYYYZZZZZZZZ",
        ],
    );
    // A hint made of the path up to its last slash, a host lower-cased.
    assert_eq!(
        redactor.redact("allow it with --allow-read /exfil/wJalrXUtnFEMI/K7MDENG"),
        "allow it with --allow-read /exfil/[secret AWS]/K7MDENG"
    );
    assert_eq!(
        redactor.redact("host wjalrxutnfemi/k7mdeng/bpxrficyexamplekey:80"),
        "host [secret AWS]:80"
    );
    assert_eq!(
        redactor.redact("f: XXXXXXXXYYYYYYYYZZZZZZZZ."),
        "f: [secret OA+OB]."
    );
}

#[test]
fn values_with_control_or_invisible_characters_are_refused() {
    for value in [
        "ctl\u{1b}[31mabcdefgh",
        "abc\u{7f}defghij",
        "abcdefgh\u{202e}x",
        "zero\u{200b}width-space",
    ] {
        assert!(SecretValue::new(value).is_err(), "{value:?}");
    }
    assert!(SecretValue::new("ünïcödé-välue").is_ok());
}

#[test]
fn a_trailing_dot_names_the_same_host() {
    let read = grants(&["T@api.example.com."]).unwrap();
    assert_eq!(read[0].hosts, ["api.example.com"]);
    let redactor = with_values(read, &["the-value-1"]);
    assert!(!redactor.binds_away_from("api.example.com."));
}
