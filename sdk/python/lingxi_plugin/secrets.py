"""Secrets the user granted the plugin by name (``--secret NAME``, the value
kept in the keyring by ``lingxi-wasm-run secret set PLUGIN_ID NAME``).

Every context a plugin is handed reads them: ``ctx.secret("API_TOKEN")``.
The host hides the value in everything the plugin writes (output, logs,
results, errors become ``[secret NAME]``) and refuses an HTTP request that
carries a secret granted as ``NAME@HOST`` to any other host."""

from . import _host
from .model import PluginError

__all__ = ["SecretAccess"]


class SecretAccess:
    """The ``secret`` method every context has."""

    def secret(self, name: str) -> str:
        """The value of secret ``name``. Raises :class:`PluginError` with the
        host's reason when there is none: not granted (the text names the
        flag that grants it) or not set (it names the command that sets
        it)."""
        try:
            return _host.secret(str(name))
        except _host.Err as refused:
            raise PluginError(str(refused.value)) from None
