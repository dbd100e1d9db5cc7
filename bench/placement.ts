/**
 * Where the database and Redis run during the scale-out measurements (docs/performance.md, "The
 * scale-out path"): beside the simulator and the load generator on the load core, so that the core
 * under test holds the gateway instances only. Both are servers the benchmark did not start; when
 * they run on this machine and may be moved (`taskset`), the PostgreSQL server process and every
 * process it has forked (its backends inherit its CPUs from then on) and the Redis server are put
 * on the load core, and each process is given back its own CPUs at the end. When they cannot be
 * moved, the report says so and why.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import type pg from 'pg';

export interface ServerPlacement {
  /** What was placed where, or why it was not: printed in the report. */
  readonly note: string;
  /** Gives every moved process its own CPUs back; safe to call more than once. */
  restore(): void;
}

/** The parent pid of a process, from /proc; null when it cannot be read (not on this machine). */
function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

/** Every process whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    if (parentOf(Number(entry)) === pid) children.push(Number(entry));
  }
  return children;
}

/** The CPU list of a process (`taskset -pc`), or null when taskset cannot read it. */
function cpusOf(pid: number): string | null {
  const answer = spawnSync('taskset', ['-pc', String(pid)], { encoding: 'utf8' });
  if (answer.status !== 0) return null;
  return /list:\s*(\S+)/.exec(answer.stdout)?.[1] ?? null;
}

function setCpus(pid: number, cpus: string): boolean {
  return spawnSync('taskset', ['-a', '-pc', cpus, String(pid)], { stdio: 'ignore' }).status === 0;
}

/** The PostgreSQL server process serving `admin`: the parent of its backend, when it is on this machine. */
async function postgresServer(admin: pg.Client): Promise<number | string> {
  const backend = Number((await admin.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
  const server = parentOf(backend);
  if (server === null || !/postgres/.test(commandOf(backend))) return 'its backend is not a process of this machine';
  return server;
}

/** The Redis server's pid from `INFO server`, when it is a process of this machine. */
function redisServer(url: string): Promise<number | string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379), timeout: 2_000 });
    let text = '';
    const done = (outcome: number | string) => {
      socket.destroy();
      resolve(outcome);
    };
    socket.once('connect', () => socket.write('*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n'));
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8');
      const pid = /process_id:(\d+)/.exec(text)?.[1];
      if (pid === undefined) return;
      done(/redis/.test(commandOf(Number(pid))) ? Number(pid) : 'it is not a process of this machine');
    });
    socket.once('timeout', () => done('INFO did not answer'));
    socket.once('error', (error) => done(error.message));
  });
}

/**
 * Moves PostgreSQL (the server process and its children) and Redis (when a URL is given) onto
 * `core`, remembering each process's CPUs; `pinned` false leaves them where they are.
 */
export async function placeServers(admin: pg.Client, redisUrl: string | undefined, core: number, pinned: boolean): Promise<ServerPlacement> {
  const previous = new Map<number, string>();
  let server: { readonly pid: number; readonly cpus: string } | null = null;
  const restore = () => {
    for (const [pid, cpus] of previous) setCpus(pid, cpus);
    // Backends forked meanwhile inherited the load core: they get the server's own CPUs back too.
    if (server !== null) for (const child of childrenOf(server.pid)) if (!previous.has(child)) setCpus(child, server.cpus);
    previous.clear();
    server = null;
  };
  if (!pinned) return { note: 'PostgreSQL and Redis not moved (processes are not pinned in this run)', restore };
  const move = (pid: number) => {
    const cpus = cpusOf(pid);
    if (cpus === null || !setCpus(pid, String(core))) return false;
    previous.set(pid, cpus);
    return true;
  };
  const notes: string[] = [];
  const postgres = await postgresServer(admin);
  if (typeof postgres === 'string') notes.push(`PostgreSQL not moved: ${postgres}`);
  else if (!move(postgres)) notes.push(`PostgreSQL not moved: taskset may not change process ${postgres}`);
  else {
    server = { pid: postgres, cpus: previous.get(postgres)! };
    const children = childrenOf(postgres).filter(move);
    notes.push(`PostgreSQL (server process ${postgres} and its ${children.length} processes) on CPU ${core}`);
  }
  if (redisUrl === undefined) notes.push('no Redis');
  else {
    const redis = await redisServer(redisUrl);
    if (typeof redis === 'string') notes.push(`Redis not moved: ${redis}`);
    else notes.push(move(redis) ? `Redis (process ${redis}) on CPU ${core}` : `Redis not moved: taskset may not change process ${redis}`);
  }
  // Whatever ends the run, the servers get their CPUs back (taskset is synchronous).
  process.once('exit', restore);
  return { note: `${notes.join('; ')}; beside the simulator and the load generator`, restore };
}
