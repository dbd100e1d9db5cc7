/**
 * The metered-call core (docs/architecture.md): resolve → validate → quote and hold credit →
 * attempts with routing and fallback → settle → record the request log row and stored output, for
 * any kind of output. A kind (pipeline/kinds/) supplies its request, result and meter types and how
 * to check, quote and cost them; a dialect decodes its body, hands the canonical request here, and
 * renders what comes back. Neither sees prices, routes or the ledger.
 *
 * Credit: the worst-case quote is held before the first upstream call and settled with the real
 * cost after it (the settlement is awaited, so the cost header, a stream's usage `cost` and the
 * ledger charge are one number); any failure releases the whole hold.
 *
 * Work that outlives its HTTP request: `prepare` validates, quotes and holds in the request;
 * `toRecord` turns the prepared call into plain data that a job stores; a worker in any process
 * `resume`s it and completes it with `completePrepared` (see ./prepared-record.ts).
 */
import type { FastifyBaseLogger } from 'fastify';
import { performance } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import { holdCredit, reservationTtlMs, type CreditHold } from '../billing/credit.ts';
import { cacheReadSavings } from '../billing/cost.ts';
import { worstCaseQuote } from '../billing/quote.ts';
import type { Catalog, RouteEndpoint } from '../catalog/types.ts';
import type { GatewayConfig } from '../config/schema.ts';
import { errors, type GatewayError } from '../core/errors.ts';
import { JsonText } from '../core/json-text.ts';
import { applyRate, type Picos } from '../core/money.ts';
import { RejectedParameter, type ParamNamer } from '../policy/violation.ts';
import { protocolOf, type ProtocolRegistry } from '../protocols/capability.ts';
import { PROTOCOLS } from '../protocols/registry.ts';
import { asGatewayError } from '../routing/fallback.ts';
import type { HoldOwner, LedgerStore, RequestLogRecord, RequestLogStore, RequestStatus } from '../storage/store.ts';
import { completeWithFallback, type AttemptContext } from './attempts.ts';
import type { CallableKindTypes, KindTypes, LoggedUsage, MeteredRequest, OutputKind } from './kind.ts';
import type { Usage } from '../canonical/index.ts';
import type { CounterCheck } from '../limits/backend.ts';
import type { Limiter } from '../limits/limiter.ts';
import { spendCapsOf, spendLimitError } from '../limits/spend.ts';
import { beyondHold, overHoldCounter, type OverHoldCounter } from './over-hold.ts';
import { RequestLogWriter, requestLogRecord } from './request-log.ts';
import { selectRoutes, violationError } from './select.ts';
import type { EndpointHealth } from '../routing/endpoint-health.ts';
import type { CallInput, CompletedCall, Payer, RenderResult, ServedCall, Settlement } from './types.ts';
import type { CallTrace, Tracing } from '../telemetry/tracing.ts';

/** What the core needs of the application; the server's dependencies satisfy it. */
export interface PipelineDeps {
  readonly config: GatewayConfig;
  readonly store: LedgerStore & RequestLogStore;
  readonly catalog: Catalog;
  readonly logger: FastifyBaseLogger;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly now: () => number;
  /** Where the request log writer counts its failed and dropped rows. */
  readonly metrics: Registry;
  /** Tokens per minute of keys (docs/limits.md); none counted when absent. */
  readonly limiter?: Limiter;
  /** Endpoint breakers and observed figures (routing/endpoint-health.ts); plans run as selected when absent. */
  readonly health?: EndpointHealth;
  /** Aborted, with the GatewayError to end them with, when a stopping server cuts its remaining streams. */
  readonly streamsCut?: AbortSignal;
  /** Told every request log row as it is recorded (the access log line of its request, http/access-log.ts). */
  readonly onRecord?: (record: RequestLogRecord) => void;
  /** Spans of job runs (a request's own span comes with its input); undefined when tracing is off. */
  readonly tracing?: Tracing;
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
  /** Aborted when the client goes away (or the job is cancelled). */
  readonly signal: AbortSignal;
  readonly createdAt: number;
  /** performance.now() at arrival (or when a job resumed the call), for durations. */
  readonly startedAt: number;
  /** The model that was selected; null when selection failed. */
  readonly modelId: string | null;
  /** The span of the request (or of the job's run), when tracing is on. */
  readonly trace?: CallTrace;
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

/**
 * Lets work that outlives its request (a job) decide, between pricing and charging, whether the
 * answer may still be charged: a cancelled job must not be. See `completePrepared`.
 */
export interface ChargeGate<Body> {
  /**
   * Called with the rendered answer and the cost about to be charged, before any charge. False
   * when the work may no longer be charged (it was cancelled or taken over): then nothing is.
   */
  admit(body: Body, cost: Picos): Promise<boolean>;
  /** Called when less than the cost could be charged (the balance ran short), with the answer rendered again. */
  amend(body: Body): Promise<void>;
}

/** Facts of a finished request that differ between outcomes. */
export interface Outcome {
  readonly status: RequestStatus;
  readonly httpStatus: number;
  readonly endpoint?: RouteEndpoint;
  readonly logged?: LoggedUsage;
  readonly cost?: Picos;
  /** What the upstream reported beyond the hold, not charged. */
  readonly overHold?: Picos;
  readonly errorCode?: string | null;
  readonly output?: unknown;
  /** Blob keys of the request's stored files (docs/outputs.md). */
  readonly blobKeys?: readonly string[];
  readonly firstByteMs?: number | null;
}

export class Pipeline {
  readonly #deps: PipelineDeps;
  readonly #protocols: ProtocolRegistry;
  readonly #log: RequestLogWriter;
  readonly #countOverHold: OverHoldCounter;
  readonly #reservationTtlMs: number;
  /** Failures this pipeline already wrote a row for (see http/request-recording.ts). */
  readonly #recordedFailures = new WeakSet<GatewayError>();

  constructor(deps: PipelineDeps, options: PipelineOptions = {}) {
    this.#deps = deps;
    this.#protocols = options.protocols ?? PROTOCOLS;
    this.#log = new RequestLogWriter(deps.store, deps.logger, deps.metrics);
    this.#countOverHold = overHoldCounter(deps.metrics);
    this.#reservationTtlMs = reservationTtlMs(deps.config);
  }

  get logger(): FastifyBaseLogger {
    return this.#deps.logger;
  }

  /** See PipelineDeps.tracing. */
  get tracing(): Tracing | undefined {
    return this.#deps.tracing;
  }

  /** See PipelineDeps.streamsCut. */
  get streamsCut(): AbortSignal | undefined {
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
    return this.completePrepared(await this.prepare(kind, input), render);
  }

  /** Resolve, validate, quote and hold; every failure here happens before any credit moves. */
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
      return { ...input, payer, createdAt, startedAt, kind, modelId, attempts: selection.attempts, hold, estimate, tokenChecks };
    } catch (error) {
      const failure = asGatewayError(error);
      this.record({ ...input, payer, createdAt, startedAt, modelId }, { status: 'failed', httpStatus: failure.status, errorCode: failure.code });
      throw this.#recorded(failure);
    }
  }

  /**
   * Tries the plan's routes, meters, charges, renders and records. With a gate (a job), the answer
   * is rendered with its cost and admitted by the gate before the charge, so that a job is charged
   * only once its end is recorded, and never after it was cancelled. `recorded`: what the request
   * log keeps of the answer when not the answer itself (images keep their files, not their base64).
   */
  async completePrepared<T extends CallableKindTypes, Body>(
    prepared: PreparedCall<T>,
    render: RenderResult<T, Body>,
    gate?: ChargeGate<Body>,
    recorded?: (body: Body) => unknown,
  ): Promise<CompletedCall<T, Body>> {
    const { kind, request } = prepared;
    let endpoint: RouteEndpoint | undefined;
    prepared.trace?.expectRecord();
    try {
      const attempt = await completeWithFallback(this.attemptContext(prepared, prepared.signal), (route, context) =>
        this.protocolFor(prepared, route).complete(request, route, context),
      );
      endpoint = attempt.endpoint;
      const meter = kind.meter(request, attempt.result, endpoint);
      const call = this.servedCall(prepared, endpoint);
      const cost = this.price(prepared, endpoint, meter);
      let body: Body;
      let settlement: Settlement<T['meter']>;
      if (gate) {
        const expected = this.expected(prepared, meter, cost);
        body = render(attempt.result, call, expected);
        if (!(await gate.admit(body, expected.charged))) throw errors.workEnded();
        settlement = await this.settle(prepared, meter, cost);
        if (settlement.charged !== expected.charged) {
          body = render(attempt.result, call, settlement);
          await gate.amend(body);
        }
      } else {
        // A client gone before its answer is charged nothing: it received none (docs/billing.md,
        // "Money caps"). The answer arrived all the same, so the check is here, not only in the upstream call.
        if (prepared.signal.aborted) throw errors.upstreamCancelled(prepared.signal.reason);
        settlement = await this.settle(prepared, meter, cost);
        body = render(attempt.result, call, settlement);
      }
      const json = JsonText.of(body);
      const output = recorded ? recorded(body) : json;
      this.record(prepared, { status: 'completed', httpStatus: 200, endpoint, ...this.settled(prepared, settlement), output });
      return { body, json: json.text, call, settlement };
    } catch (error) {
      throw await this.fail(prepared, error, endpoint);
    }
  }

  /** A call that produced nothing for the client: the whole hold goes back. */
  async fail<T extends KindTypes>(prepared: PreparedCall<T>, error: unknown, endpoint?: RouteEndpoint): Promise<GatewayError> {
    await prepared.hold.release();
    const failure = this.failure(prepared, error);
    const cancelled = prepared.signal.aborted;
    this.record(prepared, {
      status: cancelled ? 'cancelled' : 'failed',
      // 499: the client closed the connection before the answer (nothing was charged).
      httpStatus: cancelled ? 499 : failure.status,
      endpoint,
      errorCode: failure.code,
    });
    return this.#recorded(failure);
  }

  /** The cost of a meter on the route that served it, at the payer's rate. */
  price<T extends KindTypes>(prepared: PreparedCall<T>, endpoint: RouteEndpoint, meter: T['meter']): Picos {
    return applyRate(prepared.kind.cost(endpoint.prices, meter), prepared.payer.rate);
  }

  /**
   * What settling `cost` will charge when the ledger agrees: the cost, capped at the hold
   * (docs/billing.md, "Money caps"). Work that renders its answer before the charge (a job) renders
   * this.
   */
  expected<T extends KindTypes>(prepared: PreparedCall<T>, meter: T['meter'], cost: Picos): Settlement<T['meter']> {
    const overHold = beyondHold(cost, prepared.hold.reservation.amount);
    return { ...meter, charged: cost - overHold, overHold };
  }

  /** Turns the hold into a charge of `cost` (see `price`), never more than the hold. */
  async settle<T extends KindTypes>(prepared: PreparedCall<T>, meter: T['meter'], cost: Picos): Promise<Settlement<T['meter']>> {
    const expected = this.expected(prepared, meter, cost);
    const charged = await prepared.hold.settle(cost);
    if (prepared.tokenChecks) this.#deps.limiter?.countTokens(prepared.tokenChecks, tokensOf(prepared.kind.logged(meter).usage));
    if (expected.overHold > 0n) {
      this.#deps.logger.warn(
        { requestId: prepared.requestId, cost: String(cost), held: String(prepared.hold.reservation.amount), charged: String(charged) },
        'the upstream reported more than the hold: the excess is not charged',
      );
    } else if (charged !== cost) {
      this.#deps.logger.warn(
        { requestId: prepared.requestId, cost: String(cost), charged: String(charged) },
        'charge capped by the balance or an expired reservation',
      );
    }
    return { ...expected, charged };
  }

  /** The outcome fields of a settled call. */
  settled<T extends KindTypes>(prepared: PreparedCall<T>, settlement: Settlement<T['meter']>): Pick<Outcome, 'logged' | 'cost' | 'overHold'> {
    return { logged: prepared.kind.logged(settlement), cost: settlement.charged, overHold: settlement.overHold };
  }

  /** Queues the request log row of a finished request. */
  record<Request extends MeteredRequest>(scope: RequestScope<Request>, outcome: Outcome): void {
    if (outcome.endpoint && outcome.overHold) this.#countOverHold(outcome.endpoint, outcome.overHold);
    const record = requestLogRecord({
      requestId: scope.requestId,
      owner: scope.payer.owner,
      keyId: scope.payer.keyId,
      route: scope.route,
      stream: scope.request.stream,
      createdAt: scope.createdAt,
      durationMs: performance.now() - scope.startedAt,
      firstByteMs: outcome.firstByteMs,
      modelId: scope.modelId,
      endpoint: outcome.endpoint,
      status: outcome.status,
      httpStatus: outcome.httpStatus,
      usage: outcome.logged?.usage,
      providerUsage: outcome.logged?.providerUsage,
      searchUnits: outcome.logged?.searchUnits,
      images: outcome.logged?.images,
      videoSeconds: outcome.logged?.videoSeconds,
      cacheSavings: outcome.logged && outcome.endpoint ? cacheReadSavings(outcome.endpoint.prices, outcome.logged.usage, scope.payer.rate) : 0n,
      cost: outcome.cost,
      overHold: outcome.overHold,
      errorCode: outcome.errorCode,
      output: scope.request.store === false ? undefined : outcome.output,
      blobKeys: outcome.blobKeys,
    });
    this.#deps.onRecord?.(record);
    scope.trace?.recorded(record);
    this.#log.add(record);
  }

  /** Queues a row of a request answered without a metered call (refused early, or replayed). */
  recordRow(record: RequestLogRecord): void {
    this.#log.add(record);
  }

  /** Whether this failure already has its request log row (so the route does not write a second). */
  hasRecorded(failure: GatewayError): boolean {
    return this.#recordedFailures.has(failure);
  }

  /** Writes the queued request log rows (tests; shutdown). */
  flush(): Promise<void> {
    return this.#log.flush();
  }

  close(): Promise<void> {
    return this.#log.flush();
  }

  attemptContext<T extends KindTypes>(prepared: PreparedCall<T>, signal: AbortSignal): AttemptContext {
    return {
      attempts: prepared.attempts,
      env: this.#deps.env,
      requestId: prepared.requestId,
      signal,
      logger: this.#deps.logger,
      health: this.#deps.health,
      trace: prepared.trace && { call: prepared.trace, capability: prepared.kind.capability.name },
    };
  }

  /** The protocol of a route of the plan (selection only keeps routes whose protocol exists). */
  protocolFor<T extends KindTypes>(prepared: PreparedCall<T>, endpoint: RouteEndpoint): T['protocol'] {
    return protocolOf(this.#protocols, endpoint.provider.kind, prepared.kind.capability)!;
  }

  servedCall<T extends KindTypes>(prepared: PreparedCall<T>, endpoint: RouteEndpoint): ServedCall<T['request']> {
    return { requestId: prepared.requestId, request: prepared.request, modelId: prepared.modelId, endpoint, createdAt: prepared.createdAt };
  }

  /** A failure as the client is told it: a protocol's rejection names the parameter in the dialect's terms. */
  failure<Request extends MeteredRequest>(scope: RequestScope<Request>, error: unknown): GatewayError {
    return error instanceof RejectedParameter ? violationError(error.violation, scope.names) : asGatewayError(error);
  }

  #recorded(failure: GatewayError): GatewayError {
    this.#recordedFailures.add(failure);
    return failure;
  }
}

/** Every token of a call counts against tokens per minute: input (cached or not) and output. */
function tokensOf(usage: Usage): number {
  return usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens + usage.outputTokens;
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
