#!/usr/bin/env node
// The `gateway` command. Whatever Node runs this shim (a system Node may be too old to run
// TypeScript), the command itself runs on the Node version the project pins in its dependencies.
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readStartScript } from './start-script.js';

const root = join(dirname(realpathSync(fileURLToPath(import.meta.url))), '..');
const pinned = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'node.cmd' : 'node');
const node = existsSync(pinned) ? pinned : process.execPath;

// `gateway serve` is `npm start`: the same runtime flags and environment (memory tuning, see
// docs/operations.md), read from the start script so that the two cannot drift apart.
function serveLikeNpmStart() {
  const { env, args } = readStartScript(root);
  const script = args.findIndex((word) => !word.startsWith('-'));
  return { env, flags: script === -1 ? args : args.slice(0, script) };
}
const start = process.argv[2] === 'serve' ? serveLikeNpmStart() : { env: {}, flags: [] };

// In its own process group, the child gets a terminal's Ctrl-C once, from the shim, not twice
// (a second signal tells `gateway serve` to stop without draining).
const child = spawn(node, [...start.flags, join(root, 'src', 'cli', 'main.ts'), ...process.argv.slice(2)], {
  stdio: 'inherit',
  detached: true,
  // As in the start script, its assignments win over the environment.
  env: { ...process.env, ...start.env },
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('error', (error) => {
  console.error(`gateway: cannot start ${node}: ${error.message}`);
  process.exit(1);
});
// Exit the way the child did: with its code, or by the same signal.
child.on('exit', (code, signal) => {
  if (code !== null || !signal) process.exit(code ?? 1);
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
});
