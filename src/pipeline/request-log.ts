/**
 * One request log row per request, written in batches: rows are queued and flushed together on a
 * short timer (one transaction instead of one commit per request; see docs/performance.md) and at
 * shutdown. A row is not money — the ledger is written synchronously elsewhere — so a failed write
 * never fails a request. But rows are what usage reports count, so a failure loses as few of them
 * as it can (docs/operations.md, "Request history"):
 * - a batch the store refuses is written again row by row, so that one row it cannot take never
 *   takes the rows of other requests, other accounts' included, down with it;
 * - rows a write failed for are held and tried again (every RETRY_INTERVAL_MS, and at each
 *   flush); a row the store refuses on its own is given up after MAX_ROW_ATTEMPTS tries, while an
 *   unavailable store costs no tries: its rows wait for it;
 * - at most MAX_HELD_ROWS rows wait in memory; a row beyond that is dropped.
 * Failed writes, held rows and dropped rows are counted in /metrics and logged.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { cacheWritesByLifetime, ZERO_USAGE } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import { isStoreUnavailable } from '../core/errors.ts';
import { JsonText } from '../core/json-text.ts';
import type { Picos } from '../core/money.ts';
import type { Logger } from '../core/logger.ts';
import type { OwnerRef, RequestLogRecord, RequestLogStore, RequestStatus, UpstreamAttempt } from '../storage/store.ts';
import type { LoggedUsage } from './kind.ts';

/** Request history is kept for 24 hours (docs/operations.md, "Request history"). */
export const REQUEST_LOG_LIFETIME_MS = 24 * 60 * 60 * 1000;
const FLUSH_INTERVAL_MS = 5;
const MAX_BATCH = 500;
/** Rows waiting in memory (new and held) beyond which new rows are dropped. */
export const MAX_HELD_ROWS = 10_000;
/**
 * The outputs and canonical requests the waiting rows may keep in memory, in characters of their
 * JSON text: a row beyond it keeps its facts (what was asked, served and charged) without them.
 * A prompt may be megabytes, so a count of rows alone does not bound the memory of an outage.
 */
export const MAX_HELD_TEXT = 64 * 1024 * 1024;
/** Tries of a row the store refuses on its own (a failed batch's single-row write is the first). */
export const MAX_ROW_ATTEMPTS = 3;
export const RETRY_INTERVAL_MS = 1_000;

/** Who made a request, and when: known as it arrives, whatever becomes of it. */
export interface RequestOrigin {
  readonly requestId: string;
  readonly owner: OwnerRef;
  readonly keyId: string;
  readonly route: string;
  readonly stream: boolean;
  readonly createdAt: number;
  readonly durationMs: number;
  /** The model that was selected; absent or null when selection failed or never ran. */
  readonly modelId?: string | null;
  /** The canonical request (keptRequest), when its output is stored; absent before it was decoded. */
  readonly canonicalRequest?: JsonText;
}

/** How a request ended; what it never reached (a route, usage, a cost) is left out. */
export interface RequestEnd {
  readonly status: RequestStatus;
  readonly httpStatus: number;
  readonly endpoint?: RouteEndpoint;
  /** The usage columns of what was metered (OutputKind.logged). */
  readonly logged?: LoggedUsage;
  /** The reference cost the cache reads saved, at the payer's rate (billing/cost.ts). */
  readonly cacheSavings?: Picos;
  readonly cost?: Picos;
  /** What the upstream reported beyond the hold, not charged. */
  readonly overHold?: Picos;
  readonly errorCode?: string | null;
  readonly output?: unknown;
  /** Blob keys of the request's stored files (Outputs.storeOutputFiles). */
  readonly blobKeys?: readonly string[];
  readonly firstByteMs?: number | null;
  /** The upstream attempts, in order (attempt-log.ts). */
  readonly attempts?: readonly UpstreamAttempt[];
}

/** Everything a request log row records: the one type every row is built from. */
export type RequestFacts = RequestOrigin & RequestEnd;

export function requestLogRecord(facts: RequestFacts): RequestLogRecord {
  const usage = facts.logged?.usage ?? ZERO_USAGE;
  return {
    id: facts.requestId,
    owner: facts.owner,
    keyId: facts.keyId,
    route: facts.route,
    model: facts.modelId ?? null,
    provider: facts.endpoint?.provider.id ?? null,
    upstreamModel: facts.endpoint?.upstreamModel ?? null,
    status: facts.status,
    httpStatus: facts.httpStatus,
    stream: facts.stream,
    inputTokens: usage.inputTokens,
    cacheReadTokens: usage.cacheReadTokens,
    cacheWriteTokens: usage.cacheWriteTokens,
    // As billed: capped at the cache writes (canonical/usage.ts).
    cacheWrite1hTokens: usage.cacheWrite1hTokens === undefined ? null : cacheWritesByLifetime(usage).oneHour,
    outputTokens: usage.outputTokens,
    reasoningTokens: usage.reasoningTokens,
    searchUnits: facts.logged?.searchUnits ?? 0,
    images: facts.logged?.images ?? 0,
    videoSeconds: facts.logged?.videoSeconds ?? 0,
    cacheSavings: facts.cacheSavings ?? 0n,
    cost: facts.cost ?? 0n,
    overHold: facts.overHold ?? 0n,
    errorCode: facts.errorCode ?? null,
    createdAt: facts.createdAt,
    durationMs: Math.round(facts.durationMs),
    firstByteMs: facts.firstByteMs == null ? null : Math.round(facts.firstByteMs),
    output: facts.output ?? null,
    canonicalRequest: facts.canonicalRequest ?? null,
    blobKeys: facts.blobKeys ?? [],
    attempts: facts.attempts ?? [],
    expiresAt: facts.createdAt + REQUEST_LOG_LIFETIME_MS,
    providerUsage: facts.logged?.providerUsage ?? null,
  };
}

/**
 * The canonical request as the request log keeps it: JSON, with the bytes of input files (an image
 * to edit, a video's first frame) reduced to their size, which says what was sent without keeping
 * the file a second time. It holds what the client asked for, never a key: keys travel in headers.
 * `mayHoldBytes` is the kind's word (OutputKind.requestBytes): a replacer costs JSON.stringify its
 * fast path (a few µs per chat request), so requests said to hold none go without it, unless what
 * comes out shows a typed array after all (its indexes as keys), which is then made again.
 */
export function keptRequest(request: unknown, mayHoldBytes = true): JsonText {
  if (!mayHoldBytes) {
    const text = JSON.stringify(request);
    if (!text.includes('{"0":')) return new JsonText(text);
  }
  return new JsonText(JSON.stringify(request, (_name, value: unknown) => (value instanceof Uint8Array ? { bytes: value.byteLength } : value)));
}

/** Why a write failed: the store could not be reached, or it refused what it was given. */
const WRITE_FAILURES = ['unavailable', 'refused'] as const;
type WriteFailure = (typeof WRITE_FAILURES)[number];
/** Why a row was given up: refused on every try, or over MAX_HELD_ROWS. */
const DROP_REASONS = ['refused', 'overflow'] as const;
type DropReason = (typeof DROP_REASONS)[number];

/** The characters of a row's output and canonical request, as the waiting rows' budget counts them. */
function heldText(record: RequestLogRecord): number {
  const length = (value: unknown) => (value instanceof JsonText ? value.text.length : typeof value === 'string' ? value.length : 0);
  return length(record.output) + length(record.canonicalRequest);
}

interface RequestLogMetrics {
  readonly failedWrites: Counter<'reason'>;
  readonly droppedRows: Counter<'reason'>;
  readonly heldRows: Gauge;
  readonly outputsLeftOut: Counter;
}

const metricsByRegistry = new WeakMap<Registry, RequestLogMetrics>();

/** The writer's metrics in an app's registry, registered once however many writers share it. */
function requestLogMetrics(registry: Registry): RequestLogMetrics {
  let metrics = metricsByRegistry.get(registry);
  if (metrics) return metrics;
  metrics = {
    failedWrites: new Counter({
      name: 'gateway_request_log_write_failures_total',
      help: 'Request log writes (a batch or a single row) that failed, by reason: the store was unavailable or refused the rows.',
      labelNames: ['reason'],
      registers: [registry],
    }),
    droppedRows: new Counter({
      name: 'gateway_request_log_rows_dropped_total',
      help: 'Request log rows given up, by reason: refused by the store on every try, or over the cap of rows waiting in memory.',
      labelNames: ['reason'],
      registers: [registry],
    }),
    heldRows: new Gauge({
      name: 'gateway_request_log_rows_held',
      help: 'Request log rows waiting to be written again after a failed write.',
      registers: [registry],
    }),
    outputsLeftOut: new Counter({
      name: 'gateway_request_log_outputs_left_out_total',
      help: 'Request log rows kept without their output and canonical request: the rows waiting in memory held as much of them as they may.',
      registers: [registry],
    }),
  };
  // Every series exists from the start, so that an alert on its increase sees the first one.
  for (const reason of WRITE_FAILURES) metrics.failedWrites.inc({ reason }, 0);
  for (const reason of DROP_REASONS) metrics.droppedRows.inc({ reason }, 0);
  metricsByRegistry.set(registry, metrics);
  return metrics;
}

/** A row taken for a write, with the number of times the store refused it on its own. */
interface PendingRow {
  readonly record: RequestLogRecord;
  readonly refusals: number;
}

/** A write either ended for each of its rows (written, held or dropped) or found the store away. */
type WriteOutcome = 'done' | 'unavailable';

export class RequestLogWriter {
  /** Rows not tried yet. */
  #queue: RequestLogRecord[] = [];
  /** Rows a write failed for, waiting for the next try. */
  #held: PendingRow[] = [];
  /** Rows taken by the write under way and not yet written, held or dropped. */
  #writingRows = 0;
  #timer: NodeJS.Timeout | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  /** The round queued behind `writing` and not started yet, and whether it is to take the held rows. */
  #next: Promise<void> | undefined;
  #nextTakesHeld = false;
  /** Rows dropped over MAX_HELD_ROWS since that was last logged. */
  #overflowed = 0;
  /** Characters of output and canonical request the waiting rows keep (MAX_HELD_TEXT). */
  #heldText = 0;
  /** Rows kept without their output over MAX_HELD_TEXT since that was last logged. */
  #leftOut = 0;
  /** Whether the last write found the store unavailable: an outage is logged once, not per write. */
  #storeAway = false;
  readonly #store: RequestLogStore;
  readonly #logger: Logger;
  readonly #metrics: RequestLogMetrics;

  constructor(store: RequestLogStore, logger: Logger, metrics: Registry) {
    this.#store = store;
    this.#logger = logger;
    this.#metrics = requestLogMetrics(metrics);
  }

  add(record: RequestLogRecord): void {
    if (this.#queue.length + this.#held.length + this.#writingRows >= MAX_HELD_ROWS) {
      this.#dropped('overflow');
      this.#overflowed++;
      return;
    }
    let text = heldText(record);
    if (this.#heldText + text > MAX_HELD_TEXT) {
      record = { ...record, output: null, canonicalRequest: null };
      text = 0;
      this.#metrics.outputsLeftOut.inc();
      this.#leftOut++;
    }
    this.#heldText += text;
    this.#queue.push(record);
    if (this.#queue.length >= MAX_BATCH) {
      void this.#schedule(false);
    } else if (!this.#timer) {
      this.#timer = setTimeout(() => void this.#schedule(false), FLUSH_INTERVAL_MS);
      this.#timer.unref();
    }
  }

  /**
   * Writes everything queued so far, held rows included; resolves once each row is readable from
   * the store, held for another try, or dropped.
   */
  flush(): Promise<void> {
    return this.#schedule(true);
  }

  /**
   * Queues a round of writes behind the ones under way, for the new rows and, if asked, the held
   * ones; calls before it starts share it. Rounds run one after another, so that a flush also waits
   * for earlier ones, and each takes the rows present when it starts, so that the rows waiting
   * behind a slow write stay counted in the queue.
   */
  #schedule(withHeld: boolean): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (withHeld) {
      clearTimeout(this.#retryTimer);
      this.#retryTimer = undefined;
      this.#nextTakesHeld = true;
    }
    this.#next ??= this.#writing.then(() => {
      const takesHeld = this.#nextTakesHeld;
      this.#next = undefined;
      this.#nextTakesHeld = false;
      return this.#round(takesHeld);
    });
    this.#writing = this.#next;
    return this.#next;
  }

  async #round(withHeld: boolean): Promise<void> {
    if (this.#overflowed > 0) {
      this.#logger.error({ rows: this.#overflowed, cap: MAX_HELD_ROWS }, 'request log rows dropped: too many rows were waiting for the store');
      this.#overflowed = 0;
    }
    if (this.#leftOut > 0) {
      this.#logger.warn(
        { rows: this.#leftOut, capCharacters: MAX_HELD_TEXT },
        'request log rows kept without their output: the rows waiting for the store held as much output as they may',
      );
      this.#leftOut = 0;
    }
    const rows: PendingRow[] = withHeld ? this.#takeHeld() : [];
    for (const record of this.#queue) rows.push({ record, refusals: 0 });
    this.#queue = [];
    // A row the store refused before goes alone, so that it costs no other row a second try.
    const batches: PendingRow[][] = rows.filter((row) => row.refusals > 0).map((row) => [row]);
    const fresh = rows.filter((row) => row.refusals === 0);
    for (let start = 0; start < fresh.length; start += MAX_BATCH) batches.push(fresh.slice(start, start + MAX_BATCH));
    this.#writingRows = rows.length;
    for (const [index, batch] of batches.entries()) {
      if ((await this.#write(batch)) === 'unavailable') {
        this.#hold(batches.slice(index + 1).flat());
        break;
      }
    }
    if (this.#held.length > 0 && !this.#retryTimer) {
      this.#retryTimer = setTimeout(() => void this.#schedule(true), RETRY_INTERVAL_MS);
      this.#retryTimer.unref();
    }
  }

  async #write(batch: readonly PendingRow[]): Promise<WriteOutcome> {
    try {
      await this.#store.recordRequests(batch.map((row) => row.record));
      this.#writingRows -= batch.length;
      for (const row of batch) this.#heldText -= heldText(row.record);
      if (this.#storeAway) this.#logger.info({ held: this.#held.length }, 'request log writes resumed');
      this.#storeAway = false;
      return 'done';
    } catch (error) {
      if (isStoreUnavailable(error)) {
        this.#failed('unavailable');
        if (!this.#storeAway)
          this.#logger.error({ err: error, rows: batch.length }, 'request log write failed: the store is unavailable; rows are held for another try');
        this.#storeAway = true;
        this.#hold(batch);
        return 'unavailable';
      }
      this.#failed('refused');
      if (batch.length === 1) {
        this.#refused(batch[0], error);
        return 'done';
      }
      this.#logger.warn({ err: error, rows: batch.length }, 'request log batch refused; writing its rows one by one');
      for (const [index, row] of batch.entries()) {
        if ((await this.#write([row])) === 'unavailable') {
          this.#hold(batch.slice(index + 1));
          return 'unavailable';
        }
      }
      return 'done';
    }
  }

  #refused(row: PendingRow, error: unknown): void {
    const refusals = row.refusals + 1;
    const details = { err: error, requestId: row.record.id, refusals };
    if (refusals < MAX_ROW_ATTEMPTS) {
      this.#logger.warn(details, 'request log row refused by the store; it will be tried again');
      this.#hold([{ record: row.record, refusals }]);
      return;
    }
    this.#writingRows -= 1;
    this.#heldText -= heldText(row.record);
    this.#dropped('refused');
    this.#logger.error(details, 'request log row dropped: the store refused it on every try');
  }

  #failed(reason: WriteFailure): void {
    this.#metrics.failedWrites.inc({ reason });
  }

  #dropped(reason: DropReason): void {
    this.#metrics.droppedRows.inc({ reason });
  }

  #hold(rows: readonly PendingRow[]): void {
    for (const row of rows) this.#held.push(row);
    this.#writingRows -= rows.length;
    this.#metrics.heldRows.inc(rows.length);
  }

  #takeHeld(): PendingRow[] {
    const rows = this.#held;
    this.#held = [];
    this.#metrics.heldRows.dec(rows.length);
    return rows;
  }
}
