"""The schema builders write the Rust SDK's JSON text, byte for byte
(serde_json with preserve_order: insertion order, compact)."""

import json
import unittest

from support import FakeHost, lingxi_plugin as lx, wit

InputSchema, Property = lx.InputSchema, lx.Property


class SchemaTest(unittest.TestCase):
    def test_builds_the_annotated_schema_of_the_rust_test(self):
        schema = (
            InputSchema()
            .property("src", Property.string("from").read_path())
            .property("dst", Property.string("").write_path())
            .property("files", Property.array("many", Property.string("").read_path())
                      .with_("maxItems", 3))
            .property("mode", Property.string("how").one_of(["a", "b"]))
            .required(["src"])
            .no_additional_properties()
            .timeout_ms(250)
            .requires_approval()
            .concurrency_safe()
        )
        # What sdk/rust/src/schema.rs writes for the same calls.
        rust = (
            '{"type":"object","properties":{'
            '"src":{"type":"string","description":"from","x-lingxi-path":"read"},'
            '"dst":{"type":"string","x-lingxi-path":"write"},'
            '"files":{"type":"array","description":"many",'
            '"items":{"type":"string","x-lingxi-path":"read"},"maxItems":3},'
            '"mode":{"type":"string","description":"how","enum":["a","b"]}},'
            '"required":["src"],"additionalProperties":false,'
            '"x-lingxi-timeout-ms":250,"x-lingxi-requires-approval":true,'
            '"x-lingxi-concurrency-safe":true}'
        )
        self.assertEqual(str(schema), rust)
        self.assertEqual(str(InputSchema()), '{"type":"object","properties":{}}')

    def test_nested_objects_and_limits_as_the_testbed_contracts_write_them(self):
        strict = (
            InputSchema()
            .property("text", Property.string("some text").max_length(10).min_length(1))
            .property("opts", Property.object(
                "options",
                InputSchema().property("depth", Property.integer("how deep").maximum(3))
                .no_additional_properties()))
            .property("code", Property.string("").pattern("^[a-z]+$"))
            .property("n", Property.number("").minimum(0.5))
            .property("ok", Property.boolean("yes?"))
            .required(["text"])
        )
        self.assertEqual(
            strict.to_json(),
            '{"type":"object","properties":{'
            '"text":{"type":"string","description":"some text","maxLength":10,"minLength":1},'
            '"opts":{"type":"object","description":"options","properties":'
            '{"depth":{"type":"integer","description":"how deep","maximum":3}},'
            '"additionalProperties":false},'
            '"code":{"type":"string","pattern":"^[a-z]+$"},'
            '"n":{"type":"number","minimum":0.5},'
            '"ok":{"type":"boolean","description":"yes?"}},'
            '"required":["text"]}',
        )

    def test_the_rust_testbeds_contract_schemas(self):
        # Copied from the handshake of the built Rust testbed
        # (tests/guests/testbed/src/contracts.rs), built the same way here.
        def sleeper():
            return InputSchema().property("ms", Property.integer("how long to sleep").minimum(0))

        built = {
            "contract.strict": InputSchema()
            .property("text", Property.string("some text").max_length(10))
            .property("mode", Property.string("how").one_of(["fast", "slow"]))
            .property("opts", Property.object(
                "options",
                InputSchema().property("depth", Property.integer("how deep").maximum(3))
                .no_additional_properties()))
            .required(["text"])
            .no_additional_properties(),
            "contract.read": InputSchema()
            .property("path", Property.string("a file to read").read_path())
            .property("files", Property.array("files to read", Property.string("").read_path()))
            .property("note", Property.string("not a path")),
            "contract.write": InputSchema()
            .property("to", Property.string("a file to write").write_path()),
            "contract.slow": sleeper().timeout_ms(300),
            "contract.approve": InputSchema().requires_approval(),
            "contract.safe": sleeper().concurrency_safe(),
        }
        rust = {
            "contract.strict": '{"type":"object","properties":{"text":{"type":"string",'
            '"description":"some text","maxLength":10},"mode":{"type":"string","description":'
            '"how","enum":["fast","slow"]},"opts":{"type":"object","description":"options",'
            '"properties":{"depth":{"type":"integer","description":"how deep","maximum":3}},'
            '"additionalProperties":false}},"required":["text"],"additionalProperties":false}',
            "contract.read": '{"type":"object","properties":{"path":{"type":"string",'
            '"description":"a file to read","x-lingxi-path":"read"},"files":{"type":"array",'
            '"description":"files to read","items":{"type":"string","x-lingxi-path":"read"}},'
            '"note":{"type":"string","description":"not a path"}}}',
            "contract.write": '{"type":"object","properties":{"to":{"type":"string",'
            '"description":"a file to write","x-lingxi-path":"write"}}}',
            "contract.slow": '{"type":"object","properties":{"ms":{"type":"integer",'
            '"description":"how long to sleep","minimum":0}},"x-lingxi-timeout-ms":300}',
            "contract.approve": '{"type":"object","properties":{},'
            '"x-lingxi-requires-approval":true}',
            "contract.safe": '{"type":"object","properties":{"ms":{"type":"integer",'
            '"description":"how long to sleep","minimum":0}},"x-lingxi-concurrency-safe":true}',
        }
        for name, schema in built.items():
            self.assertEqual(str(schema), rust[name], name)

    def test_replacing_a_key_keeps_its_place_and_text_stays_unescaped(self):
        schema = InputSchema().timeout_ms(5).with_("x", "é/\"").timeout_ms(7)
        self.assertEqual(str(schema),
                         '{"type":"object","properties":{},"x-lingxi-timeout-ms":7,"x":"é/\\""}')


class ToolAnnotationTest(unittest.TestCase):
    def setUp(self):
        self.host = FakeHost().start()
        self.addCleanup(self.host.stop)

    def schemas(self):
        class Annotated(lx.Plugin):
            manifest = lx.Manifest("com.test.annotated", "A", "1.0.0", "test")

            @lx.tool("plain", "no schema")
            def plain(self, arguments, ctx):
                return ""

            @lx.tool("fast", "annotations only", timeout_ms=2000, concurrency_safe=True)
            def fast(self, arguments, ctx):
                return ""

            @lx.tool("read", "builder and annotations",
                     InputSchema().property("path", Property.string("p").read_path()),
                     requires_approval=True)
            def read(self, arguments, ctx):
                return ""

            @lx.tool("text", "schema text kept as is", '{"type": "object"}')
            def text(self, arguments, ctx):
                return ""

        hs = lx.export(Annotated)().initialize(
            wit.InitializeRequest(host_ipc_version=1, core_version=None))
        return {t.name: t.input_schema for t in hs.tools}

    def test_decorator_annotations_are_written_into_the_schema(self):
        schemas = self.schemas()
        self.assertEqual(schemas["plain"], '{"type": "object", "properties": {}}')
        self.assertEqual(schemas["fast"], '{"type":"object","properties":{},'
                         '"x-lingxi-timeout-ms":2000,"x-lingxi-concurrency-safe":true}')
        self.assertEqual(json.loads(schemas["read"]), {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "p",
                                    "x-lingxi-path": "read"}},
            "x-lingxi-requires-approval": True,
        })
        self.assertEqual(schemas["text"], '{"type": "object"}')

    def test_bad_timeouts_fail_at_declaration(self):
        for bad in (0, 86_400_001, True):
            with self.assertRaises(ValueError):
                lx.tool("t", "d", timeout_ms=bad)

    def test_json_arguments(self):
        self.assertEqual(lx.json_arguments(""), {})
        self.assertEqual(lx.json_arguments('{"a": 1}'), {"a": 1})
        for bad in ("[1]", "{"):
            with self.assertRaises(lx.PluginError) as raised:
                lx.json_arguments(bad)
            self.assertTrue(str(raised.exception).startswith("invalid arguments: "))


if __name__ == "__main__":
    unittest.main()
