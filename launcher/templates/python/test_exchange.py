"""Replays one exchange with the built component, as a LingXi host would:
``plugin.initialize``, then a ``tool.execute`` of ``greet``, through
``lingxi-wasm-run`` (found on PATH, or at $LINGXI_WASM_RUN).

Build the component first (``./build.sh``), then
``python3 -m unittest test_exchange``.
"""

import json
import os
import pathlib
import subprocess
import unittest

HERE = pathlib.Path(__file__).resolve().parent
COMPONENT = HERE / "build" / "plugin.wasm"


class Exchange(unittest.TestCase):
    def test_initialize_then_greet(self):
        self.assertTrue(COMPONENT.exists(), "build the component first: ./build.sh")
        launcher = os.environ.get("LINGXI_WASM_RUN", "lingxi-wasm-run")
        requests = [
            {"id": "1", "method": "plugin.initialize", "params": {"hostIPCVersion": 1}},
            {"id": "2", "method": "tool.execute", "params": {
                "toolName": "greet", "arguments": json.dumps({"name": "Ada"}),
                "sessionID": "s-1", "toolCallID": "c-1"}},
        ]
        done = subprocess.run(
            [launcher, str(COMPONENT)],
            input="".join(json.dumps(r) + "\n" for r in requests),
            capture_output=True, text=True, timeout=120, check=False,
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        responses = [json.loads(line) for line in done.stdout.splitlines()]
        self.assertEqual(len(responses), 2, done.stdout)
        self.assertEqual(responses[0]["result"]["manifest"]["id"], "__ID__")
        self.assertEqual(responses[1]["result"], "Hello, Ada!", responses[1])


if __name__ == "__main__":
    unittest.main()
