/**
 * One request log row per request, written in batches: rows are queued and flushed together on a
 * short timer (one transaction instead of one commit per request; see docs/performance.md) and at
 * shutdown. A row is not money — the ledger is written synchronously elsewhere — so a failed
 * write is logged and dropped rather than failing the request.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Usage } from '../canonical/index.ts';
import { ZERO_USAGE } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import type { Picos } from '../core/money.ts';
import type { OwnerRef, RequestLogRecord, RequestLogStore, RequestStatus } from '../storage/store.ts';

/** Request history is kept for 24 hours (spec: Limits). */
export const REQUEST_LOG_LIFETIME_MS = 24 * 60 * 60 * 1000;
const FLUSH_INTERVAL_MS = 5;
const MAX_BATCH = 500;

/** What a row records; what a request never reached (a model, a route, usage, a cost) may be left out. */
export interface RequestFacts {
  readonly requestId: string;
  readonly owner: OwnerRef;
  readonly keyId: string;
  readonly route: string;
  readonly stream: boolean;
  readonly createdAt: number;
  readonly durationMs: number;
  readonly firstByteMs?: number | null;
  readonly modelId?: string | null;
  readonly endpoint?: RouteEndpoint;
  readonly status: RequestStatus;
  readonly httpStatus: number;
  readonly usage?: Usage;
  readonly searchUnits?: number;
  readonly cost?: Picos;
  readonly errorCode?: string | null;
  readonly output?: unknown;
}

export function requestLogRecord(facts: RequestFacts): RequestLogRecord {
  const usage = facts.usage ?? ZERO_USAGE;
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
    outputTokens: usage.outputTokens,
    reasoningTokens: usage.reasoningTokens,
    searchUnits: facts.searchUnits ?? 0,
    cost: facts.cost ?? 0n,
    errorCode: facts.errorCode ?? null,
    createdAt: facts.createdAt,
    durationMs: Math.round(facts.durationMs),
    firstByteMs: facts.firstByteMs == null ? null : Math.round(facts.firstByteMs),
    output: facts.output ?? null,
    blobKeys: [],
    expiresAt: facts.createdAt + REQUEST_LOG_LIFETIME_MS,
  };
}

export class RequestLogWriter {
  private queue: RequestLogRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly store: RequestLogStore;
  private readonly logger: FastifyBaseLogger;

  constructor(store: RequestLogStore, logger: FastifyBaseLogger) {
    this.store = store;
    this.logger = logger;
  }

  add(record: RequestLogRecord): void {
    this.queue.push(record);
    if (this.queue.length >= MAX_BATCH) {
      void this.flush();
    } else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS);
      this.timer.unref();
    }
  }

  /** Writes everything queued so far; resolves once it is readable from the store. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.queue;
    this.queue = [];
    // Batches are written one after another so that a flush also waits for earlier ones.
    this.writing = this.writing.then(() => (batch.length ? this.write(batch) : undefined));
    return this.writing;
  }

  private async write(batch: RequestLogRecord[]): Promise<void> {
    try {
      await this.store.recordRequests(batch);
    } catch (error) {
      this.logger.error({ err: error, rows: batch.length }, 'request log write failed; rows dropped');
    }
  }
}
