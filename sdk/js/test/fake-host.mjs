// A fake host for the runtime tests: records log lines and serves snapshot
// sections the way the component's imports do (a WIT error is thrown as a
// value whose `payload` is the info-unavailable record).

import * as nodeFs from 'node:fs';

/** A snapshot section that is absent: throws like componentize-js does. */
function missing(field, lastSnapshot) {
  const e = new Error('info-unavailable');
  e.payload = { field, lastSnapshot };
  throw e;
}

/**
 * @param {object} [snapshot] `{observedAt, workspace?, peCore?, contextState?, performance?}`
 * @param {string} [dataDir]
 */
export function fakeHost(snapshot, dataDir) {
  const logs = [];
  const section = (field) => () => {
    if (snapshot && snapshot[field] !== undefined) return snapshot[field];
    return missing(field, snapshot ? snapshot.observedAt : undefined);
  };
  return {
    logs,
    host: {
      log: (level, message) => logs.push(`${level}: ${message}`),
      info: {
        workspace: section('workspace'),
        peCore: section('peCore'),
        contextState: section('contextState'),
        performance: section('performance'),
        latestSnapshot: () => snapshot,
      },
      dataDir: () => dataDir,
      fs: nodeFsAdapter,
    },
  };
}

/** The SDK's file API over Node's fs (errors keep Node's `code`). */
export const nodeFsAdapter = {
  readFile: (p) => new Uint8Array(nodeFs.readFileSync(p)),
  writeFile: (p, bytes) => nodeFs.writeFileSync(p, bytes),
  rename: (a, b) => nodeFs.renameSync(a, b),
  unlink: (p) => nodeFs.unlinkSync(p),
  mkdir: (p, o) => nodeFs.mkdirSync(p, o),
  readDir: (p) => nodeFs.readdirSync(p),
};

/** A `plugin.initialize` request. */
export const init = (v = 1n) => ({ hostIpcVersion: v, coreVersion: '1.1.0' });

/** A `tool.execute` call. */
export const tool = (name, args = '{}') => ({ toolName: name, arguments: args, sessionId: 's', toolCallId: 'c' });

/** A `command.execute` call. */
export const command = (name, args = []) => ({ commandName: name, arguments: args, sessionId: undefined });

/** A `hook.emit` payload (component names: kebab-case events, metadata pairs). */
export const hook = (event, subjectId = 'x', metadata = []) => ({ event, subjectId, metadata });

/** The text a promise rejected with (the runtime rejects with strings only). */
export async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    if (typeof e !== 'string') throw new Error(`rejected with a ${typeof e}, not a string: ${e}`);
    return e;
  }
  throw new Error('expected a rejection');
}
