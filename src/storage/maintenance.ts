/**
 * Periodic storage upkeep: releases reservations whose request never settled (a crashed instance,
 * a lost stream) and deletes request log rows, idempotency records, jobs, webhook deliveries and
 * stored output files past their lifetime.
 * Every instance may run it; each step is safe to run concurrently with itself.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { BlobStore } from './blobs.ts';
import type { Logger } from '../core/logger.ts';
import type { Store } from './store.ts';

/**
 * The stored output files (docs/outputs.md): each lives as long as its request's row, counted from
 * when it was written, which is never before the request began; so the files of an expired row are
 * all older than the lifetime, and a file whose row was never written goes too.
 */
export interface MaintainedBlobs {
  readonly store: BlobStore;
  readonly lifetimeMs: number;
}

/** Files per sweep batch: a batch is a few small deletes, and requests run between batches. */
export const BLOB_SWEEP_BATCH = 100;
/** Batches per pass at most; what is left waits for the next pass (a backlog drains over a few). */
export const BLOB_SWEEP_MAX_BATCHES = 50;

export interface MaintenanceOptions {
  readonly intervalMs: number;
  /** Milliseconds since the epoch; replaceable in tests. */
  readonly now: () => number;
  readonly logger: Logger;
  readonly blobs?: MaintainedBlobs;
}

export interface Maintenance {
  /** Stops the timer; resolves once a pass already running has finished. */
  stop(): Promise<void>;
}

type MaintenanceStore = Pick<
  Store,
  'releaseExpired' | 'deleteExpiredRequests' | 'deleteExpiredIdempotency' | 'deleteExpiredJobs' | 'deleteExpiredWebhookDeliveries' | 'deleteExpiredSessions'
>;

const STEPS = [
  ['release expired reservations', (store: MaintenanceStore, now: number) => store.releaseExpired(now)],
  ['delete expired request log rows', (store: MaintenanceStore, now: number) => store.deleteExpiredRequests(now)],
  ['delete expired idempotency records', (store: MaintenanceStore, now: number) => store.deleteExpiredIdempotency(now)],
  ['delete expired jobs', (store: MaintenanceStore, now: number) => store.deleteExpiredJobs(now)],
  ['delete expired webhook deliveries', (store: MaintenanceStore, now: number) => store.deleteExpiredWebhookDeliveries(now)],
  ['delete ended dashboard sessions', (store: MaintenanceStore, now: number) => store.deleteExpiredSessions(now)],
] as const;

/** Deletes the output files past their lifetime, a batch at a time, letting requests run between batches. */
export async function sweepBlobs(blobs: MaintainedBlobs, now: number): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < BLOB_SWEEP_MAX_BATCHES; batch++) {
    const count = await blobs.store.sweep(now - blobs.lifetimeMs, BLOB_SWEEP_BATCH);
    deleted += count;
    if (count < BLOB_SWEEP_BATCH) break;
    await nextTurn();
  }
  return deleted;
}

/** One pass: every step runs even when an earlier one fails; failures are logged, never thrown. */
export async function runMaintenance(store: MaintenanceStore, now: number, logger: Logger, blobs?: MaintainedBlobs): Promise<void> {
  const steps: (readonly [string, () => Promise<number>])[] = STEPS.map(([step, run]) => [step, () => run(store, now)] as const);
  if (blobs) steps.push(['delete expired output files', () => sweepBlobs(blobs, now)]);
  for (const [step, run] of steps) {
    try {
      const count = await run();
      if (count > 0) logger.info({ step, count }, 'storage maintenance');
    } catch (error) {
      logger.error({ err: error, step }, 'storage maintenance step failed');
    }
  }
}

export function startMaintenance(store: MaintenanceStore, options: MaintenanceOptions): Maintenance {
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    // A pass slower than the interval is not stacked on: the next tick finds it still running.
    if (running) return;
    running = runMaintenance(store, options.now(), options.logger, options.blobs).finally(() => {
      running = null;
    });
  }, options.intervalMs);
  // Upkeep alone never keeps the process alive.
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
