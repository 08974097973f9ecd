use super::*;

fn labels() -> PluginLabels {
    PluginLabels {
        id: "com.example.probe".into(),
        version: "1.2.3".into(),
        capabilities: vec!["projectRead".into(), "networkAccess".into()],
    }
}

#[test]
fn a_component_artifact_is_the_wasm_oci_layout_with_our_labels() {
    let component = b"\0asm\x0d\0\x01\0rest";
    let world = ComponentWorld {
        exports: vec!["lingxi:plugin/plugin@0.2.0".into()],
        imports: vec![],
        target: None,
    };
    let artifact =
        ComponentArtifact::new(component, world, &labels(), "2026-12-05T00:00:00Z".into());
    let manifest: serde_json::Value = serde_json::from_slice(&artifact.manifest).unwrap();
    assert_eq!(manifest["schemaVersion"], 2);
    assert_eq!(manifest["mediaType"], MANIFEST_TYPE);
    assert_eq!(manifest["config"]["mediaType"], WASM_CONFIG_TYPE);
    assert_eq!(manifest["layers"].as_array().unwrap().len(), 1);
    assert_eq!(manifest["layers"][0]["mediaType"], WASM_LAYER_TYPE);
    assert_eq!(manifest["layers"][0]["size"], component.len());
    assert_eq!(
        manifest["annotations"][ANNOTATION_CAPABILITIES],
        "projectRead,networkAccess"
    );
    let config: serde_json::Value = serde_json::from_slice(&artifact.config).unwrap();
    assert_eq!(config["architecture"], "wasm");
    assert_eq!(config["os"], "wasip2");
    assert_eq!(config["layerDigests"][0], manifest["layers"][0]["digest"]);
    assert_eq!(
        config["component"]["exports"][0],
        "lingxi:plugin/plugin@0.2.0"
    );
    assert_eq!(artifact.digest, Digest::of(&artifact.manifest));

    let checked = ComponentManifest::check(&artifact.manifest, 1 << 20).unwrap();
    assert_eq!(checked.labels, Some(labels()));
    assert_eq!(checked.layer_digest, Digest::of(component));
}

#[test]
fn manifests_of_another_shape_are_refused_naming_what_differs() {
    let component = b"\0asm\x0d\0\x01\0";
    let good = ComponentArtifact::new(component, ComponentWorld::default(), &labels(), "t".into());
    let base: serde_json::Value = serde_json::from_slice(&good.manifest).unwrap();
    let layer = base["layers"][0].clone();
    type Change = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(Change, &str)> = vec![
        (
            Box::new(|m| m["schemaVersion"] = 1.into()),
            "schemaVersion 1",
        ),
        (
            Box::new(|m| m["mediaType"] = INDEX_TYPE.into()),
            "not application/vnd.oci.image.manifest",
        ),
        (
            Box::new(|m| {
                m["config"]["mediaType"] = "application/vnd.oci.image.config.v1+json".into()
            }),
            "not a Wasm artifact",
        ),
        (
            Box::new(|m| m["layers"] = serde_json::json!([])),
            "0 layers",
        ),
        (
            Box::new(move |m| m["layers"] = serde_json::Value::Array(vec![layer.clone(); 300])),
            "300 layers",
        ),
        (
            Box::new(|m| {
                m["layers"][0]["mediaType"] = "application/vnd.oci.image.layer.v1.tar".into()
            }),
            "its layer is",
        ),
        (
            Box::new(|m| m["layers"][0]["size"] = (2u64 << 20).into()),
            "more than the",
        ),
        (
            Box::new(|m| m["layers"][0]["digest"] = "md5:00".into()),
            "only sha256",
        ),
    ];
    for (change, why) in cases {
        let mut manifest = base.clone();
        change(&mut manifest);
        let bytes = serde_json::to_vec(&manifest).unwrap();
        let err = ComponentManifest::check(&bytes, 1 << 20).unwrap_err();
        assert!(err.contains(why), "{why}: {err}");
    }
    assert!(
        ComponentManifest::check(b"not json", 1 << 20)
            .unwrap_err()
            .contains("not an OCI image manifest")
    );
}

#[test]
fn a_signature_is_a_referrer_of_the_component_manifest() {
    let subject = Descriptor::of(MANIFEST_TYPE, b"{\"manifest\":1}");
    let bytes = signature_manifest(&subject, b"untrusted comment: x\nSIG\n", "ABCD");
    let manifest: Manifest = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        manifest.artifact_type.as_deref(),
        Some(SIGNATURE_ARTIFACT_TYPE)
    );
    assert_eq!(manifest.subject.as_ref(), Some(&subject));
    assert_eq!(manifest.config.media_type, EMPTY_CONFIG_TYPE);
    assert_eq!(manifest.config.size, 2);
    let of = subject.parsed_digest().unwrap();
    let layer = check_signature_manifest(&bytes, &of, 4096).unwrap();
    assert_eq!(layer.media_type, SIGNATURE_LAYER_TYPE);
    assert!(check_signature_manifest(&bytes, &of, 4).is_err());
    // Listed for another manifest than the one it names: refused.
    let other = Digest::of(b"another manifest");
    let err = check_signature_manifest(&bytes, &other, 4096).unwrap_err();
    assert!(err.contains("names another subject"), "{err}");
    let digest = Digest::of(b"x");
    assert_eq!(referrers_tag(&digest), format!("sha256-{}", digest.hex()));
}
