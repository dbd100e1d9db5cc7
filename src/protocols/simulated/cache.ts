/**
 * Prompt caching as the simulated provider models it, so that cache options and cached-token
 * billing can be exercised without an upstream: with `gateway.cache: on`, everything before the last
 * message is a cacheable prefix; the first call writes it, later calls within the TTL read it.
 * Like real providers, short prefixes are not cached.
 */
import { createHash } from 'node:crypto';

export const MIN_CACHEABLE_TOKENS = 1024;
const MAX_ENTRIES = 1000;
const TTL_MS = { '5m': 5 * 60_000, '1h': 60 * 60_000 } as const;

export interface CacheOutcome {
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
}

const NO_CACHE: CacheOutcome = { cacheReadTokens: 0, cacheWriteTokens: 0 };

export class SimulatedPromptCache {
  /** Prefix hash → expiry (epoch ms); insertion order is age order for eviction. */
  readonly #entries = new Map<string, number>();

  lookup(prefix: unknown, prefixTokens: number, ttl: '5m' | '1h' = '5m', now = Date.now()): CacheOutcome {
    if (prefixTokens < MIN_CACHEABLE_TOKENS) return NO_CACHE;
    const key = createHash('sha256').update(JSON.stringify(prefix)).digest('base64url');
    const expiry = this.#entries.get(key);
    this.#entries.delete(key);
    this.#entries.set(key, now + TTL_MS[ttl]);
    if (this.#entries.size > MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    return expiry !== undefined && expiry > now
      ? { cacheReadTokens: prefixTokens, cacheWriteTokens: 0 }
      : { cacheReadTokens: 0, cacheWriteTokens: prefixTokens };
  }
}
