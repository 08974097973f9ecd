// Background tasks, driven natively: registration, the task runner export
// (kinds, run, errors), starting, reading and cancelling from a tool,
// progress reports, and how states are described (as the Rust SDK does).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { createRuntime } from '../runtime.js';
import { PluginError } from '../types.js';
import { describe } from '../tasks.js';
import { fakeHost, rejection, tool } from './fake-host.mjs';

/** A fake `lingxi:plugin/tasks`: started tasks and their WIT states. */
function fakeTasks() {
  const fake = { started: new Map(), states: new Map(), progress: [], refuse: undefined };
  fake.host = {
    start(kind, input) {
      if (fake.refuse !== undefined) {
        const e = new Error('refused');
        e.payload = fake.refuse;
        throw e;
      }
      const id = `t-${fake.started.size}`;
      fake.started.set(id, [kind, input]);
      fake.states.set(id, { tag: 'running', val: undefined });
      return id;
    },
    status: (id) => fake.states.get(id),
    cancel(id) {
      if (fake.states.get(id)?.tag !== 'running') return false;
      fake.states.set(id, { tag: 'cancelled' });
      return true;
    },
    reportProgress: (p) => fake.progress.push([p.fraction, p.message]),
  };
  return fake;
}

function worker() {
  const { host, logs } = fakeHost();
  const tasks = fakeTasks();
  const rt = createRuntime(
    {
      manifest: { id: 'com.test.worker', name: 'Worker', version: '1.0.0', description: 'test' },
      activate(ctx) {
        ctx.registerTask({
          name: 'count',
          description: 'Counts to its input',
          async run(input, task) {
            const total = Number(input);
            for (let n = 0; n < total; n++) task.progress(n / total, `at ${n}`);
            return `counted ${total} in ${task.id}`;
          },
        });
        ctx.registerTask({ name: 'fail', run: (input) => { throw new PluginError(`no: ${input}`); } });
        ctx.registerTask({ name: 'crash', run: () => null.crash });
        ctx.registerTask({ name: 'json', run: (input) => ({ input }) });
        ctx.registerTool({ name: 'start', execute: (a, c) => { const [k, ...rest] = a.split(' '); return `task:${c.tasks.start(k, rest.join(' '))}`; } });
        ctx.registerTool({ name: 'status', execute: (a, c) => describe(c.tasks.status(a)) });
        ctx.registerTool({ name: 'cancel', execute: (a, c) => String(c.tasks.cancel(a)) });
      },
    },
    { ...host, tasks: tasks.host },
  );
  return { rt, logs, tasks };
}

test('the task runner lists the kinds and runs them, reporting progress', async () => {
  const { rt, tasks } = worker();
  assert.deepEqual(await rt.taskRunner.kinds(), [
    { name: 'count', description: 'Counts to its input' },
    { name: 'fail', description: '' },
    { name: 'crash', description: '' },
    { name: 'json', description: '' },
  ]);
  assert.equal(await rt.taskRunner.run('count', '4', 't-9'), 'counted 4 in t-9');
  assert.deepEqual(tasks.progress, [[0, 'at 0'], [0.25, 'at 1'], [0.5, 'at 2'], [0.75, 'at 3']]);
  assert.equal(await rt.taskRunner.run('json', 'x', 't-1'), '{"input":"x"}');
});

test('a failing task answers its error text; a bug is logged', async () => {
  const { rt, logs } = worker();
  assert.equal(await rejection(rt.taskRunner.run('fail', 'why', 't-1')), 'no: why');
  const crashed = await rejection(rt.taskRunner.run('crash', '', 't-2'));
  assert.match(crashed, /^TypeError/);
  assert.ok(logs.some((l) => l.startsWith("error: task 'crash' failed")), logs.join('\n'));
  assert.equal(await rejection(rt.taskRunner.run('nope', '', 't-3')), "Task kind 'nope' not registered by plugin");
});

test('a tool starts, reads and cancels a task', async () => {
  const { rt, tasks } = worker();
  assert.equal(await rt.executeTool(tool('start', 'count 3')), 'task:t-0');
  assert.deepEqual(tasks.started.get('t-0'), ['count', '3']);
  assert.equal(await rt.executeTool(tool('status', 't-0')), 'running');
  tasks.states.set('t-0', { tag: 'running', val: { fraction: 0.5, message: 'half' } });
  assert.equal(await rt.executeTool(tool('status', 't-0')), 'running (50%): half');
  assert.equal(await rt.executeTool(tool('cancel', 't-0')), 'true');
  assert.equal(await rt.executeTool(tool('status', 't-0')), 'cancelled');
  assert.equal(await rt.executeTool(tool('cancel', 't-0')), 'false');
  assert.equal(await rt.executeTool(tool('status', 't-7')), 'unknown task');
});

test('unknown kinds and host refusals fail the call with their text', async () => {
  const { rt, tasks } = worker();
  assert.equal(
    await rejection(rt.executeTool(tool('start', 'nope'))),
    "Task kind 'nope' not registered by plugin; registered: count, fail, crash, json",
  );
  tasks.refuse = 'plugin com.test.worker already runs 4 background tasks, its limit';
  assert.equal(await rejection(rt.executeTool(tool('start', 'count 1'))), tasks.refuse);
});

test('states are described like the Rust SDK', () => {
  const cases = [
    [undefined, 'unknown task'],
    [{ state: 'running' }, 'running'],
    [{ state: 'running', message: 'waiting' }, 'running: waiting'],
    [{ state: 'running', fraction: 0.25, message: 'm' }, 'running (25%): m'],
    [{ state: 'succeeded', result: '42 lines' }, 'done: 42 lines'],
    [{ state: 'failed', error: 'boom' }, 'failed: boom'],
    [{ state: 'cancelled' }, 'cancelled'],
  ];
  for (const [state, text] of cases) assert.equal(describe(state), text);
});
