// lingxi-plugin: write LingXi plugins in JavaScript that run inside a
// WebAssembly sandbox (componentize-js). The API follows the Rust SDK: a
// plugin has a manifest and, in `activate(ctx)`, registers tools, slash
// commands and hook handlers. Commands read the host's runtime snapshot
// through `ctx.info`, whose getters throw InfoUnavailable when the host did
// not publish a section.
//
//   import { definePlugin, CommandResult } from 'lingxi-plugin';
//
//   export const plugin = definePlugin({
//     manifest: { id: 'com.example.hello', name: 'Hello', version: '0.1.0',
//                 description: 'Says hello', capabilities: [] },
//     activate(ctx) {
//       ctx.registerTool({ name: 'hello', description: 'Greets',
//                          execute: (args) => `hello ${args}` });
//     },
//   });
//
// Build: scripts/componentize js DIR OUT.wasm (DIR holds app.js). This file
// wires the component's imports into runtime.js, which holds the semantics.

import { log } from 'lingxi:plugin/logging@0.1.2';
import {
  contextState,
  dataDir,
  latestSnapshot,
  peCore,
  performance as performanceSection,
  secret,
  workspace,
} from 'lingxi:plugin/host-info@0.1.2';
import { cancel, reportProgress, start, status } from 'lingxi:plugin/tasks@0.1.2';
import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';
import { getEnvironment } from 'wasi:cli/environment@0.2.12';

import { createRuntime } from './runtime.js';
import { Logger } from './context.js';
import { Storage } from './storage.js';
import { createFs } from './fs.js';

export { SDK_VERSION, SUPPORTED_IPC_VERSIONS } from './runtime.js';
export { Capability, CommandResult, HookEvent, PluginError } from './types.js';
export { CommandContext, Logger, PluginContext, ToolContext } from './context.js';
export { TaskContext, Tasks, describe } from './tasks.js';
export { InfoHub, InfoUnavailable, iso8601 } from './info.js';
export { DEFAULT_INPUT_SCHEMA, InputSchema, Property, keywords } from './schema.js';
export { MAX_KEY_BYTES, Storage, StorageError } from './storage.js';
export { FsError } from './fs.js';

/**
 * Synchronous file access inside the directories the host mounted:
 * `readFile`, `readTextFile`, `writeFile`, `readDir`, `stat`, `exists`,
 * `mkdir`, `unlink`, `rmdir`, `rename`, `roots`. Errors are FsError.
 */
export const fs = createFs(getDirectories);

/** The plugin's logger, usable outside any context (e.g. in `deactivate`). */
export const logger = new Logger(log);

/** The plugin's persistent storage, usable outside any context. */
export const storage = new Storage(dataDir, fs);

/**
 * The environment variables the host passes (only those given with
 * `--env`), as an object.
 * @returns {Record<string, string>}
 */
export function environment() {
  return Object.fromEntries(getEnvironment());
}

/**
 * Defines the plugin. Export the result as `plugin` from app.js:
 * `export const plugin = definePlugin({...})`.
 * @param {object} definition `{manifest, activate(ctx), deactivate()}`:
 *   the manifest (wire names: capabilities such as `projectRead`); activate
 *   registers tools, commands and hooks, runs once on `plugin.initialize` or
 *   lazily on the first call, and after a failure again on the next request;
 *   deactivate runs when the host closes the session, if the plugin was active.
 * @returns {object} the component's `lingxi:plugin/plugin` export (its
 *   `taskRunner` is the `task-runner` export; the build exports it)
 */
export function definePlugin(definition) {
  return createRuntime(definition, {
    log,
    info: {
      workspace,
      peCore,
      contextState,
      performance: performanceSection,
      latestSnapshot,
    },
    dataDir,
    fs,
    tasks: { start, status, cancel, reportProgress },
    secret,
  });
}
