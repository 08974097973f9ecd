"""ctx.secret: the host's value, or a PluginError with its reason."""

import unittest

from support import FakeHost, lingxi_plugin


class SecretTest(unittest.TestCase):
    def setUp(self):
        self.host = FakeHost().start()
        self.addCleanup(self.host.stop)

    def test_every_context_reads_a_granted_secret(self):
        self.host.secrets["API_TOKEN"] = "tok-123456789"
        contexts = [
            lingxi_plugin.ToolContext(session_id="s", tool_call_id="c"),
            lingxi_plugin.CommandContext(session_id=None),
            lingxi_plugin.PluginContext(),
        ]
        for ctx in contexts:
            self.assertEqual(ctx.secret("API_TOKEN"), "tok-123456789")

    def test_a_secret_not_granted_raises_naming_the_flag(self):
        ctx = lingxi_plugin.ToolContext(session_id="s", tool_call_id="c")
        with self.assertRaises(lingxi_plugin.PluginError) as raised:
            ctx.secret("OTHER")
        self.assertIn("--secret OTHER", raised.exception.message)


if __name__ == "__main__":
    unittest.main()
