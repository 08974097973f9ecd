// The runtime's protocol semantics, driven natively (no component): the same
// cases as the Rust SDK's runtime tests, plus the JavaScript-only ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { createRuntime, SDK_VERSION } from '../runtime.js';
import { CommandResult, PluginError } from '../types.js';
import { DEFAULT_INPUT_SCHEMA } from '../schema.js';
import { command, fakeHost, hook, init, rejection, tool } from './fake-host.mjs';

const manifest = { id: 'com.test.fixture', name: 'Fixture', version: '0.1.0', description: 'A test plugin' };

function fixture(extra = {}) {
  const { host, logs } = fakeHost();
  const order = [];
  const rt = createRuntime(
    {
      manifest: { ...manifest, capabilities: ['projectRead', 'networkAccess'] },
      activate(ctx) {
        ctx.registerTool({ name: 'echo', description: 'Echoes', execute: (a, c) => `${a}@${c.sessionId}/${c.toolCallId}` });
        ctx.registerCommand({ name: 'status', aliases: ['st'], description: 'Shows', execute: (args) => CommandResult.inline(`status ${args.join(' ')}`) });
        ctx.on('toolAfter', () => order.push('toolAfter'));
        ctx.on('sessionStart', () => order.push('first'));
        ctx.on('sessionStart', () => {
          throw new PluginError('second fails');
        });
        ctx.on('sessionStart', () => order.push('third'));
        extra.activate?.(ctx);
      },
      deactivate: extra.deactivate,
    },
    host,
  );
  return { rt, logs, order };
}

test('handshake lists registrations, defaults and deduplicated sorted hooks', async () => {
  const { rt } = fixture();
  const hs = await rt.initialize(init());
  assert.equal(hs.ipcVersion, 1);
  assert.equal(hs.sdkVersion, SDK_VERSION);
  assert.equal(SDK_VERSION, '0.1.0');
  assert.deepEqual(hs.manifest, {
    ...manifest,
    author: undefined,
    capabilities: ['project-read', 'network-access'],
    minimumCoreVersion: undefined,
  });
  assert.deepEqual(hs.tools, [{ name: 'echo', description: 'Echoes', inputSchema: DEFAULT_INPUT_SCHEMA }]);
  assert.equal(DEFAULT_INPUT_SCHEMA, '{"type": "object", "properties": {}}');
  assert.deepEqual(hs.commands, [{ name: 'status', aliases: ['st'], description: 'Shows', category: 'Plugin', argumentHint: '' }]);
  // sessionStart is registered three times, toolAfter first: sorted by wire name.
  assert.deepEqual(hs.supportedHooks, ['session-start', 'tool-after']);
  assert.deepEqual(await rt.initialize({}), hs, 'a second initialize answers the same');
  assert.deepEqual(await rt.initialize(init(undefined)), hs, 'older hosts send no version');
});

test('unsupported IPC version has the reference text', async () => {
  const { rt } = fixture();
  assert.equal(await rejection(rt.initialize(init(2n))), 'Unsupported host IPC version 2; plugin supports [1].');
  assert.equal(await rejection(rt.initialize(init(-7))), 'Unsupported host IPC version -7; plugin supports [1].');
});

test('failed activation is retried by the next request', async () => {
  const { host } = fakeHost();
  let activations = 0;
  const rt = createRuntime(
    {
      manifest,
      activate(ctx) {
        activations += 1;
        ctx.registerTool({ name: 'echo', description: '', execute: (a) => a });
        if (activations === 1) throw new PluginError('not yet');
      },
    },
    host,
  );
  assert.equal(await rejection(rt.initialize(init())), 'not yet');
  assert.equal(await rt.executeTool(tool('echo')), '{}');
  assert.equal(await rt.executeTool(tool('echo')), '{}');
  assert.equal(activations, 2);
});

test('tools activate lazily; unknown names have the reference texts', async () => {
  const { rt } = fixture();
  assert.equal(await rt.executeTool(tool('echo')), '{}@s/c');
  assert.equal(await rejection(rt.executeTool(tool('nope'))), "Tool 'nope' not found in plugin");
  assert.equal(await rejection(rt.executeTool(tool('ECHO'))), "Tool 'ECHO' not found in plugin");
  assert.equal(await rejection(rt.executeCommand(command('Nope'))), "Command 'Nope' not found in plugin");
});

test('commands resolve by name, alias and ASCII case, exact first', async () => {
  const { rt } = fixture({
    activate(ctx) {
      ctx.registerCommand({ name: 'ST', description: '', execute: () => CommandResult.prompt('upper') });
    },
  });
  const text = async (name) => (await rt.executeCommand(command(name, ['a']))).val;
  const expected = { text: 'status a', presentation: 'inline', title: undefined };
  for (const name of ['status', 'STATUS', 'Status', 'st']) assert.deepEqual(await text(name), expected, name);
  assert.equal(await text('ST'), 'upper', 'an exact name beats a folded alias');
  assert.deepEqual(await text('sT'), expected, 'folded: the first command that matches');
  assert.equal(await rejection(rt.executeCommand(command('ſtatus'))), "Command 'ſtatus' not found in plugin");
});

test('hooks run in order; failures are logged with the Rust text, not returned', async () => {
  const { rt, logs, order } = fixture();
  assert.equal(await rt.emitHook(hook('session-start', 's-1', [['sessionID', 's-1']])), undefined);
  assert.deepEqual(order, ['first', 'third']);
  assert.deepEqual(logs, ["error: sessionStart handler #2 failed for 's-1': second fails"]);
  assert.equal(await rt.emitHook(hook('agent-turn-end')), undefined, 'no handler: still acknowledged');
});

test('hook handlers see wire event names and metadata as an object', async () => {
  let seen;
  const { rt } = fixture({ activate: (ctx) => ctx.on('agentTurnEnd', (p) => (seen = p)) });
  await rt.emitHook(hook('agent-turn-end', 't', [['sessionID', 's'], ['k', 'v']]));
  assert.deepEqual({ ...seen, metadata: { ...seen.metadata } }, {
    event: 'agentTurnEnd',
    subjectId: 't',
    metadata: { sessionID: 's', k: 'v' },
  });
});

test('a thrown non-PluginError answers <Name>: <message>, is logged, and the instance lives on', async () => {
  const { rt, logs } = fixture({
    activate(ctx) {
      ctx.registerTool({ name: 'bug', description: '', execute: () => null.x });
      ctx.registerTool({ name: 'str', description: '', execute: () => { throw 'plain text'; } });
      ctx.registerTool({ name: 'obj', description: '', execute: () => { throw { a: 1 }; } });
      ctx.registerTool({ name: 'async', description: '', execute: async () => { throw new RangeError('late'); } });
      ctx.registerCommand({ name: 'bad', description: '', execute: () => 42 });
      ctx.on('toolBefore', () => { throw new TypeError('hook bug'); });
    },
  });
  assert.match(await rejection(rt.executeTool(tool('bug'))), /^TypeError: /);
  assert.match(logs.at(-1), /^error: tool 'bug' failed: TypeError: /);
  assert.equal(await rejection(rt.executeTool(tool('str'))), 'plain text');
  assert.equal(await rejection(rt.executeTool(tool('obj'))), 'Error: {"a":1}');
  assert.equal(await rejection(rt.executeTool(tool('async'))), 'RangeError: late');
  assert.equal(await rejection(rt.executeCommand(command('bad'))), 'TypeError: a command must return a CommandResult or a string');
  await rt.emitHook(hook('tool-before', 'c-9'));
  assert.equal(logs.at(-1), "error: toolBefore handler #1 failed for 'c-9': TypeError: hook bug");
  assert.equal(await rt.executeTool(tool('echo')), '{}@s/c');
});

test('tool outputs: strings verbatim, other values as JSON', async () => {
  const { rt } = fixture({
    activate(ctx) {
      ctx.registerTool({ name: 'json', description: '', execute: () => ({ n: 1n, list: [1] }) });
      ctx.registerTool({ name: 'none', description: '', execute: async () => undefined });
    },
  });
  assert.equal(await rt.executeTool(tool('json')), '{"n":1,"list":[1]}');
  assert.equal(await rt.executeTool(tool('none')), '');
});

test('command results map to the component variant', async () => {
  const results = {
    modal: CommandResult.message('m'),
    titled: CommandResult.inline('i').withTitle('T'),
    moved: CommandResult.message('p').withPresentation('inline'),
    prompt: CommandResult.prompt('go').withTitle('ignored'),
    plain: 'just text',
  };
  const { rt } = fixture({
    activate(ctx) {
      for (const [name, r] of Object.entries(results)) ctx.registerCommand({ name, description: '', execute: () => r });
    },
  });
  const run = (name) => rt.executeCommand(command(name));
  assert.deepEqual(await run('modal'), { tag: 'message', val: { text: 'm', presentation: 'modal', title: undefined } });
  assert.deepEqual(await run('titled'), { tag: 'message', val: { text: 'i', presentation: 'inline', title: 'T' } });
  assert.deepEqual(await run('moved'), { tag: 'message', val: { text: 'p', presentation: 'inline', title: undefined } });
  assert.deepEqual(await run('prompt'), { tag: 'prompt', val: 'go' });
  assert.deepEqual(await run('plain'), { tag: 'message', val: { text: 'just text', presentation: 'modal', title: undefined } });
});

test('a duplicate registration replaces the first, with a warning', async () => {
  const { rt, logs } = fixture({
    activate(ctx) {
      ctx.registerTool({ name: 'echo', description: 'second', execute: () => 'later' });
      ctx.registerCommand({ name: 'status', description: 'second', execute: () => 'later' });
    },
  });
  const hs = await rt.initialize(init());
  assert.deepEqual(hs.tools.map((t) => t.description), ['second']);
  assert.deepEqual(hs.commands.map((c) => [c.description, c.aliases]), [['second', []]]);
  assert.equal(await rt.executeTool(tool('echo')), 'later');
  assert.deepEqual(logs, [
    "warn: tool 'echo' registered twice; the later one wins",
    "warn: command 'status' registered twice; the later one wins",
  ]);
});

test('deactivate runs only if active, once per activation', async () => {
  let calls = 0;
  const { rt } = fixture({ deactivate: () => (calls += 1) });
  await rt.deactivate();
  assert.equal(calls, 0);
  await rt.initialize(init());
  await rt.deactivate();
  await rt.deactivate();
  assert.equal(calls, 1);
  await rt.executeTool(tool('echo'));
  await rt.deactivate();
  assert.equal(calls, 2, 'a request after deactivate activates again');
});

test('the manifest is checked when the plugin is defined', () => {
  const { host } = fakeHost();
  assert.throws(() => createRuntime({ manifest: { ...manifest, capabilities: ['fileRead'] } }, host), /unknown capability 'fileRead'/);
  assert.throws(() => createRuntime({ manifest: { ...manifest, id: '' } }, host), /manifest.id/);
  assert.equal(createRuntime({ manifest }, host).getManifest().capabilities.length, 0);
});

test('bad registrations fail the activation with a TypeError text', async () => {
  const { host, logs } = fakeHost();
  const rt = createRuntime({ manifest, activate: (ctx) => ctx.on('someFutureEvent', () => {}) }, host);
  assert.match(await rejection(rt.initialize(init())), /^TypeError: unknown hook event 'someFutureEvent'/);
  assert.match(logs[0], /^error: activation failed: TypeError/);
});

test('ctx.secret reads a granted secret, and says why when there is none', async () => {
  const { host } = fakeHost();
  host.secret = (name) => {
    if (name === 'API_TOKEN') return 'tok-123456789';
    const e = new Error('refused');
    e.payload = `secret ${name} is not granted to this plugin: grant it with --secret ${name}`;
    throw e;
  };
  const rt = createRuntime({
    manifest,
    activate: (ctx) => {
      assert.equal(ctx.secret('API_TOKEN'), 'tok-123456789');
      ctx.registerTool({ name: 'use', description: 'd', execute: (args, call) => call.secret(args) });
    },
  }, host);
  await rt.initialize(init());
  assert.equal(await rt.executeTool(tool('use', 'API_TOKEN')), 'tok-123456789');
  assert.equal(await rejection(rt.executeTool(tool('use', 'OTHER'))), 'secret OTHER is not granted to this plugin: grant it with --secret OTHER');
});
