// Typed builders for a tool's `inputSchema`, with the host-enforced contract
// annotations (`x-lingxi-*`): an author never writes the keywords by hand.
// They write exactly the JSON text the Rust SDK's builders write (same keys,
// same order, compact), so a schema means the same in every language.
//
//   new InputSchema()
//     .property('path', Property.string('File to summarise').readPath())
//     .property('top', Property.integer('How many lines').minimum(0).maximum(100))
//     .required(['path'])
//     .noAdditionalProperties()
//     .timeoutMs(5000)
//     .concurrencySafe()
//     .toString()
//
// What the host does with each annotation: a read (write) path property is
// resolved against the workspace root, symbolic links followed, refused
// unless inside a directory granted for reading (writing), and handed to the
// tool canonical and absolute; the timeout is the tool's own deadline when
// shorter than the plugin's; requires-approval makes an embedding host ask its
// user first; concurrency-safe lets calls run on several instances at once.

/** The annotation keywords, as the host reads them. */
export const keywords = Object.freeze({
  /** On a string property: `"read"` or `"write"`. */
  PATH: 'x-lingxi-path',
  /** At the top level: the tool's own timeout in milliseconds. */
  TIMEOUT_MS: 'x-lingxi-timeout-ms',
  /** At the top level: ask the host's user before every call. */
  REQUIRES_APPROVAL: 'x-lingxi-requires-approval',
  /** At the top level: calls may overlap on several instances. */
  CONCURRENCY_SAFE: 'x-lingxi-concurrency-safe',
  /** At the top level: a call starts a background task and answers its handle. */
  STARTS_TASK: 'x-lingxi-starts-task',
});

/** Compact JSON of a value whose objects may be ordered Maps. */
function toJson(value) {
  if (value instanceof Map) {
    const parts = [];
    for (const [k, v] of value) parts.push(JSON.stringify(String(k)) + ':' + toJson(v));
    return '{' + parts.join(',') + '}';
  }
  if (Array.isArray(value)) return '[' + value.map(toJson).join(',') + ']';
  if (value instanceof InputSchema || value instanceof Property) return toJson(value.schema);
  if (value && typeof value === 'object') {
    return toJson(new Map(Object.entries(value)));
  }
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value ?? null) ?? 'null';
}

/** A plain-object copy of a value whose objects may be Maps. */
function toPlain(value) {
  if (value instanceof Map) {
    const out = {};
    for (const [k, v] of value) out[k] = toPlain(v);
    return out;
  }
  if (Array.isArray(value)) return value.map(toPlain);
  return value;
}

/**
 * A tool's `inputSchema`: an object with properties. Immutable: every method
 * returns a new schema. `toString()` is the JSON text a tool declares.
 */
export class InputSchema {
  /** `{"type":"object","properties":{}}`: any object. */
  constructor(schema) {
    /** @private */
    this.schema =
      schema ??
      new Map([
        ['type', 'object'],
        ['properties', new Map()],
      ]);
    Object.freeze(this);
  }

  /** @private */
  set(keyword, value) {
    const schema = new Map(this.schema);
    schema.set(keyword, value);
    return new InputSchema(schema);
  }

  /** Adds property `name` (a {@link Property}). */
  property(name, property) {
    if (!(property instanceof Property)) throw new TypeError('property() takes a Property');
    const current = this.schema.get('properties');
    if (!(current instanceof Map)) return this;
    const properties = new Map(current);
    properties.set(String(name), property.schema);
    return this.set('properties', properties);
  }

  /** The properties that must be present (an array of names). */
  required(names) {
    return this.set('required', Array.from(names, String));
  }

  /** Refuses properties that are not listed. */
  noAdditionalProperties() {
    return this.set('additionalProperties', false);
  }

  /**
   * The tool's own deadline in milliseconds (1 to 86 400 000); the host
   * applies it when it is shorter than the plugin's.
   */
  timeoutMs(milliseconds) {
    return this.set(keywords.TIMEOUT_MS, milliseconds);
  }

  /** Asks the host's user to approve every call. */
  requiresApproval() {
    return this.set(keywords.REQUIRES_APPROVAL, true);
  }

  /** Says calls may run at the same time on several instances. */
  concurrencySafe() {
    return this.set(keywords.CONCURRENCY_SAFE, true);
  }

  /**
   * Says a call starts one background task and answers its handle (an MCP
   * client that has tasks then gets the task itself).
   */
  startsTask() {
    return this.set(keywords.STARTS_TASK, true);
  }

  /** Any other JSON Schema keyword at the top level. */
  with(keyword, value) {
    return this.set(String(keyword), value);
  }

  /** The JSON text, compact, keys in insertion order. */
  toString() {
    return toJson(this.schema);
  }

  /** The schema as a plain object (for `JSON.stringify`). */
  toJSON() {
    return toPlain(this.schema);
  }
}

/** One property of an {@link InputSchema}. Immutable, like the schema. */
export class Property {
  /** @private */
  constructor(schema) {
    /** @private */
    this.schema = schema;
    Object.freeze(this);
  }

  /** @private */
  static typed(kind, description) {
    const schema = new Map([['type', kind]]);
    if (description) schema.set('description', String(description));
    return new Property(schema);
  }

  /** A string. @param {string} [description] */
  static string(description = '') {
    return Property.typed('string', description);
  }

  /** An integer. @param {string} [description] */
  static integer(description = '') {
    return Property.typed('integer', description);
  }

  /** A number. @param {string} [description] */
  static number(description = '') {
    return Property.typed('number', description);
  }

  /** `true` or `false`. @param {string} [description] */
  static boolean(description = '') {
    return Property.typed('boolean', description);
  }

  /** An array whose elements are `items` (a Property). */
  static array(description, items) {
    if (!(items instanceof Property)) throw new TypeError('Property.array() takes a Property');
    return Property.typed('array', description).with('items', items.schema);
  }

  /** An object with the properties (and rules) of `schema` (an InputSchema). */
  static object(description, schema) {
    if (!(schema instanceof InputSchema)) throw new TypeError('Property.object() takes an InputSchema');
    const map = new Map(Property.typed('object', description).schema);
    for (const [key, value] of schema.schema) if (key !== 'type') map.set(key, value);
    return new Property(map);
  }

  /** A path the tool reads: the host checks it and hands it over canonical and absolute. */
  readPath() {
    return this.with(keywords.PATH, 'read');
  }

  /** A path the tool writes (or creates). */
  writePath() {
    return this.with(keywords.PATH, 'write');
  }

  /** Shortest string, in characters. */
  minLength(characters) {
    return this.with('minLength', characters);
  }

  /** Longest string, in characters. */
  maxLength(characters) {
    return this.with('maxLength', characters);
  }

  /** A regular expression the string must match. */
  pattern(regex) {
    return this.with('pattern', String(regex));
  }

  /** The smallest number allowed. */
  minimum(minimum) {
    return this.with('minimum', minimum);
  }

  /** The largest number allowed. */
  maximum(maximum) {
    return this.with('maximum', maximum);
  }

  /** The only values allowed (JSON Schema `enum`). */
  oneOf(values) {
    return this.with('enum', Array.from(values, String));
  }

  /** Any other JSON Schema keyword. */
  with(keyword, value) {
    const schema = new Map(this.schema);
    schema.set(String(keyword), value instanceof Property || value instanceof InputSchema ? value.schema : value);
    return new Property(schema);
  }

  /** The property's JSON text. */
  toString() {
    return toJson(this.schema);
  }

  /** The property as a plain object. */
  toJSON() {
    return toPlain(this.schema);
  }
}

/** The JSON Schema used when a tool does not give one (the protocol default). */
export const DEFAULT_INPUT_SCHEMA = '{"type": "object", "properties": {}}';

/** The `inputSchema` text of a tool: a string, an InputSchema, a plain object, or none. */
export function schemaText(schema) {
  if (schema === undefined || schema === null) return DEFAULT_INPUT_SCHEMA;
  if (typeof schema === 'string') return schema;
  if (schema instanceof InputSchema) return schema.toString();
  if (typeof schema === 'object') return toJson(schema);
  throw new TypeError('inputSchema must be a string, an InputSchema or an object');
}
