// The schema builders write the same JSON text as the Rust SDK's (schema.rs):
// these strings are what serde_json (preserve_order) prints for the same calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { InputSchema, Property, schemaText, DEFAULT_INPUT_SCHEMA } from '../schema.js';

test('builds the annotated schema exactly as the Rust builders do', () => {
  const schema = new InputSchema()
    .property('src', Property.string('from').readPath())
    .property('dst', Property.string('').writePath())
    .property('files', Property.array('many', Property.string('').readPath()).with('maxItems', 3))
    .property('mode', Property.string('how').oneOf(['a', 'b']))
    .required(['src'])
    .noAdditionalProperties()
    .timeoutMs(250)
    .requiresApproval()
    .concurrencySafe();
  assert.equal(
    schema.toString(),
    '{"type":"object","properties":{' +
      '"src":{"type":"string","description":"from","x-lingxi-path":"read"},' +
      '"dst":{"type":"string","x-lingxi-path":"write"},' +
      '"files":{"type":"array","description":"many","items":{"type":"string","x-lingxi-path":"read"},"maxItems":3},' +
      '"mode":{"type":"string","description":"how","enum":["a","b"]}},' +
      '"required":["src"],"additionalProperties":false,"x-lingxi-timeout-ms":250,' +
      '"x-lingxi-requires-approval":true,"x-lingxi-concurrency-safe":true}',
  );
  assert.equal(new InputSchema().toString(), '{"type":"object","properties":{}}');
});

test('the doc example of schema.rs', () => {
  const schema = new InputSchema()
    .property('path', Property.string('File to summarise').readPath())
    .property('top', Property.integer('How many lines').minimum(0).maximum(100))
    .required(['path'])
    .noAdditionalProperties()
    .timeoutMs(5000)
    .concurrencySafe()
    .toString();
  assert.equal(
    schema,
    '{"type":"object","properties":{"path":{"type":"string","description":"File to summarise","x-lingxi-path":"read"},' +
      '"top":{"type":"integer","description":"How many lines","minimum":0,"maximum":100}},' +
      '"required":["path"],"additionalProperties":false,"x-lingxi-timeout-ms":5000,"x-lingxi-concurrency-safe":true}',
  );
});

test('keys keep insertion order, even integer-like ones; a re-set key keeps its place', () => {
  const schema = new InputSchema()
    .property('b', Property.boolean())
    .property('10', Property.number('n').minLength(1).maxLength(2).pattern('^x$'))
    .with('type', 'object');
  assert.equal(
    schema.toString(),
    '{"type":"object","properties":{"b":{"type":"boolean"},' +
      '"10":{"type":"number","description":"n","minLength":1,"maxLength":2,"pattern":"^x$"}}}',
  );
});

test('object properties take the nested schema without its type', () => {
  const inner = new InputSchema().property('x', Property.integer()).required(['x']);
  assert.equal(
    Property.object('point', inner).toString(),
    '{"type":"object","description":"point","properties":{"x":{"type":"integer"}},"required":["x"]}',
  );
});

test('builders are immutable', () => {
  const base = new InputSchema();
  base.property('a', Property.string());
  assert.equal(base.toString(), '{"type":"object","properties":{}}');
});

test('a tool schema may be a string, a builder, an object, or none', () => {
  assert.equal(schemaText(undefined), DEFAULT_INPUT_SCHEMA);
  assert.equal(schemaText('{"type":"object"}'), '{"type":"object"}');
  assert.equal(schemaText(new InputSchema()), '{"type":"object","properties":{}}');
  assert.equal(schemaText({ type: 'object', properties: {} }), '{"type":"object","properties":{}}');
  assert.deepEqual(JSON.parse(JSON.stringify(new InputSchema().timeoutMs(5))), {
    type: 'object', properties: {}, 'x-lingxi-timeout-ms': 5,
  });
});
