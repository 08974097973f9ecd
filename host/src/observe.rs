//! What a plugin says and how it is doing: its log lines and output as
//! `tracing` events (with the plugin id and session as fields, never
//! interpolated into the text), an optional per-plugin [`LogSink`], and
//! per-plugin [`Counters`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::limits::LINE_OVERHEAD;

/// The `tracing` target of guest output and guest log lines.
pub const GUEST_TARGET: &str = "lingxi_wasm::guest";

/// Where a guest line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogSource {
    /// The logger, at info level.
    Info,
    /// The logger, at warn level.
    Warn,
    /// The logger, at error level.
    Error,
    /// A line the guest printed to its stdout.
    Stdout,
    /// A line the guest printed to its stderr.
    Stderr,
}

impl LogSource {
    /// `info`, `warn`, `error`, `stdout` or `stderr`.
    pub fn as_str(self) -> &'static str {
        match self {
            LogSource::Info => "info",
            LogSource::Warn => "warn",
            LogSource::Error => "error",
            LogSource::Stdout => "stdout",
            LogSource::Stderr => "stderr",
        }
    }
}

/// One line a plugin logged or printed, already cut to its limit and made
/// [`printable`](crate::printable).
#[derive(Debug, Clone, Copy)]
pub struct LogLine<'a> {
    /// The plugin id.
    pub plugin: &'a str,
    /// The session the instance belongs to: empty for a lone
    /// [`PluginHost`](crate::PluginHost), `(loading)` while a set loads it.
    pub session: &'a str,
    /// Logger level or output stream.
    pub source: LogSource,
    /// The text, without its newline.
    pub text: &'a str,
}

/// A host's own destination for one plugin's lines (a log pane per plugin),
/// called on the thread that runs the call, in addition to the `tracing`
/// event. Keep it cheap: it runs inside the plugin's call budget.
pub type LogSink = Arc<dyn Fn(&LogLine<'_>) + Send + Sync>;

/// Who an instance's lines are from, and where they go besides `tracing`.
#[derive(Clone)]
pub(crate) struct Origin {
    pub(crate) plugin: Arc<str>,
    pub(crate) session: Arc<str>,
    pub(crate) sink: Option<LogSink>,
    /// The values of the plugin's secrets, hidden in every line it emits.
    pub(crate) redactor: Option<Arc<crate::policy::secrets::Redactor>>,
}

impl Origin {
    pub(crate) fn new(plugin: &str) -> Self {
        Origin {
            plugin: plugin.into(),
            session: "".into(),
            sink: None,
            redactor: None,
        }
    }

    /// `text` with the plugin's secrets hidden (`[secret NAME]`).
    pub(crate) fn hide<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        match &self.redactor {
            Some(redactor) => redactor.redact(text),
            None => std::borrow::Cow::Borrowed(text),
        }
    }

    /// What one line costs beyond its text: the plugin id, the session, the
    /// stream and the frame, as a log line shows them.
    pub(crate) fn line_cost(&self, source: LogSource) -> usize {
        let separator = 1;
        self.plugin.len() + separator + self.session.len() + source.as_str().len() + LINE_OVERHEAD
    }

    /// Emits one line as a `tracing` event (target [`GUEST_TARGET`], fields
    /// `plugin`, `session`, `stream`) and hands it to the sink.
    pub(crate) fn emit(&self, source: LogSource, text: &str) {
        let text = &*self.hide(text);
        let (plugin, session) = (&*self.plugin, &*self.session);
        match source {
            LogSource::Info => {
                tracing::info!(target: GUEST_TARGET, plugin, session, "{text}")
            }
            LogSource::Warn => {
                tracing::warn!(target: GUEST_TARGET, plugin, session, "{text}")
            }
            LogSource::Error => {
                tracing::error!(target: GUEST_TARGET, plugin, session, "{text}")
            }
            LogSource::Stdout | LogSource::Stderr => {
                let stream = source.as_str();
                tracing::info!(target: GUEST_TARGET, plugin, session, stream, "{text}")
            }
        }
        if let Some(sink) = &self.sink {
            sink(&LogLine {
                plugin,
                session,
                source,
                text,
            });
        }
    }
}

/// Counters of one plugin, over all its instances (every session). Aligned
/// to a cache line of its own: two plugins called from two threads never
/// write the same line.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct Counters {
    calls: AtomicU64,
    errors: AtomicU64,
    traps: AtomicU64,
    timeouts: AtomicU64,
    instances: AtomicU64,
    busy_nanos: AtomicU64,
}

/// A reading of [`Counters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Calls into the plugin (tools, commands, hooks, initialize).
    pub calls: u64,
    /// Calls that failed, for any reason (the plugin's own errors included).
    pub errors: u64,
    /// Calls that crashed the instance (traps, memory, output floods, exits).
    pub traps: u64,
    /// Calls stopped at their deadline.
    pub timeouts: u64,
    /// Instances created: the one a set makes to load the plugin, one per
    /// session, and every restart (after a crash, a timeout, a cancelled
    /// call or a change of workspace root).
    pub instances: u64,
    /// Wall-clock time spent in calls.
    pub busy: Duration,
}

/// How a call ended, for the counters.
pub(crate) enum Ending {
    Ok,
    Failed,
    Crashed,
    TimedOut,
}

impl Counters {
    pub(crate) fn call(&self, took: Duration, ending: Ending) {
        let add = |c: &AtomicU64| c.fetch_add(1, Ordering::Relaxed);
        add(&self.calls);
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.busy_nanos.fetch_add(nanos, Ordering::Relaxed);
        match ending {
            Ending::Ok => {}
            Ending::Failed => drop(add(&self.errors)),
            Ending::Crashed => {
                add(&self.errors);
                add(&self.traps);
            }
            Ending::TimedOut => {
                add(&self.errors);
                add(&self.timeouts);
            }
        }
    }

    pub(crate) fn instance(&self) {
        self.instances.fetch_add(1, Ordering::Relaxed);
    }

    /// The counts so far.
    pub fn read(&self) -> Stats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Stats {
            calls: get(&self.calls),
            errors: get(&self.errors),
            traps: get(&self.traps),
            timeouts: get(&self.timeouts),
            instances: get(&self.instances),
            busy: Duration::from_nanos(get(&self.busy_nanos)),
        }
    }
}
