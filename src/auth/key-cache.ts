/**
 * The in-process cache in front of the key lookup: hash → resolved AuthContext, so the hot path
 * costs one SHA-256 and one Map lookup. Unknown and revoked keys are remembered briefly (a client
 * retrying a bad key must not hit the database every time) and the negative side is bounded so
 * that a flood of random keys cannot grow memory.
 *
 * Invalidation bumps a generation: a lookup that started before it does not store its (possibly
 * stale) result afterwards.
 */
import type { AuthContext } from './context.ts';

export type KeyLookup = { readonly ok: true; readonly context: AuthContext } | { readonly ok: false; readonly reason: 'unknown' | 'revoked' };

export interface KeyCacheOptions {
  /** How long an unknown or revoked key is remembered (milliseconds). */
  readonly negativeTtlMs: number;
  /** Most negative entries kept; the oldest are dropped first. */
  readonly maxNegativeEntries: number;
  readonly now: () => number;
}

export class KeyCache {
  readonly #positive = new Map<string, AuthContext>();
  readonly #negative = new Map<string, { readonly reason: 'unknown' | 'revoked'; readonly expiresAt: number }>();
  readonly #inFlight = new Map<string, Promise<KeyLookup>>();
  readonly #options: KeyCacheOptions;
  #generation = 0;

  constructor(options: KeyCacheOptions) {
    this.#options = options;
  }

  /** The cached answer, or undefined when the store must be asked. */
  peek(hash: string): KeyLookup | undefined {
    const context = this.#positive.get(hash);
    if (context) return { ok: true, context };
    const negative = this.#negative.get(hash);
    if (!negative) return undefined;
    if (negative.expiresAt <= this.#options.now()) {
      this.#negative.delete(hash);
      return undefined;
    }
    return { ok: false, reason: negative.reason };
  }

  /** Runs `load` once per hash at a time (concurrent requests with one key share the lookup). */
  load(hash: string, load: () => Promise<KeyLookup>): Promise<KeyLookup> {
    const pending = this.#inFlight.get(hash);
    if (pending) return pending;
    const generation = this.#generation;
    const promise = load()
      .then((lookup) => {
        if (generation === this.#generation) this.#remember(hash, lookup);
        return lookup;
      })
      .finally(() => {
        if (this.#inFlight.get(hash) === promise) this.#inFlight.delete(hash);
      });
    this.#inFlight.set(hash, promise);
    return promise;
  }

  clear(): void {
    this.#generation++;
    this.#positive.clear();
    this.#negative.clear();
    this.#inFlight.clear();
  }

  #remember(hash: string, lookup: KeyLookup): void {
    if (lookup.ok) {
      this.#positive.set(hash, lookup.context);
      return;
    }
    if (this.#negative.size >= this.#options.maxNegativeEntries) {
      const oldest = this.#negative.keys().next();
      if (!oldest.done) this.#negative.delete(oldest.value);
    }
    this.#negative.set(hash, { reason: lookup.reason, expiresAt: this.#options.now() + this.#options.negativeTtlMs });
  }
}
