//! Credentials as docker keeps them: a credential helper is a program of
//! the user's that may never answer, and the pull's deadline must hold
//! over it as over the registry.

use std::time::{Duration, Instant};

use super::User;
use super::hostile::{Answer, answer, registry};
use crate::support::guest;

/// `config.json` names a credential helper for the registry that hangs:
/// the install is refused at `--registry-timeout`, with nothing stored.
#[cfg(unix)]
#[test]
fn a_credential_helper_that_never_answers_meets_the_deadline() {
    use std::os::unix::fs::PermissionsExt;
    let component = std::fs::read(guest("probe")).unwrap();
    let manifest = super::hostile::artifact(&component).manifest;
    let port = registry(component, manifest, |path: &str, _: &Answer, _| {
        (path != "/v2/").then(|| Answer {
            headers: vec![("WWW-Authenticate".into(), "Basic realm=\"r\"".into())],
            ..answer(401, vec![])
        })
    });
    let mut user = User::new();
    let bin = user.home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let helper = bin.join("docker-credential-hang");
    std::fs::write(&helper, "#!/bin/sh\nexec sleep 30\n").unwrap();
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let docker = user.home.path().join(".docker");
    std::fs::create_dir_all(&docker).unwrap();
    let config = format!(r#"{{"credHelpers":{{"127.0.0.1:{port}":"hang"}}}}"#);
    std::fs::write(docker.join("config.json"), config).unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    user.env = vec![("PATH".into(), format!("{}:{path}", bin.display()))];

    let reference = format!("oci://127.0.0.1:{port}/h/p:1");
    let started = Instant::now();
    user.run(&["install", &reference, "--registry-timeout", "3"])
        .refused("did not finish within 3 s");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert!(user.stored_blobs().is_empty());
}
