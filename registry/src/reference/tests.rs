use super::Reference;

#[test]
fn references_read_back_as_they_were_written() {
    let digest = format!("sha256:{}", "a".repeat(64));
    for (text, registry, repository, tag, wanted) in [
        (
            "oci://localhost:5000/probe:1.0",
            "localhost:5000",
            "probe",
            Some("1.0"),
            "1.0",
        ),
        (
            "oci://ghcr.io/team/tools/probe",
            "ghcr.io",
            "team/tools/probe",
            None,
            "latest",
        ),
        (
            "oci://[::1]:5000/a/b:v_2",
            "[::1]:5000",
            "a/b",
            Some("v_2"),
            "v_2",
        ),
        (
            "oci://127.0.0.1/x-y.z__w:T",
            "127.0.0.1",
            "x-y.z__w",
            Some("T"),
            "T",
        ),
    ] {
        let r = Reference::parse(text).unwrap();
        assert_eq!(r.registry(), registry, "{text}");
        assert_eq!(r.repository(), repository, "{text}");
        assert_eq!(r.tag(), tag, "{text}");
        assert_eq!(r.wanted(), wanted, "{text}");
        assert_eq!(r.to_string(), text);
    }
    let pinned = Reference::parse(&format!("oci://host/repo:1@{digest}")).unwrap();
    assert_eq!(pinned.wanted(), digest);
    assert_eq!(pinned.tag(), Some("1"));
    assert_eq!(pinned.to_string(), format!("oci://host/repo:1@{digest}"));
}

#[test]
fn malformed_references_are_refused_naming_the_part() {
    for (text, why) in [
        ("localhost:5000/probe", "oci://"),
        ("oci://localhost:5000", "no repository"),
        ("oci://localhost:5000/", "repository is empty"),
        ("oci://host/Probe", "lowercase"),
        ("oci://host/probe:", "tag"),
        ("oci://host/probe:-x", "tag"),
        ("oci://host/a//b", "repository part"),
        ("oci://host/a..b", "repository part"),
        ("oci://ho st/a", "host name"),
        ("oci://host:0/a", "port"),
        ("oci://host:99999/a", "port"),
        ("oci://[::1/a", "closing ]"),
        ("oci://host/a@sha512:00", "only sha256"),
        ("oci://host/a@sha256:XYZ", "64 lowercase"),
    ] {
        let err = Reference::parse(text).unwrap_err().to_string();
        assert!(err.contains(why), "{text}: {err}");
        assert!(err.contains("oci://HOST"), "{text}: {err}");
    }
    let long = format!("oci://host/{}", "a".repeat(300));
    assert!(
        Reference::parse(&long)
            .unwrap_err()
            .to_string()
            .contains("longer than")
    );
}

#[test]
fn only_this_machine_is_loopback() {
    for (text, loopback) in [
        ("oci://localhost:5000/a", true),
        ("oci://127.0.0.1:5000/a", true),
        ("oci://[::1]:5000/a", true),
        ("oci://localhost.example.com/a", false),
        ("oci://10.0.0.1/a", false),
        ("oci://ghcr.io/a", false),
    ] {
        assert_eq!(
            Reference::parse(text).unwrap().is_loopback(),
            loopback,
            "{text}"
        );
    }
}

#[test]
fn a_reference_is_told_from_a_path_by_its_scheme_alone() {
    assert!(Reference::is_reference("oci://host/a"));
    assert!(!Reference::is_reference("./oci:/host/a"));
    assert!(!Reference::is_reference("plugin.wasm"));
}

/// A reference with credentials before its host is refused without
/// repeating them.
#[test]
fn credentials_in_a_reference_are_refused_and_not_repeated() {
    for reference in [
        "oci://alice:S3CRETPW@registry.example:5000/probe:1",
        "oci://alice:S3CRET/PW@registry.example:5000/probe:1",
        "oci://ghp_S3CRETtoken/abc@registry.example/probe",
        "OCI://alice:S3CRETPW@registry.example/probe",
    ] {
        let err = Reference::parse(reference).unwrap_err().to_string();
        assert!(!err.contains("S3CRET") && !err.contains("alice"), "{err}");
        assert!(err.contains("carries credentials"), "{err}");
        assert!(err.contains("LINGXI_WASM_REGISTRY_USERNAME"), "{err}");
    }
    // A digest after the repository is not a credential.
    Reference::parse(&format!(
        "oci://localhost:5000/probe@sha256:{}",
        "a".repeat(64)
    ))
    .unwrap();
}
