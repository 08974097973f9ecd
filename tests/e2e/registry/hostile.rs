//! A registry that misbehaves on purpose, a small HTTP server of our own:
//! each case answers one part of a pull wrongly (too long, another digest,
//! other media types, not a component, hundreds of layers, redirects away
//! or in a loop, a slow drip, a 401 loop), and `install` must refuse it
//! with a clear message, keep nothing in the store and install nothing.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use lingxi_wasm_registry::Digest;
use lingxi_wasm_registry::layout::{
    ComponentArtifact, ComponentWorld, INDEX_TYPE, MANIFEST_TYPE, PluginLabels,
};

use super::User;
use crate::support::guest;

/// One answer of the server.
#[derive(Clone, Default)]
pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
    /// Send no Content-Length (the end is the connection's end).
    pub(super) no_length: bool,
    /// Send the body a byte at a time, this long apart.
    pub(super) drip: Option<Duration>,
}

pub(super) fn answer(status: u16, body: Vec<u8>) -> Answer {
    Answer {
        status,
        body,
        ..Answer::default()
    }
}

fn typed(body: Vec<u8>, media_type: &str) -> Answer {
    let mut a = answer(200, body);
    a.headers.push(("Content-Type".into(), media_type.into()));
    a
}

type Handler = Arc<dyn Fn(&str, u16) -> Answer + Send + Sync>;

/// A wrong answer made from the right one and the server's port.
type Wrong = Box<dyn Fn(&Answer, u16) -> Answer + Send + Sync>;

/// Serves `handler(path, port)` on a loopback port until the process ends.
fn serve(handler: Handler) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let handler = handler.clone();
            std::thread::spawn(move || {
                let _ = one(stream, &*handler, port);
            });
        }
    });
    port
}

fn one(stream: TcpStream, handler: &dyn Fn(&str, u16) -> Answer, port: u16) -> std::io::Result<()> {
    // A TLS handshake (the client tries HTTPS first on loopback): this
    // server speaks plain HTTP only, and answers it as plain HTTP servers
    // do, with a 400 (which is how the client tells it speaks no TLS).
    let mut first = [0u8; 1];
    if stream.peek(&mut first)? == 0 {
        return Ok(());
    }
    if first[0] == 0x16 {
        let mut stream = stream;
        let mut hello = [0u8; 512];
        let _ = stream.read(&mut hello)?;
        stream.write_all(
            b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        )?;
        return Ok(());
    }
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split(' ').nth(1).unwrap_or("").to_owned();
    let mut length = 0;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" {
            break;
        }
        if let Some(n) = header.to_ascii_lowercase().strip_prefix("content-length:") {
            length = n.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let a = handler(&path, port);
    let mut head = format!("HTTP/1.1 {} X\r\nConnection: close\r\n", a.status);
    for (name, value) in &a.headers {
        head += &format!("{name}: {value}\r\n");
    }
    if !a.no_length {
        head += &format!("Content-Length: {}\r\n", a.body.len());
    }
    head += "\r\n";
    let mut stream = stream;
    stream.write_all(head.as_bytes())?;
    match a.drip {
        None => stream.write_all(&a.body)?,
        Some(pause) => {
            for byte in &a.body {
                stream.write_all(&[*byte])?;
                stream.flush()?;
                std::thread::sleep(pause);
            }
        }
    }
    Ok(())
}

/// A valid artifact of `component`: its manifest and config.
pub(super) fn artifact(component: &[u8]) -> ComponentArtifact {
    let labels = PluginLabels {
        id: "com.lingxi.test-probe".into(),
        version: "0.1.0".into(),
        capabilities: vec!["projectRead".into()],
    };
    ComponentArtifact::new(
        component,
        ComponentWorld::default(),
        &labels,
        "2026-01-01T00:00:00Z".into(),
    )
}

/// A manifest changed by `change`, as JSON bytes.
fn changed(manifest: &[u8], change: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    let mut value: serde_json::Value = serde_json::from_slice(manifest).unwrap();
    change(&mut value);
    serde_json::to_vec(&value).unwrap()
}

/// A registry that answers a pull of `component` rightly, except where
/// `wrong` answers instead (it sees the path and the right answer).
pub(super) fn registry(
    component: Vec<u8>,
    manifest: Vec<u8>,
    wrong: impl Fn(&str, &Answer, u16) -> Option<Answer> + Send + Sync + 'static,
) -> u16 {
    let artifact = artifact(&component);
    let config_digest = Digest::of(&artifact.config).to_string();
    let layer_digest = Digest::of(&component).to_string();
    serve(Arc::new(move |path: &str, port| {
        let right = if path == "/v2/" {
            answer(200, b"{}".to_vec())
        } else if path.ends_with("/manifests/1") {
            typed(manifest.clone(), MANIFEST_TYPE)
        } else if path.ends_with(&config_digest) {
            answer(200, artifact.config.clone())
        } else if path.ends_with(&layer_digest) {
            answer(200, component.clone())
        } else {
            answer(404, b"{\"errors\":[{\"code\":\"NOT_FOUND\"}]}".to_vec())
        };
        wrong(path, &right, port).unwrap_or(right)
    }))
}

/// A case: its name, its registry's port, extra flags, and what the
/// refusal says.
struct Case {
    name: &'static str,
    port: u16,
    flags: Vec<String>,
    says: &'static str,
}

#[test]
fn a_hostile_registry_is_refused_with_nothing_stored_or_run() {
    let component = std::fs::read(guest("probe")).unwrap();
    let good = artifact(&component).manifest;
    let manifest_is = |f: Wrong| {
        move |path: &str, right: &Answer, port: u16| {
            path.ends_with("/manifests/1").then(|| f(right, port))
        }
    };
    let layer_is = |f: Box<dyn Fn(&Answer) -> Answer + Send + Sync>| {
        let layer = Digest::of(&component).to_string();
        move |path: &str, right: &Answer, _| path.ends_with(&layer).then(|| f(right))
    };
    let c = || component.clone();
    let g = || good.clone();
    let not_component = b"#!/bin/sh\necho this is not a component\n".to_vec();
    let mut cases = vec![
        Case {
            name: "a manifest over its cap, announced",
            port: registry(
                c(),
                g(),
                manifest_is(Box::new(|_, _| typed(vec![b' '; 5 << 20], MANIFEST_TYPE))),
            ),
            flags: vec![],
            says: "its manifest is longer than the 4194304 bytes accepted",
        },
        Case {
            name: "a manifest over its cap, without a length",
            port: registry(
                c(),
                g(),
                manifest_is(Box::new(|_, _| Answer {
                    no_length: true,
                    ..typed(vec![b' '; 5 << 20], MANIFEST_TYPE)
                })),
            ),
            flags: vec![],
            says: "its manifest is longer than the 4194304 bytes accepted",
        },
        Case {
            name: "an index instead of a manifest",
            port: registry(
                c(),
                g(),
                manifest_is(Box::new(|right, _| typed(right.body.clone(), INDEX_TYPE))),
            ),
            flags: vec![],
            says: "an index of several manifests",
        },
        Case {
            name: "a component longer than declared",
            port: registry(
                c(),
                g(),
                layer_is(Box::new(|right| {
                    let mut body = right.body.clone();
                    body.extend_from_slice(b"more");
                    answer(200, body)
                })),
            ),
            flags: vec![],
            says: "it announced the component as",
        },
        Case {
            name: "a component longer than declared, without a length",
            port: registry(
                c(),
                g(),
                layer_is(Box::new(|right| {
                    let mut body = right.body.clone();
                    body.extend_from_slice(b"more");
                    Answer {
                        no_length: true,
                        ..answer(200, body)
                    }
                })),
            ),
            flags: vec![],
            says: "it sent more than the",
        },
        Case {
            name: "a component with another digest",
            port: registry(
                c(),
                g(),
                layer_is(Box::new(|right| {
                    let mut body = right.body.clone();
                    let last = body.len() - 1;
                    body[last] ^= 1;
                    answer(200, body)
                })),
            ),
            flags: vec![],
            says: "its bytes have digest sha256:",
        },
        Case {
            name: "a container image's media types",
            port: registry(
                c(),
                changed(&good, |m| {
                    m["config"]["mediaType"] = "application/vnd.oci.image.config.v1+json".into()
                }),
                |_, _, _| None,
            ),
            flags: vec![],
            says: "not a Wasm artifact",
        },
        Case {
            name: "a layer that is not a component",
            port: registry(
                not_component.clone(),
                artifact(&not_component).manifest,
                |_, _, _| None,
            ),
            flags: vec![],
            says: "its layer is not a WebAssembly component",
        },
        Case {
            name: "hundreds of layers",
            port: registry(
                c(),
                changed(&good, |m| {
                    let layer = m["layers"][0].clone();
                    m["layers"] = serde_json::Value::Array(vec![layer; 300]);
                }),
                |_, _, _| None,
            ),
            flags: vec![],
            says: "300 layers",
        },
        Case {
            name: "a redirect to another host",
            port: registry(
                c(),
                g(),
                manifest_is(Box::new(|_, port| Answer {
                    headers: vec![(
                        "Location".into(),
                        format!("http://localhost:{port}/v2/h/p/manifests/1"),
                    )],
                    ..answer(307, vec![])
                })),
            ),
            flags: vec![],
            says: "redirected to http://localhost, not the registry it was asked at",
        },
        Case {
            name: "a redirect loop",
            port: registry(
                c(),
                g(),
                manifest_is(Box::new(|_, port| Answer {
                    headers: vec![(
                        "Location".into(),
                        format!("http://127.0.0.1:{port}/v2/h/p/manifests/1"),
                    )],
                    ..answer(302, vec![])
                })),
            ),
            flags: vec![],
            says: "redirected more than 5 times",
        },
        Case {
            name: "a slow drip",
            port: registry(
                c(),
                g(),
                manifest_is(Box::new(|right, _| Answer {
                    drip: Some(Duration::from_millis(200)),
                    ..right.clone()
                })),
            ),
            flags: vec!["--registry-timeout".into(), "2".into()],
            says: "did not finish within 2 s",
        },
        Case {
            name: "a 401 loop",
            port: registry(c(), g(), |path: &str, _: &Answer, _| {
                (path != "/v2/").then(|| Answer {
                    headers: vec![("WWW-Authenticate".into(), "Basic realm=\"x\"".into())],
                    ..answer(401, vec![])
                })
            }),
            flags: vec![],
            says: "the registry refused the credentials from LINGXI_WASM_REGISTRY_USERNAME",
        },
        Case {
            name: "a token flow that loops",
            port: registry(c(), g(), |path: &str, _: &Answer, port| {
                if path.starts_with("/token") {
                    return Some(answer(200, br#"{"token":"t0k3n"}"#.to_vec()));
                }
                (path != "/v2/").then(|| Answer {
                    headers: vec![(
                        "WWW-Authenticate".into(),
                        format!("Bearer realm=\"http://127.0.0.1:{port}/token\",service=\"s\""),
                    )],
                    ..answer(401, vec![])
                })
            }),
            flags: vec![],
            says: "the registry refused the credentials",
        },
    ];
    let mut failures = Vec::new();
    for case in cases.drain(..) {
        let mut user = User::new();
        user.env = vec![
            ("LINGXI_WASM_REGISTRY_USERNAME".into(), "mallory".into()),
            ("LINGXI_WASM_REGISTRY_PASSWORD".into(), "pa55-Word-9".into()),
        ];
        let reference = format!("oci://127.0.0.1:{}/h/p:1", case.port);
        let mut args = vec!["install".to_owned(), reference];
        args.extend(case.flags.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = user.run(&args);
        let stored = user.stored_blobs();
        let tags = user.store().join("tags");
        let tagged = std::fs::read_dir(&tags).map(|d| d.count()).unwrap_or(0);
        let installed = user.installed("com.lingxi.test-probe").exists();
        if run.ok || !run.err.contains(case.says) || !stored.is_empty() || tagged > 0 || installed {
            failures.push(format!(
                "{}: ok={} stored={stored:?} tags={tagged} installed={installed}\n  expected {:?} in: {}",
                case.name, run.ok, case.says, run.err
            ));
        }
        assert!(!run.err.contains("pa55-Word-9") && !run.out.contains("pa55-Word-9"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
