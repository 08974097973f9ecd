"""InfoUnavailable texts, ISO-8601 formatting and the info hub."""

import unittest

from support import Err, FakeHost, lingxi_plugin as lx, timestamp, wit, workspace


class InfoUnavailableTest(unittest.TestCase):
    def test_without_snapshot(self):
        e = lx.InfoUnavailable("performance")
        self.assertEqual(str(e), "Plugin runtime info unavailable: performance (no snapshot received)")
        self.assertIsInstance(e, lx.PluginError)

    def test_names_last_snapshot_time_in_whole_utc_seconds(self):
        # Unix 1 800 000 000 is the spec fixture's observedAt.
        e = lx.InfoUnavailable("peCore", timestamp(1_800_000_000, 250_000_000))
        self.assertEqual(
            e.message,
            "Plugin runtime info unavailable: peCore (last snapshot 2027-01-15T08:00:00Z)",
        )

    def test_iso8601(self):
        cases = {
            0: "1970-01-01T00:00:00Z",
            978_307_300: "2001-01-01T00:01:40Z",  # 100 s after the 2001 epoch
            -1: "1969-12-31T23:59:59Z",
            951_782_400: "2000-02-29T00:00:00Z",
            -62_135_596_800: "0001-01-01T00:00:00Z",
            253_402_300_799: "9999-12-31T23:59:59Z",
            253_402_300_800: "@253402300800s",
        }
        for seconds, text in cases.items():
            self.assertEqual(lx.iso8601(timestamp(seconds, 999_999_999)), text, seconds)


class InfoHubTest(unittest.TestCase):
    def setUp(self):
        self.host = FakeHost().start()
        self.addCleanup(self.host.stop)
        self.hub = lx.InfoHub()

    def test_no_snapshot(self):
        self.assertIsNone(self.hub.snapshot())
        for getter, field in [
            (self.hub.workspace_info, "workspace"),
            (self.hub.pe_core_info, "peCore"),
            (self.hub.context_state, "contextState"),
            (self.hub.performance_info, "performance"),
        ]:
            with self.assertRaises(lx.InfoUnavailable) as raised:
                getter()
            self.assertEqual(raised.exception.field, field)
            self.assertIsNone(raised.exception.last_snapshot)
            self.assertEqual(
                str(raised.exception),
                f"Plugin runtime info unavailable: {field} (no snapshot received)",
            )

    def test_sections_present_and_missing(self):
        self.host.set_snapshot(1_800_000_000, workspace=workspace("/repo"))
        self.assertEqual(self.hub.workspace_info().root_path, "/repo")
        self.assertEqual(self.hub.snapshot().observed_at.seconds, 1_800_000_000)
        with self.assertRaises(lx.InfoUnavailable) as raised:
            self.hub.context_state()
        self.assertEqual(
            str(raised.exception),
            "Plugin runtime info unavailable: contextState (last snapshot 2027-01-15T08:00:00Z)",
        )

    def test_an_escaping_info_error_is_the_commands_error_text(self):
        class Probe(lx.Plugin):
            manifest = lx.Manifest("com.test.probe", "Probe", "0.1.0", "test")

            @lx.command("probe", "root", aliases=["pb"])
            def probe(self, args, ctx):
                return lx.CommandResult.message(f"root={ctx.info.workspace_info().root_path}")

        plugin = lx.export(Probe)()
        call = wit.CommandCall(command_name="pb", arguments=[], session_id=None)
        with self.assertRaises(Err) as raised:
            plugin.execute_command(call)
        self.assertEqual(raised.exception.value,
                         "Plugin runtime info unavailable: workspace (no snapshot received)")
        self.assertEqual(self.host.messages("error"), [])  # a PluginError: no traceback
        self.host.set_snapshot(1_800_000_000, workspace=workspace("/repo"))
        self.assertEqual(plugin.execute_command(call).value.text, "root=/repo")


if __name__ == "__main__":
    unittest.main()
