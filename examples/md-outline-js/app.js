// md-outline: the heading outline of a Markdown file of the workspace.
//
// - tool `markdown.outline` {"path": "<file>"}: the headings as JSON,
//   `{"path", "headings": [{"level", "text", "line"}]}`. `path` is a read
//   path: the host resolves it against the workspace, refuses anything
//   outside the directories granted for reading, and hands over the
//   canonical absolute path.
// - command `/outline <path>`: the outline, indented, in a pop-up. The path
//   is relative to the workspace root (or absolute).
//
// Declares projectRead only: the host mounts the workspace read-only.

import {
  CommandResult,
  InputSchema,
  PluginError,
  Property,
  definePlugin,
  fs,
} from 'lingxi-plugin';
import { formatOutline, outline } from './outline.js';

/** Longest file read, in bytes: an outline is not worth more. */
const MAX_BYTES = 8 * 1024 * 1024;

/** The Markdown text at `path`, refusing directories and huge files. */
function readMarkdown(path) {
  const stat = fs.stat(path);
  if (stat.type !== 'regular-file') throw new PluginError(`${path} is not a file`);
  if (stat.size > MAX_BYTES) throw new PluginError(`${path} is larger than ${MAX_BYTES >> 20} MiB`);
  return fs.readTextFile(path);
}

export const plugin = definePlugin({
  manifest: {
    id: 'com.lingxi.md-outline',
    name: 'Markdown Outline',
    version: '0.1.0',
    description: 'Heading outline of Markdown files (ATX and setext, code blocks skipped)',
    capabilities: ['projectRead'],
  },

  activate(ctx) {
    // ANCHOR: tool
    ctx.registerTool({
      name: 'markdown.outline',
      description:
        'Lists the headings of a Markdown file of the workspace as JSON: ' +
        '{"path", "headings": [{"level": 1-6, "text", "line": 1-based}]}. ' +
        'Fenced code blocks are skipped.',
      inputSchema: new InputSchema()
        .property('path', Property.string('The Markdown file, relative to the workspace root').readPath().minLength(1))
        .required(['path'])
        .noAdditionalProperties()
        .timeoutMs(2000)
        .concurrencySafe(),
      execute(args) {
        const { path } = JSON.parse(args);
        return { path, headings: outline(readMarkdown(path)) };
      },
    });
    // ANCHOR_END: tool

    ctx.registerCommand({
      name: 'outline',
      description: 'Shows the heading outline of a Markdown file',
      argumentHint: '<path>',
      execute(args, cmd) {
        const typed = args.join(' ').trim();
        if (typed === '') return CommandResult.message('Usage: /outline <path of a Markdown file>');
        const path = typed.startsWith('/') ? typed : `${cmd.info.workspaceInfo().rootPath}/${typed}`;
        let headings;
        try {
          headings = outline(readMarkdown(path));
        } catch (e) {
          // A message, not an error: LingXi Core stops a plugin that answers with an error.
          if (e instanceof PluginError) {
            return CommandResult.message(`Cannot outline ${typed}: ${e.message}`).withTitle('Outline');
          }
          throw e;
        }
        const text = headings.length ? formatOutline(headings) : `No headings in ${typed}.`;
        return CommandResult.message(text).withTitle(`Outline of ${typed}`);
      },
    });
  },
});
