//! The recorder one instance shares with its wrapped WASI functions, its
//! network guard and its HTTP gate: off unless a call asked for a receipt
//! (one relaxed load per use), on for the length of that call.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use lingxi_wasm_policy::receipt::{Connection, FileUse, HttpRequest, Lookup, Receipt, Refusal};

/// What a call did to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// Opened or inspected without writing.
    Read,
    /// Opened for writing.
    Write,
    /// Its entries listed.
    List,
    /// Created (a file, folder or link).
    Create,
    /// Removed or renamed away.
    Remove,
}

/// One instance's recorder.
#[derive(Debug, Default)]
pub(crate) struct Effects {
    active: AtomicBool,
    log: Mutex<Log>,
}

/// What the running call did so far, with indexes to merge repeats.
#[derive(Debug, Default)]
struct Log {
    capacity: usize,
    /// Longest name kept, in bytes.
    name_limit: usize,
    receipt: Receipt,
    files: HashMap<String, usize>,
    lookups: HashMap<String, usize>,
    connections: HashMap<(&'static str, SocketAddr), usize>,
    /// Which name each looked-up address was answered for.
    names: HashMap<IpAddr, String>,
}

impl Effects {
    /// A recorder that is off.
    pub(crate) fn new() -> Arc<Self> {
        Arc::default()
    }

    /// Whether a call is being recorded.
    pub(crate) fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// Starts recording `call`, each list holding at most `capacity`
    /// entries, names cut at `name_limit` bytes.
    pub(crate) fn start(&self, call: String, capacity: usize, name_limit: usize) {
        let mut log = self.lock();
        *log = Log {
            capacity,
            name_limit,
            ..Log::default()
        };
        log.receipt.call = call;
        self.active.store(true, Ordering::Relaxed);
    }

    /// Stops recording and hands over what was recorded.
    pub(crate) fn finish(&self) -> Receipt {
        self.active.store(false, Ordering::Relaxed);
        let mut log = self.lock();
        let mut receipt = std::mem::take(&mut log.receipt);
        *log = Log::default();
        receipt.environment.sort();
        receipt.secrets.sort();
        receipt
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `record` on the log if a call is being recorded.
    fn with(&self, record: impl FnOnce(&mut Log)) {
        if self.active() {
            record(&mut self.lock());
        }
    }

    /// The call did `op` to `path` (a folder when `directory`).
    pub(crate) fn file(&self, path: &str, op: Op, directory: bool) {
        self.with(|log| {
            log.receipt.totals.file_operations += 1;
            if let Some(entry) = log.file(path) {
                entry.directory |= directory;
                match op {
                    Op::Read => entry.read = true,
                    Op::Write => entry.write = true,
                    Op::List => {
                        entry.listed = true;
                        entry.read = true;
                        entry.directory = true;
                    }
                    Op::Create => {
                        entry.created = true;
                        entry.write = true;
                    }
                    Op::Remove => {
                        entry.removed = true;
                        entry.write = true;
                    }
                }
            }
        });
    }

    /// The call made `path` a hard link to `from`.
    pub(crate) fn linked(&self, path: &str, from: &str) {
        self.with(|log| {
            let from = log.cut(from);
            if let Some(entry) = log.file(path) {
                entry.linked_from = Some(from);
            }
        });
    }

    /// The call read or wrote bytes of `path`.
    pub(crate) fn bytes(&self, path: &str, read: u64, written: u64) {
        self.with(|log| {
            let totals = &mut log.receipt.totals;
            totals.bytes_read = totals.bytes_read.saturating_add(read);
            totals.bytes_written = totals.bytes_written.saturating_add(written);
            if let Some(entry) = log.file(path) {
                entry.bytes_read = entry.bytes_read.saturating_add(read);
                entry.bytes_written = entry.bytes_written.saturating_add(written);
            }
        });
    }

    /// The call started background task `id`.
    pub(crate) fn task(&self, id: &str) {
        self.with(|log| log.receipt.tasks.push(id.to_owned()));
    }

    /// The call read its environment, and was handed these variables.
    pub(crate) fn environment<'a>(&self, names: impl Iterator<Item = &'a str>) {
        self.with(|log| {
            for name in names {
                if log.receipt.environment.iter().any(|n| n == name) {
                    continue;
                }
                if log.receipt.environment.len() < log.capacity {
                    let name = log.cut(name);
                    log.receipt.environment.push(name);
                } else {
                    log.receipt.totals.omitted += 1;
                }
            }
        });
    }

    /// The call was handed secret `name` (a granted name: never cut).
    pub(crate) fn secret(&self, name: &str) {
        self.with(|log| {
            if !log.receipt.secrets.iter().any(|n| n == name) {
                log.receipt.secrets.push(name.to_owned());
            }
        });
    }

    /// The call looked up `name`.
    pub(crate) fn lookup(&self, name: &str) {
        self.with(|log| {
            log.receipt.totals.lookups += 1;
            log.lookup(name);
        });
    }

    /// The lookup of `name` handed the plugin `address`.
    pub(crate) fn answered(&self, name: &str, address: IpAddr) {
        self.with(|log| {
            // Held to the lists' bound, like every table of a receipt.
            if log.names.len() < log.capacity {
                log.names.insert(address.to_canonical(), name.to_owned());
            }
            if let Some(entry) = log.lookup(name)
                && entry.addresses.len() < 16
            {
                entry.addresses.push(address.to_string());
            }
        });
    }

    /// The call connected (`tcp`) or sent a datagram (`udp`) to `addr`.
    pub(crate) fn connect(&self, protocol: &'static str, addr: SocketAddr) {
        self.with(|log| {
            log.receipt.totals.connections += 1;
            if let Some(entry) = log.connection(protocol, addr) {
                entry.count += 1;
            }
        });
    }

    /// Bytes sent to or received from `addr` over TCP.
    pub(crate) fn net_bytes(&self, addr: SocketAddr, out: u64, r#in: u64) {
        self.with(|log| {
            if let Some(entry) = log.connection("tcp", addr) {
                entry.bytes_out = entry.bytes_out.saturating_add(out);
                entry.bytes_in = entry.bytes_in.saturating_add(r#in);
            }
        });
    }

    /// The call sent an HTTP request; returns its entry's index for
    /// [`Effects::http_status`].
    pub(crate) fn http(&self, method: &str, authority: &str) -> Option<usize> {
        let mut index = None;
        self.with(|log| {
            log.receipt.totals.http_requests += 1;
            if log.receipt.http.len() < log.capacity {
                index = Some(log.receipt.http.len());
                let (method, authority) = (log.cut(method), log.cut(authority));
                log.receipt.http.push(HttpRequest::new(method, authority));
            } else {
                log.receipt.totals.omitted += 1;
            }
        });
        index
    }

    /// The response status of request `index`.
    pub(crate) fn http_status(&self, index: usize, status: u16) {
        self.with(|log| {
            if let Some(entry) = log.receipt.http.get_mut(index) {
                entry.status = Some(status);
            }
        });
    }

    /// The sandbox refused `what`; `allow` is the rule that would allow it.
    pub(crate) fn refused(&self, what: impl FnOnce() -> String, allow: impl FnOnce() -> String) {
        self.with(|log| {
            log.receipt.totals.refused += 1;
            let what = log.cut(&what());
            if log.receipt.refused.iter().any(|r| r.what == what) {
                return;
            }
            if log.receipt.refused.len() < log.capacity {
                log.receipt.refused.push(Refusal::new(what, allow()));
            } else {
                log.receipt.totals.omitted += 1;
            }
        });
    }
}

impl Log {
    /// `text` held to the name limit, marked when cut (and counted: a
    /// policy is never learned from a cut name). Kept exactly otherwise:
    /// receipts are JSON, which escapes what must be; whoever shows one
    /// as text makes it printable.
    fn cut(&mut self, text: &str) -> String {
        if text.len() <= self.name_limit {
            return text.to_owned();
        }
        self.receipt.totals.names_cut += 1;
        let mut end = self.name_limit;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &text[..end])
    }

    /// The entry of `path`, made if there is room.
    fn file(&mut self, path: &str) -> Option<&mut FileUse> {
        let path = self.cut(path);
        let index = match self.files.get(&path) {
            Some(index) => *index,
            None if self.receipt.files.len() < self.capacity => {
                self.receipt.files.push(FileUse::new(path.clone()));
                self.files.insert(path, self.receipt.files.len() - 1);
                self.receipt.files.len() - 1
            }
            None => {
                self.receipt.totals.omitted += 1;
                return None;
            }
        };
        self.receipt.files.get_mut(index)
    }

    fn lookup(&mut self, name: &str) -> Option<&mut Lookup> {
        let name = self.cut(name);
        let index = match self.lookups.get(&name) {
            Some(index) => *index,
            None if self.receipt.lookups.len() < self.capacity => {
                self.receipt.lookups.push(Lookup::new(name.clone()));
                self.lookups.insert(name, self.receipt.lookups.len() - 1);
                self.receipt.lookups.len() - 1
            }
            None => {
                self.receipt.totals.omitted += 1;
                return None;
            }
        };
        self.receipt.lookups.get_mut(index)
    }

    fn connection(&mut self, protocol: &'static str, addr: SocketAddr) -> Option<&mut Connection> {
        let key = (protocol, addr);
        let index = match self.connections.get(&key) {
            Some(index) => *index,
            None if self.receipt.connections.len() < self.capacity => {
                self.receipt.connections.push(Connection::new(
                    protocol.to_owned(),
                    self.names.get(&addr.ip().to_canonical()).cloned(),
                    addr.ip().to_string(),
                    addr.port(),
                ));
                self.connections
                    .insert(key, self.receipt.connections.len() - 1);
                self.receipt.connections.len() - 1
            }
            None => {
                self.receipt.totals.omitted += 1;
                return None;
            }
        };
        self.receipt.connections.get_mut(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MAX_RECEIPT_NAME;

    #[test]
    fn nothing_is_kept_while_off() {
        let effects = Effects::new();
        effects.file("/w/a", Op::Read, false);
        effects.start("call".into(), 4, MAX_RECEIPT_NAME);
        effects.file("/w/b", Op::Read, false);
        let receipt = effects.finish();
        assert_eq!(receipt.files.len(), 1);
        assert_eq!(receipt.files[0].path, "/w/b");
        effects.file("/w/c", Op::Read, false);
        effects.start("next".into(), 4, MAX_RECEIPT_NAME);
        assert!(effects.finish().files.is_empty());
    }

    #[test]
    fn a_flood_is_counted_and_the_first_entries_kept() {
        let effects = Effects::new();
        effects.start("call".into(), 3, MAX_RECEIPT_NAME);
        for i in 0..1000 {
            let path = format!("/w/{i}");
            effects.file(&path, Op::Write, false);
            effects.bytes(&path, 0, 2);
        }
        let receipt = effects.finish();
        let paths: Vec<&str> = receipt.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["/w/0", "/w/1", "/w/2"]);
        assert_eq!(receipt.totals.file_operations, 1000);
        assert_eq!(receipt.totals.bytes_written, 2000);
        assert_eq!(receipt.totals.omitted, 2 * 997);
    }

    #[test]
    fn repeats_merge_and_names_follow_their_lookups() {
        let effects = Effects::new();
        effects.start("call".into(), 8, MAX_RECEIPT_NAME);
        effects.file("/w/a", Op::Read, false);
        effects.bytes("/w/a", 10, 0);
        effects.bytes("/w/a", 5, 0);
        effects.lookup("api.example.com");
        let ip: IpAddr = "192.0.2.7".parse().unwrap();
        effects.answered("api.example.com", ip);
        effects.connect("tcp", SocketAddr::new(ip, 443));
        effects.connect("tcp", SocketAddr::new(ip, 443));
        effects.net_bytes(SocketAddr::new(ip, 443), 5, 7);
        let receipt = effects.finish();
        assert_eq!(receipt.files.len(), 1);
        assert_eq!(receipt.files[0].bytes_read, 15);
        assert_eq!(receipt.lookups[0].addresses, ["192.0.2.7"]);
        let connection = &receipt.connections[0];
        assert_eq!(connection.name.as_deref(), Some("api.example.com"));
        assert_eq!(
            (connection.count, connection.bytes_out, connection.bytes_in),
            (2, 5, 7)
        );
    }

    #[test]
    fn the_names_of_answered_addresses_are_bounded_too() {
        let effects = Effects::new();
        effects.start("call".into(), 4, MAX_RECEIPT_NAME);
        for i in 0..1000u32 {
            effects.answered("flood.example", IpAddr::from(i.to_be_bytes()));
        }
        assert_eq!(effects.lock().names.len(), 4);
        assert_eq!(effects.finish().lookups[0].addresses.len(), 16);
    }

    #[test]
    fn long_names_are_cut_and_marked() {
        let effects = Effects::new();
        effects.start("call".into(), 8, MAX_RECEIPT_NAME);
        effects.file(&"x".repeat(5000), Op::Read, false);
        effects.file("/w/a\nb\u{1b}[0m", Op::Read, false);
        let receipt = effects.finish();
        assert!(receipt.files[0].path.len() <= MAX_RECEIPT_NAME + '…'.len_utf8());
        assert!(receipt.files[0].path.ends_with('…'));
        assert_eq!(receipt.totals.names_cut, 1);
        assert_eq!(receipt.files[1].path, "/w/a\nb\u{1b}[0m", "kept exactly");
    }
}
