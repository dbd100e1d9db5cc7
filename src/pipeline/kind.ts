/**
 * A kind of output (text, images, video) as the metered-call core sees it: the small descriptor a
 * kind supplies so that the one core can resolve, validate, quote, hold credit, try routes, settle
 * and record for it (docs/architecture.md, "The metered-call core"). Everything specific to the
 * kind lives behind these functions; the core never looks inside a request, a result or a meter.
 */
import type { ProviderPreferences, Usage } from '../canonical/index.ts';
import type { EndpointPrices, RouteEndpoint } from '../catalog/types.ts';
import type { Picos } from '../core/money.ts';
import type { TokenEstimate } from '../limits/limiter.ts';
import type { PolicyViolation } from '../policy/violation.ts';
import type { Capability, ModelCategory } from '../protocols/capability.ts';
import type { CallContext } from '../protocols/protocol.ts';

/** What the core reads of any kind's request: which model, its fallbacks, the routing hints. */
export interface MeteredRequest {
  /** The model name as the client wrote it (an id or an alias). */
  readonly model: string;
  /** The `models` fallback list, walked during selection, before any credit is held. */
  readonly fallbackModels: readonly string[];
  readonly provider?: ProviderPreferences;
  /** Whether the client asked for a stream (recorded in the request log). */
  readonly stream: boolean;
  /**
   * false: the request log row keeps no output, so the answer cannot be retrieved later (the API's
   * `store: false`); the row itself, its usage and its cost are kept as for any request.
   */
  readonly store?: boolean;
}

/** Every capability's protocol answers one request of its kind with one result. */
export interface CallableProtocol<Request, Result> {
  complete(request: Request, endpoint: RouteEndpoint, context: CallContext): Promise<Result>;
}

/**
 * The request-log columns of a meter: tokens where the kind or its upstream counts them (zero
 * where it does not), and web search units.
 */
export interface LoggedUsage {
  readonly usage: Usage;
  readonly searchUnits: number;
  /** Images delivered (image kinds). */
  readonly images?: number;
  /** Seconds of video delivered (video kinds). */
  readonly videoSeconds?: number;
  /** The usage object as the provider reported it, when it reported one (kept with the request log row). */
  readonly providerUsage?: Readonly<Record<string, unknown>>;
}

/** The types a kind works with, named once so that the descriptor reads as one unit. */
export interface KindTypes {
  /** The canonical request of the kind (the dialect decodes into it). */
  readonly request: MeteredRequest;
  /** What its protocol returns for one call. */
  readonly result: unknown;
  /** What is billed: the quantities delivered (tokens, images, seconds, a variant). */
  readonly meter: object;
  /** Measurements of one request that validation and the quote share, computed once. */
  readonly estimate: unknown;
  /** The protocol interface of the kind's capability. */
  readonly protocol: unknown;
}

/** A kind answered by one protocol call (text, images), as opposed to one driven as an operation (video). */
export interface CallableKindTypes extends KindTypes {
  readonly protocol: CallableProtocol<this['request'], this['result']>;
}

export interface OutputKind<T extends KindTypes> {
  /** For logs and errors: `text`, `image`, `video`. */
  readonly name: string;
  /** The catalog category of the models that produce it; other models are not found for it. */
  readonly category: ModelCategory;
  /** The protocol capability a route's provider must implement to serve it. */
  readonly capability: Capability<T['protocol']>;
  /** What a route's protocol is called for when it "cannot serve" the request (a 503 message). */
  readonly unservable: string;
  /**
   * Whether its requests may hold files' bytes (an image to edit, a video's first frame), which the
   * request log keeps as their size (request-log.ts, keptRequest).
   */
  readonly requestBytes: boolean;
  estimate(request: T['request']): T['estimate'];
  /** Whether one route can serve the request as asked (before any credit moves). */
  check(request: T['request'], endpoint: RouteEndpoint, protocol: T['protocol'], estimate: T['estimate']): PolicyViolation | undefined;
  /** The worst-case reference cost on one route (before the account rate). */
  quote(request: T['request'], endpoint: RouteEndpoint, estimate: T['estimate']): Picos;
  /**
   * The billable quantities of a result. Throws when the result is a failure in disguise (a text
   * finish reason `error`), so that nothing is charged for it.
   */
  meter(request: T['request'], result: T['result'], endpoint: RouteEndpoint): T['meter'];
  /** The reference cost of what was delivered (before the account rate). */
  cost(prices: EndpointPrices, meter: T['meter']): Picos;
  /** The request-log columns of a meter. */
  logged(meter: T['meter']): LoggedUsage;
  /**
   * The tokens a request is pre-checked with against a key's tokens per minute (docs/limits.md):
   * a free upper bound and the estimate, read only when the bound does not fit; a kind without it
   * (images, video) is not checked, and its usage's tokens are counted when settled.
   */
  tokens?(request: T['request'], estimate: T['estimate']): TokenEstimate;
}
