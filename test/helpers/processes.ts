/**
 * Runs the project's entry points as real child processes (with the Node running the tests, the
 * project's pinned one), collecting their output, with a deadline so a hung child fails the test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve as resolvePath } from 'node:path';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * How long a child may take to start or finish before it counts as hung: far longer than any takes
 * on an idle machine, so that a busy one only makes the test slower.
 */
export const HUNG_AFTER_MS = 120_000;

/** Runs to completion (killed after `timeoutMs`), in the project's folder unless `cwd` names another. */
export function runProcess(args: readonly string[], env: Record<string, string>, timeoutMs = HUNG_AFTER_MS, cwd = PROJECT_ROOT): Promise<Finished> {
  const child = spawnProject(args, env, cwd);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`timed out: ${args.join(' ')}\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export interface RunningProcess {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves with the first match of `pattern` in stdout (rejects after `timeoutMs` or on exit). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends the signal (unless it has exited already) and resolves when the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<Finished>;
  /** Resolves when the process exits on its own. */
  exited: Promise<Finished>;
}

export function startProcess(args: readonly string[], env: Record<string, string>): RunningProcess {
  const child = spawnProject(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<Finished>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return {
    child,
    exited,
    output: () => stdout + stderr,
    async waitFor(pattern, timeoutMs = HUNG_AFTER_MS) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = stdout.match(pattern);
        if (match) return match;
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited before ${pattern}:\n${stdout}\n${stderr}`);
        if (Date.now() > deadline) throw new Error(`no ${pattern} in time:\n${stdout}\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * Children still running when a file's tests have ended: those of a test that failed before it
 * stopped them. They are killed then; a live child would keep the file's process, and the run,
 * waiting for it forever.
 */
const running = new Set<ChildProcess>();
after(() => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Only what the child needs from our environment: a predictable, offline setup. The compile cache
 * `npm test` sets (package.json) changes nothing a child does, only how soon it starts.
 */
function spawnProject(args: readonly string[], env: Record<string, string>, cwd = PROJECT_ROOT): ChildProcess {
  const base: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
  if (process.env.NODE_COMPILE_CACHE !== undefined) base.NODE_COMPILE_CACHE = resolvePath(process.env.NODE_COMPILE_CACHE);
  // The second pass of `npm test` (test/run.ts) decodes every stream in full, in its gateways' processes too.
  if (process.env.GATEWAY_STREAM_DECODING !== undefined) base.GATEWAY_STREAM_DECODING = process.env.GATEWAY_STREAM_DECODING;
  // A relative script path is the project's, whatever folder the process runs in.
  const [script, ...rest] = args;
  const resolved = script !== undefined && cwd !== PROJECT_ROOT && !script.startsWith('-') ? [join(PROJECT_ROOT, script), ...rest] : args;
  const child = spawn(process.execPath, resolved, { cwd, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.on('close', () => running.delete(child));
  return child;
}
