//! The policy file, flags and their checks.

use super::*;

#[test]
fn a_policy_file_parses_and_rejects_typos() {
    let spec: PolicySpec = toml::from_str(
        "grant = [\"projectRead\"]\nallow-net = [\"*:443\"]\nenv = [\"A=1\"]\ntimeout = 1.5\n",
    )
    .unwrap();
    let (grant, limits) = spec.resolve(|_| None).unwrap();
    assert_eq!(grant.capabilities, Some(vec![Capability::ProjectRead]));
    assert_eq!(grant.env, vec![("A".to_owned(), "1".to_owned())]);
    assert_eq!(limits.call_timeout, Duration::from_millis(1500));
    assert!(toml::from_str::<PolicySpec>("allow_net = []").is_err());
}

#[test]
fn command_line_lays_over_the_file() {
    let file = PolicySpec {
        grant: Some(vec!["none".into()]),
        env: vec!["A=1".into()],
        ..Default::default()
    };
    let cli = PolicySpec {
        env: vec!["B".into()],
        timeout: Some(1.0),
        ..Default::default()
    };
    let merged = file.merge(cli);
    assert_eq!(merged.grant, Some(vec!["none".into()]));
    let (grant, _) = merged
        .resolve(|k| (k == "B").then(|| "from-env".into()))
        .unwrap();
    assert_eq!(grant.capabilities, Some(vec![]));
    assert_eq!(
        grant.env,
        vec![("A".into(), "1".into()), ("B".into(), "from-env".into())]
    );
}

#[test]
fn bad_values_say_what_to_write() {
    let bad = |spec: PolicySpec| spec.resolve(|_| None).unwrap_err().to_string();
    assert!(
        bad(PolicySpec {
            grant: Some(vec!["root".into()]),
            ..Default::default()
        })
        .contains("unknown capability")
    );
    assert!(
        bad(PolicySpec {
            allow_read: vec!["/no/such/dir".into()],
            ..Default::default()
        })
        .contains(r#"allow-read = ["/no/such/dir"]"#)
    );
    for relative in ["../..", "data", "./x"] {
        let message = bad(PolicySpec {
            data_root: Some(relative.into()),
            ..Default::default()
        });
        assert!(
            message.contains("data-root = ") && message.contains("must be absolute"),
            "{message}"
        );
        let message = bad(PolicySpec {
            allow_write: vec![relative.into()],
            ..Default::default()
        });
        assert!(
            message.contains("allow-write = ") && message.contains("must be absolute"),
            "{message}"
        );
    }
    assert!(
        bad(PolicySpec {
            env: vec!["=x".into()],
            ..Default::default()
        })
        .contains("KEY=VALUE")
    );
    // 1e-300 s: found by fuzzing (fuzz/regressions/policy/), a zero
    // deadline once a Duration.
    for timeout in [0.0, -1.0, 1e-300, 3600.5, f64::NAN, f64::INFINITY] {
        assert!(
            bad(PolicySpec {
                timeout: Some(timeout),
                ..Default::default()
            })
            .contains("timeout = "),
            "{timeout}"
        );
    }
    assert!(
        bad(PolicySpec {
            allow_net: vec!["nope".into()],
            ..Default::default()
        })
        .contains("host:port")
    );
}
