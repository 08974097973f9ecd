// The reference fixture of the LingXi protocol contract (spec §7), in
// JavaScript: plugin `com.lingxi.test-probe` with tool `probe.echo`, command
// `probe` (alias `pb`) and a `sessionStart` hook. Identical on the wire to
// the Rust probe (examples/probe); the end-to-end tests replay the contract
// against both.

import { CommandResult, definePlugin } from 'lingxi-plugin';

/** The probe plugin. */
export const plugin = definePlugin({
  manifest: {
    id: 'com.lingxi.test-probe',
    name: 'Probe',
    version: '0.1.0',
    description: 'Contract fixture plugin',
    capabilities: ['projectRead'],
  },

  activate(ctx) {
    // `probe.echo`: answers `echo:<arguments>`.
    ctx.registerTool({
      name: 'probe.echo',
      description: "Echoes its raw arguments, prefixed with 'echo:'.",
      execute: (args) => `echo:${args}`,
    });
    // `probe` / `pb`: answers `root=<workspace.rootPath>`, or the
    // InfoUnavailable text when the host published no workspace.
    ctx.registerCommand({
      name: 'probe',
      aliases: ['pb'],
      description: 'Shows the workspace root the host published.',
      execute: (_args, cmd) => CommandResult.message(`root=${cmd.info.workspaceInfo().rootPath}`),
    });
    ctx.on('sessionStart', (payload) => {
      ctx.logger.info(`session started: ${payload.subjectId}`);
    });
  },
});
