/**
 * The job workers of one instance (docs/jobs.md). Every instance runs one runner; any of them may
 * run any job:
 * - it claims queued jobs (and due parked ones, and jobs whose lease lapsed) while it has free
 *   slots, looking again every poll interval, at once when woken by a submission or a free slot,
 *   and when a step it parked is due. Jobs of `call` kinds hold one of `concurrency` slots to their
 *   end; `operation` jobs hold one of `operationSteps` slots for one short step at a time and are
 *   parked in between (handler.ts, JobSchedule). Within each pool the kinds take turns, so that no
 *   kind starves another at any slot count; the store ranks owners (store.ts, claimJob);
 * - it renews the leases of the jobs it runs every heartbeat, in one statement; a job missing from
 *   the renewal was cancelled or taken over, and its upstream call is aborted;
 * - a job taken over after its work was sent upstream is failed and its hold released, never run
 *   again (the upstream may have done, and billed, the work), unless its worker recorded a
 *   checkpoint to go on from (a video's upstream operation): then it is resumed; one taken over
 *   before anything was sent is run;
 * - ended jobs whose hold is still open (their instance died between ending and charging) are
 *   charged or released according to how they ended, and their request log row written.
 * Each job's credit hold is held in the job's name: no instance's death releases it (storage/store.ts,
 * HoldOwner).
 */
import type { Logger } from '../core/logger.ts';
import { Counter, Gauge, type Registry } from 'prom-client';
import { errors } from '../core/errors.ts';
import { ENDED_JOB_STATUSES, type EndedJobStatus, type JobKind, type JobRecord, type JobStore, type LedgerStore, type WaitingJobs } from '../storage/store.ts';
import type { CallTrace } from '../telemetry/tracing.ts';
import type { JobContext, JobHandler, JobSchedule } from './handler.ts';
import type { JobSettings } from './settings.ts';

export type RunnerStore = JobStore & Pick<LedgerStore, 'settle' | 'release'> & { readonly instanceId: string };

/** Ended jobs whose hold is still open are looked for this often. */
const RECONCILE_INTERVAL_MS = 10_000;
const RECONCILE_BATCH = 100;

interface RunningJob {
  readonly kind: JobKind;
  readonly controller: AbortController;
  readonly done: Promise<void>;
}

/** The slots of one schedule and the kinds that share them, taken in turn from `next`. */
interface SlotPool {
  readonly capacity: number;
  readonly kinds: JobKind[];
  next: number;
  running: number;
}

/**
 * What a run did with its job: ended it here, parked it for a later step, or neither (handed back on
 * stop, or moved on: another worker or a cancel has it); and the span of its call.
 */
interface RunOutcome {
  ended: boolean;
  parked: boolean;
  trace: CallTrace | undefined;
}

export interface RunnerOptions {
  readonly store: RunnerStore;
  readonly settings: JobSettings;
  readonly logger: Logger;
  readonly metrics: Registry;
  readonly now: () => number;
}

export class JobRunner {
  readonly #options: RunnerOptions;
  readonly #handlers = new Map<JobKind, JobHandler>();
  readonly #running = new Map<string, RunningJob>();
  readonly #pools: Record<JobSchedule, SlotPool>;
  /** Wakes for the steps this instance parked, each at its due time. */
  readonly #dueTimers = new Set<NodeJS.Timeout>();
  readonly #metrics: ReturnType<typeof runnerMetrics>;
  #started = false;
  #stopping = false;
  #filling: Promise<void> | null = null;
  /** Pools to claim into: a pool that found nothing claimable is looked at again only when woken. */
  readonly #wanted = new Set<SlotPool>();
  #pollTimer: NodeJS.Timeout | undefined;
  #heartbeatTimer: NodeJS.Timeout | undefined;
  #reconcileTimer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | null = null;
  readonly #endListeners: ((job: JobRecord) => void)[] = [];

  constructor(options: RunnerOptions) {
    this.#options = options;
    this.#metrics = runnerMetrics(options, () => this.#running);
    this.#pools = {
      call: { capacity: options.settings.concurrency, kinds: [], next: 0, running: 0 },
      operation: { capacity: options.settings.operationSteps, kinds: [], next: 0, running: 0 },
    };
  }

  /** This instance's worker id: the lease owner of the jobs it runs. */
  get worker(): string {
    return this.#options.store.instanceId;
  }

  get settings(): JobSettings {
    return this.#options.settings;
  }

  /** Jobs this instance's workers run now. */
  get runningCount(): number {
    return this.#running.size;
  }

  register(handler: JobHandler): void {
    if (this.#handlers.has(handler.kind)) throw new Error(`a handler for ${handler.kind} jobs is already registered`);
    this.#handlers.set(handler.kind, handler);
    this.#pools[handler.schedule].kinds.push(handler.kind);
    // Every series exists from the start, at zero, so that a rate over it has a base.
    for (const outcome of ['retried', 'resumed', 'failed']) this.#metrics.takenOver.inc({ kind: handler.kind, outcome }, 0);
    for (const status of ENDED_JOB_STATUSES) this.#metrics.ended.inc({ kind: handler.kind, status }, 0);
    this.#metrics.claimed.inc({ kind: handler.kind }, 0);
  }

  /**
   * Calls `listener` whenever a job of this instance's has ended and its hold is finished (what a
   * webhook announcement waits for), so that the announcement need not wait for its next poll.
   */
  onJobFinished(listener: (job: JobRecord) => void): void {
    this.#endListeners.push(listener);
  }

  /** Tells the listeners that a job has finished (the runner's own, or one cancelled here). */
  jobFinished(job: JobRecord): void {
    for (const listener of this.#endListeners) listener(job);
  }

  handlerFor(kind: JobKind): JobHandler {
    const handler = this.#handlers.get(kind);
    if (!handler) throw new Error(`no handler for ${kind} jobs`);
    return handler;
  }

  start(): void {
    if (this.#started || this.#handlers.size === 0) return;
    this.#started = true;
    const { settings } = this.#options;
    this.#pollTimer = setInterval(() => this.wake(), settings.pollIntervalMs);
    this.#heartbeatTimer = setInterval(() => this.#heartbeat(), settings.heartbeatMs);
    this.#reconcileTimer = setInterval(() => void this.reconcile(), RECONCILE_INTERVAL_MS);
    for (const timer of [this.#pollTimer, this.#heartbeatTimer, this.#reconcileTimer]) timer.unref();
    this.wake();
  }

  /** Looks for claimable jobs now (a submission on this instance calls it). */
  wake(): void {
    this.#wakePools(Object.values(this.#pools));
  }

  #wakePools(pools: readonly SlotPool[]): void {
    if (!this.#started || this.#stopping) return;
    for (const pool of pools) this.#wanted.add(pool);
    // A fill under way takes the pools added meanwhile.
    if (this.#filling) return;
    this.#filling = this.#fill()
      .catch((error: unknown) => this.#options.logger.error({ err: error }, 'claiming jobs failed'))
      .finally(() => {
        this.#filling = null;
        if (this.#wanted.size > 0) this.#wakePools([]);
      });
  }

  /** Aborts the job's work when this instance runs it (its cancel was recorded by the caller). */
  abortLocal(id: string): void {
    this.#running.get(id)?.controller.abort(errors.workEnded());
  }

  /**
   * Stops claiming and hands the steps of operations back at once (their leases cleared, so that
   * another instance claims them now; parked ones need nothing); lets the others finish for up to
   * `drainMs`, then aborts the rest: they end as failed (and are not charged), since another
   * instance cannot resume an upstream call.
   */
  async stop(drainMs: number): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    clearInterval(this.#pollTimer);
    clearInterval(this.#reconcileTimer);
    for (const timer of this.#dueTimers) clearTimeout(timer);
    this.#dueTimers.clear();
    await this.#filling;
    await this.#handBack();
    const running = [...this.#running.values()];
    if (running.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const drained = Promise.all(running.map((job) => job.done)).then(() => true);
      const late = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), drainMs);
      });
      if (!(await Promise.race([drained, late]))) {
        for (const job of this.#running.values()) job.controller.abort(errors.jobInterrupted());
        await Promise.all([...this.#running.values()].map((job) => job.done));
      }
      clearTimeout(timer);
    }
    clearInterval(this.#heartbeatTimer);
    await this.#beating;
  }

  /** Stops the steps of operations and clears their leases (a job that moved on meanwhile is left alone). */
  async #handBack(): Promise<void> {
    const { store, now, logger } = this.#options;
    const resumable = [...this.#running.entries()].filter(([, job]) => this.#handlers.get(job.kind)?.schedule === 'operation');
    for (const [, job] of resumable) job.controller.abort(errors.shuttingDown());
    await Promise.all(
      resumable.map(async ([id, job]) => {
        await job.done;
        try {
          if (await store.transitionJob(id, ['in_progress'], { leaseUntil: null, now: now() }, this.worker))
            logger.info({ jobId: id }, 'job handed back for another instance to resume');
        } catch (error) {
          logger.warn({ err: error, jobId: id }, 'handing a job back failed; another instance takes it over when its lease lapses');
        }
      }),
    );
  }

  /**
   * Claims jobs into the free slots of the wanted pools, one job per pool in turn, until each is full
   * or has nothing claimable (it is then looked at again when woken: a submission, a freed slot of
   * its own, a due step, or the poll interval).
   */
  async #fill(): Promise<void> {
    while (this.#wanted.size > 0 && !this.#stopping) {
      const pools = [...this.#wanted];
      this.#wanted.clear();
      for (const pool of pools) {
        if (pool.running < pool.capacity && !this.#stopping && (await this.#claimInto(pool))) this.#wanted.add(pool);
      }
    }
  }

  /** Claims one job into the pool, trying its kinds from the one after the kind claimed last: no kind starves another. */
  async #claimInto(pool: SlotPool): Promise<boolean> {
    const { store, settings, now } = this.#options;
    for (let tried = 0; tried < pool.kinds.length; tried++) {
      const index = (pool.next + tried) % pool.kinds.length;
      const at = now();
      const job = await store.claimJob(pool.kinds[index], this.worker, at, at + settings.leaseMs);
      if (job) {
        this.#metrics.claimed.inc({ kind: job.kind });
        pool.next = (index + 1) % pool.kinds.length;
        this.#begin(job, pool);
        return true;
      }
    }
    return false;
  }

  #begin(job: JobRecord, pool: SlotPool): void {
    const controller = new AbortController();
    const outcome: RunOutcome = { ended: false, parked: false, trace: undefined };
    pool.running += 1;
    const done = this.#run(job, controller, outcome)
      .catch((error: unknown) => this.#options.logger.error({ err: error, jobId: job.id }, 'job runner failure'))
      .finally(() => {
        // A run that recorded its call's row ended its span; any other leaves the job to a later run.
        outcome.trace?.handedBack(outcome.parked ? 'parked' : this.#stopping ? 'stopping' : 'moved_on');
        // The job's next step may already run under a new lease: its entry is not this run's to remove.
        if (this.#running.get(job.id) === run) this.#running.delete(job.id);
        pool.running -= 1;
        // Only a job ended here: one handed back or moved on still runs, and holds its slot of the key's limits.
        if (outcome.ended) this.jobFinished(job);
        // A slot is free: look for the next job of its pool at once rather than at the next poll.
        this.#wakePools([pool]);
      });
    const run: RunningJob = { kind: job.kind, controller, done };
    this.#running.set(job.id, run);
  }

  /** Wakes this runner when a step it parked is due (another instance may claim it first: any may). */
  #wakeAt(at: number): void {
    if (this.#stopping) return;
    const timer = setTimeout(
      () => {
        this.#dueTimers.delete(timer);
        this.#wakePools([this.#pools.operation]);
      },
      Math.max(0, at - this.#options.now()),
    );
    timer.unref();
    this.#dueTimers.add(timer);
  }

  async #run(job: JobRecord, controller: AbortController, outcome: RunOutcome): Promise<void> {
    const handler = this.handlerFor(job.kind);
    const context = this.#context(job, controller.signal, outcome);
    if (job.dispatchedAt !== null && job.checkpoint === null) {
      // Taken over after its work was sent upstream, with nothing to go on from: ended without a charge, never sent twice.
      this.#metrics.takenOver.inc({ kind: job.kind, outcome: 'failed' });
      this.#options.logger.warn({ jobId: job.id, attempts: job.attempts }, 'job taken over after it was sent upstream: ended as failed, hold released');
      const interrupted = errors.jobInterrupted();
      if (await context.end('failed', handler.failed(job, interrupted))) {
        await this.#release(job);
        handler.recordEnd(job, 'failed', interrupted);
      }
      return;
    }
    if (job.attempts > 1) {
      const resumed = job.checkpoint !== null;
      this.#metrics.takenOver.inc({ kind: job.kind, outcome: resumed ? 'resumed' : 'retried' });
      this.#options.logger.info(
        { jobId: job.id, attempts: job.attempts },
        resumed ? 'job taken over: resuming it from its checkpoint' : 'job taken over before it was sent upstream: running it',
      );
    }
    await handler.run(job, context);
  }

  #context(job: JobRecord, signal: AbortSignal, outcome: RunOutcome): JobContext {
    const { store, now } = this.#options;
    const worker = this.worker;
    return {
      signal,
      dispatch: async () => (await store.transitionJob(job.id, ['in_progress'], { dispatchedAt: now(), now: now() }, worker)) !== null,
      checkpoint: async (state) => (await store.transitionJob(job.id, ['in_progress'], { checkpoint: state, now: now() }, worker)) !== null,
      park: async (at, state) => {
        const parked = await store.transitionJob(job.id, ['in_progress'], { checkpoint: state, leaseUntil: null, nextAttemptAt: at, now: now() }, worker);
        if (parked === null) return false;
        outcome.parked = true;
        this.#wakeAt(at);
        return true;
      },
      end: async (status: EndedJobStatus, result: unknown, cost) => {
        const ended = await store.transitionJob(job.id, ['in_progress'], { status, result, cost, leaseUntil: null, now: now() }, worker);
        if (ended === null) return false;
        this.#metrics.ended.inc({ kind: job.kind, status });
        outcome.ended = true;
        return true;
      },
      amend: async (result) => {
        await store.transitionJob(job.id, ['completed', 'incomplete'], { result, now: now() });
      },
      traced: (trace) => {
        outcome.trace = trace;
      },
    };
  }

  async #release(job: JobRecord): Promise<void> {
    if (job.reservationId !== null) await this.#options.store.release(job.reservationId);
  }

  /**
   * Renews the leases of the running jobs; aborts those this worker no longer holds. Only the runs
   * the renewal was asked for: a step that parked its job while the renewal was on its way is
   * missing from its answer, and the job's next step, claimed meanwhile under a new lease, must not
   * be aborted for it (it would stop at once and leave its job idle until that lease lapsed).
   */
  #heartbeat(): void {
    if (this.#beating || this.#running.size === 0) return;
    const { store, settings, now } = this.#options;
    const renewed = [...this.#running];
    const at = now();
    this.#beating = store
      .renewLeases(
        renewed.map(([id]) => id),
        this.worker,
        at,
        at + settings.leaseMs,
      )
      .then((held) => {
        const kept = new Set(held);
        for (const [id, run] of renewed) {
          if (!kept.has(id) && this.#running.get(id) === run) run.controller.abort(errors.workEnded());
        }
      })
      .catch((error: unknown) => this.#options.logger.warn({ err: error }, 'renewing job leases failed'))
      .finally(() => {
        this.#beating = null;
      });
  }

  /**
   * Charges or releases the holds of ended jobs whose instance died between ending them and
   * finishing the hold. Only jobs unchanged for a lease are looked at: a live worker finishes its
   * own hold within moments of ending the job.
   */
  async reconcile(): Promise<number> {
    const { store, settings, now, logger } = this.#options;
    let finished = 0;
    try {
      for (const job of await store.endedJobsHoldingCredit(now() - settings.leaseMs, RECONCILE_BATCH)) {
        const reservationId = job.reservationId!;
        const charge = (job.status === 'completed' || job.status === 'incomplete') && job.cost !== null;
        if (charge) await store.settle(reservationId, job.cost!);
        else await store.release(reservationId);
        // Its worker died before its row too (pipeline/metered-call.ts): the row is the job's end.
        this.#handlers.get(job.kind)?.recordEnd(job, job.status as EndedJobStatus, null);
        finished += 1;
        logger.warn({ jobId: job.id, status: job.status, charged: charge ? String(job.cost) : '0' }, 'finished the credit hold of an ended job');
      }
    } catch (error) {
      logger.error({ err: error }, 'finishing the holds of ended jobs failed');
    }
    return finished;
  }
}

function runnerMetrics(options: RunnerOptions, running: () => ReadonlyMap<string, RunningJob>) {
  const registers = [options.metrics];
  // One count serves both gauges of a scrape: the registry collects its metrics at once.
  let counting: Promise<Map<JobKind, WaitingJobs>> | null = null;
  const waiting = () => {
    counting ??= options.store.countWaitingJobs(options.now()).finally(() => {
      counting = null;
    });
    return counting;
  };
  const waitingGauge = (name: string, help: string, count: (jobs: WaitingJobs) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['kind'],
      registers,
      async collect() {
        this.reset();
        try {
          for (const [kind, jobs] of await waiting()) this.set({ kind }, count(jobs));
        } catch (error) {
          options.logger.warn({ err: error }, 'counting waiting jobs failed');
        }
      },
    });
  waitingGauge('gateway_jobs_queued', 'Background jobs waiting for a worker, by kind (all instances: the backlog).', (jobs) => jobs.queued);
  waitingGauge(
    'gateway_jobs_parked',
    'Long operations (video jobs) parked between two steps, holding no worker, by kind (all instances).',
    (jobs) => jobs.parked,
  );
  new Gauge({
    name: 'gateway_jobs_running',
    help: 'Background jobs this instance is running, by kind.',
    labelNames: ['kind'],
    registers,
    collect() {
      this.reset();
      for (const job of running().values()) this.inc({ kind: job.kind });
    },
  });
  return {
    claimed: new Counter({
      name: 'gateway_jobs_claimed_total',
      help: 'Claims this instance made, by kind: a job run to its end, or one step of an operation (a start, a look).',
      labelNames: ['kind'],
      registers,
    }),
    ended: new Counter({
      name: 'gateway_jobs_ended_total',
      help: 'Background jobs this instance ended, by kind and final status.',
      labelNames: ['kind', 'status'],
      registers,
    }),
    takenOver: new Counter({
      name: 'gateway_jobs_taken_over_total',
      help: 'Jobs this instance claimed after another worker lost them: retried (nothing had been sent upstream), resumed (from a checkpoint) or failed.',
      labelNames: ['kind', 'outcome'],
      registers,
    }),
  };
}
