//! A short soak (the `lingxi-wasm-soak` crate, tests/soak/): 20 000 mixed
//! requests in both dialects through the launcher and 20 000 through a
//! plugin set (the two at once), 1% of them faults; every request must get
//! exactly one answer, in order, of the right kind, and the plugin must
//! answer normally after each fault. RSS and descriptors are reported, not
//! judged: this process runs other tests meanwhile. The full soak (a
//! million requests, release, resource checks) is run by hand with
//! `target/release/lingxi-wasm-soak` (see the README).

use std::time::{Duration, Instant};

use lingxi_wasm_soak::{Config, Fault, Report, Thresholds};

use crate::support::{guest, test_home, workspace_root};

#[test]
fn soak_with_faults_loses_no_answer() {
    let work = tempfile::tempdir().unwrap();
    let mut config = Config::new(
        env!("CARGO_BIN_EXE_lingxi-wasm-run").into(),
        guest("testbed"),
        work.path().to_owned(),
    );
    config.requests = 20_000;
    config.seed = 20_000;
    config.plugins = vec![guest("probe"), guest("quickstart")];
    config.launcher_env = vec![
        ("HOME".into(), test_home().display().to_string()),
        (
            "LINGXI_WASM_CACHE".into(),
            workspace_root()
                .join("target/e2e-cache")
                .display()
                .to_string(),
        ),
    ];
    // Every fault but the log flood: a debug host takes about a second to
    // take in the 16 MiB of one (the release soak floods; the attack suite's
    // `out_log_flood` floods once). A spin lasts the launcher's deadline.
    config.faults = (Fault::ALL.into_iter())
        .filter(|f| *f != Fault::LogFlood)
        .collect();
    config.timeout = Duration::from_millis(500);

    let started = Instant::now();
    let (over_pipes, in_process) = std::thread::scope(|s| {
        let over_pipes = s.spawn(|| lingxi_wasm_soak::launcher::run(&config));
        let in_process = s.spawn(|| lingxi_wasm_soak::embed::run(&config));
        (over_pipes.join(), in_process.join())
    });
    let reports: [Report; 2] = [
        over_pipes.expect("the launcher soak ran").unwrap(),
        in_process.expect("the embedding soak ran").unwrap(),
    ];
    eprintln!("soak took {:.1} s", started.elapsed().as_secs_f64());

    let judged = Thresholds {
        max_rss_growth_pct: None,
        max_fd_growth: None,
    };
    let mut failures = Vec::new();
    for report in &reports {
        eprint!("{}", report.render());
        failures.extend(report.failures(&judged));
        assert_eq!(report.tally.sent, 20_000, "{}", report.mode);
        let faults: u64 = report.tally.faults.values().sum();
        assert!(faults > 100, "{}: only {faults} faults", report.mode);
        // The breaker tripped, and the run lived with it as documented.
        assert!(
            report.tally.trips > 0,
            "{}: the breaker never tripped",
            report.mode
        );
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
