/**
 * The model-level `supply` and `training_use` of one view: the kinds of the endpoints that view
 * may use, `mixed` when both kinds are present, `none` when there is no active endpoint.
 */
import type { ModelRow } from './schemas.ts';
import type { RouteEndpoint } from './types.ts';

type ModelSupply = ModelRow['supply'];
type ModelTrainingUse = ModelRow['training_use'];

export function modelSupply(routes: readonly RouteEndpoint[]): ModelSupply {
  return combine(routes.map((route) => route.supply));
}

export function modelTrainingUse(routes: readonly RouteEndpoint[]): ModelTrainingUse {
  return combine(routes.map((route) => route.trainingUse));
}

function combine<Kind extends string>(kinds: readonly Kind[]): Kind | 'mixed' | 'none' {
  if (kinds.length === 0) return 'none';
  return kinds.every((kind) => kind === kinds[0]) ? kinds[0] : 'mixed';
}
