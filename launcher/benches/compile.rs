//! The author's loop, in one run, as a new user meets it on this machine:
//! how long a Python or JavaScript plugin takes to be ready to call.
//!
//! For each language, with the launcher's compile cache in a fresh folder:
//!
//! - **baseline**: `check --no-cache` of the probe (`examples/probe-<py|js>`),
//!   nothing kept, nothing reused: a whole compile, as every plugin and every
//!   edit paid before compiled functions were kept;
//! - **cold**: `check` of the probe with an empty cache, then `call` of its
//!   tool (the call finds what `check` compiled);
//! - **second plugin**: `check` then `call` of another example
//!   (`config-check-py`, `md-outline-js`): its interpreter's functions come
//!   from the cache;
//! - **after an edit**: the probe with one line changed (the tool's answer),
//!   `check` then `call`; the call must answer with the edited text;
//! - the second plugin and the edit again with `--compiler winch`, each in
//!   a cache of its own (Winch keeps no functions: each is a whole compile);
//! - what Winch's slower code costs: the probe with its tool made to loop a
//!   million times in the interpreter, called under each compiler (start-up
//!   taken out: the same call with one step is subtracted).
//!
//! Then ten Python plugins (the probe under ten ids, each with its own
//! answer): `pack` of each with `--no-cache` against with one cache, and
//! `install` of each (into a scratch HOME) with one cache.
//!
//! Last, what a packed Python and JavaScript probe is made of (base,
//! component, native code, the rest) on the launcher and on the
//! runtime-only base, as `inspect` says it.
//!
//! Prints wall-clock seconds per step and the ratio of each "ready to call"
//! (check + call) to the baseline; the target is ≤ 0.20.
//! Run: `cargo bench -p lingxi-wasm-run --bench compile`.

// Shared with the other benches.
#[path = "../../host/benches/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How the probe's tool answers, and the edit made to it, per language.
struct Lang {
    name: &'static str,
    code: &'static str,
    file: &'static str,
    other: &'static str,
    /// The other plugin's tool and its arguments (on `workspace/`).
    other_call: [&'static str; 2],
    answer: &'static str,
    edited: &'static str,
    /// The answer made to loop `arguments` times in the interpreter.
    busy: &'static str,
}

const LANGS: [Lang; 2] = [
    Lang {
        name: "Python",
        code: "py",
        file: "app.py",
        other: "config-check-py",
        other_call: ["config.check", "{}"],
        answer: r#"f"echo:{arguments}""#,
        edited: r#"f"edited:{arguments}""#,
        busy: r#"f"echo:{sum((i * i) % 7 for i in range(int(arguments)))}""#,
    },
    Lang {
        name: "JavaScript",
        code: "js",
        file: "app.js",
        other: "md-outline-js",
        other_call: ["markdown.outline", r#"{"path":"README.md"}"#],
        answer: "`echo:${args}`",
        edited: "`edited:${args}`",
        busy: "`echo:${(() => { let t = 0; for (let i = 0; i < Number(args); i++) t += (i * i) % 7; return t; })()}`",
    },
];

const PLUGINS: usize = 10;

fn main() {
    let launcher = PathBuf::from(env!("CARGO_BIN_EXE_lingxi-wasm-run"));
    let scratch = tempfile::tempdir().expect("tempdir");
    let scratch = scratch.path();
    // What the other plugins' tools read.
    let workspace = scratch.join("workspace");
    std::fs::create_dir_all(&workspace).expect("mkdir");
    std::fs::write(workspace.join("README.md"), "# Title\n\n## Part\n").expect("write");
    std::fs::write(workspace.join("a.toml"), "x = 1\n").expect("write");
    let ws = workspace.to_str().expect("a UTF-8 scratch path");
    let mut ten = None;
    let mut probes = Vec::new();
    for lang in &LANGS {
        let Some(built) = build(lang, scratch) else {
            continue;
        };
        let cache = scratch.join(format!("cache-{}", lang.code));
        let run = |args: &[&str], file: &Path| timed(&launcher, scratch, &cache, args, file);

        let (baseline, _) = timed_no_cache(&launcher, scratch, "check", &built.probe);
        let (cold_check, _) = run(&["check"], &built.probe);
        let (cold_call, _) = run(&["call", "probe.echo", "{}"], &built.probe);
        let (second_check, _) = run(&["check"], &built.other);
        let [tool, arguments] = lang.other_call;
        let (second_call, _) = run(&["call", tool, arguments, "--workspace", ws], &built.other);
        let (edit_check, _) = run(&["check"], &built.edited);
        let (edit_call, out) = timed(
            &launcher,
            scratch,
            &cache,
            &["call", "probe.echo", "{}"],
            &built.edited,
        );
        let answer = String::from_utf8_lossy(&out.stdout);
        assert!(
            answer.contains("edited:"),
            "the edited probe answered {answer:?}: compiled code of the old one was used"
        );
        // Winch: each step in a cache of its own, so nothing is reused.
        let winch = |step: &str, args: &[&str], file: &Path| {
            let cache = scratch.join(format!("cache-winch-{}-{step}", lang.code));
            let mut args = args.to_vec();
            args.extend(["--compiler", "winch"]);
            timed(&launcher, scratch, &cache, &args, file)
        };
        let (winch_second_check, _) = winch("second", &["check"], &built.other);
        let other_args = ["call", tool, arguments, "--workspace", ws];
        let (winch_second_call, _) = winch("second", &other_args, &built.other);
        let (winch_edit_check, _) = winch("edit", &["check"], &built.edited);
        let (winch_edit_call, out) = winch("edit", &["call", "probe.echo", "{}"], &built.edited);
        assert!(String::from_utf8_lossy(&out.stdout).contains("edited:"));
        let base = secs(baseline);
        println!(
            "\n{} plugin ready to call, seconds (component {:.1} MB)",
            lang.name,
            size_mb(&built.probe)
        );
        println!("  step                 check     call    ready   ready/baseline");
        println!("  baseline (no cache) {base:7.2}        -  {base:7.2}   1.00");
        for (what, check, call) in [
            ("cold (empty cache) ", cold_check, cold_call),
            ("second plugin      ", second_check, second_call),
            ("after a one-line edit", edit_check, edit_call),
            (
                "winch: second plugin",
                winch_second_check,
                winch_second_call,
            ),
            ("winch: after the edit", winch_edit_check, winch_edit_call),
        ] {
            let ready = secs(check) + secs(call);
            println!(
                "  {what:<20} {:7.2}  {:7.2}  {ready:7.2}   {:.2}{}",
                secs(check),
                secs(call),
                ready / base,
                if what.starts_with("cold") {
                    ""
                } else {
                    "  (target ≤ 0.20)"
                }
            );
        }
        let tool = |compiler| tool_time(&launcher, scratch, lang, &built.busy, compiler);
        let (cranelift, winch) = (tool("cranelift"), tool("winch"));
        println!(
            "  a tool's own time, a million steps in the interpreter: cranelift {cranelift:.3} s, winch {winch:.3} s ({:.2}x)",
            winch / cranelift
        );
        println!(
            "  the cache after three plugins: {:.1} MB in {} files",
            dir_size(&cache).0 as f64 / 1e6,
            dir_size(&cache).1
        );
        if lang.code == "py" {
            ten = Some(ten_plugins(&launcher, scratch, lang));
        }
        probes.push((lang.name, built.probe));
    }
    if let Some((packs_none, packs, installs)) = ten {
        println!("\n{PLUGINS} Python plugins, seconds in all");
        println!("  pack, --no-cache       {:7.1}", secs(packs_none));
        println!(
            "  pack, one cache        {:7.1}   ({:.2} of --no-cache)",
            secs(packs),
            secs(packs) / secs(packs_none)
        );
        println!(
            "  install, one cache     {:7.1}   ({:.2} of pack --no-cache)",
            secs(installs),
            secs(installs) / secs(packs_none)
        );
    }
    made_of(&launcher, scratch, &probes);
}

/// Packs each probe on the launcher and on the runtime-only base and prints
/// what `inspect` says the file is made of.
fn made_of(launcher: &Path, scratch: &Path, probes: &[(&str, PathBuf)]) {
    let bases = [
        ("lingxi-wasm-run", launcher.to_path_buf()),
        ("lingxi-wasm-rt", common::runtime_base()),
    ];
    println!("\nWhat a packed plugin is made of (MB), as `inspect` says");
    for (lang, probe) in probes {
        for (name, base) in &bases {
            let out = scratch.join(format!("made-of-{lang}-{name}"));
            let mut c = launcher_cmd(launcher, scratch);
            c.arg("pack").arg(probe).arg("-o").arg(&out);
            c.arg("--base").arg(base);
            c.arg("--cache-dir").arg(scratch.join("cache-made-of"));
            run(c);
            let mut c = launcher_cmd(launcher, scratch);
            c.arg("inspect").arg(&out).arg("--no-cache");
            let (_, shown) = run(c);
            let shown = String::from_utf8_lossy(&shown.stdout);
            let line = shown
                .lines()
                .find_map(|l| l.strip_prefix("made of"))
                .unwrap_or("(inspect did not say)")
                .trim();
            println!("  {lang:<10} on {name:<15} {line}");
        }
    }
}

/// Seconds the busy probe's tool takes under `compiler`, start-up taken
/// out: the median of three calls of a million steps less the median of
/// three of one step (each after a `check` that filled its own cache).
fn tool_time(launcher: &Path, scratch: &Path, lang: &Lang, busy: &Path, compiler: &str) -> f64 {
    let cache = scratch.join(format!("cache-busy-{}-{compiler}", lang.code));
    timed(
        launcher,
        scratch,
        &cache,
        &["check", "--compiler", compiler],
        busy,
    );
    let median_of = |steps: &str| {
        let args = ["call", "probe.echo", steps, "--compiler", compiler];
        let runs = (0..3).map(|_| secs(timed(launcher, scratch, &cache, &args, busy).0));
        common::median(runs.collect())
    };
    median_of("1000000") - median_of("1")
}

/// The four components of one language.
struct Built {
    probe: PathBuf,
    other: PathBuf,
    edited: PathBuf,
    /// The probe whose tool loops in the interpreter.
    busy: PathBuf,
}

fn build(lang: &Lang, scratch: &Path) -> Option<Built> {
    let probe = common::polyglot_probe(
        lang.code,
        &scratch.join(format!("probe-{}.wasm", lang.code)),
    )?;
    let other = scratch.join(format!("{}.wasm", lang.other));
    componentize(
        lang.code,
        &common::root().join("examples").join(lang.other),
        &other,
    );
    let edited = variant(lang, scratch, "edited", |text| {
        text.replace(lang.answer, lang.edited)
    });
    let busy = variant(lang, scratch, "busy", |text| {
        text.replace(lang.answer, lang.busy)
    });
    Some(Built {
        probe,
        other,
        edited,
        busy,
    })
}

/// The probe of `lang` with `edit` applied to its app file, built.
fn variant(lang: &Lang, scratch: &Path, name: &str, edit: impl Fn(&str) -> String) -> PathBuf {
    let dir = scratch.join(format!("{name}-{}", lang.code));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let from = common::root()
        .join("examples")
        .join(format!("probe-{}", lang.code))
        .join(lang.file);
    let text = std::fs::read_to_string(&from).expect("read the probe");
    let changed = edit(&text);
    assert_ne!(
        changed,
        text,
        "the edit of {} changed nothing",
        from.display()
    );
    std::fs::write(dir.join(lang.file), changed).expect("write");
    let out = scratch.join(format!("{name}-{}.wasm", lang.code));
    componentize(lang.code, &dir, &out);
    out
}

fn componentize(code: &str, dir: &Path, out: &Path) {
    let status = Command::new(common::root().join("scripts/componentize"))
        .arg(code)
        .arg(dir)
        .arg(out)
        .status()
        .expect("scripts/componentize");
    assert!(
        status.success(),
        "scripts/componentize {code} {}",
        dir.display()
    );
}

/// `pack` ten Python plugins without a cache and with one, then `install`
/// them with one (a fresh cache: the packs' is not reused).
fn ten_plugins(launcher: &Path, scratch: &Path, lang: &Lang) -> (Duration, Duration, Duration) {
    let plugins: Vec<PathBuf> = (0..PLUGINS)
        .map(|i| {
            variant(lang, scratch, &format!("plugin{i}"), |text| {
                text.replace("com.lingxi.test-probe", &format!("com.lingxi.bench-{i}"))
                    .replace(
                        lang.answer,
                        &lang.answer.replace("echo", &format!("echo{i}")),
                    )
            })
        })
        .collect();
    let out = |i: usize, kind: &str| scratch.join(format!("packed-{kind}-{i}"));
    let mut none = Duration::ZERO;
    for (i, plugin) in plugins.iter().enumerate() {
        let mut c = launcher_cmd(launcher, scratch);
        c.arg("pack")
            .arg(plugin)
            .arg("-o")
            .arg(out(i, "none"))
            .arg("--no-cache");
        none += time(c);
    }
    let packs_cache = scratch.join("cache-packs");
    let mut cached = Duration::ZERO;
    for (i, plugin) in plugins.iter().enumerate() {
        let mut c = launcher_cmd(launcher, scratch);
        c.arg("pack").arg(plugin).arg("-o").arg(out(i, "cache"));
        c.arg("--cache-dir").arg(&packs_cache);
        cached += time(c);
    }
    let home = scratch.join("home");
    std::fs::create_dir_all(&home).expect("mkdir");
    let installs_cache = scratch.join("cache-installs");
    let mut installs = Duration::ZERO;
    for plugin in &plugins {
        let mut c = launcher_cmd(launcher, &home);
        c.arg("install").arg(plugin);
        c.arg("--cache-dir").arg(&installs_cache);
        installs += time(c);
    }
    (none, cached, installs)
}

/// The launcher with the environment a user's shell gives it, HOME `home`.
fn launcher_cmd(launcher: &Path, home: &Path) -> Command {
    let mut c = common::lingxi_spawn(launcher, home);
    c.stdin(Stdio::null());
    c
}

/// Runs `cmd` to success; its wall-clock time.
fn time(cmd: Command) -> Duration {
    run(cmd).0
}

/// `lingxi-wasm-run ARGS[0] FILE ARGS[1..] --cache-dir CACHE`, to success.
fn timed(
    launcher: &Path,
    home: &Path,
    cache: &Path,
    args: &[&str],
    file: &Path,
) -> (Duration, Output) {
    let mut c = launcher_cmd(launcher, home);
    c.arg(args[0])
        .arg(file)
        .args(&args[1..])
        .arg("--cache-dir")
        .arg(cache);
    run(c)
}

/// `lingxi-wasm-run VERB FILE --no-cache`, to success.
fn timed_no_cache(launcher: &Path, home: &Path, verb: &str, file: &Path) -> (Duration, Output) {
    let mut c = launcher_cmd(launcher, home);
    c.arg(verb).arg(file).arg("--no-cache");
    run(c)
}

/// Runs `cmd` to success; its wall-clock time and output.
fn run(mut cmd: Command) -> (Duration, Output) {
    let started = Instant::now();
    let out = cmd.output().expect("spawn the launcher");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (took, out)
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn size_mb(p: &Path) -> f64 {
    std::fs::metadata(p).map_or(0.0, |m| m.len() as f64 / 1e6)
}

/// Bytes and files under `dir`.
fn dir_size(dir: &Path) -> (u64, usize) {
    let mut total = (0, 0);
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            let (b, n) = dir_size(&entry.path());
            total = (total.0 + b, total.1 + n);
        } else {
            total = (total.0 + meta.len(), total.1 + 1);
        }
    }
    total
}
