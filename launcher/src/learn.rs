//! `learn`: runs a plugin in a recording sandbox, never granting more than
//! the ceiling (the grant flags given; by default what the plugin
//! declares, within the workspace), through the calls a user names or the
//! requests of recorded sessions, and writes the narrowest policy file that
//! covers what they used (`lingxi_wasm_host::policy::learn`). What the
//! plugin tried beyond the ceiling is reported, with the rule that would
//! allow it, and never added.
//!
//! The requests go through the same JSONL server a LingXi host talks to,
//! in the doc dialect: a snapshot of the workspace, `plugin.initialize`,
//! then each step.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use lingxi_wasm_host::limits::MAX_LEARN_ENTRIES;
use lingxi_wasm_host::policy::learn::learn as learn_policy;
use lingxi_wasm_host::{PluginHost, PolicySpec, ReceiptSlot, Runtime, Server, pack, printable};
use serde_json::{Value, json};

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
    if args.output.exists() && !args.force {
        bail!(
            "{} exists; give another file with -o, or --force to replace it",
            args.output.display()
        );
    }
    let (component, mut ceiling) = match pack::read(args.plugin)? {
        Some(packed) => {
            let name = packed.header.plugin_id.clone();
            let component = tokio.block_on(runtime.load_packed(&packed, &name))?;
            (
                component,
                crate::call::over_packed(packed.header.policy, args.ceiling),
            )
        }
        None => (
            tokio.block_on(runtime.load_file(args.plugin))?,
            args.ceiling.unwrap_or_default(),
        ),
    };
    let root = workspace(&ceiling)?;
    ceiling.workspace = Some(root.clone());
    let (grant, limits) = ceiling.resolve(|key| std::env::var(key).ok())?;
    let mut host = PluginHost::new(component, grant, limits);
    host.set_validation(!ceiling.no_validate);
    host.set_learning(true)
        .context("cannot make the learning trap's empty folder")?;
    let slot = ReceiptSlot::with_capacity(MAX_LEARN_ENTRIES);
    host.keep_receipts(Some(slot.clone()));
    let id = host.manifest().id.clone();
    eprintln!("learning {} within {}", printable(&id), root.display());
    for line in host.policy().report(host.grant()) {
        eprintln!("  note: {line}");
    }
    let mut server = Server::with_runtime(host, tokio);
    let mut receipts = Vec::new();
    let mut send = |request: &[u8]| -> Option<Value> {
        let answer = server.handle_bytes(request);
        receipts.extend(slot.take());
        serde_json::from_str(&answer?).ok()
    };
    let setup = [
        json!({"id": "learn-snapshot", "method": "host.snapshot", "params": lingxi_wasm_launcher::workspace::snapshot(&root)}),
        json!({"id": "learn-init", "method": "plugin.initialize", "params": {"hostIPCVersion": 1, "coreVersion": env!("CARGO_PKG_VERSION")}}),
    ];
    for request in setup {
        let answer = send(request.to_string().as_bytes());
        if let Some(error) = answer.as_ref().and_then(|a| a["error"].as_str()) {
            bail!("{} failed: {}", request["method"], printable(error));
        }
    }
    for (n, step) in args.steps.iter().enumerate() {
        for request in requests(step, n)? {
            let answer = send(&request);
            eprintln!("  {}", outcome(&request, answer.as_ref()));
        }
    }
    let learned = learn_policy(&ceiling, &receipts)?;
    write(args.output, &learned.text, args.force)?;
    eprintln!(
        "wrote {} ({} calls learned from)",
        args.output.display(),
        receipts.len()
    );
    for (call, refusal) in &learned.refused {
        eprintln!(
            "  refused (not added): {call}: {}; {}",
            printable(&refusal.what),
            printable(&refusal.allow)
        );
    }
    Ok(())
}

/// The workspace of the ceiling: `--workspace`, else the current folder,
/// unless that is a place many things share.
fn workspace(ceiling: &PolicySpec) -> Result<PathBuf> {
    if let Some(root) = &ceiling.workspace {
        return Ok(root.clone());
    }
    let here = std::env::current_dir()
        .and_then(dunce::canonicalize)
        .context("cannot read the current folder")?;
    if lingxi_wasm_launcher::mcp::shared_place(&here) {
        bail!(
            "the current folder {} is too broad to learn in (it is shared by many things); give the project with --workspace DIR",
            here.display()
        );
    }
    Ok(here)
}

/// The request lines of one step (`n` numbers their ids).
fn requests(step: &Step, n: usize) -> Result<Vec<Vec<u8>>> {
    let id = format!("learn-{}", n + 1);
    let request = match step {
        Step::Call { tool, arguments } => {
            serde_json::from_str::<Value>(arguments).with_context(|| {
                format!("the arguments of {tool} must be JSON, e.g. '{{\"text\":\"hi\"}}'")
            })?;
            json!({"id": id, "method": "tool.execute", "params": {
                "toolName": tool, "arguments": arguments,
                "sessionID": "lingxi-wasm-run-learn", "toolCallID": id}})
        }
        Step::Command(line) => {
            let mut words = line.split_whitespace();
            let Some(name) = words.next().and_then(|w| w.strip_prefix('/')) else {
                bail!("--command takes a slash command line, e.g. \"/stats src\"; got {line:?}");
            };
            json!({"id": id, "method": "command.execute", "params": {
                "commandName": name, "arguments": words.collect::<Vec<_>>(),
                "sessionID": "lingxi-wasm-run-learn"}})
        }
        Step::Replay(file) => {
            return lingxi_wasm_launcher::record::requests(file)
                .with_context(|| format!("cannot learn from {}", file.display()));
        }
    };
    Ok(vec![request.to_string().into_bytes()])
}

/// One line saying how a request went.
fn outcome(request: &[u8], answer: Option<&Value>) -> String {
    let request: Value = serde_json::from_slice(request).unwrap_or_default();
    let params = &request["params"];
    let name = params["toolName"]
        .as_str()
        .or(params["commandName"].as_str())
        .map(|n| format!(" {}", printable(n)))
        .unwrap_or_default();
    let method = request["method"].as_str().unwrap_or("?");
    let how = match answer.map(|a| &a["error"]) {
        None => "no answer".to_owned(),
        Some(Value::String(error)) => format!("failed: {}", printable(error)),
        Some(_) => "ok".to_owned(),
    };
    format!("{}{name}: {how}", printable(method))
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
    persisted.with_context(|| format!("cannot write {}", path.display()))
}
