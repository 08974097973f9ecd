// InfoUnavailable texts and ISO-8601 formatting, as in the Rust SDK (info.rs).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { createRuntime } from '../runtime.js';
import { CommandResult } from '../types.js';
import { InfoHub, InfoUnavailable, iso8601 } from '../info.js';
import { command, fakeHost, rejection } from './fake-host.mjs';

test('unavailable without a snapshot', () => {
  assert.equal(
    new InfoUnavailable('performance', undefined).message,
    'Plugin runtime info unavailable: performance (no snapshot received)',
  );
});

test('unavailable names the last snapshot time, whole seconds, UTC, Z', () => {
  // Unix 1 800 000 000 is the spec fixture's observedAt.
  const at = { seconds: 1_800_000_000n, nanoseconds: 250_000_000 };
  assert.equal(
    new InfoUnavailable('peCore', at).message,
    'Plugin runtime info unavailable: peCore (last snapshot 2027-01-15T08:00:00Z)',
  );
});

test('iso8601 matches the Rust formatting', () => {
  assert.equal(iso8601({ seconds: 0, nanoseconds: 999_999_999 }), '1970-01-01T00:00:00Z');
  assert.equal(iso8601({ seconds: 978_307_300n, nanoseconds: 0 }), '2001-01-01T00:01:40Z');
  assert.equal(iso8601({ seconds: -1, nanoseconds: 0 }), '1969-12-31T23:59:59Z');
  assert.equal(iso8601({ seconds: 253_402_300_799, nanoseconds: 0 }), '9999-12-31T23:59:59Z');
  assert.equal(iso8601({ seconds: 253_402_300_800, nanoseconds: 0 }), '@253402300800s');
});

test('the info hub throws InfoUnavailable and turns s64 values into numbers', () => {
  const observedAt = { seconds: 1_800_000_000n, nanoseconds: 0 };
  const workspace = { rootPath: '/repo', isGitRepository: true, dirtyFileCount: 3n, coreVersion: '1.1.0' };
  const { host } = fakeHost({ observedAt, workspace });
  const hub = new InfoHub(host.info);
  assert.deepEqual(hub.workspaceInfo(), { ...workspace, dirtyFileCount: 3 });
  assert.throws(() => hub.peCoreInfo(), (e) => e instanceof InfoUnavailable && e.field === 'peCore' &&
    e.message === 'Plugin runtime info unavailable: peCore (last snapshot 2027-01-15T08:00:00Z)');
  assert.deepEqual(hub.snapshot().observedAt, { seconds: 1_800_000_000, nanoseconds: 0 });
  assert.equal(new InfoHub(fakeHost().host.info).snapshot(), undefined);
});

test('a command that lets InfoUnavailable escape answers its exact text', async () => {
  const { host, logs } = fakeHost();
  const rt = createRuntime(
    {
      manifest: { id: 'a.b', name: 'n', version: '1', description: 'd' },
      activate(ctx) {
        ctx.registerCommand({
          name: 'probe',
          description: '',
          execute: (_a, c) => CommandResult.message(`root=${c.info.workspaceInfo().rootPath}`),
        });
      },
    },
    host,
  );
  assert.equal(
    await rejection(rt.executeCommand(command('probe'))),
    'Plugin runtime info unavailable: workspace (no snapshot received)',
  );
  assert.deepEqual(logs, [], 'an expected error is not logged as a bug');
});
