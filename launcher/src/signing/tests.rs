use super::*;
use lingxi_wasm_host::PolicySpec;
use lingxi_wasm_host::pack::PackHeader;

fn header(component: &[u8], signature: Option<String>) -> PackHeader {
    PackHeader {
        format: lingxi_wasm_host::pack::FORMAT,
        plugin_id: "com.example.p".into(),
        plugin_version: "1.0.0".into(),
        declared: vec![],
        policy: PolicySpec::default(),
        component_sha256: sha256_hex(component),
        precompiled_blake3: None,
        component_len: component.len() as u64,
        component_compressed: None,
        precompiled_len: 0,
        engine: "e".into(),
        manifest: None,
        signature,
        record: None,
        base: None,
        origin: None,
    }
}

/// The plugin the tests sign, declaring no capability.
fn p() -> Signed<'static> {
    Signed {
        id: "com.example.p",
        version: "1.0.0",
        capabilities: &[],
    }
}

fn pair() -> minisign::KeyPair {
    minisign::KeyPair::generate_unencrypted_keypair().unwrap()
}

fn trusting(key: &minisign::PublicKey) -> Trust {
    Trust::load(None, &[key.to_base64()]).unwrap()
}

#[test]
fn a_signature_holds_only_for_its_component_plugin_and_key() {
    let alice = pair();
    let component = b"\0asm component bytes";
    let sig = sign(&alice.sk, component, p()).unwrap();
    let signed = header(component, Some(sig.clone()));
    let trust = trusting(&alice.pk);

    let verdict = verify(&trust, &signed, component);
    assert!(verdict.trusted(), "{verdict}");
    assert!(verdict.to_string().contains("verified"));

    // One byte of the component changed.
    let tampered = b"\0asm component bytez";
    assert!(
        matches!(verify(&trust, &signed, tampered), Verdict::Bad { .. }),
        "{}",
        verify(&trust, &signed, tampered)
    );
    // The same signature under another id or version.
    let mut other = signed.clone();
    other.plugin_version = "2.0.0".into();
    let verdict = verify(&trust, &other, component);
    assert!(matches!(verdict, Verdict::Bad { .. }), "{verdict}");
    assert!(
        verdict
            .to_string()
            .contains("signed plugin com.example.p 1.0.0")
    );
    // ... whether or not the key is trusted: the claim alone is false.
    let verdict = verify(&Trust::default(), &other, component);
    assert!(matches!(verdict, Verdict::Bad { .. }), "{verdict}");

    // Two trusted keys with the same id: each is tried.
    let mallory = pair();
    let mut both = Trust::default();
    let alias = {
        let mut raw = mallory.pk.to_bytes();
        raw[2..10].copy_from_slice(alice.pk.keynum());
        minisign::PublicKey::from_bytes(&raw).unwrap()
    };
    both.keys.push((alias, "mallory".into()));
    both.keys.push((alice.pk.clone(), "alice".into()));
    let verdict = verify(&both, &signed, component);
    assert_eq!(
        verdict,
        Verdict::Verified {
            key: key_id(alice.pk.keynum()),
            name: "alice".into(),
            capabilities: true,
        }
    );

    // Nobody trusts the key: nothing is proven.
    let verdict = verify(&Trust::default(), &signed, component);
    assert!(matches!(verdict, Verdict::UnknownKey { .. }), "{verdict}");
    assert!(!verdict.trusted());
    // Another trusted key with the same key id cannot be forged here, but a
    // different trusted key simply does not match.
    let verdict = verify(&trusting(&pair().pk), &signed, component);
    assert!(matches!(verdict, Verdict::UnknownKey { .. }), "{verdict}");

    assert_eq!(
        verify(&trust, &header(component, None), component),
        Verdict::Unsigned
    );
}

#[test]
fn a_signature_by_a_trusted_key_id_with_another_key_is_bad() {
    // Mallory copies Alice's key id into her own signature: the id finds
    // Alice's key, and the signature does not hold under it.
    let alice = pair();
    let mallory = pair();
    let component = b"evil";
    let sig = sign(&mallory.sk, component, p()).unwrap();
    let forged = {
        // Rewrite the key id inside the signature line (bytes 2..10).
        let mut lines: Vec<String> = sig.lines().map(str::to_owned).collect();
        use base64::Engine;
        let engine = base64::engine::general_purpose::STANDARD;
        let mut raw = engine.decode(&lines[1]).unwrap();
        raw[2..10].copy_from_slice(alice.pk.keynum());
        lines[1] = engine.encode(raw);
        lines.join("\n") + "\n"
    };
    let verdict = verify(
        &trusting(&alice.pk),
        &header(component, Some(forged)),
        component,
    );
    assert!(matches!(verdict, Verdict::Bad { .. }), "{verdict}");
}

#[test]
fn malformed_signatures_are_bad_not_panics() {
    let trust = trusting(&pair().pk);
    for text in [
        String::new(),
        "untrusted comment: x\n".into(),
        "untrusted comment: x\n!!!\ntrusted comment: y\n!!!\n".into(),
        "x".repeat(MAX_SIGNATURE + 1),
    ] {
        let verdict = verify(&trust, &header(b"c", Some(text)), b"c");
        assert!(matches!(verdict, Verdict::Bad { .. }), "{verdict}");
    }
}

#[test]
fn trusted_keys_files_name_keys_and_point_at_bad_lines() {
    let alice = pair();
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("keys");
    std::fs::write(
        &good,
        format!(
            "# team keys\n\nuntrusted comment: alice@example.com\n{}\n",
            alice.pk.to_base64()
        ),
    )
    .unwrap();
    let trust = Trust::load(Some(&good), &[]).unwrap();
    let component = b"c";
    let sig = sign(&alice.sk, component, p()).unwrap();
    let verdict = verify(&trust, &header(component, Some(sig)), component);
    assert!(
        verdict
            .to_string()
            .contains("(alice@example.com), verified"),
        "{verdict}"
    );

    let bad = dir.path().join("bad");
    std::fs::write(&bad, "untrusted comment: x\nnot a key\n").unwrap();
    let error = Trust::load(Some(&bad), &[]).err().unwrap().to_string();
    assert!(
        error.contains("bad:2: not a minisign public key"),
        "{error}"
    );
    // An explicit file must exist; a --trust value must be a key or a file.
    assert!(Trust::load(Some(&dir.path().join("none")), &[]).is_err());
    let error = Trust::load(None, &["RWnope".into()])
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("neither a public key file nor a key"),
        "{error}"
    );
}

#[test]
fn keygen_writes_a_private_secret_key_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("me");
    keygen(&prefix, true).unwrap();
    let secret = load_secret_key(&dir.path().join("me.key")).unwrap();
    let trust = Trust::load(None, &[dir.path().join("me.pub").display().to_string()]).unwrap();
    let sig = sign(&secret, b"c", p()).unwrap();
    assert!(verify(&trust, &header(b"c", Some(sig)), b"c").trusted());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("me.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "the secret key is readable by others");
    }
    let error = keygen(&prefix, true).err().unwrap().to_string();
    assert!(error.contains("never overwritten"), "{error}");
}

#[cfg(unix)]
#[test]
fn a_trusted_keys_link_is_judged_by_the_file_it_points_at() {
    use std::os::unix::fs::PermissionsExt;
    let alice = pair();
    let mine = tempfile::tempdir().unwrap();
    let shared = tempfile::tempdir().unwrap();
    // A folder anyone can write (no sticky bit): its files could be
    // replaced by anyone.
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let target = shared.path().join("keys");
    std::fs::write(&target, format!("{}\n", alice.pk.to_base64())).unwrap();
    let link = mine.path().join("keys");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let error = Trust::load(Some(&link), &[]).err().unwrap().to_string();
    assert!(error.contains("are not used"), "{error}");

    // The same link to a file in a private folder is fine.
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    assert!(Trust::load(Some(&link), &[]).is_ok());
}

#[test]
fn a_signature_covers_the_declared_capabilities() {
    let alice = pair();
    let trust = trusting(&alice.pk);
    let component = b"\0asm reader";
    let declared = vec!["projectRead".to_owned()];
    let what = Signed {
        capabilities: &declared,
        ..p()
    };
    let sig = sign(&alice.sk, component, what).unwrap();
    let mut signed = header(component, Some(sig));
    signed.declared = declared.clone();
    let verdict = verify(&trust, &signed, component);
    assert!(
        verdict.trusted() && !verdict.to_string().contains("older"),
        "{verdict}"
    );
    // Re-packed to claim the network, in the header's list or in the
    // manifest a packed start reads: the signature does not cover it.
    let mut more = signed.clone();
    more.declared.push("networkAccess".into());
    let verdict = verify(&trust, &more, component);
    assert!(matches!(verdict, Verdict::Bad { .. }), "{verdict}");
    assert!(verdict.to_string().contains("declaring capabilities [projectRead], but this file declares [networkAccess,projectRead]"), "{verdict}");
    let mut manifest = signed.clone();
    manifest.manifest = Some(lingxi_wasm_host::protocol::dto::ManifestDto {
        id: "com.example.p".into(),
        name: "p".into(),
        version: "1.0.0".into(),
        description: String::new(),
        author: None,
        capabilities: vec!["projectRead".into(), "projectWrite".into()],
        minimum_core_version: None,
    });
    let verdict = verify(&Trust::default(), &manifest, component);
    assert!(
        matches!(verdict, Verdict::Bad { .. }),
        "whoever's key: {verdict}"
    );
}

#[test]
fn an_older_signature_verifies_and_says_it_does_not_cover_capabilities() {
    let alice = pair();
    let component = b"\0asm old";
    let comment = format!(
        "lingxi-wasm plugin=com.example.p version=1.0.0 component-sha256={} timestamp=1",
        sha256_hex(component)
    );
    let old = minisign::sign(
        None,
        &alice.sk,
        Cursor::new(component),
        Some(&comment),
        None,
    )
    .unwrap()
    .into_string();
    let mut signed = header(component, Some(old));
    signed.declared = vec!["networkAccess".into()];
    let verdict = verify(&trusting(&alice.pk), &signed, component);
    assert!(verdict.trusted(), "{verdict}");
    assert!(
        verdict.to_string().contains(
            "an older signature: it covers the component, not the capabilities it declares"
        ),
        "{verdict}"
    );
}
