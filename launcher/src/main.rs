//! `lingxi-wasm-run`: runs a LingXi plugin component in a sandbox and speaks
//! the LingXi JSON-Lines protocol on stdin/stdout, so a LingXi host can drive
//! it like any native plugin. It also packs a component into one native
//! executable (`pack`) that runs with no arguments, serves it over the
//! Model Context Protocol (`mcp`), and exports it as an Agent Plugins
//! package (`export`).

mod base;
mod call;
mod check;
mod cli;
mod cross;
mod executable;
mod export;
mod fetch;
mod grants;
mod install;
mod learn;
mod load;
mod new;
mod packed;
mod push;
mod requests;
mod secret;
mod signing;

use anyhow::{Context, Result};
use clap::Parser;
use lingxi_wasm_host::pack;
use lingxi_wasm_host::{CompileCache, Runtime};
use lingxi_wasm_launcher::serve::{
    init_logging, one_line, quiet_on_closed_pipe, serve, silence_stdout, tokio,
};
use lingxi_wasm_launcher::{mcp, record};

use std::path::PathBuf;

use crate::cli::{CacheArgs, Cli, Command};

fn main() {
    let logs = init_logging();
    // A packed executable carries its plugin: serve it, whatever the name.
    let result = match pack::read_self().map_err(anyhow::Error::from) {
        Ok(Some(plugin)) => packed::run(plugin),
        // Spawned bare but nothing embedded: most likely a packed plugin
        // whose end was cut off. Say so instead of printing usage.
        // A plain launcher run bare: say how to use it.
        Ok(None) if std::env::args_os().len() == 1 && is_the_launcher() => run(Cli::parse()),
        Ok(None) if std::env::args_os().len() == 1 => Err(anyhow::anyhow!(
            "no plugin is embedded in {} and no component was given; run `lingxi-wasm-run <COMPONENT>`, or reinstall the packed plugin (its end may have been cut off)",
            std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        )),
        Ok(None) => run(Cli::parse()),
        Err(error) => Err(error),
    };
    // Writes out the logs still queued before anything else is said. The
    // guard prints to stdout if the log thread is stuck on a full stderr
    // pipe: nothing may reach the protocol channel after our last response.
    silence_stdout();
    drop(logs);
    if let Err(error) = result {
        if error.is::<check::Failed>() {
            std::process::exit(1);
        }
        if let Some(Exit(code)) = error.downcast_ref::<Exit>() {
            std::process::exit(*code);
        }
        eprintln!("lingxi-wasm-run: error: {}", one_line(&error));
        std::process::exit(1);
    }
}

/// Whether this executable is named as the launcher (not as a plugin a
/// LingXi host starts, which is always named after the plugin id).
fn is_the_launcher() -> bool {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_stem().map(|s| s == "lingxi-wasm-run"))
        .unwrap_or(false)
}

/// Ends the process with this status, after saying what there was to say.
#[derive(Debug, thiserror::Error)]
#[error("exit status {0}")]
struct Exit(i32);

fn run(cli: Cli) -> Result<()> {
    // `record` and `replay` write to a plugin that may be gone: a closed
    // pipe must be an error they handle, not a signal that ends them.
    let proxies = matches!(
        cli.command,
        Some(Command::Record { .. } | Command::Replay { .. })
    );
    if cli.command.is_some() && !proxies {
        quiet_on_closed_pipe();
    }
    let tokio = tokio()?;
    match cli.command {
        Some(Command::Pack {
            component,
            output,
            pack:
                cli::PackArgs {
                    sign,
                    base,
                    target,
                    grants,
                    cache,
                },
            registry,
        }) => {
            let key = sign.as_deref().map(signing::load_secret_key).transpose()?;
            let spec = grants.spec()?;
            let fetched = fetch::fetch(&tokio, &component, &registry, fetch::Tags::FromRegistry)?;
            let options = packed::PackOptions {
                signing: key
                    .as_ref()
                    .map_or(packed::Signing::None, packed::Signing::Key),
                record: None,
                base: base.as_deref(),
                target: target.as_deref(),
                origin: fetched.origin(),
            };
            packed::pack(&tokio, &runtime(&cache)?, &fetched, &output, spec, options)
        }
        Some(Command::Push {
            component,
            reference,
            sign,
            registry,
        }) => {
            let key = sign.as_deref().map(signing::load_secret_key).transpose()?;
            let push = push::Push {
                input: &component,
                reference: &reference,
                key: key.as_ref(),
                registry: &registry,
            };
            push::push(&tokio, push)
        }
        Some(Command::Secret { action }) => secret::run(action),
        Some(Command::Record { out, plugin }) => match record::record(&out, &plugin)? {
            0 => Ok(()),
            code => Err(Exit(code).into()),
        },
        Some(Command::Replay {
            file,
            mask,
            timeout,
            plugin,
        }) => {
            let Some(timeout) = std::time::Duration::try_from_secs_f64(timeout)
                .ok()
                .filter(|t| !t.is_zero() && t.as_secs() <= 86_400)
            else {
                eprintln!(
                    "lingxi-wasm-run: error: --timeout takes seconds, more than 0 and at most 86400"
                );
                return Err(Exit(2).into());
            };
            let args = record::ReplayArgs {
                file,
                plugin,
                masks: mask,
                timeout,
            };
            match record::replay(args) {
                Ok(true) => Ok(()),
                Ok(false) => Err(Exit(1).into()),
                Err(e) => {
                    eprintln!("lingxi-wasm-run: error: {}", one_line(&e));
                    Err(Exit(2).into())
                }
            }
        }
        Some(Command::Keygen {
            output,
            no_password,
        }) => signing::keygen(&output, no_password),
        Some(Command::Call {
            plugin,
            target,
            args,
            hook,
            json,
            effects,
            grants,
            cache,
            compiler,
            registry,
        }) => {
            let flags = grants.any().then(|| grants.spec()).transpose()?;
            let target = call::Target::parse(hook, target, args)?;
            let plugin = fetch::fetch(&tokio, &plugin, &registry, fetch::Tags::FromStore)?.path;
            let output = call::Output {
                json,
                effects: effects.as_deref(),
            };
            let runtime = runtime_with(&cache, compiler.compiler)?;
            call::call(tokio, &runtime, &plugin, flags, target, output)
        }
        Some(Command::Learn {
            plugin,
            call,
            command,
            replay,
            output,
            force,
            grants,
            cache,
            compiler,
            registry,
        }) => {
            let flags = grants.any().then(|| grants.spec()).transpose()?;
            let plugin = fetch::fetch(&tokio, &plugin, &registry, fetch::Tags::FromStore)?.path;
            let learn = learn::Learn {
                plugin: &plugin,
                ceiling: flags,
                steps: learn_steps(call, command, replay),
                output: &output,
                force,
            };
            learn::learn(tokio, &runtime_with(&cache, compiler.compiler)?, learn)
        }
        Some(Command::Mcp {
            plugin,
            http,
            grants,
            cache,
            compiler,
            registry,
        }) => {
            let http = http.options()?;
            let flags = grants.any().then(|| grants.spec()).transpose()?;
            let runtime = runtime_with(&cache, compiler.compiler)?;
            let (plugins, spec) = match plugin {
                // A folder: the flags grant every plugin in it.
                fetch::PluginSource::File(dir) if dir.is_dir() => {
                    (mcp::Plugins::Folder(dir), flags.unwrap_or_default())
                }
                plugin => {
                    let plugin =
                        fetch::fetch(&tokio, &plugin, &registry, fetch::Tags::FromStore)?.path;
                    let (component, spec) =
                        load::component_or_packed(&tokio, &runtime, &plugin, flags)?;
                    (mcp::Plugins::One(Box::new(component)), spec)
                }
            };
            mcp::serve(tokio, runtime, plugins, &spec, http)
        }
        Some(Command::Export {
            input,
            format: cli::ExportFormat::AgentPlugin,
            output,
            accept_new_grants,
            keep_grants,
            mcp_url,
            pack:
                cli::PackArgs {
                    sign,
                    base,
                    target,
                    grants,
                    cache,
                },
            registry,
        }) => {
            let key = sign.as_deref().map(signing::load_secret_key).transpose()?;
            let runtime = runtime(&cache)?;
            let input = fetch::fetch(&tokio, &input, &registry, fetch::Tags::FromRegistry)?;
            let export = export::Export {
                runtime: &runtime,
                accept_new_grants,
                target: target.as_deref(),
                input: &input,
                output: &output,
                grants: grants::Grants::choose(keep_grants, &grants)?,
                key: key.as_ref(),
                base: base.as_deref(),
                mcp_url: mcp_url.as_deref(),
            };
            export::export(&tokio, export)
        }
        Some(Command::Inspect {
            file,
            cache,
            trust,
            registry,
        }) => {
            let fetched = fetch::fetch(&tokio, &file, &registry, fetch::Tags::FromStore)?;
            packed::inspect(&tokio, &fetched, &runtime(&cache)?, &trust.load()?)
        }
        Some(Command::Check {
            file,
            json,
            cache,
            compiler,
            registry,
        }) => {
            let file = fetch::fetch(&tokio, &file, &registry, fetch::Tags::FromStore)?.path;
            let settings = lingxi_wasm_host::RuntimeConfig {
                cache: compile_cache(&cache)?,
                compiler: compiler.compiler,
                ..Default::default()
            };
            check::check(&tokio, &file, json, settings)
        }
        Some(Command::New {
            dir,
            lang,
            id,
            name,
            sdk,
        }) => new::new(new::NewArgs {
            dir,
            lang,
            id,
            name,
            sdk,
        }),
        Some(Command::Install {
            input,
            project,
            force,
            accept_new_grants,
            keep_grants,
            signed_only,
            record,
            trust,
            grants,
            cache,
            registry,
        }) => install::install(
            &tokio,
            &runtime(&cache)?,
            &fetch::fetch(&tokio, &input, &registry, fetch::Tags::FromRegistry)?,
            install::Options {
                project: project.as_deref(),
                force,
                grants: grants::Grants::choose(keep_grants, &grants)?,
                trust: trust.load()?,
                signed_only,
                record: record.as_deref(),
                accept_new_grants,
            },
        ),
        Some(Command::List { project, trust }) => {
            let here = std::env::current_dir().ok();
            install::list(project.as_deref().or(here.as_deref()), &trust.load()?)
        }
        Some(Command::Uninstall {
            id,
            project,
            purge,
            data_root,
        }) => install::uninstall(&id, project.as_deref(), purge, data_root.as_deref()),
        None => {
            let component = cli.component.context("no component given")?;
            let component_path =
                fetch::fetch(&tokio, &component, &cli.registry, fetch::Tags::FromStore)?.path;
            let runtime = runtime_with(&cli.cache, cli.compiler.compiler)?;
            let component = tokio.block_on(runtime.load_file(&component_path))?;
            serve(tokio, component, &cli.grants.spec()?, None)
        }
    }
}

/// `learn`'s steps in the order the command line gives them (clap keeps
/// each flag's values apart; their positions say the order).
fn learn_steps(call: Vec<String>, command: Vec<String>, replay: Vec<PathBuf>) -> Vec<learn::Step> {
    use clap::CommandFactory;
    let matches = Cli::command().get_matches_from(std::env::args_os());
    let positions = |id: &str, every: usize| -> Vec<usize> {
        matches
            .subcommand_matches("learn")
            .and_then(|m| m.indices_of(id))
            .map(|i| i.step_by(every).collect())
            .unwrap_or_default()
    };
    let mut steps: Vec<(usize, learn::Step)> = Vec::new();
    let calls = call.chunks_exact(2).map(|pair| learn::Step::Call {
        tool: pair[0].clone(),
        arguments: pair[1].clone(),
    });
    steps.extend(positions("call", 2).into_iter().zip(calls));
    let commands = command.into_iter().map(learn::Step::Command);
    steps.extend(positions("command", 1).into_iter().zip(commands));
    let replays = replay.into_iter().map(learn::Step::Replay);
    steps.extend(positions("replay", 1).into_iter().zip(replays));
    steps.sort_by_key(|(at, _)| *at);
    steps.into_iter().map(|(_, step)| step).collect()
}

/// The engine with the compile cache the flags ask for.
fn runtime(cache: &CacheArgs) -> Result<Runtime> {
    runtime_with(cache, lingxi_wasm_host::Compiler::default())
}

/// The engine with the compile cache the flags ask for, compiling with
/// `compiler` (`--compiler`, on the commands that run what they compile).
fn runtime_with(cache: &CacheArgs, compiler: lingxi_wasm_host::Compiler) -> Result<Runtime> {
    let settings = lingxi_wasm_host::RuntimeConfig {
        cache: compile_cache(cache)?,
        compiler,
        ..Default::default()
    };
    Runtime::with_config(settings).with_context(|| match compiler {
        lingxi_wasm_host::Compiler::Winch => {
            "cannot build Winch's engine on this platform: use --compiler cranelift".to_owned()
        }
        lingxi_wasm_host::Compiler::Cranelift => "cannot build the engine".to_owned(),
    })
}

/// The compile cache the flags name, if any.
fn compile_cache(cache: &CacheArgs) -> Result<Option<CompileCache>> {
    Ok(match (cache.no_cache, &cache.cache_dir) {
        (true, _) => None,
        (false, Some(dir)) => Some(CompileCache::new(std::path::absolute(dir).with_context(
            || format!("cannot resolve {}", lingxi_wasm_host::Setting::CacheDir),
        )?)),
        (false, None) => CompileCache::default_dir().map(CompileCache::new),
    })
}
