/**
 * What an upstream reported beyond a request's hold. The hold is the most a request can cost
 * (docs/billing.md, "Money caps"): the ledger never charges more, so the excess — an upstream that
 * ignored `max_tokens`, or counted the prompt far above the gateway's bound — is priced, recorded in
 * the request log row (`over_hold`) and counted here, per route, so that the operator sees which
 * endpoints over-deliver; the client is not billed for it.
 */
import { Counter, type Registry } from 'prom-client';
import type { RouteEndpoint } from '../catalog/types.ts';
import { type Picos, PICOS_PER_USD } from '../core/money.ts';

/** The part of `cost` beyond `held`; 0 when the hold covers it. */
export function beyondHold(cost: Picos, held: Picos): Picos {
  return cost > held ? cost - held : 0n;
}

/** Counts one request's cost beyond its hold on the route that served it. */
export type OverHoldCounter = (endpoint: RouteEndpoint, overHold: Picos) => void;

const countersByRegistry = new WeakMap<Registry, OverHoldCounter>();

/** The counter of costs beyond holds in an app's registry, registered once however many pipelines share it. */
export function overHoldCounter(registry: Registry): OverHoldCounter {
  let count = countersByRegistry.get(registry);
  if (count) return count;
  const labelNames = ['provider', 'upstream_model'] as const;
  const requests = new Counter({
    name: 'gateway_over_hold_requests_total',
    help: 'Requests whose upstream reported more than the request could cost (its hold): the excess was not charged.',
    labelNames,
    registers: [registry],
  });
  const usd = new Counter({
    name: 'gateway_over_hold_usd_total',
    help: 'What upstreams reported beyond the holds of their requests, priced at the account rate and not charged, in USD.',
    labelNames,
    registers: [registry],
  });
  count = (endpoint, overHold) => {
    if (overHold <= 0n) return;
    const labels = { provider: endpoint.provider.id, upstream_model: endpoint.upstreamModel };
    requests.inc(labels);
    // A metric is a float; the exact amount is the request log's.
    usd.inc(labels, Number(overHold) / Number(PICOS_PER_USD));
  };
  countersByRegistry.set(registry, count);
  return count;
}
