// Replays one exchange with the built component, as a LingXi host would:
// `plugin.initialize`, then a `tool.execute` of `greet`, through
// `lingxi-wasm-run` (found on PATH, or at $LINGXI_WASM_RUN).
//
// Build the component first (`npm run build`), then `npm test`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const component = fileURLToPath(new URL('../build/plugin.wasm', import.meta.url));

test('initialize, then greet', () => {
  assert.ok(existsSync(component), 'build the component first: npm run build');
  const launcher = process.env.LINGXI_WASM_RUN ?? 'lingxi-wasm-run';
  const requests = [
    { id: '1', method: 'plugin.initialize', params: { hostIPCVersion: 1 } },
    {
      id: '2',
      method: 'tool.execute',
      params: { toolName: 'greet', arguments: JSON.stringify({ name: 'Ada' }), sessionID: 's-1', toolCallID: 'c-1' },
    },
  ];
  const run = spawnSync(launcher, [component], {
    input: requests.map((r) => JSON.stringify(r) + '\n').join(''),
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(run.error, undefined, `cannot start ${launcher}: install it or set LINGXI_WASM_RUN`);
  assert.equal(run.status, 0, run.stderr);
  const responses = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.equal(responses.length, 2, run.stdout);
  assert.equal(responses[0].result.manifest.id, '__ID__');
  assert.equal(responses[1].result, 'Hello, Ada!', JSON.stringify(responses[1]));
});
