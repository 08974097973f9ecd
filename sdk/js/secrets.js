// Secrets the user granted the plugin by name (`--secret NAME`, the value
// kept in the keyring by `lingxi-wasm-run secret set PLUGIN_ID NAME`).
// Every context reads them: `ctx.secret('API_TOKEN')`. The host hides the
// value in everything the plugin writes (output, logs, results, errors
// become `[secret NAME]`) and refuses an HTTP request that carries a
// secret granted as `NAME@HOST` to any other host.

import { PluginError } from './types.js';

/** The host's `secret(name)` (the component's host-info import). */
let source;

/**
 * Sets where secrets are read: the runtime does, with the host's import.
 * @param {((name: string) => string) | undefined} get
 */
export function useSecrets(get) {
  source = get;
}

/**
 * The value of secret `name`; a PluginError with the host's reason when
 * there is none (not granted: it names the flag; not set: the command).
 * @param {string} name
 * @returns {string}
 */
export function readSecret(name) {
  if (!source) {
    throw new PluginError(`secret ${name} is handed to plugins only by the sandbox host (lingxi-wasm-run, granted with --secret ${name})`);
  }
  try {
    return source(String(name));
  } catch (e) {
    throw new PluginError(e && typeof e.payload === 'string' ? e.payload : String(e));
  }
}
