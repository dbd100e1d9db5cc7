// The `npm start` script in its parts, read by `gateway serve` (./gateway.js) and by the benchmark
// (bench/gateway.ts), so that both run the server exactly as `npm start` does. The script is
// `NAME=value … node <node flags> src/main.ts`: the variables are set for the command, as a shell
// sets them. Plain JavaScript: the `gateway` shim may run on a Node too old for TypeScript.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The variables a start script sets, its command and the command's arguments. */
export function parseStartScript(script) {
  const words = script.split(/\s+/).filter(Boolean);
  const env = {};
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? '')) {
    const [name, ...value] = words.shift().split('=');
    env[name] = value.join('=');
  }
  const [command = '', ...args] = words;
  return { env, command, args };
}

/**
 * The start script of the project at `root` (its package.json), in its parts. npm runs the script
 * in the project's folder, so a relative `NODE_COMPILE_CACHE` names a folder of the project
 * wherever the command is run from.
 */
export function readStartScript(root) {
  const script = parseStartScript(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start);
  const cache = script.env.NODE_COMPILE_CACHE;
  if (cache !== undefined) script.env.NODE_COMPILE_CACHE = resolve(root, cache);
  return script;
}
