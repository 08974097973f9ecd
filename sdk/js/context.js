// What plugin code is handed: the activation context it registers tools,
// commands and hooks with, the per-call contexts, and the logger.

import { checkHookEvent } from './types.js';
import { schemaText } from './schema.js';
import { readSecret } from './secrets.js';

/**
 * Writes log lines to the host's stderr, prefixed with the plugin id. Never
 * reaches the protocol channel.
 */
export class Logger {
  /** @param {(level: string, message: string) => void} log the host's log function */
  constructor(log) {
    /** @private */
    this.log = log;
    Object.freeze(this);
  }

  /** Logs normal operation. */
  info(message) {
    this.log('info', String(message));
  }

  /** Logs something unexpected that the plugin recovered from. */
  warn(message) {
    this.log('warn', String(message));
  }

  /** Logs a failure. */
  error(message) {
    this.log('error', String(message));
  }
}

function requireString(what, value, allowEmpty = false) {
  if (typeof value !== 'string' || (!allowEmpty && value === '')) {
    throw new TypeError(`${what} must be a${allowEmpty ? '' : ' non-empty'} string`);
  }
  return value;
}

function requireFunction(what, value) {
  if (typeof value !== 'function') throw new TypeError(`${what} must be a function`);
  return value;
}

/** The registrations of one activation (internal). */
export const REGISTRY = Symbol('lingxi.registry');

/**
 * What `activate(ctx)` registers with. Registrations of a failed activation
 * are discarded; the next request activates again with a fresh context.
 */
export class PluginContext {
  /**
   * @param {Logger} logger
   * @param {import('./info.js').InfoHub} info
   * @param {import('./storage.js').Storage} storage
   */
  constructor(logger, info, storage) {
    /** The plugin's logger. */
    this.logger = logger;
    /** Read-only view of the host's runtime snapshot. */
    this.info = info;
    /** The plugin's persistent storage. */
    this.storage = storage;
    /** @private */
    this[REGISTRY] = { tools: [], commands: [], hooks: [], tasks: [] };
  }

  /**
   * Registers a tool: `{name, description, inputSchema?, execute(args, ctx)}`.
   * `args` is the model's raw JSON text; `execute` returns the output text
   * (or a Promise of it). A second tool with the same name replaces the first.
   */
  registerTool(tool) {
    const entry = {
      name: requireString('tool name', tool && tool.name),
      description: requireString(`description of tool '${tool.name}'`, tool.description ?? '', true),
      inputSchema: schemaText(tool.inputSchema),
      execute: requireFunction(`execute of tool '${tool.name}'`, tool.execute),
    };
    const tools = this[REGISTRY].tools;
    const at = tools.findIndex((t) => t.name === entry.name);
    if (at >= 0) {
      this.logger.warn(`tool '${entry.name}' registered twice; the later one wins`);
      tools[at] = entry;
    } else {
      tools.push(entry);
    }
  }

  /**
   * Registers a slash command: `{name, aliases?, description, category?,
   * argumentHint?, execute(args, ctx)}`; `args` are the words typed after the
   * name. A second command with the same name replaces the first.
   */
  registerCommand(command) {
    const name = requireString('command name', command && command.name);
    const entry = {
      name,
      aliases: Array.from(command.aliases ?? [], (a) => requireString(`alias of command '${name}'`, a)),
      description: requireString(`description of command '${name}'`, command.description ?? '', true),
      category: requireString(`category of command '${name}'`, command.category ?? 'Plugin'),
      argumentHint: requireString(`argumentHint of command '${name}'`, command.argumentHint ?? '', true),
      execute: requireFunction(`execute of command '${name}'`, command.execute),
    };
    const commands = this[REGISTRY].commands;
    const at = commands.findIndex((c) => c.name === name);
    if (at >= 0) {
      this.logger.warn(`command '${name}' registered twice; the later one wins`);
      commands[at] = entry;
    } else {
      commands.push(entry);
    }
  }

  /**
   * Registers a kind of background task: `{name, description?, run(input,
   * ctx)}`. Calls start one with `ctx.tasks.start(name, input)`; `run` gets
   * the input text and a TaskContext and returns the result text (or a
   * Promise of it, or a value sent as JSON). A second kind with the same
   * name replaces the first.
   */
  registerTask(task) {
    const name = requireString('task name', task && task.name);
    const entry = {
      name,
      description: requireString(`description of task '${name}'`, task.description ?? '', true),
      run: requireFunction(`run of task '${name}'`, task.run),
    };
    const tasks = this[REGISTRY].tasks;
    const at = tasks.findIndex((t) => t.name === name);
    if (at >= 0) {
      this.logger.warn(`task kind '${name}' registered twice; the later one wins`);
      tasks[at] = entry;
    } else {
      tasks.push(entry);
    }
  }

  /**
   * Subscribes `handler(payload)` to an event (a wire name such as
   * `sessionStart`). Handlers of one event run in registration order; a
   * failing handler is logged and does not stop the others or fail the event.
   */
  on(event, handler) {
    this[REGISTRY].hooks.push({
      event: checkHookEvent(event),
      handler: requireFunction(`handler of '${event}'`, handler),
    });
  }

  /**
   * The value of secret `name` the user granted this plugin (`--secret
   * NAME`); throws a PluginError naming the flag that grants it (or the
   * command that sets it). The host hides the value in everything the
   * plugin writes.
   * @param {string} name
   * @returns {string}
   */
  secret(name) {
    return readSecret(name);
  }
}

/**
 * Context of one tool call. It has no info hub on purpose (as in the Rust
 * SDK): tools map input to output; read host state in commands.
 */
export class ToolContext {
  /** @private */
  constructor(sessionId, toolCallId, logger, storage, tasks) {
    /** Session the call belongs to. */
    this.sessionId = sessionId;
    /** Identifier of this tool call. */
    this.toolCallId = toolCallId;
    /** The plugin's logger. */
    this.logger = logger;
    /** The plugin's persistent storage. */
    this.storage = storage;
    /** The plugin's background tasks (a Tasks). */
    this.tasks = tasks;
    Object.freeze(this);
  }

  /**
   * The value of secret `name` the user granted this plugin (`--secret
   * NAME`); throws a PluginError naming the flag that grants it (or the
   * command that sets it). The host hides the value in everything the
   * plugin writes.
   * @param {string} name
   * @returns {string}
   */
  secret(name) {
    return readSecret(name);
  }
}

/** Context of one slash command. */
export class CommandContext {
  /** @private */
  constructor(sessionId, info, logger, storage, tasks) {
    /** Session, if the command runs inside one (else `undefined`). */
    this.sessionId = sessionId;
    /** Read-only view of the host's runtime snapshot. */
    this.info = info;
    /** The plugin's logger. */
    this.logger = logger;
    /** The plugin's persistent storage. */
    this.storage = storage;
    /** The plugin's background tasks (a Tasks). */
    this.tasks = tasks;
    Object.freeze(this);
  }

  /**
   * The value of secret `name` the user granted this plugin (`--secret
   * NAME`); throws a PluginError naming the flag that grants it (or the
   * command that sets it). The host hides the value in everything the
   * plugin writes.
   * @param {string} name
   * @returns {string}
   */
  secret(name) {
    return readSecret(name);
  }
}
