/**
 * Resolves an API key to an AuthContext on every customer route: the key's hash is looked up
 * through the store once and cached (see key-cache.ts), its owner's consent and rate are resolved
 * with it, and the route's scope is checked against the key's scope list.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Logger } from '../core/logger.ts';
import { errors } from '../core/errors.ts';
import { UNIT_RATE, type RateMultiplier } from '../core/money.ts';
import type { ApiKeyRecord, Store } from '../storage/store.ts';
import { watchChanges, type ChangeWatcher } from './change-watcher.ts';
import type { Admission, AuthContext, Authenticator, Scope } from './context.ts';
import { presentedCredential } from './credentials.ts';
import { KeyCache, type KeyLookup } from './key-cache.ts';
import { API_KEY_PREFIX, hashApiKey } from './keys.ts';

export interface AuthenticatorOptions {
  /** Rate for owners without their own (config `billing.default_rate`); 1 when omitted. */
  readonly defaultRate?: RateMultiplier;
  /** How often the change feed is polled; 0 turns polling off. Default 500 ms. */
  readonly pollIntervalMs?: number;
  /** How long an unknown or revoked key is remembered. Default 1 s. */
  readonly negativeTtlMs?: number;
  readonly logger?: Logger;
  readonly now?: () => number;
}

export interface GatewayAuthenticator extends Authenticator {
  /** Resolves the request's key without a scope check (401 on failure). */
  authenticate(request: FastifyRequest): Promise<AuthContext>;
  /** Stops polling the change feed. */
  stop(): void;
  /** Sets what every authenticated request passes next (the limits), once, at composition. */
  admitWith(admission: Admission): void;
}

export function createAuthenticator(store: Store, options: AuthenticatorOptions = {}): GatewayAuthenticator {
  const defaultRate = options.defaultRate ?? UNIT_RATE;
  const cache = new KeyCache({
    negativeTtlMs: options.negativeTtlMs ?? 1_000,
    maxNegativeEntries: 10_000,
    now: options.now ?? Date.now,
  });
  const pollIntervalMs = options.pollIntervalMs ?? 500;
  const watcher: ChangeWatcher | undefined =
    pollIntervalMs > 0
      ? watchChanges(store, {
          intervalMs: pollIntervalMs,
          onChange: () => cache.clear(),
          onError: (error) => options.logger?.warn({ err: error }, 'change feed poll failed'),
        })
      : undefined;

  async function lookup(hash: string): Promise<KeyLookup> {
    const key = await store.getKeyByHash(hash);
    if (!key || !sameHash(key.hash, hash)) return { ok: false, reason: 'unknown' };
    if (key.revokedAt !== null) return { ok: false, reason: 'revoked' };
    const context = await resolveOwner(store, key, defaultRate);
    return context ? { ok: true, context } : { ok: false, reason: 'unknown' };
  }

  /** The request's key resolved: at once from the cache, or after a store lookup. Throws a 401. */
  function resolve(request: FastifyRequest): AuthContext | Promise<AuthContext> {
    const credential = presentedCredential(request.headers);
    switch (credential.kind) {
      case 'missing':
        throw errors.missingApiKey();
      case 'malformed':
        throw errors.invalidApiKey();
      case 'key':
        break;
      default: {
        const unreachable: never = credential;
        throw unreachable;
      }
    }
    // Anything not shaped like our keys is refused without touching the store.
    if (!credential.key.startsWith(API_KEY_PREFIX)) throw errors.invalidApiKey();
    const hash = hashApiKey(credential.key);
    const cached = cache.peek(hash);
    return cached ? contextOf(cached) : cache.load(hash, () => lookup(hash)).then(contextOf);
  }

  function contextOf(result: KeyLookup): AuthContext {
    if (result.ok) return result.context;
    throw result.reason === 'revoked' ? errors.revokedApiKey() : errors.invalidApiKey();
  }

  function checkScope(context: AuthContext, scope: Scope): AuthContext {
    if (context.scopes !== null && !context.scopes.has(scope)) {
      throw errors.insufficientScope(scope);
    }
    return context;
  }

  let admission: Admission | undefined;

  return {
    authenticate: async (request) => resolve(request),
    require(scope: Scope) {
      // Callback style, so that a cached key without limits (most requests) costs no promise.
      return (request, reply, done) => {
        const admit = (context: AuthContext): Promise<void> | undefined => {
          request.auth = checkScope(context, scope);
          return admission?.(request, reply);
        };
        let resolved: AuthContext | Promise<AuthContext>;
        let pending: Promise<void> | undefined;
        try {
          resolved = resolve(request);
          if (!(resolved instanceof Promise)) pending = admit(resolved);
        } catch (error) {
          done(error as Error);
          return;
        }
        if (resolved instanceof Promise) pending = resolved.then(admit);
        if (pending) pending.then(() => done(), done);
        else done();
      };
    },
    admitWith(next) {
      admission = next;
    },
    invalidate: () => cache.clear(),
    stop: () => watcher?.stop(),
  };
}

/** The owner whose consent, rate and credit apply: the organization for organization keys. */
async function resolveOwner(store: Store, key: ApiKeyRecord, defaultRate: RateMultiplier): Promise<AuthContext | null> {
  const organization = key.owner.kind === 'organization' ? await store.getOrganization(key.owner.id) : null;
  const owner = organization ?? (key.owner.kind === 'account' ? await store.getAccount(key.owner.id) : null);
  if (!owner) return null;
  return {
    key,
    owner: key.owner,
    consent: owner.consent,
    rate: owner.rate ?? defaultRate,
    scopes: key.scopes === null ? null : new Set(key.scopes),
    allowedModels: key.allowedModels === null ? null : new Set(key.allowedModels),
    organizationLimits: organization?.limits ?? null,
  };
}

/** The store found the row by this hash; comparing again, in constant time, guards a lax index. */
function sameHash(stored: string, presented: string): boolean {
  const a = Buffer.from(stored, 'utf8');
  const b = Buffer.from(presented, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
