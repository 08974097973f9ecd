//! What one call did, as data: the effect receipt a host keeps of a call
//! (files, names looked up, connections, requests, refusals, totals), and
//! what `learn` reads to write a policy. Counting happens in the host
//! (`lingxi-wasm-host`'s `effects`), where the plugin meets WASI; this is
//! only what it fills in and how it is written (camelCase JSON).
//!
//! A receipt is bounded: each list holds at most
//! [`MAX_RECEIPT_ENTRIES`](crate::limits::MAX_RECEIPT_ENTRIES) entries,
//! uses past it are counted in [`Totals`] and [`Totals::omitted`] says how
//! many were left out.

use serde::{Deserialize, Serialize};

/// What one call did. Paths are as the plugin named them (mounts sit at
/// their own absolute paths; the data directory at `/lingxi/data`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Receipt {
    /// The call, as messages name it (`tool.execute 'stats.count'`).
    pub call: String,
    /// Wall-clock time of the call, in microseconds (from the guest call's
    /// start; starting a fresh instance is not included).
    pub wall_micros: u64,
    /// CPU time of the call's own thread while it ran the guest, in
    /// microseconds. File and name-lookup work that wasmtime-wasi hands to
    /// tokio's blocking pool is not in it.
    pub cpu_micros: u64,
    /// The instance's memories and tables after the call, in bytes (they
    /// never shrink, so this is the call's peak).
    pub peak_memory_bytes: u64,
    /// Bytes the call wrote to stdout, stderr and the log together (not
    /// its result).
    pub output_bytes: u64,
    /// Files and folders touched, one entry per path.
    pub files: Vec<FileUse>,
    /// The variables the plugin was handed when it read its environment
    /// (WASI hands the whole environment at once); empty if it never read it.
    pub environment: Vec<String>,
    /// The secrets the plugin was handed, by name (never their values);
    /// a secret it asked for but was not granted is a refusal.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
    /// Name lookups and what they answered.
    pub lookups: Vec<Lookup>,
    /// Network destinations: TCP connections and UDP peers.
    pub connections: Vec<Connection>,
    /// Outgoing HTTP requests (`wasi:http`).
    pub http: Vec<HttpRequest>,
    /// What the sandbox refused, each with the rule that would allow it:
    /// network destinations and lookups outside the allow-list, paths
    /// outside every mount, writes to a read-only mount, paths escaping one.
    /// A socket without `networkAccess` fails inside the guest unseen,
    /// except in learning mode
    /// (the host's `PluginHost::set_learning`).
    pub refused: Vec<Refusal>,
    /// The background tasks the call started, by id (at most as many as
    /// the plugin may run at once).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<String>,
    /// Counts of everything, listed or not.
    pub totals: Totals,
}

/// One file or folder and what the call did with it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct FileUse {
    /// The path as the plugin named it.
    pub path: String,
    /// It is a folder.
    #[serde(skip_serializing_if = "is_false")]
    pub directory: bool,
    /// Opened, or its metadata read, without writing.
    #[serde(skip_serializing_if = "is_false")]
    pub read: bool,
    /// Opened for writing, created, removed, renamed or linked.
    #[serde(skip_serializing_if = "is_false")]
    pub write: bool,
    /// Bytes read from it.
    #[serde(skip_serializing_if = "is_zero")]
    pub bytes_read: u64,
    /// Bytes written to it.
    #[serde(skip_serializing_if = "is_zero")]
    pub bytes_written: u64,
    /// Its entries were listed.
    #[serde(skip_serializing_if = "is_false")]
    pub listed: bool,
    /// Created by the call.
    #[serde(skip_serializing_if = "is_false")]
    pub created: bool,
    /// Removed (or renamed away) by the call.
    #[serde(skip_serializing_if = "is_false")]
    pub removed: bool,
    /// Made as a hard link to this file (both within one mount).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linked_from: Option<String>,
}

/// One name lookup.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Lookup {
    /// The name looked up.
    pub name: String,
    /// The addresses the lookup handed the plugin.
    pub addresses: Vec<String>,
}

/// One network destination.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Connection {
    /// `tcp` or `udp`.
    pub protocol: String,
    /// The name the address was looked up by, if the plugin looked it up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The IP address.
    pub address: String,
    /// The port.
    pub port: u16,
    /// Connections made (TCP) or datagrams sent (UDP).
    pub count: u64,
    /// Bytes sent (TCP).
    #[serde(skip_serializing_if = "is_zero")]
    pub bytes_out: u64,
    /// Bytes received (TCP).
    #[serde(skip_serializing_if = "is_zero")]
    pub bytes_in: u64,
}

/// One outgoing HTTP request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct HttpRequest {
    /// The method.
    pub method: String,
    /// `scheme://host:port`.
    pub authority: String,
    /// The response's status; absent if none came.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
}

/// Something the sandbox refused during the call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Refusal {
    /// What was tried (`read /etc/hosts`, `connect 192.0.2.1:443`).
    pub what: String,
    /// The rule that would allow it, in the process's words (a flag in the
    /// launcher: `--allow-read /etc`), or why nothing can.
    pub allow: String,
}

/// Counts of everything the call did, whether listed or not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Totals {
    /// File and folder operations.
    pub file_operations: u64,
    /// Bytes read from files.
    pub bytes_read: u64,
    /// Bytes written to files.
    pub bytes_written: u64,
    /// Name lookups.
    pub lookups: u64,
    /// TCP connections and UDP datagrams.
    pub connections: u64,
    /// HTTP requests.
    pub http_requests: u64,
    /// Refusals.
    pub refused: u64,
    /// Uses left out of the lists because they were full (0: the receipt
    /// lists everything).
    pub omitted: u64,
    /// Names (paths, hosts, methods) cut because they were longer than a
    /// receipt keeps.
    pub names_cut: u64,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

// The host fills receipts in; these make an entry with what it knows first
// (the structs stay non-exhaustive, so a field added later breaks no one).

impl FileUse {
    /// A file or folder the call named, nothing done with it yet.
    pub fn new(path: String) -> Self {
        FileUse {
            path,
            ..FileUse::default()
        }
    }
}

impl Lookup {
    /// A lookup of `name`, no addresses handed over yet.
    pub fn new(name: String) -> Self {
        Lookup {
            name,
            addresses: Vec::new(),
        }
    }
}

impl Connection {
    /// A destination, not yet used.
    pub fn new(protocol: String, name: Option<String>, address: String, port: u16) -> Self {
        Connection {
            protocol,
            name,
            address,
            port,
            ..Connection::default()
        }
    }
}

impl HttpRequest {
    /// A request, no response yet.
    pub fn new(method: String, authority: String) -> Self {
        HttpRequest {
            method,
            authority,
            status: None,
        }
    }
}

impl Refusal {
    /// `what` was refused; `allow` is the rule that would allow it.
    pub fn new(what: String, allow: String) -> Self {
        Refusal { what, allow }
    }
}
