// The conformance probe (spec section 7) written against the WIT alone:
// componentize-js, no SDK and no bundler. The compatibility matrix
// (tests/e2e/compat/mod.rs) builds it against every released shape of the WIT
// (wit/history/) and today's, calling componentize-js directly
// (tests/guests/compat-js/build.mjs).
//
// The imports name the package version the plugin was written against:
// componentize-js finds each among the world's imports by name and version.
import { log } from 'lingxi:plugin/logging@0.1.0';
import { workspace } from 'lingxi:plugin/host-info@0.1.0';

const IPC_VERSION = 1;
const TOOL = {
  name: 'probe.echo',
  description: "Echoes its raw arguments, prefixed with 'echo:'.",
  inputSchema: '{"type": "object", "properties": {}}',
};
const COMMAND = {
  name: 'probe',
  aliases: ['pb'],
  description: 'Shows the workspace root the host published.',
  category: 'Plugin',
  argumentHint: '',
};
const MANIFEST = {
  id: 'com.lingxi.test-probe',
  name: 'Probe',
  version: '0.1.0',
  description: 'Contract fixture plugin',
  author: undefined,
  capabilities: ['project-read'],
  minimumCoreVersion: undefined,
};

/** The protocol's text for info the host did not send. */
function unavailable(why) {
  const when = why.lastSnapshot === undefined
    ? 'no snapshot received'
    : `last snapshot at ${why.lastSnapshot.seconds} s`;
  return `Plugin runtime info unavailable: ${why.field} (${when})`;
}

/** `lingxi:plugin/plugin`: a result's error is a thrown value. */
export const plugin = {
  getManifest: () => MANIFEST,
  initialize(request) {
    const version = request.hostIpcVersion;
    if (version !== undefined && version !== BigInt(IPC_VERSION)) {
      throw `Unsupported host IPC version ${version}; plugin supports [1].`;
    }
    return {
      manifest: MANIFEST,
      ipcVersion: IPC_VERSION,
      sdkVersion: '0.1.0',
      tools: [TOOL],
      commands: [COMMAND],
      supportedHooks: ['session-start'],
    };
  },
  executeTool(call) {
    if (call.toolName !== TOOL.name) throw `Tool '${call.toolName}' not found in plugin`;
    return `echo:${call.arguments}`;
  },
  executeCommand(call) {
    // A name or an alias, in any case (as typed by the user).
    const name = call.commandName.toLowerCase();
    if (name !== COMMAND.name && !COMMAND.aliases.includes(name)) {
      throw `Command '${call.commandName}' not found in plugin`;
    }
    let info;
    try {
      info = workspace();
    } catch (e) {
      throw unavailable(e.payload);
    }
    return { tag: 'message', val: { text: `root=${info.rootPath}`, presentation: 'modal', title: undefined } };
  },
  emitHook(payload) {
    if (payload.event === 'session-start') log('info', `session started: ${payload.subjectId}`);
  },
  deactivate() {},
};

/** `lingxi:plugin/task-runner`, for the worlds with tasks: one kind, `echo`. */
export const taskRunner = {
  kinds: () => [{ name: 'echo', description: 'Answers its input.' }],
  run(kind, input) {
    if (kind !== 'echo') throw `no task kind '${kind}'`;
    return input;
  },
};
