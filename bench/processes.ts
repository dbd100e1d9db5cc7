/**
 * Child processes of the benchmark: started on a chosen core (docs/performance.md, "What runs": the
 * process under test alone on one core, the simulator and the load generator on the other), always
 * stopped at the end, even when the run fails or is interrupted, and watched for resident memory.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { cpus } from 'node:os';

/** CPU 0 runs the process under test; CPU 1 runs the simulator and the load generator. */
export const CORE_UNDER_TEST = 0;
export const CORE_LOAD = 1;

export interface Placement {
  readonly pinned: boolean;
  /** Says how processes were placed, or why they could not be. */
  readonly note: string;
}

/** Decides whether processes can be pinned: `taskset` present, two cores, and pinning allowed. */
export function detectPlacement(wanted: boolean): Placement {
  if (!wanted) return { pinned: false, note: 'pinning disabled (--no-pin): all processes share every core' };
  if (cpus().length < 2) return { pinned: false, note: `only ${cpus().length} core: processes not pinned` };
  const probe = spawnSync('taskset', ['-c', String(CORE_LOAD), 'true'], { stdio: 'ignore' });
  if (probe.error !== undefined || probe.status !== 0) {
    return { pinned: false, note: 'taskset unavailable or not permitted: processes not pinned, figures are noisier' };
  }
  return {
    pinned: true,
    note: `process under test on CPU ${CORE_UNDER_TEST}; simulator and load generator on CPU ${CORE_LOAD} (taskset)`,
  };
}

/** Moves the current process (the load generator) onto the load core. */
export function pinSelf(placement: Placement): void {
  if (!placement.pinned) return;
  spawnSync('taskset', ['-cp', String(CORE_LOAD), String(process.pid)], { stdio: 'ignore' });
}

export interface ChildOptions {
  readonly name: string;
  /** Arguments to the node binary running this benchmark (script path first). */
  readonly nodeArgs: readonly string[];
  readonly core: number;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
}

export interface Child {
  readonly name: string;
  readonly pid: number;
  readonly process: ChildProcess;
  /** The last output lines, for diagnostics when the child fails. */
  tail(): string;
}

const TAIL_BYTES = 16 * 1024;

/** Every child started, so that all of them are stopped whatever happens. */
export class ProcessGroup {
  readonly #placement: Placement;
  readonly #children = new Set<Child>();

  constructor(placement: Placement) {
    this.#placement = placement;
    // Last resort when the run dies without reaching its cleanup: never leave a child behind.
    process.once('exit', () => this.killNow());
  }

  start(options: ChildOptions): Child {
    const command = this.#placement.pinned ? 'taskset' : process.execPath;
    const args = this.#placement.pinned ? ['-c', String(options.core), process.execPath, ...options.nodeArgs] : [...options.nodeArgs];
    // taskset execs the command, so the pid is that of node itself (RSS readings rely on it).
    const spawned = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (spawned.pid === undefined) throw new Error(`${options.name}: could not start`);
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-TAIL_BYTES);
    };
    spawned.stdout.on('data', keep);
    spawned.stderr.on('data', keep);
    const child: Child = { name: options.name, pid: spawned.pid, process: spawned, tail: () => output };
    this.#children.add(child);
    spawned.once('exit', () => this.#children.delete(child));
    return child;
  }

  /** SIGTERM, then SIGKILL after graceMs: a graceful stop lets node write a --cpu-prof profile. */
  async stop(child: Child, graceMs = 5_000): Promise<void> {
    if (child.process.exitCode !== null || child.process.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.process.once('exit', () => resolve()));
    child.process.kill('SIGTERM');
    const timer = setTimeout(() => child.process.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#children].map((child) => this.stop(child)));
  }

  /** Synchronous: usable from an 'exit' handler. */
  killNow(): void {
    for (const child of this.#children) {
      if (child.process.exitCode === null) child.process.kill('SIGKILL');
    }
    this.#children.clear();
  }
}

/** Resolves with the first stdout line that parses as JSON (the children's ready signal). */
export function readyLine<T>(child: Child, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let newline: number;
      while ((newline = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        try {
          const parsed = JSON.parse(line) as T;
          finish();
          resolve(parsed);
          return;
        } catch {
          // Not the ready line; keep reading.
        }
      }
    };
    const onExit = (code: number | null) => {
      finish();
      reject(new Error(`${child.name} exited (${code}) before it was ready:\n${child.tail()}`));
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`${child.name} was not ready within ${timeoutMs} ms:\n${child.tail()}`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      child.process.stdout?.off('data', onData);
      child.process.off('exit', onExit);
    };
    child.process.stdout?.on('data', onData);
    child.process.once('exit', onExit);
  });
}

/** Polls a URL until it answers with any HTTP status. */
export async function waitForHttp(url: string, child: Child, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.process.exitCode !== null) throw new Error(`${child.name} exited (${child.process.exitCode}) during start:\n${child.tail()}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(1_000) });
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${child.name} did not answer ${url} within ${timeoutMs} ms:\n${child.tail()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

export function statusField(pid: number, field: 'VmRSS' | 'VmHWM' | 'RssAnon' | 'RssFile'): number | null {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? null : Number(match[1]) * 1024;
  } catch {
    return null;
  }
}

/** Clock ticks per second of /proc/<pid>/stat times. */
const CLOCK_TICKS = (() => {
  const answer = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const ticks = Number(answer.stdout?.trim());
  return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
})();

/** CPU seconds a process has used so far, in user and in kernel mode; null when /proc cannot tell. */
/**
 * CPU time of a process (all its threads), or with `tid` of one of its threads only (the main
 * thread's id is the pid: the event loop's own time).
 */
export function cpuSeconds(pid: number, tid?: number): { readonly user: number; readonly system: number } | null {
  try {
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / CLOCK_TICKS, system: Number(fields[12]) / CLOCK_TICKS };
  } catch {
    return null;
  }
}

/**
 * CPU seconds of a process by kind of thread: its main thread (the pid's own: the event loop,
 * garbage collection pauses included), V8's helper threads (`V8Worker`: the garbage collection work
 * done beside the main thread, concurrent marking and parallel scavenging, and the optimizing
 * compilers), and the rest of the process (libuv's pool, worker threads, threads that ended); and
 * apart, the share of the whole spent in the kernel (system calls: the sockets' reads and writes).
 * Null where /proc cannot tell.
 */
export function cpuSecondsByThread(
  pid: number,
): { readonly total: number; readonly kernel: number; readonly main: number; readonly v8Helpers: number; readonly other: number } | null {
  const whole = cpuSeconds(pid);
  const main = cpuSeconds(pid, pid);
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  if (whole === null || main === null) return null;
  let v8Helpers = 0;
  for (const tid of tids) {
    if (Number(tid) === pid || !threadName(pid, tid).includes('V8Worker')) continue;
    const time = cpuSeconds(pid, Number(tid));
    if (time !== null) v8Helpers += time.user + time.system;
  }
  const total = whole.user + whole.system;
  const mainSeconds = main.user + main.system;
  return { total, kernel: whole.system, main: mainSeconds, v8Helpers, other: total - mainSeconds - v8Helpers };
}

function threadName(pid: number, tid: string): string {
  try {
    return readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * Seconds from Linux's /proc/<pid>/task/<tid>/schedstat (nanoseconds): `field` 0 is the time the
 * thread ran, 1 the time it waited for a CPU while it had work. Summed over the process's threads
 * alive now when `tid` is undefined. Null where /proc cannot tell.
 */
function schedstatSeconds(pid: number, tid: number | undefined, field: 0 | 1): number | null {
  try {
    const tids = tid === undefined ? readdirSync(`/proc/${pid}/task`) : [String(tid)];
    let nanos = 0;
    for (const each of tids) nanos += Number(readFileSync(`/proc/${pid}/task/${each}/schedstat`, 'utf8').split(' ')[field]);
    return Number.isFinite(nanos) ? nanos / 1e9 : null;
  } catch {
    return null;
  }
}

/**
 * How long a thread has waited for a CPU while it had work: time the scheduler gave to other
 * threads, of other processes on the same core or of the process itself.
 */
export function runQueueWaitSeconds(pid: number, tid: number): number | null {
  return schedstatSeconds(pid, tid, 1);
}

/**
 * CPU time to the nanosecond (where /proc/<pid>/stat counts clock ticks of 10 ms): of one thread,
 * or summed over the process's threads alive now.
 */
export function runSeconds(pid: number, tid?: number): number | null {
  return schedstatSeconds(pid, tid, 0);
}

export function residentBytes(pid: number): number | null {
  return statusField(pid, 'VmRSS');
}

/**
 * Peak resident memory of a process over a span of time. Where the kernel allows it, the peak
 * counter (VmHWM) is reset at the start, so the peak is exact; in any case RSS is also sampled,
 * so a system without /proc/<pid>/clear_refs still gets a figure.
 */
export class MemoryWatch {
  readonly #pid: number;
  readonly #exactPeak: boolean;
  #sampledPeak = 0;
  readonly #timer: NodeJS.Timeout;

  constructor(pid: number, sampleEveryMs = 100) {
    this.#pid = pid;
    this.#exactPeak = resetPeak(pid);
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), sampleEveryMs);
    this.#timer.unref();
  }

  #sample(): void {
    const rss = residentBytes(this.#pid);
    if (rss !== null && rss > this.#sampledPeak) this.#sampledPeak = rss;
  }

  /** Current resident memory. */
  now(): number | null {
    this.#sample();
    return residentBytes(this.#pid);
  }

  /** Stops watching; the peak in bytes, or null when nothing could be read. */
  stop(): number | null {
    clearInterval(this.#timer);
    this.#sample();
    const hwm = this.#exactPeak ? statusField(this.#pid, 'VmHWM') : null;
    const peak = Math.max(hwm ?? 0, this.#sampledPeak);
    return peak > 0 ? peak : null;
  }
}

/** Resets the kernel's peak-RSS counter of a process (Linux ≥ 4.0, own processes); false if not possible. */
function resetPeak(pid: number): boolean {
  const path = `/proc/${pid}/clear_refs`;
  if (!existsSync(path)) return false;
  try {
    writeFileSync(path, '5');
    return true;
  } catch {
    return false;
  }
}

/** A port free right now on the loopback interface, for children that cannot report their own. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The upstream simulator (bench/upstream.ts) on the load core, for the scripts that measure one
 * thing on their own (bench/limits-ab.ts, bench/scale-out.ts) in a group pinned as `npm run bench`
 * pins it; resolves with the group and the simulator's origin.
 */
export async function startStandaloneSimulator(repoRoot: string): Promise<{ readonly group: ProcessGroup; readonly upstreamOrigin: string }> {
  const placement = detectPlacement(true);
  pinSelf(placement);
  const group = new ProcessGroup(placement);
  try {
    const upstream = group.start({ name: 'upstream simulator', nodeArgs: ['bench/upstream.ts', '--delay-ms=0'], core: CORE_LOAD, cwd: repoRoot });
    return { group, upstreamOrigin: `http://127.0.0.1:${(await readyLine<{ port: number }>(upstream, 30_000)).port}` };
  } catch (error) {
    await group.stopAll();
    throw error;
  }
}
