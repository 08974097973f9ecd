// Builds app.js into a component with componentize-js itself (no bundler,
// no SDK): what an author who targets the WIT directly runs.
//
//   node build.mjs <toolchain dir> <app.js> <out.wasm> <wit dir> <world>
import { mkdtemp, rm, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [toolchain, app, out, wit, world] = process.argv.slice(2);
if (!world) {
  console.error('usage: node build.mjs <toolchain dir> <app.js> <out.wasm> <wit dir> <world>');
  process.exit(2);
}
const module = join(resolve(toolchain), 'node_modules/@bytecodealliance/componentize-js/src/componentize.js');
const { componentize } = await import(pathToFileURL(module).href);
// componentize-js works in the current folder and TMPDIR: a folder of our own.
const work = await mkdtemp(join(tmpdir(), 'lingxi-compat-js-'));
const outPath = resolve(out);
try {
  const source = join(work, 'app.js');
  await copyFile(resolve(app), source);
  process.chdir(work);
  process.env.TMPDIR = work;
  const { component } = await componentize({
    sourcePath: source,
    witPath: resolve(wit),
    worldName: world,
    disableFeatures: ['http', 'fetch-event'],
  });
  await writeFile(outPath, component);
} catch (e) {
  console.error(`componentize-js (${world} of ${wit}): ${e && e.message ? e.message : e}`);
  process.exitCode = 1;
} finally {
  await rm(work, { recursive: true, force: true });
}
