/**
 * Parameters the route's upstream protocol cannot express at all (docs/chat-completions.md, rule 3:
 * routes on an upstream responses interface reject explicit stop, seed, penalties, logprobs even
 * false, and top_logprobs). Dropping them silently would change the result without telling the
 * client.
 */
import type { CanonicalRequest } from '../canonical/index.ts';
import type { CanonicalParam } from '../canonical/index.ts';
import { isExplicit } from './explicit.ts';
import { fieldRef, notSupported, type PolicyViolation } from './violation.ts';

export function checkProtocolParameters(request: CanonicalRequest, unsupported: readonly CanonicalParam[]): PolicyViolation | undefined {
  for (const param of unsupported) {
    if (isExplicit(request, param)) return notSupported(fieldRef(param), 'is not supported by the route serving this model');
  }
  return undefined;
}
