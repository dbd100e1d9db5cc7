/**
 * Entry of the `gateway` command (bin/gateway.js runs it with the project's pinned Node).
 */
import { runCli } from './run.ts';

const exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
if (exitCode !== undefined) process.exitCode = exitCode;
