/**
 * Public `parameter_constraints` of a model in one view (docs/catalog.md, "Parameter constraints"):
 * one entry per provider, named by the provider's id only (no endpoint ids, upstream names,
 * credentials or costs). When a provider serves the model through several endpoints, a request
 * may reach any of them, so their constraints are intersected: allowed values that every endpoint
 * accepts, the largest minimum, the smallest maximum, `supported` false when any endpoint says
 * false and true only when every endpoint says true. Fields no endpoint states stay omitted
 * (unverified, not unrestricted).
 */
import type { EndpointParametersConfig, ParameterConstraintConfig } from '../config/schema.ts';
import { intersection, withoutUndefined } from './objects.ts';
import type { ProviderParameterConstraints } from './schemas.ts';
import type { RouteEndpoint } from './types.ts';

type ParameterConstraint = ParameterConstraintConfig;
type EndpointKind = keyof EndpointParametersConfig;

const ENDPOINT_KINDS = ['chat', 'image-generation', 'image-edit', 'video'] as const satisfies readonly EndpointKind[];

export function publicParameterConstraints(routes: readonly RouteEndpoint[]): ProviderParameterConstraints[] {
  const byProvider = new Map<string, RouteEndpoint[]>();
  for (const route of routes) {
    const group = byProvider.get(route.provider.id);
    if (group) group.push(route);
    else byProvider.set(route.provider.id, [route]);
  }
  return [...byProvider].map(([provider, group]) => ({ provider, parameters: providerParameters(group) }));
}

function providerParameters(routes: readonly RouteEndpoint[]): ProviderParameterConstraints['parameters'] {
  const parameters: ProviderParameterConstraints['parameters'] = {};
  for (const kind of ENDPOINT_KINDS) {
    const maps = routes.map((route) => route.parameters[kind] ?? {});
    const names = [...new Set(maps.flatMap((map) => Object.keys(map)))];
    const merged: Record<string, ParameterConstraint> = {};
    for (const name of names) {
      const constraint = intersectConstraints(maps.map((map) => map[name]));
      if (Object.keys(constraint).length > 0) merged[name] = constraint;
    }
    if (Object.keys(merged).length > 0) parameters[kind] = merged;
  }
  return parameters;
}

/** One parameter across a provider's endpoints; undefined = that endpoint says nothing about it. */
function intersectConstraints(constraints: readonly (ParameterConstraint | undefined)[]): ParameterConstraint {
  const stated = constraints.filter((constraint): constraint is ParameterConstraint => constraint !== undefined);
  const supported = constraints.map((constraint) => constraint?.supported);
  const types = new Set(stated.flatMap((constraint) => (constraint.type === undefined ? [] : [constraint.type])));
  const allowed = stated.flatMap((constraint) => (constraint.allowed_values === undefined ? [] : [constraint.allowed_values]));
  const minimums = stated.flatMap((constraint) => (constraint.minimum === undefined ? [] : [constraint.minimum]));
  const maximums = stated.flatMap((constraint) => (constraint.maximum === undefined ? [] : [constraint.maximum]));
  return withoutUndefined({
    supported: supported.includes(false) ? false : supported.every((value) => value === true) ? true : undefined,
    // Endpoints that disagree on the type leave it unverified.
    type: types.size === 1 ? [...types][0] : undefined,
    allowed_values: intersection(allowed),
    minimum: minimums.length > 0 ? Math.max(...minimums) : undefined,
    maximum: maximums.length > 0 ? Math.min(...maximums) : undefined,
  });
}
