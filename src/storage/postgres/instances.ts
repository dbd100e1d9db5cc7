/**
 * Instance liveness on PostgreSQL. Every serving instance keeps a row in `instances` with a
 * heartbeat, renewed every third of the lapse over a database session of its own; at each beat it
 * also releases the credit holds of the instances judged gone (a process killed, a machine lost), so
 * that a crash keeps credit held for about the lapse instead of the reservations' whole lifetime
 * (docs/billing.md, "Holds of a process that died"). Heartbeats are stamped and judged on the
 * database's clock, so the clocks of the instances' machines never matter. A stopping instance marks
 * itself lapsed, and the next beat of any instance removes the rows of lapsed instances that hold
 * nothing.
 *
 * An instance is gone when its heartbeat is older than the lapse and either the session it beats
 * over has closed (a killed process's connections close with it) or its heartbeat is older than
 * LIVE_SESSION_LAPSES lapses (a machine lost without closing its connection, or a session behind a
 * pooler that outlives it). So an instance starved of CPU on a busy host, whose beats come late but
 * whose session is open, keeps its holds: judged by the heartbeat alone, it lost them, and the
 * requests it was serving settled to nothing and went uncharged.
 */
import type { Logger } from '../../core/logger.ts';
import type { InstanceStore, InstanceVitals } from '../store.ts';
import type { PostgresDatabase, Statement } from './database.ts';
import { releaseOpenReservations } from './ledger.ts';

export interface HeartbeatOptions {
  /** How long an instance's heartbeat may be missing before its holds are released (ms). */
  readonly lapseMs: number;
}

export interface Heartbeat {
  /** Stops beating and marks the instance lapsed (its holds, if any are left, go at a peer's next beat). */
  stop(): Promise<void>;
}

const DATABASE_NOW = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

/** How many lapses an instance whose session is still open may go without a beat before it is judged gone. */
export const LIVE_SESSION_LAPSES = 4;

/**
 * SQL: whether the database session the instance row `alias` last beat over is still open (the
 * server process of that id started at that time is there). One test for the holds of an instance
 * (below) and for the leases of its jobs (jobs.ts).
 */
export const sessionOpen = (alias: string) =>
  `EXISTS (SELECT 1 FROM pg_stat_activity AS a WHERE a.pid = ${alias}.session_pid AND a.backend_start = ${alias}.session_start)`;

// A beat does not wait for its WAL to reach the disk (synchronous_commit off, for its own
// transaction): what matters about a beat is that it is seen in time, not that it survives a crash of
// the database (every instance beats again within a third of the lapse). It records the session it
// is sent over (the server process's id and start), by which a peer tells a live instance whose
// beats come late from a dead one.
const BEAT: Statement = {
  name: 'gateway_instance_beat_session',
  text: `WITH durability AS (SELECT set_config('synchronous_commit', 'off', true))
         INSERT INTO instances (id, started_at, heartbeat_at, vitals, session_pid, session_start)
         SELECT $1, ${DATABASE_NOW}, ${DATABASE_NOW}, $2, pg_backend_pid(),
                (SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid())
         FROM durability
         ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, vitals = excluded.vitals,
                                        session_pid = excluded.session_pid, session_start = excluded.session_start`,
};

const LIVE: Statement = {
  name: 'gateway_instances_live',
  text: 'SELECT id, heartbeat_at, vitals FROM instances WHERE heartbeat_at > 0 ORDER BY started_at, id',
};

/** What the beat reports, once the server has set it (InstanceStore.reportVitals). */
export interface VitalsSource {
  read: (() => InstanceVitals) | null;
}

export function postgresInstances(database: PostgresDatabase, source: VitalsSource): InstanceStore {
  return {
    reportVitals(read) {
      source.read = read;
    },
    async listInstances() {
      return (await database.query(LIVE, [])).rows.map((row) => ({
        id: String(row.id),
        heartbeatAt: Number(row.heartbeat_at),
        vitals: row.vitals === null ? null : (JSON.parse(String(row.vitals)) as InstanceVitals),
      }));
    },
  };
}

function vitalsJson(source: VitalsSource): string | null {
  return source.read === null ? null : JSON.stringify(source.read());
}

// Like the expiry sweep (ledger.ts). The lapsed rows that held nothing at the statement's start are
// deleted; those whose holds this statement releases go at the next beat. A session another role
// opened may show no start here (pg_stat_activity hides it): it counts as closed, and the
// heartbeat alone judges, as it did before sessions were recorded.
const RELEASE_LAPSED = releaseOpenReservations({
  name: 'gateway_release_gone_holders',
  before: `lapsed AS (
           SELECT i.id FROM instances i
           WHERE i.heartbeat_at < ${DATABASE_NOW} - $1::bigint AND i.id <> $2
             AND (i.heartbeat_at < ${DATABASE_NOW} - ${LIVE_SESSION_LAPSES} * $1::bigint OR NOT ${sessionOpen('i')})
         )`,
  which: `holder_kind = 'instance' AND holder_id IN (SELECT id FROM lapsed)`,
  closedAt: '$3',
  after: `forgotten AS (
           DELETE FROM instances i USING lapsed l
           WHERE i.id = l.id AND NOT EXISTS (
             SELECT 1 FROM reservations r WHERE r.status = 'open' AND r.holder_kind = 'instance' AND r.holder_id = i.id
           )
         )`,
});

const MARK_LAPSED: Statement = { name: 'gateway_instance_lapsed', text: 'UPDATE instances SET heartbeat_at = 0 WHERE id = $1' };

/**
 * Registers the instance (before it makes any reservation) and beats until stopped. A failed beat
 * is logged and tried again at the next one.
 *
 * The beat goes over `beatDatabase`, a connection of its own, and never waits for the release of
 * lapsed holds, which runs beside it on the store's pool: that release waits for the wallet rows'
 * locks, and under a burst on one busy wallet a beat queued behind it (or behind the requests
 * filling the pool) could come later than the lapse, and a live instance would lose its holds.
 */
export async function startHeartbeat(
  database: PostgresDatabase,
  beatDatabase: PostgresDatabase,
  instanceId: string,
  options: HeartbeatOptions,
  now: () => number,
  logger: Logger,
  vitals: VitalsSource,
): Promise<Heartbeat> {
  await beatDatabase.query(BEAT, [instanceId, vitalsJson(vitals)]);
  let beating: Promise<void> | null = null;
  let releasing: Promise<void> | null = null;
  const beat = async () => {
    try {
      await beatDatabase.query(BEAT, [instanceId, vitalsJson(vitals)]);
    } catch (error) {
      logger.error({ err: error }, 'instance heartbeat failed');
    }
  };
  const release = async () => {
    try {
      const { rows } = await database.query(RELEASE_LAPSED, [options.lapseMs, instanceId, now()]);
      const released = Number(rows[0].released);
      if (released > 0) logger.info({ count: released }, 'released the credit holds of lapsed instances');
    } catch (error) {
      logger.error({ err: error }, 'releasing the holds of lapsed instances failed');
    }
  };
  const timer = setInterval(
    () => {
      // Neither is stacked on a run of itself slower than the interval.
      beating ??= beat().finally(() => (beating = null));
      releasing ??= release().finally(() => (releasing = null));
    },
    Math.max(1, Math.floor(options.lapseMs / 3)),
  );
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all([beating, releasing]);
      try {
        await beatDatabase.query(MARK_LAPSED, [instanceId]);
      } catch (error) {
        logger.warn({ err: error }, 'could not mark the instance stopped; its row lapses on its own');
      }
    },
  };
}
