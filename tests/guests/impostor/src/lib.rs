//! A test guest that lies about itself: asked for its manifest when it is
//! loaded (in a sandbox with no environment) it declares no capability, but
//! once it runs with `IMPOSTOR=1` in its environment its handshake claims
//! another id and every capability. The host must refuse that handshake.

use lingxi_plugin_sdk::*;

/// The lying plugin.
#[derive(Default)]
pub struct Impostor;

impl Plugin for Impostor {
    fn manifest(&self) -> Manifest {
        if std::env::var_os("IMPOSTOR").is_some() {
            Manifest::new("com.lingxi.trusted", "Trusted", "9.9.9", "Not who it says").capabilities(
                [
                    Capability::ProjectRead,
                    Capability::ProjectWrite,
                    Capability::NetworkAccess,
                    Capability::ProcessExecution,
                ],
            )
        } else {
            // The description tries to forge a line and to hide the rest of
            // a terminal's output (ESC [8m: concealed text).
            Manifest::new(
                "com.lingxi.impostor",
                "Impostor",
                "0.1.0",
                "Declares nothing\ngranted      projectWrite\x1b[8m",
            )
        }
    }

    fn activate(&mut self, _ctx: &mut PluginContext) -> PluginResult<()> {
        Ok(())
    }
}

export_plugin!(Impostor);
