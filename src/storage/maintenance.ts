/**
 * Periodic storage upkeep: releases reservations whose request never settled (a crashed instance,
 * a lost stream) and deletes request log rows, idempotency records, jobs and webhook deliveries past
 * their lifetime.
 * Every instance may run it; each step is safe to run concurrently with itself.
 */
import type { StorageLogger } from './logger.ts';
import type { Store } from './store.ts';

export interface MaintenanceOptions {
  readonly intervalMs: number;
  /** Milliseconds since the epoch; replaceable in tests. */
  readonly now: () => number;
  readonly logger: StorageLogger;
}

export interface Maintenance {
  /** Stops the timer; resolves once a pass already running has finished. */
  stop(): Promise<void>;
}

type MaintenanceStore = Pick<
  Store,
  'releaseExpired' | 'deleteExpiredRequests' | 'deleteExpiredIdempotency' | 'deleteExpiredJobs' | 'deleteExpiredWebhookDeliveries'
>;

const STEPS = [
  ['release expired reservations', (store: MaintenanceStore, now: number) => store.releaseExpired(now)],
  ['delete expired request log rows', (store: MaintenanceStore, now: number) => store.deleteExpiredRequests(now)],
  ['delete expired idempotency records', (store: MaintenanceStore, now: number) => store.deleteExpiredIdempotency(now)],
  ['delete expired jobs', (store: MaintenanceStore, now: number) => store.deleteExpiredJobs(now)],
  ['delete expired webhook deliveries', (store: MaintenanceStore, now: number) => store.deleteExpiredWebhookDeliveries(now)],
] as const;

/** One pass: every step runs even when an earlier one fails; failures are logged, never thrown. */
export async function runMaintenance(store: MaintenanceStore, now: number, logger: StorageLogger): Promise<void> {
  for (const [step, run] of STEPS) {
    try {
      const count = await run(store, now);
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
    running = runMaintenance(store, options.now(), options.logger).finally(() => {
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
