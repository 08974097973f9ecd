"""Loads an Agent Plugins 1.0.0 package the way a client must (spec §4-§9),
with Lime Plugin v3's stricter rules, and says how to start its MCP server.

Checked: `plugin.json` and `mcp.json` against the published schemas (vendored
in tests/agent-plugins/schemas/1.0.0, never fetched), the exact `$schema`
identifiers, closed fields, the name rule, the version match between the two
files, containment of every package path after resolving links (`command`,
`cwd`, `skills/*/SKILL.md`), reserved names in `env`, and each skill's
frontmatter (Agent Skills: `name` equal to its folder, `description`).

Launch: PLUGIN_ROOT is the resolved root, PLUGIN_DATA is created and must be
writable, `${PLUGIN_ROOT}` and `${PLUGIN_DATA}` are replaced once (no
re-scan) in `args`, `env` values and `cwd` only, and `command` is one `./`
token resolved in the root, never expanded.
"""

import json
import os
import re

import jsonschema

PLUGIN_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"
MCP_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json"
PLACEHOLDER = re.compile(r"\$\{(PLUGIN_ROOT|PLUGIN_DATA)\}")
SKILL_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9]|-(?!-))*$")


class Loaded:
    def __init__(self):
        self.problems = []
        self.skills = []
        self.server = None
        self.command = None
        self.args = []
        self.env = {}
        self.cwd = None
        self.url = None
        self.manifest = None

    @property
    def ok(self):
        return not self.problems and (self.command is not None or self.url is not None)

    def report(self):
        return {
            "ok": self.ok,
            "problems": self.problems,
            "manifest": self.manifest,
            "skills": self.skills,
            "server": self.server,
            "launch": {"command": self.command, "args": self.args, "cwd": self.cwd, "env": self.env, "url": self.url},
        }


def inside(path, root):
    """Whether `path`, resolved, lies in `root` (resolved)."""
    real = os.path.realpath(path)
    return real == root or real.startswith(root + os.sep)


def read_json(path, root, what, loaded):
    if not inside(path, root):
        loaded.problems.append(f"{what} resolves outside the plugin root")
        return None
    if not os.path.isfile(path):
        loaded.problems.append(f"{what} is not a regular file")
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        loaded.problems.append(f"{what} is not JSON: {e}")
        return None


def validate(document, schema_file, what, loaded):
    with open(schema_file, encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema, format_checker=None)
    for error in sorted(validator.iter_errors(document), key=lambda e: list(e.path)):
        at = "/".join(str(p) for p in error.path) or "(top)"
        loaded.problems.append(f"{what} {at}: {error.message}")


def expand(text, values):
    """One pass of exact placeholder replacement; replaced text is not re-scanned."""
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def frontmatter(text):
    """The `key: value` pairs of a SKILL.md's YAML frontmatter (flat strings)."""
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---", 4)
    if end < 0:
        return None
    fields = {}
    for line in text[4:end].splitlines():
        if not line.strip() or line.startswith(" "):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            return None
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = json.loads(value) if value[0] == '"' else value[1:-1]
        fields[key.strip()] = value
    return fields


def http_url_problem(url):
    """What breaks Lime's rules for a streamable-http URL, if anything: an
    absolute http(s) URL without userinfo or fragment, HTTPS unless the host
    is localhost or a loopback IP literal."""
    import ipaddress
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"url {url!r} is not an absolute HTTP or HTTPS URL"
    if "@" in parts.netloc or "#" in url:
        return f"url {url!r} has userinfo or a fragment"
    if parts.scheme == "http":
        try:
            loopback = ipaddress.ip_address(parts.hostname).is_loopback
        except ValueError:
            loopback = parts.hostname == "localhost"
        if not loopback:
            return f"url {url!r} is not HTTPS and its host is not loopback"
    return None


def load(package, data, schemas):
    loaded = Loaded()
    root = os.path.realpath(package)
    if not os.path.isabs(root) or not os.path.isdir(root):
        loaded.problems.append("the plugin root is not a folder")
        return loaded

    manifest = read_json(os.path.join(root, "plugin.json"), root, "plugin.json", loaded)
    if manifest is None:
        return loaded
    loaded.manifest = manifest
    if not isinstance(manifest, dict) or manifest.get("$schema") != PLUGIN_SCHEMA:
        loaded.problems.append(f"plugin.json: $schema must be exactly {PLUGIN_SCHEMA}")
        return loaded
    validate(manifest, os.path.join(schemas, "plugin.schema.json"), "plugin.json", loaded)
    extensions = manifest.get("extensions", {})
    for namespace in extensions if isinstance(extensions, dict) else []:
        if not re.match(r"^[a-z0-9-]+(\.[a-z0-9-]+)+$", namespace):
            loaded.problems.append(f"plugin.json: extension namespace {namespace!r} is not reverse-domain")

    mcp = read_json(os.path.join(root, "mcp.json"), root, "mcp.json", loaded)
    if mcp is None:
        return loaded
    if not isinstance(mcp, dict) or mcp.get("$schema") != MCP_SCHEMA:
        loaded.problems.append(f"mcp.json: $schema must be exactly {MCP_SCHEMA} (the version of plugin.json's)")
        return loaded
    validate(mcp, os.path.join(schemas, "mcp.schema.json"), "mcp.json", loaded)
    servers = mcp.get("mcpServers", {})
    if len(servers) != 1:
        loaded.problems.append(f"mcp.json: expected one server, found {len(servers)}")
        return loaded
    (name, entry), = servers.items()
    loaded.server = name
    if entry.get("type") == "streamable-http":
        url_problem = http_url_problem(entry.get("url", ""))
        if url_problem:
            loaded.problems.append(f"mcp.json: server {name}: {url_problem}")
        else:
            loaded.url = entry["url"]
        return loaded
    if entry.get("type") != "stdio":
        loaded.problems.append(f"mcp.json: server {name} is neither a stdio nor a streamable-http server")
        return loaded
    env = entry.get("env", {})
    for key in env:
        if key.upper() in ("PLUGIN_ROOT", "PLUGIN_DATA"):
            loaded.problems.append(f"mcp.json: env of {name} sets the reserved {key}")

    skills_dir = os.path.join(root, "skills")
    if os.path.lexists(skills_dir):
        if not inside(skills_dir, root) or not os.path.isdir(skills_dir):
            loaded.problems.append("skills/ is not a folder inside the plugin root")
        else:
            for child in sorted(os.listdir(skills_dir)):
                path = os.path.join(skills_dir, child, "SKILL.md")
                if not os.path.lexists(path):
                    continue
                if not inside(path, root) or not os.path.isfile(path):
                    loaded.problems.append(f"skills/{child}/SKILL.md is not a regular file inside the root")
                    continue
                with open(path, encoding="utf-8") as f:
                    fields = frontmatter(f.read())
                if fields is None:
                    loaded.problems.append(f"skills/{child}/SKILL.md has no frontmatter")
                    continue
                skill_name, description = fields.get("name", ""), fields.get("description", "")
                if skill_name != child or not 1 <= len(skill_name) <= 64 or not SKILL_NAME.match(skill_name) \
                        or skill_name.endswith("-"):
                    loaded.problems.append(f"skills/{child}: name {skill_name!r} breaks the Agent Skills name rule")
                if not 1 <= len(description) <= 1024:
                    loaded.problems.append(f"skills/{child}: description must be 1-1024 characters")
                loaded.skills.append({"name": skill_name, "description": description})

    if loaded.problems:
        return loaded

    # Launch as §7.2 and §9 say.
    os.makedirs(data, exist_ok=True)
    data = os.path.realpath(data)
    probe = os.path.join(data, ".writable")
    with open(probe, "w") as f:
        f.write("ok")
    os.remove(probe)
    values = {"PLUGIN_ROOT": root, "PLUGIN_DATA": data}

    command = entry["command"]
    if not command.startswith("./"):
        loaded.problems.append(f"mcp.json: a packaged binary must be a ./ command, not {command!r}")
        return loaded
    command_path = os.path.join(root, command[2:])
    if not inside(command_path, root):
        loaded.problems.append(f"mcp.json: command {command!r} resolves outside the plugin root")
        return loaded
    if not os.path.isfile(command_path) or not os.access(command_path, os.X_OK):
        loaded.problems.append(f"mcp.json: command {command!r} is not an executable file")
        return loaded

    cwd = entry.get("cwd", "./")
    expanded = expand(cwd, values)
    if cwd.startswith("./"):
        cwd_path, base = os.path.join(root, cwd[2:]), root
    elif cwd.startswith("${PLUGIN_DATA}"):
        cwd_path, base = expanded, data
    else:
        cwd_path, base = expanded, root
    if not inside(cwd_path, base) or not os.path.isdir(cwd_path):
        loaded.problems.append(f"mcp.json: cwd {cwd!r} is not a folder inside its base")
        return loaded

    loaded.command = os.path.realpath(command_path)
    loaded.args = [expand(a, values) for a in entry.get("args", [])]
    loaded.env = {k: expand(v, values) for k, v in env.items()} | values
    loaded.cwd = os.path.realpath(cwd_path)
    return loaded
