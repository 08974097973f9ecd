//! The compatibility matrix, as data: for each released shape of the WIT
//! (`wit/history/shapes.toml`) and each of today's worlds, the conformance
//! probe written against the WIT directly, with no SDK helper (Rust with
//! wit-bindgen, `tests/guests/compat`; Python with componentize-py,
//! `tests/guests/compat-py`; JavaScript with componentize-js,
//! `tests/guests/compat-js`), built with the pinned toolchains. Each
//! component loads in today's launcher and embedding host, answers the
//! Core transcripts in both dialects, and packs.
//!
//! The same sources build against today's `wit/`, each against the world
//! its shape maps to: a change to `wit/` that breaks a guest the versioning
//! rules protect (`wit/CHANGELOG.md`) fails here, naming the rule.

mod previous_host;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use lingxi_wasm_host::{
    CallOptions, CompileCache, PluginOptions, PluginSet, Runtime, RuntimeConfig, TaskState,
    no_grant,
};
use serde::Deserialize;

use crate::conformance::replay_with;
use crate::packed::{lingxi_spawn, pack_component};
use crate::support::{
    GUEST_BUILD, Lang, Session, launcher, tokio, toolchain, try_cargo_build, workspace_root,
};

/// A released shape, as `wit/history/shapes.toml` lists it.
#[derive(Deserialize)]
struct Shape {
    name: String,
    version: String,
    worlds: std::collections::BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct Shapes {
    shape: Vec<Shape>,
}

/// One build of the matrix: a WIT folder, its version and a world.
#[derive(Clone, Debug)]
struct Case {
    /// The shape (`0.1.0-first`), or `today` for `wit/`.
    shape: String,
    wit: PathBuf,
    version: String,
    world: String,
    /// The world of today's WIT that a guest of this case targets now.
    today: String,
}

impl Case {
    /// Whether the world exports a task runner (today's full world).
    fn tasks(&self) -> bool {
        self.today == lingxi_plugin_wit::WORLD
    }

    fn label(&self) -> String {
        format!("{}-{}", self.shape, self.world)
    }
}

/// Every released shape's worlds, then today's: a frozen shape identical
/// to today's `wit/` is built once, as today's.
fn cases() -> Vec<Case> {
    let wit = workspace_root().join("wit");
    let text = std::fs::read_to_string(wit.join("history/shapes.toml")).unwrap();
    let shapes: Shapes = toml::from_str(&text).unwrap();
    let mut cases = Vec::new();
    for shape in shapes.shape {
        let dir = wit.join("history").join(&shape.name);
        let frozen = std::fs::read_to_string(dir.join("lingxi-plugin.wit")).unwrap();
        if frozen == lingxi_plugin_wit::WIT {
            continue;
        }
        for (world, today) in shape.worlds {
            cases.push(Case {
                shape: shape.name.clone(),
                wit: dir.clone(),
                version: shape.version.clone(),
                world,
                today,
            });
        }
    }
    for world in [lingxi_plugin_wit::BASE_WORLD, lingxi_plugin_wit::WORLD] {
        cases.push(Case {
            shape: "today".into(),
            wit: wit.clone(),
            version: lingxi_plugin_wit::VERSION.into(),
            world: world.into(),
            today: world.into(),
        });
    }
    cases
}

/// The languages of the matrix.
#[derive(Clone, Copy, Debug)]
enum Guest {
    Rust,
    Python,
    JavaScript,
}

/// Builds the probe of `guest` for `case` into `target/compat/`; the error
/// is the toolchain's.
fn build(guest: Guest, case: &Case) -> Result<PathBuf, String> {
    let root = workspace_root();
    let out_dir = root.join("target").join("compat");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join(format!("{}-{guest:?}.wasm", case.label()).to_lowercase());
    let wit = case.wit.to_str().unwrap();
    let sources = root.join("tests").join("guests");
    let output = match guest {
        Guest::Rust => {
            // One build at a time: each case rebuilds the crate in place.
            static ONE: Mutex<()> = Mutex::new(());
            let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
            let tasks = if case.tasks() { "1" } else { "0" };
            let envs = [
                ("LINGXI_COMPAT_WIT", wit),
                ("LINGXI_COMPAT_WORLD", case.world.as_str()),
                ("LINGXI_COMPAT_TASKS", tasks),
            ];
            let args = [&GUEST_BUILD[..], &["-p", "compat"]].concat();
            // A target folder of its own: its component (the probe's id) never joins
            // the guests folder, which examples/agent-host loads whole.
            let target = try_cargo_build("compat-rust", &args, &envs)?;
            let built = target.join("wasm32-wasip2/guest/compat.wasm");
            std::fs::copy(&built, &out).map_err(|e| format!("{}: {e}", built.display()))?;
            return Ok(out);
        }
        Guest::Python => Command::new(toolchain(Lang::Python).join("bin/componentize-py"))
            .args(["-d", wit, "-w", &case.world, "componentize", "-p"])
            .arg(sources.join("compat-py"))
            .args(["app", "-o"])
            .arg(&out)
            .output(),
        Guest::JavaScript => {
            // The imports name the version written against (0.1.0); moving to
            // a later version's WIT, an author changes them: the one edit a
            // JavaScript guest needs (componentize-js matches them exactly).
            let source = std::fs::read_to_string(sources.join("compat-js/app.js")).unwrap();
            let moved = source.replace("@0.1.0';", &format!("@{}';", case.version));
            let app = out.with_extension("js");
            std::fs::write(&app, moved).unwrap();
            Command::new("node")
                .arg(sources.join("compat-js/build.mjs"))
                .arg(toolchain(Lang::JavaScript))
                .arg(&app)
                .arg(&out)
                .arg(wit)
                .arg(&case.world)
                .output()
        }
    };
    let output = output.map_err(|e| format!("cannot run the {guest:?} toolchain: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(out)
}

/// The deadline of a call in the matrix, which checks shapes, not deadlines
/// (isolation.rs and contracts.rs do): a first call starts an instance of an
/// 18 MB interpreter in a debug host, which a loaded 2-core machine can
/// stretch past the 2.5 s default.
const GENEROUS: std::time::Duration = std::time::Duration::from_secs(60);

/// What the launcher, a packed executable and the embedding host do with
/// `component`; the first thing that went wrong.
fn runs(component: &Path, case: &Case) -> Result<(), String> {
    // Compiled once into the tests' compile cache, which every start below
    // reads: sessions started at once would each compile it.
    let warmed = launcher().arg("inspect").arg(component).output();
    match warmed {
        Ok(out) if out.status.success() => {}
        other => return Err(format!("lingxi-wasm-run inspect: {other:?}")),
    }
    let seconds = GENEROUS.as_secs().to_string();
    let timeout = ["--timeout", seconds.as_str()];
    let transcripts = workspace_root().join("tests/conformance");
    let names = [
        "spec7-core-dialect.jsonl",
        "spec7-doc-dialect.jsonl",
        "snapshot-refused-leaves-info-unavailable.jsonl",
    ];
    for name in names {
        replay_with(&transcripts.join(name), |_, args| {
            Session::start(component, &[args, &timeout[..]].concat())
        })
        .map_err(|e| format!("the launcher, {name}: {e}"))?;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = pack_component(dir.path(), component, "probe", &timeout);
    for name in &names[..2] {
        replay_with(&transcripts.join(name), |_, _| {
            Session::spawn(lingxi_spawn(&exe, dir.path()))
        })
        .map_err(|e| format!("packed, {name}: {e}"))?;
    }
    tokio().block_on(embedded(component, case.tasks()))
}

/// The embedding host: a tool, a command without a snapshot, and a task of
/// the task runner when the world has one.
async fn embedded(component: &Path, tasks: bool) -> Result<(), String> {
    // The tests' compile cache, which `runs` filled: a Python or JavaScript
    // component takes many seconds to compile in a debug build.
    let cache = CompileCache::new(workspace_root().join("target").join("e2e-cache"));
    let runtime = Runtime::with_config(RuntimeConfig::pooled(4)).map_err(|e| e.to_string())?;
    let runtime = runtime.with_cache(Some(cache));
    let mut set = PluginSet::new(runtime);
    (set.load_file(component, PluginOptions::grant(no_grant()))
        .await)
        .map_err(|e| format!("the embedding host: {e}"))?;
    let session = set.session("s", None).map_err(|e| e.to_string())?;
    let echo = session
        .call_tool("probe.echo", "hi", CallOptions::within(GENEROUS))
        .await;
    if echo.as_deref().ok() != Some("echo:hi") {
        return Err(format!("the embedding host, probe.echo: {echo:?}"));
    }
    let command = session
        .run_command("PB", vec![], CallOptions::within(GENEROUS))
        .await;
    let unavailable = "Plugin runtime info unavailable: workspace (no snapshot received)";
    if !matches!(&command, Err(e) if e.to_string().contains(unavailable)) {
        return Err(format!("the embedding host, command pb: {command:?}"));
    }
    let started = session.start_task("com.lingxi.test-probe", "echo", "done");
    match (tasks, started) {
        (true, Ok(mut task)) => {
            let waited = tokio::time::timeout(GENEROUS, task.wait());
            match waited.await {
                Ok(TaskState::Succeeded(text)) if text == "done" => {}
                other => return Err(format!("the embedding host, task echo: {other:?}")),
            }
        }
        (false, Err(_)) => {}
        (_, other) => {
            return Err(format!(
                "the embedding host, task echo (the world {} a task runner): {other:?}",
                if tasks { "exports" } else { "has no" }
            ));
        }
    }
    session.close().await;
    Ok(())
}

/// Builds and runs every case of `guest`; fails listing each case that
/// did not build or run, with the rule a build failure breaks.
fn matrix(guest: Guest) {
    let mut failures = Vec::new();
    for case in cases() {
        let what = format!(
            "the {guest:?} probe written against world {} of {} ({})",
            case.world,
            case.shape,
            case.wit.display()
        );
        match build(guest, &case) {
            Err(e) if case.shape == "today" => failures.push(format!(
                "{what} no longer builds: today's world {} lost the shape plugins of earlier versions target (a world keeps its shape in a version line, wit/CHANGELOG.md rule 3: give the new shape a new world, or start a new line): {e}",
                case.world
            )),
            Err(e) => failures.push(format!("{what} does not build: {e}")),
            Ok(component) => {
                if let Err(e) = runs(&component, &case) {
                    failures.push(format!("{what}: {e}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

#[test]
fn rust_guests_of_every_released_shape_build_and_run() {
    matrix(Guest::Rust);
}

#[test]
fn python_guests_of_every_released_shape_build_and_run() {
    matrix(Guest::Python);
}

#[test]
fn javascript_guests_of_every_released_shape_build_and_run() {
    matrix(Guest::JavaScript);
}

/// A copy of today's WIT in `dir/<version>/` with its version set to `version` and
/// `host-info` given `added` (a function line, or nothing): a later
/// release's WIT.
fn later_wit(dir: &Path, version: &str, added: &str) -> Case {
    let text = lingxi_plugin_wit::WIT
        .replacen(
            &format!("package lingxi:plugin@{};", lingxi_plugin_wit::VERSION),
            &format!("package lingxi:plugin@{version};"),
            1,
        )
        .replacen(
            "    data-dir: func() -> option<string>;",
            &format!("    data-dir: func() -> option<string>;\n{added}"),
            1,
        );
    let dir = dir.join(version);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lingxi-plugin.wit"), text).unwrap();
    Case {
        shape: format!("later-{version}"),
        wit: dir,
        version: version.into(),
        world: lingxi_plugin_wit::BASE_WORLD.into(),
        today: lingxi_plugin_wit::BASE_WORLD.into(),
    }
}

/// A component of a WIT this host does not link is refused with the
/// version it names and both ways out: another version line, or a later
/// version of the line whose addition it imports (a Python component
/// imports every function of its world).
#[test]
fn components_of_a_version_this_host_does_not_link_are_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            Guest::Rust,
            later_wit(dir.path(), "0.2.0", ""),
            "was built against lingxi:plugin 0.2.0, a version line this host does not link: this host links lingxi:plugin 0.1.x",
        ),
        (
            Guest::Python,
            later_wit(dir.path(), "0.1.9", "    hostname: func() -> string;"),
            "was built against lingxi:plugin 0.1.9, later than this host's 0.1.2, and it uses what that lacks (component imports instance `lingxi:plugin/host-info@0.1.9`",
        ),
    ];
    for (guest, case, said) in cases {
        let component = build(guest, &case).unwrap_or_else(|e| panic!("{guest:?}: {e}"));
        let out = launcher().arg("inspect").arg(&component).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert!(stderr.contains(said), "{guest:?}: {stderr}");
        assert!(
            stderr.contains("update lingxi-wasm-run to a version that links it, or build the plugin against wit/lingxi-plugin.wit 0.1.2"),
            "{stderr}"
        );
    }
}
