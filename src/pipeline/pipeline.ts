/**
 * The dialect-independent request pipeline (docs/architecture.md): resolve → validate →
 * quote/reserve → route → call → settle → log. A dialect decodes its body, hands the canonical
 * request here, and renders what comes back; it never sees prices, routes or the ledger.
 *
 * Credit: the worst-case quote is reserved before the first upstream call and settled with the
 * real cost after it (the settlement is awaited, so the cost header, the stream's usage `cost` and
 * the ledger charge are one number); any failure releases the whole reservation.
 */
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, onErrorHookHandler } from 'fastify';
import { performance } from 'node:perf_hooks';
import type { AuthContext } from '../auth/context.ts';
import type { CanonicalResult, Usage, WebSearchInfo } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import { GatewayError } from '../core/errors.ts';
import { JsonText } from '../core/json-text.ts';
import { holdCredit, reservationTtlMs, type CreditHold } from '../billing/credit.ts';
import { costOfCall } from '../billing/cost.ts';
import { PromptSize } from '../billing/estimate.ts';
import { quoteRequest } from '../billing/quote.ts';
import { searchUnits } from '../billing/search-units.ts';
import { CHAT_PROTOCOLS, type ChatProtocolRegistry } from '../protocols/registry.ts';
import { asGatewayError } from '../routing/fallback.ts';
import type { AppDeps } from '../server/deps.ts';
import { toGatewayError } from '../server/error-handling.ts';
import type { RequestStatus } from '../storage/store.ts';
import { completeWithFallback, openStreamWithFallback, upstreamErrorFinish, type AttemptContext } from './attempts.ts';
import { RequestLogWriter, requestLogRecord } from './request-log.ts';
import { selectRoutes, type Selection } from './select.ts';
import { PipelineStream } from './stream-run.ts';
import type { CompletedCall, PipelineInput, RenderResult, ServedCall, Settlement, StreamRun } from './types.ts';

export interface PipelineOptions {
  /** Upstream protocols by provider kind; tests substitute their own. */
  readonly protocols?: ChatProtocolRegistry;
}

/** What every request log row knows about its request, whatever became of it. */
export interface RequestContext {
  readonly input: PipelineInput;
  readonly createdAt: number;
  /** performance.now() at arrival, for durations. */
  readonly startedAt: number;
  /** The model that was selected; null when selection failed. */
  readonly modelId: string | null;
}

/** A request that passed validation and holds its credit. */
export interface PreparedRequest extends RequestContext {
  readonly modelId: string;
  readonly selection: Selection;
  readonly hold: CreditHold;
  readonly prompt: PromptSize;
}

/** Facts of a finished request that differ between outcomes (see RequestFacts). */
export interface Outcome {
  readonly status: RequestStatus;
  readonly httpStatus: number;
  readonly endpoint?: RouteEndpoint;
  readonly settlement?: Settlement;
  readonly errorCode?: string | null;
  readonly output?: unknown;
  readonly firstByteMs?: number | null;
}

export class Pipeline {
  private readonly deps: AppDeps;
  private readonly protocols: ChatProtocolRegistry;
  private readonly log: RequestLogWriter;
  /** Failures this pipeline already wrote a row for; see rejectionRecorder. */
  private readonly recordedFailures = new WeakSet<GatewayError>();

  constructor(deps: AppDeps, options: PipelineOptions = {}) {
    this.deps = deps;
    this.protocols = options.protocols ?? CHAT_PROTOCOLS;
    this.log = new RequestLogWriter(deps.store, deps.logger, deps.metrics);
  }

  get logger(): FastifyBaseLogger {
    return this.deps.logger;
  }

  /** A non-streaming call: the rendered body with what was charged. */
  async complete<T>(input: PipelineInput, render: RenderResult<T>): Promise<CompletedCall<T>> {
    return this.completePrepared(await this.prepare(input), render);
  }

  /**
   * A streaming call, started: throws (nothing sent yet, the dialect answers with a normal error)
   * until a route produced its first event; after that, failures arrive as the terminal event.
   */
  async stream<T>(input: PipelineInput, render: RenderResult<T>): Promise<StreamRun> {
    return this.streamPrepared(await this.prepare(input), render);
  }

  /**
   * Resolve, validate, quote and reserve; every failure here happens before any credit moves.
   * Public for callers that answer before calling upstream (a queued background response holds
   * its credit at submission and runs later with completePrepared).
   */
  async prepare(input: PipelineInput): Promise<PreparedRequest> {
    const createdAt = this.deps.now();
    const startedAt = performance.now();
    const prompt = new PromptSize(input.request);
    let selection: Selection | undefined;
    try {
      selection = selectRoutes({
        request: input.request,
        names: input.names,
        auth: input.auth,
        catalog: this.deps.catalog,
        protocols: this.protocols,
        prompt,
      });
      const hold = await holdCredit(this.deps.store, {
        owner: input.auth.owner,
        amount: quoteRequest(input.request, selection.attempts, prompt.forQuote, input.auth.rate),
        requestId: input.requestId,
        now: createdAt,
        ttlMs: reservationTtlMs(this.deps.config),
      });
      return { input, createdAt, startedAt, modelId: selection.modelId, selection, hold, prompt };
    } catch (error) {
      const failure = asGatewayError(error);
      const modelId = selection?.modelId ?? null;
      this.record({ input, createdAt, startedAt, modelId }, { status: 'failed', httpStatus: failure.status, errorCode: failure.code });
      throw this.recorded(failure);
    }
  }

  async completePrepared<T>(prepared: PreparedRequest, render: RenderResult<T>): Promise<CompletedCall<T>> {
    let endpoint: RouteEndpoint | undefined;
    try {
      const attempt = await completeWithFallback(this.attemptContext(prepared, prepared.input.signal));
      endpoint = attempt.endpoint;
      const result = failOnErrorFinish(attempt.result);
      const call = this.servedCall(prepared, endpoint);
      const settlement = await this.settle(prepared, endpoint, result.usage, result.webSearch, true);
      const body = render(result, call, settlement);
      const json = JsonText.of(body);
      this.record(prepared, { status: 'completed', httpStatus: 200, endpoint, settlement, output: json });
      return { body, json: json.text, call, settlement };
    } catch (error) {
      throw await this.fail(prepared, error, endpoint);
    }
  }

  async streamPrepared<T>(prepared: PreparedRequest, render: RenderResult<T>): Promise<StreamRun> {
    // The run aborts the upstream itself when its consumer stops early, not only on disconnect.
    // Not AbortSignal.any: a composite signal with an abort listener is held by the runtime until
    // it aborts, and with it the whole finished stream (one leak per streamed request).
    const upstream = new AbortController();
    const client = prepared.input.signal;
    if (client.aborted) upstream.abort(client.reason);
    else client.addEventListener('abort', () => upstream.abort(client.reason), { once: true });
    const signal = upstream.signal;
    try {
      const opened = await openStreamWithFallback(this.attemptContext(prepared, signal));
      return new PipelineStream({
        pipeline: this,
        prepared,
        opened,
        call: this.servedCall(prepared, opened.endpoint),
        render,
        signal,
        abortUpstream: () => upstream.abort(),
      });
    } catch (error) {
      throw await this.fail(prepared, error);
    }
  }

  /** A call that produced nothing for the client: the whole reservation goes back. */
  private async fail(prepared: PreparedRequest, error: unknown, endpoint?: RouteEndpoint): Promise<GatewayError> {
    await prepared.hold.release();
    const failure = asGatewayError(error);
    const cancelled = prepared.input.signal.aborted;
    this.record(prepared, {
      status: cancelled ? 'cancelled' : 'failed',
      // 499: the client closed the connection before the answer (nothing was charged).
      httpStatus: cancelled ? 499 : failure.status,
      endpoint,
      errorCode: failure.code,
    });
    return this.recorded(failure);
  }

  private recorded(failure: GatewayError): GatewayError {
    this.recordedFailures.add(failure);
    return failure;
  }

  /**
   * A route's onError hook that gives a request log row to an authenticated request refused before
   * the pipeline saw it (the body schema, the dialect's decoding, an Idempotency-Key conflict), so
   * that every request a key made is in its history. Unauthenticated requests have no owner to
   * file them under; failures the pipeline recorded itself are not recorded twice.
   */
  rejectionRecorder(route: string): onErrorHookHandler {
    return (request, reply, error, done) => {
      if (!(error instanceof GatewayError && this.recordedFailures.has(error))) {
        // The error handler has not set the reply's status yet; the envelope's error has it.
        const answered = toGatewayError(error, request);
        this.recordAnswered(request, reply, route, { status: 'failed', httpStatus: answered.status, errorCode: answered.code });
      }
      done();
    };
  }

  /**
   * The row of a request answered without the pipeline (refused early, or replayed from an
   * Idempotency-Key): no model, no route, no usage, no cost. Requests without an API key have no
   * owner and leave none.
   */
  recordAnswered(request: FastifyRequest, reply: FastifyReply, route: string, outcome: Pick<Outcome, 'status' | 'httpStatus' | 'errorCode' | 'output'>): void {
    const auth = request.auth as AuthContext | null;
    if (auth === null) return;
    const body = request.body as { stream?: unknown } | null | undefined;
    this.log.add(
      requestLogRecord({
        requestId: request.gatewayRequestId,
        owner: auth.owner,
        keyId: auth.key.id,
        route,
        stream: typeof body === 'object' && body !== null && body.stream === true,
        createdAt: this.deps.now() - Math.round(reply.elapsedTime),
        durationMs: reply.elapsedTime,
        ...outcome,
      }),
    );
  }

  /** Prices the usage on the route that served it and turns the reservation into a charge. */
  async settle(
    prepared: PreparedRequest,
    endpoint: RouteEndpoint,
    usage: Usage,
    webSearch: WebSearchInfo | undefined,
    succeeded: boolean,
  ): Promise<Settlement> {
    const units = searchUnits(endpoint.prices, prepared.input.request.webSearch === true, webSearch, succeeded);
    const cost = costOfCall(endpoint.prices, usage, units, prepared.input.auth.rate);
    const charged = await prepared.hold.settle(cost);
    if (charged !== cost) {
      this.deps.logger.warn({ requestId: prepared.input.requestId, cost: String(cost), charged: String(charged) }, 'charge capped by the balance or an expired reservation');
    }
    return { usage, searchUnits: units, charged };
  }

  /** Queues the request log row of a finished request. */
  record(context: RequestContext, outcome: Outcome): void {
    const { input } = context;
    this.log.add(
      requestLogRecord({
        requestId: input.requestId,
        owner: input.auth.owner,
        keyId: input.auth.key.id,
        route: input.route,
        stream: input.request.stream,
        createdAt: context.createdAt,
        durationMs: performance.now() - context.startedAt,
        firstByteMs: outcome.firstByteMs,
        modelId: context.modelId,
        endpoint: outcome.endpoint,
        status: outcome.status,
        httpStatus: outcome.httpStatus,
        usage: outcome.settlement?.usage,
        searchUnits: outcome.settlement?.searchUnits,
        cost: outcome.settlement?.charged,
        errorCode: outcome.errorCode,
        output: outcome.output,
      }),
    );
  }

  /** Writes the queued request log rows (tests; shutdown). */
  flush(): Promise<void> {
    return this.log.flush();
  }

  close(): Promise<void> {
    return this.log.flush();
  }

  private attemptContext(prepared: PreparedRequest, signal: AbortSignal): AttemptContext {
    return {
      request: prepared.input.request,
      attempts: prepared.selection.attempts,
      protocols: this.protocols,
      env: this.deps.env,
      requestId: prepared.input.requestId,
      signal,
      logger: this.deps.logger,
    };
  }

  private servedCall(prepared: PreparedRequest, endpoint: RouteEndpoint): ServedCall {
    return {
      requestId: prepared.input.requestId,
      request: prepared.input.request,
      modelId: prepared.selection.modelId,
      endpoint,
      createdAt: prepared.createdAt,
    };
  }
}

function failOnErrorFinish(result: CanonicalResult): CanonicalResult {
  if (result.finish.reason === 'error') throw upstreamErrorFinish(result.finish.raw);
  return result;
}

const pipelines = new WeakMap<AppDeps, Pipeline>();

/**
 * The pipeline of an app: one per set of dependencies, shared by every dialect's routes so that
 * they share one request-log writer.
 */
export function pipelineFor(deps: AppDeps): Pipeline {
  let pipeline = pipelines.get(deps);
  if (!pipeline) {
    pipeline = new Pipeline(deps);
    pipelines.set(deps, pipeline);
  }
  return pipeline;
}
