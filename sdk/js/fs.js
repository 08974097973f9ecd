// Synchronous file access for plugins, over the component's
// `wasi:filesystem` imports (componentize-js has no built-in file API).
//
// A plugin sees only the directories the host mounted ("preopens"): the
// workspace (with projectRead / projectWrite), extra `--allow-read` /
// `--allow-write` folders, and its data directory `/lingxi/data`. Paths are
// absolute paths inside one of them (relative paths count from `/`, as in
// every WASI program). Errors are FsError, with Node.js-style codes and texts
// (`ENOENT: no such file or directory, open '/x'`).

import { PluginError } from './types.js';

const dispose = Symbol.dispose || Symbol.for('dispose');
const encoder = new TextEncoder();
const lossy = new TextDecoder();
const CHUNK = 1 << 20;

/** wasi:filesystem error-code -> [Node.js code, description]. */
const CODES = {
  access: ['EACCES', 'permission denied'],
  'would-block': ['EAGAIN', 'resource temporarily unavailable'],
  already: ['EALREADY', 'operation already in progress'],
  'bad-descriptor': ['EBADF', 'bad file descriptor'],
  busy: ['EBUSY', 'resource busy or locked'],
  deadlock: ['EDEADLK', 'resource deadlock avoided'],
  quota: ['EDQUOT', 'disk quota exceeded'],
  exist: ['EEXIST', 'file already exists'],
  'file-too-large': ['EFBIG', 'file too large'],
  'illegal-byte-sequence': ['EILSEQ', 'illegal byte sequence'],
  'in-progress': ['EINPROGRESS', 'operation in progress'],
  interrupted: ['EINTR', 'interrupted system call'],
  invalid: ['EINVAL', 'invalid argument'],
  io: ['EIO', 'i/o error'],
  'is-directory': ['EISDIR', 'illegal operation on a directory'],
  loop: ['ELOOP', 'too many symbolic links encountered'],
  'too-many-links': ['EMLINK', 'too many links'],
  'message-size': ['EMSGSIZE', 'message too long'],
  'name-too-long': ['ENAMETOOLONG', 'name too long'],
  'no-device': ['ENODEV', 'no such device'],
  'no-entry': ['ENOENT', 'no such file or directory'],
  'no-lock': ['ENOLCK', 'no locks available'],
  'insufficient-memory': ['ENOMEM', 'not enough memory'],
  'insufficient-space': ['ENOSPC', 'no space left on device'],
  'not-directory': ['ENOTDIR', 'not a directory'],
  'not-empty': ['ENOTEMPTY', 'directory not empty'],
  'not-recoverable': ['ENOTRECOVERABLE', 'state not recoverable'],
  unsupported: ['ENOTSUP', 'operation not supported'],
  'no-tty': ['ENOTTY', 'inappropriate ioctl for device'],
  'no-such-device': ['ENXIO', 'no such device or address'],
  overflow: ['EOVERFLOW', 'value too large for defined data type'],
  'not-permitted': ['EPERM', 'operation not permitted'],
  pipe: ['EPIPE', 'broken pipe'],
  'read-only': ['EROFS', 'read-only file system'],
  'invalid-seek': ['ESPIPE', 'invalid seek'],
  'text-file-busy': ['ETXTBSY', 'text file is busy'],
  'cross-device': ['EXDEV', 'cross-device link not permitted'],
};

/**
 * A failed file operation. `code` is the Node.js code (`ENOENT`, `EROFS`,
 * `EACCES` for a path outside every mounted directory, refused by the host,
 * which logs the setting that would allow it…).
 * It is a PluginError: thrown from a tool, its message is the answer.
 */
export class FsError extends PluginError {
  /**
   * @param {string} code Node.js-style code
   * @param {string} description what it means
   * @param {string} syscall the operation (`open`, `rename`…)
   * @param {string} path the path as given
   */
  constructor(code, description, syscall, path) {
    super(`${code}: ${description}, ${syscall} '${path}'`);
    this.name = 'FsError';
    /** Node.js-style code, e.g. `ENOENT`. */
    this.code = code;
    /** The operation, e.g. `open`. */
    this.syscall = syscall;
    /** The path as given. */
    this.path = path;
  }
}

/**
 * Cleans a path into an absolute one without empty or `.` parts. `..` parts
 * are kept: WASI resolves them inside the mounted directory, after following
 * symbolic links, as POSIX does (`link/../x` is `x` next to the link's
 * target, not next to the link), and refuses them past the mount.
 */
export function normalize(path) {
  const out = [];
  for (const part of String(path).split('/')) {
    if (part !== '' && part !== '.') out.push(part);
  }
  return '/' + out.join('/');
}

/**
 * Makes the file API over a `getDirectories` function (the component's
 * `wasi:filesystem/preopens.get-directories`).
 * @param {() => Array<[object, string]>} getDirectories
 */
export function createFs(getDirectories) {
  let preopens;

  function wrap(e, syscall, path) {
    if (e instanceof FsError) return e;
    const code = e && typeof e.payload === 'string' ? e.payload : undefined;
    if (code && CODES[code]) return new FsError(CODES[code][0], CODES[code][1], syscall, path);
    return e;
  }

  function mounted() {
    if (preopens === undefined) {
      preopens = getDirectories().map(([d, p]) => [d, normalize(p)]);
    }
    return preopens;
  }

  /** [preopen descriptor, path relative to it] for `path`. */
  function locate(path, syscall) {
    const abs = normalize(path);
    let best;
    for (const [d, p] of mounted()) {
      const inside = p === '/' || abs === p || abs.startsWith(p + '/');
      if (inside && (best === undefined || p.length > best[1].length)) best = [d, p];
    }
    if (best === undefined) {
      throw new FsError('ENOTCAPABLE', 'not inside any directory the host mounted for this plugin', syscall, path);
    }
    const rel = best[1] === '/' ? abs.slice(1) : abs.slice(best[1].length + 1);
    return [best[0], rel === '' ? '.' : rel];
  }

  function call(syscall, path, f) {
    try {
      return f();
    } catch (e) {
      throw wrap(e, syscall, path);
    }
  }

  function open(path, openFlags, flags, syscall) {
    return call(syscall, path, () => {
      const [dir, rel] = locate(path, syscall);
      return dir.openAt({ symlinkFollow: true }, rel, openFlags, flags);
    });
  }

  const fs = {
    /** The directories the host mounted, as absolute paths. */
    roots() {
      return mounted().map(([, p]) => p);
    },

    /** The file's bytes. @returns {Uint8Array} */
    readFile(path) {
      const fd = open(path, {}, { read: true }, 'open');
      try {
        return call('read', path, () => {
          const chunks = [];
          let total = 0;
          for (;;) {
            const [buf, eof] = fd.read(BigInt(CHUNK), BigInt(total));
            if (buf.length > 0) chunks.push(buf);
            total += buf.length;
            if (eof || buf.length === 0) break;
          }
          if (chunks.length === 1) return chunks[0];
          const out = new Uint8Array(total);
          let at = 0;
          for (const c of chunks) {
            out.set(c, at);
            at += c.length;
          }
          return out;
        });
      } finally {
        fd[dispose]();
      }
    },

    /** The file's text (UTF-8; invalid bytes are replaced). */
    readTextFile(path) {
      return lossy.decode(fs.readFile(path));
    },

    /** Creates or replaces a file with `data` (a string, as UTF-8, or bytes). */
    writeFile(path, data) {
      const bytes = typeof data === 'string' ? encoder.encode(data) : data;
      const fd = open(path, { create: true, truncate: true }, { write: true }, 'open');
      try {
        call('write', path, () => {
          let at = 0;
          while (at < bytes.length) {
            const n = fd.write(bytes.subarray(at, at + CHUNK), BigInt(at));
            at += Number(n);
          }
        });
      } finally {
        fd[dispose]();
      }
    },

    /** The names in a directory (without `.` and `..`), in the order the host lists them. */
    readDir(path) {
      const fd = open(path, { directory: true }, { read: true }, 'scandir');
      try {
        return call('scandir', path, () => {
          const stream = fd.readDirectory();
          try {
            const names = [];
            for (let e = stream.readDirectoryEntry(); e !== undefined; e = stream.readDirectoryEntry()) {
              names.push(e.name);
            }
            return names;
          } finally {
            stream[dispose]();
          }
        });
      } finally {
        fd[dispose]();
      }
    },

    /**
     * `{type, size, modified}` of a path (symbolic links followed): type is
     * `regular-file`, `directory`, `symbolic-link`…; modified is a Date or undefined.
     */
    stat(path) {
      return call('stat', path, () => {
        const [dir, rel] = locate(path, 'stat');
        const s = dir.statAt({ symlinkFollow: true }, rel);
        const m = s.dataModificationTimestamp;
        return {
          type: s.type,
          size: Number(s.size),
          modified: m ? new Date(Number(m.seconds) * 1000 + Math.floor(m.nanoseconds / 1e6)) : undefined,
        };
      });
    },

    /** Whether the path exists (false also when it is outside every mounted directory, which the host refuses and logs). */
    exists(path) {
      try {
        fs.stat(path);
        return true;
      } catch (e) {
        // EACCES: outside every mount, the host refuses every path alike.
        if (e instanceof FsError && ['ENOENT', 'ENOTCAPABLE', 'EACCES'].includes(e.code)) return false;
        throw e;
      }
    },

    /** Creates a directory; with `{recursive: true}` also its parents, and an existing one is fine. */
    mkdir(path, options = {}) {
      if (!options.recursive) {
        call('mkdir', path, () => {
          const [dir, rel] = locate(path, 'mkdir');
          dir.createDirectoryAt(rel);
        });
        return;
      }
      const parts = normalize(path).split('/').slice(1);
      for (let i = 1; i <= parts.length; i++) {
        const sub = '/' + parts.slice(0, i).join('/');
        // A folder above a mount exists, and is not the plugin's to make.
        if (i < parts.length && mounted().some(([, p]) => p.startsWith(sub + '/'))) continue;
        try {
          const [dir, rel] = locate(sub, 'mkdir');
          if (rel === '.') continue;
          dir.createDirectoryAt(rel);
        } catch (e) {
          const err = wrap(e, 'mkdir', path);
          if (err instanceof FsError && (err.code === 'EEXIST' || (err.code === 'ENOTCAPABLE' && i < parts.length))) continue;
          throw err;
        }
      }
    },

    /** Removes a file. */
    unlink(path) {
      call('unlink', path, () => {
        const [dir, rel] = locate(path, 'unlink');
        dir.unlinkFileAt(rel);
      });
    },

    /** Removes an empty directory. */
    rmdir(path) {
      call('rmdir', path, () => {
        const [dir, rel] = locate(path, 'rmdir');
        dir.removeDirectoryAt(rel);
      });
    },

    /** Renames (moves) `from` to `to`, replacing `to` if it is a file. */
    rename(from, to) {
      call('rename', from, () => {
        const [fromDir, fromRel] = locate(from, 'rename');
        const [toDir, toRel] = locate(to, 'rename');
        fromDir.renameAt(fromRel, toDir, toRel);
      });
    },
  };
  return fs;
}
