// __NAME__: a LingXi plugin written in JavaScript, run as a sandboxed
// WebAssembly component. Build: `npm run build` (writes build/plugin.wasm).
//
// `lingxi-plugin` is the helper library in ./lingxi-plugin/ (the build maps
// the name to it); its TypeScript declarations are in
// lingxi-plugin/lingxi-plugin.d.ts.

import { CommandResult, InputSchema, Property, definePlugin } from 'lingxi-plugin';

export const plugin = definePlugin({
  // Declare the capabilities the plugin needs, e.g. capabilities: ['projectRead']:
  // the user must grant them too.
  manifest: {
    id: '__ID__',
    name: '__NAME__',
    version: '0.1.0',
    description: '__DESCRIPTION__',
  },

  activate(ctx) {
    // `greet`: the model calls it with {"name": "Ada"}. The host checks every
    // call's arguments against this schema before the tool runs.
    ctx.registerTool({
      name: 'greet',
      description: 'Greets someone by name.',
      inputSchema: new InputSchema()
        .property('name', Property.string('Who to greet').minLength(1))
        .required(['name'])
        .noAdditionalProperties(),
      execute(args, call) {
        const { name } = JSON.parse(args);
        call.logger.info(`greeting ${name}`);
        return `Hello, ${name}!`;
      },
    });
    // `/hello` (alias `/hi`): shows the workspace the host published.
    ctx.registerCommand({
      name: 'hello',
      aliases: ['hi'],
      description: 'Says hello and shows the workspace root.',
      execute: (_words, cmd) =>
        CommandResult.message(`Hello from ${cmd.info.workspaceInfo().rootPath}`).withTitle('__NAME__'),
    });
    ctx.on('sessionStart', (payload) => {
      ctx.logger.info(`session started: ${payload.subjectId}`);
    });
  },
});
