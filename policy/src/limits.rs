//! Resource limits for one plugin instance: where every number a plugin can
//! run into is decided.

use std::time::Duration;

/// How often the engine's epoch advances; the granularity of deadlines.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// What one line of guest output or log costs beyond its text and the
/// plugin id: the level, brackets, stream name and newline the launcher
/// writes around it (at most this many bytes).
pub const LINE_OVERHEAD: usize = 16;

/// LingXi Core's per-call watchdog (spec §6).
pub const HOST_WATCHDOG: Duration = Duration::from_secs(3);

/// Limits applied to every call into a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock budget of one request. The default stays under Core's
    /// 3.0 s watchdog so Core receives an explanatory error instead of timing
    /// out and killing the plugin. One too long to represent as an instant
    /// (e.g. `Duration::MAX`) means no deadline.
    pub call_timeout: Duration,
    /// Upper bound on the linear memory of one instance, in bytes.
    pub max_memory_bytes: usize,
    /// Largest tool output or command text one call may return, in bytes.
    pub max_result_bytes: usize,
    /// Most bytes one call may write to stdout, stderr and the log together.
    pub max_output_bytes: usize,
    /// A plugin that traps (or reaches its own deadline) this many times
    /// within [`Limits::trap_window`] is disabled for the life of its
    /// `PluginHost`: in the launcher until it restarts,
    /// in a set for that session (until
    /// `Session::deactivate` or a new session).
    pub max_traps: usize,
    /// The window in which traps are counted.
    pub trap_window: Duration,
    /// Size quota of the plugin's data directory, in bytes.
    pub max_storage_bytes: u64,
    /// Wall-clock budget of one background task, from its start (making its
    /// instance included): whatever the task does, it is stopped then.
    pub task_timeout: Duration,
    /// Most background tasks of the plugin running at once; one more start
    /// is refused, naming this limit.
    pub max_tasks: usize,
    /// How long a finished task's state (its result or error) is kept for
    /// `status`; after that the task is unknown.
    pub task_keep: Duration,
    /// Most finished tasks kept at once; past it the oldest is forgotten
    /// first.
    pub max_kept_tasks: usize,
    /// Most bytes of results and error texts the finished tasks kept hold
    /// together; past it the oldest is forgotten first (the newest is
    /// always kept).
    pub max_kept_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            call_timeout: Duration::from_millis(2500),
            max_memory_bytes: 256 * 1024 * 1024,
            max_result_bytes: 16 * 1024 * 1024,
            max_output_bytes: 16 * 1024 * 1024,
            max_traps: 5,
            trap_window: Duration::from_secs(60),
            max_storage_bytes: 64 * 1024 * 1024,
            task_timeout: Duration::from_secs(600),
            max_tasks: 4,
            task_keep: Duration::from_secs(600),
            max_kept_tasks: 64,
            max_kept_bytes: 64 * 1024 * 1024,
        }
    }
}

/// What one table element costs against the memory cap: a pointer-sized
/// reference plus wasmtime's bookkeeping, rounded up.
pub const TABLE_ELEMENT_BYTES: usize = 16;

/// Cuts a plugin's text (an error message) to at most `max` bytes on a
/// character boundary, saying how much was cut: error texts are held to the
/// same limit as results.
pub fn cap_text(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let original = text.len();
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(&format!(
        "… [the plugin's text was {original} bytes; cut to the {max}-byte limit]"
    ));
    text
}

/// Bytes a call has written to stdout, stderr and the log, shared by the
/// streams and the log import of one instance; reset before every call.
#[derive(Debug, Default)]
pub struct OutputBudget {
    used: std::sync::atomic::AtomicUsize,
    limit: usize,
}

/// A call wrote more than [`Limits::max_output_bytes`]. Raised as a trap.
#[derive(Debug, thiserror::Error)]
#[error("the plugin wrote more than {limit} bytes of output in one call")]
pub struct OutputFlood {
    /// The limit in force.
    pub limit: usize,
}

impl OutputBudget {
    /// A budget of `limit` bytes per call.
    pub fn new(limit: usize) -> std::sync::Arc<Self> {
        std::sync::Arc::new(OutputBudget {
            used: Default::default(),
            limit,
        })
    }

    /// Bytes spent in this call so far.
    pub fn used(&self) -> usize {
        self.used.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Starts a new call.
    pub fn reset(&self) {
        self.used.store(0, std::sync::atomic::Ordering::Relaxed);
    }

    /// Spends `bytes`; fails once the call is over its budget. Callers
    /// charge what they really write: the text plus its prefix and newline.
    pub fn spend(&self, bytes: usize) -> Result<(), OutputFlood> {
        let before = self
            .used
            .fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
        if before.saturating_add(bytes) > self.limit {
            return Err(OutputFlood { limit: self.limit });
        }
        Ok(())
    }
}

/// Most memories, tables and instances one store may hold: far above what
/// a plugin built with the SDK uses (one memory), far below wasmtime's
/// default of 10 000.
pub const MAX_STORE_ITEMS: usize = 100;

// Background tasks (see `tasks/`).

/// Most background tasks running at once in one session of a set, over all
/// its plugins, unless the set says otherwise
/// (the host's `PluginSet::with_session_tasks`).
pub const SESSION_TASKS: usize = 8;

/// Longest progress message kept, in bytes; the rest is cut off.
pub const MAX_PROGRESS_MESSAGE: usize = 1024;

/// How long stopping a plugin (stdin closed, a session closed) waits for
/// its cancelled tasks to end. A cancelled task is dropped where it stands,
/// so this only bounds the bookkeeping.
pub const TASK_STOP_WAIT: Duration = Duration::from_secs(2);

// Requests and output.

/// Longest request line accepted, in bytes. A longer line is answered with an
/// error (when its id can be read) and skipped; it never stalls the loop.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Longest log message kept from a plugin; the rest is cut off.
pub const MAX_LOG_MESSAGE: usize = 64 * 1024;

/// Longest partial line kept before it is emitted anyway.
pub const MAX_PENDING_LINE: usize = 64 * 1024;

// What a plugin declares: its file, schemas, names, annotations.

/// Largest plugin file read: far above any plugin (the launcher with a
/// component packed in is ~30 MB), far below what would exhaust memory.
pub const MAX_PLUGIN_FILE: u64 = 1 << 30;

/// Largest entry of the compile cache's per-function store: one function's
/// compiled code with its relocations (the largest function of CPython, the
/// interpreter loop, compiles to well under 1 MiB). A larger entry is
/// neither written nor read: the function is compiled again.
pub const MAX_FUNCTION_ENTRY: usize = 16 << 20;

/// Most bytes the compile cache's folder keeps (its `.cwasm` files and its
/// per-function store together): a Python plugin is ~50 MB of `.cwasm` and
/// ~70 MB of functions, most of them shared with every other Python plugin.
/// Past it, a compile that wrote to the cache removes the files used least
/// recently, down to three quarters of it.
pub const MAX_COMPILE_CACHE: u64 = 1 << 30;

/// Largest schema compiled, in bytes of JSON text.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;

/// Most schema text compiled for one handshake, in bytes.
pub const MAX_SCHEMA_TOTAL_BYTES: usize = 1024 * 1024;

/// Most `pattern` and `patternProperties` entries compiled for one handshake.
pub const MAX_SCHEMA_PATTERNS: usize = 128;

/// Largest compiled size of one `pattern` (the `regex` crate's own cap is
/// 10 MiB; a schema has no use for more than this).
pub const MAX_PATTERN_BYTES: usize = 256 * 1024;

/// Longest per-tool timeout accepted: one day.
pub const MAX_TIMEOUT_MS: u64 = 86_400_000;

/// How deep the schema is searched for annotations.
pub const MAX_ANNOTATION_DEPTH: usize = 64;

/// Most contract problems kept for one handshake: a plugin decides how many
/// there are, and they end up in logs and error texts.
pub const MAX_PROBLEMS: usize = 32;

/// Longest contract problem kept, in characters: a plugin decides what it
/// quotes.
pub const MAX_PROBLEM_CHARS: usize = 1000;

/// Longest plugin id, tool or command name a set accepts.
pub const MAX_NAME: usize = 128;

/// Longest name (a tool, a command, a plugin id) a message or log line
/// shows, in bytes, before it is cut.
pub const MAX_SHOWN_NAME: usize = 128;

/// Most failures of one argument check a message lists.
pub const MAX_LISTED_FAILURES: usize = 8;

/// Longest value or pattern an argument check's message quotes, in
/// characters.
pub const MAX_QUOTED_VALUE: usize = 60;

/// Longest text a handshake difference quotes, in characters: a
/// difference is named, not repeated in full.
pub const MAX_QUOTED_DIFFERENCE: usize = 80;

/// Longest text (a pointer, a value, an engine's reason) a contract's
/// message quotes, in characters.
pub const MAX_QUOTED_CONTRACT: usize = 200;

/// Deepest nesting of a tool's schema that is searched for patterns (a
/// plugin writes its schemas).
pub const MAX_SCHEMA_DEPTH: usize = 128;

/// Log lines queued for the log's writer thread before more are dropped:
/// a burst (a plugin logging in a loop) outruns a thread writing a line
/// per system call.
pub const LOG_QUEUE_LINES: usize = 16_384;

/// How much of a call's arguments the user is shown when asked to approve
/// it, in characters (the rest is cut, and the message says so).
pub const SHOWN_ARGUMENTS: usize = 4096;

/// How long a call waits for the user's answer to an approval request,
/// and how long an `input_required` state stays good.
pub const APPROVAL_ANSWER_WAIT: Duration = Duration::from_secs(600);

/// The highest memory limit a user may set, in MiB: a wasm32 plugin
/// addresses its memory with 32 bits, so it never uses more than 4 GiB.
pub const MAX_MEMORY_MIB: usize = 4096;

// Denials in the log.

/// Longest host name a denial shows; a longer one is cut (a plugin chooses
/// the names it asks for, and each denial is a line of the host's log).
pub const MAX_LOGGED_HOST: usize = 253;

/// Denials of one instance that are logged; later ones are counted, and
/// said once (a plugin can ask for refused destinations in a loop).
pub const MAX_LOGGED_DENIALS: u32 = 32;

/// Longest path a file refusal's log line shows; a longer one is cut (a
/// plugin chooses the paths it asks for).
pub const MAX_LOGGED_PATH: usize = 512;

/// File refusals one call may log; the instance's own bound is
/// [`MAX_LOGGED_DENIALS`]. A call past it leaves the rest of the
/// instance's lines to later calls.
pub const MAX_LOGGED_FILE_DENIALS_PER_CALL: u32 = 8;

// Receipts: what a call did (see `effects`).

/// Most entries each list of a receipt holds (files, variables, lookups,
/// connections, HTTP requests, refusals): a plugin decides how many things
/// it touches, and a receipt goes into logs, files and MCP results. Past
/// it, the receipt still counts every use and says how many it left out.
pub const MAX_RECEIPT_ENTRIES: usize = 64;

/// Most entries each list holds while learning a policy (`learn`): enough
/// for any real plugin; past it, learning fails instead of writing a
/// policy from an incomplete record.
pub const MAX_LEARN_ENTRIES: usize = 100_000;

/// Longest path, name or method a receipt keeps, in bytes; a longer one is
/// cut, marked and counted (a plugin chooses the names it asks for).
pub const MAX_RECEIPT_NAME: usize = 1024;

/// Longest name kept while learning a policy: above any path a file
/// system resolves, so a learned rule is never a cut name.
pub const MAX_LEARN_NAME: usize = 64 * 1024;

// Instances: spares in a session, the pool's slots.

/// Most extra instances of one plugin in one session.
pub const MAX_SPARES: usize = 3;

/// Core instances one instance of a plugin may have, and so what each of a
/// pooled runtime's instances counts on: a Rust plugin has 3 (its module
/// and the adapters' shims), a componentize-py one 14 (the interpreter
/// and its libraries are modules of their own), a componentize-js one 4;
/// the rest is headroom for native extensions.
pub const CORE_INSTANCES_PER_PLUGIN: u32 = 32;

/// Memories one plugin component may have (the SDK's have one).
pub const MEMORIES_PER_PLUGIN: u32 = 2;

/// Tables one plugin component may have (the SDK's have a few).
pub const TABLES_PER_PLUGIN: u32 = 4;

/// Most elements one table may have (function references of the guest).
pub const TABLE_ELEMENTS: usize = 10_000;

// Numbers that were kept beside their one use.

/// Task events a lagging reader may miss before it is told so.
pub const TASK_EVENT_BACKLOG: usize = 256;

/// Arguments longer than this, for a schema with patterns (and 64 times
/// this for any schema), are checked off the async thread within the
/// call's deadline.
pub const HEAVY_ARGUMENTS: usize = 4096;

/// Largest packed payload accepted (a sanity bound against a corrupt
/// length): a packed file is at most a plugin file.
pub const MAX_PACK_PAYLOAD: u64 = MAX_PLUGIN_FILE;

/// Largest packed header accepted.
pub const MAX_PACK_HEADER: usize = 16 << 20;

/// Most a packed file's compressed component may decode to, as a multiple
/// of its stored bytes: a reader holds the decoded component in memory, so
/// a small file cannot make it hold a large one. Real components shrink
/// 3-4 times (an interpreter's: 18.8 MB to 6.1); `pack` stores one that
/// would shrink more as it is.
pub const MAX_PACK_COMPRESSION: u64 = 64;

/// Longest line kept in a recording: the longest request line accepted; a
/// longer one is kept cut, marked with its length, and cannot be replayed
/// exactly.
pub const MAX_RECORDED_LINE: usize = MAX_LINE_BYTES;

/// Most bytes of a plugin's stderr kept in one recording.
pub const MAX_RECORDED_STDERR: usize = 1024 * 1024;

/// Longest call deadline a policy may set.
pub const MAX_CALL_TIMEOUT: Duration = Duration::from_secs(3600);

/// Shortest and longest background-task deadline a policy may set.
pub const TASK_TIMEOUT_RANGE: std::ops::RangeInclusive<Duration> =
    Duration::from_millis(1)..=Duration::from_secs(86_400);

/// Longest manifest, index or referrers list read from a registry (the
/// distribution registry's own limit for a manifest).
pub const MAX_REGISTRY_MANIFEST: usize = 4 << 20;

/// Longest config blob of a Wasm artifact read (its imports and exports).
pub const MAX_REGISTRY_CONFIG: usize = 1 << 20;

/// Longest signature blob read from a registry (a minisign signature is
/// about 350 bytes).
pub const MAX_REGISTRY_SIGNATURE: usize = 4096;

/// Most signatures of one artifact that are fetched and tried.
pub const MAX_REGISTRY_SIGNATURES: usize = 16;

/// Longest other answer read from a registry: an error's body, a token.
pub const MAX_REGISTRY_SMALL_BODY: usize = 64 << 10;

/// Most redirects followed for one request (each to the same host).
pub const MAX_REGISTRY_REDIRECTS: usize = 5;

/// How long one registry pull or push may take, from its first request to
/// its last byte, unless the user sets another.
pub const REGISTRY_TIMEOUT: Duration = Duration::from_secs(300);

/// How long a registry may send nothing before a read is given up.
pub const REGISTRY_IDLE: Duration = Duration::from_secs(30);

/// Longest registry reference shown in a message.
pub const MAX_SHOWN_REFERENCE: usize = 600;

#[cfg(test)]
mod tests;

/// Shortest secret value: a shorter one would be hidden wherever it
/// happens to occur in what a plugin writes.
pub const MIN_SECRET_BYTES: usize = 8;

/// Longest secret value (an API key, a token, a small key file's line).
pub const MAX_SECRET_BYTES: usize = 16 * 1024;

/// Longest request body the host holds back to look for a bound secret
/// before sending it to a host the secret is not bound to; a longer one is
/// refused.
pub const MAX_INSPECTED_BODY: usize = 8 * 1024 * 1024;

/// How long one keyring write or removal by `secret set`/`rm` may take (a
/// locked keyring may wait on a password prompt); past it, it says so.
pub const KEYRING_WAIT: Duration = Duration::from_secs(10);

/// How long a plugin's start waits for the keyring, for all its secrets
/// together (asked once: see the launcher's `secrets::load_values`): under
/// LingXi's 3 s watchdog of the first call, so a keyring that does not
/// answer costs the plugin its secrets, never its first answer.
pub const KEYRING_START_WAIT: Duration = Duration::from_secs(2);
