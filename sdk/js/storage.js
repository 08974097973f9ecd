// Persistent per-plugin storage: a key-value store in the plugin's private
// data directory, which the host keeps across restarts and upgrades and
// bounds with a size quota. The same layout as the Rust SDK, so a plugin can
// change language without losing its data:
//
// Values live in files under `<data dir>/kv/`, one per key. Keys are encoded
// into safe file names (every byte of the key's UTF-8 but `A-Z a-z 0-9 _ -`
// becomes `%XX`), so no key can name a path outside that folder. Writes are
// atomic (a temporary `<name>.tmp` file, renamed). For raw files use
// `storage.dir()` with the SDK's `fs`.

import { PluginError } from './types.js';

/** Longest key, in bytes of UTF-8 (its encoded file name stays under 255 bytes). */
export const MAX_KEY_BYTES = 80;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });
const lossy = new TextDecoder();
const SAFE = /^[A-Za-z0-9_-]$/;

/** Why a storage operation failed. Its message is the Rust SDK's text. */
export class StorageError extends PluginError {
  /**
   * @param {'unavailable'|'invalid-key'|'io'} kind
   * @param {string} message
   * @param {unknown} [cause] the file system error, for `io`
   */
  constructor(kind, message, cause) {
    super(message);
    this.name = 'StorageError';
    /** `unavailable`, `invalid-key` or `io`. */
    this.kind = kind;
    /** The underlying error, for `io`. */
    this.cause = cause;
  }
}

/** A string as Rust's `{:?}` writes it: quoted, with `\"`, `\\`, `\n`… escaped. */
export function rustDebug(text) {
  let out = '"';
  for (const ch of text) {
    const c = ch.codePointAt(0);
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\0') out += '\\0';
    else if (c < 0x20 || (c >= 0x7f && c < 0xa0)) out += `\\u{${c.toString(16)}}`;
    else out += ch;
  }
  return out + '"';
}

/** Encodes a key into a file name of `[A-Za-z0-9_%-]` only. */
export function encodeKey(key) {
  let name = '';
  for (const b of encoder.encode(key)) {
    const ch = String.fromCharCode(b);
    name += b < 0x80 && SAFE.test(ch) ? ch : '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return name;
}

/** The key of a file name made by {@link encodeKey}; `undefined` for other files. */
export function decodeKey(name) {
  const bytes = [];
  for (let i = 0; i < name.length; ) {
    const ch = name[i];
    if (ch === '%') {
      const hex = name.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
      bytes.push(parseInt(hex, 16));
      i += 3;
    } else if (SAFE.test(ch)) {
      bytes.push(ch.charCodeAt(0));
      i += 1;
    } else {
      return undefined;
    }
  }
  try {
    const key = decoder.decode(new Uint8Array(bytes));
    return key === '' ? undefined : key;
  } catch {
    return undefined;
  }
}

function compareBytes(a, b) {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/**
 * Handle to the plugin's storage; reached through the contexts
 * (`ctx.storage`). Every method is synchronous.
 */
export class Storage {
  /**
   * @param {() => (string|undefined)} dataDir the host's data directory, if any
   * @param {object} fs a file system with `readFile`, `writeFile`, `rename`,
   *   `unlink`, `mkdir(path, {recursive})`, `readDir`; errors carry `code`
   *   (`ENOENT` when a file does not exist)
   */
  constructor(dataDir, fs) {
    /** @private */
    this.dataDir = dataDir;
    /** @private */
    this.fs = fs;
  }

  /** The plugin's data directory (`/lingxi/data`), for raw files. */
  dir() {
    const dir = this.dataDir();
    if (dir === undefined || dir === null) {
      throw new StorageError(
        'unavailable',
        'plugin storage unavailable: the host gives this plugin no data directory',
      );
    }
    return dir;
  }

  /** @private */
  kvDir() {
    return this.dir().replace(/\/+$/, '') + '/kv';
  }

  /** @private */
  path(key) {
    key = String(key);
    const bytes = encoder.encode(key).length;
    if (bytes === 0 || bytes > MAX_KEY_BYTES) {
      throw new StorageError('invalid-key', `invalid storage key ${rustDebug(key)}: use 1 to ${MAX_KEY_BYTES} bytes`);
    }
    return this.kvDir() + '/' + encodeKey(key);
  }

  /** @private */
  fail(op, key, e) {
    const text = e instanceof Error ? e.message : String(e);
    return new StorageError('io', `storage ${op} '${key}': ${text}`, e);
  }

  /**
   * The value stored under `key`, or `undefined`.
   * @returns {Uint8Array|undefined}
   */
  get(key) {
    const path = this.path(key);
    try {
      return this.fs.readFile(path);
    } catch (e) {
      if (e && e.code === 'ENOENT') return undefined;
      throw this.fail('get', key, e);
    }
  }

  /** The value stored under `key` as text (invalid UTF-8 is replaced), or `undefined`. */
  getString(key) {
    const bytes = this.get(key);
    return bytes === undefined ? undefined : lossy.decode(bytes);
  }

  /** The value stored under `key` parsed as JSON, or `undefined`. */
  getJson(key) {
    const text = this.getString(key);
    return text === undefined ? undefined : JSON.parse(text);
  }

  /** Stores `value` (a string or bytes) under `key`, replacing what was there. */
  set(key, value) {
    const path = this.path(key);
    const bytes = typeof value === 'string' ? encoder.encode(value) : value;
    if (!(bytes instanceof Uint8Array)) throw new TypeError('storage.set takes a string or a Uint8Array');
    const tmp = path + '.tmp';
    try {
      this.fs.mkdir(this.kvDir(), { recursive: true });
      this.fs.writeFile(tmp, bytes);
    } catch (e) {
      throw this.fail('set', key, e);
    }
    try {
      this.fs.rename(tmp, path);
    } catch (e) {
      try {
        this.fs.unlink(tmp);
      } catch {
        // The rename's error is the one to report.
      }
      throw this.fail('set', key, e);
    }
  }

  /** Stores `value` as JSON text under `key`. */
  setJson(key, value) {
    this.set(key, JSON.stringify(value));
  }

  /** Removes `key`; returns whether it existed. */
  remove(key) {
    const path = this.path(key);
    try {
      this.fs.unlink(path);
      return true;
    } catch (e) {
      if (e && e.code === 'ENOENT') return false;
      throw this.fail('remove', key, e);
    }
  }

  /** Every stored key, sorted (by UTF-8 bytes, as the Rust SDK sorts). */
  keys() {
    const dir = this.kvDir();
    let names;
    try {
      names = this.fs.readDir(dir);
    } catch (e) {
      if (e && e.code === 'ENOENT') return [];
      throw this.fail('keys', '', e);
    }
    return names
      .map(decodeKey)
      .filter((k) => k !== undefined)
      .sort(compareBytes);
  }
}
