/**
 * The `Idempotency-Key` header (docs/idempotency.md) for any route, dialect-blind: a
 * route passes its options through `withIdempotency` and gains the header's schema (validated,
 * and described in GET /openapi.json) and two hooks around its unchanged handler.
 *
 * - preHandler (after authentication and body validation): claims the record of (API key, route,
 *   key) for the hash of the body and the key's authorization policy, or answers without running
 *   the handler: a replay of the stored result, or a 409. A replay reserves, charges and calls
 *   nothing; it leaves a request log row of its own, at no cost.
 * - onSend: the claimed request's answer decides the record. A success is stored (a JSON body up
 *   to 300 KiB for replay; a stream or a larger body as a non-replayable success); any error
 *   answer gives the claim up, so the client may retry with the same key.
 *
 * Storage outages bypass deduplication (the API allows it; docs/idempotency.md): the request runs
 * unguarded.
 */
import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { reservationTtlMs } from '../billing/credit.ts';
import { errors } from '../core/errors.ts';
import type { AppDeps } from './deps.ts';
import type { IdempotencyBegin } from '../storage/store.ts';
import type { Pipeline } from '../pipeline/pipeline.ts';
import { recordAnswered } from './request-recording.ts';
import { JsonPieces } from '../core/json-pieces.ts';

const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
const REPLAYED_HEADER = 'Idempotent-Replayed';
/** The header as Node presents it; validation errors name it so too, and so do the 409s. */
const HEADER_FIELD = IDEMPOTENCY_KEY_HEADER.toLowerCase();
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
const IDEMPOTENCY_RECORD_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** The largest successful JSON body kept for replay: 300 KiB. */
export const MAX_REPLAY_BYTES = 300 * 1024;

/** The route's header schema: Fastify validates it (a 400 naming the header) and the OpenAPI document lists it. */
const IdempotencyKeyHeaders = Type.Object({
  [IDEMPOTENCY_KEY_HEADER]: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
      description:
        'Makes retries safe: a repeated key with the same body replays the stored result for 24 hours ' +
        '(header `Idempotent-Replayed: true`). See docs/idempotency.md.',
    }),
  ),
});

export interface IdempotentRoute {
  /** The records' namespace: the same key on another route is another record. */
  readonly route: string;
  /** Response headers that belong to the result and are replayed with it; content-type always is. */
  readonly resultHeaders: readonly string[];
  /** The route's pipeline, whose request log gets a row for each replay. */
  readonly pipeline: Pipeline;
}

/** What a route's options may hold for `withIdempotency` to own the header schema and both hooks. */
interface IdempotentRouteOptions {
  readonly schema: FastifySchema & { readonly headers?: never };
  readonly preHandler?: never;
  readonly onSend?: never;
}

/** The record a running request holds; the request's answer completes it or gives it up. */
interface Claim {
  readonly keyId: string;
  readonly route: string;
  readonly idempotencyKey: string;
}

export function withIdempotency<Options extends IdempotentRouteOptions>(deps: AppDeps, idempotent: IdempotentRoute, options: Options) {
  const claims = new WeakMap<FastifyRequest, Claim>();
  const storedHeaders = ['content-type', ...idempotent.resultHeaders];
  // A request that outlives its credit hold is presumed dead: past that, its claim may be taken over.
  const lockMs = reservationTtlMs(deps.config);

  async function claimOrAnswer(request: FastifyRequest, reply: FastifyReply, idempotencyKey: string): Promise<FastifyReply | undefined> {
    const claim: Claim = { keyId: request.auth.key.id, route: idempotent.route, idempotencyKey };
    const now = deps.now();
    let begun: IdempotencyBegin;
    try {
      begun = await deps.store.beginIdempotent({
        ...claim,
        bodyHash: requestHash(request),
        now,
        lockedUntil: now + lockMs,
        expiresAt: now + IDEMPOTENCY_RECORD_LIFETIME_MS,
      });
    } catch (error) {
      request.log.warn({ err: error }, 'idempotency storage unavailable; the request runs without deduplication');
      return undefined;
    }
    switch (begun.state) {
      case 'started':
        claims.set(request, claim);
        return undefined;
      case 'replay':
        // The replay is a request of its own in the key's history, at no cost.
        recordAnswered(idempotent.pipeline, deps.now, request, reply, idempotent.route, {
          status: 'completed',
          httpStatus: begun.status,
          output: replayedOutput(begun.body),
        });
        return reply.headers(begun.headers).header(REPLAYED_HEADER, 'true').code(begun.status).send(begun.body);
      case 'in_progress':
        throw errors.idempotencyKeyInUse(HEADER_FIELD);
      case 'body_mismatch':
        throw errors.idempotencyKeyReused(HEADER_FIELD);
      case 'not_replayable':
        throw errors.idempotencyNotReplayable(HEADER_FIELD);
      default: {
        const unknown: never = begun;
        throw new Error(`unknown idempotency state ${JSON.stringify(unknown)}`);
      }
    }
  }

  // Awaited before the answer leaves, so a client that retries at once finds the record settled.
  async function settleClaim(request: FastifyRequest, reply: FastifyReply, payload: unknown, claim: Claim): Promise<unknown> {
    try {
      if (reply.statusCode >= 200 && reply.statusCode < 300) {
        await deps.store.completeIdempotent({
          ...claim,
          status: reply.statusCode,
          headers: pickHeaders(reply, storedHeaders),
          body: replayableBody(reply, payload),
        });
      } else {
        await deps.store.abandonIdempotent(claim);
      }
    } catch (error) {
      // The claim lapses at its lock time instead; the answer itself is unaffected.
      request.log.warn({ err: error }, 'could not record the idempotency outcome');
    }
    return payload;
  }

  // Both hooks are callback style and return at once for a request without a key: most requests
  // never pay for a promise here.
  function preHandler(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    const idempotencyKey = request.headers[HEADER_FIELD];
    if (typeof idempotencyKey !== 'string') return done();
    claimOrAnswer(request, reply, idempotencyKey).then(() => done(), done);
  }

  function onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void): void {
    const claim = claims.get(request);
    if (!claim) return done(null, payload);
    claims.delete(request);
    settleClaim(request, reply, payload, claim).then((settled) => done(null, settled), done);
  }

  return { ...options, schema: { ...options.schema, headers: IdempotencyKeyHeaders }, preHandler, onSend };
}

/** The stored body as the output of the replay's row: the JSON the client received. */
function replayedOutput(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/**
 * The body and what decides the key's authorization (scopes, allowed models, the owner's consent):
 * a result is replayed only to the request that would have been allowed to produce it.
 */
function requestHash(request: FastifyRequest): string {
  const { key, consent } = request.auth;
  const policy = { scopes: key.scopes, allowedModels: key.allowedModels, consent };
  return createHash('sha256')
    .update(canonicalJson({ body: request.body, policy }))
    .digest('hex');
}

/** JSON with object keys sorted, so the same body hashes the same whatever order its fields came in. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const record = value as Record<string, unknown>;
  const fields = Object.keys(record)
    .sort()
    .filter((name) => record[name] !== undefined)
    .map((name) => `${JSON.stringify(name)}:${canonicalJson(record[name])}`);
  return `{${fields.join(',')}}`;
}

function pickHeaders(reply: FastifyReply, names: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = reply.getHeader(name);
    if (value !== undefined) picked[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return picked;
}

/** The serialized JSON body when it may be replayed; null for a stream or a body over the limit. */
function replayableBody(reply: FastifyReply, payload: unknown): string | null {
  if (!String(reply.getHeader('content-type') ?? '').includes('json')) return null;
  if (typeof payload === 'string') return Buffer.byteLength(payload) > MAX_REPLAY_BYTES ? null : payload;
  // A body sent as its pieces (an image answer, src/dialects/images/encode.ts) is kept as its text.
  if (payload instanceof JsonPieces) return payload.byteLength > MAX_REPLAY_BYTES ? null : payload.toBuffer().toString('utf8');
  return null;
}
