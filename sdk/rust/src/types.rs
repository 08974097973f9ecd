//! The plugin-facing data types: manifest, command results, hook payloads and
//! the error type handlers return.

use std::collections::BTreeMap;
use std::fmt;

pub use crate::bindings::lingxi::plugin::types::{Capability, HookEvent, Manifest, Presentation};

impl Manifest {
    /// A manifest with the four required fields, no author, no capabilities.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        version: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Manifest {
            id: id.into(),
            name: name.into(),
            version: version.into(),
            description: description.into(),
            author: None,
            capabilities: Vec::new(),
            minimum_core_version: None,
        }
    }

    /// Sets the author.
    pub fn author(mut self, author: impl Into<String>) -> Self {
        self.author = Some(author.into());
        self
    }

    /// Sets the declared capabilities. A host grants only what is declared here
    /// and allowed by the user.
    pub fn capabilities(mut self, capabilities: impl IntoIterator<Item = Capability>) -> Self {
        self.capabilities = capabilities.into_iter().collect();
        self
    }

    /// Sets the oldest LingXi Core version the plugin was tested with (for
    /// people only; never used to decide compatibility).
    pub fn minimum_core_version(mut self, version: impl Into<String>) -> Self {
        self.minimum_core_version = Some(version.into());
        self
    }
}

impl Capability {
    /// Every capability, in wire order.
    pub const ALL: [Capability; 4] = [
        Capability::ProjectRead,
        Capability::ProjectWrite,
        Capability::ProcessExecution,
        Capability::NetworkAccess,
    ];

    /// Parses a wire name.
    pub fn from_wire(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.wire_name() == name)
    }

    /// The capability's name on the wire, e.g. `projectRead`.
    pub fn wire_name(self) -> &'static str {
        match self {
            Capability::ProjectRead => "projectRead",
            Capability::ProjectWrite => "projectWrite",
            Capability::ProcessExecution => "processExecution",
            Capability::NetworkAccess => "networkAccess",
        }
    }
}

impl HookEvent {
    /// Every event, in declaration order.
    pub const ALL: [HookEvent; 6] = [
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
        HookEvent::AgentTurnStart,
        HookEvent::AgentTurnEnd,
        HookEvent::ToolBefore,
        HookEvent::ToolAfter,
    ];

    /// Parses a wire name.
    pub fn from_wire(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.wire_name() == name)
    }

    /// The event's name on the wire, e.g. `sessionStart`.
    pub fn wire_name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "sessionStart",
            HookEvent::SessionEnd => "sessionEnd",
            HookEvent::AgentTurnStart => "agentTurnStart",
            HookEvent::AgentTurnEnd => "agentTurnEnd",
            HookEvent::ToolBefore => "toolBefore",
            HookEvent::ToolAfter => "toolAfter",
        }
    }
}

/// What a slash command returns (Swift: `PluginCommandResult`).
#[derive(Debug, Clone, PartialEq)]
pub enum CommandResult {
    /// Show a message to the user; costs no model tokens.
    Message {
        /// The text to show.
        text: String,
        /// Pop-up (`Modal`) or timeline card (`Inline`).
        presentation: Presentation,
        /// Optional title.
        title: Option<String>,
    },
    /// Hand this text to the model as a prompt.
    Prompt(String),
}

impl CommandResult {
    /// A message shown in a modal pop-up (the protocol's default), no title.
    pub fn message(text: impl Into<String>) -> Self {
        CommandResult::Message {
            text: text.into(),
            presentation: Presentation::Modal,
            title: None,
        }
    }

    /// A message shown as an inline timeline card, no title.
    pub fn inline(text: impl Into<String>) -> Self {
        CommandResult::Message {
            text: text.into(),
            presentation: Presentation::Inline,
            title: None,
        }
    }

    /// A prompt for the model.
    pub fn prompt(text: impl Into<String>) -> Self {
        CommandResult::Prompt(text.into())
    }

    /// Sets the title of a message (a prompt has no title; it is left as is).
    pub fn with_title(mut self, new_title: impl Into<String>) -> Self {
        if let CommandResult::Message { title, .. } = &mut self {
            *title = Some(new_title.into());
        }
        self
    }

    /// Sets the presentation of a message (a prompt is always inline).
    pub fn with_presentation(mut self, new: Presentation) -> Self {
        if let CommandResult::Message { presentation, .. } = &mut self {
            *presentation = new;
        }
        self
    }
}

/// One lifecycle event delivered to hook handlers (Swift: `HookPayload`).
#[derive(Debug, Clone, PartialEq)]
pub struct HookPayload {
    /// Which event happened.
    pub event: HookEvent,
    /// What it happened to (a session, turn or tool call id).
    pub subject_id: String,
    /// Free-form string pairs sent by the host; Core sets `sessionID`.
    pub metadata: BTreeMap<String, String>,
}

/// The error a plugin's activation, tool, command or hook returns. Its text
/// goes back to the host verbatim as the response's `error`.
///
/// Any `std::error::Error` converts into it with `?`; make one from text with
/// [`PluginError::new`].
pub struct PluginError {
    message: String,
}

impl PluginError {
    /// An error with this text.
    pub fn new(message: impl Into<String>) -> Self {
        PluginError {
            message: message.into(),
        }
    }

    /// The text sent to the host.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl<E: std::error::Error> From<E> for PluginError {
    fn from(error: E) -> Self {
        PluginError::new(error.to_string())
    }
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PluginError({:?})", self.message)
    }
}

/// Result of a plugin handler.
pub type PluginResult<T> = Result<T, PluginError>;
