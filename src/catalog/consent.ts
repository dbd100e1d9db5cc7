/**
 * The four consent classes an owner can be in, and what consent an endpoint needs. The catalog
 * derives one view per class; an owner sees only the endpoints its consent allows
 * (docs/catalog.md, "Consent views").
 */
import type { Consent } from '../storage/store.ts';
import type { ConsentCondition } from './schemas.ts';
import type { RouteEndpoint } from './types.ts';

export const CONSENT_CLASSES: readonly Consent[] = [
  { communitySupply: false, trainingUse: false },
  { communitySupply: true, trainingUse: false },
  { communitySupply: false, trainingUse: true },
  { communitySupply: true, trainingUse: true },
];

export function consentNeeded(route: RouteEndpoint): ConsentCondition[] {
  const needs: ConsentCondition[] = [];
  if (route.supply === 'community') needs.push('community_supply');
  if (route.trainingUse === 'opt_in') needs.push('training_use');
  return needs;
}
