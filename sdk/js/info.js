// The read-only info hub: what the host published in its runtime snapshots.
// Every getter asks the host for one snapshot section. A section the host did
// not send is an InfoUnavailable error, never a default value.

import { PluginError } from './types.js';

/**
 * Formats a timestamp as ISO-8601 in UTC with whole seconds, as Foundation's
 * `ISO8601DateFormatter` does: `2027-01-15T08:00:00Z`.
 * @param {{seconds: number|bigint, nanoseconds?: number}} at
 * @returns {string}
 */
export function iso8601(at) {
  const seconds = Number(at.seconds);
  const date = new Date(seconds * 1000);
  const year = date.getUTCFullYear();
  // The Rust SDK's calendar covers years -9999..=9999; say something truthful beyond.
  if (!Number.isFinite(date.getTime()) || year < -9999 || year > 9999) {
    return `@${at.seconds}s`;
  }
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  const y = year < 0 ? '-' + pad(-year, 3) : pad(year, 4);
  return (
    `${y}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}` +
    `T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}Z`
  );
}

/**
 * A snapshot section the host did not publish. Its message is the protocol's:
 * `Plugin runtime info unavailable: <field> (no snapshot received)` or
 * `… (last snapshot <ISO-8601 time>)`. Thrown from a command it is answered
 * verbatim (it is a PluginError).
 */
export class InfoUnavailable extends PluginError {
  /**
   * @param {string} field wire name: workspace, peCore, contextState, performance
   * @param {{seconds: number, nanoseconds: number}|undefined} lastSnapshot
   */
  constructor(field, lastSnapshot) {
    super(
      `Plugin runtime info unavailable: ${field} (` +
        (lastSnapshot === undefined ? 'no snapshot received)' : `last snapshot ${iso8601(lastSnapshot)})`),
    );
    this.name = 'InfoUnavailable';
    /** Wire name of the missing section. */
    this.field = field;
    /** When the latest snapshot was observed, if any arrived. */
    this.lastSnapshot = lastSnapshot;
  }
}

/**
 * Turns the component's s64 values (BigInt) into plain numbers where they
 * fit exactly, recursively, so that snapshot records are ordinary JSON data.
 */
export function plain(value) {
  if (typeof value === 'bigint') {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value;
  }
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = plain(v);
    return out;
  }
  return value;
}

/**
 * Read-only view of the host's runtime snapshot, reached through
 * `ctx.info` of the activation and command contexts.
 */
export class InfoHub {
  /**
   * @param {object} host `{workspace, peCore, contextState, performance,
   *   latestSnapshot}`: functions that return a section or throw a value whose
   *   `payload` is `{field, lastSnapshot}` (how componentize-js raises a WIT error)
   */
  constructor(host) {
    /** @private */
    this.host = host;
  }

  /** @private */
  section(getter) {
    try {
      return plain(getter());
    } catch (e) {
      const p = e && e.payload;
      if (p && typeof p === 'object' && typeof p.field === 'string') {
        throw new InfoUnavailable(p.field, p.lastSnapshot === undefined ? undefined : plain(p.lastSnapshot));
      }
      throw e;
    }
  }

  /** The workspace section: root path, git state, Core version. */
  workspaceInfo() {
    return this.section(this.host.workspace);
  }

  /** The P-Core / E-Core section. */
  peCoreInfo() {
    return this.section(this.host.peCore);
  }

  /** The conversation section: model, token usage, recent turns. */
  contextState() {
    return this.section(this.host.contextState);
  }

  /** The performance section: latencies and rate limiting. */
  performanceInfo() {
    return this.section(this.host.performance);
  }

  /** The whole latest snapshot, or `undefined` if the host sent none. */
  snapshot() {
    const s = this.host.latestSnapshot();
    return s === undefined ? undefined : plain(s);
  }
}
