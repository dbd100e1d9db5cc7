// The `npm start` script in its parts, read by `gateway serve` (./gateway.js) and by the benchmark
// (bench/gateway.ts), so that both run the server exactly as `npm start` does. The script is
// `NAME=value … node <node flags> src/main.ts`: the variables are set for the command, as a shell
// sets them. Plain JavaScript: the `gateway` shim may run on a Node too old for TypeScript.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

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

/** The start script of the project at `root` (its package.json), in its parts. */
export function readStartScript(root) {
  return parseStartScript(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start);
}
