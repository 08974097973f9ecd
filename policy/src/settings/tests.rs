use super::*;

/// A value of `setting`'s shape, as the policy file writes it.
fn sample(setting: Setting) -> &'static str {
    match setting.shape() {
        ValueShape::List => r#"["1"]"#,
        ValueShape::Number => "1",
        ValueShape::Switch => "true",
        ValueShape::Text => r#""/""#,
    }
}

#[test]
fn every_field_has_a_setting_and_every_setting_a_field() {
    // What serde writes of a spec: every field, by its key, in order.
    let written = serde_json::to_value(PolicySpec::default()).unwrap();
    let fields: Vec<&str> = written
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let settings: Vec<&str> = Setting::ALL
        .into_iter()
        .filter(|s| s.in_policy_file())
        .map(Setting::key)
        .collect();
    assert_eq!(
        fields, settings,
        "fields (left) and settings (right) differ"
    );
}

#[test]
fn every_policy_setting_is_a_key_of_the_file_and_no_other_is() {
    for setting in Setting::ALL {
        let text = format!("{} = {}", setting.key(), sample(setting));
        let parsed = PolicySpec::from_toml(&text, "p.toml".as_ref());
        assert_eq!(
            parsed.is_ok(),
            setting.in_policy_file(),
            "{text}: {parsed:?}"
        );
    }
}

#[test]
fn a_written_value_reads_back_as_the_same_setting() {
    // Every setting set at once, then each written and read back alone.
    let text: String = Setting::ALL
        .into_iter()
        .filter(|s| s.in_policy_file() && *s != Setting::DataRoot)
        .map(|s| format!("{} = {}\n", s.key(), sample(s)))
        .collect();
    let spec = PolicySpec::from_toml(&text, "p.toml".as_ref()).unwrap();
    for setting in Setting::ALL.into_iter().filter(|s| s.in_policy_file()) {
        let Some(value) = spec.written(setting) else {
            assert_eq!(
                setting,
                Setting::DataRoot,
                "{setting:?} is set but not written"
            );
            continue;
        };
        let alone = format!("{} = {value}", setting.key());
        let back = PolicySpec::from_toml(&alone, "p.toml".as_ref()).unwrap();
        assert_eq!(back.written(setting), Some(value), "{alone}");
    }
    assert_eq!(PolicySpec::default().written(Setting::Timeout), None);
    assert_eq!(spec.written(Setting::CacheDir), None);
}

#[test]
fn merging_lays_values_over_and_adds_lists() {
    let base = PolicySpec::from_toml(
        "timeout = 1.0\nallow-net = [\"a:1\"]\nno-validate = true",
        "p.toml".as_ref(),
    )
    .unwrap();
    let over =
        PolicySpec::from_toml("timeout = 2.0\nallow-net = [\"b:2\"]", "p.toml".as_ref()).unwrap();
    let merged = base.merge(over);
    assert_eq!(merged.timeout, Some(2.0));
    assert_eq!(merged.allow_net, ["a:1", "b:2"]);
    assert!(merged.no_validate);
    assert_eq!(merged.max_tasks, None);
}

#[test]
fn keys_are_the_fields_in_kebab_case() {
    assert_eq!(Setting::AllowNet.key(), "allow-net");
    assert_eq!(Setting::NoCache.key(), "no-cache");
    assert_eq!(FIELDS.len(), Setting::ALL.len());
    for (setting, field) in Setting::ALL.into_iter().zip(FIELDS) {
        assert_eq!(setting.key(), field.replace('_', "-"));
    }
}

/// The defaults a flag's help states are the defaults the sandbox uses.
#[cfg(feature = "cli")]
#[test]
fn each_stated_default_is_the_limit_in_force() {
    use std::time::Duration;

    let limits = crate::Limits::default();
    let stated: [(Setting, String); 5] = [
        (
            Setting::Timeout,
            format!("{}", limits.call_timeout.as_secs_f64()),
        ),
        (
            Setting::MaxMemory,
            (limits.max_memory_bytes >> 20).to_string(),
        ),
        (
            Setting::StorageQuota,
            (limits.max_storage_bytes >> 20).to_string(),
        ),
        (
            Setting::TaskTimeout,
            limits.task_timeout.as_secs().to_string(),
        ),
        (Setting::MaxTasks, limits.max_tasks.to_string()),
    ];
    let command = <PolicySpec as clap::Args>::augment_args(clap::Command::new("t"));
    // Every flag whose help states a default is in the list above: a new
    // setting's stated default cannot go unchecked.
    for arg in command.get_arguments() {
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        let long = arg.get_long().unwrap_or_default();
        let numeric = Setting::ALL
            .into_iter()
            .any(|s| s.key() == long && s.shape() == ValueShape::Number);
        if numeric && help.contains("[default: ") {
            assert!(
                stated.iter().any(|(s, _)| s.key() == long),
                "--{long} states a default this test does not check: {help:?}"
            );
        }
    }
    for (setting, value) in stated {
        let arg = command
            .get_arguments()
            .find(|a| a.get_long() == Some(setting.key()))
            .unwrap_or_else(|| panic!("no flag --{}", setting.key()));
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        assert!(
            help.contains(&format!("[default: {value}")),
            "--{}: {help:?} does not state {value}",
            setting.key()
        );
    }
    assert_eq!(limits.task_timeout, Duration::from_secs(600));
}
