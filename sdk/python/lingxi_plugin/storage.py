"""Persistent per-plugin storage: a key-value store in the plugin's private
data directory, which the host keeps across restarts and upgrades and bounds
with a size quota (past it, the directory is read-only).

The layout is the Rust SDK's, byte for byte, so a plugin can move between
languages and keep its data: values live in files under ``<data dir>/kv/``,
one per key. Keys are encoded into safe file names (every byte of the key's
UTF-8 but ``A-Z a-z 0-9 _ -`` becomes ``%XX``, upper-case hex), so no key can
name a path outside that folder. Writes are atomic (``<name>.tmp``, then
renamed). For raw files (say a SQLite database) use :meth:`Storage.dir`.
"""

import errno as _errno
import os
from typing import List, Optional, Union

from . import _host
from .model import PluginError

__all__ = ["MAX_KEY_BYTES", "Storage", "StorageError", "encode_key", "decode_key"]

#: Longest key, in UTF-8 bytes (its encoded file name stays under 255 bytes).
MAX_KEY_BYTES = 80

_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_HEX = frozenset(b"0123456789abcdefABCDEF")


def _rust_debug(text: str) -> str:
    """``text`` quoted as Rust's ``{:?}`` writes a string."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\0":
            out.append("\\0")
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        else:
            out.append("\\u{%x}" % ord(ch))
    out.append('"')
    return "".join(out)


def os_error_text(error: OSError) -> str:
    """An ``OSError`` as Rust's ``io::Error`` shows it:
    ``<description> (os error <n>)``; without an errno, ``str(error)``."""
    if error.errno is None:
        return str(error)
    description = error.strerror or os.strerror(error.errno)
    return f"{description} (os error {error.errno})"


class StorageError(PluginError):
    """Why a storage operation failed. It is a :class:`PluginError`: letting
    it escape a tool or command sends its text to the host.

    ``kind`` is ``"unavailable"`` (the host gives no data directory),
    ``"invalid-key"`` (empty or longer than :data:`MAX_KEY_BYTES`) or ``"io"``
    (the file operation failed, for example over quota); ``cause`` is the
    ``OSError`` of an ``"io"`` error.
    """

    def __init__(self, kind: str, message: str, cause: Optional[OSError] = None):
        super().__init__(message)
        #: ``unavailable``, ``invalid-key`` or ``io``.
        self.kind = kind
        #: The underlying ``OSError`` of an ``io`` error.
        self.cause = cause

    @classmethod
    def unavailable(cls) -> "StorageError":
        """The host gives this plugin no data directory."""
        return cls(
            "unavailable",
            "plugin storage unavailable: the host gives this plugin no data directory",
        )

    @classmethod
    def invalid_key(cls, key: str) -> "StorageError":
        """The key is empty or too long."""
        return cls(
            "invalid-key",
            f"invalid storage key {_rust_debug(key)}: use 1 to {MAX_KEY_BYTES} bytes",
        )

    @classmethod
    def io(cls, operation: str, key: str, cause: OSError) -> "StorageError":
        """Operation ``operation`` on ``key`` failed with ``cause``."""
        return cls("io", f"storage {operation} '{key}': {os_error_text(cause)}", cause)


def encode_key(key: str) -> str:
    """Encodes a key into a file name of ``[A-Za-z0-9_%-]`` only."""
    return "".join(
        chr(b) if b in _SAFE else "%%%02X" % b for b in key.encode("utf-8", "surrogatepass")
    )


def decode_key(name: str) -> Optional[str]:
    """The key of a file name made by :func:`encode_key`; ``None`` for any
    other file (temporary files, foreign names, empty keys)."""
    raw = name.encode("utf-8", "surrogateescape")
    out = bytearray()
    i = 0
    while i < len(raw):
        b = raw[i]
        if b == 0x25:  # '%'
            pair = raw[i + 1 : i + 3]
            # Rust's u8::from_str_radix(_, 16): hex digits, one leading '+'.
            if len(pair) != 2 or not (
                (pair[0] in _HEX or pair[0] == 0x2B) and pair[1] in _HEX
            ):
                return None
            out.append(int(pair.decode("ascii"), 16))
            i += 3
        elif b in _SAFE:
            out.append(b)
            i += 1
        else:
            return None
    try:
        key = out.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return key or None


class Storage:
    """Handle to the plugin's storage; reached through the contexts
    (``ctx.storage``) or the plugin (``self.storage``). Values are bytes;
    :meth:`get_string` and ``set`` with a ``str`` handle text as UTF-8."""

    def dir(self) -> str:
        """The plugin's data directory (``/lingxi/data`` in the sandbox), for
        raw files. Raises :class:`StorageError` if there is none."""
        path = _host.data_dir()
        if path is None:
            raise StorageError.unavailable()
        return path

    def _kv_dir(self) -> str:
        return os.path.join(self.dir(), "kv")

    def _path(self, key: str) -> str:
        if not key or len(key.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES:
            raise StorageError.invalid_key(key)
        return os.path.join(self._kv_dir(), encode_key(key))

    def get(self, key: str) -> Optional[bytes]:
        """The value stored under ``key``, or ``None``."""
        path = self._path(key)
        try:
            with open(path, "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise StorageError.io("get", key, e) from e

    def get_string(self, key: str) -> Optional[str]:
        """The value stored under ``key`` as text (invalid UTF-8 replaced)."""
        value = self.get(key)
        return None if value is None else value.decode("utf-8", "replace")

    def set(self, key: str, value: Union[bytes, bytearray, str]) -> None:
        """Stores ``value`` under ``key``, replacing what was there."""
        path = self._path(key)
        data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        tmp = path + ".tmp"
        try:
            os.makedirs(self._kv_dir(), exist_ok=True)
            with open(tmp, "wb") as f:
                f.write(data)
        except OSError as e:
            raise StorageError.io("set", key, e) from e
        try:
            os.replace(tmp, path)
        except OSError as e:
            try:
                os.remove(tmp)
            except OSError:
                pass
            raise StorageError.io("set", key, e) from e

    def remove(self, key: str) -> bool:
        """Removes ``key``; returns whether it existed."""
        path = self._path(key)
        try:
            os.remove(path)
            return True
        except FileNotFoundError:
            return False
        except OSError as e:
            raise StorageError.io("remove", key, e) from e

    def keys(self) -> List[str]:
        """Every stored key, sorted."""
        try:
            names = os.listdir(self._kv_dir())
        except FileNotFoundError:
            return []
        except OSError as e:
            if e.errno == _errno.ENOENT:
                return []
            raise StorageError.io("keys", "", e) from e
        return sorted(k for k in map(decode_key, names) if k is not None)

    def __repr__(self) -> str:
        return "Storage()"
