//! `secret set|list|rm`: the values a plugin is granted by name
//! (`--secret NAME`), kept in the platform's keyring or, by explicit
//! choice, in the private secrets file (`lingxi_wasm_launcher::secrets`).
//! A value is never taken from the command line: it is asked for without
//! echo at a terminal, else read from stdin (one line).

use std::io::{IsTerminal, Read};

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use lingxi_wasm_host::policy::limits::MAX_SECRET_BYTES;
use lingxi_wasm_host::policy::secrets::is_secret_name;
use lingxi_wasm_launcher::secrets::{Shelf, Store, value_of};

/// What `secret` does.
#[derive(Debug, Subcommand)]
pub enum SecretCommand {
    /// Keep a secret's value for a plugin: asked for without echo at a
    /// terminal, else read from stdin (never from the command line). The
    /// plugin gets it only where it is granted `--secret NAME`.
    Set {
        /// The plugin's id (as `list` or `inspect` shows it).
        plugin_id: String,
        /// The secret's name (letters, digits, `_`, `-`, `.`).
        name: String,
        /// Where to keep it: the platform's keyring, or the private file
        /// ~/.lingxiagent/secrets.json where no keyring is reachable.
        #[arg(long, value_enum, default_value = "keyring")]
        store: Store,
    },
    /// List the secrets kept, by plugin and name (never their values).
    List {
        /// Only this plugin's.
        plugin_id: Option<String>,
    },
    /// Remove a secret's value, wherever it is kept.
    Rm {
        /// The plugin's id.
        plugin_id: String,
        /// The secret's name.
        name: String,
    },
}

/// Runs one `secret` command.
pub fn run(command: SecretCommand) -> Result<()> {
    match command {
        SecretCommand::Set {
            plugin_id,
            name,
            store,
        } => {
            check_names(&plugin_id, &name)?;
            // Windows always has the Credential Manager; a file there
            // inherits its folder's ACL, which this launcher does not set.
            if cfg!(windows) && store == Store::File {
                bail!(
                    "--store file is refused on Windows: keep the secret in the Credential Manager (the default, --store keyring)"
                );
            }
            let value = value_of(&read_value(&plugin_id, &name)?)?;
            let mut shelf = Shelf::open()?;
            shelf.set(&plugin_id, &name, &value, store)?;
            let place = match store {
                Store::Keyring => "the keyring",
                Store::File => "the private secrets file",
            };
            eprintln!(
                "secret {name} of {plugin_id} is kept in {place}; the plugin gets it where it is granted --secret {name}"
            );
            Ok(())
        }
        SecretCommand::List { plugin_id } => {
            let shelf = Shelf::open()?;
            for entry in shelf.list(plugin_id.as_deref()) {
                let store = match entry.store {
                    Store::Keyring => "keyring",
                    Store::File => "file",
                };
                println!("{}\t{}\t{store}", entry.plugin, entry.name);
            }
            Ok(())
        }
        SecretCommand::Rm { plugin_id, name } => {
            check_names(&plugin_id, &name)?;
            let mut shelf = Shelf::open()?;
            if !shelf.remove(&plugin_id, &name)? {
                bail!(
                    "no secret {name} is kept for {plugin_id}; `secret list` shows those that are"
                );
            }
            eprintln!("secret {name} of {plugin_id} is removed");
            Ok(())
        }
    }
}

fn check_names(plugin_id: &str, name: &str) -> Result<()> {
    if !lingxi_wasm_host::policy::storage::is_safe_id(plugin_id) {
        bail!("{plugin_id:?} is not a plugin id (1-64 of a-z 0-9 . -, as a manifest's id is)");
    }
    if !is_secret_name(name) {
        // Not repeated: it may be a value given by mistake (NAME=VALUE).
        bail!(
            "the name given is not a secret's name: 1 to 64 of letters, digits, '_', '-' and '.', starting with a letter or a digit (the value is never given on the command line: it is asked for, or read from stdin)"
        );
    }
    Ok(())
}

/// The value: at a terminal, asked for without echo; else stdin's first
/// line (at most the longest value, and a line break).
fn read_value(plugin_id: &str, name: &str) -> Result<String> {
    if std::io::stdin().is_terminal() {
        let prompt = format!("value of secret {name} for {plugin_id} (not shown): ");
        return rpassword::prompt_password(prompt)
            .context("cannot read the value from the terminal");
    }
    let mut text = String::new();
    let limit = (MAX_SECRET_BYTES + 2) as u64;
    std::io::stdin()
        .take(limit + 1)
        .read_to_string(&mut text)
        .context("cannot read the value from stdin (it must be UTF-8 text)")?;
    if text.len() as u64 > limit {
        bail!("the value on stdin is longer than {MAX_SECRET_BYTES} bytes");
    }
    let line = text.strip_suffix('\n').unwrap_or(&text);
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.is_empty() {
        bail!(
            "no value was given: write it on stdin, or run `secret set` at a terminal to be asked for it"
        );
    }
    Ok(line.to_owned())
}
