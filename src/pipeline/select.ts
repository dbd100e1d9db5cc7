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
import { attemptPlan, type ObservedFigures, orderRoutes } from '../routing/plan.ts';
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
  /** What was observed of endpoints, for `provider.sort` by latency or throughput. */
  readonly observed?: ObservedFigures;
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

/**
 * The routes of the model `name` names for this key, or the 404 every endpoint answers for a model
 * the key may not use: unknown, outside the key's allowed models, of another kind, or without an
 * endpoint the owner's consent allows. A model outside the key's list behaves as unknown.
 */
export function usableModel(
  name: string,
  auth: AuthContext,
  catalog: Catalog,
  category: OutputKind<KindTypes>['category'],
): { readonly modelId: string; readonly routes: readonly RouteEndpoint[] } | GatewayError {
  const modelId = catalog.resolve(name);
  if (modelId === undefined || (auth.allowedModels && !auth.allowedModels.has(modelId)) || catalog.category(modelId) !== category) {
    return errors.modelNotFound(name);
  }
  const routes = catalog.routes(modelId, auth.consent);
  return routes.length === 0 ? errors.modelNotFound(name) : { modelId, routes };
}

/** Throws the 404 of the requested model unless it, or one of its fallbacks, is usable (count_tokens). */
export function requireUsableModel(
  request: { readonly model: string; readonly fallbackModels: readonly string[] },
  auth: AuthContext,
  catalog: Catalog,
  category: OutputKind<KindTypes>['category'],
): void {
  const outcomes = [request.model, ...request.fallbackModels].map((name) => usableModel(name, auth, catalog, category));
  if (outcomes.every((outcome) => outcome instanceof GatewayError)) throw outcomes[0];
}

function selectModel<T extends KindTypes>(name: string, input: SelectionInput<T>): Selection | GatewayError {
  const { catalog, auth, request, kind } = input;
  const usable = usableModel(name, auth, catalog, kind.category);
  if (usable instanceof GatewayError) return usable;
  const { modelId, routes } = usable;
  const eligible: RouteEndpoint[] = [];
  let firstError: GatewayError | undefined;
  for (const endpoint of orderRoutes(routes, request.provider?.sort, input.observed)) {
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
