//! The normal requests: what each sends and the answer it must get.

use lingxi_wasm_host::protocol::wire::Dialect;
use serde_json::{Value, json};

use super::{Line, Request, What};
use crate::expect::Expect;
use crate::fault::Target;

/// The normal requests, with their weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Ok,
    Len,
    Fail,
    KvSet,
    KvGet,
    MemAppend,
    MemGet,
    StrictOk,
    StrictBad,
    NoTool,
    ToolBare,
    Info,
    InfoPrompt,
    InfoPerf,
    InfoCase,
    NoCommand,
    CommandBare,
    HookTurnEnd,
    HookStart,
    HookUnknown,
    HookEmpty,
    HookBare,
    Snapshot,
    OldSnapshot,
    BadSnapshot,
    SnapshotBare,
    Init,
    InitBare,
    InitBad,
    NoMethod,
    ProbeEcho,
    QuickEcho,
    ProbeCommand,
    Status,
}

#[rustfmt::skip]
pub(super) const KINDS: [(Kind, u32); 34] = [
    (Kind::Ok, 120), (Kind::Len, 120), (Kind::Fail, 25), (Kind::KvSet, 70), (Kind::KvGet, 70),
    (Kind::MemAppend, 30), (Kind::MemGet, 20), (Kind::StrictOk, 30), (Kind::StrictBad, 15),
    (Kind::NoTool, 10), (Kind::ToolBare, 4), (Kind::Info, 35), (Kind::InfoPrompt, 10),
    (Kind::InfoPerf, 10), (Kind::InfoCase, 8), (Kind::NoCommand, 8), (Kind::CommandBare, 3),
    (Kind::HookTurnEnd, 30), (Kind::HookStart, 15), (Kind::HookUnknown, 5), (Kind::HookEmpty, 3),
    (Kind::HookBare, 2), (Kind::Snapshot, 60), (Kind::OldSnapshot, 8), (Kind::BadSnapshot, 4),
    (Kind::SnapshotBare, 2), (Kind::Init, 15), (Kind::InitBare, 4), (Kind::InitBad, 2),
    (Kind::NoMethod, 8), (Kind::ProbeEcho, 30), (Kind::QuickEcho, 30), (Kind::ProbeCommand, 10),
    (Kind::Status, 8),
];

/// Seconds from 1970 to 2001 (Core's `observedAt` epoch).
const APPLE_EPOCH: i64 = 978_307_200;
/// The workspace roots snapshots name (no capability is granted: they are data).
const ROOTS: [&str; 3] = ["/soak/alpha", "/soak/beta", "/soak/gamma"];
impl Line {
    pub(super) fn normal(&mut self, kind: Kind) -> Request {
        let launcher = self.target == Target::Launcher;
        let tool = |line: &mut Line, name: &str, args: String, expect: Expect| {
            let params = line.tool_params(name, &args);
            line.with_params("tool.execute", params, expect, What::Normal)
        };
        let command = |line: &mut Line, name: &str, args: &[&str], expect: Expect| {
            let params = json!({"commandName": name, "arguments": args, "sessionID": line.tag});
            line.with_params("command.execute", params, expect, What::Normal)
        };
        let hook = |line: &mut Line, params: Value| {
            line.with_params("hook.emit", params, Expect::Empty, What::Normal)
        };
        match kind {
            Kind::Ok => {
                let args = self.text();
                tool(self, "ok", args.clone(), Expect::Text(format!("ok:{args}")))
            }
            Kind::Len => {
                let args = self.text();
                let len = args.len().to_string();
                tool(self, "len", args, Expect::Text(len))
            }
            Kind::Fail => {
                let args = self.text();
                let text = format!("failed on purpose: {args}");
                tool(self, "fail", args, Expect::Error(text))
            }
            Kind::KvSet => {
                let (key, value) = (self.key(), self.text());
                self.kv.insert(key.clone(), value.clone());
                tool(self, "kv-set", format!("{key}={value}"), text("stored"))
            }
            Kind::KvGet => {
                let key = self.key();
                let value = self.kv.get(&key).cloned();
                tool(
                    self,
                    "kv-get",
                    key,
                    Expect::Text(value.unwrap_or("<none>".into())),
                )
            }
            Kind::MemAppend => {
                let word = format!("w{}", self.rng.below(1000));
                let mem = self.mem.get_or_insert_default();
                mem.push_str(&word);
                mem.push(',');
                let mem = mem.clone();
                tool(self, "mem-append", word, Expect::Text(mem))
            }
            Kind::MemGet => {
                let mem = self.mem.clone().unwrap_or_default();
                tool(self, "mem-get", String::new(), Expect::Text(mem))
            }
            Kind::StrictOk => {
                let word = format!("t{}", self.rng.below(10_000));
                let args = match self.rng.below(3) {
                    0 => json!({"text": word}),
                    1 => json!({"text": word, "mode": "fast"}),
                    _ => json!({"text": word, "mode": "slow", "opts": {"depth": 2}}),
                };
                let args = args.to_string();
                tool(self, "contract.strict", args.clone(), Expect::Text(args))
            }
            Kind::StrictBad => {
                let bad = [r#"{"text":1}"#, r#"{}"#, r#"{"text":"x","more":1}"#];
                let args = (*self.rng.pick(&bad)).to_owned();
                let has = "tool.execute 'contract.strict' was not run: ".to_owned();
                tool(self, "contract.strict", args, Expect::ErrorHas(vec![has]))
            }
            Kind::NoTool => {
                let name = format!("nope.{}", self.rng.below(100));
                let text = if launcher {
                    format!("Tool '{name}' not found in plugin")
                } else {
                    format!(
                        "no plugin offers a tool named '{name}'; the catalog lists the tools there are"
                    )
                };
                tool(self, &name, String::new(), Expect::Error(text))
            }
            Kind::ToolBare => self.bare("tool.execute", "Missing tool.execute parameters"),
            Kind::Info | Kind::InfoCase => {
                let name = if kind == Kind::Info { "info" } else { "INFO" };
                let expect = match self.snapshot {
                    Some((_, root)) => Expect::Message {
                        has: format!("root-path: \"{root}\""),
                        title: Some("info".into()),
                    },
                    None => unavailable("workspace", None),
                };
                command(self, name, &["workspace"], expect)
            }
            Kind::InfoPrompt => {
                let prompt =
                    json!({"isPrompt": true, "text": "which section?", "presentation": "inline"});
                command(self, "Info", &[], Expect::Json(prompt))
            }
            Kind::InfoPerf => {
                let expect = unavailable("performance", self.snapshot.map(|(at, _)| at));
                command(self, "info", &["performance"], expect)
            }
            Kind::NoCommand => {
                let text = if launcher {
                    "Command 'nope' not found in plugin".to_owned()
                } else {
                    "no plugin offers a command named 'nope'; the catalog lists the commands there are".to_owned()
                };
                command(self, "nope", &[], Expect::Error(text))
            }
            Kind::CommandBare => self.bare("command.execute", "Missing command.execute parameters"),
            Kind::HookTurnEnd | Kind::HookStart | Kind::HookUnknown => {
                let event = match kind {
                    Kind::HookTurnEnd => "agentTurnEnd",
                    Kind::HookStart => "sessionStart",
                    _ => "someFutureEvent",
                };
                let subject = format!("turn-{}", self.next);
                let params = json!({"event": event, "subjectID": subject, "metadata": {"sessionID": self.tag}});
                hook(self, params)
            }
            Kind::HookEmpty => {
                let expect = Expect::ErrorHas(vec!["missing field `event`".into()]);
                self.with_params("hook.emit", json!({}), expect, What::Normal)
            }
            Kind::HookBare => self.bare("hook.emit", "Missing hook.emit payload"),
            Kind::Snapshot => {
                self.clock += 1 + self.rng.below(3) as i64;
                let root = *self.rng.pick(&ROOTS);
                self.snapshot = Some((self.clock, root));
                self.snapshot_request(self.clock, root, 1, Expect::Empty)
            }
            Kind::OldSnapshot => {
                // Older than the stored one: ignored, yet acknowledged.
                let at = self.snapshot.map_or(self.clock, |(at, _)| at) - 100;
                let root = *self.rng.pick(&ROOTS);
                if self.snapshot.is_none() {
                    self.snapshot = Some((at, root));
                }
                self.snapshot_request(at, root, 1, Expect::Empty)
            }
            Kind::BadSnapshot => {
                let text = "Unsupported host IPC version 42; this plugin speaks [1].";
                let (at, root) = (self.clock + 50, ROOTS[0]);
                self.snapshot_request(at, root, 42, Expect::Error(text.into()))
            }
            Kind::SnapshotBare => {
                self.bare("host.snapshot", "host.snapshot requires a snapshot payload")
            }
            Kind::Init => {
                let params = json!({"hostIPCVersion": 1, "coreVersion": "1.1.0"});
                self.with_params("plugin.initialize", params, Expect::Handshake, What::Normal)
            }
            Kind::InitBare => self.without_params("plugin.initialize", Expect::Handshake),
            Kind::InitBad => {
                let text = "Unsupported host IPC version 42; plugin supports [1].";
                let params = json!({"hostIPCVersion": 42, "coreVersion": "1.1.0"});
                self.with_params(
                    "plugin.initialize",
                    params,
                    Expect::Error(text.into()),
                    What::Normal,
                )
            }
            Kind::NoMethod => {
                let method = *self
                    .rng
                    .pick(&["tool.call", "plugin.shutdown", "host.ping"]);
                let text = format!("Unknown IPC method: {method}");
                self.with_params(method, json!({"x": 1}), Expect::Error(text), What::Normal)
            }
            Kind::ProbeEcho => {
                let args = self.text();
                tool(
                    self,
                    "probe.echo",
                    args.clone(),
                    Expect::Text(format!("echo:{args}")),
                )
            }
            Kind::QuickEcho => {
                let args = self.text();
                tool(self, "echo", args.clone(), Expect::Text(args))
            }
            Kind::ProbeCommand => {
                let name = *self.rng.pick(&["probe", "pb", "PB"]);
                let expect = match self.snapshot {
                    Some((_, root)) => Expect::Message {
                        has: format!("root={root}"),
                        title: None,
                    },
                    None => unavailable("workspace", None),
                };
                command(self, name, &[], expect)
            }
            Kind::Status => {
                let expect = match self.snapshot {
                    Some((_, root)) => Expect::Message {
                        has: format!("Workspace {root} (main)"),
                        title: Some("Workspace".into()),
                    },
                    None => Expect::Json(json!({"isPrompt": false,
                        "text": "The host has not published a runtime snapshot yet", "presentation": "inline"})),
                };
                command(self, "status", &[], expect)
            }
        }
    }

    fn snapshot_request(&mut self, at: i64, root: &str, version: i64, expect: Expect) -> Request {
        let dialect = self.dialect();
        let observed = match dialect {
            Dialect::Core => json!(at - APPLE_EPOCH),
            Dialect::Doc => json!(iso8601(at)),
        };
        let params = json!({
            "observedAt": observed, "ipcVersion": version,
            "workspace": {"rootPath": root, "isGitRepository": true, "currentGitBranch": "main",
                          "dirtyFileCount": 3, "coreVersion": "1.1.0"},
            "contextState": {"messageCount": self.next % 97},
            "peCore": {"eCoreObjects": 4, "eCoreReferences": 9, "reasoningEffort": "medium",
                       "backgroundTaskCount": 0},
        });
        self.encode(
            "host.snapshot",
            Some((params, dialect)),
            expect,
            What::Normal,
        )
    }
}

fn text(text: &str) -> Expect {
    Expect::Text(text.to_owned())
}

/// The SDK's error for a snapshot section the host did not send.
fn unavailable(field: &str, last: Option<i64>) -> Expect {
    let when = match last {
        Some(at) => format!("last snapshot {}", iso8601(at)),
        None => "no snapshot received".to_owned(),
    };
    Expect::Error(format!("Plugin runtime info unavailable: {field} ({when})"))
}

/// `2027-01-15T08:00:00Z` for Unix seconds `at` (days to civil date, H. Hinnant).
pub fn iso8601(at: i64) -> String {
    let (days, secs) = (at.div_euclid(86_400), at.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z")
}
