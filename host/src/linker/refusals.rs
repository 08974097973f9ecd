//! File refusals as the sandbox reports them: every refused path call (one
//! through the trap, outside every mount; or one a mount refused: a `..` or
//! a link out of it, a write to a read-only mount) becomes one bounded,
//! printable log line naming the path and the setting that would allow it
//! (`policy/src/files.rs` words it; the path is cut at [`MAX_LOGGED_PATH`]
//! bytes, the words at twice that), a receipt entry while a call is
//! recorded, and a note the running call's error carries to the caller.
//!
//! Lines are bounded: [`MAX_LOGGED_FILE_DENIALS_PER_CALL`] a call and
//! [`MAX_LOGGED_DENIALS`] an instance, then one line says the rest are not
//! logged. The plugin sees none of it: its error is the same whether the
//! path exists on the host or not.

use crate::effects::Effects;
use crate::limits::{MAX_LOGGED_DENIALS, MAX_LOGGED_FILE_DENIALS_PER_CALL, MAX_LOGGED_PATH};
use crate::observe::Origin;
use crate::policy::files::{FileGrants, FileRefusal, Refused};
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
    fn may_log(&mut self, origin: &Origin) -> bool {
        let say = |line: String| {
            tracing::warn!(plugin = %origin.plugin, session = %origin.session, "{line}");
        };
        self.in_call = self.in_call.saturating_add(1);
        if self.in_call > MAX_LOGGED_FILE_DENIALS_PER_CALL {
            if self.in_call == MAX_LOGGED_FILE_DENIALS_PER_CALL + 1
                && self.in_instance < MAX_LOGGED_DENIALS
            {
                say(format!(
                    "more sandbox denials in this call follow; they are not logged (the first {MAX_LOGGED_FILE_DENIALS_PER_CALL} of a call are)"
                ));
            }
            return false;
        }
        self.in_instance = self.in_instance.saturating_add(1);
        if self.in_instance > MAX_LOGGED_DENIALS {
            if self.in_instance == MAX_LOGGED_DENIALS + 1 {
                say(format!(
                    "more sandbox denials follow; they are not logged (the first {MAX_LOGGED_DENIALS} of this instance were)"
                ));
            }
            return false;
        }
        true
    }
}

/// `text` (a path, or words holding paths) for a log line: printable, at
/// most `limit` bytes of it, marked when cut.
pub(crate) fn shown(text: &str, limit: usize) -> String {
    let mut end = text.len().min(limit);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = if end < text.len() { "…" } else { "" };
    format!("{}{cut}", printable(&text[..end]))
}

impl FileRefusals {
    /// The sandbox refused `what` (`read`, `write`, `create`, `remove`,
    /// `rename`, `list`, `link`) of `path` (absolute, as the plugin named
    /// it, lexically normalized; `directory`: the access is to the folder
    /// itself), as `how` says. Does nothing for a refusal the grants allow
    /// that no mount made (the host's own file system said no).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn refused_file(
        &mut self,
        origin: &Origin,
        effects: &Effects,
        what: &str,
        path: &str,
        write: bool,
        directory: bool,
        how: Refused,
    ) {
        if let Some(refusal) = self.grants.explain(path, write, directory, how) {
            self.report(origin, effects, what, path, refusal);
        }
    }

    /// Reports one refusal: its log line (bounded), the running call's
    /// note, the receipt's entry.
    pub(crate) fn report(
        &mut self,
        origin: &Origin,
        effects: &Effects,
        what: &str,
        path: &str,
        refusal: FileRefusal,
    ) {
        let path = &*origin.hide(path);
        let shown_path = shown(path, MAX_LOGGED_PATH);
        let why = shown(&refusal.why, 2 * MAX_LOGGED_PATH);
        let allow = shown(&refusal.allow, 2 * MAX_LOGGED_PATH);
        if self.note.is_none() {
            self.note = Some(format!("{what} {shown_path}: {why}; {allow}"));
        }
        if self.may_log(origin) {
            tracing::warn!(
                plugin = %origin.plugin, session = %origin.session,
                "{what} {shown_path} denied: {why} ({allow})"
            );
        }
        effects.refused(|| format!("{what} {path}"), || refusal.allow.clone());
    }
}

/// What a refusal says when the plugin has no network at all.
pub(crate) fn needs_network() -> String {
    format!(
        "it needs networkAccess, declared by the plugin and granted with {}",
        crate::policy::wording::worded(crate::policy::Setting::Grant, "networkAccess")
    )
}

/// The refusal of a network use by a plugin without the network.
pub(crate) fn offline() -> FileRefusal {
    FileRefusal {
        why: "the plugin has no network access".to_owned(),
        allow: needs_network(),
    }
}
