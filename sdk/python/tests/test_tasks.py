"""Background tasks: registration (``@task``, ``register_task``), the task
runner export (kinds, run, errors), starting, reading and cancelling from a
tool, progress reports, and how states are described."""

import sys
import unittest

from support import Err, FakeHost, lingxi_plugin as lx, wit, wit_tasks


def tool_call(name, arguments=""):
    return wit.ToolCall(tool_name=name, arguments=arguments, session_id="s", tool_call_id="c")


class Worker(lx.Plugin):
    manifest = lx.Manifest("com.test.worker", "Worker", "1.0.0", "test")

    @lx.task("count", "Counts to its input")
    def count(self, input, ctx):
        total = int(input)
        for n in range(total):
            ctx.progress(n / total, f"at {n}")
        return f"counted {total} in {ctx.id}"

    @lx.task("fail")
    def fail(self, input, ctx):
        raise lx.PluginError(f"no: {input}")

    @lx.task("crash")
    def crash(self, input, ctx):
        return 1 / 0

    def activate(self, ctx):
        ctx.register_task("json", "Answers JSON", lambda input, task: {"input": input})

    @lx.tool("start", "starts a task")
    def start(self, arguments, ctx):
        kind, _, input = arguments.partition(" ")
        return "task:" + ctx.tasks.start(kind, input)

    @lx.tool("status", "reads a task")
    def status(self, arguments, ctx):
        return lx.describe(ctx.tasks.status(arguments))

    @lx.tool("cancel", "cancels a task")
    def cancel(self, arguments, ctx):
        return str(ctx.tasks.cancel(arguments))


Exported = lx.export(Worker)


class TaskRunnerTest(unittest.TestCase):
    def setUp(self):
        self.host = FakeHost().start()
        self.addCleanup(self.host.stop)
        Exported.runtime().active = None
        self.runner = Exported.TaskRunner()
        self.plugin = Exported()

    def test_export_defines_the_task_runner_in_the_calling_module(self):
        self.assertIs(sys.modules[__name__].TaskRunner, Exported.TaskRunner)

    def test_kinds_lists_declared_then_registered_kinds(self):
        kinds = [(k.name, k.description) for k in self.runner.kinds()]
        self.assertEqual(kinds, [
            ("count", "Counts to its input"), ("fail", ""), ("crash", ""), ("json", "Answers JSON"),
        ])

    def test_run_returns_the_result_and_reports_progress(self):
        self.assertEqual(self.runner.run("count", "4", "t-9"), "counted 4 in t-9")
        self.assertEqual(self.host.progress, [(0.0, "at 0"), (0.25, "at 1"), (0.5, "at 2"), (0.75, "at 3")])
        self.assertEqual(self.runner.run("json", "x", "t-1"), '{"input":"x"}')

    def test_run_failures_are_error_texts(self):
        with self.assertRaises(Err) as failed:
            self.runner.run("fail", "why", "t-1")
        self.assertEqual(failed.exception.value, "no: why")
        with self.assertRaises(Err) as crashed:
            self.runner.run("crash", "", "t-2")
        self.assertEqual(crashed.exception.value, "ZeroDivisionError: division by zero")
        self.assertTrue(any("Traceback" in m for m in self.host.messages("error")))
        with self.assertRaises(Err) as unknown:
            self.runner.run("nope", "", "t-3")
        self.assertEqual(unknown.exception.value, "Task kind 'nope' not registered by plugin")

    def test_a_tool_starts_reads_and_cancels_a_task(self):
        handle = self.plugin.execute_tool(tool_call("start", "count 3"))
        self.assertEqual(handle, "task:t-0")
        self.assertEqual(self.host.started["t-0"], ("count", "3"))
        self.assertEqual(self.plugin.execute_tool(tool_call("status", "t-0")), "running")
        self.host.states["t-0"] = wit_tasks.TaskState_Running(wit_tasks.Progress(0.5, "half"))
        self.assertEqual(self.plugin.execute_tool(tool_call("status", "t-0")), "running (50%): half")
        self.assertEqual(self.plugin.execute_tool(tool_call("cancel", "t-0")), "True")
        self.assertEqual(self.plugin.execute_tool(tool_call("status", "t-0")), "cancelled")
        self.assertEqual(self.plugin.execute_tool(tool_call("cancel", "t-0")), "False")
        self.assertEqual(self.plugin.execute_tool(tool_call("status", "t-7")), "unknown task")

    def test_unknown_kinds_and_host_refusals_fail_the_call(self):
        with self.assertRaises(Err) as unknown:
            self.plugin.execute_tool(tool_call("start", "nope"))
        self.assertEqual(
            unknown.exception.value,
            "Task kind 'nope' not registered by plugin; registered: count, fail, crash, json",
        )
        self.host.refuse = "plugin com.test.worker already runs 4 background tasks, its limit"
        with self.assertRaises(Err) as refused:
            self.plugin.execute_tool(tool_call("start", "count 1"))
        self.assertEqual(refused.exception.value, self.host.refuse)

    def test_states_are_described_like_the_rust_sdk(self):
        cases = [
            (None, "unknown task"),
            (lx.TaskState("running"), "running"),
            (lx.TaskState("running", message="waiting"), "running: waiting"),
            (lx.TaskState("running", fraction=0.125, message="m"), "running (12%): m"),
            (lx.TaskState("succeeded", result="42 lines"), "done: 42 lines"),
            (lx.TaskState("failed", error="boom"), "failed: boom"),
            (lx.TaskState("cancelled"), "cancelled"),
        ]
        for state, text in cases:
            self.assertEqual(lx.describe(state), text, state)


if __name__ == "__main__":
    unittest.main()
