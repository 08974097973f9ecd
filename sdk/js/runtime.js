// The protocol semantics that live inside the plugin: IPC version check, lazy
// activation with retry after failure, name and alias resolution, hook
// dispatch in registration order, and the reference plugin's error texts —
// the same as the Rust SDK's runtime.rs.
//
// createRuntime() is plain JavaScript: it takes the host's functions as a
// parameter, so Node.js tests drive it directly; lingxi-plugin.js hands it
// the component's `lingxi:plugin/*` imports. The object it returns is the
// component's `lingxi:plugin/plugin` export. Its methods never throw anything
// but a string (the error text): componentize-js traps on any other value.

import {
  camel,
  commandResultRecord,
  errorText,
  kebab,
  manifestRecord,
} from './types.js';
import { CommandContext, Logger, PluginContext, REGISTRY, ToolContext } from './context.js';
import { InfoHub } from './info.js';
import { Storage } from './storage.js';
import { TaskContext, Tasks } from './tasks.js';
import { useSecrets } from './secrets.js';

/** Background tasks where the host gives none (older hosts, tests). */
const NO_TASKS = Object.freeze({
  start() {
    throw 'this host runs no background tasks';
  },
  status: () => undefined,
  cancel: () => false,
  reportProgress() {},
});

/** IPC versions this SDK speaks. */
export const SUPPORTED_IPC_VERSIONS = Object.freeze([1]);

/** Version of this SDK, sent in the handshake. */
export const SDK_VERSION = '0.1.0';

/** `a` equals `b` ignoring ASCII case (only `A-Z` fold, as Rust's `eq_ignore_ascii_case`). */
function asciiEqualFold(a, b) {
  const fold = (s) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
  return a.length === b.length && fold(a) === fold(b);
}

/** A command by name, then alias; exact case first, then ignoring ASCII case. */
export function resolveCommand(commands, typed) {
  const exact = (c) => c.name === typed || c.aliases.includes(typed);
  const folded = (c) => asciiEqualFold(c.name, typed) || c.aliases.some((a) => asciiEqualFold(a, typed));
  return commands.find(exact) ?? commands.find(folded);
}

/** A tool's output as text: strings verbatim, anything else as JSON. */
function outputText(value) {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? Number(v) : v));
}

/**
 * Makes the runtime of one plugin instance.
 * @param {{manifest: object, activate?: Function, deactivate?: Function}} definition
 * @param {object} host `{log(level, message), info: {workspace, peCore,
 *   contextState, performance, latestSnapshot}, dataDir(), fs, tasks?:
 *   {start, status, cancel, reportProgress}, secret?(name)}`
 * @returns {object} the `plugin` export: getManifest, initialize, executeTool,
 *   executeCommand, emitHook, deactivate; and `taskRunner`, the
 *   `task-runner` export (kinds, run)
 */
export function createRuntime(definition, host) {
  const manifest = manifestRecord(definition.manifest);
  const logger = new Logger(host.log);
  const info = new InfoHub(host.info);
  const storage = new Storage(host.dataDir, host.fs);
  useSecrets(host.secret);
  const taskHost = host.tasks ?? NO_TASKS;
  /** The registrations while active, else undefined. */
  let active;

  /** The `tasks` a call's context carries. */
  const tasksOf = (registry) => new Tasks(registry.tasks.map((t) => t.name), taskHost);

  /** The error text of `e`; a bug (not a PluginError or string) is logged. */
  function fail(what, e) {
    const { text, expected } = errorText(e);
    if (!expected) {
      // One log line (the host shows control characters as `?`); frames name the bundle's lines.
      const frames = e instanceof Error && e.stack ? e.stack.split('\n').filter(Boolean).slice(0, 5) : [];
      logger.error(`${what} failed: ${text}${frames.length ? ` (at ${frames.join(' | ')})` : ''}`);
    }
    return text;
  }

  /** Runs `f`, turning anything it throws into a rejected string. */
  async function guarded(what, f) {
    try {
      return await f();
    } catch (e) {
      throw typeof e === 'string' ? e : fail(what, e);
    }
  }

  /** Activates once; after a failure the next request tries again. */
  async function activate() {
    if (active === undefined) {
      const ctx = new PluginContext(logger, info, storage);
      try {
        if (definition.activate) await definition.activate(ctx);
      } catch (e) {
        throw fail('activation', e);
      }
      active = ctx[REGISTRY];
    }
    return active;
  }

  /** The `task-runner` export: runs tasks on the task's own instance. */
  const taskRunner = {
    /** The registered task kinds; none if activation fails. */
    async kinds() {
      try {
        const registry = await activate();
        return registry.tasks.map((t) => ({ name: t.name, description: t.description }));
      } catch {
        return [];
      }
    },

    /** Runs task `id` of `kind` with `input`: its result text. */
    run(kind, input, id) {
      return guarded('task-runner.run', async () => {
        const registry = await activate();
        const task = registry.tasks.find((t) => t.name === kind);
        if (!task) throw `Task kind '${kind}' not registered by plugin`;
        const ctx = new TaskContext(id, logger, storage, info, taskHost.reportProgress);
        let output;
        try {
          output = await task.run(input, ctx);
        } catch (e) {
          throw fail(`task '${task.name}'`, e);
        }
        return outputText(output);
      });
    },
  };

  return {
    taskRunner,

    /** The manifest, without activating. */
    getManifest() {
      return manifest;
    },

    /** `plugin.initialize`: IPC check, activation, handshake. */
    initialize(request) {
      return guarded('initialize', async () => {
        const v = request ? request.hostIpcVersion : undefined;
        if (v !== undefined && v !== null) {
          const known = SUPPORTED_IPC_VERSIONS.some((s) => BigInt(s) === BigInt(v));
          if (!known) {
            throw `Unsupported host IPC version ${v}; plugin supports [${SUPPORTED_IPC_VERSIONS.join(', ')}].`;
          }
        }
        const registry = await activate();
        const hooks = [...new Set(registry.hooks.map((h) => h.event))].sort((a, b) =>
          a < b ? -1 : a > b ? 1 : 0,
        );
        return {
          manifest,
          ipcVersion: SUPPORTED_IPC_VERSIONS[0],
          sdkVersion: SDK_VERSION,
          tools: registry.tools.map((t) => ({
            name: t.name,
            description: t.description,
            inputSchema: t.inputSchema,
          })),
          commands: registry.commands.map((c) => ({
            name: c.name,
            aliases: [...c.aliases],
            description: c.description,
            category: c.category,
            argumentHint: c.argumentHint,
          })),
          supportedHooks: hooks.map(kebab),
        };
      });
    },

    /** `tool.execute`: exact name match. */
    executeTool(call) {
      return guarded('tool.execute', async () => {
        const registry = await activate();
        const tool = registry.tools.find((t) => t.name === call.toolName);
        if (!tool) throw `Tool '${call.toolName}' not found in plugin`;
        const ctx = new ToolContext(call.sessionId, call.toolCallId, logger, storage, tasksOf(registry));
        let output;
        try {
          output = await tool.execute(call.arguments, ctx);
        } catch (e) {
          throw fail(`tool '${tool.name}'`, e);
        }
        return outputText(output);
      });
    },

    /** `command.execute`: name, then alias; exact case, then ASCII case-insensitive. */
    executeCommand(call) {
      return guarded('command.execute', async () => {
        const registry = await activate();
        const command = resolveCommand(registry.commands, call.commandName);
        if (!command) throw `Command '${call.commandName}' not found in plugin`;
        const ctx = new CommandContext(call.sessionId ?? undefined, info, logger, storage, tasksOf(registry));
        let result;
        try {
          result = await command.execute([...call.arguments], ctx);
        } catch (e) {
          throw fail(`command '${command.name}'`, e);
        }
        return commandResultRecord(result);
      });
    },

    /** `hook.emit`: handlers in registration order; failures are logged, not returned. */
    emitHook(payload) {
      return guarded('hook.emit', async () => {
        const registry = await activate();
        const event = camel(payload.event);
        const hookPayload = Object.freeze({
          event,
          subjectId: payload.subjectId,
          metadata: Object.freeze(Object.fromEntries(payload.metadata)),
        });
        const handlers = registry.hooks.filter((h) => h.event === event);
        for (let i = 0; i < handlers.length; i++) {
          try {
            await handlers[i].handler(hookPayload);
          } catch (e) {
            const { text } = errorText(e);
            logger.error(`${event} handler #${i + 1} failed for '${payload.subjectId}': ${text}`);
          }
        }
      });
    },

    /** End of session: deactivate if active. Never fails. */
    async deactivate() {
      if (active === undefined) return;
      active = undefined;
      try {
        if (definition.deactivate) await definition.deactivate();
      } catch (e) {
        fail('deactivate', e);
      }
    },
  };
}
