//! Which certificates a registry's TLS is verified against: the system's
//! trusted roots, or instead only the CA certificates of a file the user
//! names (a private registry's own CA). Verification is never turned off;
//! a registry that cannot be verified is not reached (plain HTTP is a
//! separate, explicit choice: see [`crate::client`]).
//!
//! The system's roots are read with `rustls-native-certs` (the OpenSSL
//! folders on Linux, the certificate store on Windows). On macOS the
//! Mozilla roots (`webpki-roots`) are compiled in instead: reading the
//! keychain links Security.framework, which this project's macOS build
//! (zig, without Apple's SDK) cannot link.

use std::path::Path;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

/// Longest CA file read.
const MAX_CA_FILE: u64 = 1 << 20;

/// The TLS configuration of registry connections: roots from `ca_file`
/// alone when given, else the system's.
pub fn client_config(ca_file: Option<&Path>) -> Result<rustls::ClientConfig, String> {
    let roots = match ca_file {
        Some(path) => roots_from_file(path)?,
        None => system_roots()?,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

fn roots_from_file(path: &Path) -> Result<RootCertStore, String> {
    let named = |why: String| format!("the CA file {}: {why}", path.display());
    let meta = std::fs::metadata(path).map_err(|e| named(format!("cannot read it ({e})")))?;
    if !meta.is_file() || meta.len() > MAX_CA_FILE {
        return Err(named(format!(
            "it is not a PEM file of at most {MAX_CA_FILE} bytes"
        )));
    }
    let pem = std::fs::read(path).map_err(|e| named(format!("cannot read it ({e})")))?;
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| named(format!("it is not PEM certificates ({e})")))?;
        roots
            .add(cert)
            .map_err(|e| named(format!("a certificate in it is not usable ({e})")))?;
    }
    if roots.is_empty() {
        return Err(named("it holds no certificate".into()));
    }
    Ok(roots)
}

#[cfg(not(target_os = "macos"))]
fn system_roots() -> Result<RootCertStore, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _ignored) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found
            .errors
            .first()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default();
        return Err(format!(
            "no trusted root certificates were found on this system{why}; name a CA file with {}",
            lingxi_wasm_policy::settings::Setting::RegistryCa
        ));
    }
    Ok(roots)
}

#[cfg(target_os = "macos")]
fn system_roots() -> Result<RootCertStore, String> {
    Ok(RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    })
}
