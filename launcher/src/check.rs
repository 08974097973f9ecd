//! `check FILE`: the package validator an author runs before publishing
//! and a host runs before installing. In order: is it a component, does it
//! export `lingxi:plugin/plugin`, does this host provide its imports, is
//! its manifest well-formed, does its handshake hold together (names,
//! aliases, IPC version, hooks), is every tool schema valid and every
//! annotation well-formed, do its capabilities match its imports; and a
//! smoke exchange (snapshot, initialize, deactivate) with nothing granted.
//! Nothing the plugin says reaches the terminal unfiltered.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use lingxi_plugin_wit::plugin_export;
use lingxi_wasm_host::contract::{Contracts, ProblemKind, Severity, ToolContract};
use lingxi_wasm_host::protocol::dto::SnapshotDto;
use lingxi_wasm_host::shape::ComponentShape;
use lingxi_wasm_host::types::{Capability, InitializeRequest, Manifest};
use lingxi_wasm_host::{
    Limits, PluginHost, Runtime, RuntimeConfig, convert, no_grant, pack, printable,
    read_plugin_file,
};
use serde_json::{Value, json};

/// One finding: the rule, how bad, what to do.
struct Finding {
    rule: &'static str,
    severity: Severity,
    message: String,
}

/// What `check` learnt about the package.
#[derive(Default)]
struct Report {
    findings: Vec<Finding>,
    manifest: Option<Manifest>,
    size: usize,
    compile_ms: Option<u128>,
    /// Which compiler made the code (`--compiler`).
    compiler: Option<&'static str>,
    memory: Option<usize>,
    tools: Vec<Value>,
    /// `name: contract` lines.
    tool_lines: Vec<String>,
}

impl Report {
    fn error(&mut self, rule: &'static str, message: impl Into<String>) {
        self.push(rule, Severity::Error, message);
    }
    fn warning(&mut self, rule: &'static str, message: impl Into<String>) {
        self.push(rule, Severity::Warning, message);
    }
    fn push(&mut self, rule: &'static str, severity: Severity, message: impl Into<String>) {
        let message = printable(&message.into()).into_owned();
        self.findings.push(Finding {
            rule,
            severity,
            message,
        });
    }
    fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    }
}

/// The report listed errors: the process exits with status 1 (the report
/// already said why).
#[derive(Debug, thiserror::Error)]
#[error("the check found errors")]
pub struct Failed;

/// Runs every check on `file` and prints the report; fails with [`Failed`]
/// when there is an error (exit status 1), so 0 means none.
/// The engine is built as `settings` say; the code compiled for the check
/// is kept in their compile cache for the next load.
pub fn check(
    tokio: &tokio::runtime::Runtime,
    file: &Path,
    json: bool,
    settings: RuntimeConfig,
) -> Result<()> {
    let mut report = Report::default();
    match read(file) {
        Ok(bytes) => {
            report.size = bytes.len();
            let name = file.display().to_string();
            tokio.block_on(inspect(&bytes, &name, settings, &mut report));
        }
        Err(e) => report.error("file", format!("{e:#}")),
    }
    if json {
        println!("{}", as_json(file, &report));
    } else {
        print!("{}", as_text(file, &report));
    }
    if report.count(Severity::Error) == 0 {
        Ok(())
    } else {
        Err(Failed.into())
    }
}

/// Largest file `check` reads.
const MAX_FILE_BYTES: u64 = 1 << 30;

/// The component in `file` (a packed file's own), read only if `file` is a
/// regular file of at most [`MAX_FILE_BYTES`] (never a FIFO or a device).
fn read(file: &Path) -> Result<Vec<u8>> {
    let meta =
        std::fs::metadata(file).with_context(|| format!("cannot read {}", file.display()))?;
    if !meta.is_file() {
        anyhow::bail!(
            "{} is not a regular file; give the path of a component (.wasm) or a packed plugin",
            file.display()
        );
    }
    if meta.len() > MAX_FILE_BYTES {
        anyhow::bail!(
            "{} is {} bytes, more than the {MAX_FILE_BYTES} a plugin may be",
            file.display(),
            meta.len()
        );
    }
    Ok(match pack::read(file)? {
        Some(packed) => packed.component().to_vec(),
        None => read_plugin_file(file)?,
    })
}

async fn inspect(bytes: &[u8], name: &str, settings: RuntimeConfig, report: &mut Report) {
    let compiler = settings.compiler.name();
    let runtime = match Runtime::with_config(settings) {
        Ok(runtime) => runtime,
        Err(e) => return report.error("engine", e.to_string()),
    };
    let (shape, linked) = match runtime.shape(bytes, name) {
        Ok(found) => found,
        Err(e) => return report.error("component", e.to_string()),
    };
    report.compile_ms = Some(shape.compile_time.as_millis());
    report.compiler = Some(compiler);
    if !shape.is_plugin() {
        return report.error("world", not_a_plugin(&shape));
    }
    let unprovided = shape.unprovided();
    for import in &unprovided {
        report.error("imports", format!(
            "it imports {import}, which this host does not provide; plugins may import only WASI 0.2 (cli, clocks, filesystem, io, random, sockets, outgoing http) and lingxi:plugin interfaces: remove the dependency that brings it in"
        ));
    }
    if !unprovided.is_empty() {
        return;
    }
    let component = match linked.load(&runtime, name).await {
        Ok(component) => component,
        Err(e) => return report.error("manifest", e.to_string()),
    };
    let manifest = component.manifest().clone();
    check_manifest(&manifest, report);
    check_capabilities(&manifest, &shape, made_by_componentize_py(bytes), report);
    report.manifest = Some(manifest);
    smoke(
        PluginHost::new(component, no_grant(), Limits::default()),
        report,
    )
    .await;
}

fn not_a_plugin(shape: &ComponentShape) -> String {
    let other = shape
        .exports
        .iter()
        .find(|e| e.starts_with("lingxi:plugin/plugin"));
    if let Some(other) = other {
        let why = match lingxi_plugin_wit::version_of(other) {
            Some(_) => "which this host does not link",
            None => "without a version, which no host links",
        };
        return format!(
            "it exports {other}, {why} (it links {}): update lingxi-wasm-run to a version that links it, or build the plugin against wit/lingxi-plugin.wit {} (its package line names the version; this version's SDKs build against it)",
            plugin_export(),
            lingxi_plugin_wit::VERSION
        );
    }
    let exports = if shape.exports.is_empty() {
        "nothing".to_owned()
    } else {
        shape.exports.join(", ")
    };
    let command = shape.exports.iter().any(|e| e.starts_with("wasi:cli/run@"));
    let what = if command {
        " (it is a command, a program with a main function)"
    } else {
        ""
    };
    format!(
        "it does not export {}; it exports {exports}{what}: build it with a LingXi SDK (Rust: a cdylib that calls lingxi-plugin-sdk's export_plugin!; Python: lingxi_plugin.export; JavaScript: definePlugin), or against world lingxi-plugin-base of wit/lingxi-plugin.wit",
        plugin_export()
    )
}

fn check_manifest(m: &Manifest, report: &mut Report) {
    if !lingxi_wasm_policy::storage::is_safe_id(&m.id) {
        report.error("manifest.id", format!(
            "id {:?} cannot be installed: ids must be 1-64 characters of a-z, 0-9, '.' and '-', start and end with a letter or digit, and contain no '..' or '--' (e.g. com.example.my-plugin)",
            m.id
        ));
    }
    if let Err(e) = semver::Version::parse(&m.version) {
        report.error(
            "manifest.version",
            format!(
                "version {:?} is not a semantic version ({e}); use MAJOR.MINOR.PATCH, e.g. 0.1.0",
                m.version
            ),
        );
    }
    if m.name.trim().is_empty() {
        report.error(
            "manifest.name",
            "name is empty; give the plugin a name people read",
        );
    }
    if m.description.trim().is_empty() {
        report.error(
            "manifest.description",
            "description is empty; say in one line what the plugin does",
        );
    }
}

/// Whether componentize-py made the component: it links its runtime
/// library, `libcomponentize_py_runtime.so`, by that name. Only a warning
/// hangs on it: a component that fakes it hides its own warning.
fn made_by_componentize_py(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, b"libcomponentize_py_runtime.so").is_some()
}

/// `python`: componentize-py made it, and its Python imports sockets
/// whether the plugin opens any or not, so that import alone says nothing.
fn check_capabilities(m: &Manifest, shape: &ComponentShape, python: bool, report: &mut Report) {
    let declares = |c: Capability| m.capabilities.contains(&c);
    let sockets = shape.imports_package("wasi:sockets");
    let network = sockets || shape.imports_package("wasi:http");
    if sockets && !python && !declares(Capability::NetworkAccess) {
        report.warning("capabilities", "it imports wasi:sockets but does not declare networkAccess: every connection it tries will be denied; declare networkAccess, or remove the code that opens sockets");
    }
    if shape.imports_package("wasi:http") && !declares(Capability::NetworkAccess) {
        report.warning("capabilities", "it imports wasi:http but does not declare networkAccess: every request it sends will be denied; declare networkAccess, or remove the code that sends HTTP requests (fetch)");
    }
    if !network && declares(Capability::NetworkAccess) {
        report.warning("capabilities", "it declares networkAccess but imports neither wasi:sockets nor wasi:http: it cannot use the network; remove networkAccess so users are not asked to grant it");
    }
    if declares(Capability::ProcessExecution) {
        report.warning("capabilities", "it declares processExecution, which a WebAssembly plugin can never have (WASI has no processes): remove it");
    }
}

/// Snapshot, initialize, deactivate with nothing granted; then the
/// handshake's contracts.
async fn smoke(mut host: PluginHost, report: &mut Report) {
    let snapshot = json!({"observedAt": 0, "ipcVersion": 1,
        "workspace": {"rootPath": "/", "isGitRepository": false, "coreVersion": "1.1.0"}});
    match serde_json::from_value::<SnapshotDto>(snapshot) {
        Ok(dto) => {
            if let Err(e) = host.apply_snapshot(convert::snapshot(dto)) {
                report.error("smoke", format!("host.snapshot failed: {e}"));
            }
        }
        Err(e) => report.error("smoke", format!("cannot build the smoke snapshot: {e}")),
    }
    let request = InitializeRequest {
        host_ipc_version: Some(1),
        core_version: Some("1.1.0".into()),
    };
    let started = Instant::now();
    let handshake = match host.initialize(request).await {
        Ok(handshake) => handshake,
        Err(e) => return report.error("smoke", format!("plugin.initialize failed: {e}")),
    };
    let took = started.elapsed();
    report.memory = host.memory_bytes();
    if let Err(e) = host.deactivate().await {
        report.error("smoke", format!("deactivate failed: {e}"));
    }
    tracing::debug!("plugin.initialize took {took:?}");
    let contracts = match host.contracts() {
        Some(contracts) => contracts.clone(),
        None => std::sync::Arc::new(Contracts::compile(&handshake)),
    };
    for problem in contracts.problems() {
        let rule = match problem.kind {
            ProblemKind::Handshake => "handshake",
            ProblemKind::Schema => "schema",
            ProblemKind::Annotation => "annotation",
        };
        report.push(rule, problem.severity, problem.to_string());
    }
    for tool in &handshake.tools {
        let Some(contract) = contracts.tool(&tool.name) else {
            continue;
        };
        let line = printable(&format!("{}: {}", tool.name, describe(contract, true))).into_owned();
        report.tool_lines.push(line);
        let mut entry = contract.annotations().to_json();
        if let Value::Object(map) = &mut entry {
            map.shift_insert(0, "validated".into(), json!(contract.validates()));
            map.shift_insert(0, "name".into(), json!(printable(&tool.name)));
        }
        report.tools.push(entry);
    }
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn as_json(file: &Path, r: &Report) -> Value {
    json!({
        "file": file.display().to_string(),
        "plugin": r.manifest.as_ref().map(|m| json!({
            "id": printable(&m.id), "version": printable(&m.version), "name": printable(&m.name),
        })),
        "sizeBytes": r.size,
        "compileMs": r.compile_ms,
        "compiler": r.compiler,
        "memoryBytes": r.memory,
        "tools": r.tools,
        "diagnostics": r.findings.iter().map(|f| json!({
            "rule": f.rule, "severity": severity(f.severity), "message": f.message,
        })).collect::<Vec<_>>(),
        "errors": r.count(Severity::Error),
        "warnings": r.count(Severity::Warning),
        "ok": r.count(Severity::Error) == 0,
    })
}

fn as_text(file: &Path, r: &Report) -> String {
    let mut out = format!("check    {}\n", printable(&file.display().to_string()));
    if let Some(m) = &r.manifest {
        out += &format!("plugin   {} {}\n", printable(&m.id), printable(&m.version));
    }
    let mut size = format!("size     {} bytes", r.size);
    if let Some(ms) = r.compile_ms {
        size += &format!(", compiled in {ms} ms");
        if let Some(compiler) = r.compiler.filter(|c| *c != "cranelift") {
            size += &format!(" by {compiler}");
        }
    }
    if let Some(bytes) = r.memory {
        size += &format!(
            ", {:.1} MiB of memory after initialize",
            bytes as f64 / 1048576.0
        );
    }
    if r.size > 0 {
        out += &size;
        out.push('\n');
    }
    for line in &r.tool_lines {
        out += &format!("tool     {line}\n");
    }
    for f in &r.findings {
        out += &format!("{}[{}]: {}\n", severity(f.severity), f.rule, f.message);
    }
    let (errors, warnings) = (r.count(Severity::Error), r.count(Severity::Warning));
    out += &if errors == 0 {
        format!("ok: no errors, {warnings} warning(s)\n")
    } else {
        format!("failed: {errors} error(s), {warnings} warning(s)\n")
    };
    out
}

/// A tool's contract in words: `arguments validated; paths /path (read);
/// timeout 300 ms; requires approval; concurrency-safe`. `validate` is
/// whether the host validates arguments at all (`--no-validate` turns it
/// off).
pub fn describe(contract: &ToolContract, validate: bool) -> String {
    let a = contract.annotations();
    let mut parts = vec![match (validate, contract.validates()) {
        (false, _) => format!(
            "arguments not validated ({})",
            lingxi_wasm_host::Setting::NoValidate
        ),
        (true, true) => "arguments validated".to_owned(),
        (true, false) => "arguments not validated".to_owned(),
    }];
    let paths: Vec<String> = a
        .paths
        .iter()
        .map(|p| format!("{} ({})", p.pointer(), p.access))
        .collect();
    if !paths.is_empty() {
        parts.push(format!("paths {}", paths.join(", ")));
    }
    if let Some(timeout) = a.timeout {
        parts.push(format!("timeout {} ms", timeout.as_millis()));
    }
    if a.requires_approval {
        parts.push("requires approval".into());
    }
    if a.concurrency_safe {
        parts.push("concurrency-safe".into());
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exporting(exports: &[&str]) -> ComponentShape {
        ComponentShape {
            imports: vec![],
            exports: exports.iter().map(|e| (*e).to_owned()).collect(),
            compile_time: std::time::Duration::ZERO,
        }
    }

    /// Every 0.1 version is a plugin; another line is named, with what
    /// this host links.
    #[test]
    fn the_plugin_export_is_matched_by_version_line() {
        for version in ["0.1.0", "0.1.1", "0.1.4"] {
            assert!(exporting(&[&format!("lingxi:plugin/plugin@{version}")]).is_plugin());
        }
        let other = exporting(&["lingxi:plugin/plugin@0.2.0"]);
        assert!(!other.is_plugin());
        assert_eq!(
            not_a_plugin(&other),
            "it exports lingxi:plugin/plugin@0.2.0, which this host does not link (it links lingxi:plugin/plugin@0.1.x): update lingxi-wasm-run to a version that links it, or build the plugin against wit/lingxi-plugin.wit 0.1.2 (its package line names the version; this version's SDKs build against it)"
        );
        let unversioned = not_a_plugin(&exporting(&["lingxi:plugin/plugin"]));
        assert!(
            unversioned.contains("without a version, which no host links"),
            "{unversioned}"
        );
        assert!(exporting(&["lingxi:plugin/task-runner@0.1.0"]).runs_tasks());
    }
}
