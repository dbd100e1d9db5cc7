/**
 * Parameters the route's upstream protocol cannot express at all (docs/chat-completions.md, rule 3:
 * routes on an upstream responses interface reject explicit stop, seed, penalties, logprobs even
 * false, and top_logprobs). Dropping them silently would change the result without telling the
 * client.
 */
import type { CanonicalRequest } from '../canonical/index.ts';
import type { CanonicalParam } from '../canonical/index.ts';
import { isExplicit } from './explicit.ts';
import { fieldRef, notSupported, type ParamRef, type PolicyViolation } from './violation.ts';

export function checkProtocolParameters(request: CanonicalRequest, unsupported: readonly CanonicalParam[]): PolicyViolation | undefined {
  for (const param of unsupported) {
    if (isExplicit(request, param)) return notSupported(paramRef(request, param), 'is not supported by the route serving this model');
  }
  return undefined;
}

/** A tool's own field is named at the first tool that sets it. */
function paramRef(request: CanonicalRequest, param: CanonicalParam): ParamRef {
  if (param !== 'toolInputExamples') return fieldRef(param);
  const toolIndex = request.tools?.findIndex((tool) => tool.inputExamples !== undefined) ?? 0;
  return { kind: 'tool-input-examples', toolIndex };
}
