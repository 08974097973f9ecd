//! `learn`: runs a plugin in a recording sandbox, never granting more than
//! the ceiling (the grant flags given; by default what the plugin
//! declares, within the workspace), through the calls a user names or the
//! requests of recorded sessions, and writes the narrowest policy file that
//! covers what they used (`lingxi_wasm_policy::learn`). What the
//! plugin tried beyond the ceiling is reported, with the rule that would
//! allow it, and never added.
//!
//! The requests go through the same JSONL server a LingXi host talks to,
//! in the doc dialect: a snapshot of the workspace, `plugin.initialize`,
//! then each step.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use lingxi_wasm_host::protocol::{method, wire};
use lingxi_wasm_host::{PluginHost, PolicySpec, Runtime, Server, printable};
use lingxi_wasm_policy::learn::{Project, learn as learn_policy};
use lingxi_wasm_policy::under_root;
use serde_json::Value;

use crate::requests;

/// One thing to run while learning.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A tool and its JSON arguments.
    Call { tool: String, arguments: String },
    /// A slash command line: `/name args…`.
    Command(String),
    /// The requests of a recorded session.
    Replay(PathBuf),
}

/// What `learn` was asked.
pub struct Learn<'a> {
    pub plugin: &'a Path,
    /// The grant flags and policy file: the ceiling.
    pub ceiling: Option<PolicySpec>,
    pub steps: Vec<Step>,
    pub output: &'a Path,
    pub force: bool,
}

/// Runs the steps and writes the learned policy.
pub fn learn(tokio: tokio::runtime::Runtime, runtime: &Runtime, args: Learn<'_>) -> Result<()> {
    if args.steps.is_empty() {
        bail!(
            "say what to run while learning: --call TOOL ARGS, --command \"/name args\" or --replay RECORDING (each repeatable)"
        );
    }
    check_output(args.output, args.force)?;
    let ceiling = match (recorded_ceiling(&args.steps)?, args.ceiling) {
        (Some(recorded), flags) => Some(crate::load::over_packed(recorded, flags)),
        (None, flags) => flags,
    };
    let (component, mut ceiling) =
        crate::load::component_or_packed(&tokio, runtime, args.plugin, ceiling)?;
    let root = workspace(&ceiling)?;
    if ceiling
        .workspace
        .as_deref()
        .is_none_or(|w| under_root::parse(w).is_none())
    {
        ceiling.workspace = Some(root.clone());
    }
    let (grant, limits) =
        lingxi_wasm_launcher::secrets::resolve(&ceiling, &component.manifest().id)?;
    let mut host = PluginHost::new(component, grant, limits);
    host.set_validation(!ceiling.no_validate);
    host.set_learning(true);
    let id = host.manifest().id.clone();
    eprintln!("learning {} within {}", printable(&id), root.display());
    for line in host.policy().report(host.grant()) {
        eprintln!("  note: {line}");
    }
    let mut server = Server::with_runtime(host, tokio);
    let taken = crate::call::receipts_of(&mut server, None);
    let mut receipts = Vec::new();
    let mut send = |request: &[u8]| -> Option<Value> {
        let answer = server.handle_bytes(request);
        receipts.extend(taken.try_iter());
        serde_json::from_str(&answer?).ok()
    };
    let setup = [
        (
            method::SNAPSHOT,
            requests::snapshot("learn-snapshot", &root),
        ),
        (method::INITIALIZE, requests::initialize("learn-init")),
    ];
    let mut handshake = Value::Null;
    for (method, request) in setup {
        let answer = send(request.as_bytes());
        if let Some(error) = answer.as_ref().and_then(|a| a["error"].as_str()) {
            bail!("{method:?} failed: {}", printable(error));
        }
        handshake = answer.map(|mut a| a["result"].take()).unwrap_or_default();
    }
    let path_tools = tools_with_paths(&handshake);
    let mut relative = None;
    let (mut ran, mut failed) = (0, 0);
    for (n, step) in args.steps.iter().enumerate() {
        for request in requests(step, n)? {
            let answer = send(&request);
            let (line, ok) = outcome(&request, answer.as_ref());
            eprintln!("  {line}");
            ran += 1;
            failed += usize::from(!ok);
            if let Some(tool) = called_tool(&request).filter(|t| path_tools.contains(t)) {
                relative.get_or_insert(tool);
            }
        }
    }
    if ran > 0 && failed == ran {
        bail!(
            "every request failed ({ran}): there is nothing to learn from, and {} was not written; see why above",
            args.output.display()
        );
    }
    // Path parameters resolve against the workspace root: a narrower
    // folder would change what a relative path means.
    let project = Project {
        root: root.clone(),
        keep_whole: relative.map(|tool: String| {
            format!(
                "the workspace stays whole: tool {} takes paths relative to it",
                printable(&tool)
            )
        }),
    };
    let learned = learn_policy(&ceiling, &receipts, Some(&project))?;
    write(args.output, &learned.text, args.force)?;
    eprintln!(
        "wrote {} (learned from {} call{}, plugin.initialize included)",
        args.output.display(),
        receipts.len(),
        if receipts.len() == 1 { "" } else { "s" }
    );
    if failed > 0 {
        eprintln!(
            "  note: {failed} of {ran} requests failed; the policy covers what they did before they failed"
        );
    }
    if !learned.spec.env.is_empty() {
        eprintln!(
            "  note: WASI hands a plugin its whole environment, so every variable the ceiling gave is in the policy; drop those it does not need"
        );
    }
    for (call, refusal) in &learned.refused {
        eprintln!(
            "  refused (not added): {call}: {}; {}",
            printable(&refusal.what),
            printable(&refusal.allow)
        );
    }
    Ok(())
}

/// The ceiling of a replay is what the recorded sessions were granted (so
/// a learned policy never allows what they were refused), with the grant
/// flags laid over it: every recording that says must say the same.
/// `None`: no recording says (the ceiling is then the flags, else what the
/// plugin declares).
fn recorded_ceiling(steps: &[Step]) -> Result<Option<PolicySpec>> {
    let mut ceiling: Option<(PolicySpec, &Path)> = None;
    for step in steps {
        let Step::Replay(file) = step else { continue };
        let Some(grants) = lingxi_wasm_launcher::record::recorded_grants(file)? else {
            eprintln!(
                "note: {} does not record what its session was granted (a plugin not run by lingxi-wasm-run, or an older recording); give the ceiling with grant flags",
                file.display()
            );
            continue;
        };
        match &ceiling {
            Some((first, _)) if *first == grants => {}
            Some((_, first)) => bail!(
                "{} and {} were recorded under different grants; learn from each apart, or from recordings made under the same grants",
                first.display(),
                file.display()
            ),
            None => ceiling = Some((grants, file)),
        }
    }
    if let Some((_, file)) = &ceiling {
        eprintln!(
            "the ceiling is what {} was granted, with the grant flags given laid over it",
            file.display()
        );
    }
    Ok(ceiling.map(|(grants, _)| grants))
}

/// The project to learn in: `--workspace`, else the current folder,
/// unless that is a place many things share (also when the workspace is
/// a folder under the host's root, `{root}/out`).
fn workspace(ceiling: &PolicySpec) -> Result<PathBuf> {
    match &ceiling.workspace {
        Some(root) if under_root::parse(root).is_none() => Ok(root.clone()),
        _ => crate::call::current_project("learn in"),
    }
}

/// The request lines of one step (`n` numbers their ids).
fn requests(step: &Step, n: usize) -> Result<Vec<Vec<u8>>> {
    const SESSION: &str = "lingxi-wasm-run-learn";
    let id = format!("learn-{}", n + 1);
    let request = match step {
        Step::Call { tool, arguments } => {
            serde_json::from_str::<Value>(arguments).with_context(|| {
                format!("the arguments of {tool} must be JSON, e.g. '{{\"text\":\"hi\"}}'")
            })?;
            requests::tool(&id, SESSION, &id, tool, arguments)
        }
        Step::Command(line) => {
            let mut words = line.split_whitespace();
            let Some(name) = words.next().and_then(|w| w.strip_prefix('/')) else {
                bail!("--command takes a slash command line, e.g. \"/stats src\"; got {line:?}");
            };
            let arguments = words.map(str::to_owned).collect();
            requests::command(&id, SESSION, name, arguments)
        }
        Step::Replay(file) => {
            return lingxi_wasm_launcher::record::requests(file)
                .with_context(|| format!("cannot learn from {}", file.display()));
        }
    };
    Ok(vec![request.into_bytes()])
}

/// A request line decoded as the host decodes it (either dialect).
fn decoded(request: &[u8]) -> Option<wire::Request> {
    let line = std::str::from_utf8(request).ok()?;
    wire::decode_request(line).ok().flatten()
}

/// The tool a `tool.execute` request calls.
fn called_tool(request: &[u8]) -> Option<String> {
    let request = decoded(request)?;
    (request.method == method::TOOL_EXECUTE)
        .then(|| request.params?["toolName"].as_str().map(str::to_owned))
        .flatten()
}

/// The tools of a handshake with path parameters (`x-lingxi-path`).
fn tools_with_paths(handshake: &Value) -> Vec<String> {
    let tools = handshake["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    tools
        .iter()
        .filter(|t| t["inputSchema"].to_string().contains("x-lingxi-path"))
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// One line saying how a request went, and whether it succeeded.
fn outcome(line: &[u8], answer: Option<&Value>) -> (String, bool) {
    let request = decoded(line);
    let params = request
        .as_ref()
        .and_then(|r| r.params.clone())
        .unwrap_or_default();
    let name = params["toolName"]
        .as_str()
        .or(params["commandName"].as_str())
        .map(|n| format!(" {}", printable(n)))
        .unwrap_or_default();
    // A line the host cannot decode (its params, say) still names its method.
    let raw = || {
        serde_json::from_slice::<Value>(line).ok()?["method"]
            .as_str()
            .map(str::to_owned)
    };
    let method = request
        .map(|r| r.method)
        .or_else(raw)
        .unwrap_or_else(|| "?".into());
    let (how, ok) = match answer.map(|a| &a["error"]) {
        None => ("no answer".to_owned(), false),
        Some(Value::String(error)) => (format!("failed: {}", printable(error)), false),
        Some(_) => ("ok".to_owned(), true),
    };
    (format!("{}{name}: {how}", printable(&method)), ok)
}

/// Refuses an output that cannot be written, before anything runs: an
/// existing file (without `force`), a folder, a missing folder.
fn check_output(path: &Path, force: bool) -> Result<()> {
    if path.is_dir() {
        bail!(
            "-o {}: a folder; give the policy file to write",
            path.display()
        );
    }
    if path.symlink_metadata().is_ok() && !force {
        bail!(
            "{} exists; give another file with -o, or --force to replace it",
            path.display()
        );
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!(
            "-o {}: the folder {} does not exist",
            path.display(),
            dir.display()
        );
    }
    Ok(())
}

/// Writes `text` to `path` in one step (a new file renamed into place).
fn write(path: &Path, text: &str, force: bool) -> Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write into {}", dir.display()))?;
    std::io::Write::write_all(&mut file, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    let persisted = if force {
        file.persist(path).map(drop)
    } else {
        file.persist_noclobber(path).map(drop)
    };
    // The temporary file goes with the error's `file`, here, not at exit.
    persisted
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", path.display()))
}
