use std::path::{Path, PathBuf};

use super::*;
use crate::receipt::{Connection, FileUse, Lookup, Totals};

fn file(path: &str, set: impl FnOnce(&mut FileUse)) -> FileUse {
    let mut use_ = FileUse {
        path: path.into(),
        ..FileUse::default()
    };
    set(&mut use_);
    use_
}

fn receipt(call: &str, set: impl FnOnce(&mut Receipt)) -> Receipt {
    let mut receipt = Receipt {
        call: call.into(),
        ..Receipt::default()
    };
    set(&mut receipt);
    receipt
}

fn parsed(text: &str) -> PolicySpec {
    PolicySpec::from_toml(text, Path::new("learned.toml")).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn the_narrowest_folders_hosts_and_variables() {
    let receipts = [
        receipt("plugin.initialize", |r| r.environment = vec!["LANG".into()]),
        receipt("tool.execute 'scan'", |r| {
            r.files = vec![
                file("/ws/src/a.rs", |f| f.read = true),
                file("/ws/src/b.rs", |f| f.read = true),
                file("/ws/docs", |f| f.listed = true),
                file("/ws/src/deep", |f| {
                    f.listed = true;
                    f.directory = true;
                }),
            ];
        }),
        receipt("tool.execute 'save'", |r| {
            r.files = vec![file("/ws/out/x.txt", |f| {
                f.write = true;
                f.created = true;
            })];
            r.lookups = vec![
                Lookup {
                    name: "api.example.com".into(),
                    addresses: vec!["192.0.2.1".into()],
                },
                Lookup {
                    name: "only.example".into(),
                    addresses: vec![],
                },
            ];
            r.connections = vec![Connection {
                protocol: "tcp".into(),
                name: Some("api.example.com".into()),
                address: "192.0.2.1".into(),
                port: 443,
                count: 1,
                ..Connection::default()
            }];
        }),
    ];
    let learned = learn(&PolicySpec::default(), &receipts, None).unwrap();
    let spec = &learned.spec;
    assert_eq!(
        spec.grant.as_deref(),
        Some(&["projectWrite".to_owned(), "networkAccess".to_owned()][..])
    );
    assert_eq!(spec.workspace.as_deref(), Some(Path::new("/ws/out")));
    assert_eq!(
        spec.allow_read,
        [PathBuf::from("/ws/src"), PathBuf::from("/ws/docs")]
    );
    assert!(spec.allow_write.is_empty());
    assert_eq!(spec.allow_net, ["api.example.com:443", "only.example:0"]);
    assert_eq!(spec.env, ["LANG"]);
    assert!(spec.no_storage);
    assert_eq!(&parsed(&learned.text), spec, "{}", learned.text);
    assert!(
        learned.text.contains("# tool.execute 'save' reached for api.example.com (192.0.2.1:443, tcp)\n  \"api.example.com:443\","),
        "{}",
        learned.text
    );
    assert!(
        learned
            .text
            .contains("# tool.execute 'scan' read /ws/src/a.rs"),
        "{}",
        learned.text
    );
}

#[test]
fn nothing_used_grants_nothing() {
    let learned = learn(
        &PolicySpec::default(),
        &[receipt("tool.execute 'ok'", |_| {})],
        None,
    )
    .unwrap();
    assert_eq!(learned.spec.grant, Some(vec!["none".to_owned()]));
    assert!(learned.spec.no_storage && learned.spec.workspace.is_none());
    assert_eq!(parsed(&learned.text), learned.spec);
}

#[test]
fn storage_used_stays_and_refusals_are_reported_not_granted() {
    let ceiling = PolicySpec {
        data_root: Some("/data".into()),
        timeout: Some(3.0),
        ..PolicySpec::default()
    };
    let receipts = [receipt("tool.execute 'kv'", |r| {
        r.files = vec![file("/lingxi/data/kv.json", |f| f.write = true)];
        r.refused = vec![Refusal {
            what: "read /etc/hosts".into(),
            allow: "allow-read = [\"/etc\"]".into(),
        }];
    })];
    let learned = learn(&ceiling, &receipts, None).unwrap();
    assert!(!learned.spec.no_storage);
    assert_eq!(learned.spec.data_root.as_deref(), Some(Path::new("/data")));
    assert!(learned.spec.allow_read.is_empty());
    assert_eq!(learned.refused.len(), 1);
    assert!(learned.text.contains("read /etc/hosts"), "{}", learned.text);
    assert_eq!(parsed(&learned.text), learned.spec, "{}", learned.text);
}

#[test]
fn an_incomplete_receipt_is_not_learned_from() {
    let receipts = [receipt("tool.execute 'flood'", |r| {
        r.totals = Totals {
            omitted: 3,
            ..Totals::default()
        };
    })];
    let error = learn(&PolicySpec::default(), &receipts, None).unwrap_err();
    assert!(error.to_string().contains("3 uses left out"), "{error}");
}

#[test]
fn names_and_comments_cannot_break_out_of_the_file() {
    let receipts = [receipt("tool.execute 'x\n[evil]'", |r| {
        r.files = vec![file("/ws/a\"b\n= 1/c.txt", |f| f.read = true)];
        r.environment = vec!["K\"]\nx = 1".into()];
    })];
    let learned = learn(&PolicySpec::default(), &receipts, None).unwrap();
    assert_eq!(parsed(&learned.text), learned.spec, "{}", learned.text);
}

#[test]
fn lookups_connections_links_and_values_across_calls() {
    let receipts = [
        receipt("tool.execute 'dns'", |r| {
            r.lookups = vec![Lookup {
                name: "api.example.com".into(),
                addresses: vec![],
            }];
            r.environment = vec!["MODE".into()];
        }),
        receipt("tool.execute 'fetch'", |r| {
            r.connections = vec![Connection {
                protocol: "tcp".into(),
                name: Some("api.example.com".into()),
                address: "192.0.2.1".into(),
                port: 443,
                count: 1,
                ..Connection::default()
            }];
            r.files = vec![file("/ws/b/link", |f| {
                f.created = true;
                f.linked_from = Some("/ws/a/file".into());
            })];
        }),
    ];
    let ceiling = PolicySpec {
        env: vec!["MODE=fast".into()],
        ..PolicySpec::default()
    };
    let learned = learn(&ceiling, &receipts, None).unwrap();
    // The name was connected to in another call: no port-0 rule.
    assert_eq!(learned.spec.allow_net, ["api.example.com:443"]);
    // A hard link is made within one mount: both folders under it.
    assert_eq!(learned.spec.workspace.as_deref(), Some(Path::new("/ws")));
    // A value the ceiling gave stays.
    assert_eq!(learned.spec.env, ["MODE=fast"]);
    assert_eq!(parsed(&learned.text), learned.spec, "{}", learned.text);
}

#[test]
fn a_root_that_path_parameters_resolve_against_stays_whole() {
    let receipts = [receipt("tool.execute 'stats'", |r| {
        r.files = vec![
            file("/ws/sub/a.rs", |f| f.read = true),
            file("/elsewhere/x", |f| f.read = true),
        ];
    })];
    let keep = Project {
        root: "/ws".into(),
        keep_whole: Some("tool stats takes paths relative to it".into()),
    };
    let learned = learn(&PolicySpec::default(), &receipts, Some(&keep)).unwrap();
    assert_eq!(learned.spec.workspace.as_deref(), Some(Path::new("{root}")));
    assert_eq!(learned.spec.allow_read, [PathBuf::from("/elsewhere")]);
    assert!(
        learned
            .text
            .contains("# tool stats takes paths relative to it\nworkspace"),
        "{}",
        learned.text
    );
    // Nothing under the root used: it is not mounted for nothing.
    let outside = [receipt("tool.execute 'x'", |r| {
        r.files = vec![file("/elsewhere/x", |f| f.read = true)]
    })];
    let learned = learn(&PolicySpec::default(), &outside, Some(&keep)).unwrap();
    assert_eq!(
        learned.spec.workspace.as_deref(),
        Some(Path::new("/elsewhere"))
    );
}

#[test]
fn folders_in_the_project_are_written_under_the_hosts_root() {
    let receipts = [receipt("tool.execute 'build'", |r| {
        r.files = vec![
            file("/ws/src/a.rs", |f| f.read = true),
            file("/ws/out/x.txt", |f| {
                f.write = true;
                f.created = true;
            }),
            file("/usr/share/dict/words", |f| f.read = true),
            file("/wsx/y", |f| f.read = true),
        ];
    })];
    let project = Project {
        root: "/ws".into(),
        keep_whole: None,
    };
    let learned = learn(&PolicySpec::default(), &receipts, Some(&project)).unwrap();
    let spec = parsed(&learned.text);
    assert_eq!(spec.workspace.as_deref(), Some(Path::new("{root}/out")));
    assert_eq!(
        spec.allow_read,
        [
            PathBuf::from("{root}/src"),
            PathBuf::from("/usr/share/dict"),
            PathBuf::from("/wsx")
        ]
    );
    // It resolves: the same policy serves another project.
    let mut portable = spec.clone();
    portable.allow_read.retain(|dir| dir.starts_with("{root}"));
    let (grant, _) = portable.resolve(|_| None).unwrap();
    assert_eq!(grant.in_root.workspace.as_deref(), Some(Path::new("out")));
    assert_eq!(grant.in_root.read, [PathBuf::from("src")]);
}

#[test]
fn a_secret_read_is_learned_by_name_as_the_ceiling_bound_it() {
    let ceiling = PolicySpec {
        secret: vec!["TOKEN@api.example.com".into(), "UNUSED".into()],
        ..PolicySpec::default()
    };
    let receipt = Receipt {
        call: "tool.execute 'fetch'".into(),
        secrets: vec!["TOKEN".into()],
        ..Receipt::default()
    };
    let learned = learn(&ceiling, &[receipt], None).unwrap();
    assert_eq!(learned.spec.secret, ["TOKEN@api.example.com"]);
    assert!(
        learned
            .text
            .contains("# tool.execute 'fetch' read the secret"),
        "{}",
        learned.text
    );
}
