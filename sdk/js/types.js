// The plugin-facing data types of the LingXi JavaScript SDK: errors, command
// results, hook events, capabilities, and the conversions between their wire
// names (`sessionStart`, `projectRead`) and the component's (`session-start`).
// Pure JavaScript: runs in a component and under Node.js alike.

/**
 * The error a plugin's activation, tool, command or hook throws on purpose.
 * Its message goes back to the host verbatim as the response's `error`.
 * (Throwing a plain string does the same. Any other thrown value is a bug:
 * it is logged and answered as `<Name>: <message>`.)
 */
export class PluginError extends Error {
  /** @param {string} message the text sent to the host */
  constructor(message) {
    super(String(message));
    this.name = 'PluginError';
  }
}

/** Capability wire names, as a manifest declares them. */
export const Capability = Object.freeze({
  PROJECT_READ: 'projectRead',
  PROJECT_WRITE: 'projectWrite',
  PROCESS_EXECUTION: 'processExecution',
  NETWORK_ACCESS: 'networkAccess',
});

/** Hook event wire names, in declaration order. */
export const HookEvent = Object.freeze({
  SESSION_START: 'sessionStart',
  SESSION_END: 'sessionEnd',
  AGENT_TURN_START: 'agentTurnStart',
  AGENT_TURN_END: 'agentTurnEnd',
  TOOL_BEFORE: 'toolBefore',
  TOOL_AFTER: 'toolAfter',
});

/** `projectRead` -> `project-read` (the component's enum case). */
export function kebab(wireName) {
  return wireName.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

/** `project-read` -> `projectRead` (the wire name). */
export function camel(kebabName) {
  return kebabName.replace(/-([a-z])/g, (_, c) => c.toUpperCase());
}

/**
 * Checks a manifest and converts it to the component's record.
 * @param {object} m the manifest as the author wrote it (wire names)
 * @returns {object} the `lingxi:plugin/types.manifest` record
 */
export function manifestRecord(m) {
  if (!m || typeof m !== 'object') throw new TypeError('definePlugin: manifest is required');
  for (const key of ['id', 'name', 'version', 'description']) {
    if (typeof m[key] !== 'string' || m[key] === '') {
      throw new TypeError(`definePlugin: manifest.${key} must be a non-empty string`);
    }
  }
  const known = Object.values(Capability);
  const capabilities = (m.capabilities ?? []).map((c) => {
    if (!known.includes(c)) {
      throw new TypeError(`definePlugin: unknown capability '${c}' (use ${known.join(', ')})`);
    }
    return kebab(c);
  });
  return {
    id: m.id,
    name: m.name,
    version: m.version,
    description: m.description,
    author: m.author ?? undefined,
    capabilities,
    minimumCoreVersion: m.minimumCoreVersion ?? undefined,
  };
}

/** Checks a hook event wire name. @param {string} event */
export function checkHookEvent(event) {
  if (!Object.values(HookEvent).includes(event)) {
    throw new TypeError(
      `unknown hook event '${event}' (use ${Object.values(HookEvent).join(', ')})`,
    );
  }
  return event;
}

/**
 * What a slash command returns: a message shown to the user (costs no model
 * tokens) or a prompt handed to the model. Make one with the static helpers.
 */
export class CommandResult {
  /** @private */
  constructor(kind, text, presentation, title) {
    /** `message` or `prompt`. */
    this.kind = kind;
    /** The text to show, or the prompt. */
    this.text = String(text);
    /** `modal` or `inline` (messages only). */
    this.presentation = presentation;
    /** Optional title (messages only). */
    this.title = title;
    Object.freeze(this);
  }

  /** A message in a modal pop-up (the protocol's default), no title. */
  static message(text) {
    return new CommandResult('message', text, 'modal', undefined);
  }

  /** A message shown as an inline timeline card, no title. */
  static inline(text) {
    return new CommandResult('message', text, 'inline', undefined);
  }

  /** A prompt for the model (always inline, never titled). */
  static prompt(text) {
    return new CommandResult('prompt', text, undefined, undefined);
  }

  /** This message with a title (a prompt is returned unchanged). */
  withTitle(title) {
    if (this.kind !== 'message') return this;
    return new CommandResult('message', this.text, this.presentation, String(title));
  }

  /** This message shown `modal` or `inline` (a prompt is returned unchanged). */
  withPresentation(presentation) {
    if (this.kind !== 'message') return this;
    if (presentation !== 'modal' && presentation !== 'inline') {
      throw new TypeError(`presentation must be 'modal' or 'inline', not '${presentation}'`);
    }
    return new CommandResult('message', this.text, presentation, this.title);
  }
}

/**
 * Converts what a command returned to the component's `command-result`: a
 * CommandResult, or a string (shown as a modal message).
 */
export function commandResultRecord(result) {
  if (typeof result === 'string') result = CommandResult.message(result);
  if (!(result instanceof CommandResult)) {
    throw new TypeError('a command must return a CommandResult or a string');
  }
  if (result.kind === 'prompt') return { tag: 'prompt', val: result.text };
  return {
    tag: 'message',
    val: { text: result.text, presentation: result.presentation, title: result.title },
  };
}

/**
 * The text a thrown value answers with: a PluginError's (or a string's)
 * verbatim, anything else as `<Name>: <message>`.
 * @returns {{text: string, expected: boolean}} `expected` is false for bugs
 */
export function errorText(e) {
  if (typeof e === 'string') return { text: e, expected: true };
  if (e instanceof PluginError) return { text: e.message, expected: true };
  if (e instanceof Error) return { text: `${e.name}: ${e.message}`, expected: false };
  return { text: `Error: ${describe(e)}`, expected: false };
}

function describe(value) {
  try {
    return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
  } catch {
    return String(value);
  }
}
