//! The platform's keyring, through the `keyring` crate: the macOS
//! Keychain, the Windows Credential Manager, the freedesktop Secret
//! Service on Linux (over D-Bus, found by `DBUS_SESSION_BUS_ADDRESS` or
//! else `$XDG_RUNTIME_DIR/bus`). An entry is service `lingxi-wasm/PLUGIN_ID`,
//! account NAME; another client (`secret-tool lookup service
//! lingxi-wasm/PLUGIN_ID username NAME`) reads the same entry.
//!
//! Every call runs on a thread of its own and is awaited at most
//! [`KEYRING_WAIT`] (a read at a plugin's start: the caller's bound, see
//! `KEYRING_START_WAIT`): a locked keyring waiting on a password prompt
//! never holds a plugin's start. On a platform the crate has no keyring for,
//! every call is refused as "no keyring" (the crate's in-memory stand-in is
//! never used).

use std::time::Duration;

use lingxi_wasm_host::policy::limits::KEYRING_WAIT;
use lingxi_wasm_host::policy::secrets::SecretValue;

use super::SecretError;

/// The keyring service of `plugin`'s secrets.
pub fn service(plugin: &str) -> String {
    format!("lingxi-wasm/{plugin}")
}

/// The value of `name` for `plugin`, if the keyring has one, awaited at
/// most `wait`.
pub fn get(plugin: &str, name: &str, wait: Duration) -> Result<Option<SecretValue>, SecretError> {
    let (service, name) = (service(plugin), name.to_owned());
    let found = on_thread(wait, move || platform::get(&service, &name))?;
    match found {
        None => Ok(None),
        Some(text) => SecretValue::new(&text).map(Some).map_err(|why| {
            SecretError::Keyring(format!(
                "the value kept for this secret cannot be used: {why}"
            ))
        }),
    }
}

/// Keeps `value` as `name` for `plugin` (replacing one kept before).
pub fn set(plugin: &str, name: &str, value: &SecretValue) -> Result<(), SecretError> {
    let (service, name, value) = (service(plugin), name.to_owned(), value.clone());
    on_thread(KEYRING_WAIT, move || {
        platform::set(&service, &name, value.expose())
    })
}

/// Removes `name` of `plugin`; whether the keyring had it.
pub fn delete(plugin: &str, name: &str) -> Result<bool, SecretError> {
    let (service, name) = (service(plugin), name.to_owned());
    on_thread(KEYRING_WAIT, move || platform::delete(&service, &name))
}

/// Runs `work` on a thread of its own, awaited at most `wait`.
fn on_thread<T: Send + 'static>(
    wait: Duration,
    work: impl FnOnce() -> Result<T, SecretError> + Send + 'static,
) -> Result<T, SecretError> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("keyring".into())
        .spawn(move || {
            let _ = sender.send(work());
        })
        .map_err(|e| SecretError::Keyring(format!("cannot start a thread: {e}")))?;
    receiver
        .recv_timeout(wait)
        .unwrap_or(Err(SecretError::KeyringTimeout {
            seconds: wait.as_secs_f64(),
        }))
}

#[cfg(any(target_os = "linux", windows, target_os = "macos"))]
mod platform {
    use super::SecretError;

    fn entry(service: &str, name: &str) -> Result<keyring::Entry, SecretError> {
        keyring::Entry::new(service, name).map_err(error)
    }

    /// The crate's error, without what it may carry of a value.
    fn error(e: keyring::Error) -> SecretError {
        use keyring::Error;
        match e {
            Error::PlatformFailure(why) | Error::NoStorageAccess(why) => SecretError::NoKeyring {
                reason: why.to_string(),
                file: super::super::shelf::file_shown(),
            },
            Error::BadEncoding(_) => {
                SecretError::Keyring("the value kept for this secret is not UTF-8 text".into())
            }
            Error::TooLong(what, limit) => {
                SecretError::Keyring(format!("{what} is longer than the keyring allows ({limit})"))
            }
            Error::Invalid(what, why) => SecretError::Keyring(format!("{what}: {why}")),
            Error::Ambiguous(_) => SecretError::Keyring(
                "the keyring holds more than one entry for this secret; remove them with the platform's keyring tool and set it again".into(),
            ),
            Error::NoEntry => SecretError::Keyring("no such entry".into()),
            other => SecretError::Keyring(other.to_string()),
        }
    }

    pub(super) fn get(service: &str, name: &str) -> Result<Option<String>, SecretError> {
        match entry(service, name)?.get_password() {
            Ok(value) => Ok(Some(value)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(error(e)),
        }
    }

    pub(super) fn set(service: &str, name: &str, value: &str) -> Result<(), SecretError> {
        entry(service, name)?.set_password(value).map_err(error)
    }

    pub(super) fn delete(service: &str, name: &str) -> Result<bool, SecretError> {
        match entry(service, name)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(error(e)),
        }
    }
}

#[cfg(not(any(target_os = "linux", windows, target_os = "macos")))]
mod platform {
    use super::SecretError;

    fn none() -> SecretError {
        SecretError::NoKeyring {
            reason: "this build has no keyring for this platform".into(),
            file: super::super::shelf::file_shown(),
        }
    }

    pub(super) fn get(_: &str, _: &str) -> Result<Option<String>, SecretError> {
        Err(none())
    }

    pub(super) fn set(_: &str, _: &str, _: &str) -> Result<(), SecretError> {
        Err(none())
    }

    pub(super) fn delete(_: &str, _: &str) -> Result<bool, SecretError> {
        Err(none())
    }
}
