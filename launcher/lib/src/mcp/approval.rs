//! Approval over MCP: a tool that requires the user's approval before each
//! call (`x-lingxi-requires-approval`) runs only once the client's user
//! accepted that very call through MCP elicitation (form mode). How the
//! user is asked, what they are shown and what their answer means is
//! decided here; `handler.rs` only follows it.
//!
//! - A client that negotiated a protocol with `initialize` (2025-11-25 and
//!   before) and has a channel back (stdio, an HTTP session) is sent
//!   `elicitation/create` while the call waits.
//! - A client of 2026-07-28 or later gets an `input_required` result with
//!   the elicitation request; it retries the call with the user's answer
//!   and the request state. The state names the call asked about and when
//!   it was asked, sealed with an HMAC under the server's [`Seal`]: an
//!   answer never approves other arguments, a state cannot be made without
//!   asking, and it expires with [`ANSWER_WAIT`]. Any server sharing the
//!   key (servers behind a balancer with one `--token-file`) can take the
//!   retry: nothing is kept between the two requests.
//! - Anyone else is not served such tools (`map::Offer::needs_asking`).
//!
//! The call is checked against its contract first (its arguments, the
//! files its path parameters resolve to): the user sees what will run.

use std::sync::Mutex;

use hmac::{Hmac, Mac};
use lingxi_wasm_host::{PreparedCall, printable};
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequiredResult, InputResponses,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use sha2::{Digest, Sha256};

/// The key of the approval in an `input_required` result's requests and
/// in the retry's responses.
pub const APPROVAL_KEY: &str = "approval";

/// How long a call waits for the user's answer to `elicitation/create`,
/// and how long an `input_required` state stays good.
pub use lingxi_wasm_policy::limits::APPROVAL_ANSWER_WAIT as ANSWER_WAIT;

/// What a state's version says.
const STATE_VERSION: &str = "lingxi-wasm-approval-2";

/// The server's key for request states.
pub struct Seal([u8; 32]);

impl Seal {
    /// A key from `secret` (the bearer token: servers that share it accept
    /// each other's states), else a random one of this process.
    pub fn new(secret: Option<&[u8]>) -> Seal {
        let mut key = [0u8; 32];
        match secret {
            Some(secret) => {
                let mut digest = Sha256::new();
                digest.update(b"lingxi-wasm approval state key\0");
                digest.update(secret);
                key.copy_from_slice(&digest.finalize());
            }
            None => {
                if getrandom::fill(&mut key).is_err() {
                    // No randomness: a key nobody can guess is unavailable,
                    // so no state will ever check (every retry is refused).
                    tracing::warn!(
                        "no random key for approval states; 2026-07-28 approvals will be refused"
                    );
                }
            }
        }
        Seal(key)
    }

    fn mac(&self, issued: u64, call: &str) -> Hmac<Sha256> {
        // A key of any length is accepted.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(STATE_VERSION.as_bytes());
        mac.update(&issued.to_le_bytes());
        mac.update(call.as_bytes());
        mac
    }

    /// The sealed state of the call whose digest is `call`, asked about
    /// at `issued` (seconds since the epoch).
    fn seal(&self, call: &str, issued: u64) -> String {
        let tag = self.mac(issued, call).finalize().into_bytes();
        format!("{STATE_VERSION}.{issued}.{}", hex(&tag))
    }

    /// Whether `sealed` is this server's state for the call whose digest
    /// is `call`, asked about within [`ANSWER_WAIT`] of `now`.
    fn opens(&self, sealed: &str, call: &str, now: u64) -> bool {
        let mut parts = sealed.split('.');
        let (Some(STATE_VERSION), Some(issued), Some(tag), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        let (Ok(issued), Some(tag)) = (issued.parse::<u64>(), unhex(tag)) else {
            return false;
        };
        let age = now.saturating_sub(issued);
        let fresh = age <= ANSWER_WAIT.as_secs() && issued <= now + 60;
        fresh && self.mac(issued, call).verify_slice(&tag).is_ok()
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

use lingxi_wasm_policy::limits::SHOWN_ARGUMENTS;

/// How this request's client can be asked for approval.
pub enum Asker {
    /// With `elicitation/create` while the call waits.
    Live(Peer<RoleServer>),
    /// With an `input_required` result, answered by a retry.
    Rounds,
}

/// How the client of `context` can be asked, if it can: it declares
/// elicitation in form mode, and either speaks 2026-07-28 or later or has
/// a channel back (`back_channel`: stdio, or an HTTP session).
pub fn asker(context: &RequestContext<RoleServer>, back_channel: bool) -> Option<Asker> {
    let elicitation = context.client_capabilities()?.elicitation?;
    // No mode named means form (2025-06-18).
    if elicitation.form.is_none() && elicitation.url.is_some() {
        return None;
    }
    let modern = context
        .protocol_version()
        .is_some_and(|version| !version.has_initialize());
    match (modern, back_channel) {
        (true, _) => Some(Asker::Rounds),
        (false, true) => Some(Asker::Live(context.peer.clone())),
        (false, false) => None,
    }
}

/// What the user answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Accept,
    Decline,
    Cancel,
}

impl Answer {
    /// The tool result's text for a call the user did not accept.
    pub fn refusal(self, call: &PreparedCall) -> String {
        let tool = printable(&call.tool);
        match self {
            Answer::Decline | Answer::Accept => {
                format!("the user declined the call to tool '{tool}'; it did not run")
            }
            Answer::Cancel => format!(
                "the user dismissed the approval request for tool '{tool}' without accepting it; it did not run"
            ),
        }
    }
}

/// Asks the user of `peer` about `call` and waits for the answer (at most
/// [`ANSWER_WAIT`]; no answer, or an error, counts as dismissed).
pub async fn ask_live(peer: &Peer<RoleServer>, call: &PreparedCall) -> Answer {
    let asked = peer.create_elicitation_with_timeout(request(call), Some(ANSWER_WAIT));
    match asked.await {
        Ok(result) => answer(&result),
        Err(error) => {
            tracing::warn!(
                "the MCP client did not answer the approval request for '{}': {error}",
                printable(&call.tool)
            );
            Answer::Cancel
        }
    }
}

/// The `input_required` result that asks the user about `call`.
pub fn input_required(call: &PreparedCall, seal: &Seal) -> InputRequiredResult {
    let request = InputRequest::Elicitation(ElicitRequest::new(request(call)));
    let requests = [(APPROVAL_KEY.to_owned(), request)].into_iter().collect();
    InputRequiredResult::new(Some(requests), Some(seal.seal(&state(call), now())))
}

/// The user's answer in a retry of `call` carrying `responses` and
/// `state`: `Err` says why the retry does not answer this call.
pub fn answer_in(
    call: &PreparedCall,
    responses: &InputResponses,
    state: Option<&str>,
    seal: &Seal,
) -> Result<Answer, String> {
    if !state.is_some_and(|sealed| seal.opens(sealed, &self::state(call), now())) {
        return Err(format!(
            "the approval answer is not for this call of tool '{}' (its arguments or files changed, the request state was altered or made elsewhere, or it is older than {} minutes); call it again without inputResponses to be asked anew",
            printable(&call.tool),
            ANSWER_WAIT.as_secs() / 60
        ));
    }
    let Some(value) = responses.get(APPROVAL_KEY) else {
        return Err(format!(
            "the retry carries no answer under inputResponses.{APPROVAL_KEY}; answer the elicitation request it was sent"
        ));
    };
    match serde_json::from_value::<ElicitResult>(value.clone()) {
        Ok(result) => Ok(answer(&result)),
        Err(error) => Err(format!(
            "inputResponses.{APPROVAL_KEY} is not an elicitation result: {error}"
        )),
    }
}

fn answer(result: &ElicitResult) -> Answer {
    match result.action {
        ElicitationAction::Accept => Answer::Accept,
        ElicitationAction::Decline => Answer::Decline,
        _ => Answer::Cancel,
    }
}

/// The elicitation request about `call`: a message the user reads, and a
/// form with nothing to fill in (accepting is the answer).
fn request(call: &PreparedCall) -> ElicitRequestParams {
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message(call),
        requested_schema: ElicitationSchema::new(Default::default()),
    }
}

/// What the user is shown: the tool and plugin, the arguments as the
/// plugin will get them, and every file its path parameters name.
pub fn message(call: &PreparedCall) -> String {
    let arguments = printable(&call.arguments);
    let shown = match arguments.char_indices().nth(SHOWN_ARGUMENTS) {
        Some((cut, _)) => format!(
            "{}… ({} more characters)",
            &arguments[..cut],
            arguments[cut..].chars().count()
        ),
        None => arguments.into_owned(),
    };
    let mut text = format!(
        "Allow the tool '{}' of the plugin '{}' to run, in its sandbox?\nArguments: {shown}",
        printable(&call.tool),
        printable(&call.plugin)
    );
    for path in &call.paths {
        text.push_str(&format!(
            "\nIt may {} {} (given as {})",
            path.access,
            printable(&path.resolved),
            printable(&path.given)
        ));
    }
    text
}

/// A digest naming `call`: its plugin, tool and arguments as the plugin
/// gets them (path parameters resolved).
fn state(call: &PreparedCall) -> String {
    let mut digest = Sha256::new();
    for part in [&call.plugin, &call.tool, &call.arguments] {
        digest.update((part.len() as u64).to_le_bytes());
        digest.update(part.as_bytes());
    }
    hex(&digest.finalize())
}

/// Calls the user accepted and that have not run yet: the session's
/// approval callback lets each through once. A call to a tool that
/// requires approval that nobody asked about is refused.
#[derive(Default)]
pub struct AcceptedCalls {
    accepted: Mutex<Vec<String>>,
}

impl AcceptedCalls {
    /// The user accepted `call`.
    pub fn accept(&self, call: &PreparedCall) {
        if let Ok(mut accepted) = self.accepted.lock() {
            accepted.push(state(call));
        }
    }

    /// Whether `call` was accepted (once: the acceptance is used up).
    pub fn take(&self, call: &PreparedCall) -> bool {
        let state = state(call);
        let Ok(mut accepted) = self.accepted.lock() else {
            return false;
        };
        match accepted.iter().position(|s| *s == state) {
            Some(at) => {
                accepted.swap_remove(at);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_opens_only_for_its_call_its_key_and_its_time() {
        let (seal, t) = (Seal::new(Some(b"token")), 1_000_000);
        let sealed = seal.seal("call-a", t);
        assert!(seal.opens(&sealed, "call-a", t + 5));
        assert!(
            Seal::new(Some(b"token")).opens(&sealed, "call-a", t),
            "same token, same key"
        );
        let refused = [
            (
                Seal::new(Some(b"token")).opens(&sealed, "call-b", t),
                "another call",
            ),
            (
                Seal::new(Some(b"other")).opens(&sealed, "call-a", t),
                "another key",
            ),
            (Seal::new(None).opens(&sealed, "call-a", t), "a random key"),
            (
                seal.opens(&sealed, "call-a", t + ANSWER_WAIT.as_secs() + 1),
                "expired",
            ),
            (seal.opens(&sealed, "call-a", t - 120), "from the future"),
            (
                seal.opens(&sealed.replace(".1000000.", ".1000001."), "call-a", t),
                "time changed",
            ),
            (
                seal.opens(&format!("{sealed}00"), "call-a", t),
                "tag changed",
            ),
            (seal.opens(&state_v1(), "call-a", t), "an unsealed digest"),
        ];
        for (opened, why) in refused {
            assert!(!opened, "{why}");
        }
    }

    /// What states were before they were sealed: a bare digest.
    fn state_v1() -> String {
        format!("lingxi-wasm-approval-1:{}", "0".repeat(64))
    }
}
