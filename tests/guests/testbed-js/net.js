// A plain TCP client over the component's wasi:sockets imports: JavaScript
// under componentize-js has no socket API of its own (only `fetch`, over
// wasi:http), but a module may import any WASI interface.

import { instanceNetwork } from 'wasi:sockets/instance-network@0.2.12';
import { resolveAddresses } from 'wasi:sockets/ip-name-lookup@0.2.12';
import { createTcpSocket } from 'wasi:sockets/tcp-create-socket@0.2.12';

const dispose = Symbol.dispose || Symbol.for('dispose');

// componentize-js 0.23 emits no class for a resource without methods
// (wasi:sockets/network's `network`) yet its bindings construct one by that
// name, so instance-network() throws "import_network_0_2_12$Network is not
// defined". The bindings run in their own global (not this module's
// globalThis): reach it through one of their functions and define the class.
const bindingsGlobal = instanceNetwork.constructor('return this')();
bindingsGlobal['import_network_0_2_12$Network'] ??= class Network {};

/** The WASI error code a failed call threw (its `payload`), or the error itself. */
function code(e) {
  return e && e.payload !== undefined ? e.payload : e;
}

/** Retries `f` while it fails with `would-block`, waiting on `pollable()`. */
function blocking(f, pollable) {
  for (;;) {
    try {
      return f();
    } catch (e) {
      if (code(e) !== 'would-block') throw e;
      const p = pollable();
      p.block();
      p[dispose]();
    }
  }
}

/** The first address of `host` (an IPv4/IPv6 literal or a name). */
function resolve(network, host) {
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (v4) return { tag: 'ipv4', val: v4.slice(1).map(Number) };
  const stream = resolveAddresses(network, host);
  try {
    const first = blocking(() => stream.resolveNextAddress(), () => stream.subscribe());
    if (first === undefined) throw new Error('name-unresolvable');
    return first;
  } finally {
    stream[dispose]();
  }
}

/**
 * Connects to `host:port`, sends `ping\n` and returns the first line of the
 * reply, without its newline. Errors name the WASI error code.
 * @param {string} target `host:port`
 */
export function tcpPing(target) {
  const at = target.lastIndexOf(':');
  const host = target.slice(0, at).replace(/^\[(.*)\]$/, '$1');
  const port = Number(target.slice(at + 1));
  if (at < 0 || !Number.isInteger(port)) throw `${target}: expected host:port`;
  try {
    const network = instanceNetwork();
    const ip = resolve(network, host);
    const address =
      ip.tag === 'ipv4'
        ? { tag: 'ipv4', val: { port, address: ip.val } }
        : { tag: 'ipv6', val: { port, flowInfo: 0, address: ip.val, scopeId: 0 } };
    const socket = createTcpSocket(ip.tag);
    socket.startConnect(network, address);
    const [input, output] = blocking(() => socket.finishConnect(), () => socket.subscribe());
    try {
      return exchange(input, output);
    } finally {
      // Streams are children of the socket: they go first.
      input[dispose]();
      output[dispose]();
      socket[dispose]();
    }
  } catch (e) {
    const c = code(e);
    throw `${target}: ${typeof c === 'string' ? c : e && e.message ? e.message : JSON.stringify(c)}`;
  }
}

/** Sends `ping\n`, returns the first line of the reply (without its newline). */
function exchange(input, output) {
  output.blockingWriteAndFlush(new TextEncoder().encode('ping\n'));
  let line = new Uint8Array(0);
  for (;;) {
    let chunk;
    try {
      chunk = input.blockingRead(4096n);
    } catch (e) {
      if (code(e) && code(e).tag === 'closed') break;
      throw e;
    }
    const joined = new Uint8Array(line.length + chunk.length);
    joined.set(line);
    joined.set(chunk, line.length);
    line = joined;
    if (chunk.includes(10)) break;
  }
  const text = new TextDecoder().decode(line);
  const end = text.indexOf('\n');
  return end < 0 ? text : text.slice(0, end);
}
