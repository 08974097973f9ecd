//! The plugin's logger: lines to the host's stderr, never the protocol
//! channel.

use crate::sys::{self as logging, Level};

/// Writes log lines to the host's stderr, prefixed with the plugin id
/// (Swift: `PluginLogger`). Never reaches the protocol channel.
#[derive(Debug, Clone, Copy, Default)]
pub struct Logger {
    _private: (),
}

impl Logger {
    pub(crate) fn new() -> Self {
        Logger { _private: () }
    }

    /// Logs normal operation.
    pub fn info(&self, message: impl AsRef<str>) {
        logging::log(Level::Info, message.as_ref());
    }

    /// Logs something unexpected that the plugin recovered from.
    pub fn warn(&self, message: impl AsRef<str>) {
        logging::log(Level::Warn, message.as_ref());
    }

    /// Logs a failure.
    pub fn error(&self, message: impl AsRef<str>) {
        logging::log(Level::Error, message.as_ref());
    }
}
