/**
 * The shapes the metered-call core hands a dialect, for any kind of output. A dialect decodes its
 * body into its kind's canonical request and a ParamNamer, and renders what comes back; everything
 * between is the same for every dialect and every kind.
 */
import type { AuthContext } from '../auth/context.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import type { Picos, RateMultiplier } from '../core/money.ts';
import type { ParamNamer } from '../policy/violation.ts';
import type { OwnerRef } from '../storage/store.ts';
import type { KindTypes } from './kind.ts';
import type { CallTrace } from '../telemetry/tracing.ts';
import type { JsonPieces } from '../core/json-pieces.ts';

export interface CallInput<Request> {
  readonly request: Request;
  readonly names: ParamNamer;
  readonly auth: AuthContext;
  /** The gateway request id (`x-gateway-request-id`), also the request log's key. */
  readonly requestId: string;
  /** The request log's route name: chat | messages | responses | images | … */
  readonly route: string;
  /** Aborted when the client goes away; the upstream call is aborted with it. */
  readonly signal: AbortSignal;
  /**
   * The levels of the key's tokens-per-minute buckets its admission found (limits/backend.ts), which
   * the call's tokens are pre-checked against; undefined when nothing was counted (no such limit, or
   * the counters were away and the mode is `open`).
   */
  readonly tokenLevels?: readonly number[];
  /** The request's span, when tracing is on (docs/operations.md, "Tracing"). */
  readonly trace?: CallTrace;
}

/**
 * Who pays for a call and under which key, fixed when it was prepared: settlement and the request
 * log need nothing more of the caller. Plain data, so that a job can store it.
 */
export interface Payer {
  readonly owner: OwnerRef;
  readonly keyId: string;
  /** The account rate at the time of the request: the charge uses the rate the quote used. */
  readonly rate: RateMultiplier;
}

/** The call actually made: which model (after `models` fallback) and which route served it. */
export interface ServedCall<Request> {
  readonly requestId: string;
  readonly request: Request;
  /** Public model id of the model that served the request (a fallback model when one was used). */
  readonly modelId: string;
  readonly endpoint: RouteEndpoint;
  /** Epoch milliseconds at which the gateway received the request. */
  readonly createdAt: number;
}

/**
 * What was billed: the kind's meter (tokens, images, seconds…) and what the ledger charged for it.
 * The cost header, a stream's usage `cost` and the ledger entry are this one number. `overHold`:
 * the part of the meter's price beyond the request's hold, which was not charged
 * (docs/billing.md, "Money caps").
 */
export type Settlement<Meter> = Meter & { readonly charged: Picos; readonly overHold: Picos };

/** A dialect's rendering of a complete result (the client body, also the stored output). */
export type RenderResult<T extends KindTypes, Body> = (result: T['result'], call: ServedCall<T['request']>, settlement: Settlement<T['meter']>) => Body;

export interface CompletedCall<T extends KindTypes, Body> {
  readonly body: Body;
  /** `body` serialized: what the client receives (and the request log keeps, unless the call says what it keeps). */
  readonly json: string | JsonPieces;
  readonly call: ServedCall<T['request']>;
  readonly settlement: Settlement<T['meter']>;
}
