// The file API over wasi:filesystem, against fake descriptors backed by Node's
// fs: path resolution inside the mounted directories, reads and writes in
// chunks, error codes and texts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as nfs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createFs, normalize, FsError } from '../fs.js';
import { Storage } from '../storage.js';

const dispose = Symbol.dispose || Symbol.for('dispose');
const CODES = { ENOENT: 'no-entry', EEXIST: 'exist', ENOTDIR: 'not-directory', EISDIR: 'is-directory', ENOTEMPTY: 'not-empty' };

/** Runs a Node fs call, throwing like componentize-js (payload = WASI error code). */
function wasi(f) {
  try {
    return f();
  } catch (e) {
    throw Object.assign(new Error(CODES[e.code] ?? 'io'), { payload: CODES[e.code] ?? 'io' });
  }
}

class FakeFile {
  constructor(fd) { this.fd = fd; this.open = true; }
  read(len, off) {
    const buf = Buffer.alloc(Math.min(Number(len), 3)); // tiny reads: exercise the loop
    const n = nfs.readSync(this.fd, buf, 0, buf.length, Number(off));
    return [new Uint8Array(buf.subarray(0, n)), n === 0];
  }
  write(bytes, off) { return BigInt(nfs.writeSync(this.fd, bytes.subarray(0, 2), 0, Math.min(2, bytes.length), Number(off))); }
  readDirectory() {
    const names = nfs.readdirSync(this.path);
    return { readDirectoryEntry: () => (names.length ? { type: 'regular-file', name: names.shift() } : undefined), [dispose]() {} };
  }
  [dispose]() { if (this.fd !== undefined) nfs.closeSync(this.fd); this.open = false; }
}

class FakeDir {
  constructor(root) { this.root = root; }
  at(rel) {
    // WASI resolves `..` inside the directory and refuses it past the top.
    const p = join(this.root, rel);
    assert.ok(!rel.startsWith('/') && (p === this.root || p.startsWith(this.root + '/')), `escaping path ${rel}`);
    return p;
  }
  openAt(_pf, rel, o, f) {
    const p = this.at(rel);
    return wasi(() => {
      if (o.directory) { nfs.readdirSync(p); const d = new FakeFile(undefined); d.path = p; return d; }
      return new FakeFile(nfs.openSync(p, f.write ? (o.truncate ? 'w' : 'r+') : 'r'));
    });
  }
  statAt(_pf, rel) {
    const s = wasi(() => nfs.statSync(this.at(rel)));
    return { type: s.isDirectory() ? 'directory' : 'regular-file', size: BigInt(s.size), dataModificationTimestamp: undefined };
  }
  createDirectoryAt(rel) { wasi(() => nfs.mkdirSync(this.at(rel))); }
  unlinkFileAt(rel) { wasi(() => nfs.unlinkSync(this.at(rel))); }
  removeDirectoryAt(rel) { wasi(() => nfs.rmdirSync(this.at(rel))); }
  renameAt(rel, other, rel2) { wasi(() => nfs.renameSync(this.at(rel), other.at(rel2))); }
}

function mounts() {
  const ws = nfs.mkdtempSync(join(tmpdir(), 'lingxi-ws-'));
  const data = nfs.mkdtempSync(join(tmpdir(), 'lingxi-data-'));
  return { ws, data, fs: createFs(() => [[new FakeDir(ws), '/work/ws'], [new FakeDir(data), '/lingxi/data/']]) };
}

test('paths are cleaned, and `..` is left for WASI to resolve', () => {
  assert.equal(normalize('a/./b/../c'), '/a/b/../c');
  assert.equal(normalize('/x//y/'), '/x/y');
  assert.equal(normalize('/../..'), '/../..');
});

test('files are read and written in chunks inside the mounted directories', () => {
  const { ws, fs } = mounts();
  fs.writeFile('/work/ws/a.txt', 'héllo wörld');
  assert.equal(nfs.readFileSync(join(ws, 'a.txt'), 'utf8'), 'héllo wörld');
  assert.equal(fs.readTextFile('/work/ws/sub/../a.txt'), 'héllo wörld');
  assert.deepEqual(fs.roots(), ['/work/ws', '/lingxi/data']);
  fs.mkdir('/work/ws/d/e', { recursive: true });
  fs.mkdir('/work/ws/d/e', { recursive: true });
  assert.deepEqual(fs.readDir('/work/ws').sort(), ['a.txt', 'd']);
  assert.equal(fs.stat('/work/ws/a.txt').size, 13);
  assert.equal(fs.stat('/work/ws').type, 'directory');
  fs.rename('/work/ws/a.txt', '/work/ws/d/b.txt');
  assert.equal(fs.exists('/work/ws/a.txt'), false);
  assert.equal(fs.exists('/work/ws/d/b.txt'), true);
  fs.unlink('/work/ws/d/b.txt');
  fs.rmdir('/work/ws/d/e');
});

test('errors carry Node.js codes and texts', () => {
  const { fs } = mounts();
  assert.throws(() => fs.readFile('/work/ws/missing'), (e) => e instanceof FsError && e.code === 'ENOENT' &&
    e.message === "ENOENT: no such file or directory, open '/work/ws/missing'");
  assert.throws(() => fs.readFile('/etc/passwd'), {
    code: 'ENOTCAPABLE',
    message: "ENOTCAPABLE: not inside any directory the host mounted for this plugin, open '/etc/passwd'",
  });
  assert.throws(() => fs.readFile('/work/wsx/a'), { code: 'ENOTCAPABLE' }, 'a prefix is not a parent');
  assert.throws(() => fs.mkdir('/work/ws'), { code: 'EEXIST', message: "EEXIST: file already exists, mkdir '/work/ws'" });
  assert.equal(fs.exists('/elsewhere'), false);
});

test('storage works over it, in /lingxi/data/kv', () => {
  const { data, fs } = mounts();
  const s = new Storage(() => '/lingxi/data', fs);
  s.set('a key', 'value');
  assert.deepEqual(nfs.readdirSync(join(data, 'kv')), ['a%20key']);
  assert.equal(s.getString('a key'), 'value');
  assert.deepEqual(s.keys(), ['a key']);
  assert.equal(s.get('other'), undefined);
  assert.equal(s.remove('a key'), true);
});
