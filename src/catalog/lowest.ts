/**
 * Picks the offer that sets a public price: the lowest amount; on a tie, the offer that needs less
 * consent (so a rate open to everyone is not shown as conditional); then the earlier endpoint in
 * config order (offers arrive in that order).
 */
import type { Picos } from '../core/money.ts';
import { consentNeeded } from './consent.ts';
import type { CatalogEndpoint } from './endpoints.ts';

export interface Offer {
  readonly amount: Picos;
  readonly source: CatalogEndpoint;
}

export function lowestOffer<Candidate extends Offer>(offers: readonly Candidate[]): Candidate | undefined {
  let best: Candidate | undefined;
  for (const offer of offers) {
    if (best === undefined || offer.amount < best.amount) best = offer;
    else if (offer.amount === best.amount && needCount(offer) < needCount(best)) best = offer;
  }
  return best;
}

function needCount(offer: Offer): number {
  return consentNeeded(offer.source.route).length;
}
