/**
 * The metered-call core (docs/architecture.md): resolve → validate → quote and hold credit, then a
 * metered call (./metered-call.ts) that owns the hold to its end: attempts with routing and
 * fallback → meter → admit → settle once (or release) → amend → record the request log row once,
 * for any kind of output. A kind (pipeline/kinds/) supplies its request, result and meter types and
 * how to check, quote and cost them; a dialect decodes its body, hands the canonical request here,
 * and renders what comes back. Neither sees prices, routes or the ledger.
 *
 * Credit: the worst-case quote is held before the first upstream call and settled with the real
 * cost after it (the settlement is awaited, so the cost header, a stream's usage `cost` and the
 * ledger charge are one number); any failure releases the whole hold.
 *
 * Work that outlives its HTTP request: `prepare` validates, quotes and holds in the request;
 * `preparedCallRecord` turns the prepared call into plain data that a job stores; a worker in any
 * process resumes it and completes it through a metered call of its own (see ./prepared-record.ts).
 */
import { performance } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import { holdCredit, reservationTtlMs, type CreditHold } from '../billing/credit.ts';
import { worstCaseQuote } from '../billing/quote.ts';
import type { Catalog, RouteEndpoint } from '../catalog/types.ts';
import type { GatewayConfig } from '../config/schema.ts';
import type { Logger } from '../core/logger.ts';
import type { GatewayError } from '../core/errors.ts';
import type { Link } from '../core/linked-list.ts';
import type { CounterCheck } from '../limits/backend.ts';
import type { Limiter } from '../limits/limiter.ts';
import { spendCapsOf, spendLimitError } from '../limits/spend.ts';
import type { ParamNamer } from '../policy/violation.ts';
import type { ProtocolRegistry } from '../protocols/capability.ts';
import type { StreamDecoding } from '../protocols/protocol.ts';
import { protocolsDecoding } from '../protocols/registry.ts';
import type { EndpointHealth } from '../routing/endpoint-health.ts';
import { asGatewayError } from '../routing/fallback.ts';
import type { HoldOwner, LedgerStore, RequestLogRecord, RequestLogStore } from '../storage/store.ts';
import type { CallableKindTypes, KindTypes, MeteredRequest, OutputKind } from './kind.ts';
import { MeteredCall, type CallServices, type ChargeGate } from './metered-call.ts';
import { overHoldCounter, type OverHoldCounter } from './over-hold.ts';
import { AttemptLog } from './attempt-log.ts';
import { RequestLogWriter, requestLogRecord, type RequestFacts } from './request-log.ts';
import { selectRoutes } from './select.ts';
import type { CallInput, CompletedCall, Payer, RenderResult } from './types.ts';
import type { CallTrace, Tracing } from '../telemetry/tracing.ts';

/** What a stream sees of a stopping server (http/drain.ts). */
export interface StreamsCut {
  /** A stream began: it is cut if the server cuts its remaining streams before it ended. */
  opened(stream: CuttableStream): Link<CuttableStream>;
  /** The stream of the link `opened` gave has ended (settled and logged). Idempotent. */
  ended(link: Link<CuttableStream>): void;
  /** The error the streams were cut with, once they were. */
  readonly cutWith: GatewayError | undefined;
}

/** A running stream, as a stopping server sees it. */
export interface CuttableStream {
  /** Ends the stream with `reason` (told in the stream), settled for what it delivered. */
  cut(reason: GatewayError): void;
}

/** What the core needs of the application; the server's dependencies satisfy it. */
export interface PipelineDeps {
  readonly config: GatewayConfig;
  readonly store: LedgerStore & RequestLogStore;
  readonly catalog: Catalog;
  readonly logger: Logger;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly now: () => number;
  /** Where the request log writer counts its failed and dropped rows. */
  readonly metrics: Registry;
  /** Tokens per minute of keys (docs/limits.md); none counted when absent. */
  readonly limiter?: Limiter;
  /** Endpoint breakers and observed figures (routing/endpoint-health.ts); plans run as selected when absent. */
  readonly health?: EndpointHealth;
  /** How a stopping server cuts its remaining streams, and learns when they have ended. */
  readonly streamsCut?: StreamsCut;
  /** Told every request log row as it is recorded (the access log line of its request, http/access-log.ts). */
  readonly onRecord?: (record: RequestLogRecord) => void;
  /** Spans of job runs (a request's own span comes with its input); undefined when tracing is off. */
  readonly tracing?: Tracing;
  /** How upstream streams' text deltas are read (GATEWAY_STREAM_DECODING); `templates` when absent. */
  readonly streamDecoding?: StreamDecoding;
}

export interface PipelineOptions {
  /** Upstream protocols by provider kind and capability; tests substitute their own. */
  readonly protocols?: ProtocolRegistry;
}

/** What every request log row knows about its request, whatever became of it. */
export interface RequestScope<Request extends MeteredRequest> {
  readonly requestId: string;
  /** The request log's route name. */
  readonly route: string;
  readonly request: Request;
  /** The dialect's names for canonical references, for a 400 that names the client's field. */
  readonly names: ParamNamer;
  readonly payer: Payer;
  /** Aborted when the client goes away (or the job is cancelled or handed back). */
  readonly signal: AbortSignal;
  /**
   * Whose signal it is: a client's (aborted, the client left and is charged nothing: 499) or a job's
   * (aborted, the job was cancelled or interrupted, and its end says so).
   */
  readonly signalOf: 'client' | 'job';
  readonly createdAt: number;
  /** performance.now() at arrival (or when a job resumed the call), for durations. */
  readonly startedAt: number;
  /** The model that was selected; null when selection failed. */
  readonly modelId: string | null;
  /** The span of the request (or of the job's run), when tracing is on. */
  readonly trace?: CallTrace;
  /** The upstream attempts made so far; absent before the routes were chosen. */
  readonly attemptLog?: AttemptLog;
}

/** A call that passed validation and holds its credit; its routes are fixed. */
export interface PreparedCall<T extends KindTypes> extends RequestScope<T['request']> {
  readonly kind: OutputKind<T>;
  readonly modelId: string;
  /** The routes to try, in order; never empty. */
  readonly attempts: readonly RouteEndpoint[];
  readonly hold: CreditHold;
  readonly estimate: T['estimate'];
  /** The key's tokens-per-minute counters the call's tokens are counted against at settlement. */
  readonly tokenChecks?: readonly CounterCheck[];
}

/** Whose hold a prepared call makes, and for how long; by default the instance's, for the reservation TTL. */
export interface HoldTerms {
  readonly holder: HoldOwner;
  readonly ttlMs: number;
}

export class Pipeline {
  readonly #deps: PipelineDeps;
  readonly #protocols: ProtocolRegistry;
  readonly #log: RequestLogWriter;
  readonly #countOverHold: OverHoldCounter;
  readonly #reservationTtlMs: number;
  readonly #services: CallServices;

  constructor(deps: PipelineDeps, options: PipelineOptions = {}) {
    this.#deps = deps;
    this.#protocols = options.protocols ?? protocolsDecoding(deps.streamDecoding ?? 'templates');
    this.#log = new RequestLogWriter(deps.store, deps.logger, deps.metrics);
    this.#countOverHold = overHoldCounter(deps.metrics);
    this.#reservationTtlMs = reservationTtlMs(deps.config);
    this.#services = {
      env: deps.env,
      logger: deps.logger,
      protocols: this.#protocols,
      limiter: deps.limiter,
      health: deps.health,
      record: (facts, trace) => this.recordRequest(facts, trace),
      flush: () => this.flush(),
    };
  }

  get logger(): Logger {
    return this.#deps.logger;
  }

  /** See PipelineDeps.tracing. */
  get tracing(): Tracing | undefined {
    return this.#deps.tracing;
  }

  /** See PipelineDeps.streamsCut. */
  get streamsCut(): StreamsCut | undefined {
    return this.#deps.streamsCut;
  }

  get catalog(): Catalog {
    return this.#deps.catalog;
  }

  get ledger(): LedgerStore {
    return this.#deps.store;
  }

  /** The application's clock (epoch ms). */
  now(): number {
    return this.#deps.now();
  }

  /** A call answered in one piece: the rendered body with what was charged. */
  async complete<T extends CallableKindTypes, Body>(
    kind: OutputKind<T>,
    input: CallInput<T['request']>,
    render: RenderResult<T, Body>,
  ): Promise<CompletedCall<T, Body>> {
    return this.meteredCall(await this.prepare(kind, input)).complete(render);
  }

  /** Resolve, validate, quote and hold; every failure here happens before any credit moves, and is recorded here. */
  async prepare<T extends KindTypes>(kind: OutputKind<T>, input: CallInput<T['request']>, terms?: HoldTerms): Promise<PreparedCall<T>> {
    const createdAt = this.#deps.now();
    const startedAt = performance.now();
    const { auth, request } = input;
    const payer: Payer = { owner: auth.owner, keyId: auth.key.id, rate: auth.rate };
    const estimate = kind.estimate(request);
    input.trace?.prepared(kind.capability.name, request.model);
    let modelId: string | null = null;
    try {
      const selection = selectRoutes({
        kind,
        request,
        estimate,
        names: input.names,
        auth,
        catalog: this.#deps.catalog,
        protocols: this.#protocols,
        observed: this.#deps.health,
      });
      modelId = selection.modelId;
      const limiter = this.#deps.limiter;
      const tokenChecks = limiter?.tokenChecksOf(auth);
      if (tokenChecks && kind.tokens && input.tokenLevels) limiter!.checkTokens(tokenChecks, input.tokenLevels, kind.tokens(request, estimate));
      const hold = await holdCredit(this.#deps.store, {
        owner: auth.owner,
        amount: worstCaseQuote(selection.attempts, (endpoint) => kind.quote(request, endpoint, estimate), auth.rate),
        requestId: input.requestId,
        now: createdAt,
        ttlMs: terms?.ttlMs ?? this.#reservationTtlMs,
        holder: terms?.holder,
        keyId: auth.key.id,
        caps: spendCapsOf(auth, createdAt),
        refuseCap: (cap) => spendLimitError(cap, createdAt),
      });
      const attemptLog = new AttemptLog(startedAt);
      return {
        ...input,
        signalOf: 'client',
        payer,
        createdAt,
        startedAt,
        kind,
        modelId,
        attempts: selection.attempts,
        hold,
        estimate,
        tokenChecks,
        attemptLog,
      };
    } catch (error) {
      const failure = asGatewayError(error);
      this.recordRequest(
        {
          requestId: input.requestId,
          owner: payer.owner,
          keyId: payer.keyId,
          route: input.route,
          stream: request.stream,
          createdAt,
          durationMs: performance.now() - startedAt,
          modelId,
          status: 'failed',
          httpStatus: failure.status,
          errorCode: failure.code,
        },
        input.trace,
      );
      throw failure;
    }
  }

  /**
   * The lifecycle object of a prepared call: it owns the hold and the request log row from here
   * to the end. `gate`: what admits the answer before the charge (a job's end; stored files).
   */
  meteredCall<T extends KindTypes, Body = never>(prepared: PreparedCall<T>, gate?: ChargeGate<Body>): MeteredCall<T> {
    return new MeteredCall(this.#services, prepared, gate as ChargeGate<never> | undefined);
  }

  /**
   * Queues the request log row of a finished request: the one place a row is built
   * (metered calls, requests refused before the core or replayed, jobs ended without their run).
   * `trace`: the call's span, told the row.
   */
  recordRequest(facts: RequestFacts, trace?: CallTrace): void {
    if (facts.endpoint && facts.overHold) this.#countOverHold(facts.endpoint, facts.overHold);
    const record = requestLogRecord(facts);
    this.#deps.onRecord?.(record);
    trace?.recorded(record);
    this.#log.add(record);
  }

  /** Writes the queued request log rows (tests; shutdown). */
  flush(): Promise<void> {
    return this.#log.flush();
  }

  close(): Promise<void> {
    return this.#log.flush();
  }
}

const pipelines = new WeakMap<PipelineDeps, Pipeline>();

/**
 * The pipeline of an app: one per set of dependencies, shared by every dialect's routes so that
 * they share one request-log writer.
 */
export function pipelineFor(deps: PipelineDeps): Pipeline {
  let pipeline = pipelines.get(deps);
  if (!pipeline) {
    pipeline = new Pipeline(deps);
    pipelines.set(deps, pipeline);
  }
  return pipeline;
}
