"""Builders for a tool's ``inputSchema``, with the host-enforced contract
annotations (``x-lingxi-*``): an author never writes the keywords by hand.

The JSON text is the Rust SDK's (``sdk/rust/src/schema.rs``), byte for byte:
keys in insertion order, compact separators, non-ASCII unescaped::

    from lingxi_plugin import InputSchema, Property

    schema = (InputSchema()
              .property("path", Property.string("File to summarise").read_path())
              .property("top", Property.integer("How many lines").minimum(0).maximum(100))
              .required(["path"])
              .no_additional_properties()
              .timeout_ms(5_000)
              .concurrency_safe())
    str(schema)  # '{"type":"object","properties":{"path":{...}},...}'

What the host does with each annotation:

- a **read path** / **write path** property: before the call, the value is
  resolved against the workspace root (relative paths allowed), symbolic
  links followed, and must lie inside a directory the plugin is granted for
  reading (writing; a file to be created needs an existing parent). The tool
  receives the canonical absolute path instead; a path outside is refused
  without calling the tool.
- **timeout**: the tool's own deadline, when shorter than the plugin's.
- **requires approval**: an embedding host asks its user first.
- **concurrency-safe**: calls may run on more than one instance at once.

Builders return ``self`` (they modify in place), so calls chain.
"""

import copy
import json
from typing import Any, Dict, Iterable, Union

__all__ = ["DEFAULT_INPUT_SCHEMA", "InputSchema", "Property", "keywords", "to_json"]

#: The schema text of a tool that declares none (nothing is validated).
DEFAULT_INPUT_SCHEMA = '{"type": "object", "properties": {}}'


class keywords:
    """The annotation keywords, as the host reads them."""

    #: On a string property: ``"read"`` or ``"write"``.
    PATH = "x-lingxi-path"
    #: At the top level: the tool's own timeout in milliseconds.
    TIMEOUT_MS = "x-lingxi-timeout-ms"
    #: At the top level: ask the host's user before every call.
    REQUIRES_APPROVAL = "x-lingxi-requires-approval"
    #: At the top level: calls may overlap on several instances.
    CONCURRENCY_SAFE = "x-lingxi-concurrency-safe"
    #: At the top level: a call starts a background task and answers its handle.
    STARTS_TASK = "x-lingxi-starts-task"


def to_json(value: Any) -> str:
    """JSON text as ``serde_json::to_string`` writes it (compact, UTF-8)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class InputSchema:
    """A tool's ``inputSchema``: an object with properties. ``str()`` (or
    :meth:`to_json`) is the JSON text the tool descriptor carries."""

    def __init__(self) -> None:
        """``{"type": "object", "properties": {}}``: any object."""
        self.schema: Dict[str, Any] = {"type": "object", "properties": {}}

    def property(self, name: str, prop: "Property") -> "InputSchema":
        """Adds (or replaces) property ``name``."""
        properties = self.schema.get("properties")
        if isinstance(properties, dict):
            properties[name] = copy.deepcopy(prop.schema)
        return self

    def required(self, names: Iterable[str]) -> "InputSchema":
        """The properties that must be present."""
        if isinstance(names, str):
            names = [names]
        self.schema["required"] = [str(n) for n in names]
        return self

    def no_additional_properties(self) -> "InputSchema":
        """Refuses properties that are not listed."""
        self.schema["additionalProperties"] = False
        return self

    def timeout_ms(self, milliseconds: int) -> "InputSchema":
        """The tool's own deadline in milliseconds (1 to 86 400 000); the host
        applies it when it is shorter than the plugin's."""
        self.schema[keywords.TIMEOUT_MS] = int(milliseconds)
        return self

    def requires_approval(self) -> "InputSchema":
        """Asks the host's user to approve every call."""
        self.schema[keywords.REQUIRES_APPROVAL] = True
        return self

    def concurrency_safe(self) -> "InputSchema":
        """Says calls may run at the same time on several instances."""
        self.schema[keywords.CONCURRENCY_SAFE] = True
        return self

    def starts_task(self) -> "InputSchema":
        """Says a call starts one background task and answers its handle (an
        MCP client that has tasks then gets the task itself)."""
        self.schema[keywords.STARTS_TASK] = True
        return self

    def with_(self, keyword: str, value: Any) -> "InputSchema":
        """Any other JSON Schema keyword at the top level (``with`` is a
        Python keyword, hence the underscore)."""
        self.schema[keyword] = copy.deepcopy(value)
        return self

    def to_dict(self) -> Dict[str, Any]:
        """A copy of the schema as a dict."""
        return copy.deepcopy(self.schema)

    def to_json(self) -> str:
        """The schema's JSON text."""
        return to_json(self.schema)

    def __str__(self) -> str:
        return self.to_json()

    def __repr__(self) -> str:
        return f"InputSchema({self.to_json()})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InputSchema) and self.schema == other.schema


class Property:
    """One property of an :class:`InputSchema`. Make one with
    :meth:`string`, :meth:`integer`, :meth:`number`, :meth:`boolean`,
    :meth:`array` or :meth:`object`; an empty description is left out."""

    def __init__(self, kind: str, description: str = "") -> None:
        """A property of JSON type ``kind``."""
        self.schema: Dict[str, Any] = {"type": kind}
        if description:
            self.schema["description"] = description

    @classmethod
    def string(cls, description: str = "") -> "Property":
        """A string."""
        return cls("string", description)

    @classmethod
    def integer(cls, description: str = "") -> "Property":
        """An integer."""
        return cls("integer", description)

    @classmethod
    def number(cls, description: str = "") -> "Property":
        """A number."""
        return cls("number", description)

    @classmethod
    def boolean(cls, description: str = "") -> "Property":
        """``true`` or ``false``."""
        return cls("boolean", description)

    @classmethod
    def array(cls, description: str, items: "Property") -> "Property":
        """An array whose elements are ``items``."""
        return cls("array", description).with_("items", items.schema)

    @classmethod
    def object(cls, description: str, schema: InputSchema) -> "Property":
        """An object with the properties (and rules) of ``schema``."""
        prop = cls("object", description)
        for key, value in schema.schema.items():
            if key != "type":
                prop.schema[key] = copy.deepcopy(value)
        return prop

    def read_path(self) -> "Property":
        """A path the tool reads: the host checks it and hands it over
        canonical and absolute."""
        return self.with_(keywords.PATH, "read")

    def write_path(self) -> "Property":
        """A path the tool writes (or creates)."""
        return self.with_(keywords.PATH, "write")

    def min_length(self, characters: int) -> "Property":
        """Shortest string, in characters."""
        return self.with_("minLength", int(characters))

    def max_length(self, characters: int) -> "Property":
        """Longest string, in characters."""
        return self.with_("maxLength", int(characters))

    def pattern(self, regex: str) -> "Property":
        """A regular expression the string must match."""
        return self.with_("pattern", regex)

    def minimum(self, minimum: Union[int, float]) -> "Property":
        """The smallest number allowed."""
        return self.with_("minimum", minimum)

    def maximum(self, maximum: Union[int, float]) -> "Property":
        """The largest number allowed."""
        return self.with_("maximum", maximum)

    def one_of(self, values: Iterable[str]) -> "Property":
        """The only values allowed (JSON Schema ``enum``)."""
        return self.with_("enum", [str(v) for v in values])

    def with_(self, keyword: str, value: Any) -> "Property":
        """Any other JSON Schema keyword."""
        self.schema[keyword] = copy.deepcopy(value)
        return self

    def to_json(self) -> str:
        """The property's JSON text."""
        return to_json(self.schema)

    def __repr__(self) -> str:
        return f"Property({self.to_json()})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Property) and self.schema == other.schema
