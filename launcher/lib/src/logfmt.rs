//! How log lines look on stderr. A plugin's lines (target
//! [`GUEST_TARGET`]) and the host's lines about a plugin carry the plugin
//! id (and session, stream) as fields; they are shown as
//! `INFO [plugin stream] text`, the rest as tracing's default.

use std::fmt;

use lingxi_wasm_host::{GUEST_TARGET, printable};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{DefaultFields, Format, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent};
use tracing_subscriber::registry::LookupSpan;

/// The launcher's event format.
pub struct LineFormat {
    /// The default format, for lines that are not about a plugin.
    pub default: Format<tracing_subscriber::fmt::format::Full, ()>,
}

#[derive(Default)]
struct GuestFields {
    message: String,
    plugin: String,
    stream: String,
}

impl Visit for GuestFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "plugin" => self.plugin = value.to_owned(),
            "stream" => self.stream = value.to_owned(),
            "message" => self.message = value.to_owned(),
            _ => {}
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        // `%value` fields arrive here too, shown with their `Display`.
        match field.name() {
            "plugin" => self.plugin = format!("{value:?}"),
            "stream" => self.stream = format!("{value:?}"),
            "message" => self.message = format!("{value:?}"),
            _ => {}
        }
    }
}

impl<S> FormatEvent<S, DefaultFields> for LineFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, DefaultFields>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut fields = GuestFields::default();
        event.record(&mut fields);
        if event.metadata().target() != GUEST_TARGET && fields.plugin.is_empty() {
            return self.default.format_event(ctx, writer, event);
        }
        let level = event.metadata().level();
        let space = if fields.stream.is_empty() { "" } else { " " };
        // Whatever a plugin chose (its id, a schema's keys) is shown
        // printable: no escape sequence or forged line reaches the terminal.
        let (plugin, message) = (printable(&fields.plugin), printable(&fields.message));
        writeln!(
            writer,
            "{level:>5} [{plugin}{space}{}] {message}",
            fields.stream
        )
    }
}

/// The `tracing` target receipts are logged under, at debug: with
/// `LINGXI_WASM_LOG=info,lingxi_wasm::receipt=debug`, JSONL and MCP
/// serving and `call` log every call's receipt as one JSON line, before
/// the call's response is written.
pub const RECEIPT_TARGET: &str = "lingxi_wasm::receipt";

/// Whether the log takes receipts ([`RECEIPT_TARGET`]).
pub fn logs_receipts() -> bool {
    tracing::enabled!(target: RECEIPT_TARGET, tracing::Level::DEBUG)
}

/// A [`lingxi_wasm_host::Server`]'s receipt sink that logs each receipt
/// of `plugin`'s calls, if the log takes them ([`logs_receipts`]).
pub fn receipt_logger(plugin: String) -> Option<lingxi_wasm_host::ReceiptSink> {
    logs_receipts().then(|| -> lingxi_wasm_host::ReceiptSink {
        Box::new(move |_, receipt| log_receipt(Some(&plugin), receipt))
    })
}

/// Logs `receipt`, of a call of `plugin`, as one printable JSON line.
pub fn log_receipt(plugin: Option<&str>, receipt: &lingxi_wasm_host::Receipt) {
    let json = serde_json::to_string(receipt).unwrap_or_default();
    let json = printable(&json);
    match plugin {
        Some(plugin) => tracing::debug!(target: RECEIPT_TARGET, plugin = %plugin, "receipt {json}"),
        None => tracing::debug!(target: RECEIPT_TARGET, "receipt {json}"),
    }
}
