//! `export --format agent-plugin`: a plugin as an Agent Plugins 1.0.0
//! package that Lime Plugin v3 (and any Agent Plugins client) loads: its
//! `plugin.json`, an `mcp.json` with one stdio server (the packed plugin,
//! started with `mcp`), and a skill telling a model what its tools are for.
//!
//! ```text
//! DIR/plugin.json            $schema, name, version, description, author,
//!                            extensions."dev.lingxi-wasm" (declared, granted)
//! DIR/mcp.json               {"NAME": {"type": "stdio", "command": "./bin/NAME",
//!                             "args": ["mcp"], "cwd": "${PLUGIN_DATA}"}}
//!                            (with --mcp-url URL: {"NAME": {"type":
//!                             "streamable-http", "url": URL}})
//! DIR/bin/NAME               the packed plugin, with its grants
//! DIR/skills/SKILL/SKILL.md  what the tools and prompts are for
//! ```

use std::path::Path;

use anyhow::{Context, Result, bail};
use lingxi_wasm_host::pack::PackHeader;
use lingxi_wasm_host::types::Manifest;
use lingxi_wasm_host::{Catalog, PluginOptions, PluginSet, Policy, PolicySpec, Runtime, printable};
use serde_json::{Value, json};

use crate::executable::write_executable;
use crate::grants::{Grants, chosen, describe, no_silent_escalation};
use crate::packed::{self, PackOptions, Signing};

/// `$schema` of `plugin.json`, exactly as Lime requires it.
pub const PLUGIN_SCHEMA: &str = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json";
/// `$schema` of `mcp.json`, of the same version.
pub const MCP_SCHEMA: &str = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json";
/// The one `extensions` namespace the package uses.
pub const NAMESPACE: &str = "dev.lingxi-wasm";

/// What `export` is asked.
pub struct Export<'a> {
    /// The engine, with the compile cache the flags name.
    pub runtime: &'a Runtime,
    pub input: &'a crate::fetch::Fetched,
    pub output: &'a Path,
    pub grants: Grants,
    pub key: Option<&'a minisign::SecretKey>,
    pub base: Option<&'a Path>,
    /// The platform the packed plugin is for (`--target`), if not this one.
    pub target: Option<&'a str>,
    /// Update an earlier export even if this one could reach more.
    pub accept_new_grants: bool,
    /// The URL of the plugin served over streamable HTTP, to name instead
    /// of the stdio server.
    pub mcp_url: Option<&'a str>,
}

/// Writes the package.
pub fn export(tokio: &tokio::runtime::Runtime, export: Export) -> Result<()> {
    let out = export.output;
    if let Some(url) = export.mcp_url {
        check_url(url)?;
    }
    let previous = previous_export(out)?;
    let file = lingxi_wasm_host::read_plugin_file(&export.input.path)?;
    let existing = lingxi_wasm_host::pack::parse_bytes(&export.input.path, &file)?;
    let shown = export.input.shown();
    let (component, spec) = chosen(&shown, file, existing, export.grants)?;
    let options = PackOptions {
        signing: export.key.map_or(Signing::None, Signing::Key),
        record: None,
        base: export.base,
        target: export.target,
        origin: export.input.origin(),
    };
    let (header, bytes, loaded) = packed::pack_loaded(
        tokio,
        export.runtime,
        &component,
        &shown,
        spec.clone(),
        options,
    )?;
    // An update of an earlier export: of the same plugin, and never
    // reaching more unless accepted.
    if let Some(previous) = &previous {
        if previous.plugin_id != header.plugin_id {
            bail!(
                "{} holds the package of another plugin ({}); give a new folder to write the package into",
                out.display(),
                printable(&previous.plugin_id)
            );
        }
        no_silent_escalation(
            out,
            Some(previous),
            &header,
            export.accept_new_grants,
            "exported",
        )?;
    }
    // What it registers, asked in a sandbox with nothing granted.
    let manifest = loaded.manifest().clone();
    let mut set = PluginSet::new(export.runtime.clone());
    tokio
        .block_on(set.add(loaded, &shown, PluginOptions::default()))
        .context("cannot ask the plugin what it registers")?;
    let catalog = set.catalog();

    let name = package_name(&manifest.id);
    let platform = export
        .target
        .unwrap_or(lingxi_wasm_launcher::identity::TARGET);
    let file = lingxi_wasm_launcher::identity::exe_name_for(&name, platform);
    let (grant, _) = spec.resolve_from_environment()?;
    let granted = Policy::decide(
        &lingxi_wasm_host::convert::capabilities(&manifest.capabilities),
        &grant,
    );
    let files = [
        (
            "plugin.json".to_owned(),
            pretty(&plugin_json(
                &name,
                &manifest,
                &header.declared,
                granted.effective(),
                &spec,
            ))?,
        ),
        (
            "mcp.json".to_owned(),
            pretty(&mcp_json(&name, &file, export.mcp_url))?,
        ),
        (
            format!("skills/{}/SKILL.md", skill_name(&name)),
            skill(&name, &manifest, &catalog),
        ),
    ];
    for (path, text) in &files {
        let path = out.join(path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let bin = out.join("bin");
    std::fs::create_dir_all(&bin).with_context(|| format!("cannot create {}", bin.display()))?;
    write_executable(&bin.join(&file), &bytes)?;
    println!(
        "exported {} {} as Agent Plugins package {} in {}",
        printable(&manifest.id),
        printable(&manifest.version),
        name,
        out.display()
    );
    for line in describe(&spec) {
        println!("  {line}");
    }
    Ok(())
}

/// The packed plugin of the package already in `out`, if `out` is one (an
/// earlier export); `None` if `out` is new or empty. Any other folder is
/// refused: the package is written into it.
fn previous_export(out: &Path) -> Result<Option<PackHeader>> {
    let empty = || {
        std::fs::read_dir(out)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false)
    };
    if !out.exists() || empty() {
        return Ok(None);
    }
    let not_a_package = || {
        anyhow::anyhow!(
            "{} exists and is neither an empty folder nor a package exported earlier; give a new folder to write the package into",
            out.display()
        )
    };
    if !out.join("plugin.json").is_file() {
        return Err(not_a_package());
    }
    let bin = std::fs::read_dir(out.join("bin")).map_err(|_| not_a_package())?;
    for entry in bin.flatten() {
        if let Ok(Some(packed)) = lingxi_wasm_host::pack::read(&entry.path()) {
            return Ok(Some(packed.header));
        }
    }
    Err(not_a_package())
}

fn pretty(value: &Value) -> Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

/// The package name of plugin `id`, within the spec's rule (1-64 of
/// `a-z 0-9 . -`, alphanumeric ends, no `--` or `..`): lower-cased, other
/// characters become `-`, runs collapse.
pub fn package_name(id: &str) -> String {
    let mut name = String::new();
    for c in id.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' {
            c
        } else {
            '-'
        };
        let last = name.chars().last();
        if (c == '-' || c == '.') && (last == Some(c) || last.is_none()) {
            continue;
        }
        name.push(c);
    }
    name.truncate(64);
    let name = name.trim_end_matches(['-', '.']).to_owned();
    if name.is_empty() {
        "plugin".to_owned()
    } else {
        name
    }
}

/// The skill's folder and name, within the Agent Skills rule (1-64 of
/// `a-z 0-9 -`, no leading, trailing or doubled `-`).
pub fn skill_name(package: &str) -> String {
    package_name(&package.replace('.', "-"))
}

fn plugin_json(
    name: &str,
    manifest: &Manifest,
    declared: &[String],
    effective: &[lingxi_wasm_policy::Capability],
    spec: &PolicySpec,
) -> Value {
    let mut out = json!({
        "$schema": PLUGIN_SCHEMA,
        "name": name,
        "version": manifest.version,
        "description": manifest.description,
    });
    if let Some(author) = &manifest.author {
        out["author"] = json!({ "name": author });
    }
    let granted: Vec<_> = effective.iter().map(|c| c.wire_name()).collect();
    out["keywords"] = json!(["lingxi", "wasm", "sandboxed"]);
    out["extensions"] = json!({
        NAMESPACE: {
            "pluginId": manifest.id,
            "displayName": manifest.name,
            "declared": declared,
            "granted": granted,
            // Its data directory is the host's PLUGIN_DATA, not a data root.
            "grants": describe(spec)
                .into_iter()
                .filter(|line| !line.starts_with(lingxi_wasm_host::Setting::DataRoot.key()))
                .collect::<Vec<_>>(),
            "storage": if spec.no_storage { "none" } else { "PLUGIN_DATA" },
            "packedBy": concat!("lingxi-wasm-run ", env!("CARGO_PKG_VERSION")),
        }
    });
    out
}

/// `file` is the executable's name in `bin/` (`NAME`, or `NAME.exe` for
/// Windows); `url`, where it serves over HTTP, if it does.
fn mcp_json(name: &str, file: &str, url: Option<&str>) -> Value {
    let server = match url {
        Some(url) => json!({"type": "streamable-http", "url": url}),
        None => json!({
            "type": "stdio",
            "command": format!("./bin/{file}"),
            "args": ["mcp"],
            "cwd": "${PLUGIN_DATA}",
        }),
    };
    json!({"$schema": MCP_SCHEMA, "mcpServers": {name: server}})
}

/// Lime's rules for a `streamable-http` URL: absolute HTTP or HTTPS, no
/// userinfo, no fragment, HTTPS unless the host is `localhost` or a
/// loopback IP literal.
fn check_url(url: &str) -> Result<()> {
    let bad = |why: &str| anyhow::anyhow!("--mcp-url {url}: {why}");
    let parsed = http::Uri::try_from(url).map_err(|e| bad(&format!("not a URL ({e})")))?;
    let (Some(scheme), Some(authority)) = (parsed.scheme_str(), parsed.authority()) else {
        return Err(bad(
            "not an absolute URL; give one like https://mcp.example.com/mcp",
        ));
    };
    if !matches!(scheme, "http" | "https") {
        return Err(bad("not an HTTP or HTTPS URL"));
    }
    if authority.as_str().contains('@') || url.contains('#') {
        return Err(bad(
            "a URL in a package may have no user name or password, and no fragment",
        ));
    }
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let loopback = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if scheme == "http" && !loopback {
        return Err(bad(
            "off loopback it must be HTTPS (put a TLS proxy in front of `mcp --http`)",
        ));
    }
    Ok(())
}

/// The skill: when to use the plugin, and each tool and prompt with what it
/// is for. Plugin text is made printable; the frontmatter's values are
/// JSON-quoted (valid YAML), so no description can end it early.
fn skill(name: &str, manifest: &Manifest, catalog: &Catalog) -> String {
    let p = |text: &str| printable(text).into_owned();
    let mut description = format!(
        "Use the tools of {} (MCP server {name}): {}",
        p(&manifest.name),
        p(&manifest.description)
    );
    if description.chars().count() > 1024 {
        description = description.chars().take(1021).collect::<String>() + "...";
    }
    let mut out = format!(
        "---\nname: {}\ndescription: {}\n---\n\n# {}\n\n{}\n\n",
        skill_name(name),
        json!(description),
        p(&manifest.name),
        p(&manifest.description)
    );
    out.push_str(&format!(
        "These tools come from the MCP server `{name}` of this package: the LingXi plugin `{}` {}, run in a WebAssembly sandbox by lingxi-wasm. It reaches only what its user granted; a file or network access outside its grants is refused, the server's log names the setting that would allow it, and a call that fails because of it says so in its error (`refused by the sandbox: …; allow it with …`).\n",
        p(&manifest.id),
        p(&manifest.version)
    ));
    if !catalog.tools.is_empty() {
        out.push_str("\n## Tools\n");
    }
    for tool in &catalog.tools {
        let d = &tool.descriptor;
        out.push_str(&format!(
            "\n### `{}`\n\n{}\n",
            p(&d.name),
            p(&d.description)
        ));
        if let Ok(Value::Object(schema)) = serde_json::from_str::<Value>(&d.input_schema)
            && let Some(Value::Object(properties)) = schema.get("properties")
            && !properties.is_empty()
        {
            out.push_str("\nArguments (a JSON object):\n");
            for (key, value) in properties {
                let about = value
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let kind = value.get("type").and_then(Value::as_str).unwrap_or("any");
                out.push_str(&format!("- `{}` ({kind}): {}\n", p(key), p(about)));
            }
        }
        if tool.annotations.requires_approval {
            out.push_str("\nNot served over MCP: it asks its user's approval before each call.\n");
        }
    }
    if !catalog.commands.is_empty() {
        out.push_str("\n## Prompts\n\nThe plugin's slash commands, as MCP prompts (one argument, `arguments`, the text typed after the command):\n\n");
    }
    for command in &catalog.commands {
        let d = &command.descriptor;
        out.push_str(&format!("- `{}`: {}\n", p(&d.name), p(&d.description)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_urls_keep_to_limes_rules() {
        for good in [
            "https://mcp.example.com/mcp",
            "http://localhost:8080/mcp",
            "http://127.0.0.1:9/mcp",
            "http://[::1]:9/mcp",
        ] {
            assert!(check_url(good).is_ok(), "{good}");
        }
        let cases = [
            ("http://mcp.example.com/mcp", "HTTPS"),
            ("https://user:pw@mcp.example.com/mcp", "user name"),
            ("https://mcp.example.com/mcp#top", "fragment"),
            ("/mcp", "absolute"),
            ("ftp://mcp.example.com/mcp", "HTTP or HTTPS"),
            ("http://127.0.0.1.example.com/mcp", "HTTPS"),
        ];
        for (url, said) in cases {
            let error = check_url(url).unwrap_err().to_string();
            assert!(error.contains(said), "{url}: {error}");
        }
    }

    #[test]
    fn names_keep_to_the_package_and_skill_rules() {
        let cases = [
            (
                "com.lingxi.test-probe",
                "com.lingxi.test-probe",
                "com-lingxi-test-probe",
            ),
            ("Com.Example..X__Y", "com.example.x-y", "com-example-x-y"),
            ("-.lead.", "lead", "lead"),
            ("___", "plugin", "plugin"),
            ("a.-b", "a.-b", "a-b"),
        ];
        for (id, package, skill) in cases {
            assert_eq!(package_name(id), package, "{id}");
            assert_eq!(skill_name(&package_name(id)), skill, "{id}");
        }
        let long = package_name(&"ab-".repeat(40));
        assert!(
            long.len() <= 64 && long.ends_with(|c: char| c.is_ascii_alphanumeric()),
            "{long}"
        );
        // The spec's pattern, checked by hand: alphanumeric ends, no runs.
        for id in ["x", "UPPER", "a..b--c", "日本.plugin", "a-.-b"] {
            let name = package_name(id);
            assert!(!name.contains("--") && !name.contains(".."), "{name}");
            assert!(
                name.starts_with(|c: char| c.is_ascii_alphanumeric()),
                "{name}"
            );
            assert!(
                name.ends_with(|c: char| c.is_ascii_alphanumeric()),
                "{name}"
            );
        }
    }
}
