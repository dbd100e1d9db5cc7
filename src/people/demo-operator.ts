/**
 * The demo start's operator: on the first start on the built-in demo catalog, beside the demo
 * account and key, an operator with no password and a single-use sign-in link (valid a day) to the
 * dashboard, printed once on the console. There is no default password.
 */
import type { Store } from '../storage/store.ts';
import { createAuditor, SYSTEM_ACTOR } from './audit.ts';
import { DEFAULT_PASSWORD_HASHING } from './passwords.ts';
import { createUserOperations, type IssuedLink } from './users.ts';

export const DEMO_OPERATOR_EMAIL = 'operator@demo.invalid';

export async function createDemoOperator(store: Store, now: () => number): Promise<IssuedLink | null> {
  // The demo operator has no password (it signs in with its link), so no hash is made here.
  const users = createUserOperations({
    store,
    audit: createAuditor(store, { actor: SYSTEM_ACTOR, source: null }, now),
    actorLabel: SYSTEM_ACTOR.label,
    now,
    hashing: DEFAULT_PASSWORD_HASHING,
  });
  if (await store.getUserByEmail(DEMO_OPERATOR_EMAIL)) return null;
  const { link } = await users.addUser({ email: DEMO_OPERATOR_EMAIL, displayName: 'Demo operator', role: { kind: 'operator' } });
  return link;
}
