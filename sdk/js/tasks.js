// Background tasks: long work a plugin starts from a tool or command call
// and reads in later calls. LingXi Core gives a call 3.0 s; a task gets
// minutes, on an instance of its own, so the plugin keeps answering.
//
// Register kinds of task in `activate` (`ctx.registerTask({name, run})`),
// start one from a call with `ctx.tasks.start(kind, input)` (the id comes
// back at once) and read it later with `ctx.tasks.status(id)`. The host runs
// the task with the plugin's grants, under budgets of its own (a deadline,
// memory, output, how many run at once, how long a result is kept).

import { PluginError } from './types.js';
import { readSecret } from './secrets.js';

/** The host's refusal text of a thrown WIT error (its `payload`). */
function refusal(e) {
  if (e && typeof e.payload === 'string') return e.payload;
  return e instanceof Error ? e.message : String(e);
}

/**
 * The SDK's state of the host's (WIT) one: `{state: 'running', fraction?,
 * message?}`, `{state: 'succeeded', result}`, `{state: 'failed', error}`,
 * `{state: 'cancelled'}`; `undefined` for none.
 */
export function taskState(value) {
  if (value === undefined || value === null) return undefined;
  switch (value.tag) {
    case 'running': {
      const progress = value.val;
      if (progress === undefined || progress === null) return Object.freeze({ state: 'running' });
      return Object.freeze({ state: 'running', fraction: progress.fraction, message: progress.message });
    }
    case 'succeeded':
      return Object.freeze({ state: 'succeeded', result: value.val });
    case 'failed':
      return Object.freeze({ state: 'failed', error: value.val });
    default:
      return Object.freeze({ state: 'cancelled' });
  }
}

/**
 * A state in a word or a line, as a status tool would answer: `running`
 * (with its progress), `done: <result>`, `failed: <error>`, `cancelled`;
 * `unknown task` for `undefined`.
 */
export function describe(state) {
  if (state === undefined) return 'unknown task';
  switch (state.state) {
    case 'running':
      if (state.message === undefined) return 'running';
      if (state.fraction === undefined || state.fraction === null) return `running: ${state.message}`;
      return `running (${Math.round(state.fraction * 100)}%): ${state.message}`;
    case 'succeeded':
      return `done: ${state.result}`;
    case 'failed':
      return `failed: ${state.error}`;
    default:
      return 'cancelled';
  }
}

/** Starts, reads and cancels the plugin's background tasks, from a call. */
export class Tasks {
  /**
   * @private
   * @param {string[]} kinds the registered kinds
   * @param {object} host `{start, status, cancel}`: the WIT `tasks` functions
   */
  constructor(kinds, host) {
    /** @private */
    this.kinds = kinds;
    /** @private */
    this.host = host;
    Object.freeze(this);
  }

  /**
   * Starts a task of kind `kind` with `input` (text) and returns its id at
   * once. Throws PluginError if no such kind is registered, or if the host
   * refuses (too many tasks running, the plugin is stopping…), with its reason.
   */
  start(kind, input = '') {
    if (!this.kinds.includes(kind)) {
      const known = this.kinds.length ? this.kinds.join(', ') : 'none';
      throw new PluginError(`Task kind '${kind}' not registered by plugin; registered: ${known}`);
    }
    try {
      return this.host.start(String(kind), String(input));
    } catch (e) {
      throw new PluginError(refusal(e));
    }
  }

  /** The state of task `id`; `undefined` if unknown or its result expired. */
  status(id) {
    return taskState(this.host.status(String(id)));
  }

  /** Cancels task `id` if it is running: `true` if it was. */
  cancel(id) {
    return Boolean(this.host.cancel(String(id)));
  }
}

/** What a running task is handed. */
export class TaskContext {
  /** @private */
  constructor(id, logger, storage, info, reportProgress) {
    /** The task's id (what `tasks.start` returned). */
    this.id = id;
    /** The plugin's logger. */
    this.logger = logger;
    /** The plugin's persistent storage. */
    this.storage = storage;
    /** Read-only view of the host's snapshot as it was when the task started. */
    this.info = info;
    /** @private */
    this.reportProgress = reportProgress;
    Object.freeze(this);
  }

  /**
   * Reports progress: `fraction` done (0 to 1, or undefined if not known)
   * and what the task is doing. It counts against the task's output budget:
   * report when something changed, not in a tight loop.
   */
  progress(fraction, message) {
    const known = fraction === undefined || fraction === null ? undefined : Number(fraction);
    this.reportProgress({ fraction: known, message: String(message) });
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
