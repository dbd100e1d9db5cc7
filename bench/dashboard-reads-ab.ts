/**
 * What one dashboard read costs the gateway's main thread, the event loop that serves the requests
 * (the reads of bench/chat-beside-dashboard.ts's loop, in turn), and what it costs the whole process
 * (the dashboard's reader thread included). With `--before`, a gateway of that checkout runs beside
 * this one and the rounds alternate between them, so that both builds see the same machine:
 * `node bench/dashboard-reads-ab.ts [--rounds=6] [--reads=30] [--before=<checkout>] [--database=URL]
 * [--cpu-prof=DIR]`. With `--database`, each gateway runs on PostgreSQL, in a schema of its own
 * dropped at the end. A few hundred chat requests first give the usage rollups rows to read.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { buildsToMeasure, REPO_ROOT } from './builds.ts';
import { dashboardPaths, dashboardRead, operatorSession } from './chat-beside-dashboard.ts';
import { type RunningGateway, startGateway } from './gateway.ts';
import { standaloneGatewayOptions } from './limits-ab.ts';
import { runSeconds, startStandaloneSimulator } from './processes.ts';
import { WORKLOADS } from './workloads.ts';
import { median } from './stats.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '6' },
    reads: { type: 'string', default: '30' },
    before: { type: 'string' },
    database: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const reads = Number(values.reads);
const builds = buildsToMeasure(values.before);

const micros = (pid: number, tid?: number) => runSeconds(pid, tid)! * 1e6;

/** A schema of its own on the PostgreSQL of `--database`, and the URL whose connections use it. */
async function schemaOfItsOwn(admin: pg.Client, databaseUrl: string): Promise<{ readonly schema: string; readonly url: string }> {
  const schema = `bench_reads_${randomBytes(6).toString('hex')}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { schema, url: url.toString() };
}

const admin = values.database === undefined ? null : new pg.Client({ connectionString: values.database });
await admin?.connect();
const schemas: string[] = [];
const { group, upstreamOrigin } = await startStandaloneSimulator(REPO_ROOT);
try {
  const gateways: { name: string; gateway: RunningGateway; session: string; main: number[]; whole: number[] }[] = [];
  const chat = WORKLOADS.find((workload) => workload.id === 'chat')!;
  for (const [name, root] of builds) {
    const database = admin && values.database ? await schemaOfItsOwn(admin, values.database) : null;
    if (database) schemas.push(database.schema);
    const gateway = await startGateway(group, {
      ...standaloneGatewayOptions(root, upstreamOrigin, undefined),
      cpuProfileDir: values['cpu-prof'],
      databaseUrl: database?.url,
    });
    const request = chat.gateway(gateway.apiKey);
    for (let i = 0; i < 300; i++) {
      const answer = await fetch(`${gateway.origin}${request.path}`, { method: request.method, headers: request.headers, body: request.body });
      await answer.arrayBuffer();
    }
    gateways.push({ name, gateway, session: await operatorSession(gateway.origin, gateway.adminKey), main: [], whole: [] });
  }
  const paths = dashboardPaths();
  console.log(`load average at start: ${loadavg()[0].toFixed(2)}; ${rounds} rounds of ${reads} reads per build`);
  const readAll = async (each: (typeof gateways)[number], count: number) => {
    for (let i = 0; i < count; i++) await dashboardRead(each.gateway.origin, each.session, paths[i % paths.length]!);
  };
  for (const each of gateways) await readAll(each, paths.length * 3);
  for (let round = 0; round < rounds; round++) {
    const line: string[] = [];
    for (let i = 0; i < gateways.length; i++) {
      const each = gateways[(i + round) % gateways.length]!;
      const pid = each.gateway.child.pid;
      const [main, whole, started] = [micros(pid, pid), micros(pid), performance.now()];
      await readAll(each, reads);
      const [readMain, readWhole, took] = [micros(pid, pid) - main, micros(pid) - whole, performance.now() - started];
      // The reads are paced (a pause after each), so the gateway's own idle work over as long counts
      // in them: it is measured right after, for as long, and taken off.
      const [idleMain, idleWhole] = [micros(pid, pid), micros(pid)];
      await sleep(took);
      each.main.push((readMain - (micros(pid, pid) - idleMain)) / reads);
      each.whole.push((readWhole - (micros(pid) - idleWhole)) / reads);
      line.push(`${each.name}: main thread ${each.main.at(-1)!.toFixed(0)} µs, process ${each.whole.at(-1)!.toFixed(0)} µs`);
    }
    console.log(`round ${round + 1} (CPU per read): ${line.join('; ')}`);
  }
  for (const each of gateways) {
    console.log(`${each.name}: median per read, main thread ${median(each.main).toFixed(0)} µs, whole process ${median(each.whole).toFixed(0)} µs`);
  }
  console.log(`load average at end: ${loadavg()[0].toFixed(2)}`);
  for (const each of gateways) each.gateway.cleanup();
} finally {
  await group.stopAll();
  for (const schema of schemas) await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin?.end();
}
