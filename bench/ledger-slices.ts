/**
 * The ledger of one busy wallet on PostgreSQL, alone (docs/performance.md, "One busy account on
 * PostgreSQL"): 50 concurrent loops of a hold and its settlement on one account, through one store
 * with credit leases and one without, in alternating rounds, on a schema of their own. Reports the
 * operations per second and PostgreSQL's CPU per request (the CPU of the store's own backends, read
 * from /proc, over the requests done), and checks the ledger exact after each round.
 * `node bench/ledger-slices.ts [--rounds=2] [--seconds=4] [--database=URL]`.
 */
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openStore } from '../src/storage/open-store.ts';
import type { OwnerRef, Store } from '../src/storage/store.ts';
import { backendCpu } from './postgres-cpu.ts';
import { DEFAULT_BENCH_DATABASE_URL } from './scale-out.ts';

const CONNECTIONS = 50;
const HOLD = 1_000_000n;
const COST = 300_000n;

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '4' },
    database: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? DEFAULT_BENCH_DATABASE_URL },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const url = values.database!;

async function measure(store: Store, owner: OwnerRef, admin: pg.Client, applicationName: string) {
  let done = 0;
  let stop = false;
  const loops = Array.from({ length: CONNECTIONS }, async () => {
    while (!stop) {
      const hold = await store.reserve({ owner, amount: HOLD, requestId: `req_${done}`, expiresAt: Date.now() + 60_000 });
      if (!hold) throw new Error('the hold was refused');
      await store.settle(hold.id, COST);
      done += 1;
    }
  });
  // A second of load first: slices are taken, statements prepared.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const [doneBefore, cpuBefore, startedAt] = [done, await backendCpu(admin, applicationName), Date.now()];
  await new Promise((resolve) => setTimeout(resolve, seconds * 1_000));
  const [doneAfter, cpuAfter, endedAt] = [done, await backendCpu(admin, applicationName), Date.now()];
  stop = true;
  await Promise.all(loops);
  const requests = doneAfter - doneBefore;
  return { perSecond: requests / ((endedAt - startedAt) / 1_000), databaseMicros: ((cpuAfter - cpuBefore) * 1e6) / requests };
}

const schema = `bench_slices_${randomBytes(6).toString('hex')}`;
const admin = new pg.Client({ connectionString: url });
await admin.connect();
try {
  for (let round = 0; round < rounds; round++) {
    for (const leases of round % 2 === 0 ? [false, true] : [true, false]) {
      const applicationName = `gateway_${schema}_${leases ? 'slices' : 'commits'}`;
      const address = new URL(url);
      address.searchParams.set('application_name', applicationName);
      const store = await openStore({ databaseUrl: address.href, dataDir: tmpdir(), schema, poolSize: 10, leases });
      try {
        const owner = { kind: 'account', id: (await store.createAccount({ name: 'busy' })).id } as const;
        await store.addCredit(owner, 10n ** 15n);
        const { perSecond, databaseMicros } = await measure(store, owner, admin, applicationName);
        await store.close();
        const { rows } = await admin.query(
          `SELECT (SELECT coalesce(sum(amount), 0) FROM ${schema}.ledger_entries WHERE owner_id = $1 AND kind = 'credit')
                - (SELECT coalesce(sum(amount), 0) FROM ${schema}.ledger_entries WHERE owner_id = $1 AND kind = 'charge') - balance AS drift,
                  reserved FROM ${schema}.wallets WHERE owner_id = $1`,
          [owner.id],
        );
        const exact = BigInt(rows[0].drift) === 0n && BigInt(rows[0].reserved) === 0n;
        console.log(
          `round ${round + 1} · ${leases ? 'slices' : 'group commits only'}: ${Math.round(perSecond)} holds and settlements/s, PostgreSQL ${Math.round(databaseMicros)} µs CPU per request, ledger ${exact ? 'exact' : `NOT exact (${JSON.stringify(rows[0])})`}`,
        );
      } catch (error) {
        await store.close();
        throw error;
      }
    }
  }
} finally {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
}
