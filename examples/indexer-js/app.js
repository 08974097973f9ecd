// indexer in JavaScript: long work in the background. `index.start` starts
// a task that counts the lines of the workspace's files and answers
// `task:<id>` at once (a LingXi call has 3 s; the count may take minutes);
// `index.status` reads the task, `index.cancel` stops it. On the wire it is
// the Rust examples/indexer; the end-to-end tests drive both alike.
//
// - `index.start {"delay_ms": N}` (optional: wait N ms first) → `task:<id>`
// - `index.status {"task": "<id>"}` → `running`, `done: <N> lines`,
//   `failed: …` or `cancelled`
// - `index.cancel {"task": "<id>"}` → `cancelled` or `not running`
//
// Build: scripts/componentize js examples/indexer-js indexer-js.wasm

import { InputSchema, PluginError, Property, definePlugin, fs } from 'lingxi-plugin';

const START = new InputSchema()
  .property(
    'delay_ms',
    Property.integer('Wait this many milliseconds first (for demos and tests)').minimum(0).maximum(3600000),
  )
  .noAdditionalProperties()
  .startsTask();

const TASK = new InputSchema()
  .property('task', Property.string('The id index.start answered (task:<id>)'))
  .required(['task'])
  .noAdditionalProperties();

/** Waits `ms` milliseconds (a WASI clock wait: the host can stop it). */
function sleep(ms) {
  return new Promise((done) => setTimeout(done, ms));
}

/**
 * Lines under `path`: a file's newlines (a last line without one counts),
 * a folder's files', skipping what cannot be read (links are followed: the
 * task deadline bounds a loop).
 */
function count(path) {
  let stat;
  try {
    stat = fs.stat(path);
  } catch {
    return 0;
  }
  if (stat.type === 'directory') {
    return fs
      .readDir(path)
      .sort()
      .reduce((sum, name) => sum + count(`${path}/${name}`), 0);
  }
  if (stat.type !== 'regular-file') return 0;
  let bytes;
  try {
    bytes = fs.readFile(path);
  } catch {
    return 0;
  }
  let lines = 0;
  for (const b of bytes) if (b === 10) lines++;
  return lines + (bytes.length > 0 && bytes[bytes.length - 1] !== 10 ? 1 : 0);
}

/** The id of `{"task": "<id>"}`, with or without `task:`. */
function taskId(args) {
  const { task } = JSON.parse(args || '{}');
  if (typeof task !== 'string') throw new PluginError('expected {"task": "<id>"}');
  return task.startsWith('task:') ? task.slice(5) : task;
}

export const plugin = definePlugin({
  manifest: {
    id: 'com.lingxi.indexer-js',
    name: 'Indexer (JavaScript)',
    version: '0.1.0',
    description: 'Counts the lines of the workspace in the background',
    capabilities: ['projectRead'],
  },
  activate(ctx) {
    // ANCHOR: task
    ctx.registerTask({
      name: 'count-lines',
      description: "Counts the lines of the workspace's files",
      async run(input, task) {
        const { delay_ms: delay = 0 } = JSON.parse(input || '{}');
        if (delay > 0) {
          task.progress(0, 'waiting');
          await sleep(delay);
        }
        const root = task.info.workspaceInfo().rootPath;
        const names = fs.readDir(root).sort();
        let lines = 0;
        names.forEach((name, done) => {
          task.progress(done / Math.max(names.length, 1), `counting ${name}`);
          lines += count(`${root}/${name}`);
        });
        return `${lines} lines`;
      },
    });
    // ANCHOR_END: task
    // ANCHOR: start
    ctx.registerTool({
      name: 'index.start',
      description:
        "Starts counting the workspace's lines in the background; answers task:<id> at once. Read it with index.status.",
      inputSchema: START,
      execute: (args, call) => `task:${call.tasks.start('count-lines', args.trim() || '{}')}`,
    });
    // ANCHOR_END: start
    ctx.registerTool({
      name: 'index.status',
      description: 'Reads an indexing task: running, done: <N> lines, failed: … or cancelled.',
      inputSchema: TASK,
      execute(args, call) {
        const id = taskId(args);
        const state = call.tasks.status(id);
        if (state === undefined) return `unknown task ${id} (finished tasks are kept for a while, then forgotten)`;
        if (state.state === 'running') return 'running';
        if (state.state === 'succeeded') return `done: ${state.result}`;
        if (state.state === 'failed') return `failed: ${state.error}`;
        return 'cancelled';
      },
    });
    ctx.registerTool({
      name: 'index.cancel',
      description: 'Cancels an indexing task.',
      inputSchema: TASK,
      execute: (args, call) => (call.tasks.cancel(taskId(args)) ? 'cancelled' : 'not running'),
    });
  },
});
