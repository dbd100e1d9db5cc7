import type { RateMultiplier } from '../core/money.ts';
import type { ApiKeyRecord, Consent, OwnerRef } from '../storage/store.ts';

/**
 * Scopes a key may be restricted to. A key with no scope list is unrestricted.
 * See docs/authentication.md for what each one opens.
 */
export const SCOPES = ['models:read', 'chat', 'responses', 'images', 'videos', 'outputs'] as const;
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
}
