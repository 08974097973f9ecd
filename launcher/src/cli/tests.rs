//! The flags against the settings they are declared as.
use clap::{Args, CommandFactory};
use lingxi_wasm_host::Setting;
use lingxi_wasm_host::policy::settings::Kind;

/// The long flags of the arguments `A` adds.
fn flags_of<A: Args>() -> Vec<String> {
    let command = A::augment_args(clap::Command::new("t"));
    let mut flags: Vec<String> = (command.get_arguments())
        .filter_map(|a| a.get_long().map(str::to_owned))
        .collect();
    flags.sort();
    flags
}

#[test]
fn the_cache_flags_are_the_front_end_settings_both_ways() {
    // `CacheArgs`, `CompilerArgs` and `RegistryArgs` are the launcher's own: their flags and the
    // settings a message names (`Setting::CacheDir`, …) must be the
    // same, none missing on either side.
    let mut settings: Vec<String> = (Setting::of_kind(Kind::FrontEnd))
        .map(|s| s.key().to_owned())
        .collect();
    settings.sort();
    let mut flags = flags_of::<super::args::CacheArgs>();
    flags.extend(flags_of::<super::args::CompilerArgs>());
    flags.extend(flags_of::<super::args::RegistryArgs>());
    flags.sort();
    assert_eq!(flags, settings);
    let mut policy: Vec<String> = (Setting::ALL.into_iter())
        .filter(|s| s.in_policy_file())
        .map(|s| s.key().to_owned())
        .collect();
    policy.sort();
    assert_eq!(flags_of::<lingxi_wasm_host::PolicySpec>(), policy);
}

#[test]
fn a_compilers_flag_value_is_the_name_reports_give_it() {
    use clap::ValueEnum;
    for compiler in lingxi_wasm_host::Compiler::value_variants() {
        let value = compiler
            .to_possible_value()
            .map(|v| v.get_name().to_owned());
        assert_eq!(value.as_deref(), Some(compiler.name()));
    }
}

#[test]
fn every_setting_is_a_flag() {
    // The words name `--KEY`: each must be a flag of the launcher.
    let flags: Vec<String> = super::Cli::command()
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_owned))
        .collect();
    for setting in Setting::ALL {
        assert!(
            flags.iter().any(|f| f == setting.key()),
            "--{} is not a flag: {flags:?}",
            setting.key()
        );
    }
}

/// `--allow-http-registry` takes a host or `HOST:PORT` as a reference names
/// it: a pattern, a scheme, a path or nothing would allow nothing or more
/// than meant, and is refused.
#[test]
fn allow_http_registry_takes_only_a_registry_host() {
    let parse = |value: &str| {
        super::args::RegistryArgs::augment_args(clap::Command::new("t")).try_get_matches_from([
            "t",
            "--allow-http-registry",
            value,
        ])
    };
    for good in [
        "registry.lan",
        "registry.lan:5000",
        "10.0.0.7:5000",
        "[::1]:5000",
    ] {
        assert!(parse(good).is_ok(), "{good}");
    }
    for bad in [
        "",
        "*",
        "host:*",
        "http://registry.lan",
        "registry.lan/x",
        "10.0.0.0/8",
        "u:p@host",
    ] {
        let err = parse(bad).unwrap_err().to_string();
        assert!(err.contains("is not a registry host"), "{bad}: {err}");
    }
}
