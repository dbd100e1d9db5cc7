/**
 * First start on an empty database: one demo account with demo credit and one key, so that a
 * newcomer's first request works. Never runs again once any account or organization exists.
 */
import { usdToPicos } from '../core/money.ts';
import type { GatewayConfig } from '../config/schema.ts';
import type { Account, Store } from '../storage/store.ts';
import { issueKey } from './issue-key.ts';

/** Credit of the demo account when the config sets no `billing.demo_credit_usd`. */
export const DEFAULT_DEMO_CREDIT_USD = 10;

export interface DemoAccount {
  readonly account: Account;
  readonly creditUsd: number;
  /** Shown once, on the console of the first start. */
  readonly apiKey: string;
}

/** Creates the demo account when the directory is empty; null when it is not. */
export async function ensureDemoAccount(store: Store, config: GatewayConfig): Promise<DemoAccount | null> {
  // Atomic: instances starting at once on one empty database create one demo account.
  const account = await store.createFirstAccount({ name: 'demo' });
  if (!account) return null;
  const creditUsd = config.billing?.demo_credit_usd ?? DEFAULT_DEMO_CREDIT_USD;
  const owner = { kind: 'account', id: account.id } as const;
  if (creditUsd > 0) await store.addCredit(owner, usdToPicos(creditUsd), 'demo credit');
  const issued = await issueKey(store, { owner, name: 'demo key' });
  return { account, creditUsd, apiKey: issued.plaintext };
}
