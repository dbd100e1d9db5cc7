/**
 * Whether one route can serve a request as asked. Runs before any credit moves; the pipeline drops
 * routes that cannot and, when none is left, reports the first route's violation.
 */
import type { PromptSize } from '../tokens/estimate.ts';
import type { CanonicalRequest } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import type { CanonicalParam } from '../canonical/index.ts';
import { checkCapabilities } from './capabilities.ts';
import { checkConstraints } from './constraints.ts';
import { checkLimits } from './limits.ts';
import { checkProtocolParameters } from './protocol-parameters.ts';
import { checkReasoning } from './reasoning.ts';
import type { PolicyViolation } from './violation.ts';

export interface PolicyInput {
  readonly request: CanonicalRequest;
  readonly endpoint: RouteEndpoint;
  /** The route protocol's `unsupportedParameters`. */
  readonly unsupportedParameters: readonly CanonicalParam[];
  readonly prompt: PromptSize;
}

export function checkRoute(input: PolicyInput): PolicyViolation | undefined {
  const { request, endpoint } = input;
  return (
    checkProtocolParameters(request, input.unsupportedParameters) ??
    checkCapabilities(request, endpoint.capabilities) ??
    checkReasoning(request, endpoint.capabilities, endpoint.limits) ??
    checkLimits(request, endpoint.limits, input.prompt) ??
    checkConstraints(request, endpoint.parameters.chat)
  );
}
