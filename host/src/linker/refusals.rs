//! File refusals as the sandbox reports them: every refused path call (one
//! through the trap, outside every mount; or one a mount refused: a `..` or
//! a link out of it, a write to a read-only mount) becomes one bounded,
//! printable log line naming the path and the setting that would allow it
//! (`policy/files.rs` words it), a receipt entry while a call is recorded,
//! and a note the running call's error carries to the caller.
//!
//! Lines are bounded: [`MAX_LOGGED_FILE_DENIALS_PER_CALL`] a call and
//! [`MAX_LOGGED_DENIALS`] an instance, then one line says the rest are not
//! logged. The plugin sees none of it: its error is the same whether the
//! path exists on the host or not.

use crate::limits::{MAX_LOGGED_DENIALS, MAX_LOGGED_FILE_DENIALS_PER_CALL, MAX_LOGGED_PATH};
use crate::policy::files::{FileGrants, FileRefusal};
use crate::state::HostState;
use crate::text::printable;

/// One instance's file refusals: what it was granted, and what it logged.
#[derive(Debug, Default)]
pub(crate) struct FileRefusals {
    /// What the instance was given, to word each refusal.
    pub(crate) grants: FileGrants,
    /// Lines logged in the running call, and in the instance.
    in_call: u32,
    in_instance: u32,
    /// The running call's first refusal, for its error text.
    note: Option<String>,
}

impl FileRefusals {
    /// A new call starts: its own line budget, no note yet.
    pub(crate) fn start_call(&mut self) {
        self.in_call = 0;
        self.note = None;
    }

    /// The running call's first refusal, worded for its error text (taken:
    /// the next call starts without one).
    pub(crate) fn take_note(&mut self) -> Option<String> {
        self.note.take()
    }

    /// Whether one more line may be logged; says once when the call's or
    /// the instance's lines run out.
    fn may_log(&mut self, origin: &crate::observe::Origin) -> bool {
        let say = |line: String| {
            tracing::warn!(plugin = %origin.plugin, session = %origin.session, "{line}");
        };
        self.in_call += 1;
        if self.in_call > MAX_LOGGED_FILE_DENIALS_PER_CALL {
            if self.in_call == MAX_LOGGED_FILE_DENIALS_PER_CALL + 1
                && self.in_instance < MAX_LOGGED_DENIALS
            {
                say(format!(
                    "more file denials in this call follow; they are not logged (the first {MAX_LOGGED_FILE_DENIALS_PER_CALL} of a call are)"
                ));
            }
            return false;
        }
        self.in_instance += 1;
        if self.in_instance > MAX_LOGGED_DENIALS {
            if self.in_instance == MAX_LOGGED_DENIALS + 1 {
                say(format!(
                    "more file denials follow; they are not logged (the first {MAX_LOGGED_DENIALS} of this instance were)"
                ));
            }
            return false;
        }
        true
    }
}

/// `path` for a log line: printable, at most [`MAX_LOGGED_PATH`] bytes.
fn shown(path: &str) -> String {
    let mut end = path.len().min(MAX_LOGGED_PATH);
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    let cut = if end < path.len() { "…" } else { "" };
    format!("{}{cut}", printable(&path[..end]))
}

impl HostState {
    /// The sandbox refused `what` (`read`, `write`, `create`, `remove`,
    /// `rename`, `list`) of `path` (absolute, as the plugin named it,
    /// lexically normalized). `trapped`: it reached no mount at all, so the
    /// sandbox refused it even if the grants seem to allow it (a mount that
    /// could not be opened). Does nothing for a refusal the grants allow
    /// (the host's own file system said no, not the sandbox).
    pub(crate) fn refused_file(&mut self, what: &str, path: &str, write: bool, trapped: bool) {
        let refusal = match self.files.grants.explain(path, write) {
            Some(refusal) => refusal,
            None if trapped => FileRefusal {
                why: "no folder is mounted there".into(),
                allow: "a folder the grants name was not mounted (it is missing or cannot be opened: the log says so at start)".into(),
            },
            None => return,
        };
        let shown_path = shown(path);
        let FileRefusal { why, allow } = &refusal;
        if self.files.note.is_none() {
            self.files.note = Some(format!("{what} {shown_path}: {why}; {allow}"));
        }
        if self.files.may_log(&self.origin) {
            tracing::warn!(
                plugin = %self.origin.plugin, session = %self.origin.session,
                "{what} {shown_path} denied: {} ({})", printable(why), printable(allow)
            );
        }
        self.effects
            .refused(|| format!("{what} {path}"), || refusal.allow.clone());
    }
}
