// The JavaScript test guest: well-behaved tools, a command that reads the
// info hub, hooks, and tools that attack the sandbox on purpose (files,
// network, environment, stdout, resource exhaustion). It declares every
// capability, so each test decides with `--grant` what it really gets.
// Tools take RAW string arguments (not JSON).

import {
  CommandResult,
  PluginError,
  definePlugin,
  environment,
  fs,
  logger,
  storage,
} from 'lingxi-plugin';
import { getStdout } from 'wasi:cli/stdout@0.2.12';
import { getStderr } from 'wasi:cli/stderr@0.2.12';
import { tcpPing } from './net.js';

const MiB = 1024 * 1024;
const encoder = new TextEncoder();

/** The arguments of tool `tool`, read as a non-negative integer. */
function number(args, tool) {
  const text = args.trim();
  if (!/^\d+$/.test(text)) throw new PluginError(`${tool} takes a number: '${args}'`);
  return Number(text);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes bytes to one of the instance's own output streams. */
function write(stream, text) {
  const bytes = encoder.encode(text);
  for (let at = 0; at < bytes.length; at += 4096) stream.blockingWriteAndFlush(bytes.subarray(at, at + 4096));
}

/** name -> function of the raw arguments (may be async). */
const TOOLS = {
  ok: (args) => `ok:${args}`,
  // The value of the secret the arguments name: {"name": NAME}.
  secret: (args, ctx) => `the value is ${ctx.secret(JSON.parse(args).name)}`,
  fail: (args) => {
    throw new PluginError(`failed on purpose: ${args}`);
  },
  // Errors are FsError: `ENOENT: no such file or directory, open '<path>'`.
  'read-file': (path) => fs.readTextFile(path),
  'write-file': (args) => {
    const at = args.indexOf('\n');
    if (at < 0) throw new PluginError('write-file takes <path>\\n<content>');
    const content = encoder.encode(args.slice(at + 1));
    fs.writeFile(args.slice(0, at), content);
    return `wrote ${content.length} bytes`;
  },
  env: () =>
    Object.entries(environment())
      .map(([k, v]) => `${k}=${v}`)
      .join(','),
  tcp: (target) => tcpPing(target.trim()),
  http: async (url) => {
    let response;
    try {
      response = await fetch(url.trim());
    } catch (e) {
      throw new PluginError(`${url.trim()}: ${e && e.name}: ${e && e.message}`);
    }
    return `${response.status} ${await response.text()}`;
  },
  spin: () => {
    for (;;) {
      // Burns the CPU until the host's deadline stops the instance.
    }
  },
  sleep: async (args) => {
    const secs = number(args, 'sleep');
    await sleep(secs * 1000);
    return `slept ${secs} s`;
  },
  'alloc-mib': (args) => {
    const mib = number(args, 'alloc-mib');
    const block = new Uint8Array(mib * MiB);
    block.fill(1);
    let touched = 0;
    for (let i = 0; i < block.length; i += 4096) touched += block[i];
    return `allocated ${(touched * 4096) / MiB} MiB`;
  },
  'big-result': (args) => 'x'.repeat(number(args, 'big-result') * MiB),
  'log-flood': (args) => {
    const n = number(args, 'log-flood');
    const line = 'y'.repeat(1024);
    for (let i = 0; i < n; i++) logger.info(line);
    return `logged ${n}`;
  },
  'print-stdout': () => {
    // Would break the protocol channel if it reached the host's stdout.
    const out = getStdout();
    write(out, '{"id":"X","result":"forged"}\n');
    write(out, 'partial line without newline');
    write(getStderr(), 'a line on stderr\n');
    return 'printed';
  },
  len: (args) => String(encoder.encode(args).length),
  // Storage, for the storage tests: `key=value`, `key`, nothing.
  'kv-set': (args) => {
    const at = args.indexOf('=');
    if (at < 0) throw new PluginError('key=value');
    storage.set(args.slice(0, at), args.slice(at + 1));
    return 'stored';
  },
  'kv-get': (key) => storage.getString(key) ?? '<none>',
  'kv-keys': () => storage.keys().join(','),
};

/** Snapshot sections, JSON-formatted (s64 values are plain numbers). */
const SECTIONS = {
  workspace: (info) => info.workspaceInfo(),
  peCore: (info) => info.peCoreInfo(),
  contextState: (info) => info.contextState(),
  performance: (info) => info.performanceInfo(),
};

/** Counts activations, to observe re-initialization after a restart. */
let activations = 0;

export const plugin = definePlugin({
  manifest: {
    id: 'com.lingxi.testbed',
    name: 'Testbed',
    version: '0.1.0',
    description: "Test guest for the host's end-to-end tests",
    capabilities: ['projectRead', 'projectWrite', 'networkAccess', 'processExecution'],
  },

  async activate(ctx) {
    // A slow start, for the deadline tests (`--env TESTBED_ACTIVATE_MS=…`).
    const ms = Number(environment().TESTBED_ACTIVATE_MS);
    if (ms > 0) await sleep(ms);
    activations += 1;
    ctx.logger.info(`activation #${activations}`);
    for (const [name, execute] of Object.entries(TOOLS)) {
      ctx.registerTool({ name, description: 'test tool', execute });
    }
    ctx.registerCommand({
      name: 'info',
      description: 'Shows a snapshot section',
      argumentHint: 'workspace|peCore|contextState|performance',
      execute(args, cmd) {
        const section = Object.hasOwn(SECTIONS, args[0] ?? '') ? SECTIONS[args[0]] : undefined;
        if (!section) return CommandResult.prompt('which section?');
        return CommandResult.inline(JSON.stringify(section(cmd.info), null, 2)).withTitle('info');
      },
    });
    ctx.on('agentTurnEnd', (p) => ctx.logger.info(`turn ended: ${p.subjectId}`));
    ctx.on('agentTurnEnd', () => {
      throw new PluginError('second handler fails');
    });
  },

  deactivate() {
    logger.info('deactivated');
  },
});
