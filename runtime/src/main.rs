//! `lingxi-wasm-rt`: the base `lingxi-wasm-run pack` puts a plugin on when
//! it is installed beside the launcher. It is the launcher's serving part
//! on wasmtime without a compiler: it loads the precompiled code its own
//! file carries and nothing else, so it is smaller and starts faster; a
//! packed file whose code does not suit this machine says to repack it.

use lingxi_wasm_host::pack;
use lingxi_wasm_launcher::serve::{init_logging, one_line, run_packed, silence_stdout};

const NAME: &str = "lingxi-wasm-rt";

fn main() {
    let logs = init_logging();
    let result = match pack::read_self() {
        Ok(Some(packed)) => run_packed(packed, NAME, |_, packed| {
            anyhow::bail!(
                "{} is packed on the runtime-only base, which cannot inspect it; run `lingxi-wasm-run inspect {}`",
                packed.header.plugin_id,
                std::env::current_exe()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|_| "FILE".into())
            )
        }),
        Ok(None) => bare(),
        Err(error) => Err(error.into()),
    };
    silence_stdout();
    drop(logs);
    if let Err(error) = result {
        eprintln!("{NAME}: error: {}", one_line(&error));
        std::process::exit(1);
    }
}

/// Run without a plugin: only `--version` (what `pack` checks) means
/// anything. A file not named lingxi-wasm-rt is a packed plugin whose end
/// was cut off or changed.
fn bare() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let exe = std::env::current_exe().ok();
    let named_rt = exe
        .as_deref()
        .and_then(|p| p.file_stem())
        .is_some_and(|stem| stem == NAME);
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["--version" | "-V"] => {
            println!("{NAME} {} (runtime-only)", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        _ if !named_rt => anyhow::bail!(
            "no plugin is embedded in {}: it is a packed plugin whose end was cut off or changed; reinstall it with `lingxi-wasm-run install`",
            exe.map(|p| p.display().to_string()).unwrap_or_default()
        ),
        _ => anyhow::bail!(
            "{NAME} is the runtime-only base that `lingxi-wasm-run pack` puts a plugin on; it runs nothing by itself (run `lingxi-wasm-run pack app.wasm -o my-plugin`)"
        ),
    }
}
