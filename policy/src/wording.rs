//! How a message names a setting the user can change. The library's errors,
//! reports and log lines say which setting would allow or raise something as
//! data (a [`Setting`]); the words are the front end's: the launcher writes
//! flags (`--allow-net api.example.com:443`), the library's own default
//! writes policy-file keys (`allow-net = ["api.example.com:443"]`, or "the
//! timeout setting" where there is no value to write), the format
//! [`PolicySpec`](super::file::PolicySpec) reads.
//!
//! A front end installs its words once, at start, with [`set_wording`]
//! (like a global `tracing` subscriber): log lines are written deep inside
//! the sandbox, where no caller could pass words along.

use std::fmt;
use std::sync::OnceLock;

use crate::settings::Setting;
use crate::settings::ValueShape;

/// The words a front end uses for settings.
pub trait Wording: Send + Sync {
    /// The setting's name alone, e.g. `--allow-net` or `allow-net`.
    fn name(&self, setting: Setting) -> String;

    /// The setting given `value` (a placeholder such as `SECONDS` is a
    /// value too; empty for a switch), e.g. `--timeout 2.5`.
    fn setting(&self, setting: Setting, value: &str) -> String;

    /// How the user starts a disabled plugin again, after "start it again".
    fn restart(&self) -> String;

    /// The command the user runs, for messages that tell them to update it
    /// or to run something with it (`lingxi-wasm-run` in the launcher);
    /// `None` (the default) in a host that embeds the library, where such
    /// messages say "this host".
    fn program(&self) -> Option<String> {
        None
    }
}

/// The library's own words: policy-file keys, in the file's syntax.
#[derive(Debug, Clone, Copy, Default)]
pub struct PolicyFileWording;

impl Wording for PolicyFileWording {
    fn name(&self, setting: Setting) -> String {
        setting.key().to_owned()
    }

    fn setting(&self, setting: Setting, value: &str) -> String {
        let key = setting.key();
        // A placeholder (`SECONDS`, `MIB`) is no value to write down: the
        // setting is named instead.
        if !value.is_empty() && value.chars().all(|c| c.is_ascii_uppercase()) {
            return format!("the {key} setting");
        }
        match setting.shape() {
            ValueShape::List => format!("{key} = [{value:?}]"),
            ValueShape::Number => format!("{key} = {value}"),
            ValueShape::Switch => format!("{key} = true"),
            ValueShape::Text => format!("{key} = {value:?}"),
        }
    }

    fn restart(&self) -> String {
        "(a new session, or a restart)".to_owned()
    }
}

static WORDING: OnceLock<&'static dyn Wording> = OnceLock::new();

/// Installs the process's words for settings; the first call wins (later
/// ones return `false`). Call it at start, before any plugin runs.
pub fn set_wording(wording: &'static dyn Wording) -> bool {
    WORDING.set(wording).is_ok()
}

/// The process's words: those given to [`set_wording`], else
/// [`PolicyFileWording`].
pub fn wording() -> &'static dyn Wording {
    WORDING.get().copied().unwrap_or(&PolicyFileWording)
}

impl fmt::Display for Setting {
    /// The setting's name in the process's words.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&wording().name(*self))
    }
}

/// The command the user runs, or "this host" (see [`Wording::program`]).
pub fn program() -> String {
    wording()
        .program()
        .unwrap_or_else(|| "this host".to_owned())
}

/// `setting` given `value`, in the process's words (for messages).
pub fn worded(setting: Setting, value: impl fmt::Display) -> String {
    wording().setting(setting, &value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_words_are_policy_file_syntax() {
        let w = PolicyFileWording;
        assert_eq!(
            w.setting(Setting::AllowNet, "api.example.com:443"),
            r#"allow-net = ["api.example.com:443"]"#
        );
        assert_eq!(w.setting(Setting::Timeout, "2.5"), "timeout = 2.5");
        assert_eq!(w.setting(Setting::NoCache, ""), "no-cache = true");
        assert_eq!(w.setting(Setting::DataRoot, "/d"), r#"data-root = "/d""#);
        assert_eq!(
            w.setting(Setting::Timeout, "SECONDS"),
            "the timeout setting"
        );
    }
}
