// Builds a JavaScript plugin into a component; run by `scripts/componentize js`.
//
//   node sdk/js/build.mjs <toolchain dir> <app.js> <out.wasm> <wit dir> <world>
//
// componentize-js 0.23 evaluates one ES module in a sandbox that sees only
// the module's own folder: `../` imports and bare names (`lingxi-plugin`, npm
// packages) do not load. So the app is bundled first (rolldown, from the
// toolchain) into a temporary folder, with `lingxi-plugin` resolved to this
// SDK and `lingxi:*` / `wasi:*` imports left for the component.
//
// componentize-js gives JavaScript no file or environment API, but lets it
// import any interface of the component's world. The world of
// wit/lingxi-plugin.wit imports no WASI interface, so when the bundle
// imports one (the SDK's `fs` imports wasi:filesystem), the build uses a
// temporary world that includes lingxi-plugin and adds those imports; their
// WIT comes from the toolchain (jco's copies). The engine itself already
// imports wasi:filesystem, cli, clocks, io and random, so this adds nothing a
// host must provide unless the plugin imports more (sockets, say).
//
// The engine's `fetch` needs wasi:http: it is kept only when the bundle
// mentions `fetch`, so other plugins run on hosts without wasi:http.

import { mkdtemp, mkdir, readdir, readFile, rm, writeFile, cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The WASI version the engine of componentize-js 0.23 imports. */
const WASI_VERSION = '0.2.12';

const [toolchain, app, out, witDir, world] = process.argv.slice(2);
if (!world) {
  console.error('usage: node build.mjs <toolchain dir> <app.js> <out.wasm> <wit dir> <world>');
  process.exit(2);
}
const outPath = resolve(out);
const sdk = join(dirname(fileURLToPath(import.meta.url)), 'lingxi-plugin.js');
const modules = join(resolve(toolchain), 'node_modules');
const load = (path) => import(pathToFileURL(join(modules, path)).href);

/**
 * Bundles app.js into one ES module; returns its code and its imports. The
 * world's second export, `taskRunner`, is the one definePlugin made: an
 * entry module of its own re-exports app.js and adds it.
 */
async function bundle() {
  const { rolldown } = await load('rolldown/dist/index.mjs');
  const entryDir = await mkdtemp(join(tmpdir(), 'lingxi-entry-'));
  const entry = join(entryDir, 'entry.mjs');
  const appUrl = JSON.stringify(resolve(app));
  await writeFile(
    entry,
    `export * from ${appUrl};\nimport { plugin as lingxiPlugin } from ${appUrl};\n` +
      'export const taskRunner = lingxiPlugin.taskRunner;\n',
  );
  try {
    return await bundleFrom(rolldown, entry);
  } finally {
    await rm(entryDir, { recursive: true, force: true });
  }
}

async function bundleFrom(rolldown, entry) {
  const build = await rolldown({
    input: entry,
    platform: 'browser',
    external: (id) => /^(lingxi|wasi):/.test(id),
    resolve: { alias: { 'lingxi-plugin': sdk } },
    // An import the code does not use is dropped, so is its WIT interface.
    treeshake: { moduleSideEffects: (_id, external) => !external },
    logLevel: 'warn',
  });
  try {
    // No comments: the `fetch` test below then sees only code.
    const { output } = await build.generate({ format: 'esm', codeSplitting: false, comments: false });
    const chunk = output.find((o) => o.type === 'chunk' && o.isEntry);
    if (!chunk.exports.includes('plugin')) {
      throw new Error(`${app} must export \`plugin\` (export const plugin = definePlugin({...}))`);
    }
    const code = chunk.code;
    // The chunk's own list keeps imports tree-shaking removed: read the code.
    const lexer = await load('es-module-lexer/dist/lexer.js');
    await lexer.init;
    const [found] = lexer.parse(code);
    return { code, imports: found.map((i) => i.n).filter((n) => n !== undefined) };
  } finally {
    await build.close();
  }
}

/** The `package …;` line of the world's WIT files. */
async function packageOf(dir) {
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.wit')) continue;
    const m = /^\s*package\s+([^;]+);/m.exec(await readFile(join(dir, name), 'utf8'));
    if (m) return m[1].trim();
  }
  throw new Error(`no package declaration in ${dir}`);
}

/**
 * The interfaces plus every interface they `use`, recursively: the world must
 * import those too, or componentize-js leaves their resource classes
 * undefined (`instance-network` returns a `network` of wasi:sockets/network).
 */
async function withUses(specs, builtin) {
  const all = new Set();
  const visit = async (spec) => {
    if (all.has(spec)) return;
    all.add(spec);
    const [, pkg, iface] = /^wasi:([a-z-]+)\/([a-z-]+)@/.exec(spec);
    const wit = await readFile(join(builtin, `wasi-${pkg}`, 'package.wit'), 'utf8').catch(() => {
      throw new Error(`import '${spec}': no package wasi:${pkg}@${WASI_VERSION} in the toolchain`);
    });
    const start = wit.search(new RegExp(`(^|\\n)\\s*interface\\s+${iface}\\s*\\{`));
    if (start < 0) throw new Error(`import '${spec}': no such interface in wasi:${pkg}@${WASI_VERSION}`);
    let depth = 0;
    let end = wit.indexOf('{', start);
    do {
      const c = wit[end++];
      if (c === '{') depth++;
      else if (c === '}') depth--;
    } while (depth > 0 && end < wit.length);
    for (const m of wit.slice(start, end).matchAll(/\buse\s+([a-z:/@.\d-]+?)\.\{/g)) {
      const used = m[1].includes(':') ? m[1] : `wasi:${pkg}/${m[1]}@${WASI_VERSION}`;
      await visit(used);
    }
  };
  for (const spec of specs) await visit(spec);
  return [...all].sort();
}

/** A WIT folder whose world adds the bundle's WASI imports; [dir, world]. */
async function witFor(imports, work) {
  const wasi = [...new Set(imports.filter((i) => i.startsWith('wasi:')))].sort();
  if (wasi.length === 0) return [witDir, world];
  for (const spec of wasi) {
    if (!/^wasi:[a-z-]+\/[a-z-]+@/.test(spec) || !spec.endsWith('@' + WASI_VERSION)) {
      throw new Error(`import '${spec}': import WASI interfaces as 'wasi:<package>/<interface>@${WASI_VERSION}', the engine's version`);
    }
  }
  const dir = join(work, 'wit');
  await mkdir(join(dir, 'deps'), { recursive: true });
  for (const name of await readdir(witDir)) {
    if (name.endsWith('.wit')) await cp(join(witDir, name), join(dir, name));
  }
  const builtin = join(modules, '@bytecodealliance/jco/lib/wit/builtin', WASI_VERSION);
  await cp(builtin, join(dir, 'deps'), { recursive: true });
  const name = `${world}-js`;
  const lines = (await withUses(wasi, builtin)).map((spec) => `  import ${spec};`).join('\n');
  await writeFile(
    join(dir, 'zz-js-imports.wit'),
    `package ${await packageOf(witDir)};\n\nworld ${name} {\n  include ${world};\n${lines}\n}\n`,
  );
  return [dir, name];
}

const work = await mkdtemp(join(tmpdir(), 'lingxi-js-'));
try {
  const { code, imports } = await bundle();
  const source = join(work, 'app.js');
  await writeFile(source, code);
  const [wit, worldName] = await witFor(imports, work);
  const usesFetch = /\bfetch\b/.test(code);
  const { componentize } = await load('@bytecodealliance/componentize-js/src/componentize.js');
  // componentize-js maps the current folder into its sandbox when the source
  // is inside it; its own work folder (left behind on some failures) goes in ours.
  process.chdir(work);
  process.env.TMPDIR = work;
  const { component } = await componentize({
    sourcePath: source,
    witPath: wit,
    worldName,
    disableFeatures: usesFetch ? [] : ['http', 'fetch-event'],
  });
  await mkdir(dirname(outPath), { recursive: true });
  await writeFile(outPath, component);
} catch (e) {
  console.error(`${basename(dirname(resolve(app)))}: ${e && e.message ? e.message : e}`);
  process.exitCode = 1;
} finally {
  await rm(work, { recursive: true, force: true });
}
