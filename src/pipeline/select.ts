/**
 * Resolution and validation, for any kind of output: which model and which of its routes may serve
 * the request. The `models` fallback list is walked here, before any credit is reserved: the first
 * model with at least one route that can serve the request as asked wins. When none can, the
 * error of the first candidate (the requested model) is returned.
 */
import type { AuthContext } from '../auth/context.ts';
import type { Catalog, RouteEndpoint } from '../catalog/types.ts';
import { errors, GatewayError } from '../core/errors.ts';
import type { ParamNamer, PolicyViolation } from '../policy/violation.ts';
import { protocolOf, type ProtocolRegistry } from '../protocols/capability.ts';
import { attemptPlan, orderRoutes } from '../routing/plan.ts';
import type { KindTypes, OutputKind } from './kind.ts';

export interface Selection {
  readonly modelId: string;
  /** The routes to try, in order; never empty. */
  readonly attempts: readonly RouteEndpoint[];
}

export interface SelectionInput<T extends KindTypes> {
  readonly kind: OutputKind<T>;
  readonly request: T['request'];
  readonly estimate: T['estimate'];
  readonly names: ParamNamer;
  readonly auth: AuthContext;
  readonly catalog: Catalog;
  readonly protocols: ProtocolRegistry;
}

export function selectRoutes<T extends KindTypes>(input: SelectionInput<T>): Selection {
  let firstError: GatewayError | undefined;
  for (const name of [input.request.model, ...input.request.fallbackModels]) {
    const outcome = selectModel(name, input);
    if (outcome instanceof GatewayError) firstError ??= outcome;
    else return outcome;
  }
  throw firstError!;
}

function selectModel<T extends KindTypes>(name: string, input: SelectionInput<T>): Selection | GatewayError {
  const { catalog, auth, request, kind } = input;
  const modelId = catalog.resolve(name);
  // A model outside the key's list behaves as unknown, and so does a model of another kind.
  if (modelId === undefined || (auth.allowedModels && !auth.allowedModels.has(modelId)) || catalog.category(modelId) !== kind.category) {
    return errors.modelNotFound(name);
  }
  const routes = catalog.routes(modelId, auth.consent);
  if (routes.length === 0) return errors.modelNotFound(name);
  const eligible: RouteEndpoint[] = [];
  let firstError: GatewayError | undefined;
  for (const endpoint of orderRoutes(routes, request.provider?.sort)) {
    const protocol = protocolOf(input.protocols, endpoint.provider.kind, kind.capability);
    if (!protocol) {
      firstError ??= errors.noProtocol(modelId, kind.unservable);
      continue;
    }
    const violation = kind.check(request, endpoint, protocol, input.estimate);
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
