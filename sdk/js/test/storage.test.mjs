// Key-value storage: the Rust SDK's layout (kv/<encoded key>), key limits and
// error texts; over Node's fs here, over wasi:filesystem in a component.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Storage, StorageError, encodeKey, decodeKey, rustDebug, MAX_KEY_BYTES } from '../storage.js';
import { nodeFsAdapter } from './fake-host.mjs';

const fresh = () => mkdtempSync(join(tmpdir(), 'lingxi-storage-'));

test('keys encode to safe names and back (the Rust cases)', () => {
  for (const key of ['counter', '../../etc/passwd', '.', '..', 'a/b\\c', 'ключ', '%41', 'a b']) {
    const name = encodeKey(key);
    assert.match(name, /^[A-Za-z0-9_%-]+$/, name);
    assert.equal(decodeKey(name), key);
  }
  assert.equal(encodeKey('a b/ä'), 'a%20b%2F%C3%A4');
  assert.equal(decodeKey('x.tmp'), undefined);
  assert.equal(decodeKey('%zz'), undefined);
  assert.equal(decodeKey('%FF'), undefined, 'not UTF-8');
});

test('without a data directory storage is unavailable, with the Rust text', () => {
  const s = new Storage(() => undefined, nodeFsAdapter);
  for (const op of [() => s.get('k'), () => s.set('k', 'v'), () => s.keys(), () => s.dir()]) {
    assert.throws(op, (e) => e instanceof StorageError && e.kind === 'unavailable' &&
      e.message === 'plugin storage unavailable: the host gives this plugin no data directory');
  }
});

test('keys must be 1 to 80 bytes; the text quotes the key as Rust does', () => {
  const dir = fresh();
  const s = new Storage(() => dir, nodeFsAdapter);
  assert.throws(() => s.get(''), { message: 'invalid storage key "": use 1 to 80 bytes' });
  const long = 'é'.repeat(41); // 82 bytes
  assert.throws(() => s.set(long, 'v'), { message: `invalid storage key "${long}": use 1 to 80 bytes` });
  assert.doesNotThrow(() => s.set('k'.repeat(MAX_KEY_BYTES), 'v'));
  assert.equal(rustDebug('a"b\\c\nd\te\0\u0001\'ü'), '"a\\"b\\\\c\\nd\\te\\0\\u{1}\'ü"');
});

test('set, get, remove and sorted keys, in kv/ with atomic writes', () => {
  const dir = fresh();
  const s = new Storage(() => dir, nodeFsAdapter);
  assert.deepEqual(s.keys(), []);
  assert.equal(s.get('counter'), undefined);
  s.set('counter', '1');
  s.set('counter', '2');
  s.set('b/../x', new Uint8Array([0xff, 0x41]));
  s.setJson('obj', { a: [1] });
  assert.equal(s.getString('counter'), '2');
  assert.equal(s.getString('b/../x'), '\ufffdA');
  assert.deepEqual(s.getJson('obj'), { a: [1] });
  assert.deepEqual(readdirSync(join(dir, 'kv')).sort(), ['b%2F..%2Fx'.replace(/\./g, '%2E'), 'counter', 'obj'].sort());
  assert.equal(readFileSync(join(dir, 'kv', 'counter'), 'utf8'), '2');
  writeFileSync(join(dir, 'kv', 'stray.tmp'), 'x');
  assert.deepEqual(s.keys(), ['b/../x', 'counter', 'obj']);
  assert.equal(s.remove('counter'), true);
  assert.equal(s.remove('counter'), false);
  assert.deepEqual(s.keys(), ['b/../x', 'obj']);
});

test('file errors are reported as storage <op> <key>: <error>', () => {
  const fail = (what) => () => {
    throw Object.assign(new Error(`EROFS: read-only file system, ${what}`), { code: 'EROFS' });
  };
  const readOnly = { ...nodeFsAdapter, writeFile: fail('open'), unlink: fail('unlink'), readFile: fail('open'), readDir: fail('scandir') };
  const s = new Storage(() => fresh(), readOnly);
  assert.throws(() => s.set('k', 'w'), { message: "storage set 'k': EROFS: read-only file system, open" });
  assert.throws(() => s.get('k'), { message: "storage get 'k': EROFS: read-only file system, open" });
  assert.throws(() => s.remove('k'), { message: "storage remove 'k': EROFS: read-only file system, unlink" });
  assert.throws(() => s.keys(), { message: "storage keys '': EROFS: read-only file system, scandir" });
});
