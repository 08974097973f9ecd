"""The runtime semantics, through the exported class componentize-py calls:
IPC check, lazy activation and retry, name and alias resolution, hook
order and failure logging, the reference error texts."""

import unittest

from support import Err, FakeHost, lingxi_plugin as lx, wit

H = lx.HookEvent


def init(version=1):
    return wit.InitializeRequest(host_ipc_version=version, core_version="1.1.0")


def tool_call(name, arguments="{}"):
    return wit.ToolCall(tool_name=name, arguments=arguments, session_id="s", tool_call_id="c")


def command_call(name, arguments=("a", "b")):
    return wit.CommandCall(command_name=name, arguments=list(arguments), session_id=None)


def hook(event, subject="s-1", metadata=()):
    return wit.HookPayload(event=event, subject_id=subject, metadata=list(metadata))


class Fixture(lx.Plugin):
    """Fails activation ``failures`` times, counts activations and
    deactivations, records the order hooks ran in."""

    manifest = lx.Manifest("com.test.fixture", "Fixture", "1.0.0", "test",
                           capabilities=[lx.Capability.PROJECT_READ])
    failures = 0
    crash_on_activate = False

    def __init__(self):
        self.activations = 0
        self.deactivations = 0
        self.hook_log = []

    def activate(self, ctx):
        self.activations += 1
        if self.crash_on_activate:
            raise RuntimeError("not ready")
        if self.failures > 0:
            self.failures -= 1
            raise lx.PluginError("database not ready")

    def deactivate(self):
        self.deactivations += 1

    @lx.tool("echo", "echo")
    def echo(self, arguments, ctx):
        return f"{arguments}@{ctx.session_id}/{ctx.tool_call_id}"

    @lx.tool("crash", "raises a bug")
    def crash(self, arguments, ctx):
        return 1 / 0

    @lx.tool("json", "returns a value")
    def json_value(self, arguments, ctx):
        return {"é": [1, True, None]}

    @lx.command("status", "status", aliases=["st"])
    def status(self, args, ctx):
        return lx.CommandResult.inline(",".join(args)).with_title("T")

    @lx.command("Go", "upper case")
    def go_upper(self, args, ctx):
        return "Go"

    @lx.command("go", "lower case")
    def go_lower(self, args, ctx):
        return lx.CommandResult.prompt("go")

    @lx.command("straße", "non-ASCII")
    def strasse(self, args, ctx):
        return "straße"

    @lx.on(H.TOOL_AFTER)
    def after(self, payload):
        self.hook_log.append("after")

    @lx.on(H.SESSION_START)
    def first(self, payload):
        self.hook_log.append("first")
        raise lx.PluginError("boom")

    @lx.on(H.SESSION_START)
    def second(self, payload):
        self.hook_log.append(("second", payload.subject_id, payload.metadata))

    @lx.on(H.SESSION_END)
    def buggy(self, payload):
        self.hook_log.append("buggy")
        raise ValueError("bad value")

    @lx.on(H.SESSION_END)
    def after_buggy(self, payload):
        self.hook_log.append("after buggy")


class RuntimeTest(unittest.TestCase):
    def setUp(self):
        self.host = FakeHost().start()
        self.addCleanup(self.host.stop)

    def export(self, plugin_class=Fixture):
        exported = lx.export(plugin_class)
        return exported(), exported.runtime

    def error(self, call):
        with self.assertRaises(Err) as raised:
            call()
        return raised.exception.value

    def test_export_is_named_plugin_and_implements_the_protocol(self):
        from wit_world.exports import Plugin as Protocol

        exported = lx.export(Fixture)
        self.assertEqual(exported.__name__, "Plugin")
        self.assertIn(Protocol, exported.__mro__)
        with self.assertRaises(TypeError):
            lx.export(object)

    def test_handshake_lists_registrations_and_sorted_hooks(self):
        plugin, runtime = self.export()
        hs = plugin.initialize(init(1))
        self.assertEqual(hs.ipc_version, 1)
        self.assertEqual(hs.sdk_version, "0.1.0")
        self.assertEqual(hs.manifest.id, "com.test.fixture")
        self.assertEqual(hs.manifest.capabilities, [wit.Capability.PROJECT_READ])
        self.assertEqual([t.name for t in hs.tools], ["echo", "crash", "json"])
        self.assertEqual(hs.tools[0].input_schema, '{"type": "object", "properties": {}}')
        self.assertEqual(hs.commands[0].aliases, ["st"])
        self.assertEqual(hs.commands[0].category, "Plugin")
        self.assertEqual(hs.commands[0].argument_hint, "")
        # sessionEnd < sessionStart < toolAfter, each once.
        self.assertEqual(hs.supported_hooks, [wit.HookEvent.SESSION_END,
                                              wit.HookEvent.SESSION_START,
                                              wit.HookEvent.TOOL_AFTER])
        # A second initialize returns the same handshake without re-activating.
        self.assertEqual(plugin.initialize(init(None)), hs)
        self.assertEqual(runtime().plugin.activations, 1)

    def test_get_manifest_does_not_activate(self):
        plugin, runtime = self.export()
        self.assertEqual(plugin.get_manifest().name, "Fixture")
        self.assertEqual(runtime().plugin.activations, 0)

    def test_unsupported_ipc_version_has_reference_text(self):
        plugin, runtime = self.export()
        self.assertEqual(self.error(lambda: plugin.initialize(init(42))),
                         "Unsupported host IPC version 42; plugin supports [1].")
        self.assertEqual(self.error(lambda: plugin.initialize(init(-1))),
                         "Unsupported host IPC version -1; plugin supports [1].")
        self.assertEqual(runtime().plugin.activations, 0)

    def test_failed_activation_is_retried_by_the_next_request(self):
        class Flaky(Fixture):
            failures = 1

        plugin, runtime = self.export(Flaky)
        self.assertEqual(self.error(lambda: plugin.initialize(init(1))), "database not ready")
        self.assertEqual(plugin.execute_tool(tool_call("echo")), "{}@s/c")
        self.assertEqual(plugin.execute_tool(tool_call("echo")), "{}@s/c")
        self.assertEqual(runtime().plugin.activations, 2)

    def test_activation_bug_is_an_error_text_and_a_logged_traceback(self):
        class Crashing(Fixture):
            crash_on_activate = True

        plugin, _ = self.export(Crashing)
        self.assertEqual(self.error(lambda: plugin.initialize(init(1))),
                         "RuntimeError: not ready")
        errors = self.host.messages("error")
        self.assertIn("activate raised RuntimeError: not ready", errors)
        self.assertIn("Traceback (most recent call last):", errors)

    def test_tools_activate_lazily_and_unknown_names_have_reference_text(self):
        plugin, runtime = self.export()
        self.assertEqual(self.error(lambda: plugin.execute_tool(tool_call("nope"))),
                         "Tool 'nope' not found in plugin")
        self.assertEqual(runtime().plugin.activations, 1)
        self.assertEqual(self.error(lambda: plugin.execute_command(command_call("Nope"))),
                         "Command 'Nope' not found in plugin")

    def test_a_tool_bug_does_not_crash_the_instance(self):
        plugin, _ = self.export()
        self.assertEqual(self.error(lambda: plugin.execute_tool(tool_call("crash"))),
                         "ZeroDivisionError: division by zero")
        self.assertIn("tool 'crash' raised ZeroDivisionError: division by zero",
                      self.host.messages("error"))
        self.assertTrue(any("1 / 0" in m or "crash" in m for m in self.host.messages("error")))
        self.assertEqual(plugin.execute_tool(tool_call("echo", "x")), "x@s/c")

    def test_a_tool_value_that_is_not_text_is_sent_as_json(self):
        plugin, _ = self.export()
        self.assertEqual(plugin.execute_tool(tool_call("json")), '{"é":[1,true,null]}')

    def test_commands_resolve_by_name_alias_and_case(self):
        plugin, _ = self.export()
        expected = wit.CommandResult_Message(wit.CommandMessage(
            text="a,b", presentation=wit.Presentation.INLINE, title="T"))
        for name in ["status", "st", "STATUS", "St"]:
            self.assertEqual(plugin.execute_command(command_call(name)), expected, name)

    def test_exact_case_wins_before_folded_case(self):
        plugin, _ = self.export()
        self.assertEqual(plugin.execute_command(command_call("go")),
                         wit.CommandResult_Prompt("go"))
        self.assertEqual(plugin.execute_command(command_call("Go")),
                         wit.CommandResult_Message(wit.CommandMessage(
                             text="Go", presentation=wit.Presentation.MODAL, title=None)))
        # Folded case: the first registered match.
        self.assertEqual(plugin.execute_command(command_call("GO")).value.text, "Go")

    def test_case_folding_is_ascii_only(self):
        plugin, _ = self.export()
        self.assertEqual(plugin.execute_command(command_call("STRAßE")).value.text, "straße")
        self.assertEqual(self.error(lambda: plugin.execute_command(command_call("STRASSE"))),
                         "Command 'STRASSE' not found in plugin")

    def test_hooks_run_in_order_and_failures_are_logged_not_returned(self):
        plugin, runtime = self.export()
        self.assertIsNone(plugin.emit_hook(hook(wit.HookEvent.SESSION_START,
                                                metadata=[("sessionID", "s-1")])))
        self.assertIsNone(plugin.emit_hook(hook(wit.HookEvent.AGENT_TURN_END)))
        self.assertEqual(runtime().plugin.hook_log,
                         ["first", ("second", "s-1", {"sessionID": "s-1"})])
        self.assertEqual(self.host.messages("error"),
                         ["sessionStart handler #1 failed for 's-1': boom"])

    def test_a_hook_bug_is_logged_with_its_traceback(self):
        plugin, runtime = self.export()
        self.assertIsNone(plugin.emit_hook(hook(wit.HookEvent.SESSION_END, "t-9")))
        self.assertEqual(runtime().plugin.hook_log, ["buggy", "after buggy"])
        errors = self.host.messages("error")
        self.assertEqual(errors[0], "sessionEnd handler #1 failed for 't-9': ValueError: bad value")
        self.assertIn("Traceback (most recent call last):", errors)

    def test_hook_emit_fails_only_when_activation_fails(self):
        class Flaky(Fixture):
            failures = 1

        plugin, _ = self.export(Flaky)
        self.assertEqual(self.error(lambda: plugin.emit_hook(hook(wit.HookEvent.SESSION_START))),
                         "database not ready")
        self.assertIsNone(plugin.emit_hook(hook(wit.HookEvent.SESSION_START)))

    def test_deactivate_only_if_active(self):
        plugin, runtime = self.export()
        plugin.deactivate()
        self.assertEqual(runtime().plugin.deactivations, 0)
        plugin.initialize(init(1))
        plugin.deactivate()
        plugin.deactivate()
        self.assertEqual(runtime().plugin.deactivations, 1)

    def test_a_second_registration_replaces_the_first_with_a_warning(self):
        class Twice(lx.Plugin):
            manifest = lx.Manifest("com.test.twice", "Twice", "1.0.0", "test")

            def activate(self, ctx):
                ctx.register_tool("t", "first", lambda a, c: "first")
                ctx.register_tool("t", "second", lambda a, c: "second")
                ctx.register_command("c", "first", lambda a, c: "first")
                ctx.register_command("c", "second", lambda a, c: "second", aliases=["k"])

        plugin, _ = self.export(Twice)
        hs = plugin.initialize(init(1))
        self.assertEqual([(t.name, t.description) for t in hs.tools], [("t", "second")])
        self.assertEqual([(c.name, c.aliases) for c in hs.commands], [("c", ["k"])])
        self.assertEqual(self.host.messages("warn"), [
            "tool 't' registered twice; the later one wins",
            "command 'c' registered twice; the later one wins",
        ])
        self.assertEqual(plugin.execute_tool(tool_call("t")), "second")

    def test_command_results_convert_to_the_wit_variants(self):
        r = lx.CommandResult
        self.assertEqual(r.message("m"), r("m", False, lx.Presentation.MODAL, None))
        self.assertEqual(r.prompt("p").with_title("ignored"),
                         r("p", True, lx.Presentation.INLINE, None))
        self.assertEqual(r.message("m").with_presentation(lx.Presentation.INLINE).title, None)

    def test_command_context_carries_the_session(self):
        seen = []

        class Session(lx.Plugin):
            manifest = lx.Manifest("com.test.session", "S", "1.0.0", "test")

            @lx.command("who", "who")
            def who(self, args, ctx):
                seen.append((args, ctx.session_id))
                return "ok"

        plugin, _ = self.export(Session)
        plugin.execute_command(wit.CommandCall(command_name="who", arguments=["x"],
                                               session_id="s-7"))
        self.assertEqual(seen, [(["x"], "s-7")])


if __name__ == "__main__":
    unittest.main()
