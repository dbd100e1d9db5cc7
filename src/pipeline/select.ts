/**
 * Resolution and validation: which model and which of its routes may serve the request. The
 * `models` fallback list is walked here, before any credit is reserved (DESIGN: fallbacks): the
 * first model with at least one route that can serve the request as asked wins. When none can, the
 * error of the first candidate (the requested model) is returned.
 */
import type { AuthContext } from '../auth/context.ts';
import type { PromptSize } from '../billing/estimate.ts';
import type { CanonicalRequest } from '../canonical/index.ts';
import type { Catalog, RouteEndpoint } from '../catalog/types.ts';
import { errors, GatewayError } from '../core/errors.ts';
import { checkRoute } from '../policy/validate.ts';
import type { ParamNamer, PolicyViolation } from '../policy/violation.ts';
import type { ChatProtocolRegistry } from '../protocols/registry.ts';
import { attemptPlan, orderRoutes } from '../routing/plan.ts';

export interface Selection {
  readonly modelId: string;
  /** The routes to try, in order; never empty. */
  readonly attempts: readonly RouteEndpoint[];
}

export interface SelectionInput {
  readonly request: CanonicalRequest;
  readonly names: ParamNamer;
  readonly auth: AuthContext;
  readonly catalog: Catalog;
  readonly protocols: ChatProtocolRegistry;
  readonly prompt: PromptSize;
}

export function selectRoutes(input: SelectionInput): Selection {
  let firstError: GatewayError | undefined;
  for (const name of [input.request.model, ...input.request.fallbackModels]) {
    const outcome = selectModel(name, input);
    if (outcome instanceof GatewayError) firstError ??= outcome;
    else return outcome;
  }
  throw firstError!;
}

function selectModel(name: string, input: SelectionInput): Selection | GatewayError {
  const { catalog, auth, request } = input;
  const modelId = catalog.resolve(name);
  // A model outside the key's list behaves as unknown (DESIGN: status → type).
  if (modelId === undefined || (auth.allowedModels && !auth.allowedModels.has(modelId)) || catalog.category(modelId) !== 'LLM') {
    return errors.modelNotFound(name);
  }
  const routes = catalog.routes(modelId, auth.consent);
  if (routes.length === 0) return errors.modelNotFound(name);
  const eligible: RouteEndpoint[] = [];
  let firstError: GatewayError | undefined;
  for (const endpoint of orderRoutes(routes, request.provider?.sort)) {
    const protocol = input.protocols[endpoint.provider.kind];
    if (!protocol) {
      firstError ??= errors.noTextProtocol(modelId);
      continue;
    }
    const violation = checkRoute({
      request,
      endpoint,
      unsupportedParameters: protocol.unsupportedParameters,
      prompt: input.prompt,
    });
    if (violation) firstError ??= violationError(violation, input.names);
    else eligible.push(endpoint);
  }
  if (eligible.length === 0) return firstError!;
  return { modelId, attempts: attemptPlan(eligible, request.provider) };
}

export function violationError(violation: PolicyViolation, names: ParamNamer): GatewayError {
  const param = names.name(violation.ref);
  return errors.policyViolation(violation.code ?? 'unsupported_parameter', param, violation.message(param));
}
