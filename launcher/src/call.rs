//! `call`: one tool, command or hook of a plugin, without writing JSONL.
//! The requests go through the same JSONL server a LingXi host talks to, in
//! the doc dialect: a snapshot of the current folder, `plugin.initialize`,
//! then the one call.

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use anyhow::{Context, Result, bail};
use lingxi_wasm_host::protocol::method;
use lingxi_wasm_host::{
    PluginHost, PolicySpec, Receipt, ReceiptSink, Runtime, Server, printable, printable_lines,
};
use serde_json::Value;

use crate::requests;

/// What to call.
pub enum Target {
    /// A tool and its JSON arguments (as text).
    Tool { name: String, arguments: String },
    /// A slash command (without the slash) and its arguments.
    Command {
        name: String,
        arguments: Vec<String>,
    },
    /// A hook event and its subject id.
    Hook { event: String, subject: String },
}

impl Target {
    /// From the command line: `TOOL [ARGS_JSON]`, `/COMMAND [ARGS…]`, or
    /// `--hook EVENT [SUBJECT]`.
    pub fn parse(hook: Option<String>, target: Option<String>, rest: Vec<String>) -> Result<Self> {
        if let Some(event) = hook {
            let subject = target.unwrap_or_else(|| "call".into());
            if !rest.is_empty() {
                bail!("--hook {event} takes at most a subject id, got also {rest:?}");
            }
            return Ok(Target::Hook { event, subject });
        }
        let Some(target) = target else {
            bail!(
                "say what to call: a tool (`call PLUGIN TOOL '{{\"x\":1}}'`), a command (`call PLUGIN /name args…`) or a hook (`call PLUGIN --hook sessionStart`)"
            );
        };
        if let Some(name) = target.strip_prefix('/') {
            return Ok(Target::Command {
                name: name.to_owned(),
                arguments: rest,
            });
        }
        let arguments = match rest.as_slice() {
            [] => "{}".to_owned(),
            [json] => {
                serde_json::from_str::<Value>(json).with_context(|| {
                    format!("the arguments of {target} must be JSON, e.g. '{{\"text\":\"hi\"}}'")
                })?;
                json.clone()
            }
            more => bail!(
                "a tool takes one JSON argument (quote it: '{{\"a\":1}}'), got {}",
                more.len()
            ),
        };
        Ok(Target::Tool {
            name: target,
            arguments,
        })
    }

    /// The request line of the call.
    fn request(&self) -> String {
        const SESSION: &str = "lingxi-wasm-run-call";
        match self {
            Target::Tool { name, arguments } => {
                requests::tool("call", SESSION, "call-1", name, arguments)
            }
            Target::Command { name, arguments } => {
                requests::command("call", SESSION, name, arguments.clone())
            }
            Target::Hook { event, subject } => requests::hook("call", event, subject),
        }
    }
}

/// Runs the call; prints the result (or, with `json`, the raw response line)
/// on stdout. An error answer fails with its text.
pub fn call(
    tokio: tokio::runtime::Runtime,
    runtime: &Runtime,
    plugin: &Path,
    flags: Option<PolicySpec>,
    target: Target,
    output: Output<'_>,
) -> Result<()> {
    let Output { json, effects } = output;
    // A packed file brings its grants; flags given now are laid over them
    // (a limit raised or lowered never widens what it was granted).
    let (component, spec) = crate::load::component_or_packed(&tokio, runtime, plugin, flags)?;
    let (grant, limits) = lingxi_wasm_launcher::secrets::resolve(&spec, &component.manifest().id)?;
    // The receipt's file is opened once the flags are known good and
    // before the plugin runs: one that cannot be written fails first.
    let effects = effects.map(ReceiptFile::open).transpose()?;
    let mut host = PluginHost::new(component, grant, limits);
    let root = match &host.grant().workspace {
        Some(root) => root.clone(),
        // A plugin that gets no project files may run anywhere.
        None if host.policy().workspace_access().is_none() => current_folder()?,
        None => current_project("run a plugin with project files in")?,
    };
    host.set_validation(!spec.no_validate);
    lingxi_wasm_launcher::words::say_grants(&host.manifest().id, host.policy(), host.grant());
    let log = lingxi_wasm_launcher::logfmt::receipt_logger(host.manifest().id.clone());
    let mut server = Server::with_runtime(host, tokio);
    let receipts = match (&effects, log) {
        (Some(_), log) => Some(receipts_of(&mut server, log)),
        (None, Some(log)) => {
            server.on_receipt(log);
            None
        }
        (None, None) => None,
    };
    let snapshot = (method::SNAPSHOT, requests::snapshot("snapshot", &root));
    let initialize = (method::INITIALIZE, requests::initialize("init"));
    let mut handshake = Value::Null;
    for (method, setup) in [snapshot, initialize] {
        let answer = answer(&mut server, &setup)?;
        // Only the call's own receipt is written.
        if let Some(receipts) = &receipts {
            receipts.try_iter().for_each(drop);
        }
        if let Some(error) = answer.get("error").and_then(Value::as_str) {
            bail!("{method:?} failed: {}", printable(error));
        }
        handshake = answer["result"].clone();
    }
    if let Target::Hook { event, .. } = &target {
        let supported = names(&handshake["supportedHooks"], None, "");
        if !supported.contains(event) {
            eprintln!(
                "note: the plugin has no handler for {event} (it handles: {}); the event is acknowledged and does nothing",
                joined(&supported)
            );
        }
    }
    let line = server.handle_line(&target.request());
    if let (Some(file), Some(receipts)) = (effects, &receipts) {
        file.write(receipts.try_iter().last())?;
    }
    let line = line.context("the launcher gave no answer")?;
    let answer: Value = serde_json::from_str(&line).context("the answer is not JSON")?;
    if json {
        println!("{line}");
    }
    if let Some(error) = answer.get("error").and_then(Value::as_str) {
        let mut message = printable(error).into_owned();
        if error.contains("not found in plugin") {
            message.push_str(&format!(
                "; its tools: {}; its commands: {}",
                joined(&names(&handshake["tools"], Some("name"), "")),
                joined(&names(&handshake["commands"], Some("name"), "/"))
            ));
        }
        bail!("{message}");
    }
    if !json {
        print_result(&answer["result"]);
    }
    Ok(())
}

/// The current folder, resolved.
fn current_folder() -> Result<PathBuf> {
    std::env::current_dir()
        .and_then(dunce::canonicalize)
        .context("cannot read the current folder")
}

/// The current folder as the project's workspace, unless it is a place
/// many things share (`/`, a folder directly under it, the home folder or
/// above): the plugin would read everything below it. `doing` says what
/// for, in the refusal.
pub(crate) fn current_project(doing: &str) -> Result<PathBuf> {
    let here = current_folder()?;
    if lingxi_wasm_launcher::mcp::shared_place(&here) {
        bail!(
            "the current folder {} is too broad to {doing} (it is /, a folder directly under /, or holds your home folder, so the plugin would read everything below it); run it in the project's folder, or give the project with --workspace DIR",
            here.display()
        );
    }
    Ok(here)
}

/// How `call` answers.
pub struct Output<'a> {
    /// The raw JSON-Lines response instead of the result.
    pub json: bool,
    /// Where to write the call's receipt, as JSON.
    pub effects: Option<&'a Path>,
}

/// The receipts of the calls `server` answers from now on, in order; each
/// is handed to `also` too (the log's sink), if there is one.
pub(crate) fn receipts_of(
    server: &mut Server,
    mut also: Option<ReceiptSink>,
) -> mpsc::Receiver<Receipt> {
    let (sender, receiver) = mpsc::channel();
    server.on_receipt(Box::new(move |id, receipt| {
        if let Some(also) = &mut also {
            also(id, receipt);
        }
        // The receiver lives as long as the server: a send cannot fail.
        let _ = sender.send(receipt.clone());
    }));
    receiver
}

/// The file `call --effects` writes the call's receipt to, opened (and so
/// checked) before the call.
struct ReceiptFile<'a> {
    path: &'a Path,
    file: std::fs::File,
}

impl<'a> ReceiptFile<'a> {
    fn open(path: &'a Path) -> Result<Self> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .with_context(|| {
                format!("cannot write the receipt to {} (--effects)", path.display())
            })?;
        Ok(ReceiptFile { path, file })
    }

    /// Writes the call's receipt (or `null` if the plugin never ran).
    fn write(mut self, receipt: Option<Receipt>) -> Result<()> {
        use std::io::Write;
        let text = serde_json::to_string_pretty(&receipt)? + "\n";
        (self.file.set_len(0))
            .and_then(|()| self.file.write_all(text.as_bytes()))
            .with_context(|| {
                format!(
                    "cannot write the receipt to {} (--effects)",
                    self.path.display()
                )
            })
    }
}

/// The names in a handshake list (of strings, or of objects' `field`),
/// each with `prefix`.
fn names(list: &Value, field: Option<&str>, prefix: &str) -> Vec<String> {
    let items = list.as_array().map(Vec::as_slice).unwrap_or_default();
    items
        .iter()
        .filter_map(|item| match field {
            Some(field) => item.get(field)?.as_str(),
            None => item.as_str(),
        })
        .map(|name| format!("{prefix}{}", printable(name)))
        .collect()
}

/// `names` joined for a message; `(none)` for none.
fn joined(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".into()
    } else {
        names.join(", ")
    }
}

fn answer(server: &mut Server, request: &str) -> Result<Value> {
    let line = server
        .handle_line(request)
        .context("the launcher gave no answer")?;
    Ok(serde_json::from_str(&line)?)
}

/// A tool's text as it is, lines and tabs kept (nothing else that could
/// move the cursor or forge a terminal's output); a command's title and
/// text; nothing for a hook.
fn print_result(result: &Value) {
    match result {
        Value::Null => {}
        Value::String(text) => println!("{}", printable_lines(text)),
        Value::Object(fields) => {
            if let Some(title) = fields.get("title").and_then(Value::as_str) {
                println!("{}", printable(title));
            }
            if let Some(text) = fields.get("text").and_then(Value::as_str) {
                println!("{}", printable_lines(text));
            }
        }
        other => println!("{other}"),
    }
}
