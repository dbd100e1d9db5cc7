import type { RateMultiplier } from '../core/money.ts';
import type { ApiKeyRecord, Consent, KeyLimits, OwnerRef } from '../storage/store.ts';

/**
 * Scopes a key may be restricted to. A key with no scope list is unrestricted.
 * See docs/authentication.md for what each one opens.
 */
export const SCOPES = ['models:read', 'chat', 'responses', 'images', 'videos', 'outputs', 'embeddings'] as const;
export type Scope = (typeof SCOPES)[number];

/** Who is calling, resolved once per request from the API key (cached; see auth/key-cache.ts). */
export interface AuthContext {
  readonly key: ApiKeyRecord;
  /** Whose credit is spent and whose consent applies: the organization for organization keys. */
  readonly owner: OwnerRef;
  readonly consent: Consent;
  readonly rate: RateMultiplier;
  readonly scopes: ReadonlySet<string> | null;
  readonly allowedModels: ReadonlySet<string> | null;
  /** The limits of the organization that owns the key, over all its keys (docs/limits.md); null for none. */
  readonly organizationLimits: KeyLimits | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authenticator's preHandler on every customer route. */
    auth: AuthContext;
  }
}

/** A Fastify hook in callback style (onRequest or preHandler). */
export type AuthHook = (request: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply, done: (error?: Error) => void) => void;

/**
 * What runs once a request's key is known and its scope checked: the counted limits (http/limits.ts).
 * Undefined (synchronously) when there is nothing to wait for; a rejection refuses the request.
 */
export type Admission = (request: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply) => Promise<void> | undefined;

/**
 * Resolves API keys (Authorization: Bearer or x-api-key) to an AuthContext. Route modules use
 * `{ onRequest: deps.authenticator.require('chat') }`; the handler then reads `request.auth`.
 */
export interface Authenticator {
  /** A hook that authenticates (401) and checks the scope when the key restricts scopes (403). */
  require(scope: Scope): AuthHook;
  /** Drops cached keys and owners (called after an admin change; other instances poll the change feed). */
  invalidate(): void;
}
