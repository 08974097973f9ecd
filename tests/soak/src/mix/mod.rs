//! The request stream of one line (one launcher process, one session): a
//! deterministic mix drawn from a seed, each request written in one of the
//! two dialects and paired with the answer it must get. The line keeps a
//! model of what the plugin holds (its snapshot, its stored keys, what its
//! instance keeps in memory) to know those answers.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use lingxi_wasm_host::protocol::wire::Dialect;
use serde_json::{Value, json};

use crate::expect::Expect;
use crate::fault::{Fault, Target, disabled};
use crate::rng::Rng;

mod normal;

pub use normal::iso8601;
use normal::{KINDS, Kind};

/// One request line and the answer it must get.
#[derive(Debug, Clone)]
pub struct Request {
    /// Its id.
    pub id: String,
    /// The line, without its newline.
    pub line: String,
    /// The dialect its answer must come in.
    pub dialect: Dialect,
    /// Its answer.
    pub expect: Expect,
    /// What it is, for the tallies.
    pub what: What,
}

/// What a request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    /// A normal request.
    Normal,
    /// An injected fault.
    Fault(Fault),
    /// A call that must find the plugin disabled by the breaker.
    Probe,
}

/// Text that tool arguments are made of: plain, escaped in JSON, multi-byte.
const PIECES: [&str; 14] = [
    "a",
    "hello",
    "/path/to/file",
    "é",
    "中文",
    "🚀",
    "\"q\"",
    "\\",
    "\t",
    "x y",
    "{\"k\":1}",
    "\n",
    "=",
    "\u{2028}",
];

/// The answer-relevant state of one line and its request generator.
#[derive(Debug)]
pub struct Line {
    target: Target,
    rng: Rng,
    tag: String,
    next: u64,
    last_dialect: Dialect,
    /// The accepted snapshot: when (Unix seconds) and its root.
    snapshot: Option<(i64, &'static str)>,
    clock: i64,
    kv: BTreeMap<String, String>,
    /// What the testbed instance keeps in memory; `None` once unknown.
    mem: Option<String>,
    fault_ppm: u32,
    faults: Vec<Fault>,
}

impl Line {
    /// A line to `target`, drawn from `seed`; `tag` keeps its stored keys
    /// apart from other lines'. `fault_ppm` of its requests are faults of
    /// the kinds in `faults`.
    pub fn new(target: Target, seed: u64, tag: &str, fault_ppm: u32, faults: &[Fault]) -> Self {
        Line {
            target,
            rng: Rng::new(seed),
            tag: tag.to_owned(),
            next: 0,
            last_dialect: Dialect::Core,
            snapshot: None,
            clock: 1_800_000_000,
            kv: BTreeMap::new(),
            mem: Some(String::new()),
            fault_ppm,
            faults: faults.to_vec(),
        }
    }

    /// What a LingXi host sends first: a snapshot, then `plugin.initialize`.
    pub fn opening(&mut self) -> Vec<Request> {
        vec![self.normal(Kind::Snapshot), self.normal(Kind::Init)]
    }

    /// The next request: a fault with the line's probability (one that
    /// counts toward the breaker only if `counting` allows it), else a
    /// normal request.
    pub fn next(&mut self, counting: bool) -> Request {
        if self.rng.chance_ppm(self.fault_ppm) {
            let target = self.target;
            let kinds: Vec<Fault> = (self.faults.iter().copied())
                .filter(|f| counting || !f.counts(target))
                .collect();
            if !kinds.is_empty() {
                let fault = *self.rng.pick(&kinds);
                return self.fault(fault);
            }
        }
        let weights: Vec<u32> = KINDS
            .iter()
            .map(|(kind, weight)| if self.offers(*kind) { *weight } else { 0 })
            .collect();
        let kind = KINDS[self.rng.weighted(&weights)].0;
        self.normal(kind)
    }

    /// A call that must be refused because the breaker disabled the plugin.
    pub fn probe(&mut self) -> Request {
        let params = self.tool_params("ok", "probe");
        self.with_params("tool.execute", params, disabled(), What::Probe)
    }

    /// A call that makes sure the testbed has a live instance (before a
    /// sample: each instance holds its data directory open).
    pub fn warm(&mut self) -> Request {
        let params = self.tool_params("ok", "warm");
        let expect = Expect::Text("ok:warm".into());
        self.with_params("tool.execute", params, expect, What::Normal)
    }

    /// The plugin's instance was replaced: what it kept in memory is gone.
    pub fn instance_reset(&mut self) {
        self.mem = Some(String::new());
    }

    /// A new launcher process: no snapshot, the Core dialect until params
    /// arrive, a fresh instance. Stored keys persist (same data directory).
    pub fn new_process(&mut self) {
        self.snapshot = None;
        self.last_dialect = Dialect::Core;
        self.instance_reset();
    }

    /// An answer was not what the model said: stop relying on what the
    /// instance keeps until it is replaced.
    pub fn desync(&mut self) {
        self.mem = None;
    }

    fn offers(&self, kind: Kind) -> bool {
        let (probe, quickstart) = match self.target {
            Target::Launcher => (false, false),
            Target::Embed { probe, quickstart } => (probe, quickstart),
        };
        match kind {
            Kind::MemAppend => self.mem.as_ref().is_some_and(|m| m.len() < 2048),
            Kind::MemGet => self.mem.is_some(),
            Kind::ProbeEcho | Kind::ProbeCommand => probe,
            Kind::QuickEcho | Kind::Status => quickstart,
            _ => true,
        }
    }

    fn fault(&mut self, fault: Fault) -> Request {
        if fault.resets() {
            self.instance_reset();
        }
        let params = self.tool_params(fault.tool(), fault.arguments());
        self.with_params("tool.execute", params, fault.expect(), What::Fault(fault))
    }

    fn tool_params(&mut self, name: &str, args: &str) -> Value {
        json!({"toolName": name, "arguments": args, "sessionID": self.tag,
               "toolCallID": format!("call-{}", self.next)})
    }

    fn with_params(&mut self, method: &str, params: Value, expect: Expect, what: What) -> Request {
        let dialect = self.dialect();
        self.encode(method, Some((params, dialect)), expect, what)
    }

    /// A request that needs params, sent without: the host's error text.
    fn bare(&mut self, method: &str, text: &str) -> Request {
        self.without_params(method, Expect::Error(text.into()))
    }

    fn without_params(&mut self, method: &str, expect: Expect) -> Request {
        self.encode(method, None, expect, What::Normal)
    }

    fn dialect(&mut self) -> Dialect {
        if self.rng.below(2) == 0 {
            Dialect::Core
        } else {
            Dialect::Doc
        }
    }

    /// The line for `params` in their dialect (Core: base64 of compact JSON,
    /// `/` escaped as Foundation does); without params, `params` is absent
    /// or `null`, and the answer comes in the dialect last used.
    fn encode(
        &mut self,
        method: &str,
        params: Option<(Value, Dialect)>,
        expect: Expect,
        what: What,
    ) -> Request {
        self.next += 1;
        let dialect = params.as_ref().map_or(self.last_dialect, |(_, d)| *d);
        self.last_dialect = dialect;
        let id = match dialect {
            Dialect::Core => self.uuid(),
            Dialect::Doc => format!("{}-{}", self.tag, self.next),
        };
        let line = match params {
            Some((params, Dialect::Core)) => {
                let inner = params.to_string().replace('/', "\\/");
                let line = json!({"id": id, "method": method, "params": STANDARD.encode(inner)});
                line.to_string().replace('/', "\\/")
            }
            Some((params, Dialect::Doc)) => {
                json!({"id": id, "method": method, "params": params}).to_string()
            }
            None if self.rng.below(2) == 0 => json!({"id": id, "method": method}).to_string(),
            None => json!({"id": id, "method": method, "params": null}).to_string(),
        };
        Request {
            id,
            line,
            dialect,
            expect,
            what,
        }
    }

    /// An uppercase UUID, as Core's ids are.
    fn uuid(&mut self) -> String {
        let (a, b) = (self.rng.next_u64(), self.rng.next_u64());
        format!(
            "{:08X}-{:04X}-4{:03X}-{:04X}-{:012X}",
            a >> 32,
            (a >> 16) & 0xFFFF,
            a & 0xFFF,
            (b >> 48) | 0x8000,
            b & 0xFFFF_FFFF_FFFF
        )
    }

    fn key(&mut self) -> String {
        format!("{}-k{}", self.tag, self.rng.below(16))
    }

    /// Tool arguments: a few pieces, now and then a long run.
    fn text(&mut self) -> String {
        let mut text = String::new();
        for _ in 0..self.rng.below(8) {
            let piece = *self.rng.pick(&PIECES);
            text.push_str(piece);
        }
        if self.rng.below(50) == 0 {
            let piece = *self.rng.pick(&PIECES);
            text.push_str(&piece.repeat(200 + self.rng.below(800) as usize));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates() {
        assert_eq!(iso8601(1_800_000_000), "2027-01-15T08:00:00Z");
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn the_mix_is_deterministic_and_decodable() {
        let faults = Fault::ALL;
        let mut a = Line::new(Target::Launcher, 9, "t", 10_000, &faults);
        let mut b = Line::new(Target::Launcher, 9, "t", 10_000, &faults);
        for _ in 0..2000 {
            let (x, y) = (a.next(true), b.next(true));
            assert_eq!(x.line, y.line);
            let decoded = lingxi_wasm_host::protocol::wire::decode_request(&x.line);
            let decoded = decoded.ok().flatten().map(|r| r.id);
            assert_eq!(decoded.as_deref(), Some(x.id.as_str()), "{}", x.line);
        }
    }
}
