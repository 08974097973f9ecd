"""The read-only info hub: what the host published in its runtime snapshots.

Every getter asks the host for one snapshot section. A section the host did
not send raises :class:`InfoUnavailable`, never a default value: the SDK does
not measure, estimate or fill in anything.

The sections are the generated WIT records, plain dataclasses with
snake_case fields: ``WorkspaceInfo`` (``root_path``, ``is_git_repository``,
``current_git_branch``, ``dirty_file_count``, ``primary_languages``,
``core_version``), ``PeCoreInfo``, ``ContextStateInfo`` (with
``TurnSummary`` items), ``PerformanceInfo`` and ``RuntimeSnapshot``
(``observed_at`` is a ``Timestamp`` of ``seconds`` and ``nanoseconds`` since
the Unix epoch). Absent optional fields are ``None``: "not stated", not zero.
"""

from typing import Any, Optional

from . import _host
from .model import PluginError

__all__ = ["InfoUnavailable", "InfoHub", "iso8601"]

# The time crate's default range, which the Rust SDK formats with.
_MIN_YEAR, _MAX_YEAR = -9999, 9999


def _civil_from_days(days: int):
    """(year, month, day) of ``days`` since 1970-01-01, proleptic Gregorian
    (Howard Hinnant's algorithm; exact for any integer)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


def iso8601(at: Any) -> str:
    """Formats a timestamp (anything with ``seconds``) as ISO-8601 in UTC
    with whole seconds, as Foundation's ``ISO8601DateFormatter`` does:
    ``2027-01-15T08:00:00Z``. Out of range (beyond year ±9999): ``@<n>s``."""
    seconds = int(at.seconds)
    days, rest = divmod(seconds, 86400)
    year, month, day = _civil_from_days(days)
    if not _MIN_YEAR <= year <= _MAX_YEAR:
        return f"@{seconds}s"
    hour, rest = divmod(rest, 3600)
    minute, second = divmod(rest, 60)
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}Z"


class InfoUnavailable(PluginError):
    """A snapshot section the host did not publish.

    Its text is the protocol's: ``Plugin runtime info unavailable: <field>
    (no snapshot received)`` or ``… (last snapshot <ISO-8601 time>)``. It is a
    :class:`PluginError`, so letting it escape a command sends exactly that
    text to the host.
    """

    def __init__(self, field: str, last_snapshot: Optional[Any] = None):
        #: Wire name of the section: ``workspace``, ``peCore``,
        #: ``contextState`` or ``performance``.
        self.field = field
        #: When the latest snapshot was observed (a ``Timestamp``), if any.
        self.last_snapshot = last_snapshot
        if last_snapshot is None:
            when = "no snapshot received"
        else:
            when = f"last snapshot {iso8601(last_snapshot)}"
        super().__init__(f"Plugin runtime info unavailable: {field} ({when})")


def _section(getter):
    try:
        return getter()
    except _host.Err as error:
        missing = error.value
        raise InfoUnavailable(missing.field, missing.last_snapshot) from None


class InfoHub:
    """Read-only view of the host's runtime snapshot, reached through the
    contexts (``ctx.info``) or the plugin (``self.info``). Every call asks the
    host anew, so a value is as fresh as the host's latest snapshot."""

    def workspace_info(self):
        """The workspace section: root path, git state, Core version.
        Raises :class:`InfoUnavailable`."""
        return _section(lambda: _host.host_info.workspace())

    def pe_core_info(self):
        """The P-Core / E-Core section. Raises :class:`InfoUnavailable`."""
        return _section(lambda: _host.host_info.pe_core())

    def context_state(self):
        """The conversation section: model, token usage, recent turns.
        Raises :class:`InfoUnavailable`."""
        return _section(lambda: _host.host_info.context_state())

    def performance_info(self):
        """The performance section: latencies and rate limiting.
        Raises :class:`InfoUnavailable`."""
        return _section(lambda: _host.host_info.performance())

    def snapshot(self):
        """The whole latest snapshot (a ``RuntimeSnapshot``), or ``None`` if
        the host sent none."""
        return _host.host_info.latest_snapshot()

    def __repr__(self) -> str:
        return "InfoHub()"
