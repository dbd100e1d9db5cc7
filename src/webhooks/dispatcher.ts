/**
 * The webhook dispatcher every instance runs beside its server (docs/webhooks.md). Each pass:
 *
 * 1. announces ended jobs: each job in a terminal status whose credit hold is finished and that is
 *    not yet announced becomes one pending delivery per endpoint of its owner that takes its event
 *    type (events.ts), and is marked;
 * 2. claims due deliveries, as many as it has free slots (`concurrency`), with a lease a little
 *    longer than an attempt may last, and sends each (sender.ts);
 * 3. records each attempt: delivered on a 2xx; otherwise due again after a backoff (retry.ts), or
 *    failed when that would be more than 24 hours after the event.
 *
 * Passes run every `poll_interval_ms`, and again as soon as an attempt ends (a slot is free).
 * Instances share the work through the store alone: announcing is idempotent and claims never
 * overlap, so any number of them may run, and one that dies leaves its claims to lapse.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../core/logger.ts';
import type { ClaimedWebhookDelivery, Store, WebhookAttemptOutcome } from '../storage/store.ts';
import type { Resolver } from './addresses.ts';
import { jobEvent } from './events.ts';
import { retryDelayMs } from './retry.ts';
import { createWebhookSender } from './sender.ts';
import type { WebhookSettings } from './settings.ts';

export type WebhookLogger = Logger & { debug(details: object, message: string): void };

type DispatcherStore = Pick<Store, 'unannouncedJobs' | 'announceJob' | 'claimWebhookDeliveries' | 'completeWebhookAttempt' | 'countPendingWebhookDeliveries'>;

export interface WebhookDispatcherOptions {
  readonly store: DispatcherStore;
  readonly settings: WebhookSettings;
  readonly logger: WebhookLogger;
  /** Where the delivery metrics are registered (the app's /metrics registry). */
  readonly metrics: Registry;
  /** The lease holder's name: this instance. */
  readonly worker: string;
  readonly now: () => number;
  /** Replaces DNS (tests). */
  readonly resolve?: Resolver;
  /** The jitter's source, in [0, 1) (tests). */
  readonly random?: () => number;
}

export interface WebhookDispatcher {
  /** Runs a pass now rather than at the next poll (a job just ended here). */
  wake(): void;
  /** Stops polling, aborts the attempts in flight (each is recorded, due again at once), and waits for them. */
  stop(): Promise<void>;
}

/** Jobs read per announcing round; a pass announces at most ANNOUNCE_ROUNDS of them. */
const ANNOUNCE_BATCH = 100;
const ANNOUNCE_ROUNDS = 10;
/** What a lease adds to the attempt's timeout: time to record the outcome before another instance may claim it. */
const LEASE_MARGIN_MS = 30_000;

export function startWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  const { store, settings, logger, now } = options;
  const sender = createWebhookSender({
    allowPrivateAddresses: settings.allowPrivateAddresses,
    timeoutMs: settings.timeoutMs,
    now,
    resolve: options.resolve,
  });
  const deliveries = new Counter({
    name: 'gateway_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered (a 2xx), retried (failed, due again later), failed (failed, given up).',
    labelNames: ['outcome'] as const,
    registers: [options.metrics],
  });
  for (const outcome of ['delivered', 'retried', 'failed']) deliveries.labels(outcome).inc(0);
  new Gauge({
    name: 'gateway_webhook_deliveries_pending',
    help: 'Webhook deliveries waiting to be delivered (due now or later), across every instance.',
    registers: [options.metrics],
    async collect() {
      try {
        this.set(await store.countPendingWebhookDeliveries());
      } catch {
        // The store is away: the last value stands, and the pass that fails says so in the log.
      }
    },
  });

  const schedule = { baseMs: settings.retryBaseMs, maxMs: settings.retryMaxMs };
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let again = false;
  /** Set while passes fail, so that an outage is logged when it starts and when it ends, not at every poll. */
  let failing = false;

  function scheduleNext(): void {
    if (stopping.signal.aborted) return;
    clearTimeout(timer);
    timer = setTimeout(wake, settings.pollIntervalMs);
    // The dispatcher alone never keeps the process alive.
    timer.unref();
  }

  function wake(): void {
    if (stopping.signal.aborted) return;
    if (running) {
      again = true;
      return;
    }
    running = pass()
      .then(
        () => {
          if (failing) logger.info({}, 'webhook dispatcher resumed');
          failing = false;
        },
        (error: unknown) => {
          if (!failing) logger.error({ err: error }, 'webhook dispatcher pass failed; retrying at every poll');
          failing = true;
        },
      )
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          wake();
        } else scheduleNext();
      });
  }

  async function pass(): Promise<void> {
    await announce();
    await claimAndSend();
  }

  async function announce(): Promise<void> {
    for (let round = 0; round < ANNOUNCE_ROUNDS && !stopping.signal.aborted; round++) {
      const jobs = await store.unannouncedJobs(ANNOUNCE_BATCH);
      for (const job of jobs) {
        const event = jobEvent(job);
        const created = await store.announceJob({ jobId: job.id, event, now: now() });
        if (created > 0) logger.debug({ jobId: job.id, eventId: event?.id, type: event?.type, deliveries: created }, 'webhook event announced');
      }
      if (jobs.length < ANNOUNCE_BATCH) return;
    }
    // More ended jobs than a pass announces: the next pass follows at once.
    again = true;
  }

  async function claimAndSend(): Promise<void> {
    const free = settings.concurrency - inFlight.size;
    if (free <= 0 || stopping.signal.aborted) return;
    const at = now();
    const claimed = await store.claimWebhookDeliveries({ worker: options.worker, now: at, leaseUntil: at + settings.timeoutMs + LEASE_MARGIN_MS, limit: free });
    for (const delivery of claimed) {
      const attempt: Promise<void> = send(delivery).finally(() => {
        inFlight.delete(attempt);
        wake();
      });
      inFlight.add(attempt);
    }
  }

  async function send(delivery: ClaimedWebhookDelivery): Promise<void> {
    const result = await sender.send(delivery, stopping.signal);
    const at = now();
    const outcome: WebhookAttemptOutcome = result.ok
      ? { delivered: true, httpStatus: result.status }
      : {
          delivered: false,
          httpStatus: result.status,
          error: result.error,
          // An attempt cut short by a stopping instance is not the endpoint's fault: due again at once.
          nextAttemptAt: stopping.signal.aborted ? at : at + retryDelayMs(delivery.attempts, schedule, options.random),
        };
    const details = { endpointId: delivery.endpointId, eventId: delivery.eventId, type: delivery.eventType, attempt: delivery.attempts };
    let recorded: Awaited<ReturnType<DispatcherStore['completeWebhookAttempt']>>;
    try {
      recorded = await store.completeWebhookAttempt({ endpointId: delivery.endpointId, eventId: delivery.eventId, worker: options.worker, now: at, outcome });
    } catch (error) {
      // The lease lapses, and the delivery is claimed again: a delivered event may be sent twice.
      logger.error({ ...details, err: error }, 'could not record a webhook attempt');
      return;
    }
    if (recorded === null) {
      logger.warn(details, 'webhook attempt ended after its lease was taken over or its endpoint removed; not recorded');
      return;
    }
    switch (recorded.status) {
      case 'delivered':
        deliveries.labels('delivered').inc();
        logger.debug({ ...details, status: result.status }, 'webhook delivered');
        return;
      case 'pending':
        deliveries.labels('retried').inc();
        logger.warn(
          { ...details, status: result.status, error: recorded.lastError, nextAttemptAt: recorded.nextAttemptAt },
          'webhook attempt failed; will retry',
        );
        return;
      case 'failed':
        deliveries.labels('failed').inc();
        logger.error({ ...details, status: result.status, error: recorded.lastError }, 'webhook delivery given up: no success within 24 hours of the event');
        return;
      default: {
        const unknown: never = recorded.status;
        throw new Error(`unknown delivery status ${String(unknown)}`);
      }
    }
  }

  let stopped: Promise<void> | undefined;
  wake();
  return {
    wake,
    stop() {
      stopped ??= (async () => {
        stopping.abort();
        clearTimeout(timer);
        await running;
        await Promise.allSettled([...inFlight]);
        await sender.close();
      })();
      return stopped;
    },
  };
}
