//! The launcher's words for the library's settings: flags. The library's
//! errors, reports and log lines name a setting as data
//! ([`Setting`]); installed at start, these words make them read
//! `--allow-net api.example.com:443` instead of the policy file's
//! `allow-net = ["api.example.com:443"]`.

use lingxi_wasm_host::{Setting, Wording, printable, set_wording};

/// Flags: `--` and the setting's key (clap names each flag after the same
/// field of `PolicySpec` that the policy file's key comes from).
struct Flags;

impl Wording for Flags {
    fn name(&self, setting: Setting) -> String {
        format!("--{}", setting.key())
    }

    fn setting(&self, setting: Setting, value: &str) -> String {
        match value {
            "" => self.name(setting),
            value => format!("--{} {}", setting.key(), shell_word(value)),
        }
    }

    fn restart(&self) -> String {
        "by restarting the launcher".to_owned()
    }

    fn program(&self) -> Option<String> {
        Some("lingxi-wasm-run".to_owned())
    }
}

/// `value` as a shell takes it as one word: as it is when it holds only
/// characters no shell treats specially, else in single quotes (`'*:*'`,
/// a path with a space).
fn shell_word(value: &str) -> String {
    let plain = |c: char| c.is_alphanumeric() || "._:/@=,+-%".contains(c);
    if value.chars().all(plain) {
        return value.to_owned();
    }
    format!("'{}'", value.replace('\'', "'\\''"))
}

/// Makes every message of this process name flags. Called first thing
/// (from `init_logging`); later calls change nothing.
pub fn install() {
    set_wording(&Flags);
}

/// Says what a plugin is granted as it starts: grants that cannot take
/// effect are warned of every time (something is wrong); what the user
/// chose to withhold is said where grants are decided (`pack`, `install`,
/// `inspect`) and only at debug here, since a refused access names the
/// grant that would allow it.
pub fn say_grants(id: &str, policy: &lingxi_wasm_host::Policy, grant: &lingxi_wasm_host::Grant) {
    let id = printable(id);
    for line in policy.problems(grant) {
        tracing::warn!("[{id}] {line}");
    }
    for line in policy.choices() {
        tracing::debug!("[{id}] {line}");
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use lingxi_wasm_host::CallError;

    #[test]
    fn failed_calls_name_the_flag_that_raises_their_limit() {
        super::install();
        let timeout = CallError::Timeout {
            call: "tool.execute 'spin'".into(),
            limit: Duration::from_secs(1),
        };
        let text = timeout.to_string();
        assert!(
            text.contains("raise the call timeout with --timeout SECONDS"),
            "{text}"
        );
        let memory = CallError::Memory {
            call: "x".into(),
            limit_bytes: 1 << 20,
        };
        let text = memory.to_string();
        assert!(
            text.contains("raise the memory limit with --max-memory MIB"),
            "{text}"
        );
        let disabled = CallError::Disabled {
            plugin: "p".into(),
            traps: 5,
            window_secs: 60,
            last: "boom".into(),
        };
        let text = disabled.to_string();
        assert!(
            text.contains("then start it again by restarting the launcher"),
            "{text}"
        );
        assert_eq!(super::shell_word("*:*"), "'*:*'");
        assert_eq!(super::shell_word("/a b/it's"), "'/a b/it'\\''s'");
        assert_eq!(super::shell_word("[::1]:443"), "'[::1]:443'");
        assert_eq!(
            super::shell_word("api.example.com:443"),
            "api.example.com:443"
        );
        let plugin = CallError::Plugin("its own words".into());
        assert_eq!(plugin.to_string(), "its own words");
    }
}
