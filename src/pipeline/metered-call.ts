/**
 * The lifecycle of one metered call after its credit is held: the one owner of the hold and of the
 * request log row (docs/architecture.md, "The lifecycle of a metered call"). A driver runs the
 * upstream work — one protocol call with fallback (`complete` below), a stream (./text-stream.ts)
 * or an operation started and polled (./operation.ts, jobs/video-job.ts) — and hands what was
 * delivered here; the steps that follow run in one order, for every driver:
 *
 *   attempt(s) → meter → admit → settle once, or release → amend → record the row once
 *
 * - meter: the kind's meter of what was delivered, priced at the payer's rate, capped at the hold.
 * - admit: the call's gate, when it has one, agrees that the answer may be charged: a job records
 *   its end with the cost by compare-and-set (jobs/job-gate.ts); images and embeddings store their
 *   files. A gate that refuses means the work is no longer this worker's (cancelled, taken over):
 *   then it neither charges, releases nor records — whoever won does.
 * - settle (or release): the hold is finished, once.
 * - amend: an admitted answer is rendered again when the ledger charged less than it said.
 * - record: the request log row, once.
 *
 * Why this order. A job's end is recorded before its hold is finished, so that a worker that lost
 * the job never finishes a hold that is no longer its own, and so that a crash between the two
 * leaves an ended job whose recorded cost the runner's reconciliation settles (or releases) later.
 * A crash before the end leaves the job in progress: taken over, it is failed and released, or
 * resumed from its checkpoint. The row comes last, so that it never reports a charge the ledger
 * does not have. Each step is safe to repeat: a job's end is a compare-and-set, a hold settles or
 * releases once (the store refuses a second time: billing/credit.ts), and a row is keyed by its
 * request id (the store keeps the first).
 *
 * `GATEWAY_CRASH_AT` (test only, core/crash-point.ts) kills the process at a step boundary.
 */
import { performance } from 'node:perf_hooks';
import { cacheReadSavings } from '../billing/cost.ts';
import type { Usage } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import { errors, type GatewayError } from '../core/errors.ts';
import { JsonText } from '../core/json-text.ts';
import type { Logger } from '../core/logger.ts';
import { applyRate, type Picos } from '../core/money.ts';
import type { Limiter } from '../limits/limiter.ts';
import { RejectedParameter } from '../policy/violation.ts';
import { protocolOf, type ProtocolRegistry } from '../protocols/capability.ts';
import type { EndpointHealth } from '../routing/endpoint-health.ts';
import type { CallTrace } from '../telemetry/tracing.ts';
import { asGatewayError } from '../routing/fallback.ts';
import { completeWithFallback, type AttemptContext } from './attempts.ts';
import { crashArmedAt, crashPoint } from '../core/crash-point.ts';
import type { CallableKindTypes, KindTypes } from './kind.ts';
import { beyondHold } from './over-hold.ts';
import type { PreparedCall } from './pipeline.ts';
import { keptRequest, type RequestEnd, type RequestFacts } from './request-log.ts';
import { violationError } from './select.ts';
import type { CompletedCall, RenderResult, ServedCall, Settlement } from './types.ts';
import type { JsonPieces } from '../core/json-pieces.ts';

/** What every metered call needs of the pipeline that made it. */
export interface CallServices {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  readonly protocols: ProtocolRegistry;
  readonly limiter?: Limiter;
  readonly health?: EndpointHealth;
  /** Queues a request log row (Pipeline.recordRequest), telling the call's span when it is traced. */
  record(facts: RequestFacts, trace: CallTrace | undefined): void;
  /** Writes the queued rows (a crash point after the row waits for it). */
  flush(): Promise<void>;
}

/** A failure that ends the call: failed, or cancelled (by its client, or by the upstream). */
export interface FailedEnd {
  readonly status: 'failed' | 'cancelled';
  readonly error: GatewayError;
}

/**
 * Lets a call decide, between pricing and charging, whether its answer may still be charged, and
 * record how it ended: a job records its end (a cancelled job must not be charged); images store
 * their files first.
 */
export interface ChargeGate<Body> {
  /**
   * Called with the rendered answer and the cost about to be charged, before any charge. False
   * when the work may no longer be charged (it was cancelled or taken over): then nothing is.
   */
  admit(body: Body, cost: Picos): Promise<boolean>;
  /** Called when less than the cost could be charged (the balance ran short), with the answer rendered again. */
  amend(body: Body): Promise<void>;
  /**
   * Records a failed or cancelled end before the hold is released (a job's end). False when the
   * work had moved on: then this call neither releases nor records. Without it, a failure is
   * released and recorded at once.
   */
  refuse?(end: FailedEnd): Promise<boolean>;
}

/** What was delivered, metered and priced on the route that delivered it. */
export interface Metered<Meter> {
  readonly endpoint: RouteEndpoint;
  readonly meter: Meter;
  /** The cost of the meter at the payer's rate (possibly beyond the hold). */
  readonly cost: Picos;
  /** What settling will charge when the ledger agrees: the cost, capped at the hold. */
  readonly expected: Settlement<Meter>;
}

/** An answer charged (or about to be recorded as charged) with its settlement. */
export interface Charged<Meter, Body> {
  readonly body: Body;
  readonly settlement: Settlement<Meter>;
}

/** How the request log keeps an answer: the answer itself unless said otherwise, and its stored files. */
export interface Kept {
  readonly output: unknown;
  readonly blobKeys?: readonly string[];
}

export class MeteredCall<T extends KindTypes> {
  readonly prepared: PreparedCall<T>;
  readonly #services: CallServices;
  readonly #gate: ChargeGate<never> | undefined;
  #recorded = false;
  /** What was charged, once settled: from then on nothing may release the hold or record the call as uncharged. */
  #charged: { readonly endpoint: RouteEndpoint; readonly settlement: Settlement<T['meter']> } | undefined;

  constructor(services: CallServices, prepared: PreparedCall<T>, gate?: ChargeGate<never>) {
    this.#services = services;
    this.prepared = prepared;
    this.#gate = gate;
  }

  get logger(): Logger {
    return this.#services.logger;
  }

  /** The attempt plan's context (`signal`: the upstream call's, the client's by default). */
  attemptContext(signal: AbortSignal = this.prepared.signal, attempts = this.prepared.attempts): AttemptContext {
    const services = this.#services;
    const { prepared } = this;
    return {
      attempts,
      env: services.env,
      requestId: prepared.requestId,
      signal,
      logger: services.logger,
      health: services.health,
      trace: prepared.trace && { call: prepared.trace, capability: prepared.kind.capability.name },
      attemptLog: prepared.attemptLog,
    };
  }

  /** The protocol of a route of the plan (selection only keeps routes whose protocol exists). */
  protocolFor(endpoint: RouteEndpoint): T['protocol'] {
    return protocolOf(this.#services.protocols, endpoint.provider.kind, this.prepared.kind.capability)!;
  }

  servedCall(endpoint: RouteEndpoint): ServedCall<T['request']> {
    const { prepared } = this;
    return { requestId: prepared.requestId, request: prepared.request, modelId: prepared.modelId, endpoint, createdAt: prepared.createdAt };
  }

  /** The cost of a meter on the route that served it, at the payer's rate. */
  price(endpoint: RouteEndpoint, meter: T['meter']): Picos {
    return applyRate(this.prepared.kind.cost(endpoint.prices, meter), this.prepared.payer.rate);
  }

  /** Step meter: what was delivered, priced, with what settling it will charge. */
  meter(endpoint: RouteEndpoint, meter: T['meter']): Metered<T['meter']> {
    const cost = this.price(endpoint, meter);
    const overHold = beyondHold(cost, this.prepared.hold.reservation.amount);
    crashPoint('metered');
    return { endpoint, meter, cost, expected: { ...meter, charged: cost - overHold, overHold } };
  }

  /**
   * The one-shot driver: tries the plan's routes, then meters, admits, charges, renders and
   * records. `kept`: what the request log keeps of the answer when not the answer itself (images
   * keep their files, not their base64); `serialize`: the answer as the pieces sent when not
   * `JSON.stringify`'s text (images send their base64 as it came), with `kept` for the request log.
   */
  async complete<Body>(
    this: MeteredCall<T & CallableKindTypes>,
    render: RenderResult<T, Body>,
    kept?: (body: Body) => Kept,
    serialize?: (body: Body) => JsonPieces,
  ): Promise<CompletedCall<T, Body>> {
    const { kind, request, signal } = this.prepared;
    let endpoint: RouteEndpoint | undefined;
    let charged: Charged<T['meter'], Body> | undefined;
    let call: ServedCall<T['request']>;
    this.prepared.trace?.expectRecord();
    try {
      const attempt = await completeWithFallback(this.attemptContext(), (route, context) =>
        (this.protocolFor(route) as CallableKindTypes['protocol']).complete(request, route, context),
      );
      endpoint = attempt.endpoint;
      crashPoint('attempted');
      const metered = this.meter(endpoint, kind.meter(request, attempt.result, endpoint));
      // A client gone before its answer is charged nothing: it received none (docs/billing.md,
      // "Money caps"). The answer arrived all the same, so the check is here, not only in the upstream call.
      if (this.#clientGone()) throw errors.upstreamCancelled(signal.reason);
      const served = this.servedCall(endpoint);
      call = served;
      charged = await this.charge(metered, (settlement) => render(attempt.result, served, settlement));
    } catch (error) {
      throw await this.fail(error, endpoint);
    }
    // The gate refused: the work moved on, and whoever won ends it.
    if (charged === undefined) throw errors.workEnded();
    const json = serialize === undefined || kept === undefined ? JsonText.of(charged.body) : undefined;
    await this.record({
      status: 'completed',
      httpStatus: 200,
      ...this.settled(endpoint, charged.settlement),
      ...(kept ? kept(charged.body) : { output: json }),
    });
    return { body: charged.body, json: serialize ? serialize(charged.body) : json!.text, call, settlement: charged.settlement };
  }

  /**
   * Steps admit → settle → amend of a metered answer (`render` renders it with a settlement).
   * Without a gate the answer is rendered once, after the charge; with one, it is rendered with the
   * expected charge and admitted first. Undefined when the gate refused: nothing was charged.
   */
  async charge<Body>(metered: Metered<T['meter']>, render: (settlement: Settlement<T['meter']>) => Body): Promise<Charged<T['meter'], Body> | undefined> {
    const gate = this.#gate as ChargeGate<Body> | undefined;
    if (gate === undefined) {
      const settlement = await this.settle(metered);
      return { body: render(settlement), settlement };
    }
    let body = render(metered.expected);
    if (!(await gate.admit(body, metered.expected.charged))) return undefined;
    crashPoint('admitted');
    const settlement = await this.settle(metered);
    if (settlement.charged !== metered.expected.charged) {
      body = render(settlement);
      await gate.amend(body);
      crashPoint('amended');
    }
    return { body, settlement };
  }

  /** Step settle: turns the hold into a charge of the metered cost, never more than the hold. */
  async settle(metered: Metered<T['meter']>): Promise<Settlement<T['meter']>> {
    const { prepared } = this;
    const { expected, cost } = metered;
    const charged = await prepared.hold.settle(cost);
    this.#charged = { endpoint: metered.endpoint, settlement: { ...expected, charged } };
    crashPoint('settled');
    if (prepared.tokenChecks) this.#services.limiter?.countTokens(prepared.tokenChecks, tokensOf(prepared.kind.logged(metered.meter).usage));
    if (expected.overHold > 0n) {
      this.logger.warn(
        { requestId: prepared.requestId, cost: String(cost), held: String(prepared.hold.reservation.amount), charged: String(charged) },
        'the upstream reported more than the hold: the excess is not charged',
      );
    } else if (charged !== cost) {
      this.logger.warn(
        { requestId: prepared.requestId, cost: String(cost), charged: String(charged) },
        'charge capped by the balance or an expired reservation',
      );
    }
    return { ...expected, charged };
  }

  /** The row's fields of a settled call. */
  settled(endpoint: RouteEndpoint, settlement: Settlement<T['meter']>): Pick<RequestEnd, 'endpoint' | 'logged' | 'cost' | 'overHold' | 'cacheSavings'> {
    const logged = this.prepared.kind.logged(settlement);
    return {
      endpoint,
      logged,
      cost: settlement.charged,
      overHold: settlement.overHold,
      cacheSavings: cacheReadSavings(endpoint.prices, logged.usage, this.prepared.payer.rate),
    };
  }

  /**
   * A call that delivered nothing to charge: its end admitted (a job's, by compare-and-set), the
   * whole hold released, the row recorded. Returns the failure as the client is told it.
   */
  async fail(error: unknown, endpoint?: RouteEndpoint): Promise<GatewayError> {
    const failure = this.failure(error);
    if (this.#charged !== undefined) {
      // A failure after the charge (rendering or amending the answer): the charge stands, nothing is
      // released, and the row says what was charged.
      await this.record({
        status: 'failed',
        httpStatus: failure.status,
        errorCode: failure.code,
        ...this.settled(this.#charged.endpoint, this.#charged.settlement),
      });
      return failure;
    }
    const clientGone = this.#clientGone();
    const status = clientGone || failure.code === 'cancelled_upstream' ? 'cancelled' : 'failed';
    const refuse = this.#gate?.refuse;
    // Moved on meanwhile: the hold and the row are whoever won's.
    if (refuse && !(await refuse.call(this.#gate, { status, error: failure }))) return failure;
    if (refuse) crashPoint('admitted');
    await this.prepared.hold.release();
    crashPoint('released');
    // 499: the client closed the connection before the answer (nothing was charged).
    await this.record({ status, httpStatus: clientGone ? 499 : failure.status, endpoint, errorCode: failure.code });
    return failure;
  }

  /** Whether the client went away (a job's signal is not a client's: its end is the job's to say). */
  #clientGone(): boolean {
    return this.prepared.signalOf === 'client' && this.prepared.signal.aborted;
  }

  /** A failure as the client is told it: a protocol's rejection names the parameter in the dialect's terms. */
  failure(error: unknown): GatewayError {
    return error instanceof RejectedParameter ? violationError(error.violation, this.prepared.names) : asGatewayError(error);
  }

  /** Step record: the request log row, once; a second call changes nothing. */
  record(end: RequestEnd): Promise<void> | undefined {
    if (this.#recorded) return;
    this.#recorded = true;
    const { prepared } = this;
    this.#services.record(
      {
        requestId: prepared.requestId,
        owner: prepared.payer.owner,
        keyId: prepared.payer.keyId,
        route: prepared.route,
        stream: prepared.request.stream,
        createdAt: prepared.createdAt,
        durationMs: performance.now() - prepared.startedAt,
        modelId: prepared.modelId,
        ...end,
        attempts: prepared.attemptLog?.finish(),
        output: prepared.request.store === false ? undefined : end.output,
        // The output's consent covers the request that produced it (docs/outputs.md).
        canonicalRequest: prepared.request.store === false ? undefined : keptRequest(prepared.request, prepared.kind.requestBytes),
      },
      prepared.trace,
    );
    // Only a crash test waits for the row to reach the store before it dies.
    if (crashArmedAt('recorded')) return this.#services.flush().then(() => crashPoint('recorded'));
  }
}

/** Every token of a call counts against tokens per minute: input (cached or not) and output. */
function tokensOf(usage: Usage): number {
  return usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens + usage.outputTokens;
}
