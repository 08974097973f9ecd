//! Replays the attack cases in `tests/attacks/*.toml` against the real
//! launcher: the attacks that are one tool call each, as data.
//!
//! A file is a list of `[[case]]` tables with these keys (any other key, or
//! a missing one, fails the run):
//! - `name`: the case's name in the threat model (unique across the files);
//! - `attacks`: what it attacks, one line;
//! - `args`: the launcher flags the testbed guest starts with;
//! - `tool`, `input`: the `tool.execute` call;
//! - exactly one of `allowed = "result"` (or `allowed = true`: any result)
//!   and `denied = "text the error must contain"` (the rule, capability or
//!   limit that refused it: any other failure does not count);
//! - optional checks after the call: `absent = [path, …]` (nothing may be
//!   there), `contents = { path = text, … }` (the file holds exactly that
//!   text), and after the launcher exits at EOF `stderr = [text, …]` (each
//!   must appear on its stderr) and `stderr_shorter_than = bytes`.
//!
//! Strings may name the case's scratch tree (`{ws}`, `{top}`: see
//! [`Tree`]), the port of a loopback TCP server the runner starts for the
//! case (`{pong_port}`, see [`pong_server`]), the port of a loopback UDP
//! socket it binds (`{udp_port}`) and the ports next to them
//! (`{pong_port+1}`, `{udp_port+1}`); any other `{name}` fails the case.
//!
//! Every case starts its own launcher on its own tree, sends the workspace
//! snapshot, makes the call and checks that the next request is still
//! answered ([`attempt`]). `ATTACK_CASE=<text>` runs only the cases whose
//! name contains it.

use std::collections::{BTreeMap, BTreeSet};
use std::net::UdpSocket;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;
use serde_json::Value;

use super::{Tree, attempt, pong_server, read_back, start};
use crate::support::workspace_root;

/// How many cases run at once.
const POOL: usize = 2;

/// One file of `tests/attacks/`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    case: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    attacks: String,
    args: Vec<String>,
    tool: String,
    input: String,
    allowed: Option<Allowed>,
    denied: Option<String>,
    #[serde(default)]
    absent: Vec<String>,
    #[serde(default)]
    contents: BTreeMap<String, String>,
    #[serde(default)]
    stderr: Vec<String>,
    stderr_shorter_than: Option<usize>,
}

/// `allowed = "result"` or `allowed = true`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Allowed {
    Any(bool),
    Result(String),
}

impl Case {
    /// The case's own mistakes, which no run could pass.
    fn check(&self) -> Result<(), String> {
        if self.attacks.trim().is_empty() || self.attacks.contains('\n') {
            return Err("`attacks` must be one line".into());
        }
        match (&self.allowed, &self.denied) {
            (Some(_), Some(_)) => Err("both `allowed` and `denied`".into()),
            (None, None) => Err("neither `allowed` nor `denied`".into()),
            (Some(Allowed::Any(false)), None) => {
                Err("`allowed = false`: say what denies it with `denied`".into())
            }
            _ => Ok(()),
        }
    }

    /// Every string the placeholders may appear in.
    fn texts(&self) -> impl Iterator<Item = &str> {
        let contents = self.contents.iter().flat_map(|(k, v)| [k, v]);
        self.args
            .iter()
            .chain([&self.input])
            .chain(&self.absent)
            .chain(contents)
            .chain(&self.stderr)
            .map(String::as_str)
    }

    fn mentions(&self, placeholder: &str) -> bool {
        self.texts().any(|t| t.contains(placeholder))
    }
}

/// The values of the placeholders for one run of a case.
struct Places {
    vars: Vec<(&'static str, String)>,
}

impl Places {
    fn fill(&self, text: &str) -> Result<String, String> {
        let mut out = text.to_owned();
        for (name, value) in &self.vars {
            out = out.replace(name, value);
        }
        if let Some(unknown) = placeholder_in(&out) {
            return Err(format!("unknown placeholder {unknown} in {text:?}"));
        }
        Ok(out)
    }
}

/// The first `{name}` left in `text` (letters, digits, `_`, `+`).
fn placeholder_in(text: &str) -> Option<&str> {
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '+'))
            .unwrap_or(after.len());
        if len > 0 && after[len..].starts_with('}') {
            return Some(&rest[open..open + len + 2]);
        }
        rest = after;
    }
    None
}

/// Runs one case: `Err` says what it got instead.
fn run(case: &Case) -> Result<(), String> {
    let tree = Tree::new();
    let mut vars = vec![
        ("{ws}", tree.ws.to_string_lossy().into_owned()),
        ("{top}", tree.top.to_string_lossy().into_owned()),
    ];
    if case.mentions("{pong_port") {
        let port = pong_server();
        vars.push(("{pong_port}", port.to_string()));
        vars.push(("{pong_port+1}", port.wrapping_add(1).to_string()));
    }
    // Bound for as long as the case runs.
    let _udp_sink = if case.mentions("{udp_port") {
        let sink = UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("udp sink: {e}"))?;
        let port = sink.local_addr().map_err(|e| e.to_string())?.port();
        vars.push(("{udp_port}", port.to_string()));
        vars.push(("{udp_port+1}", port.wrapping_add(1).to_string()));
        Some(sink)
    } else {
        None
    };
    let places = Places { vars };
    let fill_all = |texts: &[String]| -> Result<Vec<String>, String> {
        texts.iter().map(|t| places.fill(t)).collect()
    };
    let args = fill_all(&case.args)?;
    let input = places.fill(&case.input)?;
    let absent = fill_all(&case.absent)?;
    let contents: Vec<(String, String)> = case
        .contents
        .iter()
        .map(|(path, text)| Ok((places.fill(path)?, places.fill(text)?)))
        .collect::<Result<_, String>>()?;
    let stderr_lines = fill_all(&case.stderr)?;

    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut session = start(&tree, &args);
    let r = attempt(&mut session, &case.tool, &input);
    let denied = case.denied.as_deref().map(|d| places.fill(d)).transpose()?;
    expect(case, denied.as_deref(), &r)?;
    for path in &absent {
        if Path::new(path).symlink_metadata().is_ok() {
            return Err(format!("{path} exists after the call"));
        }
    }
    for (path, text) in &contents {
        let found = read_back(&PathBuf::from(path));
        if found.as_deref() != Some(text.as_str()) {
            return Err(format!("{path} holds {found:?}, not {text:?}"));
        }
    }
    if stderr_lines.is_empty() && case.stderr_shorter_than.is_none() {
        return Ok(());
    }
    let (_, stderr) = session.finish();
    for line in &stderr_lines {
        if !stderr.contains(line.as_str()) {
            return Err(format!("stderr lacks {line:?}:\n{stderr}"));
        }
    }
    if let Some(limit) = case.stderr_shorter_than
        && stderr.len() >= limit
    {
        return Err(format!(
            "{} bytes reached stderr, more than the output budget (fewer than {limit})",
            stderr.len()
        ));
    }
    Ok(())
}

/// The response `r` against the case's `allowed` or `denied` (filled).
fn expect(case: &Case, denied: Option<&str>, r: &Value) -> Result<(), String> {
    if let Some(reason) = denied {
        let Some(error) = r["error"].as_str() else {
            return Err(format!("the attack was not refused: {r}"));
        };
        if !error.contains(reason) {
            return Err(format!(
                "refused, but not for the expected reason ({reason:?}): {error}"
            ));
        }
        return Ok(());
    }
    let Some(result) = r["result"].as_str() else {
        return Err(format!("the granted operation failed: {r}"));
    };
    match &case.allowed {
        Some(Allowed::Result(expected)) if result != expected => Err(format!(
            "allowed, but the result is {result:?}, not {expected:?}"
        )),
        _ => Ok(()),
    }
}

/// Every case of `dir`, each with the file it came from; an error names
/// each file that does not parse and each case that cannot run as written.
fn load(dir: &Path) -> Result<Vec<(String, Case)>, Vec<String>> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect(),
        Err(e) => return Err(vec![format!("{}: {e}", dir.display())]),
    };
    files.sort();
    let mut errors = Vec::new();
    let mut cases = Vec::new();
    let mut names = BTreeSet::new();
    for file in &files {
        let shown = file
            .strip_prefix(workspace_root())
            .unwrap_or(file)
            .display()
            .to_string();
        let parsed = std::fs::read_to_string(file)
            .map_err(|e| e.to_string())
            .and_then(|text| toml::from_str::<CaseFile>(&text).map_err(|e| e.to_string()));
        match parsed {
            Ok(parsed) => {
                for case in parsed.case {
                    if let Err(e) = case.check() {
                        errors.push(format!("{shown}: {}: {e}", case.name));
                    } else if !names.insert(case.name.clone()) {
                        errors.push(format!(
                            "{shown}: {}: a second case of this name",
                            case.name
                        ));
                    } else {
                        cases.push((shown.clone(), case));
                    }
                }
            }
            Err(e) => errors.push(format!("{shown} does not parse: {e}")),
        }
    }
    if errors.is_empty() {
        Ok(cases)
    } else {
        Err(errors)
    }
}

/// Runs `cases` on [`POOL`] threads; the failures, in the cases' order.
fn run_all(cases: &[(String, Case)]) -> Vec<String> {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..POOL {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((file, case)) = cases.get(i) else {
                        break;
                    };
                    let outcome = catch_unwind(AssertUnwindSafe(|| run(case)))
                        .unwrap_or_else(|panic| Err(panic_text(&*panic)));
                    if let Err(got) = outcome {
                        let line = format!("{} ({file}: {}): {got}", case.name, case.attacks);
                        failures.lock().unwrap().push((i, line));
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    failures.into_iter().map(|(_, line)| line).collect()
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "panicked".into())
}

#[test]
fn attack_cases() {
    let dir = workspace_root().join("tests").join("attacks");
    let mut cases = load(&dir).unwrap_or_else(|errors| {
        panic!(
            "{} error(s) in the attack cases:\n{}",
            errors.len(),
            errors.join("\n")
        )
    });
    assert!(
        !cases.is_empty(),
        "no attack cases in {}: the suite would pass without running one",
        dir.display()
    );
    if let Ok(only) = std::env::var("ATTACK_CASE") {
        cases.retain(|(_, case)| case.name.contains(&only));
        assert!(!cases.is_empty(), "no attack case is named like {only:?}");
    }
    let failures = run_all(&cases);
    assert!(
        failures.is_empty(),
        "{} of {} attack case(s) failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn placeholders_are_found() {
    assert_eq!(placeholder_in("{ws}/x"), Some("{ws}"));
    assert_eq!(placeholder_in("a {pong_port+1} b"), Some("{pong_port+1}"));
    assert_eq!(placeholder_in("{\"json\": 1}"), None);
    assert_eq!(placeholder_in("{ not one }"), None);
    assert_eq!(placeholder_in("x{"), None);
}
