//! The protocol's DTOs as serde types (spec §3–§5). Decoding is strict where
//! the spec calls a field required and lenient elsewhere: unknown fields are
//! ignored, so a host that adds fields or snapshot sections never breaks us.

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};

/// Seconds between the Unix epoch and Foundation's reference date
/// (2001-01-01T00:00:00Z), the epoch of Core's numeric `observedAt`.
pub const APPLE_EPOCH_OFFSET: f64 = 978_307_200.0;

/// `host.snapshot` params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotDto {
    /// When the facts were observed, as Unix seconds.
    #[serde(deserialize_with = "observed_at")]
    pub observed_at: f64,
    /// The snapshot's IPC version.
    pub ipc_version: i64,
    /// The workspace section.
    #[serde(default)]
    pub workspace: Option<WorkspaceDto>,
    /// The P-Core / E-Core section.
    #[serde(default)]
    pub pe_core: Option<PeCoreDto>,
    /// The conversation section.
    #[serde(default)]
    pub context_state: Option<ContextStateDto>,
    /// The performance section.
    #[serde(default)]
    pub performance: Option<PerformanceDto>,
}

/// `workspace` section.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceDto {
    /// Absolute path of the workspace root (wire: `rootPath`).
    pub root_path: String,
    /// Whether the root is inside a git repository (wire: `isGitRepository`).
    pub is_git_repository: bool,
    /// Checked-out branch, if any (wire: `currentGitBranch`).
    #[serde(default)]
    pub current_git_branch: Option<String>,
    /// Number of modified files, git repositories only (wire:
    /// `dirtyFileCount`).
    #[serde(default)]
    pub dirty_file_count: Option<i64>,
    /// Main languages of the project (wire: `primaryLanguages`).
    #[serde(default)]
    pub primary_languages: Option<Vec<String>>,
    /// The host's LingXi Core version (wire: `coreVersion`).
    pub core_version: String,
}

/// `peCore` section.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PeCoreDto {
    /// Tokens resident on the P side (wire: `pCoreTokens`).
    #[serde(default)]
    pub p_core_tokens: Option<i64>,
    /// E-Core object count (wire: `eCoreObjects`).
    #[serde(default)]
    pub e_core_objects: Option<i64>,
    /// E-Core reference count (wire: `eCoreReferences`).
    #[serde(default)]
    pub e_core_references: Option<i64>,
    /// What triggered the latest eviction (wire: `lastEvictionTrigger`).
    #[serde(default)]
    pub last_eviction_trigger: Option<String>,
    /// The reasoning effort level (wire: `reasoningEffort`).
    #[serde(default)]
    pub reasoning_effort: Option<String>,
    /// Number of background tasks (wire: `backgroundTaskCount`).
    #[serde(default)]
    pub background_task_count: Option<i64>,
}

/// `contextState` section.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextStateDto {
    /// Model in use (wire: `activeModelID`).
    #[serde(default, rename = "activeModelID")]
    pub active_model_id: Option<String>,
    /// Tokens used so far (wire: `totalTokenUsage`).
    #[serde(default)]
    pub total_token_usage: Option<i64>,
    /// Fill level of the context window, 0 to 1 (wire:
    /// `contextWindowPercentage`).
    #[serde(default)]
    pub context_window_percentage: Option<f64>,
    /// Whether the context was compacted (wire: `isCompacted`).
    #[serde(default)]
    pub is_compacted: Option<bool>,
    /// Messages in the session (wire: `messageCount`).
    #[serde(default)]
    pub message_count: Option<i64>,
    /// The latest turns (wire: `recentTurns`).
    #[serde(default)]
    pub recent_turns: Option<Vec<TurnSummaryDto>>,
}

/// An element of `recentTurns`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnSummaryDto {
    /// Position of the turn in the session (wire: `turnIndex`).
    pub turn_index: i64,
    /// Start of the user's prompt (wire: `userPromptSnippet`).
    pub user_prompt_snippet: String,
    /// Start of the assistant's answer (wire: `assistantResponseSnippet`).
    pub assistant_response_snippet: String,
    /// Tokens the turn used (wire: `tokenUsage`).
    pub token_usage: i64,
}

/// `performance` section.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PerformanceDto {
    /// Time to first token in milliseconds (wire: `timeToFirstTokenMs`).
    #[serde(default)]
    pub time_to_first_token_ms: Option<f64>,
    /// Reasoning time in milliseconds (wire: `reasoningDurationMs`).
    #[serde(default)]
    pub reasoning_duration_ms: Option<f64>,
    /// Tool execution time in milliseconds (wire: `toolExecutionDurationMs`).
    #[serde(default)]
    pub tool_execution_duration_ms: Option<f64>,
    /// Average provider latency in milliseconds (wire:
    /// `providerLatencyAverageMs`).
    #[serde(default)]
    pub provider_latency_average_ms: Option<f64>,
    /// Whether the provider is rate limiting (wire: `isRateLimited`).
    #[serde(default)]
    pub is_rate_limited: Option<bool>,
}

/// `plugin.initialize` params (older hosts send none at all).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeDto {
    /// The host's IPC version (wire: `hostIPCVersion`).
    #[serde(
        default,
        rename = "hostIPCVersion",
        skip_serializing_if = "Option::is_none"
    )]
    pub host_ipc_version: Option<i64>,
    /// The host's LingXi Core version (wire: `coreVersion`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_version: Option<String>,
}

/// `tool.execute` params: all four are required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecuteDto {
    /// Name of the tool to run (wire: `toolName`).
    pub tool_name: String,
    /// The tool's JSON arguments, encoded as a string (spec §4): a JSON
    /// object here is refused with an example of the right shape.
    #[serde(deserialize_with = "arguments_text")]
    pub arguments: String,
    /// Session the call belongs to (wire: `sessionID`).
    #[serde(rename = "sessionID")]
    pub session_id: String,
    /// Identifier of this tool call (wire: `toolCallID`).
    #[serde(rename = "toolCallID")]
    pub tool_call_id: String,
}

/// Reads `arguments` of `tool.execute`: a string, or an error that shows
/// how to encode the JSON arguments as one.
fn arguments_text<'de, D: serde::Deserializer<'de>>(de: D) -> Result<String, D::Error> {
    struct Text;
    impl serde::de::Visitor<'_> for Text {
        type Value = String;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(
                r#"the tool's JSON arguments encoded as a string, e.g. "arguments":"{\"text\":\"hi\"}""#,
            )
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
            Ok(v.to_owned())
        }
        fn visit_string<E: serde::de::Error>(self, v: String) -> Result<String, E> {
            Ok(v)
        }
    }
    de.deserialize_string(Text)
}

/// `command.execute` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecuteDto {
    /// Name or alias as the user typed it (wire: `commandName`).
    pub command_name: String,
    /// The model's raw JSON arguments text, untouched (wire: `arguments`).
    pub arguments: Vec<String>,
    /// Session the call belongs to (wire: `sessionID`).
    #[serde(default, rename = "sessionID", skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// `hook.emit` params: all three are required (`metadata` may be `{}`).
/// `event` stays a string so an event a newer host invents is acknowledged
/// instead of refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookEmitDto {
    /// `event`: which event happened.
    pub event: String,
    /// What it happened to: a session id, turn id, tool call id (wire:
    /// `subjectID`).
    #[serde(rename = "subjectID")]
    pub subject_id: String,
    /// Free-form string pairs; `sessionID` is the one Core reads (wire:
    /// `metadata`).
    pub metadata: BTreeMap<String, String>,
}

/// The `plugin.initialize` result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HandshakeDto {
    /// `manifest`: who the plugin is.
    pub manifest: ManifestDto,
    /// `ipcVersion`: the IPC version the plugin speaks (1).
    pub ipc_version: u32,
    /// Version of the SDK that built the plugin, if known (wire: `sdkVersion`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sdk_version: Option<String>,
    /// `tools`: tools the plugin registered.
    pub tools: Vec<ToolDescriptorDto>,
    /// `commands`: slash commands the plugin registered.
    pub commands: Vec<CommandDescriptorDto>,
    /// Events that have at least one handler, sorted ascending by their wire
    /// names (wire: `supportedHooks`).
    pub supported_hooks: Vec<&'static str>,
}

/// `manifest` in the handshake (also kept in the header of packed plugins).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestDto {
    /// Reverse-DNS identifier, unique among installed plugins (wire: `id`).
    pub id: String,
    /// Display name (wire: `name`).
    pub name: String,
    /// Semantic version of the plugin (wire: `version`).
    pub version: String,
    /// One-line description (wire: `description`).
    pub description: String,
    /// Author, if stated (wire: `author`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Capabilities the plugin declares; may be empty (wire: `capabilities`).
    pub capabilities: Vec<String>,
    /// Oldest LingXi Core the author tested with. For people only: never used
    /// to decide compatibility (wire: `minimumCoreVersion`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum_core_version: Option<String>,
}

/// A tool descriptor; `inputSchema` is JSON Schema *text*.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDescriptorDto {
    /// Display name (wire: `name`).
    pub name: String,
    /// One-line description (wire: `description`).
    pub description: String,
    /// JSON Schema of the arguments, as JSON text (wire: `inputSchema`). The
    /// host validates every call's arguments against it before the tool runs;
    /// the protocol default `{"type": "object", "properties": {}}` means none
    /// was declared (nothing is validated). It may carry annotations the host
    /// enforces, as extra keywords (the wire is unchanged; hosts that do not
    /// know them ignore them): - `"x-lingxi-path": "read" | "write"` on a
    /// string property (under `properties`, or `items` of an array property):
    /// the value is a path, resolved against the workspace root with symbolic
    /// links followed, refused unless it lies inside a directory the plugin is
    /// granted for that access (a file to be created needs an existing parent
    /// inside), and passed to the tool canonical and absolute; -
    /// `"x-lingxi-timeout-ms": <1..86400000>` at the top level: the tool's own
    /// deadline, applied when shorter than the plugin's; -
    /// `"x-lingxi-requires-approval": true` at the top level: an embedding host
    /// asks its user before every call; - `"x-lingxi-concurrency-safe": true`
    /// at the top level: calls may run on more than one instance at once. The
    /// SDK's schema builders write these; `lingxi-wasm-run check` reports
    /// malformed ones.
    pub input_schema: String,
}

/// A command descriptor; all five fields are always present.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandDescriptorDto {
    /// Display name (wire: `name`).
    pub name: String,
    /// Other names that run the same command (wire: `aliases`).
    pub aliases: Vec<String>,
    /// One-line description (wire: `description`).
    pub description: String,
    /// Menu group, `Plugin` by default (wire: `category`).
    pub category: String,
    /// Hint shown after the name while typing, may be empty (wire:
    /// `argumentHint`).
    pub argument_hint: String,
}

/// The `command.execute` result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandResultDto {
    /// `isPrompt`: whether `text` is a prompt for the model (the command's
    /// `prompt` case) rather than a message shown to the user.
    pub is_prompt: bool,
    /// `text`: the text to show.
    pub text: String,
    /// `presentation`: where to show it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presentation: Option<&'static str>,
    /// `title`: optional title of the card or pop-up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// `observedAt`: a number of seconds since 2001-01-01 (Core) or an ISO-8601
/// string (doc dialect), normalised to Unix seconds.
fn observed_at<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Number(f64),
        Text(String),
    }
    match Raw::deserialize(deserializer)? {
        Raw::Number(since_2001) if since_2001.is_finite() => Ok(since_2001 + APPLE_EPOCH_OFFSET),
        Raw::Number(_) => Err(de::Error::custom("observedAt must be a finite number")),
        Raw::Text(text) => parse_iso8601(&text).ok_or_else(|| {
            de::Error::custom(format!(
                "observedAt {text:?} is neither a number nor an ISO-8601 date-time"
            ))
        }),
    }
}

/// Parses an ISO-8601 / RFC 3339 date-time into Unix seconds.
pub fn parse_iso8601(text: &str) -> Option<f64> {
    use time::format_description::well_known::{Iso8601, Rfc3339};
    let parsed = time::OffsetDateTime::parse(text, &Rfc3339)
        .or_else(|_| time::OffsetDateTime::parse(text, &Iso8601::DEFAULT))
        .ok()?;
    Some(parsed.unix_timestamp_nanos() as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn observed_at_accepts_both_dialects() {
        let core: SnapshotDto =
            serde_json::from_value(json!({"observedAt": 821692800, "ipcVersion": 1})).unwrap();
        assert_eq!(core.observed_at, 1_800_000_000.0);
        let doc: SnapshotDto = serde_json::from_value(
            json!({"observedAt": "2027-01-15T08:00:00Z", "ipcVersion": 1, "performance": null}),
        )
        .unwrap();
        assert_eq!(doc.observed_at, 1_800_000_000.0);
        assert_eq!(doc.performance, None);
        let offset: SnapshotDto = serde_json::from_value(
            json!({"observedAt": "2027-01-15T16:00:00+08:00", "ipcVersion": 1}),
        )
        .unwrap();
        assert_eq!(offset.observed_at, 1_800_000_000.0);
        assert!(
            serde_json::from_value::<SnapshotDto>(json!({"observedAt": "soon", "ipcVersion": 1}))
                .is_err()
        );
    }

    #[test]
    fn unknown_fields_and_sections_are_ignored() {
        let s: SnapshotDto = serde_json::from_value(json!({
            "observedAt": 1.5, "ipcVersion": 1, "futureSection": {"x": 1},
            "workspace": {"rootPath": "/r", "isGitRepository": false, "coreVersion": "1", "extra": true}
        }))
        .unwrap();
        assert_eq!(s.workspace.unwrap().root_path, "/r");
    }

    #[test]
    fn required_fields_are_required() {
        assert!(serde_json::from_value::<ToolExecuteDto>(json!({"toolName": "t"})).is_err());
        assert!(serde_json::from_value::<HookEmitDto>(json!({})).is_err());
        assert!(
            serde_json::from_value::<WorkspaceDto>(
                json!({"rootPath": "/r", "isGitRepository": true})
            )
            .is_err()
        );
    }

    #[test]
    fn tool_arguments_must_be_a_string_and_the_error_shows_how() {
        let ok: ToolExecuteDto = serde_json::from_value(json!({
            "toolName": "t", "arguments": "{\"text\":\"hi\"}", "sessionID": "s", "toolCallID": "c"
        }))
        .unwrap();
        assert_eq!(ok.arguments, r#"{"text":"hi"}"#);
        let error = serde_json::from_value::<ToolExecuteDto>(json!({
            "toolName": "t", "arguments": {"text": "hi"}, "sessionID": "s", "toolCallID": "c"
        }))
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("invalid type: map")
                && error.contains(r#"encoded as a string, e.g. "arguments":"{\"text\":\"hi\"}""#),
            "{error}"
        );
    }
}
