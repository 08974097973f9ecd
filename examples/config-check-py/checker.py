"""The checking itself, plain Python with no SDK: walk a file or folder, parse
every ``.toml`` and ``.json`` file with the standard library (``tomllib``,
``json``) and report ``ok`` or the parse error with its line and column.

Runs natively too (``python3 checker.py PATH``), which is how it is tested.
"""

import json
import os
import re
import sys
import tomllib

#: Folders never entered (besides hidden ones, whose name starts with ".").
SKIPPED_DIRS = frozenset({"target", "node_modules"})
#: Files larger than this are reported as skipped, not parsed.
MAX_FILE_BYTES = 4 * 1024 * 1024
#: JSON files that are JSON-with-comments by convention (parsed leniently).
JSONC_NAMES = re.compile(r"^(tsconfig|jsconfig)(\..*)?\.json$|\.jsonc$")

#: Deepest JSON nesting parsed. CPython's C JSON parser recurses once per
#: level, and in the sandbox a few thousand levels exhaust the WebAssembly
#: stack (a trap that restarts the plugin, not a RecursionError).
MAX_JSON_DEPTH = 500

_TOML_POSITION = re.compile(r"^(.*) \(at line (\d+), column (\d+)\)$")
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _position(text, index):
    """(line, column) of ``text[index]``, both counted from 1."""
    return text.count("\n", 0, index) + 1, index - text.rfind("\n", 0, index)


def too_deep(text):
    """``None``, or ``(message, line, column)`` where JSON ``text`` nests
    deeper than :data:`MAX_JSON_DEPTH`."""
    depth = 0
    for token in _JSON_TOKENS.finditer(text):
        ch = token.group()[0]
        if ch in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                line, column = _position(text, token.start())
                return f"nested deeper than {MAX_JSON_DEPTH} levels (not parsed)", line, column
        elif ch in "]}":
            depth -= 1
    return None


def kind_of(name):
    """``"toml"``, ``"json"``, ``"jsonc"`` or ``None`` for a file name."""
    lower = name.lower()
    if lower.endswith(".toml"):
        return "toml"
    if JSONC_NAMES.search(lower):
        return "jsonc"
    if lower.endswith(".json"):
        return "json"
    return None


def strip_jsonc(text):
    """``text`` with ``//`` and ``/* */`` comments and trailing commas turned
    into spaces, so that line and column numbers stay right."""
    out = list(text)
    i, n = 0, len(text)
    in_string = False
    last_comma = None  # index of a comma that may turn out to be trailing
    while i < n:
        ch = text[i]
        if in_string:
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                in_string = False
        elif ch == '"':
            in_string, last_comma = True, None
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for j in range(i, end):
                if out[j] != "\n":
                    out[j] = " "
            i = end
            continue
        elif ch == ",":
            last_comma = i
        elif ch in "}]":
            if last_comma is not None:
                out[last_comma] = " "
            last_comma = None
        elif not ch.isspace():
            last_comma = None
        i += 1
    return "".join(out)


def check_text(text, kind):
    """``None`` if ``text`` parses as ``kind``, else ``(message, line, column)``
    (line and column count from 1)."""
    try:
        if kind == "toml":
            tomllib.loads(text)
        else:
            text = strip_jsonc(text) if kind == "jsonc" else text
            deep = too_deep(text)
            if deep is not None:
                return deep
            json.loads(text)
        return None
    except json.JSONDecodeError as e:
        return e.msg, e.lineno, e.colno
    except RecursionError:
        return "nested too deeply to parse", None, None
    except tomllib.TOMLDecodeError as e:
        if getattr(e, "lineno", None) is not None:  # Python 3.14+
            return e.msg, e.lineno, e.colno
        match = _TOML_POSITION.match(str(e))  # older: "msg (at line L, column C)"
        if match:
            return match.group(1), int(match.group(2)), int(match.group(3))
        return str(e), None, None


def check_file(path, display):
    """The report entry of one file (``display`` is the name to show)."""
    entry = {"file": display, "format": kind_of(os.path.basename(path)), "status": "ok"}
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            entry.update(status="skipped", message=f"larger than {MAX_FILE_BYTES >> 20} MiB")
            return entry
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
    except UnicodeDecodeError as e:
        entry.update(status="error", message=f"not UTF-8 text: {e.reason} at byte {e.start}")
        return entry
    except OSError as e:
        entry.update(status="error", message=f"cannot read: {e.strerror or e}")
        return entry
    problem = check_text(text, entry["format"])
    if problem is not None:
        message, line, column = problem
        entry.update(status="error", message=message)
        if line is not None:
            entry.update(line=line, column=column)
    return entry


def candidates(path):
    """The config files under ``path`` (a file, or a folder walked in sorted
    order without hidden, ``target`` and ``node_modules`` folders)."""
    if not os.path.isdir(path):
        yield path
        return
    for folder, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        for name in sorted(files):
            if kind_of(name):
                yield os.path.join(folder, name)


def check_tree(path, max_files, base=None):
    """The report for ``path``: ``{"path", "checked", "errors", "truncated",
    "files": [...]}``. File names are shown relative to ``base`` (default:
    ``path`` itself, or its folder for a file)."""
    path = os.path.abspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file or folder: {path}")
    if base is None or os.path.commonpath([base, path]) != os.path.abspath(base):
        base = path if os.path.isdir(path) else os.path.dirname(path)
    files, truncated = [], False
    for file in candidates(path):
        if len(files) >= max_files:
            truncated = True
            break
        files.append(check_file(file, os.path.relpath(file, base)))
    return {
        "path": path,
        "checked": len(files),
        "errors": sum(1 for f in files if f["status"] == "error"),
        "truncated": truncated,
        "files": files,
    }


def summary(report):
    """A short text summary of a report, for people."""
    where = report["path"]
    lines = []
    if report["checked"] == 0:
        lines.append(f"No TOML or JSON files under {where}.")
    elif report["errors"] == 0:
        lines.append(f"All {report['checked']} config files under {where} are valid.")
    else:
        lines.append(f"{report['errors']} of {report['checked']} config files under {where} "
                     "do not parse:")
        for f in report["files"]:
            if f["status"] == "error":
                at = f":{f['line']}:{f['column']}" if "line" in f else ""
                lines.append(f"  {f['file']}{at}: {f['message']}")
    skipped = [f["file"] for f in report["files"] if f["status"] == "skipped"]
    if skipped:
        lines.append(f"Skipped (too large): {', '.join(skipped)}")
    if report["truncated"]:
        lines.append(f"Stopped after {report['checked']} files; check a sub-folder for the rest.")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(check_tree(sys.argv[1] if len(sys.argv) > 1 else ".", 1000)))
